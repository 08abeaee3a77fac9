"""The add direction's upper end read off the remove direction's composed upper curve at -eps
(queries.ComposedBounds.eps_upper_swapped, pairs.swapped_pairs): the swap identity
delta_(Q,P)(eps) = e^eps delta_(P,Q)(-eps) + 1 - e^eps, checked against routes that do not use it:
the add pairs composed themselves (their certified lower end) and, for one step, the add
curve's closed form in mpmath."""

from __future__ import annotations

from fractions import Fraction

import mpmath
import pytest

from dpverify.pld import dpsgd as S
from dpverify.pld import queries as Qm
from dpverify.pld.discretise import discretise
from dpverify.pld.pairs import SubsampledGaussianPair
from dpverify.pld.queries import ComposedBounds
from dpverify.ball import working_precision
from dpverify.relation import Direction


def _recorded(monkeypatch) -> list:
    got: list = []
    orig = Qm.ComposedBounds.eps_upper_swapped

    def spy(self, delta, hint=None):
        r = orig(self, delta, hint)
        got.append(r)
        return r

    monkeypatch.setattr(Qm.ComposedBounds, "eps_upper_swapped", spy)
    return got


@pytest.mark.parametrize("sigma,q,T", [("4", "0.01", 10000), ("1", "0.01", 1000), ("2", "0.1", 100),
                                       ("1", "0.2", 10)])
def test_swapped_upper_end_encloses_the_add_directions_own_lower_end(monkeypatch, sigma, q, T):
    # soundness against the add pairs composed themselves (no swap: one direction only): the
    # swapped upper end must lie at or above their certified lower end, and near their upper end
    got = _recorded(monkeypatch)
    both = S.dpsgd_epsilon(sigma, q, T, "1e-5", rel_width=1e-3)
    assert len(got) == 1 and got[0] is not None  # the add direction was settled by the swap
    hi_sw = got[0]
    assert both.directions[Direction.ADD] == (None, hi_sw)
    monkeypatch.undo()
    add = S.dpsgd_epsilon(sigma, q, T, "1e-5", neighboring="add", rel_width=1e-4)
    lo_add, hi_add = add.directions[Direction.ADD]
    assert lo_add is not None and hi_sw >= lo_add, (float(hi_sw), float(lo_add))
    # and near it: the swap is the add direction's pessimistic curve on the remove direction's
    # grid 2^-m (the chord error, about h^2 in delta, a few h in eps at most)
    assert hi_sw - hi_add <= Fraction(4, 1 << both.grid_exponent), (float(hi_sw), float(hi_add))


def _add_eps_mpmath(sigma: int, q: Fraction, delta: Fraction) -> mpmath.mpf:
    """epsilon(delta) of ONE add step from its closed form: P = N(0, 1),
    Q = (1 - q) N(0, 1) + q N(mu, 1), L(x) = -log(1 - q + q e^(mu x - mu^2 / 2)); L > eps iff
    x < x_eps, so delta(eps) = Phi(x_eps) - e^eps ((1 - q) Phi(x_eps) + q Phi(x_eps - mu))."""
    with mpmath.workdps(40):
        mu = mpmath.mpf(1) / sigma
        qq = mpmath.mpf(q.numerator) / q.denominator
        d = mpmath.mpf(delta.numerator) / delta.denominator

        def curve(e):
            x = (mpmath.log(mpmath.expm1(-e) + qq) - mpmath.log(qq) + mu * mu / 2) / mu
            return mpmath.ncdf(x) - mpmath.exp(e) * ((1 - qq) * mpmath.ncdf(x) + qq * mpmath.ncdf(x - mu)) - d

        # the curve is nonincreasing; the add loss is below -log(1 - q), where delta is 0
        lo, hi = mpmath.mpf(0), -mpmath.log(1 - qq) * (1 - mpmath.mpf(10) ** -30)
        assert curve(lo) > 0 > curve(hi)
        for _ in range(120):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if curve(mid) > 0 else (lo, mid)
        return hi


@pytest.mark.parametrize("sigma,q,m", [(1, Fraction(1, 2), 12), (2, Fraction(1, 5), 12), (1, Fraction(1, 10), 14)])
def test_swapped_upper_end_of_one_step_against_the_closed_form(sigma, q, m):
    # one remove step discretised (no composition): its upper curve at -eps, swapped, bounds the
    # add step's epsilon(delta) from above; the closed form (mpmath, 40 digits) is the truth
    delta = Fraction(1, 10 ** 5)
    K = 80
    pair = SubsampledGaussianPair(Fraction(sigma), q, "remove")
    with working_precision(K + 64):
        U, _ = discretise(pair, m, K, 1e-30)
    with working_precision(K + 96):
        hi = ComposedBounds(U, None).eps_upper_swapped(delta)
    truth = _add_eps_mpmath(sigma, q, delta)
    assert hi is not None
    assert mpmath.mpf(hi.numerator) / hi.denominator >= truth, (float(hi), truth)
    # and close: the pessimistic curve's chord error at 2^-m (a wrong identity is off by far more)
    assert float(hi) - float(truth) <= 2.0 ** (-m + 3) * max(1.0, float(truth)), (float(hi), truth)


def test_swapped_pairs_only_for_subsampled_gaussian_add_remove():
    from dpverify.pld.dpsgd import GaussianSteps
    from dpverify.pld.pairs import swapped_pairs as _swapped_pairs

    steps = [GaussianSteps(Fraction(2), Fraction(1, 10), 5).step()]
    assert _swapped_pairs(steps, "remove", "add") and _swapped_pairs(steps, "add", "remove")
    assert not _swapped_pairs(steps, "remove", "remove")
    gauss = [GaussianSteps(Fraction(2), Fraction(1), 5).step()]  # q = 1: both directions the same law
    assert not _swapped_pairs(gauss, "remove", "add")


@pytest.mark.parametrize("sigma,q,T,eps", [("4", "0.01", 10000, "0.947"), ("1", "0.01", 1000, "1.828"),
                                           ("3", "4096/50000", 2500, "6.579")])
def test_swapped_delta_upper_end_encloses_the_add_directions_own_lower_end(monkeypatch, sigma, q, T, eps):
    # the delta query's form of the same identity (ComposedBounds.delta_upper_swapped): at or above
    # the add pairs' own certified lower end of delta(eps), and close to their upper end
    got: list = []
    orig = Qm.ComposedBounds.delta_upper_swapped

    def spy(self, e):
        r = orig(self, e)
        got.append(r)
        return r

    monkeypatch.setattr(Qm.ComposedBounds, "delta_upper_swapped", spy)
    both = S.dpsgd_delta(sigma, q, T, eps, rel_width=1e-3)
    assert len(got) == 1 and got[0] is not None
    hi_sw = got[0]
    assert both.directions[Direction.ADD] == (None, hi_sw)
    monkeypatch.undo()
    add = S.dpsgd_delta(sigma, q, T, eps, neighboring="add", rel_width=1e-4)
    lo_add, hi_add = add.directions[Direction.ADD]
    assert lo_add is not None and hi_sw >= lo_add, (float(hi_sw), float(lo_add))
    assert hi_sw <= hi_add * Fraction(11, 10), (float(hi_sw), float(hi_add))
