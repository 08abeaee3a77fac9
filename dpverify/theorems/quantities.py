"""The quantity registry: quantity name -> compute function.

One dispatch for every certified number dpverify can produce from a
certificate's ``inputs``: a claim record (``theorems/claims/*.jsonl``), a corpus claim
(``corpus/*.jsonl``) and a certificate share the same ``quantity`` name and the
same ``inputs`` keys, and :func:`compute` turns them into an
:class:`~dpverify.verdict.Enclosure` by calling the library function the CLI
calls for that quantity (``gdp.delta`` is :func:`dpverify.gdp.delta_mu`,
``pld.epsilon`` is :func:`dpverify.pld.dpsgd.epsilon`, ...). The independent
re-checkers of ``dpverify verify`` are registered under the same names in
``dpverify/recheck/*.py``.

Each :class:`Quantity` declares its input keys (required and optional), so a
record with a misspelled or missing key is refused before anything runs
(:func:`check_inputs`), and :func:`check_values` holds a record's values to the
rules verify holds a certificate of the same kind to. Input values are the exact
strings of the record; numbers are parsed exactly by the functions called.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable, Mapping

from flint import acb, arb

from ..ball import ball, normal_cdf, refine, working_precision
from ..errors import InvalidParameter, did_you_mean
from ..verdict import Enclosure

__all__ = ["Quantity", "QUANTITIES", "quantity", "compute", "check_inputs", "check_values", "mills_scaled"]

#: the mechanism options a MechanismSpec-based quantity may carry
#: (the same names as the CLI's MECHANISM options, see cli/_mechanism.py)
MECHANISM_KEYS = ("mu", "noise_multiplier", "scale", "sensitivity", "eps0", "delta0", "p", "rate",
                  "profile", "refined")


@dataclass(frozen=True)
class Quantity:
    """A named certified quantity: what it encloses and how it is computed."""

    name: str
    encloses: str
    required: tuple[str, ...]
    optional: tuple[str, ...] = ()
    fn: Callable[[Mapping[str, Any]], Enclosure] = field(repr=False, compare=False, default=None)  # type: ignore[assignment]


QUANTITIES: dict[str, Quantity] = {}


def quantity(name: str, encloses: str, required: tuple[str, ...], optional: tuple[str, ...] = ()):
    """Decorator: register ``fn(inputs) -> Enclosure`` under ``name``."""

    def deco(fn: Callable[[Mapping[str, Any]], Enclosure]) -> Callable[[Mapping[str, Any]], Enclosure]:
        if name in QUANTITIES:
            raise ValueError(f"duplicate quantity {name!r}")
        QUANTITIES[name] = Quantity(name, encloses, required, optional, fn)
        return fn

    return deco


def check_inputs(name: str, inputs: Mapping[str, Any]) -> Quantity:
    """The registered quantity ``name`` after checking that ``inputs`` has
    every required key and no unknown key (InvalidParameter naming the key)."""
    if name not in QUANTITIES:
        raise InvalidParameter("quantity", f"quantity={name!r} is not registered{did_you_mean(name, sorted(QUANTITIES))} "
                               f"(known: {', '.join(sorted(QUANTITIES))})")
    q = QUANTITIES[name]
    allowed = q.required + q.optional
    for key in inputs:
        if key not in allowed:
            raise InvalidParameter(f"inputs.{key}", f"unknown key for quantity {name}"
                                   f"{did_you_mean(key, allowed)} (allowed: {', '.join(allowed)})")
    for key in q.required:
        if key not in inputs:
            raise InvalidParameter(f"inputs.{key}", f"missing (quantity {name} needs "
                                   f"{', '.join(q.required)})")
    return q


def _schema_errors(inputs: Mapping[str, Any]) -> list[str]:
    """The certificate schema's complaints about ``inputs`` typed as the writer types them
    (:func:`dpverify.certificate.writer.typed_inputs`), at paths ``inputs.KEY``: what the writer
    would refuse after the work (a JSON float 0.5 for delta was an internal error, exit 4, once the
    claim had run)."""
    from ..certificate.format import FORMAT, _schema_error, load_schema, schema_validator
    from ..certificate.writer import typed_inputs

    root = load_schema(FORMAT)
    schema = {"type": "object", "properties": {"inputs": root["properties"]["inputs"]}, "$defs": root["$defs"]}
    errors = sorted(schema_validator(schema).iter_errors({"inputs": typed_inputs(inputs)}),
                    key=lambda e: (len(e.absolute_path), str(e.absolute_path)))
    return [_schema_error(e, schema) for e in errors]


def check_values(name: str, inputs: Mapping[str, Any]) -> None:
    """Refuse (InvalidParameter naming ``inputs.KEY``, or ``inputs`` for a rule on several keys) a
    record's input value that the producer refuses, before anything runs. A claim's quantity is its
    certificate's kind, so the rules are the certificate's, one copy of each: the inputs, typed as the
    writer types them, pass the certificate schema's ``inputs`` (each key's JSON type and number form),
    a number text is one of the one number grammar (:func:`dpverify.numtext.read_exact_text`), within
    the kind's producer ranges (:func:`dpverify.certificate.ranges.check_input_ranges`, which also
    refuses an infinite input), and a mechanism's options are one of its option sets, within its
    builder's ranges (:func:`dpverify.recheck.kinds.check_mechanism_options`); counts, digits and
    names (a mechanism, a conversion) are in the same tables (``ranges.INPUT_RANGES`` from the CLI
    options' declared ranges, ``ranges.INPUT_NAMES``), so a claim file is refused when it is read,
    naming the file, the path and the allowed values, not when the claim runs, by claim id only
    (mend49 1: delta 0, "abc" and 5e99999 ran; issue 22: a misspelled mechanism, compositions 0).
    What no table covers is the quantity's function's to check when it runs."""
    import re

    from ..certificate.format import MECHANISM_KINDS
    from ..certificate.ranges import check_input_ranges
    from ..errors import MalformedCertificate
    from ..numtext import read_exact_text
    from ..recheck.kinds import check_mechanism_options

    def refuse(message: str) -> InvalidParameter:
        m = re.match(r"inputs\.\w+", message)
        return InvalidParameter(m.group(0) if m else "inputs", message)

    # the number grammar first: its words say what a number text is ("'abc' is not a number (use a
    # decimal like 0.1 ...)"), where the schema's pattern says only that the text is not one
    for key, v in inputs.items():
        if isinstance(v, str) and _schema_number(key):
            read_exact_text(v, f"inputs.{key}")
    errors = _schema_errors(inputs)
    if errors:
        raise refuse(errors[0])
    try:
        check_input_ranges(name, inputs, {})
        if name in MECHANISM_KINDS:
            check_mechanism_options(inputs)
    except MalformedCertificate as exc:
        raise refuse(str(exc)) from None


def _schema_number(key: str) -> bool:
    """Does the certificate write input ``key`` as a number text (``#/$defs/number``)?"""
    from ..certificate.format import FORMAT, load_schema

    return load_schema(FORMAT)["properties"]["inputs"]["properties"].get(key) == {"$ref": "#/$defs/number"}


def compute(name: str, inputs: Mapping[str, Any]) -> Enclosure:
    """The certified enclosure of quantity ``name`` at ``inputs``."""
    return check_inputs(name, inputs).fn(inputs)


def _digits(inputs: Mapping[str, Any], default: int, *, hi: int = 300) -> int:
    from .. import _validate as V

    return V.integer("digits", inputs.get("digits", default), lo=1, hi=hi)


_HUGE = arb(2) ** 400  # lower end recorded for a value that is +inf


def _spec(inputs: Mapping[str, Any], drop: tuple[str, ...]):
    from ..mechanisms import MechanismSpec

    opts = {k: str(v) for k, v in inputs.items() if k in MECHANISM_KEYS and k not in drop}
    return MechanismSpec(str(inputs["mechanism"]), opts)


# --------------------------------------------------------------------------- GDP


@quantity("gdp.delta", "delta_mu(eps)", ("mu", "eps"), ("digits",))
def _gdp_delta(i: Mapping[str, Any]) -> Enclosure:
    """GDPT eq. (2): delta_mu(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)."""
    from .. import _validate as V
    from ..gdp import delta_mu

    V.gdp_delta_inputs(i["mu"], i["eps"])  # a printed delta_mu (limits.py)
    return delta_mu(i["mu"], i["eps"], _digits(i, 15))


def mills_scaled(t: Fraction, digits: int = 30) -> Enclosure:
    """sqrt(pi/2) e^{t^2/2} Phi(t): the quantity GDPT-appendix Proof B.2 bounds for t < 0."""
    x, bits = refine(
        lambda: (arb.pi() / 2).sqrt() * (ball(t) ** 2 / 2).exp() * normal_cdf(ball(t)),
        digits=digits + 1,
        what="the scaled Mills ratio",
    )
    return Enclosure.from_ball(x, digits, bits)


@quantity("gdp.mills_scaled", "sqrt(pi/2) e^(t^2/2) Phi(t)", ("t",), ("digits",))
def _gdp_mills(i: Mapping[str, Any]) -> Enclosure:
    from ..ball import parse_exact

    return mills_scaled(parse_exact(i["t"], "t"), _digits(i, 30))


@quantity("gdp.refinement_point", "eps_i or delta(eps_i) of GDPT App B", ("example", "what"), ("digits",))
def _gdp_refinement(i: Mapping[str, Any]) -> Enclosure:
    """GDPT Sec 3 / App B: the refinement point eps_i of sgd-example or
    icea-example (``what`` = eps), or the naive profile there (``what`` = delta)."""
    from ..mechanisms.examples import ExampleProfile, refinement_point

    name, what = i["example"], i["what"]
    if name not in ("sgd-example", "icea-example"):
        raise InvalidParameter("inputs.example", f"inputs.example={name!r} must be sgd-example or icea-example")
    if what not in ("eps", "delta"):
        raise InvalidParameter("inputs.what", f"inputs.what={what!r} must be eps or delta")
    digits = _digits(i, 12)
    # the root is isolated to the requested digits (and a few more for delta there):
    # a fixed 25 digits wrote certificates that claimed 1e-100 and delivered 1e-25,
    # which verify rightly refused
    a, b = refinement_point(name, max(25, digits + 5))
    bits = max(128, int(digits * 3.33) + 64)
    if what == "eps":
        return Enclosure(a, b, digits, bits)
    with working_precision(bits):
        d = ExampleProfile(name, False).naive(a.union(b))
    return Enclosure.from_ball(d, digits, bits)


# the worked examples' tail limits are those of their exact (refined, GDPT App B)
# profiles, as in GDPT Sec 4; the re-checker (recheck.gdpt.gdp.tail_limit) uses the same reading
_REFINED_BY_DEFAULT = ("sgd-example", "icea-example")


@quantity("gdp.tail_limit", "GDPT Thm 4.4's limit", ("mechanism",), MECHANISM_KEYS)
def _gdp_tail_limit(i: Mapping[str, Any]) -> Enclosure:
    """GDPT Thm 4.4: lim sqrt(eps^2 / (-2 log delta(eps))) of a mechanism's profile."""
    from ..gdp.tail import tail_model
    from ..mechanisms import build_profile

    spec = _spec(i, ())
    if spec.name in _REFINED_BY_DEFAULT:
        spec = type(spec)(spec.name, {**spec.options, "refined": "true"})
    lim = tail_model(build_profile(spec)).limit()
    if not lim.is_finite():
        return Enclosure(_HUGE, arb("inf"), 15, 128)
    return Enclosure.from_ball(lim, 15, 256)


@quantity("gdp.optimal_mu", "the optimal mu (sup of the GDP transformation)",
          ("mechanism", "eps_h", "margin"), MECHANISM_KEYS + ("argmax",))
def _gdp_optimal_mu(i: Mapping[str, Any]) -> Enclosure:
    """GDPT Thm 4.5/4.6: the certified sup of the GDPT (head [0, eps_h] + tail);
    +inf (recorded as [2^400, inf]) when the mechanism is not GDP. ``argmax``
    is a hint for the re-checker only."""
    from ..gdp.certify import certify_gdp
    from ..mechanisms import build_profile

    c = certify_gdp(build_profile(_spec(i, ("argmax",))), str(i["eps_h"]), str(i["margin"]))
    if c.status == "not GDP":
        return Enclosure(_HUGE, arb("inf"), 6, 128)
    return c.head.enclosure


@quantity("gdp.thm51", "-2 Phi^-1(1/(1+e^eps0))", ("eps0",), ("digits",))
def _gdp_thm51(i: Mapping[str, Any]) -> Enclosure:
    """GDPT Thm 5.1: eps0-DP implies mu-GDP with mu = -2 Phi^-1(1/(1+e^eps0))."""
    from ..gdp.thm51 import thm51_mu

    return thm51_mu(i["eps0"], _digits(i, 15))


# --------------------------------------------------------------------------- (eps, delta)


@quantity("composition.eps", "eps(delta) of the tight k-fold composition", ("mechs", "k", "delta"), ("digits",))
def _composition_eps(i: Mapping[str, Any]) -> Enclosure:
    """LT Thm 4.6 / Cor 4.7: the smallest eps with composed delta(eps) <= delta."""
    from ..composition import compose_eps

    return compose_eps(list(i["mechs"]), i["delta"], k=i["k"], digits=_digits(i, 15))


@quantity("composition.delta", "delta(eps) of the tight k-fold composition", ("mechs", "k", "eps"), ("digits",))
def _composition_delta(i: Mapping[str, Any]) -> Enclosure:
    """LT Thm 4.6: the tight delta(eps) of the composition."""
    from ..composition import compose_delta

    return compose_delta(list(i["mechs"]), i["eps"], k=i["k"], digits=_digits(i, 15))


@quantity("dp.rr64", "sup over the 64 event/input combinations", ("eps0", "delta0", "eps"), ("digits",))
def _dp_rr64(i: Mapping[str, Any]) -> Enclosure:
    """GDPT Thm 3.1 necessity proof (App B.1): the 4-output mechanism's profile."""
    from ..dp.rr64 import rr64_check

    return rr64_check(i["eps0"], i["delta0"], i["eps"], _digits(i, 15)).supremum


@quantity("dp.sigma_refinement", "GDPT Sec 5.2's optimal refinement", ("eps", "log_delta", "which"), ("digits",))
def _dp_sigma(i: Mapping[str, Any]) -> Enclosure:
    """GDPT Sec 5.2 / App C: eps0, delta0 or sigma of the optimal refinement."""
    from ..dp.sigma import refine_sigma

    which = i["which"]
    if which not in ("eps0", "delta0", "sigma"):
        raise InvalidParameter("inputs.which", f"inputs.which={which!r} must be eps0, delta0 or sigma")
    return getattr(refine_sigma(i["eps"], log_delta=i["log_delta"], digits=_digits(i, 15)), which)


@quantity("dp.profile", "delta(eps) of a mechanism", ("mechanism", "eps"), MECHANISM_KEYS + ("digits",))
def _dp_profile(i: Mapping[str, Any]) -> Enclosure:
    """The privacy profile delta(eps) of a named mechanism (as `dp profile`)."""
    from ..mechanisms import build_profile, profile_delta

    return profile_delta(build_profile(_spec(i, ())), i["eps"], _digits(i, 15))


# --------------------------------------------------------------------------- RDP


@quantity("rdp.epsilon", "inf over alpha of an RDP -> DP conversion",
          ("mechanism", "compositions", "delta", "conversion"), MECHANISM_KEYS + ("digits",))
def _rdp_epsilon(i: Mapping[str, Any]) -> Enclosure:
    """The RDP curve of the mechanism composed ``compositions`` times,
    converted to eps(delta) (as `rdp epsilon`)."""
    from .. import _validate as V
    from ..limits import MAX_RDP_COMPOSITIONS
    from ..rdp import compose, rdp_epsilon
    from ..rdp.specs import curve_from_spec

    k = V.integer("compositions", i["compositions"], lo=1, hi=MAX_RDP_COMPOSITIONS)  # rdp epsilon --steps
    curve = compose([curve_from_spec(_spec(i, ()))], [k])
    return rdp_epsilon(curve, i["delta"], str(i["conversion"]), _digits(i, 15)).enclosure


@quantity("rdp.to_dp_eps", "eps of one (alpha, gamma)-RDP conversion", ("alpha", "rdp", "delta", "conversion"),
          ("digits",))
def _rdp_to_dp(i: Mapping[str, Any]) -> Enclosure:
    from ..rdp import conversion_eps

    return conversion_eps(i["alpha"], i["rdp"], i["delta"], str(i["conversion"]), _digits(i, 15))


@quantity("rdp.abc_gain", "eps_MA(T) - eps_Lemma2(T) (ABC Fig. 2)", ("noise_multiplier", "compositions", "delta"),
          ("digits",))
def _rdp_abc_gain(i: Mapping[str, Any]) -> Enclosure:
    from .. import _validate as V
    from ..certificate.ranges import INPUT_RANGES
    from ..rdp.abc import abc_gain

    # the range table's digits and compositions (the claim file was read against it): two guard
    # digits inside 300; as many compositions as `rdp epsilon --steps` (eps_MA and Balle's bound at
    # one order are closed forms in T, so T costs nothing)
    rows = INPUT_RANGES["rdp.abc_gain"]
    abc_digits = int(rows["digits"][0].hi)  # type: ignore[arg-type]
    max_t = int(rows["compositions"][0].hi)  # type: ignore[arg-type]

    return abc_gain(V.positive("noise_multiplier", i["noise_multiplier"]),
                    V.integer("compositions", i["compositions"], lo=1, hi=max_t),
                    V.open_unit("delta", i["delta"]), _digits(i, 8, hi=abc_digits))  # two guard digits inside


@quantity("rdp.abc_extra_iterations", "T_Lemma2(eps) - T_MA(eps) (ABC Fig. 2)",
          ("noise_multiplier", "delta", "eps"))
def _rdp_abc_extra(i: Mapping[str, Any]) -> Enclosure:
    from .. import _validate as V
    from ..rdp.abc import abc_extra_iterations

    return abc_extra_iterations(V.positive("noise_multiplier", i["noise_multiplier"]),
                                V.open_unit("delta", i["delta"]), V.positive("eps", i["eps"]))


# --------------------------------------------------------------------------- LT transforms

_LT_BITS = 128


def _lt_pair(mechanism: str, param: Any):
    from ..ball import parse_exact
    from ..transforms.laplace import gaussian_pld, laplace_pld, rr_pld

    factories = {"gaussian": gaussian_pld, "laplace": laplace_pld, "rr": rr_pld}
    if mechanism not in factories:
        raise InvalidParameter("inputs.mechanism", f"inputs.mechanism={mechanism!r} must be one of "
                               f"{', '.join(factories)}")
    return factories[mechanism](parse_exact(param, "param"))


@quantity("lt.residual", "left side - right side of an LT identity (|.| for eq27)",
          ("identity", "mechanism", "param"), ("eps", "q_re", "q_im"))
def _lt_residual(i: Mapping[str, Any]) -> Enclosure:
    """LT Thm 3.2 eq. (22)/(23) (profile from the PLD's Laplace transform,
    residual at ``eps``) or LT eq. (27) / Thm 3.5 (|q(q-1) B{delta}(1-q) - E_q|
    at q = q_re + i q_im)."""
    from ..ball import parse_exact
    from ..transforms.laplace import (_piece_at, profile_by_eq22, profile_by_eq23, renyi_moment,
                                      renyi_moment_by_eq27)

    ident = i["identity"]
    with working_precision(_LT_BITS):
        pair = _lt_pair(i["mechanism"], i["param"])
        if ident in ("eq22", "eq23"):
            e = parse_exact(i.get("eps"), "eps")
            lhs = (profile_by_eq22 if ident == "eq22" else profile_by_eq23)(pair, e)
            rhs = _piece_at(pair.profile, e)(acb(ball(e))).real
            return Enclosure.from_ball(lhs - rhs, 15, _LT_BITS)
        if ident == "eq27":
            q = acb(ball(parse_exact(i.get("q_re"), "q_re")), ball(parse_exact(i.get("q_im"), "q_im")))
            r = renyi_moment_by_eq27(pair, q) - renyi_moment(pair, q)
            return Enclosure.from_ball(abs(r), 15, _LT_BITS)
    raise InvalidParameter("inputs.identity", f"inputs.identity={ident!r} must be eq22, eq23 or eq27")


@quantity("lt.partial-transform", "q(q-1) int_{-A}^{B} e^{(q-1)t} delta(t) dt",
          ("mechanism", "param", "q", "A", "B"))
def _lt_partial(i: Mapping[str, Any]) -> Enclosure:
    from .. import _validate as V
    from ..ball import parse_exact
    from ..transforms.laplace import partial_transform

    with working_precision(_LT_BITS):
        pair = _lt_pair(i["mechanism"], i["param"])
        x = partial_transform(pair, parse_exact(i["q"], "q"), V.integer("A", i["A"], lo=0, hi=10**6),
                              V.integer("B", i["B"], lo=0, hi=10**6))
        return Enclosure.from_ball(x, 15, _LT_BITS)


# --------------------------------------------------------------------------- DP-SGD (PLD)


@quantity("pld.epsilon", "epsilon(delta) of DP-SGD (Poisson-subsampled Gaussian)",
          ("noise_multiplier", "sampling_rate", "steps", "delta"), ("neighboring", "digits"))
def _pld_epsilon(i: Mapping[str, Any]) -> Enclosure:
    """AFA Thm 10/11: the certified PLD accountant's enclosure of epsilon(delta)
    of ``steps`` Poisson-subsampled Gaussian steps under the recorded relation
    (add-remove when the record does not name one)."""
    from .. import _validate as V
    from ..limits import MAX_STEPS

    return _pld_cached(i["noise_multiplier"], i["sampling_rate"], V.integer("steps", i["steps"], lo=1, hi=MAX_STEPS),
                       i["delta"], str(i.get("neighboring", "add-remove")), _digits(i, 4))


_PLD_CACHE: dict[tuple, Enclosure] = {}


def _pld_cached(sigma: Any, q: Any, steps: int, delta: Any, rel: str, digits: int) -> Enclosure:
    """One computation per configuration (claims about the same run share it;
    the key is the exact values, so "0.01" and "1/100" share too)."""
    from .. import _validate as V
    from ..pld import dpsgd as S
    from ..relation import SCHEDULE_RELATIONS, relation

    key = (V.positive("noise_multiplier", sigma), V.half_open_unit("sampling_rate", q), steps,
           V.open_unit("delta", delta), relation(rel, allowed=SCHEDULE_RELATIONS), digits)
    if key not in _PLD_CACHE:
        _PLD_CACHE[key] = S.dpsgd_epsilon(sigma, q, steps, delta, neighboring=rel, digits=digits).enclosure
    return _PLD_CACHE[key]
