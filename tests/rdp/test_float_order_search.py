"""adv43 R1: `rdp epsilon` of a subsampled Gaussian at a tiny sampling rate (1e-15, 1e-400) ran to its
time budget (and overran a 5 s budget six-fold): the float search for the best order evaluated the
certified quadrature (up to 20,000 pieces an order at large orders) at about 80 orders. The search now
proposes from a float form of log A_alpha (MTZ 2019 Sec 3.3), checked here against the certified
route it stands in for; the certified answer is unchanged (it is proved on cells over all orders)."""

from fractions import Fraction

import pytest
from flint import arb

from dpverify.ball import working_precision
from dpverify.rdp import subsampled_gaussian as SG
from dpverify.rdp.float_search import float_log_a
from dpverify.rdp.infimum import rdp_epsilon


@pytest.mark.parametrize("alpha, q, sigma", [
    ("3/2", "0.01", "1"), ("2", "0.01", "1"), ("10", "0.1", "2"), ("373/10", "1e-8", "1"),
    ("29/4", "0.5", "0.7"), ("601/2", "1e-15", "1"), ("3", "1e-400", "1"), ("1001/1000", "0.3", "5"),
    ("50", "0.9", "3"),
])
def test_the_float_log_a_matches_the_certified_one(alpha, q, sigma):
    a, qq, s = Fraction(alpha), Fraction(q), Fraction(sigma)
    with working_precision(96):
        ref = SG.log_a_integer(int(a), qq, s) if a.denominator == 1 else \
            SG.log_a_real(arb(a.numerator) / a.denominator, qq, s)
        lo, hi = float(ref.lower()), float(ref.upper())
    got = float_log_a(float(a), qq, float(s))
    # a proposal, so only near: relative 1e-7 (the series cancels near alpha = 1: 5e-9 at 1.001)
    assert abs(got - (lo + hi) / 2) <= 1e-7 * max(abs(lo), 1e-300) + 1e-300, (got, lo, hi)


def test_a_tiny_sampling_rate_is_answered():
    # before: no answer within the budget. The enclosure's check is the certified proof itself
    # (cells over all orders); here its value is checked against a bound that holds at any order:
    # eps(alpha) = T log A_alpha / (alpha - 1) + log(1/delta) / (alpha - 1), at the recorded order
    # alpha*, computed independently in floats from float_log_a, must be >= the certified upper end
    # up to the proposal's rounding
    from dpverify.rdp.composition import compose

    curve = compose([SG.SubsampledGaussianCurve(Fraction(1), Fraction(1, 10**15))], [10])
    ans = rdp_epsilon(curve, Fraction(1, 10**5), "classic", digits=8, time_budget=600)
    a = float(ans.alpha)
    import math
    direct = (10 * float_log_a(a, Fraction(1, 10**15), 1.0) + math.log(10**5)) / (a - 1)
    hi = float(ans.enclosure.hi.upper())
    assert 0 < hi and abs(direct - hi) <= 1e-7 * hi, (direct, hi)


def test_the_float_form_stops_at_the_certified_order_cap():
    """adv44 R2: past MAX_SUBSAMPLED_ORDER the certified route refuses every order, but the float form
    summed about alpha terms an order, and the scan walked on to alpha ~ sigma^2 log(1/q) (5e12 at
    sigma 1e6): minutes, where the arb proposal used to refuse at once. The float form now declines
    there (None: the arb route proposes, and refuses)."""
    from dpverify.limits import MAX_SUBSAMPLED_ORDER
    from dpverify.rdp.float_search import _float_cgf

    curve = SG.SubsampledGaussianCurve(Fraction(100), Fraction(1, 100))
    assert _float_cgf(curve, float(MAX_SUBSAMPLED_ORDER)) is not None  # at the cap: still proposed
    assert _float_cgf(curve, 2.0 * MAX_SUBSAMPLED_ORDER) is None


def test_a_series_that_does_not_settle_is_no_proposal():
    """adv44 R3: at orders near 1 and q = 0.9 the series does not settle within its term cap and the
    float form returned NaN, which the scan read as an infinite eps (a blind proposal). It is None
    now: the arb route at 64 bits proposes there, as it did before the float form."""
    from dpverify.rdp.float_search import _float_cgf

    curve = SG.SubsampledGaussianCurve(Fraction(7, 10), Fraction(9, 10))
    v = _float_cgf(curve, 1.1)
    assert v is None or v == v  # never NaN


def test_a_huge_noise_multiplier_is_refused_at_the_order_cap(capsys):
    """sigma 1e6, q 0.01, one step: the infimum over orders lies far past the certified cap, so the
    answer is exit 3 naming the cap (a 60 s budget: before the fix this was the clock's exit 3)."""
    from dpverify.cli import main

    assert main(["rdp", "epsilon", "--mechanism", "subsampled-gaussian", "--noise-multiplier", "1e6",
                 "--sampling-rate", "0.01", "--steps", "1", "--delta", "1e-5", "--time-budget", "60"]) == 3
    assert "orders <= 20000 only" in capsys.readouterr().err


def test_many_steps_near_order_one_are_answered():
    """adv44 R4: at 10^9 steps (sigma 1, q 0.01) the best order is 1.0116, where log A_alpha is about
    1e-6 and the float form's log-sum of O(1) terms errs by about 1e-16: its proposal was noisy at the
    1e-10 level the proof of the infimum needs, and the query ran to its budget (exit 3). Such small
    values are proposed by the arb route again. The upper end is checked against eps(alpha*) at the
    recorded order, T log A / (alpha - 1) + log(1/delta) / (alpha - 1), with log A by mpmath's
    quadrature of E_{z ~ N(0, 1)}[(1 - q + q e^{(2z - 1)/2})^alpha] at 50 digits (an independent
    route): the infimum is at most the value at any order, and at alpha* it is within the width."""
    import mpmath

    from dpverify.rdp.composition import compose

    T, q = 10**9, Fraction(1, 100)
    curve = compose([SG.SubsampledGaussianCurve(Fraction(1), q)], [T])
    ans = rdp_epsilon(curve, Fraction(1, 10**5), "classic", digits=10, time_budget=120)
    lo, hi = float(ans.enclosure.lo.lower()), float(ans.enclosure.hi.upper())
    with mpmath.workdps(50):
        a = mpmath.mpf(ans.alpha.numerator) / ans.alpha.denominator if isinstance(ans.alpha, Fraction) \
            else mpmath.mpf(str(ans.alpha))
        qq = mpmath.mpf(1) / 100
        f = lambda z: mpmath.npdf(z) * (1 - qq + qq * mpmath.exp((2 * z - 1) / 2)) ** a
        log_a = mpmath.log(mpmath.quad(f, [-mpmath.inf, -10, 0, 10, 40, mpmath.inf]))
        direct = float((T * log_a + mpmath.log(10**5)) / (a - 1))
    assert lo <= hi <= direct * (1 + 1e-9), (lo, hi, direct)
    assert abs(direct - hi) <= 1e-8 * hi, (direct, hi)


@pytest.mark.parametrize("alpha, q, sigma", [("7/2", "0.5", "1e4"), ("2", "0.99", "1e3"), ("1001/1000", "0.3", "1e5")])
def test_at_a_huge_sigma_the_float_form_is_skipped_where_it_would_not_propose(alpha, q, sigma):
    """Where alpha^2 < 2^-16 sigma^2 the float form is not summed (at sigma 1e20, q 0.5 its series took
    ~1e5 terms an order: `rdp epsilon` ran past 60 s of proposals) and the arb route proposes, as it did
    for every |log A| below 2^-16: the certified log A_alpha (independent of the float form) lies below
    alpha (alpha - 1) / (2 sigma^2) < 2^-16 (q = 1's value; mixing in N(0, 1) only lowers it)."""
    from dpverify.rdp.float_search import _FLOAT_LOG_A_MIN, _float_cgf

    a, qq, s = Fraction(alpha), Fraction(q), Fraction(sigma)
    assert a * a < Fraction(_FLOAT_LOG_A_MIN) * s * s
    assert _float_cgf(SG.SubsampledGaussianCurve(s, qq), float(a)) is None
    with working_precision(96):
        ref = SG.log_a_integer(int(a), qq, s) if a.denominator == 1 else \
            SG.log_a_real(arb(a.numerator) / a.denominator, qq, s)
        bound = a * (a - 1) / (2 * s * s)
        assert ref.upper() < arb(bound.numerator) / bound.denominator
        assert abs(float(ref.mid())) < _FLOAT_LOG_A_MIN


def test_a_huge_sigma_is_undecided_for_its_order_cap_not_its_clock(capsys):
    """sigma 1e20, q 0.5, classic: the infimum over alpha lies near alpha ~ sigma, past the certified
    orders (MAX_SUBSAMPLED_ORDER): exit 3 for that reason, where the float proposals used to run to the
    time budget first."""
    from dpverify.cli import main

    argv = ["rdp", "epsilon", "--mechanism", "subsampled-gaussian", "--sampling-rate", "0.5", "--noise-multiplier",
            "1e20", "--steps", "1", "--delta", "0.1", "--time-budget", "60"]
    assert main(argv) == 3
    assert "orders <= 20000 only" in capsys.readouterr().err
