"""The mixture-of-Gaussians event on the Poisson Gaussian's paths (issue 24, deliverable 4):
its add direction is its remove direction swapped, so the add direction's upper end is read
off the remove direction's composed curve (pld.pairs.swapped_pairs,
queries.ComposedBounds.eps_upper_swapped), and the plan reads the pair's float tails
(MixtureGaussianPair.float_tails), so a long schedule's first level is the planned one. Each
checked against a route that does not use it: the add pairs composed themselves, mpmath at 40
digits, the Poisson Gaussian's own certified answer."""

from __future__ import annotations

from fractions import Fraction as F

import mpmath
import numpy as np
import pytest
from flint import arb

import dpverify.pld.refine as R
from dpverify.ball import arb_to_fraction, working_precision
from dpverify.events import epsilon, model as E
from dpverify.events.pairs import MixtureGaussianPair
from dpverify.pld import queries as Qm
from dpverify.pld.pairs import SubsampledGaussianPair, swapped_pairs
from dpverify.relation import Direction

THREE = (F(1), (F(0), F(1), F(2)), (F(98, 100), F(1, 100), F(1, 100)))
NO_ZERO = (F(3, 2), (F(1, 2), F(3)), (F(1, 2), F(1, 2)))  # no component at 0: the add loss is unbounded


def _steps(*pairs_by_direction):
    return [R.Step(lambda d, f=f: f(d), 1) for f in pairs_by_direction]


def test_swapped_pairs_accepts_the_mixtures_two_directions_only():
    mog = lambda s, cs, ps: (lambda d: MixtureGaussianPair(s, cs, ps, d))  # noqa: E731
    assert swapped_pairs(_steps(mog(*THREE)), "remove", "add")
    assert swapped_pairs(_steps(mog(*THREE)), "add", "remove")
    assert swapped_pairs(_steps(mog(*THREE), mog(*NO_ZERO)), "remove", "add")
    # the add pair of other weights is not the swap
    other = lambda d: MixtureGaussianPair(THREE[0], THREE[1], (F(97, 100), F(2, 100), F(1, 100)) if d == "add"  # noqa: E731
                                          else THREE[2], d)
    assert not swapped_pairs(_steps(other), "remove", "add")
    # nor a pair of another class with the same laws, nor one direction with itself
    mixed = lambda d: (MixtureGaussianPair(F(1), (F(0), F(1)), (F(99, 100), F(1, 100)), d) if d == "remove"  # noqa: E731
                       else SubsampledGaussianPair(F(1), F(1, 100), d))
    assert not swapped_pairs(_steps(mixed), "remove", "add")
    assert not swapped_pairs(_steps(mog(*THREE)), "remove", "remove")


def _mixture_curve(s, cs, ps, direction, eps):
    """delta(eps) of the mixture pair in mpmath (40 digits): remove (mixture, N(0, s^2)), add
    (N(0, s^2), mixture), H_{e^eps}(P || Q) = P(L > eps) - e^eps Q(L > eps) with the crossing
    point of L found by bisection on the densities (independent of the pair's code)."""
    with mpmath.workdps(40):
        sig = mpmath.mpf(s.numerator) / s.denominator
        mus = [mpmath.mpf(c.numerator) / c.denominator for c in cs]
        ws = [mpmath.mpf(p.numerator) / p.denominator for p in ps]
        g = lambda x: mpmath.log(sum(w * mpmath.exp((m * x - m * m / 2) / sig ** 2) for m, w in zip(mus, ws)))  # noqa: E731
        e = mpmath.mpf(eps)
        y = e if direction == "remove" else -e
        floor = mpmath.log(sum(w for m, w in zip(mus, ws) if m == 0)) if any(m == 0 for m in mus) else -mpmath.inf
        mix_sf = lambda x: sum(w * mpmath.ncdf(-(x - m) / sig) for m, w in zip(mus, ws))  # noqa: E731
        if y <= floor:  # every x (remove) / no x (add) has L > eps
            p_t = q_t = 1 if direction == "remove" else 0
        else:
            lo, hi = mpmath.mpf(-200), mpmath.mpf(200)
            for _ in range(200):
                mid = (lo + hi) / 2
                lo, hi = (mid, hi) if g(mid) < y else (lo, mid)
            x = (lo + hi) / 2
            if direction == "remove":  # L > eps iff x > root
                p_t, q_t = mix_sf(x), mpmath.ncdf(-x / sig)
            else:  # L > eps iff x < root
                p_t, q_t = mpmath.ncdf(x / sig), 1 - mix_sf(x)
        return p_t - mpmath.exp(e) * q_t


@pytest.mark.parametrize("mix", [THREE, NO_ZERO])
@pytest.mark.parametrize("eps", ["-2", "-0.3", "0.01", "0.7", "3"])
def test_the_mixtures_add_curve_is_its_remove_curve_swapped(mix, eps):
    # the identity swapped_pairs rests on, delta_add(eps) = e^eps delta_remove(-eps) + 1 - e^eps,
    # on the curves of the mixture's laws in mpmath; and the pair's own add curve (arb) holds it
    s, cs, ps = mix
    with mpmath.workdps(40):
        e = mpmath.mpf(eps)
        add = _mixture_curve(s, cs, ps, "add", e)
        swapped = mpmath.exp(e) * _mixture_curve(s, cs, ps, "remove", -e) + 1 - mpmath.exp(e)
        assert abs(add - swapped) < mpmath.mpf(10) ** -30
        with working_precision(160):
            ball = MixtureGaussianPair(s, cs, ps, "add").delta(arb(eps))
        lo, hi = (mpmath.mpf(v.str(45, radius=False)) for v in (ball.lower(), ball.upper()))
        assert lo - mpmath.mpf(10) ** -35 <= add <= hi + mpmath.mpf(10) ** -35


def _recorded(monkeypatch) -> list:
    got: list = []
    orig = Qm.ComposedBounds.eps_upper_swapped

    def spy(self, delta, hint=None):
        r = orig(self, delta, hint)
        got.append(r)
        return r

    monkeypatch.setattr(Qm.ComposedBounds, "eps_upper_swapped", spy)
    return got


@pytest.mark.parametrize("mix, T", [((F(1), (F(0), F(1)), (F(99, 100), F(1, 100))), 1000),
                                    ((F(2), (F(0), F(1), F(2)), (F(9, 10), F(1, 20), F(1, 20))), 100),
                                    (NO_ZERO, 10)])
def test_swapped_upper_end_encloses_the_mixtures_own_add_lower_end(monkeypatch, mix, T):
    # soundness against the add pairs composed themselves (the add relation alone, no swap): the
    # add direction settled by the swap has an upper end at or above their certified lower end
    got = _recorded(monkeypatch)
    ev = E.SelfComposed(E.MixtureOfGaussians(*mix), T)
    both = epsilon(ev, "1e-5", neighboring="add-remove", rel_width=1e-3)
    sw = [g for g in got if g is not None]
    assert sw  # the swap settled it: no lower end claimed for the add direction
    assert both.details["directions"][Direction.ADD] == [None, float(min(sw))]
    monkeypatch.undo()
    add = epsilon(ev, "1e-5", neighboring="add", rel_width=1e-3)
    lo_add = arb_to_fraction(add.enclosure.lo)
    assert min(sw) >= lo_add, (float(min(sw)), float(lo_add))


@pytest.mark.parametrize("mix", [THREE, NO_ZERO, (F(1), (F(0), F(1)), (F(99, 100), F(1, 100)))])
@pytest.mark.parametrize("direction", ["remove", "add"])
def test_float_tails_of_the_plan_match_the_certified_tails(mix, direction):
    # the plan's binary64 tails (proposals only) against the pair's certified ones, across the end
    # of the loss range (log 0.98 = -0.0202 under remove, +0.0202 under add) and far in the tails
    pair = MixtureGaussianPair(*mix, direction)
    eps = np.array([-6.0, -1.0, -0.0203, -0.0201, 0.0, 0.0201, 0.0203, 0.5, 2.0, 6.0, 12.0])
    P, Q = pair.float_tails(eps)
    with working_precision(128):
        for k, e in enumerate(eps.tolist()):
            p, q = pair.tails(arb(e))
            for mine, ref in ((P[k], p), (Q[k], q)):
                r = float(ref.mid())
                assert abs(mine - r) <= 1e-12 * max(r, 1e-300) + 1e-300, (e, mine, r)


def test_a_mixture_equal_to_the_poisson_gaussian_runs_its_one_level():
    # the mixture (0, 1) / (.99, .01) is the Poisson Gaussian at q = 0.01 (test_pairs.py): at
    # T = 10^4 its plan is read off the float law as the Poisson Gaussian's is, so the query is
    # the remove direction on the planned grid alone (before: a probe at 2^-8 in both directions
    # and the add direction at 2^-6, then 2^-12) and the answer is the Poisson Gaussian's
    calls: list = []
    orig = R._direction

    def spy(steps, d, kind, target, m, *a, **k):
        calls.append((d.name, m))
        return orig(steps, d, kind, target, m, *a, **k)

    R._direction = spy
    try:
        mog = epsilon(E.SelfComposed(E.MixtureOfGaussians(F(1), (F(0), F(1)), (F(99, 100), F(1, 100))), 10_000),
                      "1e-5", rel_width=1e-4)
    finally:
        R._direction = orig
    psg = epsilon(E.SelfComposed(E.PoissonSampled(F(1, 100), E.Gaussian(F(1))), 10_000), "1e-5", rel_width=1e-4)
    assert [name for name, _ in calls] == ["remove"], calls
    assert mog.details["grid"] == psg.details["grid"] == f"2^-{calls[0][1]}"
    (a_lo, a_hi), (b_lo, b_hi) = ((arb_to_fraction(x.enclosure.lo), arb_to_fraction(x.enclosure.hi))
                                  for x in (mog, psg))
    assert a_lo <= b_hi and b_lo <= a_hi and a_hi - a_lo <= (b_hi - b_lo) * F(101, 100)
