"""Classify a reported epsilon against a certified enclosure [lo, hi] of the
true epsilon(delta).

* unsafe: reported < lo. Since lo <= eps*(delta) (the smallest eps with
  delta(eps) <= delta), delta(reported) > delta: the mechanism is certainly
  not (reported, delta)-DP.
* loose: reported > hi (1 + tolerance): a valid but wasteful guarantee.
* consistent: otherwise (including reported in [lo, hi]).

Comparisons are exact (Fractions against exact arb endpoints, decided by arb
with proof); the relative excess is reported for humans, outward-rounded.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from ..ball import ball, working_precision
from ..verdict import Enclosure

__all__ = ["Classification", "classify"]


@dataclass(frozen=True)
class Classification:
    verdict: str  # consistent | unsafe | loose
    excess: str  # (reported - nearest bound) / nearest bound, as a short decimal


def classify(reported: Fraction, certified: Enclosure, tolerance: Fraction) -> Classification:
    with working_precision(256):
        r = ball(reported)
        if r < certified.lo:
            ex = (r - certified.lo) / certified.lo
            return Classification("unsafe", ex.str(4, radius=False))
        if certified.hi.is_finite() and r > certified.hi * (1 + ball(tolerance)):
            ex = (r - certified.hi) / certified.hi
            return Classification("loose", ex.str(4, radius=False))
        if certified.hi.is_finite() and r > certified.hi:
            ex = (r - certified.hi) / certified.hi
            return Classification("consistent", ex.str(4, radius=False))
        return Classification("consistent", "0")
