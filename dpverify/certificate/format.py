"""The certificate format, shared by the writer and the independent verifier:
format names, typed count keys, the canonical bytes and their digest, and the
shipped JSON Schemas with one readable validation error.

This module imports only the standard library and jsonschema, so the re-check
package (:mod:`dpverify.recheck`) may use it without touching the arb side.

The digest is sha256 of ``json.dumps(cert_without_digest, sort_keys=True,
separators=(",", ":"), ensure_ascii=False).encode("utf-8")``. It only detects
accidents: anyone can recompute it, so ``verify`` re-derives every number.
"""

from __future__ import annotations

import ast
import datetime
import hashlib
import json
import re
from fractions import Fraction
from functools import lru_cache
from importlib import resources
from typing import Any, Mapping, Optional

from ..errors import MalformedCertificate, did_you_mean
from ..numtext import not_ascii
# the producer's caps that verify reads too (one copy): the exact composition's mechanisms and
# lattice, the subsampled Gaussian's largest Renyi order, a discrete event's atoms, lt-eq21's order
from ..limits import (MAX_BINS_EPOCHS, MAX_COMPOSED_MECHANISMS, MAX_EVENT_ATOMS, MAX_IDENTITY_ORDER,
                      MAX_LATTICE_SUPPORT, MAX_NOISE_MULTIPLIER, MAX_SUBSAMPLED_ORDER, NARROW_FACTOR,
                      discrete_event_atoms)

__all__ = ["MAX_BINS_EPOCHS", "NARROW_FACTOR", "MAX_IDENTITY_ORDER", "MAX_COMPOSED_MECHANISMS", "MAX_LATTICE_SUPPORT", "MAX_SUBSAMPLED_ORDER", "MAX_EVENT_ATOMS", "MAX_NOISE_MULTIPLIER",
           "discrete_event_atoms", "FORMAT", "FORMAT_1", "SCHEMAS",
           "COUNT_KEYS", "canonical_bytes", "compute_digest",
           "load_schema", "check_schema", "schema_errors", "schema_validator", "INTEGER_REQUIRED", "TF_STEPS_RULE", "SENSITIVITY_CONVENTION",
           "EVENT_FIELDS", "LEGACY_EVENT_FIELDS", "UNVERIFIABLE_DETAILS", "GDP_CELL_WORK_CAP", "GDP_FIRST_ORDER_PROFILES", "gdp_cell_weight",
           "BINS_MAX_COMPOSED", "BINS_MAX_WORK", "BINS_ONE_EPOCH_DEGREE", "BINS_MAX_EPS", "BINS_ENCLOSURE_RANGE",
           "REPLACE_MAX_EPS", "EVENT_MAX_LEAVES",
           "EVENT_MAX_EPS", "LOSS_BOUND_BITS", "LOSS_BOUND_CAP", "PROFILE_MECHANISM_NAMES", "RDP_MECHANISM_NAMES",
           "CONVERSIONS"]

#: what a noise multiplier means in an event tree (``inputs.sensitivity_convention`` of
#: events.* certificates): verify refuses any other text, since it defines the pairs
SENSITIVITY_CONVENTION = (
    "noise_multiplier z = sigma / C with C the per-record bound (the sensitivity of a sum under "
    "add/remove and replace-special); under replace-one the sensitivity is 2C (replacing +C by -C), "
    "so the Gaussian pair is N(0,1) vs N(2/z,1); Laplace scale and discrete sensitivities likewise "
    "(sensitivity doubled under replace-one)"
)

# kind: a range of certificate.ranges.FIELD_RANGES ("pos" > 0, "nonneg" >= 0, "prob" in [0, 1],
# "prob1" in (0, 1], "sigma" in (0, MAX_NOISE_MULTIPLIER], "exp_eps0" in [1, MAX_APPROX_EXP_EPS0], "int1" / "int0" integers),
# or "event", "events", "numlist_nonneg", "numlist_prob"
#: event node type -> its fields (besides "type") and their kinds; the strict event
#: reader and the verifier both use it, so a key the producer would refuse is refused by verify
EVENT_FIELDS: dict[str, dict[str, str]] = {
    "gaussian": {"noise_multiplier": "sigma"},
    "laplace": {"noise_multiplier": "pos"},
    "discrete_laplace": {"noise_parameter": "pos", "sensitivity": "int1"},
    "discrete_gaussian": {"sigma": "pos", "sensitivity": "int1"},
    "randomized_response": {"noise_parameter": "prob", "num_buckets": "int1"},
    "epsilon_delta": {"epsilon": "nonneg", "delta": "prob"},
    "mixture_of_gaussians": {"standard_deviation": "pos", "sensitivities": "numlist_nonneg",
                             "sampling_probs": "numlist_prob"},
    "zcdp": {"rho": "nonneg", "xi": "nonneg"},
    "non_private": {},
    "no_op": {},
    "poisson_sampled": {"sampling_probability": "prob", "event": "event"},
    "sampled_without_replacement": {"source_dataset_size": "int1", "sample_size": "int0", "event": "event"},
    "balls_in_bins": {"dataset_size": "int1", "batch_size": "int1", "epochs": "int1", "event": "event"},
    "self_composed": {"count": "int0", "event": "event"},
    "composed": {"events": "events"},
}

#: legacy step item (``{"mechanism": ..., ...}`` in the ``events`` list of ``audit dpsgd --events``
#: and in ``inputs.events`` of a pld.* certificate) -> its fields (besides ``mechanism``) and their
#: kinds (as :data:`EVENT_FIELDS`). Each item takes exactly its own mechanism's keys: a ``gaussian`` item
#: is the unsampled Gaussian and has no rate; a key of another mechanism defines nothing, so the
#: strict reader and verify both refuse it
LEGACY_EVENT_FIELDS: dict[str, dict[str, str]] = {
    "subsampled-gaussian": {"noise_multiplier": "sigma", "sampling_rate": "prob1", "count": "int1"},
    "gaussian": {"noise_multiplier": "sigma", "count": "int1"},
    "laplace": {"scale": "pos", "sampling_rate": "prob1", "count": "int1"},
    "approx": {"exp_eps0": "exp_eps0", "delta0": "prob_lt1", "sampling_rate": "prob1", "count": "int1"},
}


#: work units of the cell proofs verify spends on one gdp.certify / gdp.optimal_mu certificate
#: (a Laplace cell at 200 bits is one unit; :func:`gdp_cell_weight` for other profiles). The
#: producer refuses a --margin whose head proof of a first-order profile would need more (the
#: verifier would answer exit 3), so one number decides on both sides
GDP_CELL_WORK_CAP = 25000
#: profiles the re-check proves with the first-order cell test only (not known to be convex in
#: t = e^eps): its cells are about the producer's, so the producer counts them against the cap
GDP_FIRST_ORDER_PROFILES = frozenset({"expr", "sgd-example", "icea-example"})


def gdp_cell_weight(mechanism: str, refined: bool = False, profile: "str | None" = None) -> float:
    """Work units of one head cell of the mechanism's profile at 200 bits, relative to Laplace's
    closed form (measured: Laplace 0.34 ms, pure / approx / rr 0.48, subsampled 0.55, the App B
    refined examples 0.77, an expression about 0.3 ms plus 0.08 ms per part of its tree): a static
    estimate, so the cap is reached after the same cells on every machine."""
    if mechanism == "expr":
        try:
            parts = len(list(ast.walk(ast.parse(profile.strip(), mode="eval")))) if isinstance(profile, str) else 1
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            parts = 1
        return 1.0 + parts / 4
    if mechanism in ("sgd-example", "icea-example"):
        return 2.5 if refined else 1.0
    return {"pure": 1.5, "approx": 1.5, "rr": 1.5, "subsampled": 1.7}.get(mechanism, 1.0)


#: result details the second route cannot re-prove (a per-direction enclosure is as
#: narrow as the producer's grid made it, at a scale other than the quantity's; the
#: lower end of a pair that only bounds the mechanism from above says nothing about
#: it; a realised lower end restates result.enclosure.lo at 17 digits, of which verify
#: re-proves only the enclosure's own): writers keep them out of certificates, and
#: verify refuses a format-2 certificate that carries one
UNVERIFIABLE_DETAILS = ("directions", "dominating_pair_lower_end", "conversion_lower_end", "realised_lower_end")

# --------------------------------------------------------------------------- inputs per kind

#: mechanism name -> the option sets its producer accepts (exactly one must match):
#: an option the producer would not read defines nothing, so verify refuses it
MECHANISM_OPTIONS: dict[str, tuple[frozenset, ...]] = {
    "gaussian": (frozenset({"mu"}), frozenset({"noise_multiplier"}), frozenset({"noise_multiplier", "sensitivity"})),
    "laplace": (frozenset({"scale"}), frozenset({"scale", "sensitivity"})),
    "pure": (frozenset({"eps0"}),),
    "approx": (frozenset({"eps0", "delta0"}),),
    "rr": (frozenset({"p"}),),
    "subsampled": (frozenset({"rate", "eps0", "delta0"}),),
    "subsampled-gaussian": (frozenset({"noise_multiplier", "rate"}),),
    "sgd-example": (frozenset(), frozenset({"refined"})),
    "icea-example": (frozenset(), frozenset({"refined"})),
    "expr": (frozenset({"profile"}),),
}
#: the mechanisms with a privacy profile (``mechanisms.registry.profile_names``: dp profile, gdp certify)
PROFILE_MECHANISM_NAMES = tuple(sorted(set(MECHANISM_OPTIONS) - {"subsampled-gaussian"}))
#: the mechanisms with an RDP curve (the keys of ``rdp.specs.RDP_MECHANISMS``: rdp divergence, rdp epsilon)
RDP_MECHANISM_NAMES = ("gaussian", "laplace", "pure", "rr", "subsampled-gaussian")
#: the RDP -> DP conversions (rdp epsilon / rdp to-dp --conversion; ``rdp.conversions`` reads this one tuple)
CONVERSIONS = ("classic", "balle", "optimal")
#: every option of some mechanism
ALL_MECHANISM_OPTIONS = frozenset().union(*(s for sets in MECHANISM_OPTIONS.values() for s in sets))
#: kinds whose inputs name a mechanism of :data:`MECHANISM_OPTIONS` (and take its options)
MECHANISM_KINDS = frozenset({"dp.profile", "gdp.certify", "gdp.optimal_mu", "gdp.tail_limit", "rdp.divergence",
                             "rdp.epsilon"})

#: a DP-SGD schedule as audit records it: the options, or a list of steps (``events``), or
#: epochs of a dataset (``steps_rule`` beside them)
_SCHEDULE = frozenset({"noise_multiplier", "sampling_rate", "steps", "events", "dataset_size", "batch_size",
                       "epochs", "steps_rule", "neighboring"})
#: replace.* takes a schedule as options or epochs, never as a list of steps: audit refuses --events
#: lists under replace-one (a tree goes in ``inputs.event``), and no writer records ``events`` there
_REPLACE_SCHEDULE = _SCHEDULE - {"events"}
_TREE = frozenset({"event", "neighboring", "sensitivity_convention"})
_SAMPLED = frozenset({"noise_multiplier", "dataset_size", "batch_size", "epochs", "sampling", "neighboring"})

#: the input keys a certificate of each kind may carry: what its writers record (over formats 1
#: and 2 and over the input forms) and its re-checker reads. The schema's ``inputs`` section is
#: the union over all kinds, so a key of another kind would pass it: ``sensitivity`` or
#: ``sampling: shuffle`` on a Poisson ``pld.epsilon``, a second rate on ``rdp.epsilon``. Verify
#: refuses any other key (exit 2), and the writer refuses to write one (a bug). A kind of
#: :data:`MECHANISM_KINDS` also takes exactly one option set of its mechanism.
KIND_INPUTS: dict[str, frozenset] = {
    "pld.epsilon": _SCHEDULE | {"delta", "digits"},
    "pld.delta": _SCHEDULE | {"eps", "digits"},
    "pld.claim": _SCHEDULE | {"claimed_eps", "delta"},
    "replace.epsilon": _REPLACE_SCHEDULE | _TREE | {"delta", "digits"},
    "replace.delta": _REPLACE_SCHEDULE | _TREE | {"eps", "digits"},
    "replace.claim": _REPLACE_SCHEDULE | _TREE | {"claimed_eps", "delta"},
    "events.epsilon": _TREE | {"delta", "digits"},
    "events.delta": _TREE | {"eps", "digits"},
    "events.claim": _TREE | {"claimed_eps", "delta", "digits"},
    **{f"{p}.epsilon": _SAMPLED | {"delta"} for p in ("bins", "shuffle")},
    **{f"{p}.delta": _SAMPLED | {"eps"} for p in ("bins", "shuffle")},
    **{f"{p}.claim": _SAMPLED | {"claimed_eps", "delta"} for p in ("bins", "shuffle")},
    "calibrate.bracket": frozenset({"template", "parameter", "target_eps", "delta", "neighboring", "sampling",
                                    "noise_multiplier", "sampling_rate", "steps", "dataset_size", "batch_size",
                                    "epochs"}),
    "composition.eps": frozenset({"mechs", "k", "delta", "digits", "accuracy_digits", "grid"}),
    "composition.delta": frozenset({"mechs", "k", "eps", "digits", "accuracy_digits", "grid"}),
    "dp.implies": frozenset({"eps0", "delta0", "eps", "delta", "digits"}),
    "dp.profile": frozenset({"mechanism", "eps", "digits"}),
    "dp.rr64": frozenset({"eps0", "delta0", "eps", "digits"}),
    "dp.sigma_refinement": frozenset({"eps", "log_delta", "which", "digits"}),
    "finite.identity": frozenset({"identity", "P", "Q", "r", "q", "beta", "lam"}),
    "gdp.certify": frozenset({"mechanism", "algorithm", "eps_h", "margin"}),
    "gdp.clip_rectify": frozenset({"eps_h", "mu", "y_minus", "y_plus"}),
    "gdp.delta": frozenset({"mu", "eps", "digits"}),
    "gdp.eps": frozenset({"mu", "delta", "digits"}),
    "gdp.mills_scaled": frozenset({"t", "digits"}),
    "gdp.mu": frozenset({"eps", "delta", "digits"}),
    "gdp.optimal_mu": frozenset({"mechanism", "argmax", "eps_h", "margin"}),
    "gdp.refinement_point": frozenset({"example", "what", "digits"}),
    "gdp.tail_limit": frozenset({"mechanism"}),
    "gdp.thm4.5": frozenset({"eps", "delta"}),
    "gdp.thm51": frozenset({"eps0", "digits"}),
    "lt.partial-transform": frozenset({"mechanism", "param", "q", "A", "B"}),
    "lt.residual": frozenset({"mechanism", "param", "identity", "eps", "q_re", "q_im"}),
    "oracle.rows": frozenset({"battery", "accountant", "input", "input_sha256", "input_text", "row_count", "digits",
                              "tolerance"}),
    "rdp.abc_extra_iterations": frozenset({"noise_multiplier", "eps", "delta"}),
    "rdp.abc_gain": frozenset({"noise_multiplier", "compositions", "delta", "digits"}),
    "rdp.divergence": frozenset({"mechanism", "alpha", "compositions", "digits"}),
    "rdp.epsilon": frozenset({"mechanism", "compositions", "conversion", "delta", "digits"}),
    "rdp.to_dp_delta": frozenset({"rdp", "alpha", "conversion", "eps", "digits"}),
    "rdp.to_dp_eps": frozenset({"rdp", "alpha", "conversion", "delta", "digits"}),
}


def foreign_inputs(quantity: str, inputs: Mapping[str, Any]) -> "tuple[list[str], frozenset] | None":
    """(the keys of ``inputs`` that a ``quantity`` certificate does not take, its allowed keys),
    or None for a kind without a declared list."""
    allowed = KIND_INPUTS.get(quantity)
    if allowed is None:
        return None
    if quantity in MECHANISM_KINDS:
        allowed = allowed | ALL_MECHANISM_OPTIONS
    return sorted(set(inputs) - allowed), allowed


#: the largest mu = Delta sqrt(E) / sigma of the shuffled bracket's upper end (the no-amplification
#: Gaussian): its eps(delta) is about mu^2 / 2, so 10^4 keeps eps below about 5e7, where both
#: routes evaluate delta_mu (e^eps beyond MPFR's exponent range otherwise). The producer refuses a
#: smaller noise multiplier before any work (exit 2), and verify refuses such a certificate alike.
SHUFFLE_MAX_MU = 10**4


def shuffle_mu_beyond_cap(sensitivity: int, epochs: int, sigma: Fraction) -> bool:
    """mu = Delta sqrt(E) / sigma > :data:`SHUFFLE_MAX_MU`, decided exactly on the squares."""
    return Fraction(sensitivity * sensitivity * epochs) / (sigma * sigma) > SHUFFLE_MAX_MU ** 2

#: the batteries ``oracle --battery`` runs (dpverify.oracle.run.BATTERIES, tied to this tuple by a test):
#: verify refuses a battery certificate naming another (an unknown name was confirmed, adv50 L4)
ORACLE_BATTERIES = ("readme", "smoke")
#: the mechanisms an oracle row may name (``dpsgd`` is read as ``subsampled-gaussian``; the
#: plain ``gaussian`` is the subsampled one at rate 1): the oracle's CSV reader and the
#: oracle re-check read this one tuple
ORACLE_MECHANISMS = ("subsampled-gaussian", "gaussian", "dpsgd")
#: a mechanism name the oracle reads as another (one vocabulary with sweep grids and the corpus)
ORACLE_ALIASES = {"dpsgd": "subsampled-gaussian"}
#: spellings of a reported +inf in an oracle input (any case; the schema oracle_rows lists the same)
ORACLE_INFINITY = ("inf", "+inf", "infinity", "+infinity")
#: the columns of an oracle input file (CSV header, or the keys of each JSON object)
ORACLE_FIELDS = ("accountant", "mechanism", "noise_multiplier", "sampling_rate", "steps", "delta", "reported_eps")

#: the format every writer emits (schema: ``schema-2.json``)
FORMAT = "dpverify-certificate/2"
#: the format of dpverify 0.1.0 (schema: ``schema.json``); still verified
FORMAT_1 = "dpverify-certificate/1"
#: format name -> the schema file shipped beside this module
SCHEMAS = {FORMAT_1: "schema.json", FORMAT: "schema-2.json"}
#: inputs that are counts: written as JSON integers (every other number is an
#: exact decimal string)
COUNT_KEYS = frozenset({"steps", "count", "k", "compositions", "digits", "accuracy_digits", "A", "B", "row_count",
                        "batch_size", "dataset_size"})

#: ``inputs.steps_rule`` of a schedule given as epochs, dataset size and batch
#: size (TF Privacy's ``compute_dp_sgd_privacy`` convention); the verifier
#: re-derives ``steps`` and ``sampling_rate`` from it and refuses a mismatch
TF_STEPS_RULE = "steps = ceil(epochs * dataset_size / batch_size), q = batch_size / dataset_size"


def canonical_bytes(cert: Mapping[str, Any]) -> bytes:
    """The bytes the digest is taken of: every field except ``digest``."""
    body = {k: v for k, v in cert.items() if k != "digest"}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode(
        "utf-8"
    )


def compute_digest(cert: Mapping[str, Any]) -> str:
    return hashlib.sha256(canonical_bytes(cert)).hexdigest()


@lru_cache(maxsize=None)
def load_schema(fmt: str) -> dict:
    """The shipped JSON Schema of certificate format ``fmt``."""
    name = SCHEMAS[fmt]
    text = resources.files(__package__).joinpath(name).read_text(encoding="utf-8")
    return json.loads(text)


def _path(parts: Any) -> str:
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out or "(top level)"


def _shown(value: Any) -> str:
    """A value as a message shows it: whole when short, else its start and its size (a 4000-digit
    integer was cut in the middle of its digits and the reason never shown, adv47 L4)."""
    if value is None or isinstance(value, bool):  # as JSON writes them: Python's None and True were quoted
        return json.dumps(value)
    if isinstance(value, (dict, list)):
        return "an object" if isinstance(value, dict) else "a list"
    if isinstance(value, (datetime.date, datetime.time)):  # TOML's dates, as the file writes them
        return f"the date {value.isoformat()}" if isinstance(value, datetime.date) else f"the time {value.isoformat()}"
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**40:
        # about bit_length log10(2) digits: str() of an integer past Python's digit limit raises
        return f"an integer of about {round(abs(value).bit_length() * 0.30103)} digits"
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:40]}... ({len(text)} characters)"


def _form(branch: Any, root: Mapping[str, Any]) -> str:
    """One allowed form of a oneOf / anyOf, in words: a $defs entry resolved, its type and range."""
    if isinstance(branch, Mapping) and isinstance(branch.get("$ref"), str) and branch["$ref"].startswith("#/$defs/"):
        branch = root.get("$defs", {}).get(branch["$ref"][len("#/$defs/"):], branch)
    if not isinstance(branch, Mapping):
        return "?"
    t = branch.get("type")
    if t == "integer" and "minimum" in branch and "maximum" in branch:
        return f"an integer in [{branch['minimum']}, {branch['maximum']:,}]"
    if t == "string" and "pattern" in branch:
        return "a decimal or fraction as a string" if "/" in branch["pattern"] else "a string of a stated form"
    return f"a {t}" if isinstance(t, str) else "another form"


def _schema_error(err: Any, root: "Mapping[str, Any] | None" = None, kind: "str | None" = None) -> str:
    """One schema violation in words. ``kind``: the certificate's ``claim.quantity`` when it is a kind
    of :data:`KIND_INPUTS`, whose keys an unknown input key is offered (the schema's ``inputs`` is the
    union over all kinds: about 100 keys were listed for a misspelled ``delta``, mend49 4)."""
    where = _path(err.absolute_path)
    if err.validator in ("oneOf", "anyOf") and isinstance(err.validator_value, list):
        forms = sorted(set(_form(b, root or {}) for b in err.validator_value))
        return f"{where}: {_shown(err.instance)} is not allowed (allowed: {' or '.join(forms)})"
    if err.validator == "additionalProperties":
        allowed = sorted(err.schema.get("properties", {}))
        extra = sorted(set(err.instance) - set(allowed)) if isinstance(err.instance, dict) else []
        key = extra[0] if extra else "?"
        whose = ""
        kind_keys = foreign_inputs(kind, {}) if kind is not None and list(err.absolute_path) == ["inputs"] else None
        if kind_keys is not None:
            allowed, whose = sorted(kind_keys[1]), f" keys of {kind}"
        hint = did_you_mean(key, allowed)
        base = f"{where}.{key}" if where != "(top level)" else key
        return f"{base}: unknown key{hint} (allowed{whose}: {', '.join(allowed)})"
    if err.validator == "required":
        return f"{where}: {err.message}"
    if err.validator == "type" and "integer" in _types(err.validator_value) and isinstance(err.instance, float):
        return f"{where}: {_shown(err.instance)} is not an integer: {INTEGER_REQUIRED}"
    if err.validator in ("pattern", "type") and isinstance(err.instance, str):
        why = not_ascii(err.instance)  # "１" looks like a number: say why it is none
        if why is not None:
            return f"{where}: {_shown(err.instance)} is {why}"
        if err.validator == "pattern" and is_number_pattern(err.validator_value):
            return f"{where}: {not_number_text(err.instance, err.validator_value)}"
    if err.validator == "type":
        return f"{where}: {type_message(err.instance, err.schema)}"
    if err.validator in ("enum", "const"):
        allowed = err.validator_value if err.validator == "enum" else [err.validator_value]
        return f"{where}: {str(err.instance)[:60]!r} is not allowed (allowed: {', '.join(map(str, allowed))})"
    if err.validator in _BOUND_WORDS:
        # jsonschema's message quotes the whole number first: a 900-digit digits was cut inside it (ref49 LOW-1)
        return f"{where}: {_shown(err.instance)} is {_BOUND_WORDS[err.validator]} {err.validator_value}"
    return f"{where}: {err.message[:200]}"


#: a schema bound's words, after the value (the schema's own bound follows)
_BOUND_WORDS = {"minimum": "less than the minimum of", "maximum": "greater than the maximum of",
                "exclusiveMinimum": "not above the exclusive minimum of",
                "exclusiveMaximum": "not below the exclusive maximum of"}


def number_words(pattern: Any) -> Optional[str]:
    """How a value of a schema ``pattern`` that is one of the number grammars is written, in words (a
    message says them, not the regular expression), or None: $defs/number (decimals and fractions,
    the inputs) or $defs/decimal (decimals and inf, an enclosure's ends; adv52 L1: its regular
    expression was printed)."""
    if not (isinstance(pattern, str) and "[0-9]" in pattern):
        return None
    return NUMBER_TEXT if "/" in pattern else DECIMAL_TEXT if "inf" in pattern else None


def is_number_pattern(pattern: Any) -> bool:
    """Whether a schema ``pattern`` is one of the number grammars (:func:`number_words`)."""
    return number_words(pattern) is not None


def not_number_text(value: Any, pattern: Any) -> str:
    """``value`` refused by the number grammar ``pattern``, in words (certificates and claim records alike)."""
    return f"{_shown(value)} is not a number as a certificate writes one ({number_words(pattern) or NUMBER_TEXT})"


def type_message(instance: Any, schema: Any) -> str:
    """A JSON type violation in JSON's words for the value and the type ("null is not a string"), not
    Python's ("None is not of type 'string'", which quoted what the file does not hold); a key whose
    schema is the number grammar says how a number is written. Every schema dpverify checks a
    document against words it so (certificates, claim and corpus records)."""
    want = " or ".join(_JSON_TYPE.get(t, t) for t in _types(schema.get("type") if isinstance(schema, Mapping) else None))
    pattern = schema.get("pattern", "") if isinstance(schema, Mapping) else ""
    described = schema.get("description") if isinstance(schema, Mapping) else None
    words = number_words(pattern)
    how = f" ({words})" if words else f" ({described})" if isinstance(described, str) else ""
    return f"{_shown(instance)} is not {want or 'of the allowed type'}{how}"


@lru_cache(maxsize=None)
def _anchored(pattern: str) -> "re.Pattern[str]":
    # JSON Schema patterns are ECMA-262, where a final $ matches only at the end of the text; Python's
    # $ also matches before a final newline, so "2\n" passed every number pattern (adv35 G1)
    return re.compile(pattern[:-1] + r"\Z" if pattern.endswith("$") and not pattern.endswith("\\$") else pattern)


def ecma_pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Any:
    """The ``pattern`` keyword with ECMA-262's end anchor (used by every schema dpverify checks)."""
    import jsonschema

    if isinstance(instance, str) and not _anchored(pattern).search(instance):
        yield jsonschema.ValidationError(f"{instance[:60]!r} does not match {pattern!r}")


#: how a certificate writes an input number (schema-2.json, $defs/number), in words
NUMBER_TEXT = "a decimal string such as \"0.1\" or \"1e-5\", or a fraction \"1/3\""
#: $defs/decimal (an enclosure's ends) in words
DECIMAL_TEXT = "a decimal string such as \"0.1\", \"1e-5\" or \"inf\""
#: a JSON type in words
_JSON_TYPE = {"string": "a string", "integer": "an integer", "number": "a number", "object": "an object",
              "array": "a list", "boolean": "true or false", "null": "null"}

#: why a count written as a JSON float (60000.0, 6e4) is refused, in the schema's words and the ranges'
INTEGER_REQUIRED = "an integer is required (written without a fraction or exponent)"


def _types(t: Any) -> list:
    return [t] if isinstance(t, str) else list(t) if isinstance(t, list) else []


def _is_integer(checker: Any, x: Any) -> bool:
    """JSON Schema's ``integer`` as the writer means it: a JSON integer. Draft 2020-12 also counts
    60000.0 as one, so a count written as a float passed the schema and was refused later, by a
    check that did not say why (issue 22); no released certificate holds one (rule 9)."""
    return isinstance(x, int) and not isinstance(x, bool)


def schema_validator(schema: Mapping[str, Any]) -> Any:
    """A Draft 2020-12 validator of ``schema`` with dpverify's two readings: ``pattern`` anchored as
    ECMA-262 anchors it, ``integer`` a JSON integer only. Every schema dpverify checks a document
    against (certificates, corpus records, sweep grids) is checked by it."""
    return _validator_class()(schema)


@lru_cache(maxsize=None)
def _validator_class() -> Any:
    import jsonschema

    base = jsonschema.Draft202012Validator
    return jsonschema.validators.extend(base, validators={"pattern": ecma_pattern},
                                        type_checker=base.TYPE_CHECKER.redefine("integer", _is_integer))


def schema_errors(cert: Any) -> list[str]:
    """Every schema violation of ``cert`` as a readable line (empty: valid)."""

    if not isinstance(cert, dict):
        return ["not a JSON object"]
    fmt = cert.get("format")
    if "format" not in cert:  # was "format: 'None' is not allowed", a value the file does not hold (mend49 5)
        return [f"format: missing (required; allowed: {', '.join(SCHEMAS)})"]
    if not isinstance(fmt, str) or fmt not in SCHEMAS:  # [] or {} is unhashable (adv51 L1: exit 3, TypeError)
        return [f"format: {_shown(fmt)} is not allowed (allowed: {', '.join(SCHEMAS)})"]
    root = load_schema(fmt)
    validator = schema_validator(root)
    errors = sorted(validator.iter_errors(cert), key=lambda e: (len(e.absolute_path), str(e.absolute_path)))
    claim = cert.get("claim")
    kind = claim.get("quantity") if isinstance(claim, dict) else None
    return [_schema_error(e, root, kind if isinstance(kind, str) and kind in KIND_INPUTS else None) for e in errors]


def check_schema(cert: Any) -> str:
    """Validate against the schema of the certificate's format; returns the format.

    Raises :class:`~dpverify.errors.MalformedCertificate` naming the first
    violation (its JSON path and the allowed keys or values)."""
    errors = schema_errors(cert)
    if errors:
        raise MalformedCertificate(errors[0])
    return cert["format"]


#: coefficients of one direction's E-fold composed balls-in-bins loss law (E x the window of one
#: epoch's loss grid), and of one polynomial power of the one-epoch law (its degree cap times the
#: number of products): the producer refuses a run whose grids need more, and verify refuses a
#: certificate whose recorded grids need more before any product (the second route's cost is
#: proportional to it, so a certificate the producer writes re-checks in bounded time)
#: (the producer's proposal aims at 2^20 composed points, plus up to about 18 E for the window's
#: rounding at E <= 10,000 epochs: 5 x 2^18 leaves room for it; about 15 s of CPU per direction here)
BINS_MAX_COMPOSED = 5 << 18
#: coefficients produced by all the polynomial products of one balls-in-bins certificate (the count
#: :func:`dpverify.recheck.bins.work` makes from T, E and the recorded grids, before any product): the
#: producer refuses a run whose grids need more (the E-epoch grid refinement stops below it) and verify
#: refuses (exit 2) a certificate that does, so its re-check is bounded before it starts. 2^26: the
#: MNIST-size run (T = 240, 60 epochs, 2^20-cell grids) needs 4.1e7; one epoch at T = 10^5 on the
#: default 2^18-degree grid 3.6e7
BINS_MAX_WORK = 1 << 26
#: the degree the one-epoch balls-in-bins grid rule aims at (dpverify.sampling.balls.choose_grid keeps
#: about T c_max / h <= this many degrees, plus 2): verify refuses a one-epoch grid that keeps or
#: tops more than GRID_SLACK times it (a 1.3 KB certificate with keep = top = 1,100,000 cost verify
#: 42 CPU s and 461 MB before its refusal, adv40 B1)
BINS_ONE_EPOCH_DEGREE = 1 << 18

#: the largest eps of a balls-in-bins certificate: bins.delta's inputs.eps and the upper end of a
#: bins.epsilon / bins.claim enclosure (one epoch's grid needs T e^eps / h degrees, so its route stops
#: well below it; an E-epoch run of N = 100, B = 10, sigma 1.1 over 1000 epochs certifies [96.27, 113.8],
#: of no use as a guarantee). Verify refuses a certificate beyond it (exit 2) and always has; the
#: producer refuses --eps beyond it and a run whose certified upper end passes it (exit 2, adv47 M3:
#: it wrote such certificates and verify refused them)
BINS_MAX_EPS = 50
#: verify's refusal of such an enclosure, word for word the producer's (dpverify.sampling.bins.enclose_eps)
BINS_ENCLOSURE_RANGE = f"result.enclosure must have 0 <= lo <= hi <= {BINS_MAX_EPS}"

#: the largest eps at which the replace-one bracket evaluates a delta curve (the add/remove curve at
#: eps* = hi / 2 or eps / 2, the remove curve at eps): a delta curve's unit needs about 1.45 eps more
#: bits to resolve Q-masses ~e^-eps P-masses, so a forged hi of 1e6 cost verify 17 s for a curve that
#: is 0 there; delta(200) of any step with a useful guarantee is below e^-150. The producer refuses
#: --eps beyond it (exit 2) and answers exit 3 where the upper end's eps* would pass it; verify
#: refuses a certificate beyond it (exit 2)
REPLACE_MAX_EPS = 200

#: the expression profiles' grammar, one copy for the producer (dpverify.mechanisms.expr) and the
#: re-check (recheck.limits.check_expression): names, functions with their arities, and + - * / **
#: on them and on decimal numbers
EXPR_NAMES = ("eps", "e", "pi")
EXPR_FUNCS = {"exp": 1, "expm1": 1, "log": 1, "log1p": 1, "sqrt": 1, "erfc": 1, "Phi": 1, "abs": 1,
              "min": 2, "max": 2}
EXPR_ALLOWED = "numbers, eps, e, pi, + - * / **, " + ", ".join(sorted(EXPR_FUNCS))

#: the smallest delta of ABC's optimal RDP-to-DP conversion: it resolves S'(p) ~ delta against O(1)
#: terms, so the precision it needs grows with log(1/delta) (verify ran a 1e-3000 certificate to its
#: 300 s budget). The producer refuses a smaller delta (exit 2, naming --delta), verify too
RDP_OPTIMAL_MIN_DELTA = Fraction(1, 10**50)

#: the most distinct kinds of step of an event tree (after the counts of self_composed nodes are
#: multiplied out, the leaves of one kind, equal parameters and sampling, anywhere in the tree, are
#: one block whose count is their total): each kind is discretised and composed on its own, about
#: 0.5 s of the producer's and 1 s of the second route's CPU per kind here (25 kinds of 10 Poisson
#: Gaussian steps each: 12 s and 25 s), so 5000 kinds cost hours on both sides. The producer refuses
#: a tree with more (exit 2, naming --events / the event), verify a certificate with more (exit 2)
EVENT_MAX_LEAVES = 32

#: the largest eps at which an event tree's delta is certified (events.delta's eps, events.claim's
#: claimed eps): the same reason and number as :data:`REPLACE_MAX_EPS` (a claimed eps of 500 kept
#: verify busy past 40 s resolving e^-500 masses). The producer refuses more (exit 2), verify too
EVENT_MAX_EPS = REPLACE_MAX_EPS

#: a step's privacy-loss bound (delta(eps) = 0 exactly at or past the sum of the steps'
#: bounds) is a dyadic rational on the grid 2^-LOSS_BOUND_BITS. The producer rounds its
#: closed form up to that grid plus one unit (:func:`dpverify.pld.dominating.dyadic_loss_bound`),
#: verify searches the smallest grid point at which its interval tail P(L > e) is proved 0
#: (``recheck.pld.loss_sup``), which is at most the producer's: so a [0, 0] that the producer
#: decided is decided by verify too, on its own derivation. Where the supremum is an exact
#: rational of the inputs (Laplace at q = 1: 1/b; discrete Laplace: a D; (eps0, 0)-DP: eps0)
#: both sides use that rational unrounded, each derived on its own side
LOSS_BOUND_BITS = 40
#: a step's loss bound above this is not used (reported as +inf by the producer, not searched
#: by verify): a loss that large is no privacy guarantee worth a shortcut
LOSS_BOUND_CAP = 1 << 20
