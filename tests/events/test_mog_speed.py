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
from dpverify.pld.pairs import SubsampledGaussianPair, swapped_pairs
from dpverify.relation import Direction

from tests.pld.test_grid_tails import _mp_tails
from tests.pld.test_swapped_direction import _recorded

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
    # nor weights that are not a law (the readers refuse them; a pair built directly is checked)
    assert not swapped_pairs(_steps(mog(F(1), (F(0), F(1)), (F(1, 2), F(1, 100)))), "remove", "add")


def _mixture_curve(s, cs, ps, direction, eps):
    """delta(eps) = P(L > eps) - e^eps Q(L > eps) of the mixture pair from mpmath's tails
    (bisection on g, erfc: tests/pld/test_grid_tails._mp_tails; independent of the pair's code)."""
    p_t, q_t = _mp_tails(cs, ps, mpmath.mpf(s.numerator) / s.denominator, direction, eps)
    return p_t - mpmath.exp(eps) * q_t


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
            lo, hi = (mpmath.mpf(v.str(50, radius=False)) for v in (ball.lower(), ball.upper()))
        assert ball.rad() < 1e-35
        assert lo - mpmath.mpf(10) ** -38 <= add <= hi + mpmath.mpf(10) ** -38


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


@pytest.mark.parametrize("mix", [THREE, NO_ZERO])
@pytest.mark.parametrize("direction", ["remove", "add"])
def test_mixture_block_masses_bound_the_mpmath_masses(mix, direction):
    # the mixture's expansions handed unevaluated (grid_expansions, reach 1, the crossing point's
    # distance as their extra error) and turned into masses in binary64 (discretise.block_masses):
    # every served mass of three blocks bounds mpmath's exact mass (50 digits, tails by bisection
    # on g) in the sound direction and lies within 2 units of it
    from tests.pld.test_block_masses import _Exact, _violations, block_masses_of

    s, cs, ps = mix
    m, K = 10, 70
    i0, blocks, up, lp, lq = block_masses_of(MixtureGaussianPair(s, cs, ps, direction), m, K)
    assert blocks and all(b.extra is not None and b.extra > 0 for b in blocks)
    sig = mpmath.mpf(s.numerator) / s.denominator
    ex = _Exact(None, None, None, m, K, tails=lambda e: _mp_tails(cs, ps, sig, direction, e))
    picked = [blocks[0], blocks[len(blocks) // 2], blocks[-1]]
    bad, loose = _violations(ex, i0, [t for b in picked for t in range(b.a - i0, b.b - i0 + 1)], up, lp, lq)
    assert not bad, bad[:5]
    assert not loose, loose[:5]


def test_the_expansions_extra_error_is_carried_and_needed():
    # a proposal moved by 2^-80 and a block asked for 2^-60 (answered: the moved point's distance to
    # the true crossing point is proved, test_pairs.py): the expansion's own tails (remainder about
    # 2^-130) miss mpmath's at some knot, the extra error puts them
    # back inside at every knot in reach; block_masses counts it (an extra of a unit's size,
    # 2^-K, takes the proven error past binary64's limit and the block is not served)
    from dataclasses import replace

    from dpverify.pld import discretise as D
    from dpverify.pld.binary64 import MAX_ERROR

    sens, probs = THREE[1], THREE[2]
    shift = arb(2) ** -80

    class Moved(MixtureGaussianPair):
        def _inverse_poly(self, eps_c, length, comps):
            poly = super()._inverse_poly(eps_c, length, comps)
            return [poly[0] + shift] + poly[1:]

    pair = Moved(F(1), sens, probs, "remove")
    m, prec, a, b = 10, 160, 300, 331
    with working_precision(prec):
        comps, _ = pair._consts()
        blk = pair._block(m, a, b, prec // 4, arb(2) ** -60, comps, 1 / arb(2).sqrt(), reach=1)
        assert blk is not None and blk.extra is not None
        knots = range(a - 1, b + 2)
        with_extra = blk.tails(knots)
        bare = replace(blk, extra=None).tails(knots)
    missed = 0
    # (the ends read at the balls' precision: lower() and upper() round outward to the context's)
    with mpmath.workdps(60), working_precision(prec):
        for k, i in enumerate(knots):
            p, q = _mp_tails(sens, probs, 1, "remove", mpmath.mpf(i) / 2 ** m)
            for got, ref in ((with_extra[0][k], p), (with_extra[1][k], q)):
                lo, hi = (mpmath.mpf(v.str(60, radius=False)) for v in (got.lower(), got.upper()))
                assert lo <= ref <= hi, (i, got, ref)
            for got, ref in ((bare[0][k], p), (bare[1][k], q)):
                lo, hi = (mpmath.mpf(v.str(60, radius=False)) for v in (got.lower(), got.upper()))
                missed += not (lo <= ref <= hi)
    assert missed, "the moved proposal's own tails held the truth: this test would not catch a lost extra"
    K, i0, n = 64, a - 8, b + 8

    def served(block) -> int:
        L = n - i0 + 1
        up, lp, lq = [None] * L, [None] * (L - 1), [None] * (L - 1)
        with working_precision(prec):
            D.block_masses([block], m, K, i0, n, up, lp, lq)
        return sum(v is not None for v in lp)

    assert served(blk) == b - a + 1
    assert served(replace(blk, extra=arb(2) ** -K * 4 * MAX_ERROR)) == 0


def test_first_blocks_of_an_eighth_of_a_nat_on_a_coarse_grid(monkeypatch):
    # at 2^-8 the generic first block (128 knots, half a nat) fails the mixture's residual bound
    # over its ball: 73 of 179 tries failed and were split (a route choice, so only counted here:
    # the masses are the same integers either way, measured on 18 discretisations)
    from dpverify.pld.discretise import discretise

    tries: list = []
    real = MixtureGaussianPair._block

    def counting(self, m, a, b, *args, **kw):
        got = real(self, m, a, b, *args, **kw)
        tries.append(got is not None)
        return got

    monkeypatch.setattr(MixtureGaussianPair, "_block", counting)
    discretise(MixtureGaussianPair(*THREE, "remove"), 8, 70, 1e-20)
    assert len(tries) >= 100 and tries.count(False) <= 3, (len(tries), tries.count(False))


@pytest.mark.parametrize("mix", [THREE, NO_ZERO])
def test_one_root_proposal_is_the_vectorised_one(mix):
    # a single y runs the Newton iteration in plain floats (_float_root_one), many run it in numpy:
    # the same proposals to round-off, both near mpmath's root (proposals only: the proofs decide)
    pair = MixtureGaussianPair(*mix, "remove")
    ys = [-0.0201, -0.0199, 1e-9, 0.3, 2.5, 17.0, 60.0]
    many = pair._float_roots(ys + [0.5])[:-1]
    s, cs, ps = mix
    sig = mpmath.mpf(s.numerator) / s.denominator
    with mpmath.workdps(30):
        mus = [mpmath.mpf(c.numerator) / c.denominator / sig for c in cs]
        ws = [mpmath.mpf(p.numerator) / p.denominator for p in ps]
        for y, v in zip(ys, many):
            one = pair._float_roots([y])[0]
            floor = mpmath.log(sum(w for m, w in zip(mus, ws) if m == 0)) if 0 in cs else -mpmath.inf
            if y <= floor:
                continue  # no root: g > log p0 everywhere
            assert abs(one - v) <= 1e-13 * (1 + abs(v)), (y, one, v)
            g = lambda x: mpmath.log(sum(w * mpmath.exp(m * x - m * m / 2) for m, w in zip(mus, ws)))  # noqa: E731
            root = mpmath.findroot(lambda x: g(x) - y, v)
            assert abs(one - root) <= 1e-9 * (1 + abs(root)), (y, one, root)
