"""The normal survival function off the lattice expansions (pairs._SfLattice) against mpmath at
60 digits: every ball holds sf at every point of its input ball (both ends and the middle),
exact inputs get balls within the block accuracy, and the Cramer constant the remainder rests
on bounds the Hermite functions (Abramowitz & Stegun 22.14.17, checked on a grid)."""

import random

import mpmath
import pytest
from flint import arb

from dpverify.ball import working_precision
from dpverify.pld import pairs as pairs_mod
from dpverify.pld.discretise import grid_range
from dpverify.pld.pairs import SubsampledGaussianPair, _far_knots, _SfLattice

from fractions import Fraction as F


def _mp_sf(y):
    return mpmath.erfc(y / mpmath.sqrt(2)) / 2


def _holds(ball_, ref):
    """Does the ball meet mpmath's value (55 digits, with their rounding as slack)?"""
    r = arb(mpmath.nstr(ref, 55))
    return ball_.overlaps(r + abs(r) * arb(0, 1e-52))


@pytest.mark.parametrize("prec", [64, 137, 200, 320])
def test_lattice_balls_hold_mpmath_sf(prec):
    mpmath.mp.dps = 60
    rng = random.Random(prec)
    lattice = _SfLattice(prec)
    points = [rng.gauss(0, 4) for _ in range(300)] + [rng.uniform(-46, 46) for _ in range(60)]
    # next to the cells' edges (c +- 1/4, where a ball of radius 1/64 still fits), and past MAX_C
    points += [j / 2 + s * (0.25 + d) for j in range(-12, 13) for s in (-1, 1) for d in (-1e-9, 0.0, 1e-9)]
    points += [39.9, 40.0, 40.3, -40.3, 60.0]
    with working_precision(prec):
        for y in points:
            for rad in (0.0, 1e-30, 2.0 ** -7):
                yb = arb(y, rad) if rad else arb(y)
                got = lattice(yb)
                for yy in {y - rad, y, y + rad}:
                    assert _holds(got, _mp_sf(mpmath.mpf(yy))), (prec, y, rad, got)
                if rad == 0 and abs(y) <= lattice.MAX_C:
                    assert got.rad() <= arb(2) ** (18 - prec), (prec, y, got)


def test_lattice_centres_are_taken_and_kept():
    """A ball inside a cell is answered by that cell's polynomial (not arb's erfc), and the
    same inputs give the same ball (the expansions are kept per lattice point)."""
    lattice = _SfLattice(137)
    with working_precision(137):
        a = lattice(arb("1.3"))
        assert set(lattice.polys) == {3}
        b = _SfLattice(137)(arb("1.3"))
        assert a.mid() == b.mid() and a.rad() == b.rad()


def test_cramer_constant_bounds_the_hermite_functions():
    """|He_n(x)| e^(-x^2/4) <= k sqrt(n!), k = 1.0865 (A&S 22.14.17 in the probabilists'
    normalisation), on a grid of x for n <= 120: the bound the top coefficient rests on."""
    mpmath.mp.dps = 40
    k = mpmath.mpf(_SfLattice.K.numerator) / _SfLattice.K.denominator
    for n in list(range(0, 30)) + [40, 60, 90, 120]:
        bound = k * mpmath.sqrt(mpmath.factorial(n))
        xs = [mpmath.mpf(i) / 16 for i in range(0, 16 * (2 * int(mpmath.sqrt(n + 1)) + 8))]
        worst = max(abs(mpmath.hermite(n, x / mpmath.sqrt(2))) * 2 ** (-mpmath.mpf(n) / 2) * mpmath.exp(-x * x / 4)
                    for x in xs)
        assert worst <= bound, (n, worst, bound)


def test_short_grids_take_the_lattice_for_every_knot(monkeypatch):
    """sigma 4, q 0.01 (bench row B): at 2^-13 fewer than 1024 knots lie far enough from the
    support's end for a binary64 block, so every knot comes off the lattice (no Taylor block is
    expanded) and holds mpmath's tails; at 2^-15 the blocks serve the far knots."""
    calls = [0]
    real = pairs_mod.taylor_expansion

    def counting(*args, **kwargs):
        calls[0] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(pairs_mod, "taylor_expansion", counting)
    pair = SubsampledGaussianPair(F(4), F(1, 100), "remove")
    i0, n = grid_range(pair, 13, 1e-12)
    assert _far_knots(pair.q, "remove", 13, i0, n) < 1024
    with working_precision(137):
        P, Q = pair.tails_at_grid(13, i0, n)
    assert calls[0] == 0
    mpmath.mp.dps = 50
    mu, q = mpmath.mpf(1) / 4, mpmath.mpf(1) / 100
    for i in range(i0, n + 1, 7):
        e = mpmath.mpf(i) / 2 ** 13
        a = mpmath.expm1(e) + q
        x = (mpmath.log(a / q) + mu * mu / 2) / mu
        ref_p, ref_q = (1 - q) * _mp_sf(x) + q * _mp_sf(x - mu), _mp_sf(x)
        assert _holds(P[i - i0], ref_p) and _holds(Q[i - i0], ref_q), i
    i0, n = grid_range(pair, 15, 1e-12)
    assert _far_knots(pair.q, "remove", 15, i0, n) >= 1024
    with working_precision(150):
        pair.grid_expansions(15, i0, n)
    assert calls[0] > 0
