"""The knot-by-knot loop of :func:`dpverify.recheck.pld.gauss_tails` (``many_knots``: Phi and
``_phi_hi`` written out on the same MPFR calls) gives the very enclosures of the per-point route
(:class:`dpverify.recheck.pld.IvTails` called at each knot, through ``Arith._ncdf_abs_point`` and
``_phi_hi``), on every branch: Phi's Taylor anchors on both sides of 0, the far branch past
|x| = TAYLOR_TO, knots below the support (``_UNIT``) and the full-mass knots, both directions; and
those enclosures hold the mpmath tails at 300 bits."""

from __future__ import annotations

from fractions import Fraction

import mpmath
import pytest

from dpverify.recheck import pld as Pl
from dpverify.recheck.core import TAYLOR_TO, arith

from .test_pld_rigorous import _mp, _ref_gauss_tails

# grids coarse enough (2^-8 at most: rho = m - _BLOCK_SPAN below every block's minimum) that
# ``many`` is the knot loop alone
CASES = [
    (Fraction(1), Fraction(1, 100), "remove", 8, -300, 1500, False),
    (Fraction(1), Fraction(1, 100), "add", 8, -1500, 300, False),
    (Fraction(3, 10), Fraction(1, 10), "remove", 4, -20, 1000, True),  # mu = 3.3: x past TAYLOR_TO
    (Fraction(3, 10), Fraction(1, 10), "add", 4, -1000, 20, True),
    (Fraction(30), Fraction(1, 2), "add", 8, -400, 250, True),  # mu = 1/30: x = 30 log(...)
    (Fraction(2), Fraction(1, 1), "remove", 7, -50, 50, False),  # q = 1: no knot loop (fn only), still equal
]


@pytest.mark.parametrize("sig,q,direction,m,lo,hi,far", CASES)
def test_knot_loop_equals_the_per_point_route(sig, q, direction, m, lo, hi, far) -> None:
    tails = Pl.gauss_tails(sig, q, direction)
    A = arith(82 + m + 32)
    got = tails.at_knots(A, lo, hi, m)
    assert got == [tails(A, A.dyadic(i, m)) for i in range(lo, hi + 1)]
    if q == 1:
        return
    # the branches were met: Phi's arguments (-x, mu - x remove; x, x - mu add) on both sides of 0,
    # past TAYLOR_TO where ``far`` (the tails 0 or 1
    # to 2^-prec there), and the knots outside the support (every outcome has L > e: full mass)
    mu = mpmath.mpf(sig.denominator) / sig.numerator
    xs = []
    for i in range(lo, hi + 1):
        e = mpmath.mpf(i) / 2 ** m
        a = mpmath.expm1(e if direction == "remove" else -e) + mpmath.mpf(q.numerator) / q.denominator
        if a > 0:
            x = (mpmath.log(a * q.denominator / q.numerator) + mu * mu / 2) / mu
            xs += [-x, mu - x] if direction == "remove" else [x, x - mu]
    assert min(xs) < 0 < max(xs)
    assert (max(abs(x) for x in xs) >= TAYLOR_TO) == far
    full = ((1, 1), (1, 1)) if direction == "remove" else ((0, 0), (0, 0))
    assert any(g == full for g in got)
    # and they enclose the tails at 300 bits at every 7th knot
    with mpmath.workprec(300):
        for k in range(lo, hi + 1, 7):
            (p0, p1), (q0, q1) = got[k - lo]
            p, qq = _ref_gauss_tails(_mp(sig), _mp(q), direction, mpmath.mpf(k) / 2 ** m)
            assert mpmath.mpf(p0) <= p <= mpmath.mpf(p1) and mpmath.mpf(q0) <= qq <= mpmath.mpf(q1), k
