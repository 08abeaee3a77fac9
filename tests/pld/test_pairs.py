"""Dominating pairs: closed-form tails against direct numerical integration."""

from fractions import Fraction

import mpmath
import pytest
from hypothesis import given, strategies as st

from dpverify.ball import ball, working_precision
from dpverify.errors import InvalidParameter
from dpverify.gdp import delta_mu
from dpverify.pld.pairs import SubsampledGaussianPair
from dpverify.relation import Relation, directions, relation

from ..reference import mpf_exact


def _quad_delta(sigma: Fraction, q: Fraction, direction: str, eps: Fraction) -> mpmath.mpf:
    """H_{e^eps}(P || Q) = int (p(x) - e^eps q(x))_+ dx by mpmath.quad, with the
    densities written out (no loss-tail formula), split at the crossing."""
    with mpmath.workdps(30):
        mu = 1 / mpf_exact(sigma)
        qq = mpf_exact(q)
        e = mpmath.exp(mpf_exact(eps))
        phi = mpmath.npdf
        mix = lambda x: (1 - qq) * phi(x) + qq * phi(x, mu)  # noqa: E731
        if direction == "remove":
            p, r = mix, phi
        else:
            p, r = phi, mix
        f = lambda x: max(p(x) - e * r(x), 0)  # noqa: E731
        # the integrand has one kink where p = e r; find it and split there
        g = lambda x: p(x) - e * r(x)  # noqa: E731
        pts = [-mpmath.inf]
        grid = [mpf(-40) + k / mpf(4) for k in range(321)]
        for a, b in zip(grid, grid[1:]):
            if g(a) == 0:
                pts.append(a)
            elif g(a) * g(b) < 0:
                pts.append(mpmath.findroot(g, (a, b), solver="bisect"))
        pts.append(mpmath.inf)
        return mpmath.quad(f, pts)


mpf = mpmath.mpf


@pytest.mark.parametrize("direction", ["remove", "add"])
@pytest.mark.parametrize("sigma,q", [(Fraction(1), Fraction(1, 100)), (Fraction(4, 5), Fraction(1, 8)),
                                     (Fraction(3), Fraction(4096, 50000))])
@pytest.mark.parametrize("eps", [Fraction(-1, 2), Fraction(0), Fraction(1, 20), Fraction(1, 2), Fraction(2)])
def test_profile_matches_numerical_integration(direction, sigma, q, eps):
    pair = SubsampledGaussianPair(sigma, q, direction)
    with working_precision(128):
        d = pair.delta(ball(eps))
        ref = _quad_delta(sigma, q, direction, eps)
        with mpmath.workdps(30):
            lo, hi = mpf(d.lower().str(30, radius=False)), mpf(d.upper().str(30, radius=False))
            tol = mpf(10) ** -20 + abs(ref) * mpf(10) ** -12
            assert lo - tol <= ref <= hi + tol


@given(st.fractions(min_value=-3, max_value=8, max_denominator=1000))
def test_q1_is_the_gaussian_mechanism(eps):
    pair = SubsampledGaussianPair(Fraction(2), Fraction(1), "remove")
    ref = delta_mu("1/2", eps, 20)
    with working_precision(200):
        d = pair.delta(ball(eps))
        assert d.overlaps(ref.as_ball())


def test_replace_one_only_for_q1():
    with pytest.raises(InvalidParameter) as exc:
        SubsampledGaussianPair(Fraction(1), Fraction(1, 2), "replace")
    assert exc.value.name == "neighboring"
    pair = SubsampledGaussianPair(Fraction(2), Fraction(1), "replace")  # sensitivity 2
    with working_precision(200):
        assert pair.delta(ball(Fraction(1))).overlaps(delta_mu("1", "1", 20).as_ball())


def test_relations():
    assert directions(relation("add-remove")) == ("remove", "add")
    assert relation(" ADD ") is Relation.ADD
    with pytest.raises(InvalidParameter) as exc:
        relation("swap")
    assert exc.value.name == "neighboring"


def test_bad_pair_parameters():
    with pytest.raises(InvalidParameter):
        SubsampledGaussianPair(Fraction(0), Fraction(1, 2), "add")
    with pytest.raises(InvalidParameter):
        SubsampledGaussianPair(Fraction(1), Fraction(3, 2), "add")


def _quad_laplace(b: Fraction, q: Fraction, direction: str, eps: Fraction) -> mpmath.mpf:
    """H_{e^eps}(P || Q) of the subsampled Laplace pair by mpmath.quad on the
    densities, split at 0, 1 and the crossing."""
    with mpmath.workdps(30):
        bb, qq, e = mpf_exact(b), mpf_exact(q), mpmath.exp(mpf_exact(eps))
        lap = lambda x, c: mpmath.exp(-abs(x - c) / bb) / (2 * bb)  # noqa: E731
        mix = lambda x: (1 - qq) * lap(x, 0) + qq * lap(x, 1)  # noqa: E731
        p, r = (mix, lambda x: lap(x, 0)) if direction == "remove" else (lambda x: lap(x, 0), mix)
        g = lambda x: p(x) - e * r(x)  # noqa: E731
        pts = [-mpmath.inf, mpf(0), mpf(1), mpmath.inf]
        if g(mpf(0)) * g(mpf(1)) < 0:
            pts.insert(2, mpmath.findroot(g, (mpf(0), mpf(1)), solver="bisect"))
        return mpmath.quad(lambda x: max(g(x), 0), pts)


@pytest.mark.parametrize("direction", ["remove", "add"])
@pytest.mark.parametrize("b,q", [(Fraction(1), Fraction(1, 10)), (Fraction(1, 2), Fraction(1)),
                                 (Fraction(2), Fraction(1, 3))])
@pytest.mark.parametrize("eps", [Fraction(-1, 3), Fraction(0), Fraction(1, 20), Fraction(1, 2), Fraction(2)])
def test_laplace_profile_matches_numerical_integration(direction, b, q, eps):
    from dpverify.pld.pairs import SubsampledLaplacePair

    pair = SubsampledLaplacePair(b, q, direction)
    with working_precision(128):
        d = pair.delta(ball(eps))
        ref = _quad_laplace(b, q, direction, eps)
        with mpmath.workdps(30):
            lo, hi = mpf(d.lower().str(30, radius=False)), mpf(d.upper().str(30, radius=False))
            tol = mpf(10) ** -18 + abs(ref) * mpf(10) ** -12
            assert lo - tol <= ref <= hi + tol


def test_laplace_q1_composition_at_the_support_end():
    """q = 1, b = 1/2: the loss is in [-2, 2] with atoms at the ends (a rational
    knot); T = 3 composes to delta(6) = 0 exactly at the top, and the accountant
    must agree at eps just below."""
    from dpverify.pld.accountant import Step, refine_query
    from dpverify.pld.pairs import SubsampledLaplacePair

    pair = SubsampledLaplacePair(Fraction(1, 2), Fraction(1), "remove")
    with working_precision(128):
        assert pair.delta(ball(Fraction(2))) == 0
        assert pair.delta(ball(Fraction(199, 100))) > 0
    res = refine_query([Step(lambda d: SubsampledLaplacePair(Fraction(1, 2), Fraction(1), d), 3)],
                       ("remove", "add"), kind="delta", target=Fraction(6), rel_width=1e-3, time_budget=30)
    assert res.lo == 0 and res.hi is not None and res.hi < Fraction(1, 10**20)


def test_every_pair_class_is_a_dominating_pair():
    """One interface for the six pair classes (tails, mass at infinity, tails on a
    grid, delta): the protocol is structural, and delta follows AFA Lemma 37 from
    the tails for every class (checked at one point against the class's tails)."""
    from dpverify.events import pairs as EP
    from dpverify.pld import pairs as PP
    from dpverify.pld.dominating import DominatingPair

    pairs = [
        SubsampledGaussianPair(Fraction(1), Fraction(1, 10), "remove"),
        PP.approx_dp_pair_exp(Fraction(3), Fraction(1, 100)),
        PP.SubsampledLaplacePair(Fraction(1), Fraction(1, 5), "add"),
    ]
    classes = {PP.SubsampledGaussianPair, PP.FinitePair, PP.SubsampledLaplacePair,
               EP.AtomPair, EP.MixtureGaussianPair, EP.MaxCurvePair}
    for cls in classes:
        assert all(callable(getattr(cls, name, None)) for name in ("tails", "inf_mass", "tails_at_grid", "delta")), cls
    with working_precision(120):
        e = ball(Fraction(1, 4))
        for pair in pairs:
            assert isinstance(pair, DominatingPair)
            p, q = pair.tails(e)
            want = p - e.exp() * q + pair.inf_mass()
            assert pair.delta(e).overlaps(want)
            P, Q = pair.tails_at_grid(2, 1, 1)  # the knot eps = 1/4
            assert P[0].overlaps(p) and Q[0].overlaps(q)
