"""The mixture-of-Gaussians pair on grids coarser than 2^-7 (dpverify.events.pairs,
MixtureGaussianPair._grid): no Taylor block is tried there (the smallest block, 32 knots, spans more
than 1/8 nat, where the residual bound fails), every knot gets its own proved root; and the centre
series of a block (_block_series at the centre knot) is the Horner route's to the bit; the batch root
proposals (_float_roots) iterate only the entries not yet converged. Checked against mpmath's tails at
40 digits (tests/pld/test_grid_tails._mp_tails), the Horner route and the whole batch's proposals."""

from __future__ import annotations

from fractions import Fraction as F

import mpmath
import pytest
from flint import arb, arb_series, ctx

from dpverify.ball import working_precision
from dpverify.events.pairs import MixtureGaussianPair

from tests.pld.test_grid_tails import _mp_tails

THREE = (F(1), (F(0), F(1), F(2)), (F(98, 100), F(1, 100), F(1, 100)))
NO_ZERO = (F(3, 2), (F(1, 2), F(3)), (F(1, 2), F(1, 2)))


@pytest.mark.parametrize("mix", [THREE, NO_ZERO])
@pytest.mark.parametrize("direction", ["remove", "add"])
@pytest.mark.parametrize("m", [5, 7])
def test_coarse_grids_take_every_knot_alone_and_hold_the_mpmath_tails(monkeypatch, mix, direction, m):
    pair = MixtureGaussianPair(*mix, direction)
    tried: list = []
    monkeypatch.setattr(MixtureGaussianPair, "_block", lambda self, *a, **k: tried.append(a) or None)
    i0, n = -3 << (m - 2), 9 << (m - 2)  # eps in [-0.75, 2.25]: both sides of the support's end
    with working_precision(120):
        P, Q, blocks = pair.grid_expansions(m, i0, n)
    assert tried == [] and blocks == []
    s = mpmath.mpf(mix[0].numerator) / mix[0].denominator
    with mpmath.workdps(40):
        for i in range(i0, n + 1, 7):
            ref = _mp_tails(mix[1], mix[2], s, direction, mpmath.mpf(i) / 2 ** m)
            for ball_, r in zip((P[i - i0], Q[i - i0]), ref):
                lo, hi = (mpmath.mpf(x.str(40, radius=False)) for x in (ball_.lower(), ball_.upper()))
                assert lo - mpmath.mpf(10) ** -30 <= r <= hi + mpmath.mpf(10) ** -30, (i, ball_, r)


@pytest.mark.parametrize("direction", ["remove", "add"])
def test_the_centre_series_is_the_horner_routes_to_the_bit(direction):
    pair = MixtureGaussianPair(*THREE, direction)
    with working_precision(144):
        comps, _ = pair._consts()
        inv_s2 = 1 / arb(2).sqrt()
        for c in (-300, 40, 500, 2000):
            eps_c = arb(c) / 256
            poly = pair._inverse_poly(eps_c, 38, comps)
            if poly is None:  # beyond the end of the loss range
                continue
            old = ctx.cap
            try:
                ctx.cap = 38
                for L in (37, 38):
                    t = arb_series([eps_c - eps_c, 1], prec=L)
                    X = arb_series([poly[-1]], prec=L)
                    for v in reversed(poly[:-1]):
                        X = X * t + v
                    assert [(v.mid(), v.rad()) for v in arb_series(poly, prec=L).coeffs()] == \
                        [(v.mid(), v.rad()) for v in X.coeffs()]
                    got = pair._block_series(eps_c, L, comps, poly, eps_c, inv_s2)
                    ball = arb(eps_c.mid(), 2.0 ** -200)  # not exact: the Horner route, near the same point
                    near = pair._block_series(ball, L, comps, poly, eps_c, inv_s2)
                    for a, b in zip(got, near):
                        for u, v in zip(a.coeffs(), b.coeffs()):
                            assert v.overlaps(u)
            finally:
                ctx.cap = old


def test_float_roots_carry_only_the_entries_still_iterating(monkeypatch):
    # a batch of root proposals: the entries converged are no longer iterated (one entry that never
    # meets the tolerance, next to the end of the loss range, kept all 3,205 in 100 iterations); the
    # proposals are the same doubles whatever else shares the batch (each entry's own operations)
    import numpy as np

    pair = MixtureGaussianPair(*THREE, "remove")
    ys = [i * 2.0 ** -8 for i in range(-5, 3200)]
    whole = pair._float_roots(ys)
    for part in (ys[:40], ys[7:1300:3], ys[2000:]):
        got = pair._float_roots(part)
        ref = [whole[ys.index(y)] for y in part]
        assert [repr(v) for v in got] == [repr(v) for v in ref]
    seen: list = []
    exp = np.exp
    monkeypatch.setattr(np, "exp", lambda a, *r, **k: seen.append(np.size(a)) or exp(a, *r, **k))
    pair._float_roots(ys)
    assert sum(seen) < 10 * 3 * len(ys)  # before: 100 iterations x 3 components x every entry
