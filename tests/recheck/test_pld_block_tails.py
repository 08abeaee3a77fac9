"""The block route of the PLD re-check's Gaussian tails (:mod:`dpverify.recheck.series`, and
``gauss_tails(...).many`` on grids 2^-13 and finer) against independent routes.

* the fixed-point ball operations against exact rationals: inputs drawn inside balls of random
  radii, the exact output (a finite sum: log(1 + z), exp(w) with z_0 = w_0 = 0, a product
  integrated, a polynomial at integers) must lie in the output ball;
* the block tails on random knots against the same tails written out in mpmath at 600 bits
  (the truth must lie inside every enclosure, which must stay as narrow as the knot-by-knot
  route's), and against the knot-by-knot route (every pair of enclosures must meet; the two
  routes must differ somewhere, so the block route is the one under test).
"""

from __future__ import annotations

import random
from fractions import Fraction
from math import factorial

import mpmath
import pytest

from dpverify.recheck import pld as Pl
from dpverify.recheck import series as S
from dpverify.recheck.core import arith, mpfr_to_mpf

from .test_pld_rigorous import _mp, _ref_gauss_tails

P = 120


def _balls_around(xs: list, rng: random.Random, wide: bool = True) -> S.Ser:
    """Balls at 2^-P containing the exact rationals ``xs`` (middles off the value by up to the
    radius, radii random)."""
    out = []
    for x in xs:
        r = rng.randrange(0, 1 << 20) if wide else 0
        exact = x * (1 << P)
        off = rng.randint(-r, r) if r else 0
        m = (exact.numerator // exact.denominator) + off
        rad = r + abs(off) + 1 if wide else 0
        assert abs(exact - m) <= rad or not wide
        out.append((m, rad) if wide else (m, 0))
    return S.Ser(out)


def _inside(ball: tuple, x: Fraction) -> bool:
    m, r = ball
    return Fraction(m - r, 1 << P) <= x <= Fraction(m + r, 1 << P)


def _poly_mul(a: list, b: list, n: int) -> list:
    return [sum((a[i] * b[j - i] for i in range(j + 1)), Fraction(0)) for j in range(n)]


def _rand_series(rng: random.Random, n: int, zero0: bool) -> list:
    return [Fraction(0) if (j == 0 and zero0) else Fraction(rng.randint(-10**6, 10**6), 10**6 * (j + 1))
            for j in range(n)]


@pytest.mark.parametrize("seed", range(6))
def test_ball_series_operations_enclose_the_exact_rationals(seed: int) -> None:
    rng = random.Random(seed)
    n = 9
    # y^2 and the product of two balls
    y = _rand_series(rng, n, False)
    sq = S.square(_balls_around(y, rng), n, P)
    for j, x in enumerate(_poly_mul(y, y, n)):
        assert _inside(sq[j], x)
    a, b = y[1], y[2]
    assert _inside(S.mul(_balls_around([a], rng)[0], _balls_around([b], rng)[0], P), a * b)
    # log(1 + z), z_0 = 0: log(1 + z) = sum_k (-1)^(k+1) z^k / k, finite in each coefficient
    z = _rand_series(rng, n, True)
    u = [Fraction(1)] + z[1:]
    ref = [Fraction(0)] * n
    zk = [Fraction(1)] + [Fraction(0)] * (n - 1)
    for k in range(1, n):
        zk = _poly_mul(zk, z, n)
        ref = [r + Fraction((-1) ** (k + 1), k) * c for r, c in zip(ref, zk)]
    v = S.log_tail(_balls_around(u, rng), (1 << P, 0), n, P)
    for j in range(1, n):
        assert _inside(v[j], ref[j])
    # exp(w), w_0 = 0: exp(w) = sum_k w^k / k!
    w = _rand_series(rng, n, True)
    ref = [Fraction(0)] * n
    wk = [Fraction(1)] + [Fraction(0)] * (n - 1)
    for k in range(n):
        ref = [r + c / factorial(k) for r, c in zip(ref, wk)]
        wk = _poly_mul(wk, w, n)
    e = S.exp_tail(_balls_around(w, rng), (1 << P, 0), n, P)
    for j in range(n):
        assert _inside(e[j], ref[j])
    # F' = f y': the product f y' integrated term by term
    f = _rand_series(rng, n, False)
    dy = [(j + 1) * y[j + 1] for j in range(n - 1)] + [Fraction(0)]
    prod = _poly_mul(f, dy, n)
    F = S.integral_tail(_balls_around(y, rng), _balls_around(f, rng), n, P)
    for j in range(1, n):
        assert _inside(F[j], prod[j - 1] / j)


@pytest.mark.parametrize("seed", range(4))
def test_values_at_integers_are_the_polynomial_exactly(seed: int) -> None:
    rng = random.Random(seed)
    N, rho = rng.randint(3, 30), rng.randint(1, 9)
    c = [rng.randint(-(1 << 200), 1 << 200) for _ in range(N + 1)]
    k0 = -(1 << rho)
    k1 = rng.randint(k0, (1 << rho) - 1)
    got = S.values_at_integers(c, rho, k0, k1)
    assert got == [sum(cj * k ** j << (rho * (N - j)) for j, cj in enumerate(c)) for k in range(k0, k1 + 1)]


@pytest.mark.parametrize("sig,q,direction,m,prec", [
    (Fraction(2), Fraction(1, 10), "remove", 14, 178),
    (Fraction(2), Fraction(1, 10), "add", 14, 178),
    (Fraction(4, 5), Fraction(4, 1875), "remove", 13, 150),
    (Fraction(4, 5), Fraction(4, 1875), "add", 13, 150),
    (Fraction(1, 2), Fraction(1, 2), "remove", 13, 140),
])
def test_block_tails_enclose_mpmath_and_meet_the_knot_route(sig, q, direction, m, prec) -> None:
    A = arith(prec)
    tails = Pl.gauss_tails(sig, q, direction)
    block = 2 << (m - Pl._BLOCK_SPAN)
    rng = random.Random(m * 1000 + prec)
    # three blocks and a partial one, at losses 3/2 and above (remove) or -3/2 and below (add):
    # inside the support, far enough from its end that series are tried
    lo = (3 << m) // 2 + rng.randrange(block)
    if direction == "add":
        lo = -lo - 4 * block
    hi = lo + 3 * block + block // 3
    got = tails.at_knots(A, lo, hi, m)
    knots = [tails(A, A.dyadic(i, m)) for i in range(lo, hi + 1)]
    assert len(got) == len(knots)
    assert got != knots, "the block route was not taken"
    for g, k in zip(got, knots):
        for a, b in zip(g, k):
            assert a[0] <= b[1] and b[0] <= a[1], (a, b)
            assert a[1] - a[0] <= 4 * (b[1] - b[0]) + mpmath.mpf(2) ** -(prec - 2)
    picks = sorted(rng.sample(range(lo, hi + 1), 40) + [lo, hi])
    with mpmath.workprec(600):
        for i in picks:
            ref = _ref_gauss_tails(_mp(sig), _mp(q), direction, mpmath.mpf(i) / 2 ** m)
            for g, r in zip(got[i - lo], ref):
                assert mpfr_to_mpf(g[0]) <= r <= mpfr_to_mpf(g[1]), (i, g, r)


@pytest.mark.parametrize("sig,q,direction,loss", [
    (Fraction(11, 10), Fraction(1, 100), "remove", Fraction(3, 10)),
    (Fraction(11, 10), Fraction(1, 100), "add", Fraction(-2, 5)),
])
def test_halved_blocks_near_the_end_of_the_support_enclose_mpmath(sig, q, direction, loss) -> None:
    """Within 1 of the end of the loss support (log(1 - q) = -0.01 remove, +0.01 add) a block of
    2^(m + 1 - _BLOCK_SPAN) knots is too near for its series; a quarter of it (2^9 knots at 2^-15) lies
    32 of its half-widths away and is tried: the block route must be taken there, enclose the mpmath
    tails at 600 bits and meet the knot-by-knot route."""
    m, prec = 15, 150
    A = arith(prec)
    tails = Pl.gauss_tails(sig, q, direction)
    lo = int(loss * (1 << m))
    hi = lo + 3 * 512 + 100
    got = tails.at_knots(A, lo, hi, m)
    knots = [tails(A, A.dyadic(i, m)) for i in range(lo, hi + 1)]
    assert got != knots, "the block route was not taken"
    for g, k in zip(got, knots):
        for a, b in zip(g, k):
            assert a[0] <= b[1] and b[0] <= a[1], (a, b)
            assert a[1] - a[0] <= 4 * (b[1] - b[0]) + mpmath.mpf(2) ** -(prec - 2)
    rng = random.Random(7)
    with mpmath.workprec(600):
        for i in sorted(rng.sample(range(lo, hi + 1), 40) + [lo, hi]):
            ref = _ref_gauss_tails(_mp(sig), _mp(q), direction, mpmath.mpf(i) / 2 ** m)
            for g, r in zip(got[i - lo], ref):
                assert mpfr_to_mpf(g[0]) <= r <= mpfr_to_mpf(g[1]), (i, g, r)


@pytest.mark.parametrize("seed", range(6))
def test_the_packed_convolution_is_the_pairwise_sums(seed: int) -> None:
    # series._conv_all (Kronecker substitution: four packed GMP products) against the sums over
    # every pair of indices i + k = j written out on the balls (exact integers): the middles' sum
    # and the radius bound |x_m| y_r + x_r |y_m| + x_r y_r, for signed middles of up to 400 bits,
    # radii from 0 to 400 bits, zeros, and series shorter and longer than n. Fails on a slot one
    # bit too narrow for the largest products (a carry between slots) or a sign lost in the split.
    rng = random.Random(seed)

    def ser(k: int) -> S.Ser:
        out = []
        for _ in range(k):
            b = rng.choice([0, 8, 150, 400])
            m = rng.randint(-(1 << b), 1 << b) if rng.random() > 0.1 else 0
            r = rng.randrange(0, 1 << rng.choice([1, 30, 400]))
            out.append((m, r))
        return S.Ser(out)

    for _ in range(20):
        n = rng.randint(1, 40)
        x, y = ser(rng.randint(0, n + 3)), ser(rng.randint(0, n + 3))
        got = S._conv_all(x, y, n)
        assert len(got) == n
        for j in range(n):
            pairs = [(x[i], y[j - i]) for i in range(j + 1) if i < len(x) and j - i < len(y)]
            M = sum(a[0] * b[0] for a, b in pairs)
            R = sum(abs(a[0]) * b[1] + a[1] * abs(b[0]) + a[1] * b[1] for a, b in pairs)
            assert got[j] == (M, R), (j, n, len(x), len(y))
    # and the same as _conv where both series reach index j (its slices need that)
    x, y = ser(33), ser(33)
    assert S._conv_all(x, y, 33) == [S._conv(x, y, 0, j, j) for j in range(33)]
