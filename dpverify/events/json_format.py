"""The JSON event format (schema: ``events.schema.json`` in this package).

A document is ``{"neighboring": REL, "event": EVENT}`` or
``{"neighboring": REL, "events": [EVENT, ...]}`` (the list is composed in
order); ``neighboring`` may be omitted when the caller gives the relation.
An EVENT mirrors dp_accounting's DpEvent tree::

    {"type": "gaussian", "noise_multiplier": "1.1"}
    {"type": "poisson_sampled", "sampling_probability": "256/60000", "event": EVENT}
    {"type": "sampled_without_replacement", "source_dataset_size": 60000,
     "sample_size": 256, "event": EVENT}
    {"type": "self_composed", "count": 1000, "event": EVENT}
    {"type": "composed", "events": [EVENT, ...]}
    {"type": "balls_in_bins", "dataset_size": 60000, "batch_size": 250, "epochs": 2,
     "event": {"type": "gaussian", "noise_multiplier": "1.1"}}   (the whole tree only)

Numbers are exact decimal strings ("0.1" is 1/10), fractions ("a/b"),
integers, or JSON numbers taken as the literal text written. Every key is
required, unknown keys are refused with the path, a did-you-mean hint and the
allowed keys; nothing defaults.

Legacy items (the format of ``audit dpsgd --events`` before typed DpEvent trees) are
still read inside ``"events"``: ``{"mechanism": "subsampled-gaussian" |
"gaussian" | "laplace" | "approx", ...}`` -- but ``count`` and
``sampling_rate`` are now required (they used to default to 1 silently, a
soundness bug); ``mechanism`` may be left out only for the subsampled-Gaussian
shape ``noise_multiplier`` + ``sampling_rate`` + ``count``.
"""

from __future__ import annotations

import json
from fractions import Fraction
from typing import Any, Optional

from ..ball import exact_str, parse_exact
from ..certificate.format import EVENT_FIELDS as TYPES  # one table of node fields, read by verify too
from ..certificate.format import LEGACY_EVENT_FIELDS as LEGACY  # one table of legacy item keys, likewise
from ..errors import InvalidParameter, did_you_mean, shown
from ..files import json_loads
from ..numtext import LongInteger, digit_count, not_ascii, too_long
from . import model as E
from ..certificate.ranges import FIELD_RANGES
from ..limits import MAX_EVENT_TREE_DEPTH, MAX_NUMBER_CHARS

__all__ = ["parse_document", "legacy_only", "event_to_json", "check_model", "load_schema", "ApproxDpExp", "TYPES"]


class _Num(str):
    """A JSON number kept as the literal text the user wrote."""


class ApproxDpExp:
    """Legacy ``approx`` item: (eps0, delta0)-DP with e^eps0 given exactly."""

    __slots__ = ("exp_eps0", "delta0")

    def __init__(self, exp_eps0: Fraction, delta0: Fraction) -> None:
        self.exp_eps0, self.delta0 = exp_eps0, delta0

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ApproxDpExp) and (self.exp_eps0, self.delta0) == (other.exp_eps0, other.delta0)

    def __hash__(self) -> int:
        return hash((self.exp_eps0, self.delta0))


def _bad(path: str, msg: str, where: str) -> InvalidParameter:
    return InvalidParameter("events", f"{where}{path}: {msg}")


#: words difflib cannot guess, for the hint after an unknown key
_SYNONYMS = {"steps": "count", "q": "sampling_probability", "sigma": "noise_multiplier",
             "rate": "sampling_probability", "sampling_rate": "sampling_probability", "epochs": "count"}


def _check_keys(obj: dict, allowed: list, path: str, where: str) -> None:
    for k in obj:
        if k not in allowed:
            raise _bad(f"{path}.{k}", f"unknown key{did_you_mean(k, allowed, synonyms=_SYNONYMS)} (allowed keys: {', '.join(allowed)})", where)
    for k in allowed:
        if k not in obj:
            raise _bad(path, f"missing key {k!r} (required keys: {', '.join(allowed)}; nothing defaults)", where)


def _number(v: Any, path: str, where: str) -> Fraction:
    if isinstance(v, bool) or not isinstance(v, (str, int)):
        raise _bad(path, f"{v!r} is not a number (use an exact decimal string like \"0.1\" or a fraction \"a/b\")", where)
    try:
        return parse_exact(str(v), path)
    except InvalidParameter as exc:
        # the value as the grammar names it, without the path _bad prefixes anyway (splitting at ": " cut a
        # reason that holds one, the look-alike digits' "not a decimal number: ...")
        msg = exc.message
        for head in (f"{path}=", f"{path}: "):  # the grammar's "name=value ..." and "name: why" forms
            if msg.startswith(head):
                msg = msg[len(head):]
                break
        raise _bad(path, msg, where) from None


def _value(kind: str, v: Any, path: str, where: str) -> Any:
    rng = FIELD_RANGES[kind]  # one table of the fields' ranges, read by verify too
    if isinstance(v, LongInteger):
        raise _bad(path, f"{too_long(v.digits, 'digits')}; it must be {rng.requirement()}", where)
    if rng.integer:
        if isinstance(v, bool) or not isinstance(v, int) or isinstance(v, _Num):
            if isinstance(v, _Num) and v.isascii() and v.lstrip("+-").isdigit() and len(v) <= 30:
                v = int(v)
            else:
                why = not_ascii(v) if isinstance(v, str) else None
                raise _bad(path, f"{shown(v)} must be {rng.requirement()}" + (f" ({why})" if why else ""), where)
        if not rng.contains(Fraction(v)):
            raise _bad(path, f"{shown(v)} must be {rng.requirement()}", where)
        return int(v)
    x = _number(v, path, where)
    if not rng.contains(x):
        raise _bad(path, f"{v} must be {rng.requirement()}", where)
    return x


def _event(obj: Any, path: str, where: str, depth: int) -> Any:
    if depth > MAX_EVENT_TREE_DEPTH:
        raise _bad(path, f"events nested deeper than {MAX_EVENT_TREE_DEPTH} levels", where)
    if not isinstance(obj, dict):
        raise _bad(path, "must be an object with a \"type\" key", where)
    if "type" not in obj:
        if "mechanism" in obj or "noise_multiplier" in obj and "sampling_rate" in obj:
            return _legacy(obj, path, where)
        raise _bad(path, f"missing key 'type' (allowed types: {', '.join(TYPES)})", where)
    t = obj["type"]
    if t not in TYPES:
        raise _bad(f"{path}.type", f"unknown type {t!r}{did_you_mean(t, TYPES)} (allowed types: {', '.join(TYPES)})", where)
    spec = TYPES[t]
    _check_keys(obj, ["type", *spec], path, where)
    v: dict[str, Any] = {}
    for k, kind in spec.items():
        p = f"{path}.{k}"
        if kind == "event":
            v[k] = _event(obj[k], p, where, depth + 1)
        elif kind == "events":
            if not isinstance(obj[k], list):
                raise _bad(p, "must be a list of events", where)
            v[k] = tuple(_event(e, f"{p}[{i}]", where, depth + 1) for i, e in enumerate(obj[k]))
        elif kind.startswith("numlist"):
            if not isinstance(obj[k], list) or not obj[k]:
                raise _bad(p, "must be a non-empty list of numbers", where)
            v[k] = tuple(_value("nonneg" if kind.endswith("nonneg") else "prob", x, f"{p}[{i}]", where)
                         for i, x in enumerate(obj[k]))
        else:
            v[k] = _value(kind, obj[k], p, where)
    if t == "gaussian":
        return E.Gaussian(v["noise_multiplier"])  # within (0, MAX_NOISE_MULTIPLIER]: its kind "sigma"
    if t == "laplace":
        return E.Laplace(v["noise_multiplier"])
    if t == "discrete_laplace":
        return E.DiscreteLaplace(v["noise_parameter"], v["sensitivity"])
    if t == "discrete_gaussian":
        return E.DiscreteGaussian(v["sigma"], v["sensitivity"])
    if t == "randomized_response":
        return E.RandomizedResponse(v["noise_parameter"], v["num_buckets"])
    if t == "epsilon_delta":
        return E.EpsilonDelta(v["epsilon"], v["delta"])
    if t == "mixture_of_gaussians":
        cs, ps = v["sensitivities"], v["sampling_probs"]
        if len(cs) != len(ps):
            raise _bad(path, "sensitivities and sampling_probs must have the same length", where)
        if sum(ps) != 1:
            raise _bad(f"{path}.sampling_probs", f"must sum to exactly 1 (they sum to {exact_str(sum(ps))})", where)
        return E.MixtureOfGaussians(v["standard_deviation"], cs, ps)
    if t == "zcdp":
        return E.ZCDp(v["rho"], v["xi"])
    if t == "non_private":
        return E.NonPrivate()
    if t == "no_op":
        return E.NoOp()
    if t == "poisson_sampled":
        return E.PoissonSampled(v["sampling_probability"], v["event"])
    if t == "sampled_without_replacement":
        if v["sample_size"] > v["source_dataset_size"]:
            raise _bad(f"{path}.sample_size", "must be <= source_dataset_size", where)
        return E.SampledWithoutReplacement(v["source_dataset_size"], v["sample_size"], v["event"])
    if t == "balls_in_bins":
        if not isinstance(v["event"], E.Gaussian):
            raise _bad(f"{path}.event.type", "balls_in_bins wraps a Gaussian step only (allowed types: gaussian; "
                       "the pair of Chua et al. 2025 is for the Gaussian mechanism)", where)
        if v["batch_size"] > v["dataset_size"]:
            raise _bad(f"{path}.batch_size", "must be <= dataset_size", where)
        return E.BallsInBins(v["dataset_size"], v["batch_size"], v["epochs"], v["event"])
    if t == "self_composed":
        return E.SelfComposed(v["event"], v["count"])
    return E.Composed(v["events"])


def _legacy(obj: dict, path: str, where: str) -> Any:
    mech = obj.get("mechanism", "subsampled-gaussian")
    if mech not in LEGACY:
        raise _bad(f"{path}.mechanism", f"unknown mechanism {mech!r} (allowed: {', '.join(LEGACY)}; "
                   f"or use \"type\": one of {', '.join(TYPES)})", where)
    spec = LEGACY[mech]
    keys = list(spec) + (["mechanism"] if "mechanism" in obj else [])
    _check_keys(obj, keys, path, where)
    v = {k: _value(kind, obj[k], f"{path}.{k}", where) for k, kind in spec.items()}
    if mech == "gaussian":
        return E.SelfComposed(E.Gaussian(v["noise_multiplier"]), v["count"])
    if mech == "subsampled-gaussian":
        inner: Any = E.Gaussian(v["noise_multiplier"])
    elif mech == "laplace":
        inner = E.Laplace(v["scale"])
    else:
        inner = ApproxDpExp(v["exp_eps0"], v["delta0"])
    q = v["sampling_rate"]
    ev = inner if q == 1 else E.PoissonSampled(q, inner)
    return E.SelfComposed(ev, v["count"])


def legacy_only(text: "str | bytes | bytearray") -> bool:
    """True when a document (already accepted by :func:`parse_document`) is a
    list of legacy items only (no ``"type"`` anywhere at the top level)."""
    doc = json.loads(text)
    return "events" in doc and all(isinstance(e, dict) and "type" not in e for e in doc["events"])


def parse_document(doc: Any, where: str = "") -> tuple[Any, Optional[str]]:
    """(event tree, relation name or None) from a JSON text or object;
    ``where`` (e.g. the file name plus ": ") prefixes every message."""
    if isinstance(doc, (bytes, bytearray)):
        try:
            doc = doc.decode("utf-8")
        except UnicodeDecodeError:
            raise InvalidParameter("events", f"{where}not UTF-8 text") from None
    if isinstance(doc, str):
        try:
            doc = json_loads(doc, parse_float=_Num, parse_int=_int)
        except (json.JSONDecodeError, RecursionError, ValueError) as exc:
            raise InvalidParameter("events", f"{where}not valid JSON ({getattr(exc, 'msg', exc)})") from None
    if not isinstance(doc, dict):
        raise InvalidParameter("events", f'{where}expected an object {{"neighboring": ..., "events": [...]}}')
    allowed = ["neighboring", "events", "event"]
    if "type" in doc:  # a document never has one
        # an event node given where a document is expected: say how to wrap it
        raise InvalidParameter("events", f'{where}this is an event node, not an event document: wrap it '
                               'as {"event": <node>} (optionally with "neighboring": ...), or give a list '
                               'as {"events": [...]}')
    for k in doc:
        if k not in allowed:
            raise _bad(k, f"unknown key{did_you_mean(k, allowed, synonyms=_SYNONYMS)} (allowed keys: {', '.join(allowed)})", where)
    if ("events" in doc) == ("event" in doc):
        raise InvalidParameter("events", f'{where}give exactly one of "event" (one event tree) or "events" '
                               "(a list, composed in order)")
    rel = doc.get("neighboring")
    if rel is not None and not isinstance(rel, str):
        raise _bad("neighboring", "must be a string", where)
    if "event" in doc:
        return _event(doc["event"], "event", where, 0), rel
    evs = doc["events"]
    if not isinstance(evs, list) or not evs:
        raise _bad("events", "must be a non-empty list of events", where)
    tree = tuple(_event(e, f"events[{i}]", where, 0) for i, e in enumerate(evs))
    return (tree[0] if len(tree) == 1 else E.Composed(tree)), rel


def _int(text: str) -> Any:
    if len(text.lstrip("-")) > MAX_NUMBER_CHARS:
        return LongInteger(len(text.lstrip("-")))  # refused by its digits at its path, not quoted
    if len(text) > 30:
        return _Num(text)  # refused later with a message, not a 5,000-digit int
    return int(text)


# --------------------------------------------------------------------------- output


def event_to_json(ev: Any) -> dict[str, Any]:
    """Canonical JSON of a model event (exact strings for numbers)."""
    return _to_json(ev, exact_str, 0, legacy=False)


#: bits past which a model's number is named by its digits, not written: 13,000 bits are 3,914 digits,
#: under Python's 4,300-digit int/str limit, and above 10^3000 (the decimal exponent cap, 9,966 bits)
_AS_READ_MAX_BITS = 13_000


def _as_read(v: Any) -> Any:
    """A model field as the JSON reader will see it: exact numbers (int, Fraction, not bool)
    as exact text, anything else unchanged, so that the reader refuses it by name."""
    if isinstance(v, bool) or not isinstance(v, (int, Fraction)):
        return v
    x = Fraction(v)
    if max(x.numerator.bit_length(), x.denominator.bit_length()) > _AS_READ_MAX_BITS:
        # str() of it may raise (adv38 A1: 10**5000): its digits, for the reader to name at the node's
        # path (a text here was read as the input itself). Below the cap exact_str writes it, and the
        # reader applies the input rules to that text (1e-1500 is 7 characters within the exponent
        # range; adv55 L1: a 4000-bit cap refused it as "a number of 1501 digits")
        return LongInteger(max(digit_count(x.numerator), digit_count(x.denominator)))
    return exact_str(v)


def check_model(ev: Any) -> Any:
    """A model event tree re-read by the rules of the JSON format (:func:`parse_document`).

    Model objects are plain frozen dataclasses that check nothing when built, so a tree handed
    to the library is untrusted input like a file: a negative count, a sigma of -1, mixture
    probabilities summing to 2 or a bool where a number belongs are refused here with the node's
    path (InvalidParameter), never answered. Returns the tree the reader builds (Fractions)."""
    return _event(_to_json(ev, _as_read, 0, legacy=True), "event", "", 0)


def _to_json(ev: Any, s: Any, depth: int, *, legacy: bool) -> dict[str, Any]:
    """``ev`` as a JSON document, each number through ``s``. ``legacy``: a legacy approx
    item (which has no type form) is written as the legacy item it came from, for
    :func:`check_model` to re-read; a certificate (``event_to_json``) cannot hold one."""
    if depth > MAX_EVENT_TREE_DEPTH:
        raise InvalidParameter("events", f"events nested deeper than {MAX_EVENT_TREE_DEPTH} levels")

    def sub(e: Any) -> dict[str, Any]:
        return _to_json(e, s, depth + 1, legacy=legacy)

    def seq(xs: Any, f: Any) -> Any:
        return [f(x) for x in xs] if isinstance(xs, (list, tuple)) else xs

    if isinstance(ev, E.Gaussian):
        return {"type": "gaussian", "noise_multiplier": s(ev.noise_multiplier)}
    if isinstance(ev, E.Laplace):
        return {"type": "laplace", "noise_multiplier": s(ev.noise_multiplier)}
    if isinstance(ev, E.DiscreteLaplace):
        return {"type": "discrete_laplace", "noise_parameter": s(ev.noise_parameter), "sensitivity": ev.sensitivity}
    if isinstance(ev, E.DiscreteGaussian):
        return {"type": "discrete_gaussian", "sigma": s(ev.sigma), "sensitivity": ev.sensitivity}
    if isinstance(ev, E.RandomizedResponse):
        return {"type": "randomized_response", "noise_parameter": s(ev.noise_parameter), "num_buckets": ev.num_buckets}
    if isinstance(ev, E.EpsilonDelta):
        return {"type": "epsilon_delta", "epsilon": s(ev.epsilon), "delta": s(ev.delta)}
    if isinstance(ev, E.MixtureOfGaussians):
        return {"type": "mixture_of_gaussians", "standard_deviation": s(ev.standard_deviation),
                "sensitivities": seq(ev.sensitivities, s), "sampling_probs": seq(ev.sampling_probs, s)}
    if isinstance(ev, E.ZCDp):
        return {"type": "zcdp", "rho": s(ev.rho), "xi": s(ev.xi)}
    if isinstance(ev, E.NonPrivate):
        return {"type": "non_private"}
    if isinstance(ev, E.NoOp):
        return {"type": "no_op"}
    if isinstance(ev, E.PoissonSampled):
        return {"type": "poisson_sampled", "sampling_probability": s(ev.sampling_probability),
                "event": sub(ev.event)}
    if isinstance(ev, E.SampledWithoutReplacement):
        return {"type": "sampled_without_replacement", "source_dataset_size": ev.source_dataset_size,
                "sample_size": ev.sample_size, "event": sub(ev.event)}
    if isinstance(ev, E.BallsInBins):
        return {"type": "balls_in_bins", "dataset_size": ev.dataset_size, "batch_size": ev.batch_size,
                "epochs": ev.epochs, "event": sub(ev.event)}
    if isinstance(ev, E.SelfComposed):
        return {"type": "self_composed", "count": ev.count, "event": sub(ev.event)}
    if isinstance(ev, E.Composed):
        return {"type": "composed", "events": seq(ev.events, sub)}
    if isinstance(ev, ApproxDpExp):
        if legacy:  # one step of the legacy item it came from
            return {"mechanism": "approx", "exp_eps0": s(ev.exp_eps0), "delta0": s(ev.delta0),
                    "sampling_rate": "1", "count": 1}
        raise InvalidParameter("events", "legacy approx items have no type form; use epsilon_delta")
    raise InvalidParameter("events", f"{type(ev).__name__} is not an event")


def load_schema() -> dict[str, Any]:
    """The JSON Schema of the event format (shipped in the package)."""
    from importlib.resources import files

    return json.loads(files(__package__).joinpath("events.schema.json").read_text(encoding="utf-8"))
