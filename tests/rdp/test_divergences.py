"""Renyi divergences: closed forms against their defining integrals (mpmath),
convexity of (alpha - 1) D_alpha and monotonicity of D_alpha (hypothesis)."""

from fractions import Fraction

import mpmath
import pytest
from flint import acb, arb
from hypothesis import given, strategies as st

from dpverify.ball import ball, working_precision
from dpverify.errors import InvalidParameter
from dpverify.rdp import (
    GaussianCurve,
    LaplaceCurve,
    PureDpCurve,
    RandomizedResponseCurve,
    compose,
    renyi_divergence,
)
from dpverify.rdp.divergences import rr_cgf_complex
from tests.reference import in_enclosure, mpf_exact, stable


def _quad_gauss(mu, a):
    m, al = mpf_exact(mu), mpf_exact(a)
    g = lambda x: mpmath.npdf(x, m, 1) ** al * mpmath.npdf(x, 0, 1) ** (1 - al)
    return mpmath.log(mpmath.quad(g, [-mpmath.inf, 0, m, mpmath.inf])) / (al - 1)


def _quad_laplace(lam, a):
    l, al = mpf_exact(lam), mpf_exact(a)
    g = lambda x: mpmath.exp(-al * abs(x) - (1 - al) * abs(x - l)) / 2
    return mpmath.log(mpmath.quad(g, [-mpmath.inf, 0, l, mpmath.inf])) / (al - 1)


ORDERS = [Fraction(3, 10), Fraction(1, 2), Fraction(2), Fraction(37, 10), Fraction(20)]


@pytest.mark.parametrize("a", ORDERS)
def test_gaussian_matches_defining_integral(a):
    mu = Fraction(7, 10)
    ref = stable(lambda: _quad_gauss(mu, a), 12)
    assert in_enclosure(ref, renyi_divergence(GaussianCurve(mu), a, 12))


@pytest.mark.parametrize("a", ORDERS)
def test_laplace_matches_defining_integral(a):
    lam = Fraction(3, 2)
    ref = stable(lambda: _quad_laplace(lam, a), 12)
    assert in_enclosure(ref, renyi_divergence(LaplaceCurve(lam), a, 12))


@pytest.mark.parametrize("a", ORDERS)
def test_rr_and_pure_match_the_two_point_sum(a):
    p = Fraction(3, 4)
    ref = stable(
        lambda: mpmath.log(mpf_exact(p) ** mpf_exact(a) * (1 - mpf_exact(p)) ** (1 - mpf_exact(a))
                           + (1 - mpf_exact(p)) ** mpf_exact(a) * mpf_exact(p) ** (1 - mpf_exact(a)))
        / (mpf_exact(a) - 1),
        15,
    )
    assert in_enclosure(ref, renyi_divergence(RandomizedResponseCurve(p), a, 15))
    # pure eps0-DP worst case = RR with p = e^eps0/(1+e^eps0); eps0 = log 3 gives p = 3/4
    # (checked with an exact eps0 close to log 3 against mpmath's own p)
    e0 = Fraction(1)
    def ref_pure():
        pe = mpmath.e / (1 + mpmath.e)  # at the working precision of stable()
        al = mpf_exact(a)
        return mpmath.log(pe**al * (1 - pe) ** (1 - al) + (1 - pe) ** al * pe ** (1 - al)) / (al - 1)

    ref2 = stable(ref_pure, 15)
    assert in_enclosure(ref2, renyi_divergence(PureDpCurve(e0), a, 15))


def test_composition_adds():
    c = compose([GaussianCurve(Fraction(1, 20))], [1000])
    enc = renyi_divergence(c, 4, 15)
    assert enc.contains(Fraction(1000 * 4, 2 * 400))


def test_bad_orders_refused():
    with pytest.raises(InvalidParameter, match="alpha"):
        renyi_divergence(GaussianCurve(Fraction(1)), 1)
    with pytest.raises(InvalidParameter, match="alpha"):
        renyi_divergence(GaussianCurve(Fraction(1)), -2)


def test_lt_thm35_complex_orders_match_laplace_transform_of_profile():
    """LT Thm 3.5 / eq. (133): e^{(q-1)R_q}/(q(q-1)) = int e^{(q-1)t} delta(t) dt for the
    (eps,0)-RR profile (132), at complex q with Re q > 1 (where the integral
    converges), checked by rigorous integration (acb.integral)."""
    e0 = Fraction(1)
    with working_precision(80):
        eps = ball(e0)
        E = eps.exp()
        for q in (acb(2, 1), acb("1.5", "-3"), acb(3, "0.25")):
            left = acb.integral(lambda t, _: ((q - 1) * t).exp() * (1 - t.exp()), -80, -eps)
            mid = acb.integral(lambda t, _: ((q - 1) * t).exp() * (E - t.exp()) / (1 + E), -eps, eps)
            # tail below -80: |e^{(q-1)t}(1 - e^t)| <= e^{(Re q - 1) t}
            tail = ((acb(q.real) - 1) * -80).exp().real / (q.real - 1)
            lhs = left + mid + acb(0) + arb(0, tail.upper())
            # closed form with p = e^eps/(1+e^eps): sum = (1-p) e^{q eps} + p e^{-q eps}
            pe = E / (1 + E)
            closed = ((1 - pe) * (q * eps).exp() + pe * (-q * eps).exp()) / (q * (q - 1))
            assert (lhs - closed).abs_upper() < arb(10) ** -15
        val = rr_cgf_complex(Fraction(3, 4), acb(2, 1))
    with mpmath.workdps(30):
        qq = mpmath.mpc(2, 1)
        r = mpmath.mpf(3)
        ref = mpmath.mpf(1) / 4 * r**qq + mpmath.mpf(3) / 4 * r ** (-qq)
        assert abs(complex(val.mid()) - complex(ref)) < 1e-12


st_order = st.fractions(min_value=Fraction(11, 10), max_value=Fraction(60)).map(lambda x: x.limit_denominator(1000))


@given(
    a1=st_order,
    a2=st_order,
    a3=st_order,
    which=st.sampled_from(["gauss", "laplace", "rr", "pure"]),
    par=st.fractions(min_value=Fraction(1, 10), max_value=Fraction(3)).map(lambda x: x.limit_denominator(100)),
)
def test_cgf_is_convex_and_divergence_nondecreasing(a1, a2, a3, which, par):
    """(alpha - 1) D_alpha is convex (ABC (4); van Erven-Harremoes Cor 2) and
    D_alpha is nondecreasing: a certified violation would be a bug."""
    a, b, c = sorted({a1, a2, a3} | {a1 + 1, a1 + 2})[:3]
    curve = {
        "gauss": lambda: GaussianCurve(par),
        "laplace": lambda: LaplaceCurve(par),
        "rr": lambda: RandomizedResponseCurve(Fraction(1, 2) + par / 7),
        "pure": lambda: PureDpCurve(par),
    }[which]()
    with working_precision(200):
        fa, fb, fc = (curve.cgf(ball(x)) for x in (a, b, c))
        chord = fa + (fc - fa) * ball(b - a) / ball(c - a)
        assert not (fb > chord), "convexity violated"
        da, db = fa / ball(a - 1), fb / ball(b - 1)
        assert not (da > db), "monotonicity violated"
