"""Tails on the grid (the discretisation's input) against mpmath at 50 digits:
the mixture-of-Gaussians pair proposes its roots for the whole grid at once
in numpy and proves them by one interval Newton step; every knot's ball must
hold mpmath's tails (root by bisection of the loss, tails by erfc)."""

from fractions import Fraction as F

import mpmath
import pytest
from flint import arb

from dpverify.ball import working_precision
from dpverify.events.pairs import MixtureGaussianPair

MIXTURES = [
    ((F(0), F(1)), (F(99, 100), F(1, 100))),
    ((F(0), F(1), F(2)), (F(98, 100), F(1, 100), F(1, 100))),
    ((F(1), F(3)), (F(1, 2), F(1, 2))),
]


def _mp_tails(sens, probs, sigma, direction, eps):
    """(P(L > eps), Q(L > eps)) in mpmath: g(x) = log sum p_i e^{mu_i x - mu_i^2/2}
    is increasing; its root by bisection, the normal tails by erfc."""
    mp = mpmath.mp
    comps = [(mp.mpf(c.numerator) / c.denominator / sigma, mp.mpf(p.numerator) / p.denominator)
             for c, p in zip(sens, probs) if p != 0]

    def g(x):
        return mp.log(mp.fsum(p * mp.exp(mu * x - mu * mu / 2) for mu, p in comps))

    y = eps if direction == "remove" else -eps
    p0 = mp.fsum(p for mu, p in comps if mu == 0)
    sf = lambda t: mp.erfc(t / mp.sqrt(2)) / 2  # noqa: E731
    if p0 > 0 and y <= mp.log(p0):
        return (mp.mpf(1), mp.mpf(1)) if direction == "remove" else (mp.mpf(0), mp.mpf(0))
    lo, hi = mp.mpf(-1), mp.mpf(1)
    while g(lo) > y:
        lo *= 2
    while g(hi) < y:
        hi *= 2
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if g(mid) < y else (lo, mid)
    x = (lo + hi) / 2
    if direction == "remove":
        return mp.fsum(p * sf(x - mu) for mu, p in comps), sf(x)
    return sf(-x), mp.fsum(p * sf(mu - x) for mu, p in comps)


@pytest.mark.parametrize("sens,probs", MIXTURES)
@pytest.mark.parametrize("direction", ["remove", "add"])
def test_mixture_grid_tails_hold_the_mpmath_tails(sens, probs, direction):
    pair = MixtureGaussianPair(F(1), sens, probs, direction)
    m, i0, n = 8, -40, 900
    with working_precision(140):
        P, Q = pair.tails_at_grid(m, i0, n)
    mpmath.mp.dps = 50
    for i in list(range(i0, n + 1, 37)) + [i0, n]:
        p, q = _mp_tails(sens, probs, 1, direction, mpmath.mpf(i) / 2 ** m)
        k = i - i0
        for ball_, ref in ((P[k], p), (Q[k], q)):
            ref_ball = arb(mpmath.nstr(ref, 45)) if ref != 0 else arb(0)
            # mpmath's value to 45 digits (its error far below the balls' radii)
            assert ball_.overlaps(ref_ball + arb(0, float(abs(ref)) * 1e-40 + 1e-300)), (i, direction)
        assert P[k].rad() < 1e-30 and Q[k].rad() < 1e-30


def _mp_gauss_tails(sigma, q, direction, eps):
    """(P(L > eps), Q(L > eps)) of the subsampled Gaussian pair in mpmath, from
    the closed form (pairs.py's derivation, written again here): L(x) > eps iff
    x > x_eps (remove) or x < x'_eps (add), x_eps = (log((e^y - 1 + q) / q)
    + mu^2 / 2) / mu with y = eps (remove) or -eps (add)."""
    mp = mpmath.mp
    mu = 1 / mp.mpf(sigma.numerator) * sigma.denominator
    qq = mp.mpf(q.numerator) / q.denominator
    sf = lambda t: mp.erfc(t / mp.sqrt(2)) / 2  # noqa: E731
    if qq == 1:
        return sf(eps / mu - mu / 2), sf(eps / mu + mu / 2)
    y = eps if direction == "remove" else -eps
    a = mp.expm1(y) + qq
    if a <= 0:
        return (mp.mpf(1), mp.mpf(1)) if direction == "remove" else (mp.mpf(0), mp.mpf(0))
    x = (mp.log(a / qq) + mu * mu / 2) / mu
    if direction == "remove":
        return (1 - qq) * sf(x) + qq * sf(x - mu), sf(x)
    return sf(-x), (1 - qq) * sf(-x) + qq * sf(mu - x)


GAUSS = [
    (F(11, 10), F(256, 60000), 11, 0.5),  # MNIST-like: a support end a few knots from 0
    # the whole range lies within a few q of the support end (x'(eps) ~ 1 / (mu q)):
    # the blocks split to their end, every knot gets its erfc pair
    (F(4), F(1, 100), 12, 0),
    (F(1, 2), F(1, 2), 8, 0.5),
    (F(2), F(1), 9, 0.9),  # q = 1: the Gaussian mechanism, tails linear in eps
]


@pytest.mark.parametrize("sigma,q,m,share", GAUSS)
@pytest.mark.parametrize("direction", ["remove", "add"])
def test_gaussian_grid_tails_by_taylor_blocks_hold_the_mpmath_tails(sigma, q, m, share, direction, monkeypatch):
    """Every knot's ball (Taylor blocks with the ball remainder, or one erfc pair
    where a block is split to its end) holds mpmath's tails at 50 digits, and
    is at most the block tolerance 2^-(prec - 20) wide; the blocks must
    actually serve the ``share`` of knots measured when this was written (else
    this would test the per-knot route only)."""
    import dpverify.pld.pairs as pairs_mod
    from dpverify.pld.discretise import grid_range

    served = [0]
    real = pairs_mod.taylor_expansion

    def counting(series, h, a, b, c, order, tol, reach=0):
        got = real(series, h, a, b, c, order, tol, reach)
        if got is not None:
            served[0] += b - a + 1
        return got

    monkeypatch.setattr(pairs_mod, "taylor_expansion", counting)
    pair = pairs_mod.SubsampledGaussianPair(sigma, q, direction)
    i0, n = grid_range(pair, m, 1e-12)
    prec = 150
    with working_precision(prec):
        P, Q = pair.tails_at_grid(m, i0, n)
    assert served[0] >= share * (n - i0 + 1), (served[0], n - i0 + 1)
    mpmath.mp.dps = 50
    for i in range(i0, n + 1):
        p, qv = _mp_gauss_tails(sigma, q, direction, mpmath.mpf(i) / 2 ** m)
        k = i - i0
        for ball_, ref in ((P[k], p), (Q[k], qv)):
            ref_ball = arb(mpmath.nstr(ref, 48)) if ref != 0 else arb(0)
            assert ball_.overlaps(ref_ball + arb(0, float(abs(ref)) * 1e-46 + 1e-300)), (i, direction)
            assert ball_.rad() <= arb(2) ** (20 - prec), (i, ball_)


def test_taylor_block_remainder_is_the_ball_coefficient():
    """taylor_block on g = (exp, log(1 + eps)) against mpmath: inside the
    radius of convergence every knot's ball holds the value; a block whose
    ball reaches the singularity of log(1 + eps) at -1 (non-finite
    coefficients) or whose remainder exceeds tol is refused (None), never
    returned wide or wrong."""
    from flint import arb_series

    from dpverify.pld.taylor_blocks import taylor_block

    def series(e, L):
        t = arb_series([0, 1], prec=L)
        return (e + t).exp(), (1 + e + t).log()

    mpmath.mp.dps = 50
    with working_precision(120):
        h = arb(2) ** -10
        got = taylor_block(series, h, -20, 20, 0, 30, arb(2) ** -100)
        assert got is not None
        for k, i in enumerate(range(-20, 21)):
            x = mpmath.mpf(i) / 1024
            for ball_, ref in zip((got[0][k], got[1][k]), (mpmath.exp(x), mpmath.log1p(x))):
                assert ball_.overlaps(arb(mpmath.nstr(ref, 45)) + arb(0, 1e-44)), i
                assert ball_.rad() < 2.0 ** -99
        # at order 3 the remainder (~ R^4 / 24 = 6e-9 at the ends) is far wider
        # than arb's rounding: the balls must still hold the values, which only
        # the ball coefficient of order 4 makes true (the cubic alone misses)
        low = taylor_block(series, h, -20, 20, 0, 3, arb(2) ** -20)
        assert low is not None
        for k, i in enumerate(range(-20, 21)):
            x = mpmath.mpf(i) / 1024
            assert low[0][k].overlaps(arb(mpmath.nstr(mpmath.exp(x), 45)) + arb(0, 1e-44)), i
        x = mpmath.mpf(20) / 1024
        cubic = sum(x ** k / mpmath.factorial(k) for k in range(4))
        assert abs(mpmath.exp(x) - cubic) > 1e-9  # the remainder matters here
        # the ball around c = -1000 (radius 30 knots) reaches log's singularity at -1
        assert taylor_block(series, h, -1030, -970, -1000, 30, arb(2) ** -100) is None
        # too low an order for the width asked: refused
        assert taylor_block(series, h, -20, 20, 0, 4, arb(2) ** -100) is None


def test_grid_finer_than_binary64_fails_closed():
    """A grid whose step 2^-m is no normal binary64 number (a loss of size 1e-3000 asked for
    m ~ 10^4) is refused with PrecisionExhausted (exit 3), not a ZeroDivisionError (exit 4)
    from h = 2.0 ** -m == 0.0; m = 1000 is the last one stepped (2^-1002 is still normal)."""
    from dpverify.errors import PrecisionExhausted
    from dpverify.pld.discretise import grid_range
    from dpverify.pld.pairs import SubsampledLaplacePair

    pair = SubsampledLaplacePair(F(1), F(1, 2), "add")
    with pytest.raises(PrecisionExhausted, match="2\\^-1100"):
        grid_range(pair, 1100, 1e-10)
    assert 2.0 ** -1002 > 2.2250738585072014e-308  # the last step searched is a normal number
    i0, n = grid_range(pair, 8, 1e-10)
    assert i0 < 0 < n


@pytest.mark.parametrize("sigma,q,m", [(F(1), F(2, 5), 8), (F(1, 2), F(1, 10), 9)])
def test_max_curve_grid_tails_take_each_pairs_grid_route_and_hold_the_mpmath_tails(sigma, q, m, monkeypatch):
    """MaxCurvePair (sampling without replacement, AFA Cor 32) on the grid: its two Gaussian pairs'
    tails come from their Taylor-block grid route, not one arb erfc pair per knot and pair (issue 22:
    7 of 15 s of `calibrate dpsgd --sampling without-replacement` at N = 10 went there), and every
    knot's ball holds mpmath's tails of the pair whose curve is the larger there (at eps = 0, where
    the two curves meet, of the one with the smaller Q tail: the larger right derivative)."""
    import dpverify.pld.pairs as pairs_mod
    from dpverify.events.pairs import MaxCurvePair
    from dpverify.pld.discretise import grid_range

    calls = [0]
    real = pairs_mod.SubsampledGaussianPair.tails

    def counting(self, eps):
        calls[0] += 1
        return real(self, eps)

    monkeypatch.setattr(pairs_mod.SubsampledGaussianPair, "tails", counting)
    pair = MaxCurvePair(pairs_mod.SubsampledGaussianPair(sigma, q, "remove"),
                        pairs_mod.SubsampledGaussianPair(sigma, q, "add"), tie_at_zero=True)
    i0, n = grid_range(pair, m, 1e-12)
    assert i0 <= 0 <= n
    with working_precision(150):
        P, Q = pair.tails_at_grid(m, i0, n)
    assert calls[0] < (n - i0 + 1) / 4, (calls[0], n - i0 + 1)  # the old route: 2 per knot
    mpmath.mp.dps = 50
    for i in range(i0, n + 1):
        eps = mpmath.mpf(i) / 2 ** m
        (pr, qr), (pa, qa) = (_mp_gauss_tails(sigma, q, d, eps) for d in ("remove", "add"))
        dr, da = pr - mpmath.exp(eps) * qr, pa - mpmath.exp(eps) * qa
        want = ((pr, qr) if qr <= qa else (pa, qa)) if i == 0 else ((pr, qr) if dr > da else (pa, qa))
        k = i - i0
        for ball_, ref in zip((P[k], Q[k]), want):
            ref_ball = arb(mpmath.nstr(ref, 48)) if ref != 0 else arb(0)
            assert ball_.overlaps(ref_ball + arb(0, float(abs(ref)) * 1e-46 + 1e-300)), (i, ball_, ref)
            assert ball_.rad() <= arb(2) ** (20 - 150), (i, ball_)


@pytest.mark.parametrize("direction,lo,hi,value", [("remove", -4, -1, 1), ("add", 1, 4, 0), ("remove", -4, 2, None),
                                                   ("add", -2, 4, None)])
def test_gaussian_grid_tails_beyond_the_support_end_are_its_exact_constants(direction, lo, hi, value, monkeypatch):
    """Beyond the end of the loss support (remove: eps < log(1 - q); add: eps > -log(1 - q)) the tails
    are exactly (1, 1) or (0, 0). Such blocks had no finite Taylor series and were split down to one
    knot at a time (half of a sampling-without-replacement grid, issue 22); they now take the constants
    at once, without a series or a per-knot evaluation. Ranges across the end hold mpmath's tails."""
    import dpverify.pld.pairs as pairs_mod

    q, sigma, m = F(1, 2), F(1), 12
    calls = [0]
    real = pairs_mod.SubsampledGaussianPair._tails_with

    def counting(self, eps, c, sf):
        calls[0] += 1
        return real(self, eps, c, sf)

    monkeypatch.setattr(pairs_mod.SubsampledGaussianPair, "_tails_with", counting)
    pair = pairs_mod.SubsampledGaussianPair(sigma, q, direction)
    i0, n = lo * 2 ** m, hi * 2 ** m
    with working_precision(150):
        P, Q = pair.tails_at_grid(m, i0, n)
    if value is not None:
        assert calls[0] < 32, calls[0]  # a last piece under 32 knots; the old route: one per knot, after failed series
        assert all(p == value and q_ == value and p.is_exact() for p, q_ in zip(P, Q))
        return
    assert calls[0] < (n - i0 + 1) / 20, calls[0]
    mpmath.mp.dps = 50
    for i in range(i0, n + 1, 97):
        p, qv = _mp_gauss_tails(sigma, q, direction, mpmath.mpf(i) / 2 ** m)
        for ball_, ref in ((P[i - i0], p), (Q[i - i0], qv)):
            ref_ball = arb(mpmath.nstr(ref, 48)) if ref != 0 else arb(0)
            assert ball_.overlaps(ref_ball + arb(0, float(abs(ref)) * 1e-46 + 1e-300)), (i, direction)
