"""Tight composition (LT Thm 4.6 / Cor 4.7): recursion = closed form = brute force,
dominance, monotonicity, certified inversion with exact 'inf'."""

from fractions import Fraction as F

import mpmath
import pytest
from flint import arb
from hypothesis import given, strategies as st

from dpverify.ball import ball, working_precision
from dpverify.composition import (
    EpsDelta,
    ShiftDistribution,
    compose_delta,
    compose_eps,
    compose_eps_grid,
    cor47_delta_ball,
)
from dpverify.errors import InvalidParameter
from dpverify.mechanisms.randomized_response import RandomizedResponse

from ..reference import in_enclosure

eps_s = st.fractions(min_value=0, max_value=2, max_denominator=20)
delta_s = st.fractions(min_value=0, max_value=F(1, 10), max_denominator=1000)
t_s = st.fractions(min_value=-4, max_value=6, max_denominator=10)


@given(eps=eps_s, delta=delta_s, k=st.integers(1, 30), t=t_s)
def test_recursion_equals_cor47_closed_form(eps, delta, k, t):
    # the step-by-step recursion (one convolution per mechanism) against LT Cor 4.7
    dist = ShiftDistribution([(eps, delta)], k, group=False)
    with working_precision(200):
        a = dist.delta(ball(t))
        b = cor47_delta_ball(ball(eps), ball(delta), k, ball(t))
        assert a.overlaps(b)
        assert a.rad() < 1e-40 and b.rad() < 1e-40


@given(eps=eps_s, delta=delta_s, k=st.integers(1, 40), t=t_s)
def test_grouped_equals_ungrouped(eps, delta, k, t):
    with working_precision(200):
        a = ShiftDistribution([(eps, delta)], k).delta(ball(t))
        b = ShiftDistribution([(eps, delta)], k, group=False).delta(ball(t))
        assert a.overlaps(b)


rat_r = st.fractions(min_value=1, max_value=5, max_denominator=7)
rat_d = st.fractions(min_value=0, max_value=F(1, 3), max_denominator=9)


@given(
    mechs=st.lists(st.tuples(rat_r, rat_d), min_size=1, max_size=4),
    exp_t=st.fractions(min_value=F(1, 10), max_value=30, max_denominator=11),
)
def test_recursion_equals_brute_force_product_of_rr(mechs, exp_t):
    # e^eps_i = r_i rational: the product of the k RR pmfs (4^k outcomes) is exact,
    # its profile at t = log(exp_t) an exact rational, enumerated when 4^k <= 2^20 allows
    prod = None
    for r, d in mechs:
        m = RandomizedResponse(None, d, r).pmfs()
        prod = m if prod is None else prod.product(m)
    exact = prod.delta_exact(exp_t)
    assert prod.reversed().delta_exact(exp_t) == exact  # symmetric pair
    if prod.n <= 16:
        assert prod.delta_enumerated_exact(exp_t) == exact
    dist = ShiftDistribution([EpsDelta(None, d, r) for r, d in mechs])
    with working_precision(200):
        v = dist.delta(ball(exp_t).log())
        assert v.contains(arb(exact.numerator) / exact.denominator) or v.overlaps(
            arb(exact.numerator) / exact.denominator
        )
        assert v.rad() < 1e-45


pair_s = st.tuples(eps_s, delta_s)


@given(mechs=st.lists(pair_s, min_size=1, max_size=4), t=t_s)
def test_composition_dominates_each_factor(mechs, t):
    with working_precision(200):
        comp = ShiftDistribution(mechs).delta(ball(t))
        for e, d in mechs:
            single = RandomizedResponse(e, d).delta_at(ball(t))
            assert not comp < single


@given(mechs=st.lists(pair_s, min_size=1, max_size=3), i=st.integers(0, 2), t=t_s,
       de=st.fractions(0, 1, max_denominator=10), dd=st.fractions(0, F(1, 10), max_denominator=100))
def test_monotone_in_every_eps_and_delta(mechs, i, t, de, dd):
    i = i % len(mechs)
    bigger = list(mechs)
    bigger[i] = (mechs[i][0] + de, min(F(1), mechs[i][1] + dd))
    with working_precision(200):
        a = ShiftDistribution(mechs).delta(ball(t))
        b = ShiftDistribution(bigger).delta(ball(t))
        assert not b < a


def test_eps_inverse_brackets_the_budget():
    enc = compose_eps(["0.1,1e-8"], "1e-6", k=100, digits=15)
    assert enc.rel_width() <= arb("1e-12")
    dist = ShiftDistribution(["0.1,1e-8"], 100)
    with working_precision(300):
        assert dist.delta(enc.lo) > ball(F(1, 10**6)) > dist.delta(enc.hi)


def test_inf_decided_exactly():
    # 1 - (1 - 1e-8)^100 < 1e-6 < 1 - (1 - 1e-8)^101
    assert compose_eps(["0.1,1e-8"], "1e-6", k=100).hi.is_finite()
    assert not compose_eps(["0.1,1e-8"], "1e-6", k=101).hi.is_finite()
    # delta equal to 1 - R exactly: the smallest eps is the full shift sum k * eps
    budget = 1 - (1 - F(1, 100)) ** 3
    enc = compose_eps([(F(1, 2), F(1, 100))], budget, k=3)
    assert enc.contains(F(3, 2)) and enc.lo == enc.hi
    # pure DP, delta = 0: eps = sum eps_i
    assert compose_eps(["0.5,0", "0.25,0"], "0", k=2).contains(F(3, 2))


def test_delta_budget_met_at_zero():
    assert compose_eps(["0.1,0"], "0.9", k=3).hi == 0


def test_k1000_fast_and_k1_matches_rr():
    enc = compose_eps(["0.1,1e-8"], "1e-4", k=1000)
    assert enc.rel_width() <= arb("1e-12")
    # k = 1: the RR profile itself
    d = compose_delta(["0.5,0.01"], "0.2", digits=20)
    with working_precision(200):
        assert d.as_ball().overlaps(RandomizedResponse(F(1, 2), F(1, 100)).delta_at(ball(F(1, 5))))


def test_mpmath_binomial_reference():
    # independent: LT Cor 4.7 summed in mpmath at 50 digits
    k, t = 50, mpmath.mpf(2)
    with mpmath.workdps(60):
        e = mpmath.mpf(1) / 10
        p = mpmath.exp(e) / (1 + mpmath.exp(e))
        acc = mpmath.fsum(mpmath.binomial(k, y) * p**y * (1 - p) ** (k - y)
                          * max(0, 1 - mpmath.exp(t - e * (2 * y - k))) for y in range(k + 1))
        ref = 1 - (1 - mpmath.mpf(10) ** -8) ** k * (1 - acc)
        assert in_enclosure(ref, compose_delta(["0.1,1e-8"], "2", k=50, digits=30))


def test_grid_bounds_bracket_the_exact_value():
    mechs = ["0.11,1e-7", "0.137,0", "0.2,1e-8"]
    exact = compose_eps(mechs, "1e-5", k=4)
    gb = compose_eps_grid(mechs, "1e-5", "0.05", k=4)
    assert gb.enclosure.lo <= exact.lo and exact.hi <= gb.enclosure.hi
    assert gb.gap() > 0


@pytest.mark.parametrize("bad", [("-0.1", "0"), ("0.1", "1.5"), ("0.1", "-1e-9")])
def test_bad_pairs(bad):
    with pytest.raises(InvalidParameter):
        compose_delta([bad], "1")


# adv37 A3: an EpsDelta is public and built unchecked; the rule it must meet is the pair's
# (eps >= 0, delta in [0, 1], exact numbers, no bools), so the pair path's refusal is the oracle.
# EpsDelta(1, -1/2) had been composed into a "certified" delta of -1/2.
@pytest.mark.parametrize("eps, delta", [(F(1), F(-1, 2)), (F(1), F(2)), (F(-1), F(0)), (True, False),
                                        (float("nan"), F(0)), (F(1), "abc"), (None, F(0))])
@pytest.mark.parametrize("fn, arg", [(compose_delta, "1"), (compose_eps, "0.5")])
def test_bad_epsdelta_is_refused_like_the_pair(eps, delta, fn, arg):
    with pytest.raises(InvalidParameter) as pair:
        fn([(eps, delta)], arg)
    with pytest.raises(InvalidParameter) as ed:
        fn([EpsDelta(F(1), F(0)), EpsDelta(eps, delta)], arg)
    assert ed.value.name == pair.value.name == "mech"
    assert str(ed.value) == str(pair.value)


@pytest.mark.parametrize("eps, delta", [(0.5, 0), ("1", "1e-3"), (2, F(1, 10))])
def test_epsdelta_reads_numbers_like_the_pair(eps, delta):
    # the same exact value as the pair (a float at its binary value): same enclosure
    a = compose_delta([EpsDelta(eps, delta)] * 3, "1")
    b = compose_delta([(eps, delta)] * 3, "1")
    assert (a.lo, a.hi) == (b.lo, b.hi)


@pytest.mark.parametrize("ed", [EpsDelta(F(1), F(0), exp_eps=F(3)), EpsDelta(None, F(0), exp_eps=F(1, 2)),
                                EpsDelta(None, F(2), exp_eps=F(3)), EpsDelta(None, F(0), exp_eps=True)])
def test_bad_exp_eps_guarantee(ed):
    # exp_eps = e^eps must be an exact number >= 1 (eps >= 0), given instead of eps, not beside it
    with pytest.raises(InvalidParameter) as e:
        compose_delta([ed], "1")
    assert e.value.name == "mech"


def test_bad_k():
    with pytest.raises(InvalidParameter) as e:
        compose_eps(["0.1,0"], "0.1", k=0)
    assert e.value.name == "k"


@given(mechs=st.lists(pair_s, min_size=2, max_size=5), t=t_s)
def test_lattice_equals_literal_recursion_in_mpmath(mechs, t):
    # the arb lattice (arb_poly product) against LT Thm 4.6 evaluated top-down in MPFR
    # directed rounding (the verifier's second route): the ball must meet the enclosure
    from dpverify.recheck.core import arith, mpfr_to_mpf
    from dpverify.recheck.dp import _recursion_iv

    lo, hi = _recursion_iv(arith(256), tuple(mechs), t)
    with mpmath.workdps(60):
        ref_lo, ref_hi = mpfr_to_mpf(lo), mpfr_to_mpf(hi)
        assert ref_hi - ref_lo <= mpmath.mpf(10) ** -60
    with working_precision(200):
        v = ShiftDistribution(mechs).delta(ball(t))
        assert v.rad() < 1e-40
        with mpmath.workdps(60):
            man, ex = v.mid().man_exp() if not v.mid().is_zero() else (0, 0)
            mid = mpmath.ldexp(int(man), int(ex))
            rm, re_ = arb(v.rad()).man_exp() if v.rad() != 0 else (0, 0)
            rad = mpmath.ldexp(int(rm), int(re_))
            assert ref_lo - rad - mpmath.mpf(10) ** -45 <= mid <= ref_hi + rad + mpmath.mpf(10) ** -45


@pytest.mark.parametrize(
    "mech, k, eps, lo, hi",
    [
        # found by review: shifts ordered by float midpoints overflowed (1e400) or
        # underflowed (1e-400) and the sum stopped early, returning [0, 0].
        # Truths: for eps_i = x, k = 3, eps = 2x the composed delta is
        # 1 - E[(1 - e^{t - S})_+]-complement ~ P(S = 3x)(1 - e^{-x}) ~ 1 for x = 1e400;
        # for x = 1e-400, k = 2, eps = 0: delta = p^2 (1 - e^{-2x}) + ... = x/2 + O(x^2)
        (("1e400", "0"), 3, "2e400", "0.99", "1.01"),
        (("1e-400", "0"), 2, "0", "4.99e-401", "5.01e-401"),
        (("1e-400", "0"), 3, "1e-400", "2.49e-401", "2.51e-401"),
    ],
)
def test_extreme_eps_shifts_are_not_dropped(mech, k, eps, lo, hi):
    from dpverify.composition import compose_delta

    enc = compose_delta([mech], eps, k=k)
    with mpmath.workdps(30):
        assert mpmath.mpf(enc.lo_str()) >= mpmath.mpf(lo)
        assert mpmath.mpf(enc.hi_str()) <= mpmath.mpf(hi)


def test_few_shifts_on_a_huge_lattice_are_exact():
    """eps = (0.1, 0.123456789) (a lattice build once ran away to 10.7 GB) reach 4 shifts but span 2.2e8 lattice
    points. Brute force over the 4 outcomes in mpmath (LT Thm 4.6 unrolled)."""
    from dpverify.composition import compose_delta_auto

    mechs = [("0.1", "1e-5"), ("0.123456789", "0")]
    res = compose_delta_auto(["0.1,1e-5", "0.123456789,0"], "0.05")
    assert res.exact
    with mpmath.workdps(50):
        e = [mpmath.mpf(1) / 10, mpmath.mpf(123456789) / 10**9]
        p = [mpmath.exp(x) / (1 + mpmath.exp(x)) for x in e]
        acc = mpmath.mpf(0)
        for y1 in (0, 1):
            for y2 in (0, 1):
                w = (p[0] if y1 else 1 - p[0]) * (p[1] if y2 else 1 - p[1])
                s = e[0] * (2 * y1 - 1) + e[1] * (2 * y2 - 1)
                acc += w * max(0, 1 - mpmath.exp(mpmath.mpf(1) / 20 - s))
        R = 1 - mpmath.mpf(10) ** -5
        ref = 1 - R + R * acc
        assert mpmath.mpf(res.enclosure.lo_str()) <= ref <= mpmath.mpf(res.enclosure.hi_str())
    assert mechs


def test_automatic_grid_brackets_the_exact_value():
    """Forced fallback (tiny budget): the grid bounds contain the exact value."""
    from dpverify.composition import LatticeTooLarge, compose_eps_auto

    mechs = [f"0.{i + 11},1e-9" for i in range(8)]  # 0.11..0.18: lattice span 116 * 5
    exact = compose_eps_auto(mechs, "1e-5", k=5)
    assert exact.exact
    with pytest.raises(LatticeTooLarge):
        compose_eps_auto(mechs, "1e-5", k=5, budget=100, exact=True)
    # the automatic grid works with AUTO_GRID_LATTICE (dpverify.limits); emulate a small exact budget
    approx = compose_eps_auto(mechs, "1e-5", k=5, budget=100)
    assert approx.grid is not None and approx.lattice_estimate > 100
    assert approx.enclosure.lo <= exact.enclosure.lo and exact.enclosure.hi <= approx.enclosure.hi
