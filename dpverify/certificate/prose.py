"""The words of a certificate: one template per kind for ``claim.statement``, the
``claim.source`` each kind cites and the ``result.theorems`` lists of the sampled kinds, shared
by the writer (:func:`statement`, :func:`source`, :func:`theorems` fill them in) and by
``verify`` (:func:`check_statement`, :func:`check_theorems` rebuild them from the kind, the
inputs and the result and refuse any other text, exit 1).

Why pinned. ``verify`` re-proves the kind, the inputs and the numbers; a statement is what a
reader quotes. Before this module a statement rewritten to "(0.01, 1e-9)-DP" on a certificate
whose re-proved epsilon is 0.798 was accepted (adv34 F2). Now a certificate states exactly the
template of its kind, filled from its own inputs, so every sentence it carries says what the
second route re-proved.

Three kinds of certificate, three rules:

* a product certificate (no ``claim.id``): the statement must be the kind's template filled
  from the inputs (and, for ``gdp.certify`` and ``calibrate.bracket``, from the result fields
  the statement names: ``result.status``, the recorded ends). A number in a template
  (``epsilon(delta=1e-5)``) matches any decimal or fraction of the same exact value, because
  writers of the released versions printed the number as the user typed it. Certificates an
  earlier release wrote (format 1, and format 2 before this module) used older words: each
  format keeps its own list (:data:`LEGACY`), accepted only in that format; a format-1
  certificate of a kind its list words states that wording only (:data:`FROZEN_FORMATS`);
* a registry claim (``claim.id`` of a record shipped in ``dpverify/theorems/claims``): the
  statement, source, domain and note must be the record's, word for word (format 1 also
  accepts the record's source of that release, :data:`LEGACY_SOURCES`);
* a claim of somebody else's claim file (an id the shipped registry does not hold): its words
  are that file's, which nothing here can bind; the claim is ``claim.relation`` on the
  quantity, which ``verify`` decides. Its statement is named on the ``verify`` line as not part
  of what is confirmed.

``result.reason``, ``result.note`` and the other free text are the writer's comments, bound or
named by :mod:`.comments` (docs/reference/certificates.md, "What is not yet re-proved").

Standard library only (``dpverify.recheck`` imports it; no arb).
"""

from __future__ import annotations

import json
import re
import string
from fractions import Fraction
from pathlib import Path
from typing import Any, Mapping, Optional

from ..errors import CertificateRejected, MalformedCertificate

__all__ = ["statement", "statements", "check_statement", "registry_record", "TEMPLATES", "LEGACY",
           "UNBOUND", "theorems", "check_theorems", "bins_theorems", "shuffle_theorems", "REPLACE_THEOREMS",
           "THEOREM_KINDS", "source", "ENCLOSES", "CERTIFY_ENCLOSES", "LEGACY_ENCLOSES", "encloses_template",
           "check_quantity"]

#: the prose fields of a claim-file record that a registry certificate repeats word for word
CLAIM_PROSE = ("statement", "source", "domain", "note")
#: the fields that define a registry claim, which its certificate repeats exactly
CLAIM_DEFINITION = ("quantity", "printed", "relation")
#: the certificate's line names this for a claim of a claim file the package does not ship
UNBOUND = ("claim.statement, claim.source, claim.domain and claim.note (the words of a claim file this release "
           "does not ship; what is confirmed is claim.relation on the re-proved numbers)")

_PAIRS = "the composed dominating pairs of the event tree"
_BINS = "DP-SGD with balls-in-bins batches"
_COMPOSE = "of the composition of the (eps_i, delta_i)-DP guarantees (mechs, repeated k times) lies in [lo, hi]"
_REPLACE_EPS = ("epsilon(delta) of {what} under replace-one lies in [lo, hi]: lo is attained by a zero-contribution "
                "replacement, hi = 2 eps* with (1 + e^eps*) delta_add-remove(eps*) <= delta (group privacy); "
                "result.lower is the remove direction's epsilon, result.upper delta_add-remove(eps*)")
_RR64 = ("the supremum over all events and both directions of P(E|s) - e^eps P(E|1-s) for GDPT's 4-output "
         "mechanism lies in [lo, hi]; {field} is the verdict on delta0 + (1-delta0)(e^eps0 - e^eps)_+/(1+e^eps0)")
_IMPLIES = "the smallest delta with (eps0, delta0)-DP => (eps, delta)-DP lies in [lo, hi]; {field} says whether the " \
           "given delta reaches it"

#: kind -> the statement the writer of this release writes; ``{name}`` fields come from
#: :func:`_fields` (the certificate's inputs and result)
TEMPLATES: dict[str, str] = {
    "pld.epsilon": "epsilon(delta) of the composed (Poisson-subsampled) mechanisms under the {rel} relation lies "
                   "in [lo, hi]",
    "pld.delta": "delta(eps) of the composed (Poisson-subsampled) mechanisms under the {rel} relation lies in [lo, hi]",
    "pld.claim": "the composed mechanism is (claimed_eps, delta)-DP under {rel}: certified delta(claimed_eps) <= delta",
    "events.epsilon": "epsilon(delta) of " + _PAIRS + " under the {rel} relation lies in [lo, hi] (an upper bound "
                      "for the mechanism; equal to it where the pairs are tight)",
    "events.delta": "delta(eps) of " + _PAIRS + " under the {rel} relation lies in [lo, hi] (an upper bound for the "
                    "mechanism; equal to it where the pairs are tight)",
    "events.claim": "the event tree is (claimed_eps, delta)-DP under {rel}: certified delta(claimed_eps) <= delta",
    "bins.epsilon": "epsilon(delta={delta}) of {span} of " + _BINS + " ({rel}) lies in [lo, hi]",
    "bins.delta": "delta(eps={eps}) of {span} of " + _BINS + " ({rel}) lies in [lo, hi]",
    "bins.claim": _BINS + ", {span}, is (claimed_eps, delta)-DP under {rel}: certified epsilon(delta) <= claimed_eps",
    "shuffle.epsilon": "epsilon(delta={delta}) of DP-SGD with {sampling} batches ({rel}) lies in [lo, hi]: lo is "
                       "attained by a concrete dataset pair, hi bounds every pair",
    "shuffle.delta": "delta(eps={eps}) of DP-SGD with {sampling} batches ({rel}) lies in [lo, hi]: lo is attained by "
                     "a concrete dataset pair, hi bounds every pair",
    "shuffle.claim": "DP-SGD with {sampling} batches is (claimed_eps, delta)-DP under {rel}: certified epsilon(delta) "
                     "<= claimed_eps",
    "replace.epsilon": _REPLACE_EPS,
    "replace.delta": "delta(eps) of {what} under replace-one lies in [lo, hi]: lo is the remove direction's "
                     "delta(eps), attained by a zero-contribution replacement; hi >= (1 + e^(eps/2)) "
                     "delta_add-remove(eps/2) (group privacy), or 1; result.lower and result.upper are those two "
                     "curves' enclosures",
    "replace.claim": "{what} is (claimed_eps, delta)-DP under replace-one: certified epsilon(delta) <= claimed_eps",
    "gdp.delta": "delta_mu(eps) lies in [lo, hi]",
    "gdp.mu": "the unique mu > 0 with delta_mu(eps) = delta lies in [lo, hi]",
    "gdp.eps": "eps with delta_mu(eps) = delta",
    "gdp.certify": "{certify}",
    "dp.profile": "delta(eps) of mechanism {mechanism} lies in [lo, hi]",
    "dp.implies": _IMPLIES.replace("{field}", "result.verdict"),
    "dp.rr64": _RR64.replace("{field}", "result.verdict"),
    "composition.delta": "the composed delta(eps={eps}) " + _COMPOSE,
    "composition.eps": "the smallest eps >= 0 with composed delta(eps) <= {delta} " + _COMPOSE,
    "rdp.divergence": "D_alpha of mechanism {mechanism}, composed {k} times, lies in [lo, hi]",
    "rdp.epsilon": "inf over real alpha > 1 of the {conversion} conversion of the RDP curve of {mechanism} composed "
                   "{k} times, at delta, lies in [lo, hi]",
    "rdp.to_dp_eps": "the {conversion} conversion of ({alpha}, {rdp})-RDP gives eps in [lo, hi]",
    "rdp.to_dp_delta": "the {conversion} conversion of ({alpha}, {rdp})-RDP gives delta in [lo, hi]",
    "oracle.rows": "no reported epsilon is below the certified lower bound of epsilon(delta) (verdict fails if one "
                   "is: that accountant's guarantee is false)",
    "calibrate.bracket": "{calibrate}",
    "finite.identity": "{identity} holds exactly for these rational pmfs (residual 0)",
    "gdp.thm4.5": "GDPT Thm 4.5 at eps={eps}, delta={delta}",
    "gdp.clip_rectify": "b = (y+ - y-)/eps_h",
}

#: format -> kind -> further statements that format's writers wrote (accepted in that format only)
LEGACY: dict[str, dict[str, tuple[str, ...]]] = {
    "dpverify-certificate/1": {
        "dp.implies": (_IMPLIES.replace("{field}", "result.implies"),),
        "dp.rr64": (_RR64.replace("{field}", "result.equals_gdpt_formula"),),
        "gdp.thm4.5": ("slope of mu_GDP in eps in [0, sqrt(2 pi)/2]",),
    },
    "dpverify-certificate/2": {
        "replace.epsilon": (_REPLACE_EPS.replace("zero-contribution", "zero-gradient"),),
        # the library's verdict_certificate before this release took the caller's words; the test
        # suite's GDPT Thm 4.5 property wrote these (tests/recheck/data/gdp-thm45-tiny-delta.json)
        "gdp.thm4.5": ("0 <= d mu_GDP(eps, delta)/d eps <= sqrt(2 pi)/2 at the given point",),
        "bins.claim": ("{span} of " + _BINS + " is (claimed_eps, delta)-DP under {rel}: certified epsilon(delta) "
                       "<= claimed_eps",),
    },
}

#: format -> claim id -> a source the registry record had when that format was written
LEGACY_SOURCES: dict[str, dict[str, tuple[str, ...]]] = {
    "dpverify-certificate/1": dict.fromkeys(("prv-accountant-17-bracket", "prv-accountant-17-estimate"),
                                            ("prv_accountant issue #17 (compute-dp-epsilon output)",)),
}

_CERTIFY = {
    "GDP": "the mechanism is mu-GDP exactly for mu >= mu*, and the optimal mu* lies in [lo, hi]",
    "not GDP": "the mechanism is not mu-GDP for any finite mu (enclosure [inf, inf])",
    "head only": "sup over [0, eps_h] of G_f lies in [lo, hi] ((eps_h, mu)-head GDP, GDPT Def 3.1); the tail is not "
                 "certified",
}

#: calibration template -> (head after "holds at {parameter} = result.ends.safe.value",
#: the clause of each further end, in order, a tail after them)
_CALIBRATE: dict[str, tuple[str, tuple[tuple[str, str], ...], str]] = {
    "dpsgd": ("", (("unsafe", " and fails at result.ends.unsafe.value"),), ""),
    "dpsgd-wor": (" (AFA Cor 32 pair)", (("unsafe", " and fails at result.ends.unsafe.value (realised pair)"),
                                         ("pair_limit", "; the Cor 32 pair exceeds the target at "
                                                        "result.ends.pair_limit.value")), ""),
    "dpsgd-shuffle": (" (no-amplification Gaussian)",
                      (("unsafe", " and fails at result.ends.unsafe.value (a concrete dataset pair, max of batch "
                                  "sums)"),
                       ("pair_limit", "; the Gaussian upper bound exceeds the target at result.ends.pair_limit.value")),
                      ""),
    "dpsgd-bins": ("", (("unsafe", " and fails at result.ends.unsafe.value"),),
                   " (the balls-in-bins pair of Chua et al. AISTATS 2025, realised by a concrete dataset pair, epochs "
                   "composed by AFA Thm 10)"),
}


class Num(str):
    """A number field: the text written, matched by exact value (``1e-5`` = ``0.00001``)."""


#: ASCII digits only (Python's \d also matches U+0660 and other scripts' digits, which Fraction reads:
#: "1\u06605" was accepted as 105, adv36 F1), and as long as the writer's numbers (1000 characters; a
#: fraction's denominator as long as an exact input's, 1/10^3000 for a delta of 1e-3000); an exponent
#: may have as many digits as the CLI reads (1e000000: the value, not the text, is capped)
_NUMBER = re.compile(r"[+-]?([0-9]{1,1000}(\.[0-9]{0,1000})?|\.[0-9]{1,1000})([eE][+-]?[0-9]{1,1000})?(/[0-9]{1,3100})?")


def _value(text: str) -> Optional[Fraction]:
    """The exact value of a short decimal or fraction; None for anything else (exponents are
    capped, so no text makes this slow). Surrounding whitespace is dropped, as the CLI's reader
    (ball.parse_exact) drops it: writers record the number as the user typed it (adv40 Q1)."""
    if not isinstance(text, str):
        return None
    text = text.strip()
    if not _NUMBER.fullmatch(text):
        return None
    num, _, den = text.partition("/")
    mant, _, exp = num.lower().partition("e")
    if exp and abs(int(exp)) > 10000:
        return None
    try:
        v = Fraction(mant) * Fraction(10) ** int(exp or 0)
        return v / int(den) if den else v
    except (ValueError, ZeroDivisionError):
        return None


def _text(inputs: Mapping[str, Any], key: str) -> Optional[str]:
    v = inputs.get(key)
    return str(v) if isinstance(v, (str, int)) and not isinstance(v, bool) else None


def _calibrate(inputs: Mapping[str, Any], result: Mapping[str, Any]) -> Optional[str]:
    shape = _CALIBRATE.get(str(inputs.get("template")))
    ends = result.get("ends")
    eps, delta, param = _text(inputs, "target_eps"), _text(inputs, "delta"), _text(inputs, "parameter")
    if shape is None or not isinstance(ends, Mapping) or None in (eps, delta, param):
        return None
    head, clauses, tail = shape
    return (f"({eps}, {delta})-DP holds at {param} = result.ends.safe.value{head}"
            + "".join(text for name, text in clauses if name in ends) + tail)


def _fields(inputs: Mapping[str, Any], result: Mapping[str, Any]) -> dict[str, Any]:
    """The values a template may name, read from the certificate itself."""
    out: dict[str, Any] = {k: _text(inputs, src) for k, src in (
        ("rel", "neighboring"), ("mechanism", "mechanism"), ("k", "compositions"), ("conversion", "conversion"),
        ("alpha", "alpha"), ("rdp", "rdp"), ("sampling", "sampling"), ("identity", "identity"))}
    for key in ("delta", "eps"):
        t = _text(inputs, key)
        out[key] = Num(t) if t is not None else None
    epochs = _text(inputs, "epochs")
    out["span"] = None if epochs is None else (
        "one epoch" if _value(epochs) == 1 else f"{epochs} independently re-allocated epochs")
    out["what"] = "the event tree inputs.event" if "event" in inputs else "Poisson-sampled DP-SGD"
    out["certify"] = _CERTIFY.get(str(result.get("status")))
    out["calibrate"] = _calibrate(inputs, result)
    return out


#: a template field -> where :func:`_fields` reads it (for the message on a missing one)
_FIELD_SOURCES = {"rel": "inputs.neighboring", "k": "inputs.compositions", "span": "inputs.epochs",
                  "what": "inputs.event", "certify": "result.status (GDP, not GDP or head only)",
                  "calibrate": "inputs.template, inputs.target_eps, inputs.delta, inputs.parameter or result.ends"}


def _fill(template: str, fields: Mapping[str, Any]) -> Optional[str]:
    parts = []
    for literal, name, _, _ in string.Formatter().parse(template):
        parts.append(literal)
        if name is not None:
            v = fields.get(name)
            if v is None:
                return None
            parts.append(str(v))
    return "".join(parts)


def _matches(template: str, fields: Mapping[str, Any], text: str) -> bool:
    """``text`` is ``template`` filled from ``fields``, a number field by exact value."""
    pattern, numbers = [], []
    for literal, name, _, _ in string.Formatter().parse(template):
        pattern.append(re.escape(literal))
        if name is None:
            continue
        v = fields.get(name)
        if v is None:
            return False
        if isinstance(v, Num):
            pattern.append(r"(\s{0,100}[^\s,()]{1,2100}\s{0,100})")
            numbers.append(v)
        else:
            pattern.append(re.escape(str(v)))
    m = re.fullmatch("".join(pattern), text)
    if m is None:
        return False
    for got, want in zip(m.groups(), numbers):
        a, b = _value(got), _value(want)
        if a is None or a != b:
            return False
    return True


#: inputs of a registry record that guide or size the work and define nothing (a hint and the
#: accuracy): a certificate may carry other values, which the second route treats as it always does
_INPUT_HINTS = frozenset({"argmax", "digits"})


def _same_inputs(inputs: Mapping[str, Any], record: Any) -> bool:
    """The certificate's inputs are the record's, up to :data:`_INPUT_HINTS` (the writer types
    counts as integers: ``"1000"`` in the record is ``1000`` in the certificate)."""
    if not isinstance(record, Mapping):
        return False
    inputs = {k: v for k, v in inputs.items() if k not in _INPUT_HINTS}
    record = {k: v for k, v in record.items() if k not in _INPUT_HINTS}
    if set(inputs) != set(record):
        return False

    def norm(v: Any) -> Any:
        return str(v) if isinstance(v, (str, int)) and not isinstance(v, bool) else v

    return all(norm(inputs[k]) == norm(record[k]) for k in record)


def statement(kind: str, inputs: Mapping[str, Any], result: Mapping[str, Any]) -> str:
    """The statement the writer of this release puts in a ``kind`` certificate with these
    inputs and result (KeyError for a kind without a product template, ValueError when the
    inputs lack a field the template names: both bugs of the writer)."""
    text = _fill(TEMPLATES[kind], _fields(inputs, result))
    if text is None:
        raise ValueError(f"{kind}: the inputs lack a field of the statement template {TEMPLATES[kind]!r}")
    return text


#: formats no writer of this release emits: their certificates state what their own writers wrote,
#: so where :data:`LEGACY` lists a format's wording of a kind, this release's is not one of them
#: (a format-1 dp.implies in this release's words names result.verdict, which format 1 has not: adv36 L1)
FROZEN_FORMATS = frozenset({"dpverify-certificate/1"})


def statements(kind: str, fmt: str) -> tuple[str, ...]:
    """Every template a ``kind`` certificate of format ``fmt`` may state (this release's first,
    unless ``fmt`` is frozen and words the kind otherwise)."""
    legacy = LEGACY.get(fmt, {}).get(kind, ())
    if fmt in FROZEN_FORMATS and legacy:
        return legacy
    current = (TEMPLATES[kind],) if kind in TEMPLATES else ()
    return current + legacy


# --------------------------------------------------------------------------- claim.source

#: what the PLD accountant's enclosures rest on (dominating pairs, composition, discretisation)
PLD_SOURCE = "AFA Def 7, Thm 10, Thm 11; Doroshenko et al. 2022 (connect-the-dots)"
EVENTS_SOURCE = ("AFA Def 7, Thm 10, Thm 11, Prop 30, Cor 32; LT Thm 4.5; Doroshenko et al. 2022 "
                 "(connect-the-dots); per-pair theorems in result.theorems")
#: one balls-in-bins epoch, and E independently re-allocated epochs
BINS_SOURCE = ("the dominating pair of one balls-and-bins epoch (Chua et al., AISTATS 2025): P = (1/T) sum_t "
               "N(e_t, sigma^2 I), Q = N(0, sigma^2 I); under Q, L = dP/dQ is the mean of T i.i.d. log-normals, "
               "its law enclosed on a linear grid (outward cell rounding, masses and T-fold integer products rounded "
               "up or down to units 2^-128), delta_remove = E[L] - c + E[(c - L)_+] with E[L] = 1, "
               "delta_add = E[(1 - cL)_+]")
BINS_EPOCHS_SOURCE = (
    "adaptive composition (AFA Thm 10) of E balls-and-bins epochs, each re-allocated independently and "
    "dominated by the pair of Chua et al. (AISTATS 2025); the per-epoch privacy-loss law (remove: under P, "
    "add: under Q) enclosed from the linear-grid law of L (outward cell rounding, masses and T-fold integer "
    "products rounded up or down to units 2^-128), rounded to the loss grid 2^-m Z, composed E times by "
    "exact integer products rounded the same way; delta = E[(1 - e^{eps - X})_+] (AFA Lemma 37)")
SHUFFLE_SOURCE = ("upper end: no amplification (each record in exactly one batch per epoch; AFA Thm 10 "
                  "adaptive composition of the Gaussian steps, joint convexity of the hockey-stick divergence "
                  "over the permutations); lower end: a concrete dataset pair (every other record's gradient -1, "
                  "as in Chua et al.'s released ShuffleAccountant) and the max of each epoch's batch "
                  "sums (Chua et al., ICML 2024, Sec 4), binned, composed over independent epochs (dynamic "
                  "shuffling) or summed over epochs (persistent shuffling)")
REPLACE_SOURCE = ("group privacy (Dwork and Roth 2014, Thm 2.2) over the add/remove curves of AFA Thm 11 (1) + "
                  "Thm 10 (upper end); the remove direction realised by a zero-gradient replacement (lower end, AFA "
                  "Thm 11 Remark: tight)")
#: the RDP -> DP conversions, by ``inputs.conversion``
RDP_SOURCES = {
    "classic": "ABC Thm 1 / eq. (4); Mironov 2017 Prop 3",
    "balle": "Balle et al. 2020 Thm 21; Canonne, Kamath, Steinke 2020 Prop 12",
    "optimal": "ABC Thm 3 (eq. 16)",
}
#: the exact identities of ``finite.identity``, by ``inputs.identity``
IDENTITY_SOURCES = {
    "lt-eq7": "LT eq. (7)", "afa-lemma46": "AFA Lemma 46", "afa-lemma19": "AFA Lemma 19", "lt-eq19": "LT eq. (19)",
    "lt-eq21": "LT eqs. (9), (21)", "lt-eq12": "LT eq. (12)", "lt-thm5.1": "LT Thm 5.1",
}
_CALIBRATE_PLD = "AFA Def 7, Thm 10, Thm 11; data processing for the hockey-stick divergence"
#: calibration template -> the papers its ends rest on
CALIBRATE_SOURCES = {
    "dpsgd": _CALIBRATE_PLD, "dpsgd-wor": _CALIBRATE_PLD,
    "dpsgd-shuffle": "no amplification (AFA Thm 10, joint convexity); Chua et al. ICML 2024 Sec 4; data processing",
    "dpsgd-bins": "Chua et al. AISTATS 2025 (balls-in-bins pair); AFA Thm 10; data processing",
}
_FIXED_SOURCES = {
    **dict.fromkeys(("pld.epsilon", "pld.delta", "pld.claim"), PLD_SOURCE),
    **dict.fromkeys(("events.epsilon", "events.delta", "events.claim"), EVENTS_SOURCE),
    **dict.fromkeys(("shuffle.epsilon", "shuffle.delta", "shuffle.claim"), SHUFFLE_SOURCE),
    **dict.fromkeys(("replace.epsilon", "replace.delta", "replace.claim"), REPLACE_SOURCE),
    **dict.fromkeys(("composition.delta", "composition.eps"),
                    "LT Thm 4.6 (tight adaptive composition), Cor 4.7, Thm 4.5"),
    "gdp.delta": "GDPT eq. (2), Thm 3.2",
    "gdp.mu": "GDPT Def 4.1, App D Alg 1, App A.5",
    "gdp.eps": "GDPT eq. (2)",
    "gdp.thm4.5": "GDPT Thm 4.5",
    "gdp.clip_rectify": "GDPT Thm 4.7",
    "gdp.certify": "GDPT Def 4.1, Cor 4.1, Thm 4.5, Thm 4.6, Thm 4.4, App A Lemma 3",
    "dp.profile": "GDPT Sec 2 (privacy profile); mechanism formula in its module docstring",
    "dp.implies": "GDPT Thm 3.1, Cor 3.1, Cor 3.2",
    "dp.rr64": "GDPT Thm 2.1/3.1 necessity proof (appendix B.1, '64 combinations')",
    "rdp.divergence": "ABC Sec II (Renyi divergence); formulas in dpverify/rdp module docstrings",
    "oracle.rows": "AFA Thm 10, 11 (dominating pairs) via dpverify's PLD accountant",
}


#: sources earlier format-2 writers cited (the shuffled lower end before it named its dataset pair)
_EARLIER_SOURCES = dict.fromkeys(("shuffle.epsilon", "shuffle.delta", "shuffle.claim"), (
    SHUFFLE_SOURCE.replace(" (every other record's gradient -1, as in Chua et al.'s released ShuffleAccountant)",
                           ""),))


def source(kind: str, inputs: Mapping[str, Any]) -> Optional[str]:
    """The ``claim.source`` a product certificate of ``kind`` with these inputs cites (the
    papers its route rests on), or None (a kind written only as a registry claim)."""
    if kind in _FIXED_SOURCES:
        return _FIXED_SOURCES[kind]
    if kind.startswith("bins."):
        return BINS_SOURCE if _count(inputs, "epochs") == 1 else BINS_EPOCHS_SOURCE
    if kind in ("rdp.epsilon", "rdp.to_dp_eps", "rdp.to_dp_delta"):
        return RDP_SOURCES.get(str(inputs.get("conversion")))
    if kind == "calibrate.bracket":
        return CALIBRATE_SOURCES.get(str(inputs.get("template")))
    if kind == "finite.identity":
        return IDENTITY_SOURCES.get(str(inputs.get("identity")))
    return None


# --------------------------------------------------------------------------- result.theorems

#: the two theorems of Poisson sampling under replace-one and why dp_accounting is no second opinion
REPLACE_THEOREMS = (
    "upper end: delta_replace(2 eps) <= delta_remove(eps) + e^eps delta_add(eps) (group privacy through "
    "D minus x; Dwork and Roth 2014 Thm 2.2), curves bounded by the certified PLD accountant (AFA Thm 10, "
    "Thm 11 (1))",
    "lower end: replacing x by a record of zero clipped gradient has the law of removing x under Poisson "
    "sampling, so the remove-direction curve (tight, AFA Thm 11 Remark) is a lower bound",
    "dp_accounting's PLD accountant answers a Poisson-sampled Gaussian under REPLACE_ONE with a pair whose "
    "domination under composition has no published proof; its RDP accountant refuses the event",
)
#: the third entry as format-2 certificates before dp_accounting 0.5 answered the event wrote it
_REPLACE_THEOREMS_V1 = REPLACE_THEOREMS[:2] + (
    "dp_accounting has no pair for PoissonSampledDpEvent under REPLACE_ONE (its accountants refuse it)",)


def bins_theorems(batches: int, epochs: int) -> list[str]:
    """``result.theorems`` of a balls-in-bins certificate: T batches per epoch, E epochs."""
    pair = (f"dominating pair of one balls-and-bins epoch (Chua et al., AISTATS 2025): P = (1/T) sum_t "
            f"N(e_t, sigma^2 I), Q = N(0, sigma^2 I), T = {batches}; add/remove and zeroing-out "
            "(replace-special); remove is (P, Q), add is (Q, P)")
    if epochs > 1:
        return [
            pair,
            f"adaptive composition of dominating pairs (AFA Thm 10): E = {epochs} epochs, each re-allocating "
            "every record to a uniformly random batch independently of the earlier epochs, the same T, sigma "
            "and relation in every epoch, so (P^E, Q^E) dominates the run (per direction)",
            "delta = E[(1 - e^{eps - X})_+] over the sum X of E i.i.d. losses (AFA Lemma 37): upper end from a "
            "super-measure of a loss >= X (cells at upper edges, loss grid rounded up, unrepresented mass at "
            "+inf or the window's end), lower end from a sub-measure of a loss <= X; E-fold integer products "
            "rounded outward",
        ]
    return [
        pair,
        "under Q, dP/dQ = (1/T) sum_t Y_t, Y_t i.i.d. log-normal: delta_remove = E[L] - c + E[(c - L)_+] with "
        "E[L] = 1, delta_add = E[(1 - cL)_+]; Y rounded to the edges of its cell (couplings), masses and "
        "products rounded outward",
        "one epoch only (the E-fold composition, AFA Thm 10 over independently re-allocated epochs, is not "
        "used)",
    ]


def shuffle_relation_note(relation: str) -> str:
    """What a neighbouring relation means for shuffled batches (the third theorem entry)."""
    if relation == "replace-one":
        return "replace-one: one record swapped, batch-sum sensitivity 2C, layout unchanged"
    if relation == "replace-special":
        return "replace-special: one record replaced by a special record with zero gradient, sensitivity C"
    return (f"{relation}: fixed-layout convention (the layout of the larger dataset is kept and a removed "
            "record leaves its slot empty, sensitivity C); an implementation that re-cuts its batches after "
            "a removal is not covered by the upper end, and the lower end's dataset pair assumes the same batch "
            "sizes under both datasets")


def shuffle_pair_shifts(relation: str) -> tuple[int, int]:
    """(a, b): the shift of x*'s batch sum, in units of C, under D (P) and under D' (Q)
    for the lower end's dataset pair (every other record has gradient -1, its batch sums
    subtracted). Replace-one: x* is +1 in D and -1 in D', (2, 0). Add-remove (fixed
    layout) and replace-special: x* is +1 in D, its slot empty (gradient 0) in D', (2, 1)."""
    return (2, 0) if relation == "replace-one" else (2, 1)


def shuffle_theorems(relation: str, persistent: bool, batches: int) -> list[str]:
    """``result.theorems`` of a shuffled-batches certificate."""
    def cdf(k: int) -> str:
        return "Phi(x)" if k == 0 else f"Phi(x-{'' if k == 1 else k}m)"

    a, b = shuffle_pair_shifts(relation)
    x_other = ("-1" if relation == "replace-one" else "0 (the special record)"
               if relation == "replace-special" else "absent (its slot empty, gradient 0)")
    released = "" if relation == "replace-one" else "; the pair of their released ShuffleAccountant"
    scheme = ("persistent shuffling: the epoch sums Z_t = sum_e Y_(e,t)/sqrt(E) of one epoch with m sqrt(E)"
              if persistent else "dynamic shuffling: independent epochs, the binned statistic composed E times")
    return [
        f"upper end: Gaussian pair with mu = {2 if relation == 'replace-one' else 1} sqrt(E)/sigma (no "
        "amplification: each record in exactly one batch per epoch; AFA Thm 10 per permutation, joint convexity "
        "over permutations; valid for dynamic and persistent shuffling)",
        f"lower end: concrete dataset pair (Chua et al. ICML 2024 Sec 4{released}): every other record's gradient "
        f"-1, x* +1 in D and {x_other} in D'; max of each epoch's batch sums less their known values, over sigma, "
        f"with m = 1/sigma: P(M<=x) = {cdf(a)}Phi(x)^(T-1), Q(M<=x) = {cdf(b)}Phi(x)^(T-1), T = {batches}; "
        f"{scheme}; binned and grouped (post-processing), P rounded down and Q up",
        shuffle_relation_note(relation),
    ]


# --------------------------------------------------------------------------- gdp.certify: tail reasons

#: gdp.certify's ``tail.reason`` texts that carry no number, by the writer's case
#: (dpverify.gdp.tail.certify_tail writes them; recheck/gdpt.py reads them as its forms). "no_model"
#: is a function of the mechanism alone (no tail model: tail.kind "unknown", which verify re-derives)
#: and is re-derived where the mechanism has no model; the other "unknown" ones say why the writer's
#: search stopped, which no number re-proves: verify names them as the writer's text.
GDP_TAIL_REASONS = {
    "gaussian": "the profile is delta_mu0 with mu0 <= mu, and delta_mu is increasing in mu (GDPT App A.5)",
    # the writer's comparison is of balls: False when mu >= mu0 is not proved, not only when mu < mu0
    "below_mu0": "mu was not proved >= the mechanism's mu0",
    # the same case as dpverify 0.1.0 worded it (its certificates stay verifiable)
    "below_mu0_v010": "mu is below the mechanism's mu0",
    "before_model": "eps_h is below where the tail model holds",
    "thm44": "mu is not above Thm 4.4's limit sqrt(1/(2 alpha)): the tail may exceed the head bound",
    "mills_search": "the Mills-ratio conditions were not met below eps = 2^20 eps_h",
    "mills": "f <= C exp(-alpha eps^2) <= delta_mu(eps) for eps >= eps_h by the Mills-ratio bounds (GDPT App A "
             "Lemma 3)",
    "no_model": "no closed-form tail known for this profile; head-only guarantee, GDPT Sec 4.2 gap delta_mu(eps_h) "
                "reported",
}


# --------------------------------------------------------------------------- events.*: theorems per step

_SYM = "AFA Def 7: the pair is symmetric under x -> shift - x, so it dominates both directions"
#: Gaussian and Laplace steps: (name, the pair at shift k, why it dominates both directions)
ADDITIVE_WORDS = {
    "gaussian": ("Gaussian", "N(0,1), N({k}/z,1)", "Dong, Roth, Su 2019 Sec 2; " + _SYM),
    "laplace": ("Laplace", "Lap(0,b), Lap({k},b)", _SYM),
}
#: the theorems an events.* certificate cites that are no step's: a zCDP tree's conversion (delta
#: query and claim, epsilon query) and why its ends bound from above only
ZCDP_THEOREMS = {
    "delta": ("zCDP: D_alpha <= xi + rho alpha (Bun, Steinke 2016 Def 1.1); composition adds rho and xi (BS16 "
              "Lemma 2.3); delta = inf over alpha of the RDP -> DP bound of Canonne, Kamath, Steinke 2020 Prop 12 "
              "(convex in alpha); an upper bound, not tight"),
    "epsilon": ("zCDP: D_alpha <= xi + rho alpha (Bun, Steinke 2016); composition adds rho and xi; optimal RDP -> "
                "DP conversion (ABC Thm 3); an upper bound, not tight"),
}
ZCDP_WHY = "zCDP fixes the Renyi curve, not the privacy profile; the conversion bounds it from above"
#: ``why_upper_only`` of a tree with steps sampled without replacement under replace-one: this once
#: (writers before adv47 L1 wrote it once per such step, joined by "; "; verify accepts both), and
#: where one concrete dataset pair attains the lower end, that (joined by "; ")
WOR_UPPER_ONLY = "sampling without replacement under replace-one (AFA Cor 32 pair: tight for one step only)"
REALISED_LOWER = ("the lower end is attained by a concrete dataset pair (+-1 gradients: Poisson pairs at noise z/2, "
                  "rate m/n, remove and add)")


def event_theorem(step: str, rel: str, *, sampled: bool = False, inner: str = "", whole: bool = False) -> str:
    """The theorem an events.* certificate cites for one kind of step (``result.theorems`` lists each
    once, in the order the steps first occur in the tree): ``step`` the event's type
    (events.schema.json), ``rel`` the relation, ``sampled`` a Poisson rate below 1 around it, and for
    ``sampled_without_replacement`` the ``inner`` type and whether the sample is the ``whole``
    dataset. The writer (dpverify.events.dispatch) words its steps here and verify re-derives the
    list from inputs.event (recheck/events.py); KeyError for a step no pair is written for."""
    if step in ADDITIVE_WORDS:
        name, law, why = ADDITIVE_WORDS[step]
        if rel == "replace-one":
            return f"{name} mechanism, replace-one: ({law.format(k=2)}), sensitivity 2C ({why})"
        if not sampled:
            return f"{name} mechanism: ({law.format(k=1)}) dominates add and remove ({why})"
        return f"Poisson-subsampled {name}: AFA Thm 11 (1), add and remove composed separately"
    if step in ("discrete_laplace", "discrete_gaussian"):
        th = ("discrete Laplace: (DLap(a), DLap(a) + Delta) dominates (AFA Prop 8 remark, log-concave pmf)"
              if step == "discrete_laplace" else
              "discrete Gaussian: (N_Z(0,s^2), N_Z(Delta,s^2)) dominates (AFA Prop 8 remark)")
        return th + ("; replace-one sensitivity 2 Delta" if rel == "replace-one" else "")
    if step == "randomized_response":
        return {"replace-one": "randomized response, replace-one: exact output laws R(x), R(x') (finite pair)",
                "replace-special": "randomized response, replace-special: exact laws R(x) vs uniform (finite pair)"}[rel]
    if step == "epsilon_delta":
        return ("Poisson-subsampled (eps0, delta0)-DP: LT Thm 4.5 pair, AFA Thm 11 (1)" if sampled else
                "(eps0, delta0)-DP: the randomized-response pair dominates (LT Thm 4.5)")
    if step == "mixture_of_gaussians":
        return ("mixture of Gaussians: the event's own pair N(0,s^2) vs sum p_i N(c_i,s^2) per direction "
                "(Choquette-Choo et al. 2023, arXiv 2310.15526)")
    if step == "sampled_without_replacement":
        name = ADDITIVE_WORDS[inner][0]
        if rel == "replace-one":
            return (f"{name} on the whole dataset, replace-one (sensitivity 2C)" if whole else
                    "sampling without replacement, replace-one: AFA Prop 30 + Cor 32 (pair with curve "
                    f"max(H_remove, H_add) of the subsampled {name} base pair with sensitivity 2C)")
        return (f"sampling without replacement, add/remove: AFA Thm 11 (2) with the replace-one {name} "
                "pair (sensitivity 2C)")
    raise KeyError(step)


def _count(inputs: Mapping[str, Any], key: str) -> Optional[int]:
    v = _value(_text(inputs, key) or "")
    return int(v) if v is not None and v.denominator == 1 and 0 < v <= 10**12 else None


def theorems(kind: str, inputs: Mapping[str, Any], fmt: str = "dpverify-certificate/2") -> list[list[str]]:
    """The ``result.theorems`` lists a ``kind`` certificate of format ``fmt`` with these inputs
    may carry (this release's first); [] for a kind whose list is not pinned here."""
    family = kind.split(".")[0]
    if family == "replace":
        return [list(REPLACE_THEOREMS), list(_REPLACE_THEOREMS_V1)]
    n, b, e = _count(inputs, "dataset_size"), _count(inputs, "batch_size"), _count(inputs, "epochs")
    rel = _text(inputs, "neighboring")
    if family == "bins" and n and b and e and n % b == 0:
        return [bins_theorems(n // b, e)]
    if family == "shuffle" and n and b and rel:
        persistent, batches = inputs.get("sampling") == "shuffle-persistent", -(-n // b)
        now = shuffle_theorems(rel, persistent, batches)
        # format 1 and format 2 before the lower end named its dataset pair
        scheme = ("persistent shuffling: the epoch sums Z_t = sum_e Y_(e,t)/sqrt(E) of one epoch with mu sqrt(E)"
                  if persistent else "dynamic shuffling: independent epochs, the binned statistic composed E times")
        then = (f"lower end: concrete dataset pair (Chua et al. ICML 2024 Sec 4): max of each epoch's batch sums, "
                f"Q(M<=x) = Phi(x)^T, P(M<=x) = Phi(x-mu)Phi(x)^(T-1), T = {batches}; {scheme}; binned and grouped "
                "(post-processing), P rounded down and Q up")
        note = now[2].split(", and the lower end's dataset pair")[0]
        return [now, [now[0], then, note]]
    return []


#: kinds whose ``result.theorems`` :func:`theorems` rebuilds (events.* cite the pairs of the
#: tree, which this module does not re-derive: see docs/reference/certificates.md)
THEOREM_KINDS = frozenset(f"{f}.{q}" for f in ("replace", "bins", "shuffle") for q in ("epsilon", "delta", "claim"))


def check_theorems(fmt: str, kind: str, inputs: Mapping[str, Any], result: Mapping[str, Any]) -> bool:
    """Refuse (exit 1) a ``result.theorems`` of a :data:`THEOREM_KINDS` certificate that is not
    the list its kind and inputs cite; True when the list was checked."""
    if kind not in THEOREM_KINDS or "theorems" not in result:
        return False
    got = result["theorems"]
    allowed = theorems(kind, inputs, fmt)
    if got not in allowed:
        want = allowed[0] if allowed else []
        if not isinstance(got, list):
            raise CertificateRejected(f"result.theorems is not the list a {kind} certificate cites")
        # the first entry that differs; a list that is a prefix of the cited one misses its next entry
        first = next((i for i, t in enumerate(got) if i >= len(want) or t != want[i]), len(got))
        if first < len(got):
            raise CertificateRejected(f"result.theorems[{first}] is not what a {kind} certificate with these "
                                      f"inputs cites (the list is re-derived from the kind and the inputs)")
        raise CertificateRejected(f"result.theorems stops after {len(got)} entries: a {kind} certificate with "
                                  f"these inputs cites {len(want)} (the list is re-derived from the kind and the "
                                  "inputs)")
    return True


_REGISTRY: Optional[dict[str, dict[str, Any]]] = None


def registry_record(claim_id: str) -> Optional[Mapping[str, Any]]:
    """The shipped registry record of ``claim_id`` (``dpverify/theorems/claims/*.jsonl``, read
    as data), or None."""
    global _REGISTRY
    if _REGISTRY is None:
        from ..files import read_regular

        records: dict[str, dict[str, Any]] = {}
        for path in sorted((Path(__file__).resolve().parent.parent / "theorems" / "claims").glob("*.jsonl")):
            for line in read_regular(path, 2**24).decode("utf-8").splitlines():
                if line.strip() and not line.lstrip().startswith("//"):
                    rec = json.loads(line)
                    records[rec["id"]] = rec
        _REGISTRY = records
    return _REGISTRY.get(claim_id)


def check_statement(fmt: str, claim: Mapping[str, Any], inputs: Mapping[str, Any],
                    result: Mapping[str, Any]) -> list[str]:
    """Refuse (:class:`CertificateRejected`, exit 1) a certificate whose words (statement and
    source) are not the ones its kind and inputs prove and cite (module docstring). Returns the prose fields that nothing binds
    (named on the verify line as not confirmed)."""
    kind = claim.get("quantity")
    text = claim.get("statement")
    claim_id = claim.get("id")
    if isinstance(claim_id, str):
        rec = registry_record(claim_id)
        if rec is None:
            return [UNBOUND]
        for key in CLAIM_PROSE:
            allowed = (rec.get(key),) + (LEGACY_SOURCES.get(fmt, {}).get(claim_id, ()) if key == "source" else ())
            if claim.get(key) not in allowed:
                raise CertificateRejected(f"claim.{key}={str(claim.get(key))[:80]!r} is not the shipped claim "
                                          f"{claim_id!r}'s {key} ({str(rec.get(key))[:80]!r})")
        for key in CLAIM_DEFINITION:
            if claim.get(key) != rec.get(key):
                raise CertificateRejected(f"claim.{key}={str(claim.get(key))[:80]!r} is not the shipped claim "
                                          f"{claim_id!r}'s ({str(rec.get(key))[:80]!r}): its statement is that claim's")
        if not _same_inputs(inputs, rec.get("inputs")):
            raise CertificateRejected(f"inputs differ from the shipped claim {claim_id!r}'s "
                                      f"({str(rec.get('inputs'))[:120]}): its statement is about those")
        return []
    extra = sorted(set(claim) - {"quantity", "statement", "source", "relation"})
    if extra:
        # a claim's own words (note, domain, printed) belong to a claim file's record; a product
        # certificate states its template and nothing beside it
        raise MalformedCertificate(f"claim.{extra[0]}: a {kind} certificate without claim.id carries no "
                                   f"{extra[0]} (allowed: quantity, statement, source, relation)")
    cited = source(str(kind), inputs)
    if claim.get("source") not in (cited,) + _EARLIER_SOURCES.get(str(kind), ()):
        raise CertificateRejected(f"claim.source={str(claim.get('source'))[:80]!r} is not what a {kind} certificate "
                                  f"with these inputs cites ({str(cited)[:80]!r})")
    fields = _fields(inputs, result)
    candidates = statements(str(kind), fmt)
    if not any(_matches(t, fields, text) for t in candidates if isinstance(text, str)):
        lacking = [_FIELD_SOURCES.get(name, f"inputs.{name}") for _, name, _, _ in
                   string.Formatter().parse(candidates[0]) if name is not None and fields.get(name) is None] \
            if candidates else []
        if lacking:
            # the statement is worded from a field the certificate lacks (adv36 M3: a gdp.certify without
            # result.status was told no statement of its kind is written without a claim id)
            raise MalformedCertificate(f"{lacking[0]}: missing or not one this release knows, and a {kind} "
                                       "certificate's claim.statement is worded from it")
        want = _fill(candidates[0], fields) if candidates else None
        raise CertificateRejected(
            f"claim.statement={str(text)[:80]!r} is not what a {kind} certificate with these inputs states"
            + (f" ({want[:120]!r}): the statement is re-derived from the kind and the inputs" if want else
               ": no statement of this kind is written without a claim id (a registry claim)"))
    return []


# --------------------------------------------------------------------------- result.quantity

_BY_QUERY = {"epsilon": "epsilon(delta={delta})", "delta": "delta(eps={eps})"}
_MU_STAR = "mu* = sup G_f (optimal GDP parameter)"

#: gdp.certify's ``result.quantity`` by ``result.status``: mu* where the tail is decided (GDP: the
#: enclosure is mu*; not GDP: mu* = +inf), the head's sup where it is not (GDPT Def 3.1: a head-only
#: enclosure bounds sup over [0, eps_h] of G_f, which is no bound of mu*: 0.5 e^-eps has mu* = +inf,
#: GDPT Lemma A.1, and a head sup of 1.349 at eps_h = 2; adv40 Q2), as :data:`_CERTIFY` words the statement
CERTIFY_ENCLOSES = {"GDP": _MU_STAR, "not GDP": _MU_STAR, "head only": "sup over [0, eps_h] of G_f (head GDP "
                    "parameter; the tail is not certified)"}
#: format -> kind -> result.status -> further labels that format's earlier writers wrote, accepted and
#: named as not confirmed (format-2 writers before this release labelled every gdp.certify "mu*")
LEGACY_ENCLOSES: dict[str, dict[str, dict[str, tuple[str, ...]]]] = {
    "dpverify-certificate/2": {"gdp.certify": {"head only": (_MU_STAR,)}},
}

#: ``result.quantity``, what ``result.enclosure`` encloses, per kind; ``{name}`` is ``inputs.name``
#: (matched by exact value, as in a statement). A kind not listed names itself. The writers fill it
#: in (:func:`dpverify.certificate.build.encloses`, and the sampled kinds' writers, which print the
#: number as the user typed it); verify re-derives it (:func:`check_quantity`).
ENCLOSES = {
    "gdp.delta": "delta_mu(eps={eps})",
    "gdp.mu": "mu_GDP(eps={eps}, delta={delta})",
    "gdp.eps": "eps with delta_mu(eps) = {delta}",
    "gdp.optimal_mu": _MU_STAR,
    "dp.profile": "delta(eps={eps})",
    "dp.implies": "required delta(eps={eps})",
    "dp.rr64": "sup over the 64 event rows of delta(eps={eps})",
    "composition.delta": "composed delta(eps={eps})",
    "composition.eps": "epsilon(delta={delta})",
    "pld.epsilon": "epsilon(delta={delta})",
    "pld.delta": "delta(eps={eps})",
    "pld.claim": "delta(eps={claimed_eps})",
    "rdp.divergence": "D_alpha (alpha={alpha})",
    "rdp.epsilon": "epsilon(delta={delta})",
    "rdp.to_dp_eps": "epsilon(delta={delta})",
    "rdp.to_dp_delta": "delta(eps={eps})",
    # an event tree's claim is decided on delta at the claimed eps; the sampled brackets' claims on
    # epsilon(delta) (dpverify.events.api.check_claim, sampling.replace.decide)
    "events.claim": "delta(eps={claimed_eps})",
    **{f"{family}.{q}": t for family in ("events", "bins", "shuffle", "replace") for q, t in _BY_QUERY.items()},
    **{f"{family}.claim": _BY_QUERY["epsilon"] for family in ("bins", "shuffle", "replace")},
}


def encloses_template(kind: str, result: Mapping[str, Any]) -> Optional[str]:
    """The ``result.quantity`` template of a ``kind`` result (:data:`ENCLOSES`; gdp.certify's by
    its status, :data:`CERTIFY_ENCLOSES`; a kind not listed names itself); None for a gdp.certify
    status this release does not know."""
    if kind == "gdp.certify":
        return CERTIFY_ENCLOSES.get(str(result.get("status")))
    return ENCLOSES.get(kind, kind)


def check_quantity(fmt: str, kind: str, inputs: Mapping[str, Any], result: Mapping[str, Any]) -> list[str]:
    """Refuse (exit 1) a ``result.quantity`` that is not its kind's text filled from the inputs
    (:func:`encloses_template`). It names what the enclosure encloses, so it is re-derived like the
    statement: relabelling a delta enclosure "epsilon(delta=1e-5)", or adding "so this run is
    (0.01, 1e-9)-DP" after it, was confirmed while only its name=value pairs were compared
    (adv39 C2). An earlier writer's label of this format (:data:`LEGACY_ENCLOSES`) is accepted and
    returned, to be named on the verify line as not confirmed."""
    text = result.get("quantity")
    if text is None:
        return []  # required or not by the kind's schema, which has been checked
    template = encloses_template(kind, result)
    if template is None:
        raise MalformedCertificate(f"result.status={str(result.get('status'))[:40]!r}: not one this release knows "
                                   f"(allowed: {', '.join(CERTIFY_ENCLOSES)}), and a {kind} certificate's "
                                   "result.quantity is worded from it")
    if text in LEGACY_ENCLOSES.get(fmt, {}).get(kind, {}).get(str(result.get("status")), ()):
        return [f"result.quantity ({text!r}, an earlier writer's label: the enclosure is "
                f"{template.split(' (')[0]!r})"]
    fields: dict[str, Any] = {}
    for _, name, _, _ in string.Formatter().parse(template):
        if name is not None:
            t = _text(inputs, name)
            fields[name] = Num(t) if t is not None else None
    if not (isinstance(text, str) and _matches(template, fields, text)):
        want = _fill(template, fields)
        raise CertificateRejected(f"result.quantity={str(text)[:80]!r} is not what a {kind} certificate with "
                                  f"these inputs encloses ({str(want)[:120]!r})")
    return []


# --------------------------------------------------------------------------- calibration arguments

#: ``calibrate.bracket``'s ``result.monotonicity`` (by template and free parameter) and ``result.pairs`` (by
#: template; None: not written): the writers' arguments for extending each end to the values beyond it
#: and for the pairs behind the ends (dpverify.calibration reads them from here). ``verify`` cannot
#: re-prove an argument; it pins the text to the one this table gives for the certificate's inputs
#: (comments.check_comments, exit 1 otherwise), so a certificate states only the argument its
#: writer makes and the project reviews ("eps is nonincreasing in the steps" is refused).
_DPSGD_MONOTONICITY = {
    "noise_multiplier": "eps is nonincreasing in the noise multiplier: adding independent Gaussian "
    "noise is a post-processing of the pair (data processing for the hockey-stick divergence, "
    "both directions, preserved by composition)",
    "steps": "eps is nondecreasing in the steps: T steps are a marginal (post-processing) of T+1",
    "sampling_rate": "eps is nondecreasing in the Poisson rate q: P_q' = (q'/q) P_q + (1-q'/q) Q, joint "
    "convexity of the hockey-stick divergence gives domination of the pair at q' by the pair at q "
    "for every e^eps >= 0 in both directions (AFA Def 7), composed by AFA Thm 10",
    "batch_size": "eps is nondecreasing in the expected batch size (q = B / N): the sampling-rate "
    "argument (joint convexity, AFA Def 7, Thm 10)",
}


_WOR_PAIRS = (
    "upper (safe end): AFA Prop 30 + Cor 32: per step the pair whose curve is max(H_remove, "
    "H_add) of the Poisson-subsampled Gaussian pairs at rate g = B/N and noise sigma/2 (shift 2C: "
    "replace-one sensitivity), composed by AFA Thm 10 (a dominating pair, not known to be tight "
    "for more than one step); lower (unsafe end): the realised dataset pair below, whose T-fold "
    "product is exactly the Poisson add-remove DP-SGD pair at noise sigma/2 and rate B/N"
)


_WOR_MONOTONICITY = {
    "noise_multiplier": "both bounds are nonincreasing in sigma: each component pair at sigma' > sigma is "
    "the pair at sigma post-processed by independent Gaussian noise (data processing), so is the "
    "pointwise maximum of the two curves (AFA Def 7 domination), and AFA Thm 10 carries it through "
    "the composition",
    "steps": "both bounds are nondecreasing in the steps: T steps are a marginal (post-processing) of T+1",
    "batch_size": "both bounds are nondecreasing in B: each component pair at rate g = B/N dominates the "
    "pair at g' < g (joint convexity of the hockey-stick divergence, P_g' = (g'/g) P_g + (1 - g'/g) Q), "
    "so does their pointwise maximum (AFA Def 7), composed by AFA Thm 10",
}


def _wor_full(free: str) -> str:
    return (f"{_WOR_MONOTONICITY[free]}. The mechanism's own epsilon lies between the two bounds; its "
            "monotonicity is not assumed: every value beyond the safe end is safe because the upper "
            "bound is monotone, every value beyond the unsafe end fails because the lower bound is")


_SHUFFLE_MONOTONICITY = {
    "noise_multiplier": "both bounds are nonincreasing in sigma. Upper: the no-amplification Gaussian has "
    "mu = Delta sqrt(E) / sigma, decreasing in sigma, and delta_mu(eps) increases with mu (GDPT App A.5). "
    "Lower: the concrete dataset pair (Chua et al., ICML 2024, Sec 4) has gradients that do not depend on "
    "the model, so the run on it is non-adaptive and its output at sigma' > sigma is its output at sigma "
    "plus independent N(0, (sigma'^2 - sigma^2) C^2 I) noise per step, a post-processing of both datasets' "
    "outputs (data processing for the hockey-stick divergence, both directions); the max-of-batch-sums "
    "bound is a lower bound of that pair's divergence at the end, hence of every smaller sigma's",
    "epochs": "both bounds are nondecreasing in the epochs E. Upper: mu = Delta sqrt(E) / sigma grows with E. "
    "Lower: on the concrete (non-adaptive) dataset pair the run of E epochs is the marginal of the run of "
    "E + 1 epochs (drop the last epoch: a post-processing, dynamic and persistent shuffling alike: the "
    "persistent permutation of the first E epochs is the same one), so that pair's divergence does not "
    "decrease with E",
}


_BINS_MONOTONICITY = {
    "noise_multiplier": "both bounds enclose one quantity, the hockey-stick divergence of the E-fold product "
    "of Chua et al.'s (AISTATS 2025) one-epoch pair P = (1/T) sum_t N(e_t, sigma^2 I), Q = N(0, sigma^2 I); "
    "the pair dominates the mechanism (upper, composed over independently re-allocated epochs by AFA Thm 10) "
    "and is realised by a concrete dataset pair (one record with gradient e_1 in one dimension, the others "
    "0; the epochs are then i.i.d.), so it also bounds the mechanism from below. The pair at sigma' > sigma "
    "is the pair at sigma convolved with N(0, (sigma'^2 - sigma^2) I) in both arguments, a post-processing "
    "(data processing, both directions, preserved by the product): nonincreasing in sigma",
    "epochs": "both bounds enclose the divergence of the E-fold product of Chua et al.'s (AISTATS 2025) "
    "one-epoch pair (dominating by AFA Thm 10 over independently re-allocated epochs; realised by a concrete "
    "dataset pair, so also a lower bound); the E-fold product is a marginal of the (E+1)-fold one (drop a "
    "coordinate block: post-processing), so it is nondecreasing in E",
}


_SHUFFLE_PAIRS = (
    "safe end and pair_limit: the no-amplification Gaussian, mu = Delta sqrt(E) / sigma (each example in "
    "exactly one batch per epoch; AFA Thm 10 per permutation, joint convexity over permutations); unsafe "
    "end: the concrete dataset pair of Chua et al. (ICML 2024, Sec 4) read through the maximum of each "
    "epoch's batch sums, composed over independent epochs (dynamic) or summed over epochs (persistent)"
)

_BINS_PAIRS = (
    "both ends: the dominating pair of one balls-in-bins epoch (Chua et al., AISTATS 2025), realised by a "
    "concrete dataset pair, composed over independently re-allocated epochs (AFA Thm 10); safe end: its "
    "certified upper enclosure of delta(target) <= delta, unsafe end: its certified lower enclosure > delta"
)


CALIBRATE_MONOTONICITY: dict[str, dict[str, str]] = {
    "dpsgd": _DPSGD_MONOTONICITY,
    "dpsgd-wor": {free: _wor_full(free) for free in _WOR_MONOTONICITY},
    "dpsgd-shuffle": _SHUFFLE_MONOTONICITY,
    "dpsgd-bins": _BINS_MONOTONICITY,
}
CALIBRATE_PAIRS: dict[str, Optional[str]] = {"dpsgd": None, "dpsgd-wor": _WOR_PAIRS, "dpsgd-shuffle": _SHUFFLE_PAIRS,
                                             "dpsgd-bins": _BINS_PAIRS}
