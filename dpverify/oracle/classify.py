"""Classify a reported epsilon against the certified enclosure [lo, hi] of the
true epsilon(delta) that the row records: the rule of docs/reference/certificates.md,
"Oracle rows", which ``dpverify verify`` re-derives (recheck/oracle.py, its own copy:
the re-check imports nothing of the producer).

[lo, hi] are the exact values of the decimals the row prints (``Enclosure.to_json``:
lo rounded down, hi rounded up from the certified binary ends), so that a reader,
and verify, can re-derive every verdict from the certificate alone. Both are proved
bounds (lo <= eps*(delta) <= hi, eps* the smallest eps with delta(eps) <= delta):

* unsafe: reported < lo. Then reported < eps*, so delta(reported) > delta: the
  mechanism is certainly not (reported, delta)-DP.
* loose: reported > hi (1 + tolerance): a valid but wasteful guarantee.
* consistent: otherwise (lo <= reported <= hi (1 + tolerance)): not decided at the
  width of the enclosure, which the run's digits bound.

Before, the producer compared with the unprinted binary ends, which lie inside the
printed ones: a reported number equal to a printed end was 'unsafe' / 'loose' here
and 'consistent' in verify, which refused the genuine certificate (exit 1).
Comparisons are exact (rationals); the relative excess is printed for humans,
rounded so that it stays a bound on the true relative excess.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Optional

from ..ball import ball, lower_decimal, parse_exact, upper_decimal, working_precision
from ..verdict import Enclosure

__all__ = ["Classification", "classify", "printed_ends"]


@dataclass(frozen=True)
class Classification:
    verdict: str  # consistent | unsafe | loose
    excess: Optional[str]  # (reported - nearest bound) / nearest bound, a short decimal rounded so that
    # it stays a bound on the true relative excess (up for unsafe, down otherwise); None when that
    # bound is 0 (eps* = 0 exactly: no finite relative excess)


def printed_ends(certified: Enclosure) -> tuple[Fraction, Optional[Fraction]]:
    """(lo, hi) as the exact rationals of the decimals a row records (hi None: +inf)."""
    enc = certified.to_json()
    lo = parse_exact(enc["lo"], "certified.lo")
    return lo, None if enc["hi"] == "inf" else parse_exact(enc["hi"], "certified.hi")


def _relative(reported: Fraction, bound: Fraction, upward: bool) -> Optional[str]:
    """(reported - bound) / bound to four digits, rounded up or down; None for a bound of 0."""
    if bound == 0:
        return None
    with working_precision(256):
        x = ball((reported - bound) / bound)
        return upper_decimal(x, 4) if upward else lower_decimal(x, 4)


def classify(reported: Fraction, certified: Enclosure, tolerance: Fraction) -> Classification:
    lo, hi = printed_ends(certified)
    if reported < lo:
        # eps* >= lo, so the true relative shortfall is <= ex: round up
        return Classification("unsafe", _relative(reported, lo, upward=True))
    if hi is not None and reported > hi * (1 + tolerance):
        # eps* <= hi, so the true relative excess is >= ex: round down
        return Classification("loose", _relative(reported, hi, upward=False))
    if hi is not None and reported > hi:
        return Classification("consistent", _relative(reported, hi, upward=False))
    return Classification("consistent", "0")
