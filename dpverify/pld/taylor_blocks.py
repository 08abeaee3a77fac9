"""A pair's tails on a grid of knots by blocks that share one Taylor expansion with a proven
remainder: the route of ``tails_at_grid`` for the pairs whose tails are analytic in eps away
from the end of their loss support (the Poisson-subsampled Gaussian pair of :mod:`.pairs`, the
mixture-of-Gaussians pair of :mod:`dpverify.events.pairs`).

:func:`taylor_block` encloses the tails at the knots of one block (Taylor's theorem with the
Lagrange remainder, proof in its docstring); :func:`grid_tails_by_blocks` is the driver both
pairs use: blocks of :func:`taylor_block_size` knots, a block whose remainder is too wide split
in two, the smallest pieces evaluated knot by knot. Every value is an enclosure on either route;
the choice between them rests on arb balls and the inputs only (deterministic, the same on every
platform).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional, Sequence, Union

from flint import arb, arb_poly, ctx

__all__ = ["TAYLOR_MIN_KNOTS", "TaylorExpansion", "grid_tails_by_blocks", "taylor_block", "taylor_block_size",
           "taylor_expansion", "taylor_order"]

#: the smallest block tried (below it, the knots are evaluated one by one)
TAYLOR_MIN_KNOTS = 32
#: the expansion order is prec / this (measured on the bench rows: about 4 bits
#: of remainder per term at h = 2^-10..2^-14 and 128 knots; 3, 5, 6 and 8 were slower
#: at 676 and 1100 bits too), at most _TAYLOR_MAX_ORDER everywhere
_TAYLOR_BITS_PER_TERM = 4
#: a block is tried only if its radius is 1/this of its distance to the support end
_TAYLOR_END_RATIO = 16
_TAYLOR_MAX_ORDER = 64
#: a higher order (a tiny delta: masses of hundreds of bits), up to _TAYLOR_HIGH_ORDER, only
#: where a first block holds at least _TAYLOR_KNOTS_PER_ORDER knots per order: a series costs
#: about its order squared, a knot's own erfc pair does not grow with it. Measured (CPU s of one
#: level's discretisation, sigma 5, q 0.1, remove, per knot -> blocks): 676 bits at 2^-13
#: (1024-knot blocks, order 169) 4.06 -> 1.81; 1100 bits at 2^-12 (512, 275) 5.96 -> 4.82;
#: 1000 bits at 2^-11 (256, 250) 2.39 -> 2.73; 800 bits at 2^-10 (128, 200) 0.72 -> 1.11;
#: 1500 bits at 2^-11 (256, 375) 6.1 -> 37
_TAYLOR_HIGH_ORDER = 256
_TAYLOR_KNOTS_PER_ORDER = 4


def taylor_order(m: int) -> Optional[int]:
    """The expansion order of a block at the working precision on the grid 2^-m, or None where
    blocks would cost more than one evaluation per knot (the knots are then evaluated one by
    one): above _TAYLOR_MAX_ORDER unless the blocks are long enough (_TAYLOR_HIGH_ORDER,
    _TAYLOR_KNOTS_PER_ORDER). A choice of route only: every value is an enclosure either way."""
    order = max(16, ctx.prec // _TAYLOR_BITS_PER_TERM)
    if order <= _TAYLOR_MAX_ORDER:
        return order
    if order <= _TAYLOR_HIGH_ORDER and taylor_block_size(m) >= _TAYLOR_KNOTS_PER_ORDER * order:
        return order
    return None


def taylor_block_size(m: int) -> int:
    """Knots per Taylor block at first try on the grid 2^-m: a block spans 1/8
    nat (128..1024 knots); measured on the bench rows, the remainder test then
    passes away from the support end at the order prec / 4, and one series pair
    costs about as much as evaluating 100 knots."""
    return max(128, min(1024, 1 << max(0, m - 3)))


@dataclass(frozen=True)
class TaylorExpansion:
    """One block's expansion of g = (g_1, g_2) at the centre knot c (see :func:`taylor_block`
    for the proof): ``centre[j]`` holds the N + 1 Taylor coefficients of g_j(c h + s) in s at
    the exact point c h, ``over[j]`` the N + 2 coefficients over the ball ``ball`` = [c h - R',
    c h + R'], R' = ``radius`` = (max(c - a, b - c) + reach) h, whose last one bounds the
    Lagrange remainder: |g_j(c h + s) - sum_{k<=N} centre[j][k] s^k| <= |over[j][N + 1]| |s|^(N+1)
    for |s| <= R'. Knots a - reach .. b + reach lie in reach of it.

    ``extra``: a further absolute error of the tails, for a pair whose expansion is of a nearby
    analytic function (the mixture of Gaussians expands the tails at a proposed crossing point
    X(eps) and bounds how far the true tails lie from them on the whole ball,
    :meth:`dpverify.events.pairs.MixtureGaussianPair._block`): the tails g_j lie within
    ``extra`` of the expanded function's at every knot in reach (a - reach .. b + reach, the only
    points read: :meth:`tails` and :func:`dpverify.pld.discretise.block_masses`). None for the
    pairs expanded themselves."""

    h: arb
    a: int
    b: int
    c: int
    order: int
    reach: int
    radius: arb
    ball: arb
    centre: tuple
    over: tuple
    extra: Optional[arb] = None

    def tails(self, knots: Sequence[int]) -> tuple:
        """Enclosures of (g_1, g_2) at the given knots (within reach): the polynomial with the
        ball coefficient N + 1 on top, evaluated in arb at the exact t = (i - c) h, widened by
        ``extra`` where there is one."""
        N = self.order
        ts = [self.h * (i - self.c) for i in knots]
        got = tuple(arb_poly(list(ca) + [co[N + 1]]).evaluate(ts, algorithm="iter")
                    for ca, co in zip(self.centre, self.over))
        if self.extra is None:
            return got
        w = arb(0, self.extra)
        return tuple([v + w for v in vs] for vs in got)


def taylor_expansion(series, h: arb, a: int, b: int, c: int, order: int, tol: arb,
                     reach: int = 0) -> Optional[TaylorExpansion]:
    """The expansion of :func:`taylor_block` over the knots a - reach .. b + reach, or None when
    its remainder bound |top| R'^(N+1) exceeds ``tol`` (or a coefficient is not finite)."""
    N = order
    old = ctx.cap
    try:
        ctx.cap = N + 2
        eps0 = h * c
        R = h * (max(c - a, b - c) + reach)
        ball = arb(eps0.mid(), R.mid())
        centre = series(eps0, N + 1)
        whole = series(ball, N + 2)
    finally:
        ctx.cap = old
    cs, ws = [], []
    for at, over in zip(centre, whole):
        ca, co = at.coeffs(), over.coeffs()
        if len(ca) != N + 1 or len(co) != N + 2:
            return None  # a coefficient series shorter than asked (should not happen)
        top = co[N + 1]
        if not all(v.is_finite() for v in ca) or not top.is_finite():
            return None
        # remainder bound |top| R^(N+1), against the width asked
        if not abs(top) * R ** (N + 1) <= tol:
            return None
        cs.append(ca)
        ws.append(co)
    return TaylorExpansion(h, a, b, c, N, reach, R, ball, tuple(cs), tuple(ws))


def taylor_block(series, h: arb, a: int, b: int, c: int, order: int, tol: arb):
    """Enclosures of g(i h) for the knots i = a..b, g = (g_1, g_2) given by
    ``series(eps, L)`` (arb power series of g_j(eps + t), L terms), from one
    expansion at the centre knot c; or None when the remainder bound exceeds
    ``tol`` (or is not finite).

    Proof (Taylor's theorem with the Lagrange remainder, g_j real-analytic on
    the segment): g_j(c h + t) = sum_{k<=N} g_j^(k)(c h) t^k / k!
    + g_j^(N+1)(xi) t^(N+1) / (N+1)! for some xi between c h and c h + t.
    The first N + 1 coefficients are arb's enclosures at the exact point c h;
    the last one is arb's enclosure of coefficient N + 1 over the ball
    [c h - R, c h + R], R = max |i - c| h, which contains every xi (arb
    series functions enclose the coefficients at every point of the input
    ball, and return a non-finite ball where g is not defined on it). So the
    polynomial with the ball as its top coefficient, evaluated in arb at the
    exact t = (i - c) h, encloses g_j(i h). The check against ``tol`` is only
    about width (a wide block is split, never trusted less)."""
    got = taylor_expansion(series, h, a, b, c, order, tol)
    return None if got is None else got.tails(range(a, b + 1))


def grid_tails_by_blocks(m: int, i0: int, n: int, progress: Optional[Callable[[float], None]], end: Optional[arb],
                         block: Callable[[int, int, int, arb], Union[None, TaylorExpansion, tuple[Sequence, Sequence]]],
                         knots: Callable[[int, int], tuple[list, list]],
                         keep: bool = False, size: Optional[int] = None) -> tuple[list, list, list[TaylorExpansion]]:
    """(P tails, Q tails, kept expansions) at the knots eps = i 2^-m, i = i0..n: ``block(a, b,
    order, tol)`` encloses the knots a..b from one expansion (an enclosure or a
    :class:`TaylorExpansion`, or None when its remainder is wider than ``tol``; a block expands
    at its centre knot (a + b) // 2), ``knots(a, b)`` encloses them one by one. Blocks of
    :func:`taylor_block_size` knots are tried first; one that fails is
    split in two, and pieces under TAYLOR_MIN_KNOTS go to ``knots`` (so does everything where
    :func:`taylor_order` is None). ``end`` is the loss support's end in eps (None: no end),
    where the tails are not analytic: a block is tried only if its radius is 1/_TAYLOR_END_RATIO
    of its distance to it (it would fail its remainder test otherwise), decided on arb balls (a
    comparison that is not certain says "split"). Each value comes from ``block`` or ``knots``,
    so it is an enclosure whichever route is taken. With ``keep``, an expansion is returned as
    it is and its knots are left None in the tail lists (the caller evaluates what it needs);
    otherwise its knots are evaluated and the list of expansions is empty. ``size``: the knots
    of a first try instead of :func:`taylor_block_size` (a pair whose blocks fail wider than a
    span in nats: a choice of route only)."""
    order = taylor_order(m)
    if order is None:
        P, Q = knots(i0, n)
        return P, Q, []
    h = arb(2) ** (-m)
    # absolute accuracy asked of a block: 2^-(prec - 20). discretise.py's
    # precision carries 40 guard bits beyond what the 2^-K masses need after
    # the second differences and the e^{n h} slopes, so 20 remain
    tol = arb(2) ** (20 - ctx.prec)
    P_t: list = [None] * (n - i0 + 1)
    Q_t: list = [None] * (n - i0 + 1)
    kept: list[TaylorExpansion] = []
    total = n - i0 + 1

    def hopeful(a: int, b: int, mid: int) -> bool:
        if end is None:
            return True
        lo, hi = h * a, h * b
        if not (hi < end or lo > end):
            return False
        gap = (lo - end) if lo > end else (end - hi)
        return bool(h * (max(mid - a, b - mid) * _TAYLOR_END_RATIO) <= gap)

    def split(a: int, b: int) -> None:
        if b - a + 1 < TAYLOR_MIN_KNOTS:
            P_t[a - i0:b - i0 + 1], Q_t[a - i0:b - i0 + 1] = knots(a, b)
            return
        mid = (a + b) // 2
        got = block(a, b, order, tol) if hopeful(a, b, mid) else None
        if got is None:
            split(a, mid)
            split(mid + 1, b)
            return
        if isinstance(got, TaylorExpansion):
            if keep:
                kept.append(got)
                return
            got = got.tails(range(a, b + 1))
        P_t[a - i0:b - i0 + 1], Q_t[a - i0:b - i0 + 1] = got

    size = taylor_block_size(m) if size is None else size
    for a in range(i0, n + 1, size):
        if progress is not None:
            progress((a - i0) / total)
        split(a, min(n, a + size - 1))
    return P_t, Q_t, kept
