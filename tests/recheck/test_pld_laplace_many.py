"""The knot loop of :func:`dpverify.recheck.pld.laplace_tails` (``many``, which
:meth:`IvTails.at_knots` takes) gives the very enclosures of the per-point route (:class:`IvTails`
called at each knot, through ``fn``), bit for bit, signs of zero included, on every branch: knots
above and below the loss support, knots whose interval end straddles it (``_UNIT``, at a low
precision where the ends' enclosures are wide), q = 1 with knots exactly on the rational ends
+-1/b, both directions and both signs of B log(a / q); and both routes hold the tails computed
by mpmath at 60 digits (an independent route: the formulas on the densities' survival
functions, with the ends +-1/b exact at q = 1)."""

from __future__ import annotations

from fractions import Fraction as F

import gmpy2
import mpmath
import pytest

from dpverify.recheck import pld as Pl
from dpverify.recheck.core import arith, to_fraction

from .test_pld_rigorous import _ref_laplace_tails

# (b, q, direction, m, prec, lo, hi): the index ranges run past both ends of the support
CASES = [
    (F(20), F(1), "remove", 8, 120, -20, 20),  # the npd leaf: ends +-1/20, between knots
    (F(20), F(1), "add", 8, 120, -20, 20),
    (F(2), F(1), "remove", 6, 100, -40, 40),  # ends +-1/2 on the grid: exact end knots
    (F(2), F(1), "add", 6, 100, -40, 40),
    (F(1, 2), F(1), "add", 3, 64, -20, 20),
    (F(1), F(1, 10), "remove", 8, 120, -60, 60),
    (F(1), F(1, 10), "add", 8, 120, -60, 60),
    (F(1, 3), F(3, 4), "remove", 5, 90, -120, 120),
    (F(1, 3), F(3, 4), "add", 5, 90, -120, 120),
    (F(5), F(1, 100), "remove", 14, 160, -60, 60),
    (F(2), F(1, 2), "remove", 20, 12, -250000, -200000),  # prec 12: wide ends, straddling knots
    (F(2), F(1, 2), "add", 20, 12, 200000, 250000),
]


def _bits(x) -> tuple:
    return (gmpy2.is_signed(x), x) if x == 0 else (False, x)


def _flat(tails: list) -> list:
    return [_bits(v) for t in tails for iv in t for v in iv]


def _ref(b, q, direction, e):
    """(P(L > e), Q(L > e)) by mpmath (test_pld_rigorous's reference, exact ends at q = 1)."""
    return _ref_laplace_tails(mpmath.mpf(b.numerator) / b.denominator, mpmath.mpf(q.numerator) / q.denominator,
                              direction, e)


@pytest.mark.parametrize("b,q,direction,m,prec,lo,hi", CASES)
def test_laplace_knot_loop_equals_the_per_point_route_and_holds_mpmath(b, q, direction, m, prec, lo, hi) -> None:
    tails = Pl.laplace_tails(b, q, direction)
    assert tails.many is not None
    A = arith(prec)
    got = tails.at_knots(A, lo, hi, m)
    ref = [tails(A, A.dyadic(i, m)) for i in range(lo, hi + 1)]
    assert _flat(got) == _flat(ref)
    kinds = {"zero": 0, "one": 0, "unit": 0, "inside": 0}
    step = max(1, (hi - lo) // 400)  # mpmath on at most ~400 knots of the range
    with mpmath.workdps(60):
        for k, i in enumerate(range(lo, hi + 1)):
            (p0, p1), (q0, q1) = got[k]
            kind = ("zero" if p1 == 0 and q1 == 0 else "one" if p0 == 1 and q0 == 1
                    else "unit" if (p0, p1, q0, q1) == (0, 1, 0, 1) else "inside")
            kinds[kind] += 1
            if k % step and kind == "inside":
                continue
            P, Q = _ref(b, q, direction, mpmath.mpf(i) / 2 ** m)
            for (lo_, hi_), v in (((p0, p1), P), ((q0, q1), Q)):
                assert to_fraction(lo_) <= F(mpmath.nstr(v, 70, min_fixed=-1, max_fixed=1)) + F(1, 10**55)
                assert F(mpmath.nstr(v, 70, min_fixed=-1, max_fixed=1)) - F(1, 10**55) <= to_fraction(hi_)
    assert kinds["inside"] > 3
    if prec < 20:  # one end of the support: knots beyond it and knots that straddle its enclosure
        assert kinds["unit"] and kinds["one" if direction == "remove" else "zero"]
    else:  # both ends
        assert kinds["zero"] and kinds["one"]


@pytest.mark.parametrize("b", [F(2), F(1, 2), F(4)])
@pytest.mark.parametrize("direction", ["remove", "add"])
def test_laplace_knot_loop_at_the_exact_ends_of_q_1(b, direction) -> None:
    """At q = 1 a knot on the end 1/b gets the tails 0, one on -1/b its tails (not [0, 1]),
    the ones just beyond -1/b full mass: the integer thresholds of ``many`` are fn's exact
    comparisons."""
    tails = Pl.laplace_tails(b, F(1), direction)
    A = arith(200)
    for m in (6, 9):
        i = int(2**m / b)
        got = tails.at_knots(A, -i - 1, i, m)
        assert got[-1] == ((0, 0), (0, 0))
        assert got[0] == ((1, 1), (1, 1))
        assert got[1] != Pl._UNIT and got[1][0][0] < 1
        assert _flat(got) == _flat([tails(A, A.dyadic(j, m)) for j in range(-i - 1, i + 1)])
