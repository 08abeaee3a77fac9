"""delta(eps) of Gaussian steps (sampling rate 1) far below any float law: the refinement sizes
its unit from the closed form delta_mu(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)
(Balle & Wang 2018 Thm 8), mu^2 = sum_i T_i / sigma_i^2. Checked against mpmath at 60 digits
(the same closed form, an independent implementation) and against the grid's own certified
enclosure, which must contain the mpmath value."""

from fractions import Fraction as F

import mpmath
import pytest

from dpverify.pld.dpsgd import GaussianSteps
from dpverify.pld.refine import Step, _gaussian_scale, refine_query
from dpverify.pld.pairs import SubsampledGaussianPair


def _delta_mu(mu2: F, eps: F) -> mpmath.mpf:
    """delta_mu(eps) at 60 digits; -e^eps Phi(b) is computed as -e^(eps + log Phi(b)) so that
    nothing overflows at eps = 37."""
    mpmath.mp.dps = 60
    mu = mpmath.sqrt(mpmath.mpf(mu2.numerator) / mu2.denominator)
    e = mpmath.mpf(eps.numerator) / eps.denominator
    a, b = -e / mu + mu / 2, -e / mu - mu / 2
    return mpmath.ncdf(a) - mpmath.exp(e + mpmath.log(mpmath.ncdf(b)))


def _frac(x: mpmath.mpf) -> F:
    return F(mpmath.nstr(x, 55, min_fixed=-10**4, max_fixed=10**4))


@pytest.mark.parametrize("blocks,eps,dirs", [
    ([("1", 1)], F(37), ("add", "remove")),
    ([("1", 1)], F(75, 2), ("remove",)),
    ([("2", 3), ("3", 5)], F(20), ("add", "remove")),  # mu^2 = 3/4 + 5/9
    ([("1", 1)], F(12), ("replace",)),  # replace-one: mu = 2 / sigma
    ([("4", 100)], F(1, 2), ("add", "remove")),  # a large delta: the bound is still below it
])
def test_gaussian_scale_is_a_tight_lower_bound(blocks, eps, dirs):
    steps = [GaussianSteps.of(s, 1, n).step() for s, n in blocks]
    shift = 2 if dirs == ("replace",) else 1
    mu2 = sum((F(n) * shift * shift / (F(s) ** 2) for s, n in blocks), F(0))
    ref = _frac(_delta_mu(mu2, eps))
    got = _gaussian_scale(steps, dirs, eps)
    assert got is not None and 0 < got <= ref
    assert ref - got <= ref * F(1, 2**100)  # 128 bits: a lower end, not a loose one


def test_gaussian_scale_declines_subsampled_steps():
    steps = [GaussianSteps.of("1", 1, 1).step(), GaussianSteps.of("1", F(1, 2), 1).step()]
    assert _gaussian_scale(steps, ("add", "remove"), F(3)) is None


@pytest.mark.parametrize("eps", [F(37), F(75, 2)])
def test_one_gaussian_step_at_a_tiny_delta_is_answered_on_one_level(eps):
    """sigma 1, one step, eps 37 (delta 1.48e-293) and 37.5 (1.5e-301): just above the Renyi tail's
    2^-1000 the query stays on the grid; the enclosure contains the 60-digit closed form, is
    narrower than asked, and the unit was right on the first level (it took 28 rescaling levels
    when sized by the upper end)."""
    ref = _frac(_delta_mu(F(1), eps))
    step = Step(lambda d: SubsampledGaussianPair(F(1), F(1), d), 1)
    res = refine_query([step], ("remove",), kind="delta", target=eps, rel_width=1e-4)
    assert not res.tail
    assert res.lo <= ref <= res.hi
    assert res.hi - res.lo <= F(1, 10**4) * res.lo
    assert len(res.levels) == 1
