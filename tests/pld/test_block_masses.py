"""The discretisation's masses from Taylor blocks in binary64 (discretise.block_masses, the
kernels of pld/binary64.py) against an independent route: mpmath at 50 digits at every knot
of a few blocks, from the closed-form tails (test_grid_tails._mp_gauss_tails). Each integer
must bound its exact mass in the sound direction (upper masses and tilted Q up, P down) and
be within 2 units of it. Two deliberately weakened bounds (the compensation dropped, the
Taylor remainder left out) must make the same check fail, so it can."""

from fractions import Fraction as F

import mpmath
import numpy as np
import pytest
from flint import arb
from hypothesis import given, settings, strategies as st

from dpverify.ball import working_precision
from dpverify.pld import binary64 as B
from dpverify.pld import discretise as D
from dpverify.pld.pairs import SubsampledGaussianPair
from dpverify.pld.taylor_blocks import taylor_expansion

from .test_grid_tails import _mp_gauss_tails


class _Exact:
    """Exact masses in units 2^-K at the knots i 2^-m, from mpmath's tails (cached per knot):
    up = x (slope right - slope left) of the chords through (x_i, delta_i), delta = P - x Q
    (no mass at +inf for these pairs); the bucket (i h, (i + 1) h]'s P-mass and its Q-mass
    tilted by e^{i h + h / 2}; written out from discretise.py's module docstring."""

    def __init__(self, sigma, q, direction, m, K, tails=None, dps=50):
        mpmath.mp.dps = dps
        self.m, self.K, self.cache = m, K, {}
        self.fn = tails or (lambda eps: _mp_gauss_tails(sigma, q, direction, eps))

    def tails(self, i):
        if i not in self.cache:
            self.cache[i] = self.fn(mpmath.mpf(i) / 2 ** self.m)
        return self.cache[i]

    def x(self, i):
        return mpmath.exp(mpmath.mpf(i) / 2 ** self.m)

    def d(self, i):
        p, q = self.tails(i)
        return p - self.x(i) * q

    def up(self, i):
        right = (self.d(i + 1) - self.d(i)) / (self.x(i + 1) - self.x(i))
        left = (self.d(i) - self.d(i - 1)) / (self.x(i) - self.x(i - 1))
        return self.x(i) * (right - left) * 2 ** self.K

    def lp(self, i):
        return (self.tails(i)[0] - self.tails(i + 1)[0]) * 2 ** self.K

    def lq(self, i):
        h = mpmath.mpf(1) / 2 ** self.m
        return (self.tails(i)[1] - self.tails(i + 1)[1]) * mpmath.exp(i * h + h / 2) * 2 ** self.K


def _violations(ex, i0, knots, up, lp, lq):
    """(sound-direction failures, loose ones: more than 2 units from the exact mass)."""
    bad, loose = [], []
    for t in knots:
        i = i0 + t
        last = t >= len(lp)  # the last knot has no class
        for name, got, exact, upward in (("up", up[t], lambda: ex.up(i), True),
                                         ("lp", None if last else lp[t], lambda: ex.lp(i), False),
                                         ("lq", None if last else lq[t], lambda: ex.lq(i), True)):
            if got is None:
                continue
            v = exact()
            if (got < v) if upward else (got > v):
                bad.append((name, i, got, v))
            if abs(got - v) > 2:
                loose.append((name, i, got, v))
    return bad, loose


CASES = [
    (F(4, 5), F(1, 250), "remove", 11, 70),  # row C's pair
    # MNIST's, the other direction (at 2^-11: on 2^-10 fewer than 1024 of its 1020 knots lie far
    # enough from the support's end for a binary64 block, and every knot comes off pairs._SfLattice)
    (F(11, 10), F(256, 60000), "add", 11, 74),
    (F(2), F(1), "remove", 9, 66),  # q = 1: the Gaussian mechanism
]


def block_masses_of(pair, m: int, K: int) -> tuple:
    """(i0, blocks, up, lp, lq): ``pair``'s masses on the grid 2^-m at the unit 2^-K as its Taylor
    blocks serve them (discretise.block_masses; None where a block does not serve a knot), checked to
    serve most knots (else a test of them tests nothing)."""
    i0, n = D.grid_range(pair, m, 1e-12)
    L = n - i0 + 1
    with working_precision(K + 2 * m + 60):
        _, _, blocks = pair.grid_expansions(m, i0, n)
        up, lp, lq = [None] * L, [None] * (L - 1), [None] * (L - 1)
        D.block_masses(blocks, m, K, i0, n, up, lp, lq)
    served = sum(v is not None for v in lp)
    assert served >= 0.5 * L, (served, L)
    return i0, blocks, up, lp, lq


@pytest.mark.parametrize("sigma,q,direction,m,K", CASES)
def test_block_masses_bound_the_mpmath_masses(sigma, q, direction, m, K):
    pair = SubsampledGaussianPair(sigma, q, direction)
    i0, blocks, up, lp, lq = block_masses_of(pair, m, K)
    n = i0 + len(up) - 1
    ex = _Exact(sigma, q, direction, m, K)
    picked = [blocks[0], blocks[len(blocks) // 2], blocks[-1]]
    knots = [t for b in picked for t in range(b.a - i0, b.b - i0 + 1)]
    bad, loose = _violations(ex, i0, knots, up, lp, lq)
    assert not bad, bad[:5]
    assert not loose, loose[:5]
    # a served mass is exactly what the arb route gives (both are within a unit; measured: equal)
    with working_precision(K + 2 * m + 60):
        P_t, Q_t = pair.tails_at_grid(m, i0, n)
        u0, l0 = D._from_tails(P_t, Q_t, pair.inf_mass(), m, K, i0, n)
    ref_up, ref_lp = u0.poly.coeffs(), l0.P.coeffs()
    for t in knots[::7]:
        if up[t] is not None:
            assert abs(up[t] - int(ref_up[t])) <= 1
        if lp[t] is not None:
            assert abs(lp[t] - int(ref_lp[t])) <= 1


@pytest.mark.parametrize("direction", ["add", "remove"])
def test_high_order_blocks_bound_the_mpmath_masses_up_to_the_support_end(direction, monkeypatch):
    """A tiny delta's unit (K = 480, 566 bits): the blocks expand at order 141, above the
    per-knot threshold of 64 (taylor_blocks._TAYLOR_HIGH_ORDER; 1024-knot blocks at 2^-13). On
    the 4096 knots before the support end of sigma 5, q 0.1 (add: L < -log 0.9, knot 863.1; remove:
    L > log 0.9), the last knot before the end and three beyond it, every mass of the producer's
    route (blocks split toward the end, binary64 where its proven error is at most 2^20 units, arb
    elsewhere) bounds its exact mass from mpmath at 175 digits in the sound direction, and lies
    within 2 units of it; high-order expansions serve most knots."""
    import dpverify.pld.pairs as pairs_mod
    from dpverify.pld.taylor_blocks import taylor_order

    sigma, q, m, K = F(5), F(1, 10), 13, 480
    served = []
    real = pairs_mod.taylor_expansion

    def counting(series, h, a, b, c, order, tol, reach=0):
        got = real(series, h, a, b, c, order, tol, reach)
        if got is not None:
            served.append((order, b - a + 1))
        return got

    monkeypatch.setattr(pairs_mod, "taylor_expansion", counting)
    pair = SubsampledGaussianPair(sigma, q, direction)
    end = 863  # floor(-log(0.9) 2^13) = floor(863.1): the last knot inside the support (add)
    i0, n = (end - 4095, end + 3) if direction == "add" else (-end - 3, -end + 4095)
    with working_precision(K + 2 * m + 60):
        assert taylor_order(m) == 141
        u, low = D._discretise(pair, m, K, i0, n, None)
    assert served and all(order == 141 for order, _ in served)
    assert sum(k for _, k in served) >= 0.75 * (n - i0 + 1), served
    up, lp, lq = ([int(v) for v in p.coeffs()] for p in (u.poly, low.P, low.Q))
    L = n - i0 + 1
    up, lp, lq = up + [0] * (L - len(up)), lp + [0] * (L - 1 - len(lp)), lq + [0] * (L - 1 - len(lq))
    ex = _Exact(sigma, q, direction, m, K, dps=175)
    # every knot but the two ends (the chord from (0, 1), the slope 0 beyond: no blocks there)
    bad, loose = _violations(ex, i0, range(1, L - 1), up, lp, lq)
    assert not bad, bad[:5]
    assert not loose, loose[:5]
    # the knots beyond the end carry no loss mass (exact tails 0 (add) / 1 (remove) there)
    beyond = range(end + 1 - i0, L - 1) if direction == "add" else range(0, -end - 1 - i0)
    assert beyond and all(lp[t] == 0 and ex.lp(i0 + t) == 0 for t in beyond)


def test_taylor_remainder_counts_and_a_shrunk_one_fails(monkeypatch):
    """Two exponentials as the 'tails' (g_1 = e^-eps / 2, g_2 = e^(-2 eps) / 3: arb's series
    over a ball is tight for them, so the Lagrange bound is close to the true truncation error)
    at order 10 on 256 knots at 2^-10: the remainder bound is about 156 units on lq and 3e5 on
    the upper masses (measured). With it, every mass bounds mpmath's; with the remainder set to
    0 (a shrunk bound), some do not."""
    from flint import arb_series

    m, K, N = 10, 50, 10

    def series(e, L):
        t = arb_series([0, 1], prec=L)
        return (-(e + t)).exp() / 2, (-2 * (e + t)).exp() / 3

    with working_precision(140):
        blk = taylor_expansion(series, arb(2) ** -m, 0, 255, 127, N, arb(1), reach=1)
    assert blk is not None
    i0, n = -10, 300
    ex = _Exact(None, None, None, m, K, tails=lambda eps: (mpmath.exp(-eps) / 2, mpmath.exp(-2 * eps) / 3))
    knots = range(blk.a - i0, blk.b - i0 + 1)

    def run():
        L = n - i0 + 1
        up, lp, lq = [None] * L, [None] * (L - 1), [None] * (L - 1)
        with working_precision(140):
            D.block_masses([blk], m, K, i0, n, up, lp, lq)
        assert sum(v is not None for v in lp) == blk.b - blk.a + 1
        return _violations(ex, i0, knots, up, lp, lq)[0]

    assert not run()
    real = D._block_polys

    def shrunk(*args):
        polys, rems = real(*args)
        return polys, [arb(0)] * len(rems)

    monkeypatch.setattr(D, "_block_polys", shrunk)
    assert run(), "the remainder bound was not needed: this test would not catch its loss"


def test_dropped_compensation_fails(monkeypatch):
    """Plain Horner (s alone, the compensation c dropped, as if binary64 were exact): masses
    near 2^62 units (ulp 2^10) are off by many units, and the mpmath check catches it."""
    sigma, q, direction, m, K = F(4, 5), F(1, 250), "remove", 11, 84
    pair = SubsampledGaussianPair(sigma, q, direction)
    i0, n = D.grid_range(pair, m, 1e-12)
    L = n - i0 + 1
    real = B.compensated_horner
    monkeypatch.setattr(D, "compensated_horner", lambda *a: (real(*a)[0], np.zeros_like(real(*a)[1])))
    with working_precision(K + 2 * m + 60):
        _, _, blocks = pair.grid_expansions(m, i0, n)
        up, lp, lq = [None] * L, [None] * (L - 1), [None] * (L - 1)
        D.block_masses(blocks[len(blocks) // 2:len(blocks) // 2 + 1], m, K, i0, n, up, lp, lq)
    b = blocks[len(blocks) // 2]
    bad, _ = _violations(_Exact(sigma, q, direction, m, K), i0, range(b.a - i0, b.b - i0 + 1), up, lp, lq)
    assert bad


# -- the binary64 kernels against exact rationals ---------------------------------------

_double = st.floats(min_value=-2.0 ** 60, max_value=2.0 ** 60, allow_nan=False, allow_infinity=False)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(_double, st.floats(-1, 1)), min_size=1, max_size=30),
       st.lists(st.integers(-1024, 1024), min_size=1, max_size=20))
def test_compensated_horner_within_its_bound(coefs, points):
    """|s + c - p(u)| <= horner_error for double-double coefficients (hi, lo = hi * r * 2^-53,
    dropped below MIN_ABS as the producer does), p(u) evaluated exactly in Fractions."""
    hi = [0.0 if abs(h) < B.MIN_ABS else h for h, _ in coefs]
    lo = [0.0 if abs(h * r * 2.0 ** -53) < B.MIN_ABS else h * r * 2.0 ** -53 for h, r in zip(hi, (r for _, r in coefs))]
    N = len(hi) - 1
    U = max(abs(u) for u in points)
    pH = sum((abs(arb(h)) * arb(U) ** k for k, h in enumerate(hi)), arb(0))
    pL = sum((abs(arb(x)) * arb(U) ** k for k, x in enumerate(lo)), arb(0))
    bound = B.horner_error(N, pH, pL)
    s, c = B.compensated_horner(np.array([hi]), np.array([lo]), np.array([len(points)]),
                                np.array(points, dtype=np.float64))
    for u, sv, cv in zip(points, s.tolist(), c.tolist()):
        exact = sum((F(h) + F(x)) * F(u) ** k for k, (h, x) in enumerate(zip(hi, lo)))
        err = abs(F(sv) + F(cv) - exact)
        with working_precision(200):
            assert arb(err.numerator) / err.denominator <= bound, (u, float(err))


def test_compensated_horner_beats_plain_horner():
    """A polynomial with cancellation (the coefficients of (u - 1)^12 scaled by 2^40 + 1): plain
    Horner errs by far more than the compensated bound, which still holds."""
    from math import comb

    coeffs = [float(comb(12, k) * (-1) ** (12 - k) * ((1 << 40) + 1)) for k in range(13)]
    pts = np.arange(-300.0, 301.0)
    s, c = B.compensated_horner(np.array([coeffs]), np.zeros((1, 13)), np.array([pts.size]), pts)
    pH = sum((abs(arb(h)) * arb(300) ** k for k, h in enumerate(coeffs)), arb(0))
    bound = B.horner_error(12, pH, arb(0))
    worst_plain = 0
    for u, sv, cv in zip(pts.tolist(), s.tolist(), c.tolist()):
        exact = ((1 << 40) + 1) * (int(u) - 1) ** 12
        assert abs(F(sv) + F(cv) - exact) <= F(float(bound.upper()))
        worst_plain = max(worst_plain, abs(F(sv) - exact))
    assert worst_plain > F(float(bound.upper())) * 2 ** 20


@settings(max_examples=300, deadline=None)
@given(st.floats(-2.0 ** 62, 2.0 ** 62), st.floats(-2.0 ** 12, 2.0 ** 12), st.floats(0, 2.0 ** 20))
def test_round_up_and_down_bound_every_value_in_reach(s, c, err):
    """round_up >= max(0, s + c + err) and round_down <= s + c - err (clamped at 0), exactly."""
    a, b, e = np.array([s]), np.array([c]), np.array([err])
    top = F(s) + F(c) + F(err)
    bottom = F(s) + F(c) - F(err)
    up = B.round_up(a, b, e)[0]
    down = B.round_down(a, b, e)[0]
    assert up >= max(0, top) and up <= max(0, top) + 2
    assert down <= max(0, bottom) and down >= bottom - 2
    # on an exact integer with no error, both are that integer (no slack beyond 2^-20)
    k = float(int(s))
    assert B.round_up(np.array([k]), np.array([0.0]), np.array([0.0]))[0] in (max(0, int(k)), max(0, int(k)) + 1)


def test_float_upper_and_split_enclose():
    with working_precision(200):
        x = arb(1) / 3 + arb(2) ** 70
        hi, lo, r = B.split_double_double(x)
        assert abs(x - hi - lo) <= r and r < arb(2) ** -30
        assert arb(B.float_upper(x)) >= x
        assert B.split_double_double(arb(2) ** -2000)[:2] == (0.0, 0.0)  # below MIN_ABS: held by r
