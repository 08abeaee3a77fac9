"""The knot loops of :func:`dpverify.recheck.pld.laplace_tails` against its per-point route and mpmath.

At q < 1 the loop (``many``, which :meth:`IvTails.at_knots` takes) gives the very enclosures of the
per-point route (:class:`IvTails` called at each knot, through ``fn``), bit for bit, signs of zero
included, on every branch: knots above and below the loss support, knots whose interval end straddles
it (``_UNIT``, at a low precision where the ends' enclosures are wide), both directions and both signs
of B log(a / q). At q = 1 (:func:`dpverify.recheck.pld._pure_laplace_tails`) the loop takes anchors and
products instead of the per-point exponentials: enclosures of the same tails, a few hundred ulps wider
at most, with the same exact ends +-1/b; and its closed-form block of masses (``runs``) agrees with the
knot-by-knot walk and with a discretisation written out in mpmath. Every route holds the tails computed
by mpmath at 60 digits (an independent route: the formulas on the densities' survival functions, with
the ends +-1/b exact at q = 1)."""

from __future__ import annotations

from fractions import Fraction as F

import gmpy2
import mpmath
import pytest

from dpverify.recheck import pld as Pl
from dpverify.recheck.core import arith, to_fraction

from .test_pld_rigorous import _ref_discretise, _ref_laplace_tails

# (b, q, direction, m, prec, lo, hi): the index ranges run past both ends of the support
CASES = [
    (F(1), F(1, 10), "remove", 8, 120, -60, 60),
    (F(1), F(1, 10), "add", 8, 120, -60, 60),
    (F(1, 3), F(3, 4), "remove", 5, 90, -120, 120),
    (F(1, 3), F(3, 4), "add", 5, 90, -120, 120),
    (F(5), F(1, 100), "remove", 14, 160, -60, 60),
    # prec 12: wide ends, straddling knots, about the lower end log(1/2 + e^(-1/2)/2) 2^20 = -229712
    # (remove) and its mirror (add)
    (F(2), F(1, 2), "remove", 20, 12, -231000, -228500),
    (F(2), F(1, 2), "add", 20, 12, 228500, 231000),
]
# (b, m, prec, lo, hi) at q = 1, both directions
PURE = [
    (F(20), 8, 120, -20, 20),  # the npd leaf: ends +-1/20, between knots
    (F(2), 6, 100, -40, 40),  # ends +-1/2 on the grid: exact end knots
    (F(1, 2), 3, 64, -20, 20),
    (F(20), 12, 150, -300, 300),  # more than one anchor (every 256th knot)
]


def _bits(x) -> tuple:
    return (gmpy2.is_signed(x), x) if x == 0 else (False, x)


def _flat(tails: list) -> list:
    return [_bits(v) for t in tails for iv in t for v in iv]


def _ref(b, q, direction, e):
    """(P(L > e), Q(L > e)) by mpmath (test_pld_rigorous's reference, exact ends at q = 1)."""
    return _ref_laplace_tails(mpmath.mpf(b.numerator) / b.denominator, mpmath.mpf(q.numerator) / q.denominator,
                              direction, e)


def _kind(t) -> str:
    (p0, p1), (q0, q1) = t
    return ("zero" if p1 == 0 and q1 == 0 else "one" if p0 == 1 and q0 == 1
            else "unit" if (p0, p1, q0, q1) == (0, 1, 0, 1) else "inside")


def _holds_mpmath(got: list, b, q, direction, m: int, lo: int, hi: int) -> dict:
    """Every knot's enclosures hold mpmath's tails (the inner ones on at most ~400 knots); the kinds seen."""
    kinds = {"zero": 0, "one": 0, "unit": 0, "inside": 0}
    step = max(1, (hi - lo) // 400)
    with mpmath.workdps(60):
        for k, i in enumerate(range(lo, hi + 1)):
            kind = _kind(got[k])
            kinds[kind] += 1
            if k % step and kind == "inside":
                continue
            ref = _ref(b, q, direction, mpmath.mpf(i) / 2 ** m)
            for (lo_, hi_), v in zip(got[k], ref):
                assert to_fraction(lo_) <= F(mpmath.nstr(v, 70, min_fixed=-1, max_fixed=1)) + F(1, 10**55)
                assert F(mpmath.nstr(v, 70, min_fixed=-1, max_fixed=1)) - F(1, 10**55) <= to_fraction(hi_)
    return kinds


@pytest.mark.parametrize("b,q,direction,m,prec,lo,hi", CASES)
def test_laplace_knot_loop_equals_the_per_point_route_and_holds_mpmath(b, q, direction, m, prec, lo, hi) -> None:
    tails = Pl.laplace_tails(b, q, direction)
    assert tails.many is not None
    A = arith(prec)
    got = tails.at_knots(A, lo, hi, m)
    ref = [tails(A, A.dyadic(i, m)) for i in range(lo, hi + 1)]
    assert _flat(got) == _flat(ref)
    kinds = _holds_mpmath(got, b, q, direction, m, lo, hi)
    assert kinds["inside"] > 3
    if prec < 20:  # one end of the support: knots beyond it and knots that straddle its enclosure
        assert kinds["unit"] and kinds["one" if direction == "remove" else "zero"]
    else:  # both ends
        assert kinds["zero"] and kinds["one"]


@pytest.mark.parametrize("b,m,prec,lo,hi", PURE)
@pytest.mark.parametrize("direction", ["remove", "add"])
def test_pure_laplace_knot_loop_encloses_the_per_point_tails_narrowly(b, m, prec, lo, hi, direction) -> None:
    """At q = 1 the loop's enclosures (anchors and products) and fn's (exponentials per knot) both hold
    mpmath's tails, knot by knot of the same kind (the ends compared exactly, the same integers), the
    loop's at most 2^-(prec - 10) wide; the two directions are one function (the same key)."""
    tails = Pl.laplace_tails(b, F(1), direction)
    assert tails.key == Pl.laplace_tails(b, F(1), "add" if direction == "remove" else "remove").key
    A = arith(prec)
    got = tails.at_knots(A, lo, hi, m)
    ref = [tails(A, A.dyadic(i, m)) for i in range(lo, hi + 1)]
    assert [_kind(t) for t in got] == [_kind(t) for t in ref]
    for t in got:
        for a_, c_ in t:
            assert c_ - a_ <= gmpy2.mpfr(2) ** (10 - prec)
    for t in (got, ref):
        kinds = _holds_mpmath(t, b, F(1), direction, m, lo, hi)
        assert kinds["inside"] > 3 and kinds["zero"] and kinds["one"] and not kinds["unit"]


@pytest.mark.parametrize("b", [F(2), F(1, 2), F(4)])
@pytest.mark.parametrize("direction", ["remove", "add"])
def test_pure_laplace_knot_loop_at_the_exact_ends(b, direction) -> None:
    """At q = 1 a knot on the end 1/b gets the tails 0, one on -1/b its tails (not [0, 1]), the
    ones just beyond -1/b full mass, in the loop (integer thresholds) as in fn (the same ``ends``)."""
    tails = Pl.laplace_tails(b, F(1), direction)
    A = arith(200)
    for m in (6, 9):
        i = int(2**m / b)
        got = tails.at_knots(A, -i - 1, i, m)
        assert got[-1] == ((0, 0), (0, 0)) == tails(A, A.dyadic(i, m))
        assert got[0] == ((1, 1), (1, 1)) == tails(A, A.dyadic(-i - 1, m))
        assert got[1] != Pl._UNIT and got[1][0][0] < 1


@pytest.mark.parametrize("b,K,m,first", [(F(2), 80, 9, None), (F(20, 3), 90, 12, None), (F(20), 120, 30, 53686017)])
def test_pure_laplace_block_masses_agree_with_the_walk_and_mpmath(b, K, m, first) -> None:
    """The closed-form block (``runs``: 2 c tanh(h/4) e^(k h/2) at a knot, c (e^(h/2) - 1) e^(k h/2) and
    c (1 - e^(-h/2)) e^(-k h/2) a cell) gives the walk's masses to a unit (the walk's enclosures are
    wider, so its upper masses may be one more), and both agree with the mpmath discretisation to its
    margin (which rounds one unit further each way). The last grid starts at a floor 1e-6 below 1/20
    (the first segment, the chord from t = 0, is the reference's too)."""
    tau = mpmath.mpf(10) ** -20
    tails = Pl.laplace_tails(b, F(1), "remove")
    walk = Pl.IvTails(tails.fn, many=tails.many, sup=tails.sup)  # the same tails, no block
    (i0, up, ui), (j0, lp, lq, li) = Pl._discretise_iv(tails, K, tau, m, 10**7, Pl.MAX_KNOTS, first)
    n = i0 + len(up) - 1
    assert any(isinstance(r, Pl._BlockMasses) and len(r.up) > 100 for r in tails.runs(arith(K + m + 32), i0, n, m, K))
    (i0w, upw, uiw), (_, lpw, lqw, liw) = Pl._discretise_iv(walk, K, tau, m, 10**7, Pl.MAX_KNOTS, first)
    assert (i0, ui, li, len(up), len(lp)) == (i0w, uiw, liw, len(upw), len(lpw))
    assert all(0 <= w - u <= 1 for u, w in zip(up, upw))
    assert all(abs(x - y) <= 1 for x, y in zip(lp + lq, lpw + lqw))
    with mpmath.workdps(60):
        bb = mpmath.mpf(b.numerator) / b.denominator
        ref_up, ref_lp, ref_lq = _ref_discretise(lambda x: _ref_laplace_tails(bb, mpmath.mpf(1), "remove", x),
                                                 i0, n, K, m)
    assert all(0 <= o - u <= 2 for u, o in zip(up, ref_up))
    assert all(0 <= u - o <= 2 for u, o in zip(lp, ref_lp))
    assert all(0 <= o - u <= 2 for u, o in zip(lq, ref_lq))
