"""The fixed-cost shortcuts of the PLD accountant (issue 24: row B, sigma 4, q 0.01, T 1e4),
each checked against the route it replaces or an independent one: the grid range's binary64
screen against the ball-only search and mpmath tails, the Chernoff scan in one array against a
lambda-at-a-time scan, the optimistic suffix sums' recurrence against mpmath at 300 digits, and
the plan's tabled float curves against the direct sums."""

from fractions import Fraction

import mpmath
import numpy as np
import pytest
from flint import fmpz_poly

from dpverify.ball import arb_to_fraction, endpoints, working_precision
from dpverify.pld import fourier as F
from dpverify.pld.discretise import LowerDist, UpperDist, grid_range
from dpverify.pld.pairs import SubsampledGaussianPair
from dpverify.pld.queries import ComposedBounds
from ..reference import tail_point_per_lambda

PAIRS = [("4", "0.01"), ("1", "0.01"), ("0.8", "0.004"), ("3", "4096/50000"), ("2", "0.1"),
         ("0.5", "1"), ("50", "0.5"), ("10", "0.001"), ("0.2", "0.9"), ("999", "0.3"), ("0.002", "0.5")]


class _BallsOnly:
    """A pair without the binary64 screen: grid_range then decides every test on balls."""

    def __init__(self, pair):
        self._pair = pair

    def tails(self, eps):
        return self._pair.tails(eps)

    def inf_mass(self):
        return self._pair.inf_mass()


@pytest.mark.parametrize("sigma,q", PAIRS)
def test_screened_grid_range_is_the_ball_search(sigma, q):
    # the screen may only skip balls that would decide the same way: (i0, n) as without it
    for d in ("add", "remove"):
        pair = SubsampledGaussianPair(Fraction(sigma), Fraction(q), d)
        for m in (6, 10, 13):
            for tau in (1e-5, 1e-10, 1e-15, 1e-16, 3e-17, 1e-30, 1e-300, Fraction(1, 10 ** 12)):
                assert grid_range(pair, m, tau) == grid_range(_BallsOnly(pair), m, tau), (sigma, q, d, m, tau)


def _mp_tails(sigma: str, q: str, direction: str, eps: float) -> tuple:
    """(P(L > eps), P(L <= eps)) in mpmath at 60 digits, from the pair's definition."""
    with mpmath.workdps(60):
        s_, q_ = Fraction(sigma), Fraction(q)
        mu = mpmath.mpf(s_.denominator) / s_.numerator
        qq = mpmath.mpf(q_.numerator) / q_.denominator
        e = mpmath.mpf(eps)

        def sf(x):
            return mpmath.erfc(x / mpmath.sqrt(2)) / 2
        if qq == 1:
            return sf(e / mu - mu / 2), sf(mu / 2 - e / mu)
        a = mpmath.expm1(e if direction == "remove" else -e) + qq
        if a <= 0:
            return (1, 0) if direction == "remove" else (0, 1)
        x = (mpmath.log(a) - mpmath.log(qq) + mu * mu / 2) / mu
        if direction == "remove":
            return (1 - qq) * sf(x) + qq * sf(x - mu), (1 - qq) * sf(-x) + qq * sf(mu - x)
        return sf(-x), sf(x)


@pytest.mark.parametrize("sigma,q", PAIRS)
def test_range_floats_within_1e_6_of_mpmath(sigma, q):
    # the screen's premise: where range_floats answers, each float is within 1e-6 relative of
    # the exact tail (values below 1e-290 are only required to be tiny)
    for d in ("add", "remove"):
        pair = SubsampledGaussianPair(Fraction(sigma), Fraction(q), d)
        for k in range(-300, 301, 3):
            eps = k / 40.0
            got = pair.range_floats(eps)
            if got is None:
                continue
            for f, t in zip(got, _mp_tails(sigma, q, d, eps)):
                if t < mpmath.mpf("1e-290"):
                    assert f < 1e-280
                else:
                    assert abs(f - t) <= 1e-6 * t, (sigma, q, d, eps, f, t)


def test_chernoff_scan_in_one_array_is_the_scan_per_lambda():
    # the window's choice (and so every certificate's bytes) rests on these exact integers
    rng = np.random.default_rng(3)
    for trial in range(120):
        n = int(rng.integers(2, 40000 if trial % 12 == 0 else 3000))  # the large ones: row blocks
        x = np.abs(rng.standard_normal(n)) * np.exp(-((np.arange(n) - n / 2) / (n / 8 + 1)) ** 2)
        x[rng.random(n) < 0.05] = 0
        x /= x.sum() * (1 + rng.random())
        a, lt = int(rng.integers(2, 10 ** 6)), -float(rng.uniform(5, 60))
        for above in (True, False):
            assert F._tail_point(x, a, lt, above) == tail_point_per_lambda(x, a, lt, above)


def test_suffix_recurrence_encloses_the_exact_sums():
    # W_j = Qt_j + e^-h W_(j+1) from one evaluation at the top: each ball must contain the exact
    # sum_(k >= j) Qt_k e^(-(k - j) h) (mpmath at 300 digits) and meet the direct evaluation's
    # ball; the P suffixes are exact integers
    rng = np.random.default_rng(5)
    m, K, n = 9, 70, 400
    P = [int(v) for v in rng.integers(0, 2 ** 62, n)]
    Q = [int(v) for v in rng.integers(0, 2 ** 62, n - 7)]
    low = LowerDist(m, K, -50, fmpz_poly(P), fmpz_poly(Q), tilt=Fraction(1, 2 ** (m + 1)))
    up = UpperDist(m, K, -50, fmpz_poly(P), 0)
    cb = ComposedBounds(up, low)
    with working_precision(K + 96):
        got = cb._suffixes(range(180, 200))
        fresh = ComposedBounds(up, low)
        with mpmath.workdps(300):
            r = mpmath.exp(-mpmath.mpf(2) ** -m)
            for j, (p, w) in got.items():
                assert p == sum(P[j:])
                exact = sum(mpmath.mpf(Q[k]) * r ** (k - j) for k in range(j, len(Q)))
                lo, hi = (arb_to_fraction(v) for v in endpoints(w))
                assert mpmath.mpf(lo.numerator) / lo.denominator <= exact <= mpmath.mpf(hi.numerator) / hi.denominator
                assert w.overlaps(fresh._qt_eval(j))


def test_tabled_float_curves_match_the_direct_sums():
    # the plan's bisection reads the tabled curves; they must be the direct sums up to rounding
    from dpverify.pld import plan as PL
    from dpverify.pld.discretise import grid_range as gr
    from dpverify.pld.dpsgd import GaussianSteps

    read = 0
    for sigma, q, T, reach in (("4", "0.01", 10 ** 4, 1.2), ("1", "0.01", 10 ** 6, 180.0), ("1", "0.01", 1000, 2.3)):
        st = GaussianSteps.of(sigma, q, T).step()
        pair = st.make_pair("remove")
        i0, n = gr(pair, 6, 1e-15)
        w = PL._window_at([(pair, T, i0, n)], 10, reach)
        if w is None:
            continue
        read += 1
        fu, fl = w._tabled(w.upper), w._tabled(w.lower)
        assert fu is not w.upper and fl is not w.lower
        for e in np.linspace(0.0, float(w.su[-1]) * 0.9, 37):
            for direct, tabled in ((w.upper(e), fu(e)), (w.lower(e), fl(e))):
                assert abs(direct - tabled) <= 1e-9 * max(direct, 1e-300) + 1e-17, (sigma, e, direct, tabled)
    assert read >= 2


def test_range_floats_decline_where_sigma_has_no_comfortable_float():
    # sigma 1e-2200: mu = 10^2200 has no binary64 value (an OverflowError was an internal error);
    # past sigma 1000 the float x loses the digits the screen's margin assumes
    for sigma in (Fraction(1, 10 ** 2200), Fraction(1, 10 ** 4), Fraction(1001), Fraction(10) ** 90):
        for d in ("add", "remove"):
            assert SubsampledGaussianPair(sigma, Fraction(1, 2), d).range_floats(0.5) is None
