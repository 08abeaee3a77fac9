"""Certified discretisation of a dominating pair onto the loss grid h Z, h = 2^-m.

Two discrete objects are built from one pair (P, Q) (see
:mod:`dpverify.pld.pairs`); masses are integers in units of 2^-K.

Pessimistic side (connect-the-dots, Doroshenko, Ghazi, Kamath, Kumar, Manurangsi
2022, "Connect the Dots"): knots eps_i = i h, i = i0..n, x_i = e^{eps_i}. The
hockey-stick curve delta(x) (as a function of x = e^eps >= 0) is convex and
nonincreasing with delta(0) = 1 (P is a probability). Its piecewise-linear
interpolant D through (0, 1), (x_i0, delta_i0), ..., (x_n, delta_n), continued
by the constant delta_n for x >= x_n, lies above delta everywhere (a chord of a
convex function lies above it; for x > x_n, delta(x) <= delta(x_n) by
monotonicity). D is itself the curve of a pair: P' puts mass
p_i = x_i (m_{i+1} - m_i) >= 0 at loss eps_i (m_i = slope of D left of x_i,
m_{n+1} = 0) and mass delta_n at loss +inf; Q' = P' e^{-loss} on the knots plus
whatever is left at loss -inf. Because D >= delta for every x >= 0, i.e. every
real eps, (P', Q') dominates (P, Q) (AFA Def 7), and by AFA Thm 10 the T-fold
product of (P', Q') dominates the T-fold composition. Its curve is
E_{P'^T}[(1 - e^{eps - S})_+] with S the sum of the T losses, which is
increasing in each p_i; so rounding each p_i *up* to a multiple of 2^-K (and the
+inf mass up) keeps an upper bound. Nothing is truncated at the low end (the
chord from (0, 1) accounts for all mass below eps_i0 exactly); above eps_n the
mass goes to +inf (delta_n of it, exactly as D says).

Optimistic side (quantisation = post-processing): buckets
B_i = (i h, (i + 1) h] of the loss (the same knots, so one tail evaluation per
knot serves both sides). Observing only the bucket index
of the output is a post-processing of (P, Q), so the pair
(P(L in B_i), Q(L in B_i))_i has a curve <= delta (data processing for the
hockey-stick divergence). Buckets outside [i0, n] are merged into one extra
class whose contribution (P - e^eps Q)_+ >= 0 is bounded below by 0, i.e.
dropped; the P-mass at loss +inf (AFA Lemma 37) is its own class with Q = 0,
contributing its whole P-mass. The lower curve sum_k (P_k - e^eps Q_k)_+ is increasing in every P_k
and decreasing in every Q_k, so P_k are rounded *down* and Q_k *up* to
multiples of 2^-K. The Q-masses are stored *tilted*: Qt_k = Q_k e^{s_k} with
s_k = (offset + k) h the lower end of class k's losses. Tilting commutes with
convolution exactly (s_i + s_j is the lower end of the product class i + j,
so (Qt_A * Qt_B)_k = sum Q_A,i Q_B,j e^{s_i + s_j} = (Q_A * Q_B)_k e^{s_k}), and
multiplying by the positive e^{s_k} keeps "rounded up" true. The tilt uses the
bucket's *midpoint* s_k + h/2 (any per-step constant theta commutes the same
way: after n steps class k carries e^{s_k + n theta}, recorded as ``tilt``;
the queries divide it out exactly, so soundness does not depend on theta).
Why: near the query the untilted Q_k is about e^{-eps} P_k, so a unit that
resolves it would need 1.45 eps more bits; tilted, Qt_k is about P_k and one
unit serves all three polynomials. With the lower end (theta = 0) a class of
n composed steps holds losses about n h / 2 above its label, so Qt_k ~
P_k e^{-n h / 2}: at T = 10^6, h = 2^-13 that is e^-61, far below any unit,
and the rounded-up Qt (one unit) swamped the lower bound (measured: lower
end 0 at 2^-11 and 2^-13 for (1, 0.01, 10^6)). At the midpoint the class's
losses sit within about sqrt(n / 12) h of the label (central limit). Tightness: the pair (P, Q) of :mod:`pairs` is tight (AFA
Thm 11, Remark), so this is a lower bound for the mechanism too.

All masses are computed in arb (erfc-based tails) at a precision that covers the
cancellation of the second differences (K + 2m + 40 bits and more), except at the knots
of a pair's Taylor blocks (:func:`block_masses`): there the masses are polynomials of
the knot formed exactly in arb, evaluated in binary64 with a proven error bound
(:mod:`.binary64`) and rounded outward in the same directions as on the arb route.
Floats otherwise only choose the grid range (tightness, not soundness).
"""

from __future__ import annotations

import bisect
import functools
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable, Optional

import numpy as np
from flint import arb, arb_poly, arb_series, ctx, fmpz, fmpz_poly

from ..ball import working_precision
from ..errors import Undecided
from .binary64 import (MAX_ABS, MAX_ERROR, MAX_POINT, compensated_horner, float_upper, horner_error, ieee_round_to_nearest,
                       round_down, round_up, split_double_double)

__all__ = ["UpperDist", "LowerDist", "discretise", "grid_range"]


@dataclass(frozen=True)
class UpperDist:
    """Pessimistic discrete P-law of the loss: mass ``poly[k] / 2^K`` at loss
    ``(offset + k) h`` and ``inf / 2^K`` at +inf (upper bounds of the masses of a
    dominating pair, so its curve is an upper bound)."""

    m: int
    K: int
    offset: int
    poly: fmpz_poly
    inf: fmpz

    @property
    def h(self) -> arb:
        return arb(1) / (arb(2) ** self.m)


@dataclass(frozen=True)
class LowerDist:
    """Optimistic pair of classes: class k (losses in about
    ((offset + k) h, (offset + k + 1) h] for one step) has P-mass ``P[k] / 2^K``
    (rounded down) and *tilted* Q-mass ``Q[k] / 2^K`` = Q_k e^{(offset + k) h}
    (rounded up; module docstring), so sum_k (P_k - e^eps Q_k)_+ is a lower
    bound of the true curve."""

    m: int
    K: int
    offset: int
    P: fmpz_poly
    Q: fmpz_poly
    inf: fmpz = fmpz(0)  # P-mass at loss +inf (Q = 0 there), rounded down
    #: total tilt offset theta_total (nats): Q[k] / 2^K = Q_k e^{(offset + k) h + tilt}
    tilt: Fraction = Fraction(0)
    #: P-mass (units 2^-K) that may be missing from the classes as a whole
    #: although not from any one class's bound: the Fourier route's
    #: circular wrap (:mod:`fourier`, 2 and 5). Every suffix bound subtracts it.
    deficit: fmpz = fmpz(0)


def _ptail_ball(pair, eps: float) -> arb:
    """P(eps < L < inf) as a low-precision ball (arb's exponent range is
    unbounded, so tails far below 1e-308 are still compared correctly); only
    to choose the grid range."""
    with working_precision(80):
        p, _ = pair.tails(arb(eps))
        return p


def _maybe_at_most(x: arb, tau: arb) -> bool:
    """x may be <= tau (its lower end is). Only the grid range depends on it, and the
    mass left outside is accounted for, so erring toward "small" costs tightness at
    most. A lower tail of exactly 0 computed as 1 - inf - P(L > x) is a ball around 0
    whose midpoint can be a rounding error far above a tiny tau; comparing midpoints
    then never finds the end of the range ((eps, delta) pairs ran to 10^6 nats)."""
    with working_precision(80):
        return bool(x.mid() - x.rad() <= tau.mid())


#: finest grid exponent whose step 2^-m (and a quarter of it) is a normal binary64 number
_MAX_FLOAT_GRID = 1000


def grid_range(pair, m: int, tau) -> tuple[int, int]:
    """Knot indices (i0, n): P(L > n h) <= tau and P(L <= (i0 - 1/2) h) <= tau,
    found by a search on low-precision balls (only tightness depends on it).
    ``tau`` may be a float, a Fraction or an arb: it is compared as a ball, so
    tail budgets far below the float range (midpoints are compared: only
    tightness depends on the range) (delta down to 1e-300 and beyond)
    size the range correctly instead of stopping at 1e-308."""
    if m > _MAX_FLOAT_GRID:
        from ..errors import PrecisionExhausted

        # the range search steps in binary64: h = 2^-m would be 0.0 (a division by zero, exit 4)
        raise PrecisionExhausted(f"the grid 2^-{m} is finer than the range search can step (2^-{_MAX_FLOAT_GRID}): "
                                 "a privacy loss this small is not resolved; no certified enclosure could be formed")
    h = 2.0 ** -m
    with working_precision(80):
        tau_b = tau if isinstance(tau, arb) else (
            arb(tau.numerator) / tau.denominator if hasattr(tau, "denominator") else arb(tau))

    def find(pred: Callable[[float], bool], start: float, step: float) -> float:
        x = start
        while not pred(x):
            x += step
            step *= 2
            if abs(x) > 1e6:
                break
        lo, hi = x - step / 2, x
        # the ends are used rounded outward to knots: a quarter knot is enough.
        # The bottom end searches downward (step < 0, so hi < lo): the distance
        # is |hi - lo| (a signed test stopped the bottom search at once, one
        # whole first step below the support: 2^(m-1) wasted knots at 2^-m)
        for _ in range(60):
            if abs(hi - lo) <= h / 4:
                break
            mid = (lo + hi) / 2
            if pred(mid) == pred(hi):
                hi = mid
            else:
                lo = mid
        return hi

    # a binary64 screen (pairs that offer one): where the float tail lies more than 1e-3 of tau
    # from tau, the 80-bit ball decides the same way (the float errs by less than 1e-6 relative,
    # and the ball's lower end lies within about 2^-60 relative of the truth for the upper tail
    # and within its radius, at most 7.4e-22 absolute measured over sigma 0.2..1000, for the
    # lower one, 1 - P: hence the floors on tau), so the ball is skipped: the same (i0, n),
    # about 45 tail balls fewer per call (sigma 4, q 0.01: a tenth of a discretisation). Only
    # the range depends on it, and every range is sound (module docstring)
    screen = getattr(pair, "range_floats", None)
    with working_precision(80):
        tau_f = float(tau_b.mid())

    def screened(e: float, which: int, floor: float) -> Optional[bool]:
        if screen is None or not (floor <= tau_f < 1.0):
            return None
        got = screen(e)
        if got is None:
            return None
        v = got[which]
        if v < tau_f * (1 - 1e-3):
            return True
        if v > tau_f * (1 + 1e-3):
            return False
        return None

    def small_upper(e: float) -> bool:
        s = screened(e, 0, 1e-250)
        if s is not None:
            return s
        try:
            return _maybe_at_most(_ptail_ball(pair, e), tau_b)
        except Undecided:
            return False

    with working_precision(80):
        inf = pair.inf_mass()

    def small_lower(e: float) -> bool:
        s = screened(e, 1, 1e-17)
        if s is not None:
            return s
        try:
            with working_precision(80):
                return _maybe_at_most(1 - inf - _ptail_ball(pair, e), tau_b)
        except Undecided:
            return False

    top = find(small_upper, 0.0 if not small_upper(0.0) else -1.0, 0.5)
    bottom = find(small_lower, 0.0 if not small_lower(0.0) else 1.0, -0.5)
    n = max(1, math.ceil(top / h) + 1)
    i0 = min(-1, math.floor(bottom / h) - 1)
    return i0, n


#: Largest single-step grid (knots) discretised; beyond it fail closed.
MAX_KNOTS = 1 << 21


@functools.lru_cache(maxsize=16)
def _pow2(K: int) -> arb:
    """2^K as an exact ball (a power of two is exact at every precision), built once per K:
    the rounding of every knot's mass multiplies by it (one arb power per knot before)."""
    return arb(2) ** K


def _ceil_int(x: arb, K: int) -> fmpz:
    """Smallest integer >= 2^K * (every value of x), and >= 0. ``upper()``
    rounds up (arb_get_ubound_arf) at the working precision, which exceeds K
    bits here, so the integer part is kept."""
    hi = (x * _pow2(K)).upper()
    if hi <= 0:
        return fmpz(0)
    return hi.ceil().unique_fmpz()


def _floor_int(x: arb, K: int) -> fmpz:
    """Largest integer <= 2^K * (every value of x), and >= 0 (``lower()``
    rounds down)."""
    lo = (x * _pow2(K)).lower()
    if lo <= 0:
        return fmpz(0)
    return lo.floor().unique_fmpz()


def discretise(pair, m: int, K: int, tau: float, bounds: Optional[tuple[int, int]] = None,
               progress: Optional[Callable[[float], None]] = None) -> tuple[UpperDist, LowerDist]:
    """Pessimistic and optimistic discretisations of ``pair`` on the grid 2^-m Z
    with masses in units of 2^-K (module docstring: why each is sound).
    ``tau`` only sets the grid range (mass left outside is accounted for)."""
    i0, n = bounds if bounds is not None else grid_range(pair, m, tau)
    if n - i0 + 1 > MAX_KNOTS:
        from ..errors import PrecisionExhausted

        raise PrecisionExhausted(
            f"one step's privacy loss spans {(n - i0) * 2.0 ** -m:.4g} nats: more than {MAX_KNOTS} "
            f"grid points at h = 2^-{m} (memory budget); no certified enclosure could be formed"
        )
    # second differences lose about m bits, the slopes are scaled by up to
    # x_n = e^{n h} (1.45 bits per nat), the masses need K bits: prec covers
    # all three with 40 guard bits (a shortfall would only loosen the rounding)
    base = K + 2 * m + 40 + max(0, math.ceil(1.45 * max(n, -i0) * 2.0 ** -m))
    prec = base
    while True:
        try:
            with working_precision(prec):
                return _discretise(pair, m, K, i0, n, progress)
        except Undecided:
            if prec > 4 * base:
                raise
            prec *= 2


def _discretise(pair, m: int, K: int, i0: int, n: int, progress) -> tuple[UpperDist, LowerDist]:
    expand = getattr(pair, "grid_expansions", None)
    if expand is None:
        P_t, Q_t = pair.tails_at_grid(m, i0, n, progress)
        return _from_tails(P_t, Q_t, pair.inf_mass(), m, K, i0, n)
    P_t, Q_t, blocks = expand(m, i0, n, progress)
    if not blocks:  # every knot's tails are there already
        return _from_tails(P_t, Q_t, pair.inf_mass(), m, K, i0, n)
    L = n - i0 + 1
    up: list = [None] * L
    lp: list = [None] * (L - 1)
    lq: list = [None] * (L - 1)
    # binary64 pays for its fixed cost (a few thousand numpy calls, two arb polynomial steps per
    # block) only on enough knots: small blocks, or few knots in all, stay in arb (a choice on
    # the inputs only; both routes bound the same masses in the same direction)
    big = [b for b in blocks if b.b - b.a + 1 >= _FLOAT_MIN_BLOCK]
    if sum(b.b - b.a + 1 for b in big) >= _FLOAT_MIN_KNOTS and ieee_round_to_nearest():
        block_masses(big, m, K, i0, n, up, lp, lq)
    # every knot a remaining mass reads (itself and its neighbours) gets its tails from its block in arb
    need: set[int] = {L - 1}
    for t in [t for t, v in enumerate(up) if v is None]:
        need.update(range(max(0, t - 1), min(L, t + 2)))
    for t in [t for t, v in enumerate(lp) if v is None]:
        need.update((t, t + 1))
    blocks = sorted(blocks, key=lambda b: b.a)
    starts = [b.a - i0 for b in blocks]
    pending: dict[int, list[int]] = {}
    for t in sorted(need):
        if P_t[t] is None:
            pending.setdefault(bisect.bisect_right(starts, t) - 1, []).append(t)
    for j, ts in pending.items():
        ps, qs = blocks[j].tails([i0 + t for t in ts])
        for t, p, q in zip(ts, ps, qs):
            P_t[t], Q_t[t] = p, q
    return _from_tails(P_t, Q_t, pair.inf_mass(), m, K, i0, n, up, lp, lq)


def _from_tails(P_t: list, Q_t: list, inf: arb, m: int, K: int, i0: int, n: int, up_done: Optional[list] = None,
                lp_done: Optional[list] = None, lq_done: Optional[list] = None) -> tuple[UpperDist, LowerDist]:
    """The two discretisations from the tails at the knots (module docstring), each mass in arb
    and rounded outward, except those given already (not None in ``up_done``, ``lp_done``,
    ``lq_done``, indexed by t = i - i0, from :func:`block_masses`); a knot's tails may be None
    where no mass computed here reads them."""
    L = n - i0 + 1
    up_done = up_done or [None] * L
    lp_done = lp_done or [None] * (L - 1)
    lq_done = lq_done or [None] * (L - 1)
    h = arb(2) ** (-m)
    xs = [(h * (i0 + t)).exp() if p is not None else None for t, p in enumerate(P_t)]
    ds = [p - x * q + inf if x is not None else None for p, q, x in zip(P_t, Q_t, xs)]
    # --- pessimistic: connect-the-dots through (0, 1) and (x_i, delta_i)
    slopes: list = [None] * (L + 1)
    slopes[L] = arb(0)
    if xs[0] is not None:
        slopes[0] = (ds[0] - 1) / xs[0]
    for t in range(1, L):
        if xs[t] is not None and xs[t - 1] is not None:
            slopes[t] = (ds[t] - ds[t - 1]) / (xs[t] - xs[t - 1])
    up = [v if v is not None else _ceil_int(xs[t] * (slopes[t + 1] - slopes[t]), K) for t, v in enumerate(up_done)]
    up_inf = _ceil_int(ds[L - 1], K)
    upper = UpperDist(m, K, i0, fmpz_poly(up), up_inf)
    # --- optimistic: buckets (i h, (i+1) h], i = i0 .. n-1 (class index i - i0);
    # the index is only a label: classes are merged by index sum, a post-processing.
    # Tilted Q (module docstring): Qt_t = Q(bucket t) e^{s_t + h/2}, the bucket's midpoint
    mid = (h / 2).exp()
    lp = [v if v is not None else _floor_int(P_t[t] - P_t[t + 1], K) for t, v in enumerate(lp_done)]
    lq = [v if v is not None else _ceil_int((Q_t[t] - Q_t[t + 1]) * xs[t] * mid, K) for t, v in enumerate(lq_done)]
    lower = LowerDist(m, K, i0, fmpz_poly(lp), fmpz_poly(lq), _floor_int(inf, K), Fraction(1, 1 << (m + 1)))
    return upper, lower


#: blocks of fewer knots, or fewer knots in all blocks, get their masses in arb (measured on
#: the bench rows: 7 blocks of 35 knots cost 12 ms in binary64 against 2 ms in arb; one
#: block of 1024 knots 2.5 ms against 9)
_FLOAT_MIN_BLOCK = 64
_FLOAT_MIN_KNOTS = 1024

#: a block's terms below this many units in all are dropped into its error bound
_DROP = arb(2) ** -24


def block_masses(blocks: list, m: int, K: int, i0: int, n: int, up: list, lp: list, lq: list) -> None:
    """The integer masses of :func:`_from_tails` at the knots of each Taylor block, from the
    block's expansion in binary64 with a proven error, written into ``up``, ``lp``, ``lq``
    (indexed by t = i - i0) at the knots each block serves; the others stay None (the caller
    computes them in arb). Knot 0 and the last knot (the chord from (0, 1), the slope 0
    beyond) are never served; the optimistic classes stop one knot before the last.

    Proof. Write e = c h + s for the block's centre c, F_1(s) = P(L > e), F_2(s) = e^e Q(L > e)
    and d = F_1 - F_2 + P(L = inf) (the curve at knot e). The masses of :func:`_from_tails` at
    knot e are exactly (x = e^e, x (m_{t+1} - m_t) with the chords' slopes m, the bucket
    (e, e + h]'s P-mass and tilted Q-mass)

        up(e) = (d(e + h) - d(e)) / (e^h - 1) - (d(e) - d(e - h)) / (1 - e^-h),
        lp(e) = F_1(e) - F_1(e + h),   lq(e) = e^(h/2) (F_2(e) - e^-h F_2(e + h))

    (the +inf mass cancels). The expansion (:class:`.taylor_blocks.TaylorExpansion`, reach 1)
    gives F_1 = T_1 + r_1, |r_1(s)| <= |top_1| |s|^(N+1) for |s| <= R' (R' = the block's radius
    plus h, so every e +- h the masses read is covered); F_2 is the product of the Q series
    with the exp series, centre coefficients from the centre series and the top one from the
    ball series (each the product's Taylor coefficient at that point, the Lagrange form as
    before). With s = u h (u = i - c, an integer) the polynomials in u are T_j(u h), and the
    shifts e +- h are u +- 1, formed exactly as polynomials in arb; the remainders add up to
    rho_j = |top_j| R'^(N+1) per value read (plus the expansion's ``extra`` for F_1 and
    e^(max e) ``extra`` for F_2 where the tails are those of an expanded nearby function known
    within ``extra`` on the ball: the mixture of Gaussians), so up is within 2 (rho_1 + rho_2) (1 / (e^h - 1)
    + 1 / (1 - e^-h)) of its polynomial, lp within 2 rho_1, lq within e^(h/2) (1 + e^-h) rho_2.
    Scaled by 2^K, each coefficient is split into doubles hi + lo plus an arb bound of the
    rest (:func:`.binary64.split_double_double`), evaluated by
    :func:`.binary64.compensated_horner` with the error of :func:`.binary64.horner_error`,
    and rounded outward (:func:`.binary64.round_up` / :func:`.binary64.round_down`): the
    same direction as :func:`_ceil_int` / :func:`_floor_int` on the arb route."""
    if not blocks:
        return
    h = arb(2) ** (-m)
    unit = _pow2(K)
    eh = h.exp()
    up_scale = (unit / (eh - 1), unit / (1 - 1 / eh))
    q_scale = unit * (h / 2).exp()
    L = n - i0 + 1
    hk = [h ** k for k in range(max(b.order for b in blocks) + 1)]
    # rows[kind]: (block index, knots t, hi, lo, error) of each served block; kind 0 up, 1 lp, 2 lq
    rows: tuple[list, list, list] = ([], [], [])
    for j, blk in enumerate(blocks):
        got = _block_polys(blk, h, unit, eh, up_scale, q_scale, hk)
        if got is None:
            continue
        a, b, c, N = blk.a, blk.b, blk.c, blk.order
        U = max(c - a, b - c)
        assert U <= MAX_POINT  # blocks hold at most 1024 knots (taylor_block_size)
        served = (range(max(1, a - i0), min(L - 1, b - i0 + 1)), range(a - i0, min(L - 1, b - i0 + 1)))
        mine = []
        Uk = [arb(U) ** k for k in range(N + 1)]
        for kind, (poly, rem) in enumerate(zip(*got)):
            # terms that add at most 2^-24 units over the block are left to the error bound
            top, tail = len(poly) - 1, arb(0)
            while top > 0:
                nxt = tail + abs(poly[top]) * Uk[top]
                if not nxt <= _DROP:
                    break
                tail, top = nxt, top - 1
            hi, lo, res, pH, pL = [], [], tail, arb(0), arb(0)
            for k in range(top + 1):
                x_hi, x_lo, r = split_double_double(poly[k])
                hi.append(x_hi)
                lo.append(x_lo)
                res += r * Uk[k]
                pH += abs(arb(x_hi)) * Uk[k]
                pL += abs(arb(x_lo)) * Uk[k]
            err = float_upper(rem + res + horner_error(top, pH, pL)) if pH < MAX_ABS else math.inf
            if not err <= MAX_ERROR:
                break
            mine.append((j, served[min(kind, 1)], hi, lo, err))
        else:
            for kind in range(3):
                rows[kind].append(mine[kind])
    for kind, dest in enumerate((up, lp, lq)):
        for (j, ts, *_), vals in zip(rows[kind], _evaluate_rows(rows[kind], blocks, i0, up=kind != 1)):
            dest[ts.start:ts.stop] = vals


def _evaluate_rows(rows: list, blocks: list, i0: int, up: bool) -> list[list[int]]:
    """Each row's polynomial at its knots (u = i - c) by :func:`.binary64.compensated_horner`,
    rounded up or down with the row's error bound: one integer list per row."""
    if not rows:
        return []
    width = max(len(hi) for _, _, hi, *_ in rows)
    H = np.zeros((len(rows), width))
    Lo = np.zeros((len(rows), width))
    pts = []
    for r, (j, ts, hi, lo, _) in enumerate(rows):
        H[r, :len(hi)] = hi
        Lo[r, :len(lo)] = lo
        pts.append(np.arange(ts.start + i0 - blocks[j].c, ts.stop + i0 - blocks[j].c, dtype=np.float64))
    lengths = np.array([len(ts) for _, ts, *_ in rows], dtype=np.int64)
    err = np.repeat(np.array([e for *_, e in rows]), lengths)
    s, c = compensated_horner(H, Lo, lengths, np.concatenate(pts))
    vals = (round_up if up else round_down)(s, c, err)
    out, at = [], 0
    for n_r in lengths.tolist():
        out.append(vals[at:at + n_r])
        at += n_r
    return out


def _block_polys(blk, h: arb, unit: arb, eh: arb, up_scale: tuple, q_scale: arb, hk: list) -> Optional[tuple[list, list]]:
    """The three mass polynomials in u of one block (coefficients of up, lp, lq in units 2^-K)
    and their remainder bounds (:func:`block_masses`), or None where a coefficient is not
    finite. ``hk[k]`` = h^k. Terms of T_j too small to matter (their sum over |u| <= U + 1 at
    most 2^-28 units of up once scaled) are moved into rho_j: the bound |F_j - T_j| <= rho_j is
    all the proof uses, and it still holds with the dropped terms' sum added."""
    N = blk.order
    P_c, Q_c = blk.centre
    P_o, Q_o = blk.over
    old = ctx.cap
    try:
        ctx.cap = N + 2
        e_c = arb_series([h * blk.c, 1], prec=N + 1).exp()
        e_o = arb_series([blk.ball, 1], prec=N + 2).exp().coeffs()
        F2_c = (arb_series(list(Q_c), prec=N + 1) * e_c).coeffs()
    finally:
        ctx.cap = old
    if len(F2_c) != N + 1 or len(e_o) != N + 2:
        return None
    # coefficient N + 1 of the product over the ball (Leibniz: sum_j Q_j E_(N+1-j) at each point)
    F2_top = sum((Q_o[j] * e_o[N + 1 - j] for j in range(N + 2)), arb(0))
    if not F2_top.is_finite() or not all(v.is_finite() for v in F2_c):
        return None
    Rn = blk.radius ** (N + 1)
    rhos = [abs(P_o[N + 1]) * Rn, abs(F2_top) * Rn]
    if blk.extra is not None:
        # tails known within ``extra`` of the expanded function's at the knots in reach, the only
        # points read here (TaylorExpansion): F_1 within extra more, F_2 = e^e Q within
        # e^e extra <= e^(the ball's upper end) extra more
        rhos[0] += blk.extra
        rhos[1] += blk.extra * arb(blk.ball.upper()).exp()
    drop = arb(2) ** -28 / (2 * (up_scale[0] + up_scale[1]))
    W = arb(max(blk.c - blk.a, blk.b - blk.c) + 1)
    Ts = []
    for j, cs in enumerate((P_c, F2_c)):
        coef = [cs[k] * hk[k] for k in range(N + 1)]
        top, tail = N, arb(0)
        while top > 0:
            nxt = tail + abs(coef[top]) * W ** top
            if not nxt <= drop:
                break
            tail, top = nxt, top - 1
        rhos[j] += tail
        Ts.append(arb_poly(coef[:top + 1]))
    T1, T2 = Ts
    rho1, rho2 = rhos
    T1p = T1(arb_poly([1, 1]))
    T2p = T2(arb_poly([1, 1]))
    D = T1 - T2
    Dm = D(arb_poly([-1, 1]))
    up = ((T1p - T2p) - D) * arb_poly([up_scale[0]]) - (D - Dm) * arb_poly([up_scale[1]])
    lp = (T1 - T1p) * arb_poly([unit])
    lq = (T2 - T2p * arb_poly([1 / eh])) * arb_poly([q_scale])
    rems = [2 * (rho1 + rho2) * (up_scale[0] + up_scale[1]),
            2 * rho1 * unit,
            (1 + 1 / eh) * rho2 * q_scale]
    polys = [p.coeffs() for p in (up, lp, lq)]
    if any(len(p) == 0 or not all(v.is_finite() for v in p) for p in polys):
        return None
    return polys, rems
