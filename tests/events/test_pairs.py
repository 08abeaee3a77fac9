"""T = 1 hockey-stick curves of the new pairs against independent routes:
mpmath quadrature / closed forms at 50 digits, exact enumeration for the
discrete events. Containment: the mpmath value lies in the arb ball."""

from fractions import Fraction as F

import mpmath
import pytest
from flint import arb

from dpverify.ball import working_precision
from dpverify.events.dispatch import compile_event
from dpverify.events import model as E
from dpverify.events.pairs import MixtureGaussianPair, discrete_gaussian_pair, discrete_laplace_pair, epsilon_delta_pair
from dpverify.pld.pairs import SubsampledGaussianPair

mpmath.mp.dps = 50


def _arb_delta(pair, eps):
    with working_precision(200):
        return pair.delta(arb(str(eps)) if not isinstance(eps, arb) else eps)


def _contains(ball, x):
    lo, hi = mpmath.mpf(ball.lower().str(60, radius=False)), mpmath.mpf(ball.upper().str(60, radius=False))
    tol = mpmath.mpf(10) ** -40
    return lo - tol <= x <= hi + tol


def _hs_density(p, q, eps, a=-40, b=40):
    """H_{e^eps}(P||Q) = int (p - e^eps q)_+ by quadrature on the pieces where
    the integrand is positive (sign changes located on a grid, refined by
    bisection), so the kink never sits inside a quadrature interval."""
    e = mpmath.exp(eps)
    f = lambda x: p(x) - e * q(x)  # noqa: E731
    xs = [mpmath.mpf(a) + (b - a) * mpmath.mpf(i) / 800 for i in range(801)]
    cuts = [xs[0]]
    for u, v in zip(xs, xs[1:]):
        if (f(u) > 0) != (f(v) > 0):
            cuts.append(mpmath.findroot(f, (u, v), solver="anderson"))
    cuts.append(xs[-1])
    total = mpmath.mpf(0)
    for u, v in zip(cuts, cuts[1:]):
        if f((u + v) / 2) > 0:
            total += mpmath.quad(f, [u, (u + v) / 2, v])
    return total


@pytest.mark.parametrize("eps", ["-0.5", "0", "0.25", "1.5"])
def test_mixture_of_gaussians_pair_matches_quadrature(eps):
    s, cs, ps = F(3, 2), (F(0), F(1), F(5, 2)), (F(1, 2), F(1, 4), F(1, 4))
    sig = mpmath.mpf(3) / 2
    mix = lambda x: sum(mpmath.mpf(p.numerator) / p.denominator * mpmath.npdf(x, mpmath.mpf(c.numerator) / c.denominator, sig)  # noqa: E731
                        for c, p in zip(cs, ps))
    base = lambda x: mpmath.npdf(x, 0, sig)  # noqa: E731
    e = mpmath.mpf(eps)
    assert _contains(_arb_delta(MixtureGaussianPair(s, cs, ps, "remove"), eps), _hs_density(mix, base, e))
    assert _contains(_arb_delta(MixtureGaussianPair(s, cs, ps, "add"), eps), _hs_density(base, mix, e))


@pytest.mark.parametrize("eps", ["-1", "0", "0.3", "2"])
def test_wor_replace_one_pair_is_the_max_of_both_orientations(eps):
    """AFA Prop 30 / Cor 32: one step's curve is max(H((1-g)P+gQ||P), H(P||(1-g)P+gQ))
    with (P, Q) = (N(0,1), N(2/z,1)), computed here by quadrature."""
    z, _g = F(3, 2), F(1, 10)
    mu = 2 / mpmath.mpf(1.5)
    P = lambda x: mpmath.npdf(x)  # noqa: E731
    M = lambda x: (1 - mpmath.mpf("0.1")) * mpmath.npdf(x) + mpmath.mpf("0.1") * mpmath.npdf(x, mu)  # noqa: E731
    e = mpmath.mpf(eps)
    truth = max(_hs_density(M, P, e), _hs_density(P, M, e))
    plan = compile_event(E.SampledWithoutReplacement(10, 1, E.Gaussian(z)), "replace-one")
    pair = plan.blocks[0].make_pair("replace")
    assert _contains(_arb_delta(pair, eps), truth)


@pytest.mark.parametrize("eps", ["0", "0.2", "0.75", "1.4"])
def test_discrete_laplace_by_enumeration(eps):
    a, D = F(1, 2), 2
    am = mpmath.mpf(a.numerator) / a.denominator
    pmf = lambda x: mpmath.tanh(am / 2) * mpmath.exp(-am * abs(x))  # noqa: E731
    e = mpmath.exp(mpmath.mpf(eps))
    truth = mpmath.nsum(lambda x: max(pmf(x) - e * pmf(x - D), 0), [-mpmath.inf, mpmath.inf])
    assert _contains(_arb_delta(discrete_laplace_pair(a, D), eps), truth)


@pytest.mark.parametrize("eps", ["-0.5", "0", "0.125", "0.6"])
def test_discrete_gaussian_by_enumeration(eps):
    s2 = mpmath.mpf(9) / 4
    t = lambda x: mpmath.exp(-mpmath.mpf(x) ** 2 / (2 * s2))  # noqa: E731
    Z = mpmath.nsum(t, [-mpmath.inf, mpmath.inf])
    e = mpmath.exp(mpmath.mpf(eps))
    truth = sum(max(t(x) - e * t(x - 1), 0) for x in range(-200, 202)) / Z
    assert _contains(_arb_delta(discrete_gaussian_pair(F(3, 2), 1), eps), truth)


@pytest.mark.parametrize("eps", ["0", "0.5", "1"])
def test_epsilon_delta_pair_closed_form(eps):
    """LT Thm 4.5: delta(eps) = d0 + (1-d0)(e^e0 - e^eps)_+/(1+e^e0)."""
    e0, d0 = mpmath.mpf("0.75"), mpmath.mpf("1e-3")
    truth = d0 + (1 - d0) * max(mpmath.exp(e0) - mpmath.exp(mpmath.mpf(eps)), 0) / (1 + mpmath.exp(e0))
    assert _contains(_arb_delta(epsilon_delta_pair(F(3, 4), F(1, 1000)), eps), truth)


@pytest.mark.parametrize("eps", ["0", "0.7"])
def test_q1_gaussian_closed_form(eps):
    """q = 1: delta = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2) (GDPT eq. 2)."""
    mu = mpmath.mpf(1) / mpmath.mpf("0.8")
    e = mpmath.mpf(eps)
    truth = mpmath.ncdf(-e / mu + mu / 2) - mpmath.exp(e) * mpmath.ncdf(-e / mu - mu / 2)
    plan = compile_event(E.Gaussian(F(4, 5)), "add-remove")
    for d in plan.directions:
        assert _contains(_arb_delta(plan.blocks[0].make_pair(d), eps), truth)


@pytest.mark.parametrize("eps", ["-0.3", "0", "0.4", "1.1"])
def test_mog_with_binary_sensitivity_is_the_subsampled_gaussian(eps):
    """MoG(s; {0, 1}; {1-q, q}) is the Poisson-subsampled Gaussian pair (same laws)."""
    q, s = F(1, 5), F(6, 5)
    for d in ("remove", "add"):
        a = _arb_delta(MixtureGaussianPair(s, (F(0), F(1)), (1 - q, q), d), eps)
        b = _arb_delta(SubsampledGaussianPair(s, q, d), eps)
        assert a.overlaps(b) and abs(a - b) < arb(10) ** -40


def test_mog_with_one_component_is_the_gaussian_mechanism():
    a = _arb_delta(MixtureGaussianPair(F(2), (F(1),), (F(1),), "remove"), "0.3")
    b = _arb_delta(SubsampledGaussianPair(F(2), F(1), "remove"), "0.3")
    assert abs(a - b) < arb(10) ** -40
