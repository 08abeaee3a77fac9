"""LT Thm 3.2 / 3.3 / 3.5 by rigorous integration, against mpmath closed forms
and mpmath quadrature of the defining integrals (independent routes)."""

from fractions import Fraction

import mpmath
import pytest
from flint import acb
from hypothesis import given
from hypothesis import strategies as st

from dpverify.ball import ball, working_precision
from dpverify.errors import InvalidParameter
from dpverify.transforms.laplace import (
    gaussian_pld,
    laplace_pld,
    partial_transform,
    profile_by_eq22,
    profile_by_eq23,
    renyi_moment,
    renyi_moment_by_eq27,
    rr_pld,
)

from ..reference import delta_mu_ref, mpf_exact


def _contains(x, ref, dps=40):
    from dpverify.ball import lower_decimal, upper_decimal

    with mpmath.workdps(dps):
        return mpmath.mpf(lower_decimal(x, 30)) - mpmath.mpf(10) ** -28 <= ref <= mpmath.mpf(upper_decimal(x, 30)) + mpmath.mpf(10) ** -28


def laplace_profile_ref(s, eps):
    # Balle et al. 2020 closed form via the hockey-stick integral of the densities,
    # done by mpmath quadrature: int (p - e^eps q)_+ with p = Lap(0,1), q = Lap(s,1)
    with mpmath.workdps(40):
        s, e = mpf_exact(s), mpf_exact(eps)
        p = lambda x: mpmath.exp(-abs(x)) / 2
        q = lambda x: mpmath.exp(-abs(x - s)) / 2
        f = lambda x: max(p(x) - mpmath.exp(e) * q(x), 0)
        # split at the kinks: 0, s, and where p = e^eps q, x = (s - eps)/2
        pts = sorted({mpmath.mpf(0), s, min(max((s - e) / 2, mpmath.mpf(0)), s)})
        return mpmath.quad(f, [-mpmath.inf, *pts, mpmath.inf])


def rr_profile_ref(e0, eps):
    with mpmath.workdps(40):
        p = mpmath.exp(mpf_exact(e0)) / (1 + mpmath.exp(mpf_exact(e0)))
        ee = mpmath.exp(mpf_exact(eps))
        return max(p - ee * (1 - p), 0) + max((1 - p) - ee * p, 0)


epss = st.fractions(min_value=-6, max_value=6, max_denominator=20)


@given(st.fractions(min_value=Fraction(1, 5), max_value=4, max_denominator=20), epss)
def test_eq22_eq23_gaussian(mu, eps):
    ref = delta_mu_ref(mu, eps, 15)
    with working_precision(120):
        pair = gaussian_pld(mu)
        for v in (profile_by_eq22(pair, eps), profile_by_eq23(pair, eps)):
            assert _contains(v, ref)
            assert v.rad() < 1e-25


@given(st.fractions(min_value=Fraction(1, 5), max_value=4, max_denominator=20), epss)
def test_eq22_eq23_laplace(s, eps):
    ref = laplace_profile_ref(s, eps)
    with working_precision(120):
        pair = laplace_pld(s)
        for v in (profile_by_eq22(pair, eps), profile_by_eq23(pair, eps)):
            with mpmath.workdps(40):
                assert abs(mpmath.mpf(v.mid().str(30, radius=False)) - ref) < mpmath.mpf(10) ** -25


@given(st.fractions(min_value=Fraction(1, 5), max_value=4, max_denominator=20), epss)
def test_eq22_eq23_randomized_response(e0, eps):
    ref = rr_profile_ref(e0, eps)
    with working_precision(120):
        pair = rr_pld(e0)
        for v in (profile_by_eq22(pair, eps), profile_by_eq23(pair, eps)):
            assert _contains(v, ref)


def _moment_ref(name, param, q):
    """E_q by mpmath quadrature of int P^q Q^{1-q} (independent of the closed forms)."""
    with mpmath.workdps(40):
        a = mpf_exact(param)
        if name == "gaussian":
            P = lambda x: mpmath.npdf(x)
            Q = lambda x: mpmath.npdf(x, a)
            pts = [-mpmath.inf, 0, a, mpmath.inf]
        elif name == "laplace":
            P = lambda x: mpmath.exp(-abs(x)) / 2
            Q = lambda x: mpmath.exp(-abs(x - a)) / 2
            pts = [-mpmath.inf, 0, a, mpmath.inf]
        else:
            p = mpmath.exp(a) / (1 + mpmath.exp(a))
            return p**q * (1 - p) ** (1 - q) + (1 - p) ** q * p ** (1 - q)
        return mpmath.quad(lambda x: P(x) ** q * Q(x) ** (1 - q), pts)


@pytest.mark.parametrize("name, factory, param", [
    ("gaussian", gaussian_pld, Fraction(1)),
    ("laplace", laplace_pld, Fraction(3, 2)),
    ("rr", rr_pld, Fraction(1)),
])
@pytest.mark.parametrize("q", [Fraction(11, 10), Fraction(2), Fraction(7, 2), (Fraction(3), Fraction(5)), (Fraction(3, 2), Fraction(-2))])
def test_thm33_real_and_complex_orders(name, factory, param, q):
    # LT Thm 3.3 (real q > 1) and Thm 3.5 (complex q, Re q > 1): the bilateral
    # transform of the profile equals E_q; checked against quadrature of P^q Q^(1-q)
    with mpmath.workdps(40):
        qm = mpmath.mpc(mpf_exact(q[0]), mpf_exact(q[1])) if isinstance(q, tuple) else mpf_exact(q)
    with working_precision(100):
        qa = acb(ball(q[0]), ball(q[1])) if isinstance(q, tuple) else acb(ball(q))
        pair = factory(param)
        got = renyi_moment_by_eq27(pair, qa)
        closed = renyi_moment(pair, qa)
        assert got.overlaps(closed)
        assert got.rad() < 1e-20
    ref = _moment_ref(name, param, qm)
    with mpmath.workdps(40):
        def as_mpc(z):
            return mpmath.mpc(z.real.mid().str(35, radius=False), z.imag.mid().str(35, radius=False))

        # both the transform and the closed form agree with quadrature of P^q Q^(1-q)
        assert abs(as_mpc(got) - ref) < mpmath.mpf(10) ** -19
        assert abs(as_mpc(closed) - ref) < mpmath.mpf(10) ** -24


@pytest.mark.parametrize("q", [Fraction(1), Fraction(1, 2), Fraction(0), Fraction(-1), (Fraction(1), Fraction(3))])
def test_eq27_refuses_outside_the_region_of_convergence(q):
    qa = acb(ball(q[0]), ball(q[1])) if isinstance(q, tuple) else acb(ball(q))
    with working_precision(64), pytest.raises(InvalidParameter, match="Re q > 1"):
        renyi_moment_by_eq27(gaussian_pld(Fraction(1)), qa)


@pytest.mark.parametrize("factory, param", [(gaussian_pld, Fraction(1)), (laplace_pld, Fraction(1)), (rr_pld, Fraction(1))])
@pytest.mark.parametrize("q", [Fraction(1, 2), Fraction(-1, 2), Fraction(9, 10)])
def test_below_one_the_transform_diverges(factory, param, q):
    # The boundary LT p. 6 gets wrong: for q < 1 (Q << P holds for all three
    # pairs) the integrand e^{(q-1)t} delta(t) is positive and delta(t) >= delta(-1)
    # on t <= -1, so the partial integrals grow like e^{(1-q)A}: certified here by
    # the partial values themselves exceeding that lower bound.
    with working_precision(100):
        pair = factory(param)
        prev = None
        for A in (10, 20, 40):
            v = partial_transform(pair, q, A, 10) / (ball(q) * (ball(q) - 1))  # the bare integral
            assert v > 0
            if prev is not None:
                assert v > prev * 2  # grows without bound (at least doubling per step here)
            prev = v
        # explicit lower bound: delta(-1) (e^{(1-q)A} - e^{1-q}) / (1-q) at A = 40
        d1 = profile_by_eq22(pair, Fraction(-1))
        bound = d1.lower() * ((1 - ball(q)) * 40).exp() - (1 - ball(q)).exp() * d1.upper()
        assert v >= bound / (1 - ball(q))
