"""Tails on the grid (the discretisation's input) against mpmath at 50 digits:
the mixture-of-Gaussians pair proposes its roots for the whole grid at once
in numpy and proves them by one interval Newton step; every knot's ball must
hold mpmath's tails (root by bisection of the loss, tails by erfc)."""

from fractions import Fraction as F

import mpmath
import pytest
from flint import arb

from dpverify.ball import working_precision
from dpverify.events.pairs import MixtureGaussianPair

MIXTURES = [
    ((F(0), F(1)), (F(99, 100), F(1, 100))),
    ((F(0), F(1), F(2)), (F(98, 100), F(1, 100), F(1, 100))),
    ((F(1), F(3)), (F(1, 2), F(1, 2))),
]


def _mp_tails(sens, probs, sigma, direction, eps):
    """(P(L > eps), Q(L > eps)) in mpmath: g(x) = log sum p_i e^{mu_i x - mu_i^2/2}
    is increasing; its root by bisection, the normal tails by erfc."""
    mp = mpmath.mp
    comps = [(mp.mpf(c.numerator) / c.denominator / sigma, mp.mpf(p.numerator) / p.denominator)
             for c, p in zip(sens, probs) if p != 0]

    def g(x):
        return mp.log(mp.fsum(p * mp.exp(mu * x - mu * mu / 2) for mu, p in comps))

    y = eps if direction == "remove" else -eps
    p0 = mp.fsum(p for mu, p in comps if mu == 0)
    sf = lambda t: mp.erfc(t / mp.sqrt(2)) / 2  # noqa: E731
    if p0 > 0 and y <= mp.log(p0):
        return (mp.mpf(1), mp.mpf(1)) if direction == "remove" else (mp.mpf(0), mp.mpf(0))
    lo, hi = mp.mpf(-1), mp.mpf(1)
    while g(lo) > y:
        lo *= 2
    while g(hi) < y:
        hi *= 2
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if g(mid) < y else (lo, mid)
    x = (lo + hi) / 2
    if direction == "remove":
        return mp.fsum(p * sf(x - mu) for mu, p in comps), sf(x)
    return sf(-x), mp.fsum(p * sf(mu - x) for mu, p in comps)


@pytest.mark.parametrize("sens,probs", MIXTURES)
@pytest.mark.parametrize("direction", ["remove", "add"])
def test_mixture_grid_tails_hold_the_mpmath_tails(sens, probs, direction):
    pair = MixtureGaussianPair(F(1), sens, probs, direction)
    m, i0, n = 8, -40, 900
    with working_precision(140):
        P, Q = pair.tails_at_grid(m, i0, n)
    mpmath.mp.dps = 50
    for i in list(range(i0, n + 1, 37)) + [i0, n]:
        p, q = _mp_tails(sens, probs, 1, direction, mpmath.mpf(i) / 2 ** m)
        k = i - i0
        for ball_, ref in ((P[k], p), (Q[k], q)):
            ref_ball = arb(mpmath.nstr(ref, 45)) if ref != 0 else arb(0)
            # mpmath's value to 45 digits (its error far below the balls' radii)
            assert ball_.overlaps(ref_ball + arb(0, float(abs(ref)) * 1e-40 + 1e-300)), (i, direction)
        assert P[k].rad() < 1e-30 and Q[k].rad() < 1e-30
