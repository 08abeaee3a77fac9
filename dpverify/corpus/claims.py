"""Published DP-SGD claims as data: reading and resolving corpus records.

A record (schema ``dpverify/corpus/schema.json``, documented in
docs/corpus.md) states the parameters as the source printed them. Resolving
it gives the exact (sigma, q, T, delta, relation) the audit certifies, plus
the derivation in words and every other plausible step count (the
sensitivity check). Nothing silently defaults except the one default the
format allows, ``neighboring`` = add-remove, and the output records that it
was defaulted.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any, Callable, Mapping, Optional

from .. import _validate as V
from ..ball import exact_str
from ..errors import InvalidParameter
from ..limits import MAX_STEPS
from ..theorems.records import InvalidRecord, load_schema, read_jsonl

__all__ = ["CorpusClaim", "load_corpus", "STEPS_RULES", "MECHANISMS", "SCHEMA"]

SCHEMA = Path(__file__).resolve().parent / "schema.json"


def _ceil(e: Fraction, n: int, b: int) -> int:
    return math.ceil(e * n / b)


def _floor(e: Fraction, n: int, b: int) -> int:
    return math.floor(e * n / b)


def _per_epoch(per: Callable[[int, int], int]) -> Callable[[Fraction, int, int], int]:
    def rule(e: Fraction, n: int, b: int) -> int:
        if e.denominator != 1:
            raise InvalidParameter("epochs", "a per-epoch steps_rule needs a whole number of epochs")
        return int(e) * per(n, b)

    return rule


#: steps_rule keyword -> (steps from epochs E, dataset size N, batch size B; how it reads)
STEPS_RULES: dict[str, tuple[Callable[[Fraction, int, int], int], str]] = {
    "ceil": (_ceil, "ceil(E N / B) (TF Privacy compute_dp_sgd_privacy)"),
    "floor": (_floor, "floor(E N / B)"),
    "per-epoch-ceil": (_per_epoch(lambda n, b: -(-n // b)), "E ceil(N / B) (a last partial batch per epoch)"),
    "per-epoch-floor": (_per_epoch(lambda n, b: n // b), "E floor(N / B) (drop_last per epoch)"),
}


@dataclass(frozen=True)
class CorpusClaim:
    """A corpus record resolved to exact inputs.

    ``target`` is what the source claims: ``"eps"`` (claimed_eps at the given
    delta) or ``"delta"`` (claimed_delta at the given eps); ``given`` is the
    other parameter. ``other`` is the same printed number resolved with the
    parameters of another version of the source (``other_version``), if any."""

    record: Mapping[str, Any] = field(repr=False)
    number: int
    id: str
    mechanism: str
    noise_multiplier: Fraction
    sampling_rate: Fraction
    steps: int
    target: str  # "eps" | "delta": the claimed quantity
    given: Fraction  # delta for an eps claim, eps for a delta claim
    neighboring: str
    neighboring_defaulted: bool
    claimed_lo: Optional[Fraction]  # lower end of a printed interval, else None
    claimed: Fraction  # the guarantee: claimed value (upper end of an interval)
    derivation: str  # how T and q were obtained, in words
    alternatives: tuple[tuple[str, int], ...]  # (rule, steps) for every other plausible rule
    other: Optional["CorpusClaim"] = None
    other_changes: str = ""  # what the other version changes, in words

    @property
    def config(self) -> tuple:
        """What the certified number depends on (identical configurations share it)."""
        return (self.mechanism, self.noise_multiplier, self.sampling_rate, self.steps, self.target, self.given,
                self.neighboring)

    @property
    def claimed_text(self) -> str:
        return self.record["claimed_eps" if self.target == "eps" else "claimed_delta"].strip()

    @property
    def quantity(self) -> str:
        """What is enclosed, in the certificate vocabulary: "epsilon" or "delta(eps=E)"."""
        return "epsilon" if self.target == "eps" else f"delta(eps={exact_str(self.given)})"


def _claimed(key: str, text: str, value: Callable[[str, str], Fraction]) -> tuple[Optional[Fraction], Fraction]:
    t = text.strip()
    if t[0] in "([":
        parts = t[1:-1].split(",")
        if len(parts) != 2:
            raise InvalidParameter(key, f"{key}={text!r}: an interval is \"(lo, hi)\"")
        lo = V.nonnegative(key, parts[0].strip())
        hi = value(key, parts[1].strip())
        if lo > hi:
            raise InvalidParameter(key, f"{key}={text!r}: lo > hi")
        return lo, hi
    return None, value(key, t)


_FLOAT_LIKE = re.compile(r"^[+-]?\d*\.(\d{15,})$")


def _rate(rec: Mapping[str, Any]) -> tuple[Fraction, Optional[int], Optional[int], str]:
    """(q, B, N, words) from sampling_rate or batch_size + dataset_size."""
    has_q, has_bn = "sampling_rate" in rec, ("batch_size" in rec or "dataset_size" in rec)
    if has_q and has_bn:
        raise InvalidParameter("sampling_rate", "give sampling_rate or batch_size + dataset_size, not both")
    if has_q:
        text = rec["sampling_rate"]
        if _FLOAT_LIKE.match(text.strip()):
            raise InvalidParameter("sampling_rate", f"sampling_rate={text!r} looks like a printed binary float; "
                                   "write the exact rate, e.g. \"256/60000\"")
        return V.half_open_unit("sampling_rate", text), None, None, f"q = {text}"
    if has_bn:
        for k in ("batch_size", "dataset_size"):
            if k not in rec:
                raise InvalidParameter(k, "batch_size and dataset_size come together")
        b, n = rec["batch_size"], rec["dataset_size"]
        if b > n:
            raise InvalidParameter("batch_size", f"batch_size={b} must be <= dataset_size={n}")
        return Fraction(b, n), b, n, f"q = {b}/{n}"
    raise InvalidParameter("sampling_rate", "missing: give sampling_rate (exact) or batch_size + dataset_size")


def _schedule(rec: Mapping[str, Any]) -> tuple[Fraction, Fraction, int, str, tuple[tuple[str, int], ...]]:
    """(sigma, q, T, derivation in words, other plausible (rule, T)) of a record."""
    sigma = V.positive("noise_multiplier", rec["noise_multiplier"])
    q, b, n, qwords = _rate(rec)
    words = [qwords]
    alternatives: list[tuple[str, int]] = []
    if "steps" in rec and "epochs" in rec:
        raise InvalidParameter("epochs", "give steps or epochs + steps_rule, not both")
    if "steps" in rec:
        steps = V.integer("steps", rec["steps"], lo=1, hi=MAX_STEPS)
        rule = rec.get("steps_rule")
        words.append(f"stated {steps} steps" + (f" ({rule})" if rule else ""))
    elif "epochs" in rec:
        rule = rec.get("steps_rule")
        if rule not in STEPS_RULES:
            raise InvalidParameter("steps_rule", f"steps_rule={rule!r}: with epochs it must be one of "
                                   f"{', '.join(STEPS_RULES)}")
        e = V.positive("epochs", rec["epochs"])
        if n is None or b is None:  # epochs with an exact rate: N / B = 1 / q
            n, b = q.denominator, q.numerator
        steps = STEPS_RULES[rule][0](e, n, b)
        if not 1 <= steps <= MAX_STEPS:
            raise InvalidParameter("epochs", f"epochs={rec['epochs']!r} gives {steps} steps; allowed 1..{MAX_STEPS}")
        words.append(f"stated {rec['epochs']} epochs gives {steps} steps by {rule}")
        for other, (fn, _) in STEPS_RULES.items():
            try:
                t = fn(e, n, b)
            except InvalidParameter:
                continue
            if other != rule and t != steps and 1 <= t <= MAX_STEPS and t not in [a[1] for a in alternatives]:
                alternatives.append((other, t))
        if alternatives:
            words[-1] += "; with " + ", ".join(f"{r}, {t}" for r, t in alternatives)
    else:
        raise InvalidParameter("steps", "missing: give steps, or epochs + steps_rule")
    return sigma, q, steps, "; ".join(words), tuple(alternatives)


def _target(rec: Mapping[str, Any]) -> tuple[str, Fraction]:
    """("eps", delta) for a claimed_eps record, ("delta", eps) for a claimed_delta one."""
    has_e, has_d = "claimed_eps" in rec, "claimed_delta" in rec
    if has_e and has_d:
        raise InvalidParameter("claimed_delta", "give claimed_eps (with delta) or claimed_delta (with eps), not both")
    if not (has_e or has_d):
        raise InvalidParameter("claimed_eps", "missing: give claimed_eps (with delta) or claimed_delta (with eps)")
    given, other = ("delta", "eps") if has_e else ("eps", "delta")
    if other in rec:
        raise InvalidParameter(other, f"a claimed_{'eps' if has_e else 'delta'} claim takes {given}, not {other}")
    if given not in rec:
        raise InvalidParameter(given, f"missing: a claimed_{'eps' if has_e else 'delta'} claim needs {given}")
    if has_e:
        return "eps", V.open_unit("delta", rec["delta"])
    return "delta", V.nonnegative("eps", rec["eps"])


#: the parameter fields an ``other_version`` may change, and the fields each one replaces
_OVERRIDES = {"noise_multiplier": (), "sampling_rate": ("batch_size", "dataset_size"),
              "batch_size": ("sampling_rate",), "dataset_size": ("sampling_rate",),
              "steps": ("epochs", "steps_rule"), "epochs": ("steps",), "steps_rule": (),
              "delta": (), "eps": ()}


def _dpsgd(rec: Mapping[str, Any], number: int) -> CorpusClaim:
    target, given = _target(rec)
    sigma, q, steps, words, alternatives = _schedule(rec)
    rel = rec.get("neighboring", "add-remove")
    key = "claimed_eps" if target == "eps" else "claimed_delta"
    value = V.positive if target == "eps" else V.open_unit
    lo, claimed = _claimed(key, rec[key], value)
    other, changes = None, ""
    if "other_version" in rec:
        ov = rec["other_version"]
        changed = [k for k in ov if k in _OVERRIDES]
        if not changed:
            raise InvalidParameter("other_version", "other_version must change at least one parameter (allowed: "
                                   + ", ".join(_OVERRIDES) + ")")
        merged = {k: v for k, v in rec.items() if k != "other_version"
                  and not any(k in _OVERRIDES[c] for c in changed)}
        merged.update({k: ov[k] for k in changed})
        try:
            other = _dpsgd(merged, number)
        except InvalidParameter as exc:
            raise InvalidParameter(f"other_version.{exc.name}", exc.message) from None
        changes = ", ".join(f"{k} = {ov[k]}" for k in changed)
    return CorpusClaim(rec, number, rec["id"], rec["mechanism"], sigma, q, steps, target, given, rel,
                       "neighboring" not in rec, lo, claimed, words, alternatives, other, changes)


#: mechanism kind -> resolver(record, number). Extension point: the event kinds of
#: dpverify/events/ register here (and in the schema's "mechanism" enum) with their fields.
MECHANISMS: dict[str, Callable[[Mapping[str, Any], int], CorpusClaim]] = {"dpsgd-poisson": _dpsgd}


def load_corpus(path: "str | Path") -> list[CorpusClaim]:
    """Every record of a corpus file, checked and resolved; the first bad
    record raises InvalidRecord naming the record number and the field."""
    schema = load_schema(SCHEMA)
    out: list[CorpusClaim] = []
    seen: set[str] = set()
    for where, number, rec in read_jsonl(path, schema):
        if rec["id"] in seen:
            raise InvalidRecord(where, "id", f"duplicate id {rec['id']!r}")
        seen.add(rec["id"])
        try:
            out.append(MECHANISMS[rec["mechanism"]](rec, number))
        except InvalidParameter as exc:
            raise InvalidRecord(where, exc.name, exc.message) from None
    return out


def describe(c: CorpusClaim) -> str:
    """The resolved configuration in one line."""
    return (f"sigma = {exact_str(c.noise_multiplier)}, q = {exact_str(c.sampling_rate)}, T = {c.steps}, "
            f"{'delta' if c.target == 'eps' else 'eps'} = {exact_str(c.given)}, {c.neighboring}"
            + (" (default)" if c.neighboring_defaulted else ""))
