"""Characteristic functions of the privacy loss against their definition
(AFA Def 12) by rigorous integration (acb.integral) with proven tail bounds."""

from fractions import Fraction

import mpmath
import pytest
from flint import acb, arb

from dpverify.ball import ball, normal_sf, working_precision
from dpverify.transforms import (
    FinitePair,
    compose_phi,
    gaussian_phi,
    gaussian_pld_cdf,
    laplace_phi,
    levy_cdf_estimate,
    rr_phi,
)
from tests.reference import in_enclosure

TS = ["0", "0.5", "-1.25", "3", "10"]


def _close(a: acb, b: acb, tol=arb(10) ** -25) -> bool:
    return bool((a - b).abs_upper() < tol)


@pytest.mark.parametrize("t", TS)
def test_gaussian_phi_matches_definition(t):
    """E_P[e^{i t L}], P = N(mu, 1), L(o) = mu o - mu^2/2, integrated on [-R, R];
    |integrand| <= p(o), so the tails are at most 2 Phibar(R - mu)."""
    mu = Fraction(3, 2)
    with working_precision(120):
        m, tb = ball(mu), arb(t)
        R = arb(30)
        f = lambda o, _: (-(o - acb(m)) ** 2 / 2).exp() / (2 * arb.pi()).sqrt() * (acb(0, tb) * (acb(m) * o - acb(m * m / 2))).exp()
        val = acb.integral(f, -R, R) + acb(arb(0, (2 * normal_sf(R - m)).upper()), arb(0, (2 * normal_sf(R - m)).upper()))
        assert _close(val, gaussian_phi(mu, tb), arb(10) ** -20)


@pytest.mark.parametrize("t", TS)
def test_laplace_phi_matches_definition(t):
    """AFA Lemma 34 (corrected): P = Lap(0, b), Q = Lap(D, b), r = D/b; the loss is
    (|o - D| - |o|)/b; integrate piecewise on [-R, 0], [0, D], [D, R]; tails <= e^{-R/b}."""
    D, b = Fraction(1), Fraction(2, 3)
    r = D / b
    with working_precision(120):
        Db, bb, tb = ball(D), ball(b), arb(t)
        left = acb.integral(lambda o, _: (o / acb(bb)).exp() / (2 * acb(bb)) * acb(0, tb * Db / bb).exp(), -80, 0)
        mid = acb.integral(lambda o, _: (-o / acb(bb)).exp() / (2 * acb(bb)) * (acb(0, tb) * (acb(Db) - 2 * o) / acb(bb)).exp(), 0, Db)
        right = acb.integral(lambda o, _: (-o / acb(bb)).exp() / (2 * acb(bb)) * acb(0, -tb * Db / bb).exp(), Db, 80)
        tail = (-arb(80) / bb).exp()
        val = left + mid + right + acb(arb(0, tail.upper()), arb(0, tail.upper()))
        assert _close(val, laplace_phi(r, tb), arb(10) ** -20)


def test_laplace_printed_proof_last_line_is_wrong():
    """The printed last line of AFA Lemma 34's proof has e^{(i a + 1)/lambda}; with that
    term phi(0) would be (1 + e^{1/lambda})/2 != 1. The corrected formula gives 1."""
    with working_precision(100):
        assert _close(laplace_phi(Fraction(3, 2), arb(0)), acb(1))
        lam = arb(2) / 3
        printed0 = (1 + ((arb(1)) / lam).exp()) / 2
        assert printed0 > 1


@pytest.mark.parametrize("t", TS)
def test_rr_and_finite_phi_match_definition(t):
    p = Fraction(3, 4)
    pair = FinitePair([p, 1 - p], [1 - p, p])
    with working_precision(100):
        tb = arb(t)
        assert _close(rr_phi(p, tb), pair.phi(tb))
        assert _close(pair.phi(tb), pair.phi_prime(tb))  # RR is symmetric
        # direct Def 12 sum for a non-symmetric finite pair
        fp = FinitePair([Fraction(1, 2), Fraction(1, 3), Fraction(1, 6)], [Fraction(1, 6), Fraction(1, 3), Fraction(1, 2)])
        with mpmath.workdps(40):
            ps, qs = [mpmath.mpf(1) / 2, mpmath.mpf(1) / 3, mpmath.mpf(1) / 6], [mpmath.mpf(1) / 6, mpmath.mpf(1) / 3, mpmath.mpf(1) / 2]
            ref = sum(pp * mpmath.exp(1j * mpmath.mpf(t) * mpmath.log(pp / qq)) for pp, qq in zip(ps, qs))
            got = fp.phi(tb)
            assert abs(complex(got.mid()) - complex(ref)) < 1e-15


def test_composition_multiplies_and_gaussian_composes_to_gaussian():
    """phi of T Gaussian steps with mu is the phi of one step with mu sqrt(T) (mu^2 adds)."""
    with working_precision(100):
        comp = compose_phi([lambda t: gaussian_phi(Fraction(1, 2), t)], [4])
        for t in TS:
            assert _close(comp(arb(t)), gaussian_phi(Fraction(1), arb(t)))


@pytest.mark.parametrize("mu,x", [("1", "0.3"), ("0.5", "-0.2"), ("2", "4")])
def test_gaussian_levy_inversion_is_certified(mu, x):
    """AFA Lemma 18 for the Gaussian: the loss under P is N(mu^2/2, mu^2)."""
    enc = gaussian_pld_cdf(mu, x, 14)
    with mpmath.workdps(40):
        m, xx = mpmath.mpf(mu), mpmath.mpf(x)
        ref = mpmath.ncdf((xx - m * m / 2) / m)
    assert in_enclosure(ref, enc)


def test_levy_estimate_for_rr_is_only_an_estimate():
    """RR's loss has atoms at +-r: phi does not decay and the truncated inversion
    is not certifiable; the estimate lands near the mid-jump value, not on F."""
    import cmath
    import math

    p = 0.75
    r = math.log(p / (1 - p))
    phi = lambda t: p * cmath.exp(1j * t * r) + (1 - p) * cmath.exp(-1j * t * r)
    est = levy_cdf_estimate(phi, 0.0, 200.0, 40000)
    assert abs(est - 0.25) < 0.01  # F(0) = P[L = -r] = 1/4
