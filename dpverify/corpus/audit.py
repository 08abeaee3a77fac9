"""Audit a corpus of published DP-SGD claims: a verdict with reasons per claim.

For each claim the certified PLD accountant (:func:`dpverify.pld.dpsgd.epsilon`,
AFA Thm 10/11) encloses epsilon(delta) of the stated configuration; then

* ``holds``: certified upper end <= claimed eps (the claim is a valid guarantee:
  eps(delta) <= E implies delta(E) <= delta, as delta(.) is non-increasing);
* ``fails``: certified lower end > claimed eps (the stated parameters do not
  give that guarantee);
* ``undecided``: the enclosure straddles the claim even after refining.

A printed interval "(a, b)" is read as the guarantee eps <= b; whether the
interval also contains the certified value is reported separately.
Identical configurations (mechanism, sigma, q, T, delta, relation, exactly)
are computed once, and so are the configurations of the sensitivity check
(the other plausible step counts; the add and remove directions of an
add-remove claim come out of the same computation).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Callable, Iterable, Optional

from flint import arb

from ..ball import ball, exact_str, working_precision
from ..pld import dpsgd as S
from ..verdict import Enclosure
from .claims import CorpusClaim, describe

__all__ = ["AuditRow", "audit", "FIRST_DIGITS", "REFINE_DIGITS"]

#: relative width of the first computation (enough for most verdicts) and of the
#: one refinement done for a configuration whose verdict it leaves undecided
FIRST_DIGITS = 3
REFINE_DIGITS = 6


@dataclass(frozen=True)
class AuditRow:
    claim: CorpusClaim
    verdict: str
    enclosure: Enclosure
    tightness: Optional[float]  # claimed / certified upper end
    reason: str
    sensitivity: tuple[str, ...]
    interval_contains: Optional[str]  # for printed intervals: yes / no / undecided

    def to_json(self) -> dict[str, Any]:
        c = self.claim
        return {
            "id": c.id,
            "record": c.number,
            "verdict": self.verdict,
            "claimed_eps": c.record["claimed_eps"],
            "certified": self.enclosure.to_json(),
            "certified_short": self.enclosure.short(4),
            "tightness": None if self.tightness is None else f"{self.tightness:.4g}",
            "reason": self.reason,
            "sensitivity": list(self.sensitivity),
            "interval_contains_certified": self.interval_contains,
            "quantity": "pld.epsilon",
            "inputs": {"noise_multiplier": exact_str(c.noise_multiplier), "sampling_rate": exact_str(c.sampling_rate),
                       "steps": c.steps, "delta": exact_str(c.delta), "neighboring": c.neighboring},
            "neighboring_defaulted": c.neighboring_defaulted,
            "accountant": c.record["accountant"],
            "source": c.record["source"],
            "location": c.record["location"],
            "quote": c.record["quote"],
        }


def _cmp(enc_lo: arb, enc_hi: arb, claimed: Fraction) -> str:
    """holds / fails / undecided of "eps <= claimed" over [lo, hi] (exact endpoints)."""
    with working_precision(256):
        c = ball(claimed)
        if bool(enc_hi <= c):
            return "holds"
        if bool(enc_lo > c):
            return "fails"
    return "undecided"


class _Engine:
    """Certified eps(delta) per configuration, each computed once."""

    def __init__(self, tick: Callable[[], None]) -> None:
        self.cache: dict[tuple, S.PldAnswer] = {}
        self.tick = tick
        self.computations = 0

    def answer(self, c: CorpusClaim, steps: int, digits: int, rel: Optional[str] = None) -> S.PldAnswer:
        key = (c.noise_multiplier, c.sampling_rate, steps, c.delta, rel or c.neighboring, digits)
        if key not in self.cache:
            better = [a for k, a in self.cache.items() if k[:5] == key[:5] and k[5] >= digits]
            if better:
                return better[0]
            self.computations += 1
            self.cache[key] = S.dpsgd_epsilon(c.noise_multiplier, c.sampling_rate, steps, c.delta,
                                              neighboring=rel or c.neighboring, digits=digits)
            self.tick()
        return self.cache[key]

    def verdict(self, c: CorpusClaim, steps: int, rel: Optional[str] = None) -> tuple[str, S.PldAnswer]:
        ans = self.answer(c, steps, FIRST_DIGITS, rel)
        v = _cmp(ans.enclosure.lo, ans.enclosure.hi, c.claimed)
        if v == "undecided":
            ans = self.answer(c, steps, REFINE_DIGITS, rel)
            v = _cmp(ans.enclosure.lo, ans.enclosure.hi, c.claimed)
        return v, ans


def _direction_verdicts(ans: S.PldAnswer, claimed: Fraction) -> dict[str, str]:
    out = {}
    with working_precision(256):
        for name, (lo, hi) in ans.directions.items():
            a = ball(lo if lo is not None else Fraction(0))
            b = ball(hi) if hi is not None else arb("inf")
            out[name] = _cmp(a.lower(), b.upper(), claimed)
    return out


def _one(engine: _Engine, c: CorpusClaim) -> AuditRow:
    v, ans = engine.verdict(c, c.steps)
    enc = ans.enclosure
    with working_precision(128):
        hi = float(enc.hi.mid()) if enc.hi.is_finite() else None
    tight = float(c.claimed) / hi if hi else None
    claimed_txt = c.record["claimed_eps"].strip()
    cert_txt = enc.short(4)
    head = {
        "holds": f"certified eps {cert_txt} <= claimed {claimed_txt}: a valid guarantee",
        "fails": f"certified eps {cert_txt} > claimed {claimed_txt}: the stated parameters do not give it",
        "undecided": f"certified eps {cert_txt} straddles the claimed {claimed_txt}",
    }[v]
    if v == "holds" and tight is not None and tight > 1.01:
        head += f", loose by {100 * (tight - 1):.0f} %"
    reason = f"{head} ({c.derivation}; {describe(c)})"
    sens = []
    for rule, t in c.alternatives:
        v2, a2 = engine.verdict(c, t)
        if v2 != v:
            sens.append(f"flips to {v2} with steps by {rule} (T = {t}: eps {a2.enclosure.short(4)})")
    if c.neighboring == "add-remove":
        for name, v2 in _direction_verdicts(ans, c.claimed).items():
            if v2 != v and v2 != "undecided":
                sens.append(f"flips to {v2} under the {name} relation alone")
    contains = None
    if c.claimed_lo is not None:
        inside = _cmp(enc.lo, enc.hi, c.claimed)
        below = _cmp(enc.lo, enc.hi, c.claimed_lo)  # "holds" here means eps <= lo: below the interval
        contains = "no" if inside == "fails" or below == "holds" else (
            "yes" if inside == "holds" and below == "fails" else "undecided")
        reason += f"; the printed interval {claimed_txt} " + {
            "yes": "contains the certified value", "no": "misses the certified value",
            "undecided": "may or may not contain the certified value"}[contains]
    return AuditRow(c, v, enc, tight, reason, tuple(sens), contains)


def audit(claims: Iterable[CorpusClaim], progress: bool = False) -> tuple[list[AuditRow], dict[str, Any]]:
    """Audit every claim; returns the rows and run statistics (seconds,
    claims, distinct configurations computed)."""
    claims = list(claims)
    t0 = time.monotonic()
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(claims), unit="claim", desc="audit corpus", leave=False)
    engine = _Engine(lambda: None)
    rows = []
    for c in claims:
        rows.append(_one(engine, c))
        if bar is not None:
            bar.set_postfix_str(c.id[:30])
            bar.update(1)
    if bar is not None:
        bar.close()
    stats = {"claims": len(claims), "configurations_computed": engine.computations,
             "distinct_claim_configurations": len({c.config for c in claims}),
             "seconds": round(time.monotonic() - t0, 1)}
    return rows, stats
