"""The producer's input ranges, declared once: what each certificate kind's inputs may be.

Issue 22: a certificate whose inputs the producer would refuse is refused by ``verify`` (exit 2,
naming the file, the path inside it and the allowed values), by one rule, before any route runs.
:data:`INPUT_RANGES` maps a kind to its numeric input keys, each with its range and the producer's
option that enforces it; :data:`FIELD_RANGES` maps the value kinds of the event-tree tables
(:data:`~dpverify.certificate.format.EVENT_FIELDS`, ``LEGACY_EVENT_FIELDS``) to their ranges, which
the producer's event reader (:mod:`dpverify.events.json_format`) reads too; :data:`RESULT_BINDINGS`
names inputs the route does not read that must restate what the result records.
:func:`check_input_ranges` applies all of them; ``verify`` calls it once in its dispatch, so a new
kind gets the rule by adding rows here. ``tests/recheck/test_input_ranges.py`` drives the producer
with a value outside every row and asserts exit 2 there too.

No input the producer reads is infinite (its numbers are exact rationals): an input spelled
``inf`` (the schema's number pattern admits it for results) is refused in every kind.

Stdlib only: the re-check imports it (it imports nothing of the arb side).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Mapping, Optional, Union

from ..errors import InvalidParameter, MalformedCertificate, did_you_mean
from ..limits import (MAX_ACCURACY_DIGITS, MAX_APPROX_EXP_EPS0, MAX_PLD_DIGITS, MAX_BINS_EPOCHS, MAX_CONVERSION_ALPHA_EPS, MAX_DATASET_SIZE, MAX_EPS0, MAX_EPS_H,
                      MAX_EVENT_INTEGER, MAX_GDP_EPS_OVER_MU, MAX_IDENTITY_ORDER, MAX_NOISE_MULTIPLIER, MAX_RDP_ORDER,
                      MAX_SHUFFLE_EPOCHS, MAX_STEPS, MAX_COMPOSED_MECHANISMS, MAX_RDP_COMPOSITIONS,
                      MAX_RDP_EPSILON_DIGITS)
from ..numtext import read_exact_text
from .format import (BINS_MAX_EPS, CONVERSIONS, EVENT_FIELDS, INTEGER_REQUIRED, EVENT_MAX_EPS, LEGACY_EVENT_FIELDS,
                     PROFILE_MECHANISM_NAMES, RDP_MECHANISM_NAMES, REPLACE_MAX_EPS)

__all__ = ["Range", "TwoFieldRule", "INPUT_RANGES", "FIELD_RANGES", "MECHANISM_OPTION_RANGES", "MECHANISM_RATIO_RANGES",
           "MECHANISM_OPTION_OVERRIDES", "EVENT_RATIO_RANGES", "INPUT_PAIR_RANGES", "INPUT_NAMES", "RESULT_BINDINGS", "check_input_ranges", "exact_number",
           "REAL", "POSITIVE", "NONNEGATIVE", "CLOSED_UNIT", "OPEN_UNIT", "HALF_OPEN_UNIT", "NOISE_MULTIPLIER",
           "EPS_H", "MARGIN", "EPS0"]

Bound = Union[Fraction, int, str, None]  # a number, another input's key (its value), or None: unbounded


@dataclass(frozen=True)
class Range:
    """An interval of exact rationals; an end that is a ``str`` is the value of that input key."""

    lo: Bound = None
    lo_closed: bool = False
    hi: Bound = None
    hi_closed: bool = False
    integer: bool = False

    def text(self) -> str:
        def end(b: Bound) -> str:
            if isinstance(b, Fraction) and b.denominator == 1:
                b = b.numerator
            if isinstance(b, int) and abs(b) > 10**15 and str(b).rstrip("0") == "1":
                return f"1e{len(str(b)) - 1}"
            if isinstance(b, Fraction) and b.numerator == 1 and str(b.denominator).rstrip("0") == "1":
                return f"1e-{len(str(b.denominator)) - 1}"
            return str(b)

        if self.integer and self.hi is None:
            return f"an integer >= {end(self.lo)}"
        if self.integer:
            return f"an integer in [{end(self.lo)}, {end(self.hi)}]"
        if self.lo is None and self.hi is None:
            return "a finite real number"
        a = "(-inf" if self.lo is None else ("[" if self.lo_closed else "(") + end(self.lo)
        b = "inf)" if self.hi is None else end(self.hi) + ("]" if self.hi_closed else ")")
        return f"{a}, {b}"

    def requirement(self) -> str:
        """The words of a refusal: "> 0", ">= 1", "in [0, 1]", "an integer in [1, 1000000000000]"."""
        if not self.integer and self.hi is None and self.lo is not None:
            return f"{'>=' if self.lo_closed else '>'} {self.lo}"
        return self.text() if self.integer else f"in {self.text()}"

    def contains(self, x: Fraction, ends: "Mapping[str, Fraction]" = {}) -> bool:
        lo = ends.get(self.lo) if isinstance(self.lo, str) else self.lo
        hi = ends.get(self.hi) if isinstance(self.hi, str) else self.hi
        if self.integer and Fraction(x).denominator != 1:
            return False
        if lo is not None and not (x >= lo if self.lo_closed else x > lo):
            return False
        return hi is None or (x <= hi if self.hi_closed else x < hi)


# the producer's validators (dpverify/_validate.py), as ranges
REAL = Range()
POSITIVE = Range(0)
NONNEGATIVE = Range(0, True)
CLOSED_UNIT = Range(0, True, 1, True)
OPEN_UNIT = Range(0, False, 1)
HALF_OPEN_UNIT = Range(0, False, 1, True)
#: _validate.noise_multiplier: (0, MAX_NOISE_MULTIPLIER] (limits.py: why the cap)
NOISE_MULTIPLIER = Range(0, False, MAX_NOISE_MULTIPLIER, True)
#: gdp certify's head [0, eps_h] and its absolute width (gdp/staircase.py reads these two)
EPS_H = Range(0, True, MAX_EPS_H, True)
MARGIN = Range(Fraction(1, 10**12), True, 1, True)
#: _validate.eps0: an (eps0, delta0) guarantee's eps0 in [0, MAX_EPS0] (limits.py: why the cap)
EPS0 = Range(0, True, MAX_EPS0, True)

#: a mechanism option (format.MECHANISM_OPTIONS) -> the range its builder enforces (recheck.kinds
#: checks a mechanism kind's options against it)
MECHANISM_OPTION_RANGES: dict[str, Range] = {
    "mu": POSITIVE, "noise_multiplier": POSITIVE, "sensitivity": POSITIVE, "scale": POSITIVE,
    "eps0": EPS0, "delta0": CLOSED_UNIT, "p": Range(Fraction(1, 2), True, 1), "rate": HALF_OPEN_UNIT,
}

#: a mechanism -> option -> its range where it differs from MECHANISM_OPTION_RANGES' (the sampled
#: Gaussian's sigma is the accountants' (0, MAX_NOISE_MULTIPLIER], rdp/specs.py)
MECHANISM_OPTION_OVERRIDES: dict[str, dict[str, Range]] = {
    "subsampled-gaussian": {"noise_multiplier": NOISE_MULTIPLIER},
}



@dataclass(frozen=True)
class TwoFieldRule:
    """A rule on two fields together: ``a / b`` (``op`` "/") or ``a * b`` (``op`` "*") within ``rng``,
    where ``a`` is a field (its largest item when it is a list) and ``b`` a positive field. A field
    that is missing, not a number or a non-positive ``b`` is left to the single-field rows (or the
    route) to refuse."""

    a: str
    b: str
    rng: Range
    what: str  # what the ratio or product is, in the producer's words
    op: str = "/"
    a_default: Optional[str] = None  # the builder's value of ``a`` when the field is absent

    def text(self) -> str:
        return f"{self.what}: {self.rng.text()}"

    def check(self, node: Mapping[str, Any], where: str, says: str) -> None:
        """Refuse (MalformedCertificate, exit 2) ``node`` (the fields at path ``where``: ``inputs``,
        an event's path) whose ratio or product lies outside the range; ``says`` names whose rule
        it is."""
        raw = node.get(self.a, self.a_default)
        items = raw if isinstance(raw, list) else [raw]
        if len(items) > 10**5:  # a list beyond any producer's: its own rows refuse it
            return
        xs = [exact_number(x) for x in items]
        y = exact_number(node.get(self.b))
        if not xs or any(x is None for x in xs) or y is None or y <= 0:
            return
        top = max(x for x in xs if x is not None)  # a / b and a * b rise with a (b > 0)
        if not self.rng.contains(top / y if self.op == "/" else top * y):
            shown = str(items[xs.index(top)])[:40]
            many = " up to" if isinstance(raw, list) else "" if self.a in node else " (its default)"
            raise MalformedCertificate(f"{where}.{self.b}={str(node.get(self.b))[:40]!r} with {where}.{self.a}"
                                       f"{many} {shown!r}: {says} needs {self.what} in {self.rng.text()} (the "
                                       "producer's range)")


#: a mechanism -> a builder's rule on two options together (mechanisms/laplace.py: Laplace(b) of
#: sensitivity D is (D/b)-DP, and D/b is an eps0)
MECHANISM_RATIO_RANGES: dict[str, TwoFieldRule] = {
    "laplace": TwoFieldRule("sensitivity", "scale", EPS0, "eps0 = sensitivity / scale", a_default="1"),
}

#: value kind of an event-tree field (format.EVENT_FIELDS, LEGACY_EVENT_FIELDS) -> its range; the
#: producer's event reader (events/json_format.py) and verify read this one table
FIELD_RANGES: dict[str, Range] = {
    "pos": POSITIVE,
    "nonneg": NONNEGATIVE,
    "prob": CLOSED_UNIT,
    "prob1": HALF_OPEN_UNIT,
    "prob_lt1": Range(0, True, 1),  # delta0 of a legacy approx item (pld/pairs.approx_dp_pair_exp)
    "sigma": NOISE_MULTIPLIER,
    "exp_eps0": Range(1, True, MAX_APPROX_EXP_EPS0, True),  # e^eps0 of a legacy approx item (limits.py: the cap)
    "int0": Range(0, True, MAX_EVENT_INTEGER, True, integer=True),
    "int1": Range(1, True, MAX_EVENT_INTEGER, True, integer=True),
}

#: an event type -> a pair builder's rule on two fields together (events/pairs.py: a mixture component's
#: shift c_i / s is an inverse noise multiplier, at most MAX_NOISE_MULTIPLIER)
EVENT_RATIO_RANGES: dict[str, TwoFieldRule] = {
    "mixture_of_gaussians": TwoFieldRule("sensitivities", "standard_deviation", Range(0, True, MAX_NOISE_MULTIPLIER, True),
                                         "the largest sensitivity / standard_deviation (a component's shift)"),
}

#: one row: the range and the producer's option that enforces it
Row = tuple[Range, str]

#: the sampled DP-SGD kinds' shared inputs (audit dpsgd)
_SIGMA = (NOISE_MULTIPLIER, "audit dpsgd --noise-multiplier")
_EPS = (NONNEGATIVE, "audit dpsgd --eps")
_DELTA = (OPEN_UNIT, "audit dpsgd --delta")
_ACCURACY = (Range(1, True, MAX_ACCURACY_DIGITS, True, integer=True), "compose --digits")
#: the PLD accountant's digits (vocabulary.DIGITS_PLD), one statement for audit dpsgd, its --events and oracle
_PLD_DIGITS = Range(1, True, MAX_PLD_DIGITS, True, integer=True)


def _count(hi: int, says: str) -> Row:
    """The row of a count or a digits input: the integers 1..``hi``, the limit the CLI option's declared
    range reads too (dpverify.vocabulary builds its ranges from the same limits; read from there, the
    two modules imported each other: the vocabulary's generated tables list these rows)."""
    return Range(1, True, hi, True, integer=True), says


#: the digits of every enclosure whose producer takes --digits in 1..MAX_ACCURACY_DIGITS (vocabulary.DIGITS)
def _digits(command: str) -> dict[str, Row]:
    return {"digits": _count(MAX_ACCURACY_DIGITS, f"{command} --digits")}


def _sampled(prefix: str, eps_cap: "int | None" = None, claim_cap: bool = False,
             rate: bool = False, sizes: bool = False, epochs: "int | None" = None) -> dict[str, dict[str, Row]]:
    """The rows of PREFIX.epsilon / .delta / .claim; ``eps_cap``: the largest eps at which the route
    evaluates a delta curve (the claim's too when ``claim_cap``: events.* decide a claim at its eps)."""
    eps: Row = _EPS if eps_cap is None else (Range(0, True, eps_cap, True), "audit dpsgd --eps")
    claimed: Row = (eps[0] if claim_cap else NONNEGATIVE, "audit dpsgd --claimed-eps")
    base: dict[str, Row] = {"noise_multiplier": _SIGMA}
    # the enclosures whose producer takes --digits (a claim's does not: its verdict sets the width)
    digits: dict[str, Row] = {"digits": (_PLD_DIGITS, "audit dpsgd --digits")} \
        if prefix in ("pld", "events") else {}
    if rate:
        base["sampling_rate"] = (HALF_OPEN_UNIT, "audit dpsgd --sampling-rate")
        base["steps"] = _count(MAX_STEPS, "audit dpsgd --steps")
    if sizes:  # the epoch schedules (shuffled batches, balls in bins): N records in batches of B <= N
        base["dataset_size"] = (Range(1, True, MAX_DATASET_SIZE, True, integer=True), "audit dpsgd --dataset-size")
        base["batch_size"] = (Range(1, True, "dataset_size", True, integer=True), "audit dpsgd --batch-size")
    if epochs is not None:  # each epoch's work is bounded by the route's own cap
        base["epochs"] = (Range(1, True, epochs, True, integer=True), "audit dpsgd --epochs")
    return {f"{prefix}.epsilon": {**base, "delta": _DELTA, **digits},
            f"{prefix}.delta": {**base, "eps": eps, **digits},
            f"{prefix}.claim": {**base, "claimed_eps": claimed, "delta": _DELTA}}


#: kind -> input key -> (its range, the producer's option that enforces it). A key a kind takes
#: (format.KIND_INPUTS) and has no row here is checked by its route alone.
INPUT_RANGES: dict[str, dict[str, Row]] = {
    **_sampled("pld", rate=True),
    **_sampled("replace", eps_cap=REPLACE_MAX_EPS, rate=True),
    **{k: {key: v for key, v in rows.items() if key != "noise_multiplier"}
       for k, rows in _sampled("events", eps_cap=EVENT_MAX_EPS, claim_cap=True).items()},
    **_sampled("shuffle", sizes=True, epochs=MAX_SHUFFLE_EPOCHS),
    **_sampled("bins", eps_cap=BINS_MAX_EPS, sizes=True, epochs=MAX_BINS_EPOCHS),
    # compose --delta D in (0, 1] (eps(delta)); --eps E any real (delta(eps))
    # (accuracy_digits: an accuracy field verify does not read, the gap is re-proved; the producer's --digits)
    # (counts and digits: the CLI option's declared range, vocabulary.py; a claim record of the same
    # kind is held to them when its file is read, quantities.check_values)
    "composition.eps": {"delta": (HALF_OPEN_UNIT, "compose --delta"), "accuracy_digits": _ACCURACY,
                        "k": _count(MAX_COMPOSED_MECHANISMS, "compose --steps"), **_digits("compose")},
    "composition.delta": {"eps": (REAL, "compose --eps"), "accuracy_digits": _ACCURACY,
                          "k": _count(MAX_COMPOSED_MECHANISMS, "compose --steps"), **_digits("compose")},
    "gdp.delta": {"mu": (POSITIVE, "gdp delta --mu"), "eps": (REAL, "gdp delta --eps"), **_digits("gdp delta")},
    "gdp.mu": {"delta": (OPEN_UNIT, "gdp mu --delta"), "eps": (REAL, "gdp mu --eps"), **_digits("gdp mu")},
    "dp.implies": {"eps0": (NONNEGATIVE, "dp implies --from E0,D0"), "delta0": (CLOSED_UNIT, "dp implies --from E0,D0"),
                   "eps": (REAL, "dp implies --to E,D"), "delta": (CLOSED_UNIT, "dp implies --to E,D"),
                   **_digits("dp implies")},
    "dp.rr64": {"eps0": (EPS0, "check rr64 --eps0"), "delta0": (CLOSED_UNIT, "check rr64 --delta0"),
                "eps": (REAL, "check rr64 --eps"), **_digits("check rr64")},
    "dp.profile": _digits("dp profile"),
    "rdp.epsilon": {"delta": (OPEN_UNIT, "rdp epsilon --delta"),
                    "compositions": _count(MAX_RDP_COMPOSITIONS, "rdp epsilon --steps"),
                    "digits": _count(MAX_RDP_EPSILON_DIGITS, "rdp epsilon --digits")},
    "rdp.to_dp_eps": {"alpha": (Range(1), "rdp to-dp --alpha"), "rdp": (NONNEGATIVE, "rdp to-dp --rdp"),
                      "delta": (OPEN_UNIT, "rdp to-dp --delta"), **_digits("rdp to-dp")},
    "rdp.to_dp_delta": {"alpha": (Range(1), "rdp to-dp --alpha"), "rdp": (NONNEGATIVE, "rdp to-dp --rdp"),
                        "eps": (NONNEGATIVE, "rdp to-dp --eps"), **_digits("rdp to-dp")},
    "rdp.divergence": {"alpha": (Range(0, False, MAX_RDP_ORDER, True), "rdp divergence --alpha"),
                       "compositions": _count(MAX_RDP_COMPOSITIONS, "rdp divergence --steps"), **_digits("rdp divergence")},
    # an oracle run has at least one row: --input refuses an empty list (schemas/oracle_rows minItems),
    # a --battery has at least one configuration and one accountant
    "oracle.rows": {"tolerance": (NONNEGATIVE, "oracle --tolerance"), "digits": (_PLD_DIGITS, "oracle --digits"),
                    "row_count": (Range(1, True, integer=True), "oracle --input FILE / --battery: at least one row")},
    "gdp.certify": {"eps_h": (EPS_H, "gdp certify --eps-h"), "margin": (MARGIN, "gdp certify --margin")},
    "gdp.optimal_mu": {"eps_h": (EPS_H, "gdp certify --eps-h"), "margin": (MARGIN, "gdp certify --margin"),
                       # a hint for the re-check: a point of the head [0, eps_h]
                       "argmax": (Range(0, True, "eps_h", True), "gdp certify (the head's argmax)")},
    # kinds only claim records produce (reproduce; theorems.quantities): digits in the quantities' range,
    # abc_gain keeping two guard digits inside it
    **{k: {"digits": _count(MAX_ACCURACY_DIGITS, "reproduce: the claim's inputs.digits")}
       for k in ("gdp.mills_scaled", "gdp.refinement_point", "gdp.thm51", "dp.sigma_refinement")},
    "rdp.abc_gain": {"digits": (Range(1, True, MAX_ACCURACY_DIGITS - 2, True, integer=True),
                                "reproduce: the claim's inputs.digits, two guard digits inside the quantities' 300"),
                     "compositions": _count(MAX_RDP_COMPOSITIONS, "reproduce: the claim's inputs.compositions")},
    # theorems.identities.residual (the Python API): each source states its identity on this domain
    # only (r = e^eps > 0, lam in (0, 1], beta in [0, 1], integer Renyi orders q >= 2, up to a stated cap)
    "finite.identity": {"r": (POSITIVE, "identities.residual r = e^eps > 0"),
                        "lam": (HALF_OPEN_UNIT, "identities.residual lt-thm5.1 lam"),
                        "beta": (CLOSED_UNIT, "identities.residual lt-eq12 beta"),
                        "q": (Range(2, True, MAX_IDENTITY_ORDER, True, integer=True), "identities.residual lt-eq21 q")},
    # dpverify 0.1.0's clip_and_rectify_scale(y_minus, y_plus, eps_h) for a mu-GDP mechanism (mu > 0)
    "gdp.clip_rectify": {"mu": (POSITIVE, "mu-GDP (mu > 0)"), "eps_h": (POSITIVE, "clip_and_rectify_scale eps_h")},
}

#: kind -> input key -> (the names its producer reads, the option that takes them): a name outside
#: is refused as a number outside its range is (exit 2, naming the path and the allowed names)
INPUT_NAMES: dict[str, dict[str, tuple[tuple[str, ...], str]]] = {
    **{k: {"mechanism": (PROFILE_MECHANISM_NAMES, f"{cmd} --mechanism")}
       for k, cmd in (("dp.profile", "dp profile"), ("gdp.certify", "gdp certify"), ("gdp.optimal_mu", "gdp certify"),
                      ("gdp.tail_limit", "gdp certify"))},
    "rdp.divergence": {"mechanism": (RDP_MECHANISM_NAMES, "rdp divergence --mechanism")},
    "rdp.epsilon": {"mechanism": (RDP_MECHANISM_NAMES, "rdp epsilon --mechanism"),
                    "conversion": (CONVERSIONS, "rdp epsilon --conversion")},
    "rdp.to_dp_eps": {"conversion": (CONVERSIONS, "rdp to-dp --conversion")},
    "rdp.to_dp_delta": {"conversion": (CONVERSIONS, "rdp to-dp --conversion")},
}

#: kind -> the producer's rules on two inputs together, each with the options that enforce it
INPUT_PAIR_RANGES: dict[str, tuple[tuple[TwoFieldRule, str], ...]] = {
    # a printed delta_mu(eps) (limits.MAX_GDP_EPS_OVER_MU)
    "gdp.delta": ((TwoFieldRule("eps", "mu", Range(None, False, MAX_GDP_EPS_OVER_MU, True), "eps / mu"),
                   "gdp delta --eps, --mu"),),
    # a delta at eps that verify's MPFR route can enclose (limits.MAX_CONVERSION_ALPHA_EPS)
    "rdp.to_dp_delta": ((TwoFieldRule("eps", "alpha", Range(None, False, MAX_CONVERSION_ALPHA_EPS, True), "alpha * eps",
                                      op="*"), "rdp to-dp --eps, --alpha"),),
}

#: kind -> input key -> the result field that records the same number: an input the route does
#: not read (the re-check reads the result's) must say what the result says, or the certificate
#: states two different queries
RESULT_BINDINGS: dict[str, dict[str, str]] = {
    "gdp.certify": {"eps_h": "head.eps_h", "margin": "head.margin"},
}

#: spellings of an infinite number (the schema's number pattern admits "inf" and "-inf")
_INFINITE = ("inf", "-inf", "+inf", "infinity", "-infinity", "+infinity")


def _infinite(v: Any) -> bool:
    # a short text only: inputs.input_text (an oracle file, up to 16 MB) is not lowered whole
    return isinstance(v, str) and len(v) <= 12 and v.strip().lower() in _INFINITE


def exact_number(v: Any) -> "Optional[Fraction]":
    """An input number (a JSON integer, or a text in the producer's one grammar,
    :func:`dpverify.numtext.read_exact_text`) as a Fraction, or None when it is not one (the
    route refuses it by its own reader; texts over MAX_NUMBER_CHARS characters or with decimal
    exponents beyond +-MAX_DECIMAL_EXPONENT are not expanded: ``recheck.limits`` refuses them)."""
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return Fraction(v)
    if not isinstance(v, str):
        return None
    try:
        return read_exact_text(v, "input")
    except InvalidParameter:
        return None


def _refuse(where: str, v: Any, rng: Range, says: str) -> MalformedCertificate:
    shown = str(v)[:40] if isinstance(v, int) else repr(str(v)[:40])  # a count as JSON writes it
    return MalformedCertificate(f"{where}={shown} is outside the producer's range: allowed {rng.text()} "
                                f"({says})")


def _check(where: str, v: Any, rng: Range, says: str, ends: "Mapping[str, Fraction]" = {}) -> None:
    if rng.integer and isinstance(v, float):
        # a count in an event tree (no schema types it) written as 100.0: refused here, naming its path,
        # not by the route's reader with the tree's root only (issue 22)
        raise MalformedCertificate(f"{where}={v!r} is not an integer: {INTEGER_REQUIRED} ({says})")
    if _infinite(v):
        raise _refuse(where, v, rng, says + "; the producer reads finite numbers only")
    if isinstance(v, str):
        # a text the producer's grammar cannot read is refused here, not skipped: a route that
        # read it another way escaped the row (adv44 H1: alpha "1/ 2" confirmed a false rdp.to_dp_eps)
        try:
            read_exact_text(v, where)
        except InvalidParameter as e:
            raise MalformedCertificate(f"{e} ({says})") from None
    x = exact_number(v)
    if x is not None and not rng.contains(x, ends):
        if isinstance(rng.lo, str) or isinstance(rng.hi, str):
            known = ", ".join(f"{k}={ends[k]}" for k in (rng.lo, rng.hi) if isinstance(k, str) and k in ends)
            says = f"{says}; {known}" if known else says
        raise _refuse(where, v, rng, says)


def _walk_tree(node: Any, path: str, tables: Mapping[str, Mapping[str, str]], depth: int = 0) -> None:
    """Every numeric field of an event tree (``inputs.event``) within its kind's range; the shape
    (types, keys) is the route's to check."""
    if depth > 64 or not isinstance(node, dict):
        return
    t = node.get("type")
    fields = tables.get(t) if isinstance(t, str) else None  # another type is the route's to refuse
    if not isinstance(fields, dict):
        return
    for k, kind in fields.items():
        v = node.get(k)
        if kind == "event":
            _walk_tree(v, f"{path}.{k}", tables, depth + 1)
        elif kind == "events" and isinstance(v, list):
            for i, e in enumerate(v):
                _walk_tree(e, f"{path}.{k}[{i}]", tables, depth + 1)
        elif kind.startswith("numlist") and isinstance(v, list):
            item = "nonneg" if kind.endswith("nonneg") else "prob"
            for i, x in enumerate(v):
                _check(f"{path}.{k}[{i}]", x, FIELD_RANGES[item], f"event type {node.get('type')!r}")
        elif kind in FIELD_RANGES and k in node:
            _check(f"{path}.{k}", v, FIELD_RANGES[kind], f"event type {node.get('type')!r}")
    if t in EVENT_RATIO_RANGES and tables is EVENT_FIELDS:
        EVENT_RATIO_RANGES[t].check(node, path, f"event type {t!r}")


def check_input_ranges(quantity: str, inputs: Mapping[str, Any], result: Mapping[str, Any]) -> None:
    """Refuse (MalformedCertificate, exit 2) a certificate of kind ``quantity`` whose inputs lie
    outside the producer's ranges (:data:`INPUT_RANGES`, :data:`FIELD_RANGES` for event trees and
    legacy step lists), are infinite, or disagree with the result field they restate
    (:data:`RESULT_BINDINGS`). Shape and type errors are left to the routes."""
    for key, v in inputs.items():
        if _infinite(v):
            raise MalformedCertificate(f"inputs.{key}={v!r} is not a finite number: the producer reads exact "
                                       "finite numbers only")
    for key, (names, says) in INPUT_NAMES.get(quantity, {}).items():
        v = inputs.get(key)
        if key in inputs and v not in names:
            raise MalformedCertificate(f"inputs.{key}={str(v)[:40]!r} is not a name the producer reads"
                                       f"{did_you_mean(v, names)} "
                                       f"(allowed: {', '.join(names)}; {says})")
    rows = INPUT_RANGES.get(quantity, {})
    ends = {k: x for k in inputs if (x := exact_number(inputs[k])) is not None}
    for key, (rng, says) in rows.items():
        if key in inputs:
            _check(f"inputs.{key}", inputs[key], rng, says, ends)
    for rule, says in INPUT_PAIR_RANGES.get(quantity, ()):
        rule.check(inputs, "inputs", says)
    if isinstance(inputs.get("event"), dict):
        _walk_tree(inputs["event"], "inputs.event", EVENT_FIELDS)
    if isinstance(inputs.get("events"), list):
        for i, item in enumerate(inputs["events"]):
            if isinstance(item, dict):
                mech = item.get("mechanism", "subsampled-gaussian")
                _walk_tree({**item, "type": mech}, f"inputs.events[{i}]", LEGACY_EVENT_FIELDS)
    for key, path in RESULT_BINDINGS.get(quantity, {}).items():
        obj: Any = result
        for part in path.split("."):
            obj = obj.get(part) if isinstance(obj, dict) else None
        if key in inputs and obj is not None and (exact_number(inputs[key]) is None
                                                  or exact_number(inputs[key]) != exact_number(obj)):
            raise MalformedCertificate(f"inputs.{key}={str(inputs[key])[:40]!r} is not result.{path}="
                                       f"{str(obj)[:40]!r}: the route reads the result's, so the two must be "
                                       "the same number (one query)")
