"""The second route's certified Fourier power (dpverify/recheck/fourier.py) against an
independent route: exact integer convolution of the same integer masses (brute force,
Python integers), and the exact DFT in rationals / MPFR at high precision."""

from __future__ import annotations

import math
import random
from fractions import Fraction

import gmpy2
import numpy as np
import pytest
from gmpy2 import mpfr

from dpverify.recheck import fourier as F


def _exact_power(c: list, a: int) -> list:
    """(c)^{*a} in exact integers, brute force."""
    out = [1]
    for _ in range(a):
        nxt = [0] * (len(out) + len(c) - 1)
        for i, u in enumerate(out):
            if u:
                for j, v in enumerate(c):
                    nxt[i + j] += u * v
        out = nxt
    return out


def _units(exact: list, K: int, a: int) -> list:
    """The exact a-fold power of c 2^-K, in units 2^-K (rationals)."""
    return [Fraction(v, 1 << (K * (a - 1))) for v in exact]


def _masses(rng: random.Random, n: int, K: int) -> list:
    w = [rng.random() for _ in range(n)]
    s = sum(w)
    return [int(v / s * (1 << K)) for v in w]


def test_transform_within_its_bound_against_the_exact_dft():
    # the exact DFT of the same doubles at 200 bits (MPFR cos/sin; their error ~2^-190 is far
    # below the bound's ~1e-15) must lie within ((1 + eta)^L - 1) ||x||_1 of the floats
    rng = random.Random(7)
    N = 64
    x = np.array([rng.random() for _ in range(N)])
    zr, zi, mu = F.fft(x, np.zeros(N))
    bound = float(F.growth(mu, 6)) * float(x.sum())
    # every operation in the 200-bit context: gmpy2's operators (2 * pi, sum, -) round to the
    # default 53 bits, which would make the reference a 53-bit DFT (revfft F3)
    ctx = gmpy2.context(precision=200)
    two_pi = ctx.mul(ctx.const_pi(), 2)
    xs = [mpfr(float(v), 200) for v in x]
    worst = mpfr(0)
    for k in range(N):
        re = im = mpfr(0, 200)
        for i in range(N):
            ang = ctx.div(ctx.mul(two_pi, k * i), N)
            re = ctx.add(re, ctx.mul(xs[i], ctx.cos(ang)))
            im = ctx.sub(im, ctx.mul(xs[i], ctx.sin(ang)))
        worst = max(worst, abs(ctx.sub(re, mpfr(float(zr[k]), 200))), abs(ctx.sub(im, mpfr(float(zi[k]), 200))))
    assert worst <= bound
    assert worst > 0  # the floats do err: the comparison is not vacuous


#: the grid 2^-M of the lower pairs' tilt
M = 3


def _q_of(c: list, off: int) -> list:
    """Q-masses of a privacy-loss pair on the grid 2^-M: about e^-loss times the P-masses, with
    some slack (Q_i = floor(P_i e^(-(off + i) / 2^M) 3 / 4)), so the tilted Q is about P."""
    return [int(Fraction(v) * Fraction(math.exp(-(off + i) / 2 ** M)) * Fraction(3, 4)) for i, v in enumerate(c)]


def _check_upper(out: tuple, exact: list, base_off: int, a: int, inf_in: int, K: int) -> None:
    """The upper pair dominates: each window mass, the one below added at the first index, the
    one above in +inf (with the composed +inf mass 2^K (1 - (1 - inf 2^-K)^a), rounded up)."""
    off, up, inf = out
    W = off - a * base_off
    assert W >= 0
    assert up[0] >= exact[W] + sum(exact[:W])
    assert all(up[k] >= exact[W + k] for k in range(1, min(len(up), len(exact) - W)))
    assert all(v >= 0 for v in up)
    composed_inf = Fraction((1 << K) ** a - ((1 << K) - inf_in) ** a, (1 << K) ** (a - 1))
    assert inf >= composed_inf + sum(exact[W + len(up):])


def _check_lower(out: tuple, exact_p: list, exact_q: list, base_off: int, a: int) -> None:
    """P below the exact masses up to the deficit in all, Q above them on every class."""
    (off, P, Q, _), deficit = out
    W = off - a * base_off
    assert W >= 0
    inside = range(min(len(P), len(exact_p) - W))
    assert all(Q[k] >= exact_q[W + k] for k in inside)
    assert sum(max(0, P[k] - exact_p[W + k]) for k in inside) + sum(P[len(inside):]) <= deficit


@pytest.mark.parametrize("seed,n,a", [(1, 30, 5), (2, 17, 13), (3, 50, 3), (4, 9, 40), (6, 40, 60)])
def test_upper_and_lower_powers_enclose_the_exact_convolution(seed, n, a):
    rng = random.Random(seed)
    K = 64
    c = _masses(rng, n, K)
    q = _q_of(c, 2)
    exact = _units(_exact_power(c, a), K, a)
    exact_q = _units(_exact_power(q, a), K, a)
    up = F.fourier_upper((2, c, 5), a, K, 1 << 40)
    _check_upper(up, exact, 2, a, 5, K)
    low = F.fourier_lower((2, c, q, 5), a, K, 1 << 40, M)
    _check_lower(low, exact, exact_q, 2, a)
    # the enclosures are tight: within the allowance (plus one unit per coefficient) in all
    W = up[0] - 2 * a
    assert sum(up[1][k] - exact[W + k] for k in range(1, min(len(up[1]), len(exact) - W))) <= (1 << 40) + len(up[1])
    (offL, P, _, _), _ = low
    WL = offL - 2 * a
    assert sum(exact[WL + k] - P[k] for k in range(min(len(P), len(exact) - WL))) <= (1 << 40) + len(P) \
        + sum(exact[:WL]) + sum(exact[WL + len(P):])


def test_a_long_power_takes_a_window():
    # a power whose support is longer than the window the floats choose: the checks above then
    # cover the mass moved below / above the window and the lower pair's deficit
    rng = random.Random(11)
    K, n, a = 64, 40, 60
    c = _masses(rng, n, K)
    exact = _units(_exact_power(c, a), K, a)
    out = F.fourier_upper((0, c, 0), a, K, 1 << 44)
    assert 0 < out[0] and out[0] + len(out[1]) < len(exact)  # a genuine window
    _check_upper(out, exact, 0, a, 0, K)
    q = _q_of(c, 0)
    low = F.fourier_lower((0, c, q, 0), a, K, 1 << 44, M)
    assert low[1] > 0
    _check_lower(low, exact, _units(_exact_power(q, a), K, a), 0, a)


def test_a_broken_twiddle_is_caught():
    # one twiddle moved by 1e-9 (far beyond its claimed mu ~ 4e-16): the transform leaves
    # its proven bound, and the power built on it misses the exact convolution
    rng = random.Random(5)
    N = 64
    cos, sin, mu = F._twiddles(N)
    bad_cos = cos.copy()
    bad_cos[3] += 1e-9
    x = np.array([rng.random() for _ in range(N // 2)] + [0.0] * (N // 2))
    zr, zi, _ = F.fft(x, np.zeros(N))
    br, bi, _ = F.fft(x, np.zeros(N), (bad_cos, sin, mu))
    bound = float(F.growth(mu, 6)) * float(x.sum())
    assert np.max(np.abs(zr - br) + np.abs(zi - bi)) > 2 * bound
    # the same through the power: with the broken table the outward-rounded result is wrong
    K, a = 64, 4
    c = _masses(rng, 16, K)
    exact = _units(_exact_power(c, a), K, a)
    F._TW[N] = (bad_cos, sin, mu)
    try:
        _, up, _ = F.fourier_upper((0, c, 0), a, K, 1 << 30)
        _, P_, _ = F.fourier_lower((0, c, _q_of(c, 0), 0), a, K, 1 << 30, M)[0][:3]
    finally:
        F._TW.pop(N, None)
    assert any(up[k] < exact[k] for k in range(len(exact))) or any(P_[k] > exact[k] for k in range(len(exact)))


def test_declines_past_the_allowance_with_a_factor():
    rng = random.Random(3)
    K = 120
    c = _masses(rng, 30, K)
    with pytest.raises(F.Declined) as info:
        F.fourier_upper((0, c, 0), 20, K, 1 << 40)  # 2^-80: below binary64's error floor
    assert info.value.factor is None or info.value.factor > 1


def test_round_to_nearest_probe():
    assert F.round_to_nearest()


def test_a_fine_grid_tilt_keeps_q_above_the_exact_power():
    # grid 2^-60, losses about 65: the tilt's class indices j ~ 65 2^60 exceed 2^53, so a 53-bit
    # conversion of j rounds it (revfft F1). off is chosen just below a rounding midpoint at 53
    # bits (rounded down: the input tilt too small) with 9 off rounded up in magnitude (the
    # output untilt too small), which left Q 8.8e-14 below the exact (Q 2^-K)^9 in units 2^-K
    m, a, K = 60, 9, 150
    base = 65 * 2 ** 60
    off = base - base % 2 ** 14 + 2 ** 13 - 1
    off = next(o for o in (off + k * 2 ** 14 for k in range(8)) if (a * o) % 2 ** 17 > 2 ** 16)
    mass = 1 << (K - 1)
    (_, P, Q, _), _ = F.fourier_lower((off, [mass], [mass], 0), a, K, 1 << (K + 800), m, 1)
    exact = Fraction(mass ** a, 1 << (K * (a - 1)))  # one class: the power is its a-th power
    assert Q[0] >= exact
    assert Q[0] <= exact * (1 + Fraction(1, 10 ** 12))  # and still tight
    assert P[0] <= exact


@pytest.mark.parametrize("N", [256, 4096])
def test_twiddle_bounds_hold_in_complex_modulus(N):
    # mu bounds |w^ - w| as a complex number (module docstring 2), not one component: the exact
    # cos, sin at 200 bits (every operation in that context; error ~2^-195) against the doubles.
    # A componentwise bound fell short by a factor 1.29 at N = 256 (revfft F2)
    ctx = gmpy2.context(precision=200)
    two_pi = ctx.mul(ctx.const_pi(), 2)

    def worst(c, s):
        out = mpfr(0)
        for k in range(N // 2):
            x = ctx.div(ctx.mul(two_pi, k), N)
            dc, ds = ctx.sub(mpfr(float(c[k]), 200), ctx.cos(x)), ctx.sub(mpfr(float(s[k]), 200), ctx.sin(x))
            out = max(out, ctx.sqrt(ctx.add(ctx.mul(dc, dc), ctx.mul(ds, ds))))
        return out

    c, s, mu_table = F._table(N // 2, N)
    w = worst(c, s)
    assert 0 < w <= mu_table
    cc, ss, mu = F._twiddles(N)
    assert 0 < worst(cc, ss) <= mu


def test_a_huge_allowance_is_no_overflow():
    # an allowance past 2^1024 units (revfft F5) is an allowance like any large one: the power
    # is returned and still encloses the exact convolution
    rng = random.Random(13)
    K, a = 64, 5
    c = _masses(rng, 20, K)
    exact = _units(_exact_power(c, a), K, a)
    _check_upper(F.fourier_upper((0, c, 0), a, K, 1 << 2000), exact, 0, a, 0, K)
    q = _q_of(c, 0)
    low = F.fourier_lower((0, c, q, 0), a, K, 1 << 2000, M)
    _check_lower(low, exact, _units(_exact_power(q, a), K, a), 0, a)


def test_the_planning_exp_and_log_against_mpfr():
    # the window's floats use exp / log of basic operations only (the same bits on every CPU,
    # revfft F4); they must still be accurate (they only choose, so 1e-12 is plenty): against
    # MPFR's correctly rounded values
    rng = random.Random(17)
    v = np.array([-rng.random() * 740 for _ in range(2000)] + [0.0, -1e-300, -0.3465, -700.0])
    x = np.array([math.ldexp(1 + rng.random(), rng.randrange(-1000, 1000)) for _ in range(2000)] + [1.0, 0.5, 2.0])
    ctx = gmpy2.context(precision=53)
    for got, arg in zip(F._exp_det(v).tolist(), v.tolist()):
        ref = float(ctx.exp(arg))
        assert abs(got - ref) <= 1e-12 * ref
    for got, arg in zip(F._log_det(x).tolist(), x.tolist()):
        ref = float(ctx.log(arg))
        assert abs(got - ref) <= 4 * math.ulp(ref) + 1e-300
    assert F._exp_det(np.array([-746.0, -np.inf])).tolist() == [0.0, 0.0]
    # the log of a sum taken in integers, within its stated 2^-20 of the exact sum's log
    e = F._exp_det(-np.array([rng.random() * 30 for _ in range(5000)] + [0.0]))
    exact = gmpy2.context(precision=200).log(sum(Fraction(t) for t in e.tolist()).numerator) \
        - gmpy2.context(precision=200).log(sum(Fraction(t) for t in e.tolist()).denominator)
    assert abs(F._log_sum(e) - float(exact)) <= 2.0 ** -20


@pytest.mark.parametrize("v", [2**60 + 1, 2**60 - 1, 2**53 + 1, 3**40, 2**200 - 1])
def test_input_doubles_are_rounded_in_their_stated_direction(v):
    """revfft2 G1: `ctx.plus(mpz(v))` returned the mpz, and float() of it rounds to nearest, so the
    "up" double of 2^60 + 1 was below it and the "down" double of 2^60 - 1 above it. Exact check in
    rationals: up >= v >= down, each within one ulp of v."""
    K = 76
    up = Fraction(float(F._floats([v], K, True)[0])) * 2**K
    down = Fraction(float(F._floats([v], K, False)[0])) * 2**K
    assert down <= v <= up
    assert up - down <= Fraction(v, 2**51)


def _floats_by_mpfr(c, K, up):
    """The reference: each c_i rounded to 53 bits by MPFR's directed division by 1 (what
    ``_floats`` did one mass at a time), then scaled by 2^-K."""
    ctx = gmpy2.context(precision=53, round=gmpy2.RoundUp if up else gmpy2.RoundDown)
    return np.ldexp(np.array([float(ctx.div(gmpy2.mpz(v), 1)) for v in c], dtype=np.float64), -K)


def test_vectorised_input_doubles_are_mpfrs_directed_roundings_bit_for_bit():
    """``_floats`` rounds on 64-bit limbs with numpy integer operations; it must give MPFR's RoundUp /
    RoundDown to 53 bits exactly: limb boundaries (2^64 +- 1, a top limb with 64 bits), a 53-bit head
    followed by zeros then a 1 several limbs lower (the sticky bit of the limbs below t - 1), carries
    to the next power of two (2^53 - 1 shifted, + 1), ints and mpz, zeros among them."""
    rng = random.Random(7)
    head = (2**53 - 1)
    vals = [0, 1, 2**53 - 1, 2**53, 2**53 + 1, 2**54 + 1, 2**63, 2**63 + 2**10, 2**63 + 2**11, 2**64 - 1, 2**64,
            2**64 + 1, 2**127, 2**128 - 1, 2**128 + 1, 2**200 + 1, 2**200 - 1, 3**400, head << 11, (head << 11) + 1,
            head << 700, (head << 700) + 1, (head << 140) + 2**3, (1 << 799) + 1]
    for bits in range(1, 800, 7):
        vals += [rng.getrandbits(bits), (rng.getrandbits(53) | 1 << 52) << bits,
                 ((rng.getrandbits(53) | 1 << 52) << bits) + 1, (1 << bits) - 1]
    for K in (0, 76, 800):
        for up in (True, False):
            for c in (vals, [gmpy2.mpz(v) for v in vals], [5], [2**100 + 1], [0, 0]):
                got, ref = F._floats(c, K, up), _floats_by_mpfr(c, K, up)
                assert np.array_equal(got, ref), [(v, x, y) for v, x, y in zip(c, got, ref) if x != y][:3]
    with pytest.raises(ValueError):
        F._floats([3, -1], 0, True)


def _full_scan(x, a, log_target, above):
    """The window's tail point by the whole scan of lambda (the rule before the coarse scan)."""
    idx = np.arange(x.size, dtype=np.float64)
    logx = np.where(x > 0, F._log_det(np.where(x > 0, x, 1.0)), -np.inf)
    sgn = 1.0 if above else -1.0
    best = None
    for lam in F._LAMBDAS:
        z = logx + sgn * lam * idx
        zm = float(z.max())
        r = (a * (zm + F._log_sum(F._exp_det(z - zm))) - log_target) / lam
        t = math.ceil(r) if above else -math.ceil(r)
        key = t if above else -t
        if best is None or key < best[0]:
            best = (key, t, float(lam))
    return best[1], best[2]


@pytest.mark.parametrize("shape", ["gauss", "skew", "two", "geom", "flat"])
@pytest.mark.parametrize("a", [2, 24, 1000])
def test_the_coarse_lambda_scan_finds_the_full_scans_tail_point(shape, a):
    """The window's Chernoff point from every fourth lambda and the neighbours of the best (its
    exponent falls, then rises, in lambda) against the scan of all 64: the same (t, lambda) on
    shapes of a PLD step and some that are not (a choice only, but one that sets the window)."""
    n = 3000
    i = np.arange(n, dtype=np.float64)
    x = {"gauss": np.exp(-((i - 1200.0) / 150.0) ** 2 / 2), "skew": np.exp(-i / 40.0) + 1e-9 * np.exp(-((i - 2500.0) / 30) ** 2),
         "two": np.where((i == 0) | (i == n - 1), 0.5, 0.0), "geom": 0.999 ** i, "flat": np.ones(n)}[shape]
    x = x / x.sum()
    for log_target in (-30.0, -200.0):
        for above in (True, False):
            assert F._tail_point(x, a, log_target, above) == _full_scan(x, a, log_target, above)
