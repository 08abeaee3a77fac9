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

from ..ball import ball, lower_decimal, upper_decimal, working_precision
from ..verdict import Enclosure

__all__ = ["Classification", "classify"]


@dataclass(frozen=True)
class Classification:
    verdict: str  # consistent | unsafe | loose
    excess: str  # (reported - nearest bound) / nearest bound, a short decimal rounded so that
    # it stays a bound on the true relative excess (up for unsafe, down otherwise)


def classify(reported: Fraction, certified: Enclosure, tolerance: Fraction) -> Classification:
    with working_precision(256):
        r = ball(reported)
        if r < certified.lo:
            # eps* >= lo, so the true relative shortfall is <= ex: round up
            ex = (r - certified.lo) / certified.lo
            return Classification("unsafe", upper_decimal(ex, 4))
        if certified.hi.is_finite() and r > certified.hi * (1 + ball(tolerance)):
            # eps* <= hi, so the true relative excess is >= ex: round down
            ex = (r - certified.hi) / certified.hi
            return Classification("loose", lower_decimal(ex, 4))
        if certified.hi.is_finite() and r > certified.hi:
            ex = (r - certified.hi) / certified.hi
            return Classification("consistent", lower_decimal(ex, 4))
        return Classification("consistent", "0")
