"""Finite pairs: (eps0, delta0)-DP via randomized response (LT Thm 4.5) composed
T times equals the exact binomial formula; +inf mass tracked exactly."""

from fractions import Fraction as F

import mpmath
import pytest

from dpverify.ball import ball, working_precision
from dpverify.pld.accountant import Step, refine_query
from dpverify.pld.pairs import FinitePair, approx_dp_pair_exp


def _exact_delta(exp_eps0: F, delta0: F, T: int, eps: F) -> mpmath.mpf:
    """delta_T(eps) = 1 - (1-d0)^T + (1-d0)^T sum_k C(T,k) p^k (1-p)^(T-k)
    (1 - e^(eps - (2k - T) eps0))_+, p = e^eps0 / (1 + e^eps0): the exact
    composition of the randomized-response pair (LT Thm 4.6 / Cor 4.7), summed
    directly over the number k of "+eps0" outcomes."""
    with mpmath.workdps(50):
        e0 = mpmath.mpf(exp_eps0.numerator) / exp_eps0.denominator
        d0 = mpmath.mpf(delta0.numerator) / delta0.denominator
        eps0 = mpmath.log(e0)
        p = e0 / (1 + e0)
        E = mpmath.mpf(eps.numerator) / eps.denominator
        s = mpmath.fsum(mpmath.binomial(T, k) * p**k * (1 - p) ** (T - k)
                        * max(0, 1 - mpmath.exp(E - (2 * k - T) * eps0)) for k in range(T + 1))
        return 1 - (1 - d0) ** T + (1 - d0) ** T * s


@pytest.mark.parametrize("eps", [F(1, 2), F(1), F(2)])
def test_approx_dp_composition_equals_exact_formula(eps):
    pair = approx_dp_pair_exp(F(2), F(1, 1000))
    steps = [Step(lambda d: pair, 20)]
    res = refine_query(steps, ("remove",), kind="delta", target=eps, rel_width=1e-3, time_budget=60)
    ref = _exact_delta(F(2), F(1, 1000), 20, eps)
    with mpmath.workdps(50):
        lo = mpmath.mpf(res.lo.numerator) / res.lo.denominator
        hi = mpmath.mpf(res.hi.numerator) / res.hi.denominator
        assert lo <= ref <= hi
        assert (hi - lo) / lo <= 1.01e-3


def test_inf_mass_is_exact_and_bad_pairs_refused():
    pair = approx_dp_pair_exp(F(3), F(1, 100))
    with working_precision(100):
        assert pair.inf_mass().overlaps(ball(F(1, 100))) and pair.inf_mass().rad() < 1e-25
        # delta(eps) -> delta0 as eps -> infinity: the +inf atom
        assert pair.delta(ball(F(50))).overlaps(ball(F(1, 100)))
    from dpverify.errors import InvalidParameter

    with pytest.raises(InvalidParameter):
        FinitePair((F(1, 2), F(1, 3)), (F(1, 2), F(1, 2)))
    with pytest.raises(InvalidParameter):
        approx_dp_pair_exp(F(1, 2), F(0))


def test_subsampled_approx_dp_profile_matches_the_subsampling_theorem():
    """Poisson subsampling of an eps0-DP pair (RR, delta0 = 0) under remove:
    delta(eps') = 0 at eps' = log(1 + q (e^eps0 - 1)) (the classic amplification
    bound is tight for RR), and delta > 0 just below it."""
    from dpverify.pld.pairs import subsample_finite

    pair = subsample_finite(approx_dp_pair_exp(F(3), F(0)), F(1, 10), "remove")
    with working_precision(200):
        amp = mpmath.log(mpmath.mpf(6) / 5)  # 1 + q (e^eps0 - 1) = 6/5
        e_at = ball(F(6, 5)).log() + ball(F(1, 10**40))
        assert pair.delta(e_at).upper() < 1e-30
        assert pair.delta(ball(F(1, 10))) > 0
    res = refine_query([Step(lambda d: pair, 5)], ("remove",), kind="eps", target=F(1, 10**6),
                       rel_width=1e-3, time_budget=60)
    # 5-fold composition of an eps'-DP pair is at most 5 eps'-DP
    assert float(res.lo) <= 5 * float(amp)  # the truth is <= 5 eps', so the lower end is too


def test_heterogeneous_api_with_laplace_approx_and_gaussian():
    from dpverify.pld import dpsgd as S

    mixed = [S.GaussianSteps.of("2", "0.1", 10), S.laplace_steps("4", "0.1", 10),
             S.approx_dp_steps("2", "1e-7", 3, sampling_rate="0.5")]
    a = S.epsilon(mixed, "1e-5", digits=2)
    only_g = S.dpsgd_epsilon("2", "0.1", 10, "1e-5", digits=2)
    assert a.enclosure.lo > only_g.enclosure.hi  # more mechanisms, more loss
    with pytest.raises(Exception) as exc:
        S.epsilon(mixed, "1e-5", neighboring="replace-one")
    assert getattr(exc.value, "name", "") == "neighboring"
