"""The replace-one fixed-batch pair (:func:`dpverify.recheck.wor.max_curve_tails`, AFA Cor 32) on
the grid by segments: a segment of knots whose maximum is proved to be one pair's curve (that
pair's tails proved 0 or 1 at an end, or its curve's lower end at the segment's right end above
the other's upper end at its left end, both curves nonincreasing in e) takes that pair's own
enclosures or proved runs; the rest goes knot by knot. Checked against mpmath at 300 bits: the
maximum's tails are the tails of the pair whose mpmath curve is the larger, and every enclosure
holds them; where the per-knot choice is decided the enclosures are the per-point route's; the
discretised masses with the runs (block masses on fine grids) bound the same pair as the walk's."""

from __future__ import annotations

from fractions import Fraction

import mpmath
import pytest
from mpmath import mpf

from dpverify.recheck import pld as Pl, wor
from dpverify.recheck.core import arith, mpfr_to_mpf

from .test_pld_rigorous import _mp, _ref_gauss_tails

CASES = [(Fraction(1), Fraction(1, 100)), (Fraction(11, 20), Fraction(256, 60000)), (Fraction(3), Fraction(1, 5))]


def _truth(sig, q, e):
    """The maximum's tails at e (mpmath, 300 bits): the pair with the larger curve's, None where
    the two curves are within 1e-70 (a near tie: either pair's tails, not decided here)."""
    r, a = _ref_gauss_tails(_mp(sig), _mp(q), "remove", e), _ref_gauss_tails(_mp(sig), _mp(q), "add", e)
    x = mpmath.exp(e)
    dr, da = r[0] - x * r[1], a[0] - x * a[1]
    if abs(dr - da) < mpf(10) ** -70:
        return None
    return r if dr > da else a


@pytest.mark.parametrize("sig, q", CASES)
@pytest.mark.parametrize("m", [6, 9])
def test_segments_hold_the_maximum_tails_and_equal_the_decided_per_point_choices(sig, q, m):
    tails = wor.max_curve_tails(Pl.gauss_tails(sig, q, "remove"), Pl.gauss_tails(sig, q, "add"))
    A = arith(150)
    lo, hi = -(6 << m), 6 << m
    got = tails.at_knots(A, lo, hi, m)
    checked = 0
    with mpmath.workprec(300):
        for i in range(lo, hi + 1):
            g = got[i - lo]
            point = tails(A, A.dyadic(i, m))
            # the per-point route decides (returns one pair's enclosures) or takes the hull of both;
            # the segment route equals it, or lies inside the hull (a choice proved for the segment)
            assert g == point or all(p[0] <= u[0] and u[1] <= p[1] for p, u in zip(point, g)), i
            if i % 5 and abs(i) > 3:
                continue
            want = _truth(sig, q, mpf(i) / 2 ** m)
            if want is None:
                continue
            for (u, v), w in zip(g, want):
                assert mpfr_to_mpf(u) - mpf(10) ** -40 <= w <= mpfr_to_mpf(v) + mpf(10) ** -40, i
                assert mpfr_to_mpf(v) - mpfr_to_mpf(u) <= mpf(2) ** -100, i
            checked += 1
    assert checked > 100  # most knots: the others are near ties (both curves within 1e-70, e.g. both 0)


def test_the_segments_take_one_pair_far_from_zero_and_go_knot_by_knot_near_it(monkeypatch):
    # the pair not chosen is evaluated at the segment's ends only: count the knots each pair's
    # one-loop route is asked for
    sig, q = CASES[0]
    asked = {"remove": 0, "add": 0}
    pairs = {}
    for d in asked:
        t = Pl.gauss_tails(sig, q, d)

        def many(A, i0, n, m, K=None, _t=t, _d=d):
            asked[_d] += n - i0 + 1
            return _t.many(A, i0, n, m) if K is None else _t.runs(A, i0, n, m, K)

        pairs[d] = Pl.IvTails(t.fn, many=many, runs=many)
    tails = wor.max_curve_tails(pairs["remove"], pairs["add"])
    m = 9
    tails.at_knots(arith(150), -(6 << m), 6 << m, m)
    total = (12 << m) + 1
    # about one pair per knot, not two: the knot-by-knot segments cover only the neighbourhood of 0
    assert asked["remove"] + asked["add"] < 1.1 * total
    assert asked["remove"] > (6 << m) - 200 and asked["add"] > (6 << m) - 200


@pytest.mark.parametrize("m", [12])
def test_discretised_masses_with_runs_bound_the_same_pair_as_the_walk(m):
    # the block masses (runs) on the proved segments against the knot-by-knot walk of the same pair:
    # every lower mass and the upper pair's deltas agree to a few units 2^-K (both proved; the block
    # route rounds its own way), and the upper pair's delta at every 64th knot is no smaller than
    # the lower pair's (both bound the same pair's curve)
    sig, q = CASES[0]
    K = 85
    r, a = Pl.gauss_tails(sig, q, "remove"), Pl.gauss_tails(sig, q, "add")
    new = wor.max_curve_tails(r, a)
    old = Pl.IvTails(new.fn, many=lambda A, i0, n, mm: [new(A, A.dyadic(i, mm)) for i in range(i0, n + 1)])
    (i0, up_n, inf_n), low_n = Pl._discretise_iv(new, K, mpf("1e-25"), m, 10**7, 1 << 22)
    (j0, up_o, inf_o), low_o = Pl._discretise_iv(old, K, mpf("1e-25"), m, 10**7, 1 << 22)
    assert (i0, j0) == (j0, i0) and len(up_n) == len(up_o) and inf_n == inf_o
    assert abs(sum(up_n) - sum(up_o)) <= 16
    for k in range(0, len(up_n), 64):
        tail_n, tail_o = sum(up_n[k:]), sum(up_o[k:])
        assert abs(tail_n - tail_o) <= 16, k
    # the lower pair's masses are the walk's (both from enclosures or proved blocks: within a few units)
    for s_n, s_o in zip(low_n[1:3], low_o[1:3]):
        assert abs(sum(s_n) - sum(s_o)) <= 16
