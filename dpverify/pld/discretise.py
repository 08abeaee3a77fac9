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

All masses are computed in arb (erfc-based tails, no floats) at a precision
that covers the cancellation of the second differences (K + 2m + 64 bits);
floats only choose the grid range (tightness, not soundness).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable, Optional

from flint import arb, fmpz, fmpz_poly

from ..ball import working_precision
from ..errors import Undecided

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

    def small_upper(e: float) -> bool:
        try:
            return _maybe_at_most(_ptail_ball(pair, e), tau_b)
        except Undecided:
            return False

    with working_precision(80):
        inf = pair.inf_mass()

    def small_lower(e: float) -> bool:
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
    knots = list(range(i0, n + 1))
    P_t, Q_t = pair.tails_at_grid(m, i0, n, progress)
    inf = pair.inf_mass()
    # --- pessimistic: connect-the-dots through (0, 1) and (x_i, delta_i)
    h = arb(2) ** (-m)
    xs = [(h * i).exp() for i in knots]
    ds = [p - x * q + inf for p, q, x in zip(P_t, Q_t, xs)]
    slopes = [(ds[0] - 1) / xs[0]]
    for t in range(1, len(knots)):
        slopes.append((ds[t] - ds[t - 1]) / (xs[t] - xs[t - 1]))
    slopes.append(arb(0))
    up = [_ceil_int(xs[t] * (slopes[t + 1] - slopes[t]), K) for t in range(len(knots))]
    up_inf = _ceil_int(ds[-1], K)
    upper = UpperDist(m, K, i0, fmpz_poly(up), up_inf)
    # --- optimistic: buckets (i h, (i+1) h], i = i0 .. n-1 (class index i - i0);
    # the index is only a label: classes are merged by index sum, a post-processing
    lp = [_floor_int(P_t[t] - P_t[t + 1], K) for t in range(len(knots) - 1)]
    # tilted Q (module docstring): Qt_t = Q(bucket t) e^{s_t + h/2}, the bucket's midpoint
    mid = (h / 2).exp()
    lq = [_ceil_int((Q_t[t] - Q_t[t + 1]) * xs[t] * mid, K) for t in range(len(knots) - 1)]
    lower = LowerDist(m, K, i0, fmpz_poly(lp), fmpz_poly(lq), _floor_int(inf, K), Fraction(1, 1 << (m + 1)))
    return upper, lower
