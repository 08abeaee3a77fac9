"""Queries on composed discretisations, and the refinement loop.

For a composed pessimistic distribution U (masses u_k / 2^K at loss
s_k = (offset + k) h, plus u_inf / 2^K at +inf) the upper curve is

    delta_U(eps) = 2^-K [ sum_{s_k > eps} u_k (1 - e^{eps - s_k}) + u_inf ]
                 = 2^-K [ S_k0 - e^eps V_k0 + u_inf ],

with S_k0 = sum_{k >= k0} u_k (exact integer) and
V_k0 = e^{-s_k0} sum_{j >= 0} u_{k0+j} e^{-j h} (an integer polynomial evaluated
at the ball e^{-h}: all terms positive, so arb's bound is tight). It is an
upper bound of the true curve (discretise / convolve docstrings).

For the optimistic classes (P_k, Q_k), any set of classes S gives
sum_{k in S} (P_k - e^eps Q_k) <= sum_k (P_k - e^eps Q_k)_+ <= true curve;
we use the suffix sets {k >= j} and take the best of a few j.

epsilon(delta) = inf { eps : delta(eps) <= delta } (the curve is nonincreasing):

* upper end: any exact eps_hi with delta_U(eps_hi) <= delta (certified) has
  epsilon(delta) <= eps_hi. On (s_{k0-1}, s_k0] delta_U is
  2^-K (S - e^eps V + u_inf) and the crossing is log((S + u_inf - delta 2^K) / V).
* lower end: for each j with P_{>=j} > delta 2^K, every
  eps < log((P_{>=j} - delta 2^K) / Q_{>=j}) has lower curve > delta, so
  epsilon(delta) >= that log (take the lower end of its ball).

The refinement loop halves h (m -> m + 1 or + 2) until the relative width of
the enclosure is <= ``rel_width`` or the time budget would be exceeded; then
it fails closed with :class:`~dpverify.errors.PrecisionExhausted` stating the
width reached. Bounds from every level are valid, so each direction keeps the
best lower / upper bound seen so far; a direction whose upper bound is already
below the other's lower bound is not refined further (add-remove is the
pointwise maximum of add and remove, AFA Sec 4.1).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable, Optional, Sequence

from flint import arb, fmpz

from ..ball import ball, endpoints, lower_decimal, upper_decimal, working_precision
from ..errors import PrecisionExhausted
from .convolve import compose, mul_count
from .discretise import LowerDist, UpperDist, discretise

__all__ = [
    "ComposedBounds",
    "PldResult",
    "Step",
    "compose_direction",
    "refine_query",
    "to_fraction",
]


@dataclass(frozen=True)
class Step:
    """One kind of step of a heterogeneous sequence: a dominating-pair factory
    per direction and a repetition count."""

    make_pair: Callable[[str], Any]
    count: int


def to_fraction(x: arb) -> Fraction:
    """Exact value of an exact arb point."""
    man, exp = x.mid().man_exp()
    man, exp = int(man), int(exp)
    return Fraction(man) * (Fraction(2) ** exp)


class ComposedBounds:
    """Composed pessimistic and optimistic distributions of one direction with
    the exact suffix sums the queries need."""

    def __init__(self, upper: UpperDist, lower: LowerDist) -> None:
        self.upper = upper
        self.lower = lower
        self.K = upper.K
        self.m = upper.m
        uc = [int(c) for c in upper.poly.coeffs()]
        self.u_suffix = _suffix(uc)
        pc = [int(c) for c in lower.P.coeffs()]
        qc = [int(c) for c in lower.Q.coeffs()]
        n = max(len(pc), len(qc))
        pc += [0] * (n - len(pc))
        qc += [0] * (n - len(qc))
        self.p_suffix = _suffix(pc)
        self.q_suffix = _suffix(qc)
        self.u_inf = int(upper.inf)
        self.l_inf = int(lower.inf)

    # -- upper curve
    def _k0(self, eps: Fraction, offset: int, length: int) -> int:
        k0 = math.floor(eps * (1 << self.m)) - offset + 1
        return min(max(k0, 0), length)

    def delta_upper_ball(self, eps: Fraction) -> arb:
        U = self.upper
        n = len(self.u_suffix) - 1
        k0 = self._k0(eps, U.offset, n)
        S = self.u_suffix[k0]
        e = ball(eps)
        if k0 >= n:
            val = arb(self.u_inf)
        else:
            tail = U.poly.right_shift(k0) if k0 else U.poly
            h = arb(1) / arb(2) ** self.m
            V = (-(h * (U.offset + k0))).exp() * tail((-h).exp())
            val = arb(fmpz(S)) - e.exp() * V + self.u_inf
        return val / arb(2) ** self.K

    # -- lower curve
    def _best_suffixes(self, score: Callable[[int, int], float]) -> range:
        """Indices near the float argmax of ``score(P_suffix, Q_suffix)`` (the
        choice only affects tightness; every suffix gives a valid bound)."""
        n = len(self.p_suffix) - 1
        best_j, best = 0, -math.inf
        for j in range(n):
            v = score(self.p_suffix[j], self.q_suffix[j])
            if v > best:
                best, best_j = v, j
        return range(max(0, best_j - 3), min(n, best_j + 4))

    def delta_lower_ball(self, eps: Fraction) -> arb:
        e = ball(eps).exp()
        best = arb(0)
        for j in self._best_suffixes(lambda p, q: _log_score(p, q, float(eps))):
            v = arb(fmpz(self.p_suffix[j])) - e * arb(fmpz(self.q_suffix[j]))
            lo = endpoints(v)[0]
            if lo > best:
                best = lo
        return (best + self.l_inf) / arb(2) ** self.K

    # -- epsilon(delta)
    def eps_upper(self, delta: Fraction) -> Optional[Fraction]:
        """An exact eps with certified upper curve <= delta, near the crossing;
        None if none exists (mass at +inf already exceeds delta)."""
        U = self.upper
        D = arb(delta.numerator) / delta.denominator * arb(2) ** self.K
        n = len(self.u_suffix) - 1
        if not arb(self.u_inf) < D:
            return None
        h = Fraction(1, 1 << self.m)

        def ok(eps: Fraction) -> bool:
            return bool(self.delta_upper_ball(eps) * arb(2) ** self.K <= D)

        # smallest knot index j (loss (offset + j) h) with upper curve <= delta
        if ok(Fraction(0)):
            return Fraction(0)  # epsilon(delta) is taken over eps >= 0
        lo, hi = -1, n  # ok at hi (loss beyond the last knot: only +inf mass)
        if not ok((U.offset + hi) * h):
            return None
        if U.offset < 0:  # search only eps >= 0; the knot of loss 0 is not ok
            lo = min(-U.offset, n - 1)
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if ok((U.offset + mid) * h):
                hi = mid
            else:
                lo = mid
        # on (s_{hi-1}, s_hi] the curve is 2^-K (S - e^eps V + u_inf), k0 = hi
        best = (U.offset + hi) * h
        if hi >= 1:
            S = self.u_suffix[hi]
            tail = U.poly.right_shift(hi) if hi else U.poly
            hb = arb(1) / arb(2) ** self.m
            V = (-(hb * (U.offset + hi))).exp() * tail((-hb).exp())
            num = arb(fmpz(S)) + self.u_inf - D
            if num > 0 and V > 0:
                root = (num / V).log()
                # nudge above the exact crossing, where the check is decidable
                cand = to_fraction(endpoints(root)[1])
                cand += abs(cand) * Fraction(1, 1 << 64) + Fraction(1, 1 << 200)
                if cand < best and ok(cand):
                    best = cand
        return best

    def eps_lower(self, delta: Fraction) -> Optional[Fraction]:
        """An exact eps with epsilon(delta) >= eps (certified); None if the
        lower curve never exceeds delta (no information)."""
        Dn = delta * (1 << self.K)
        cands: list[tuple[float, int]] = []
        num, den = Dn.numerator, Dn.denominator
        for j in range(len(self.p_suffix) - 1):
            p, q = self.p_suffix[j] + self.l_inf, self.q_suffix[j]
            if p > Dn and q > 0:
                # log((p - Dn) / q) in floats of logs: math.log takes huge ints
                cands.append((math.log(p * den - num) - math.log(den) - math.log(q), j))
        if not cands:
            return Fraction(0)  # epsilon(delta) >= 0 by definition
        jbest = max(cands)[1]
        D = arb(delta.numerator) / delta.denominator * arb(2) ** self.K
        best: Optional[Fraction] = None
        for j in range(max(0, jbest - 3), min(len(self.p_suffix) - 1, jbest + 4)):
            p, q = self.p_suffix[j] + self.l_inf, self.q_suffix[j]
            num = arb(fmpz(p)) - D
            if q > 0 and num > 0:
                g = to_fraction(endpoints((num / arb(fmpz(q))).log())[0])
                if best is None or g > best:
                    best = g
        return max(best, Fraction(0)) if best is not None else Fraction(0)


def _log_score(p: int, q: int, eps: float) -> float:
    """log(p - e^eps q) (or -inf when it is <= 0), for choosing a suffix only;
    works for integers beyond the float range."""
    if p <= 0:
        return -math.inf
    if q <= 0:
        return math.log(p)
    d = math.log(q) + eps - math.log(p)
    if d >= 0:
        return -math.inf
    return math.log(p) + math.log1p(-math.exp(d))


def _suffix(c: Sequence[int]) -> list[int]:
    out = [0] * (len(c) + 1)
    s = 0
    for i in range(len(c) - 1, -1, -1):
        s += c[i]
        out[i] = s
    return out


def compose_direction(
    steps: Sequence[Step],
    direction: str,
    m: int,
    K: int,
    tau: float,
    budget: int,
    tick: Optional[Callable[[], None]] = None,
) -> ComposedBounds:
    """Discretise every step's pair for ``direction`` on the grid 2^-m and
    compose (pessimistic and optimistic)."""
    ups, lows = [], []
    for st in steps:
        pair = st.make_pair(direction)
        u, l = discretise(pair, m, K, tau)
        ups.append((u, st.count))
        lows.append((l, st.count))
        if tick:
            tick()
    with working_precision(K + 64):
        U = compose(ups, budget, tick)
        L = compose(lows, budget, tick)
    return ComposedBounds(U, L)  # type: ignore[arg-type]


def total_muls(steps: Sequence[Step]) -> int:
    return sum(mul_count(s.count) for s in steps) + len(steps) - 1


# --------------------------------------------------------------------------- refinement


@dataclass
class _Dir:
    name: str
    lo: Optional[Fraction] = None  # best certified lower bound so far
    hi: Optional[Fraction] = None  # best certified upper bound so far (None: +inf)
    active: bool = True
    length: int = 0


@dataclass(frozen=True)
class PldResult:
    """A certified enclosure [lo, hi] (``hi`` None means +inf) of epsilon(delta)
    or delta(eps), with the grid that produced it and per-direction bounds."""

    lo: Fraction
    hi: Optional[Fraction]
    m: int
    K: int
    seconds: float
    rel_width: Optional[float]
    directions: dict = field(default_factory=dict)
    levels: list = field(default_factory=list)


def _rel(lo: Fraction, hi: Optional[Fraction]) -> Optional[float]:
    if hi is None:
        return None
    if hi == lo:
        return 0.0
    if lo <= 0:
        return None
    return float((hi - lo) / lo)


def _budget_fail(what: str, lo: Fraction, hi: Optional[Fraction], m: int, why: str) -> PrecisionExhausted:
    rel = _rel(lo, hi)
    # printed for people: outward (a rounded-to-nearest end would not be a bound)
    with working_precision(128):
        shown = "inf" if hi is None else upper_decimal(ball(hi), 10)
        shown_lo = lower_decimal(ball(lo), 10)
    width = "unbounded" if rel is None else f"{rel:.3g}"
    return PrecisionExhausted(
        f"{what}: {why}; best certified enclosure [{shown_lo}, {shown}] "
        f"(relative width {width}) on the grid h = 2^-{m}"
    )


def refine_query(
    steps: Sequence[Step],
    directions: Sequence[str],
    *,
    kind: str,
    target: Fraction,
    rel_width: float = 1e-4,
    time_budget: float = 600.0,
    max_length: int = 1 << 23,
    m_start: Optional[int] = None,
    decide: Optional[Callable[[Fraction, Optional[Fraction]], bool]] = None,
    delta_scale: Optional[Fraction] = None,
    progress: Optional[Callable[[float, str], None]] = None,
) -> PldResult:
    """Refine the grid until the enclosure of epsilon(target) (kind "eps") or
    delta(target) (kind "delta"), the maximum over ``directions``, has relative
    width <= ``rel_width`` (or ``decide(lo, hi)`` says it is enough), else raise
    PrecisionExhausted stating the width reached (module docstring)."""
    t0 = time.monotonic()
    total_steps = sum(s.count for s in steps)
    nm = total_muls(steps)
    dirs = [_Dir(d) for d in directions]
    m = m_start if m_start is not None else 9
    levels: list = []
    what = "epsilon(delta)" if kind == "eps" else "delta(eps)"
    scale = target if kind == "eps" else delta_scale  # delta scale for K, tau, budget
    while True:
        # the optimistic Q-masses near loss eps are about e^-eps times the
        # P-masses: the unit 2^-K must resolve them (log2 e < 1.45)
        eps_hint = float(target) if kind == "delta" else float(max(
            [d.hi for d in dirs if d.hi is not None] + [d.lo for d in dirs if d.lo is not None] + [Fraction(0)]))
        extra = math.ceil(1.45 * eps_hint) + 16
        if scale is not None:
            small = scale * Fraction(1) / max(1, int(1 / rel_width))
            K = max(64, (1 / small).__ceil__().bit_length() + 48 + extra)
            tau = max(float(small) * 1e-3 / total_steps, 1e-300)
            budget = int(small * (1 << K) / (1000 * (2 * nm + 2)))
        else:
            K = 160 + extra
            tau = 2.0 ** -100 / total_steps
            budget = 1 << 40
        t_level = time.monotonic()
        active = [d for d in dirs if d.active]
        for di, d in enumerate(active):
            if progress:
                progress(di / max(1, len(active)), f"grid 2^-{m}, {d.name}")
            cb = compose_direction(steps, d.name, m, K, tau, budget)
            d.length = cb.upper.poly.length()
            with working_precision(K + 96):
                if kind == "eps":
                    lo, hi = cb.eps_lower(target), cb.eps_upper(target)
                else:
                    lo = to_fraction(endpoints(cb.delta_lower_ball(target))[0])
                    hi = to_fraction(endpoints(cb.delta_upper_ball(target))[1])
            if lo is not None and (d.lo is None or lo > d.lo):
                d.lo = lo
            if hi is not None and (d.hi is None or hi < d.hi):
                d.hi = hi
        lo_all = max((d.lo for d in dirs if d.lo is not None), default=Fraction(0))
        his = [d.hi for d in dirs]
        hi_all = None if any(h is None for h in his) else max(his)  # type: ignore[type-var]
        cost = time.monotonic() - t_level
        levels.append({"m": m, "K": K, "lo": lo_all, "hi": hi_all, "seconds": cost,
                       "length": max(d.length for d in dirs)})
        for d in dirs:
            if d.hi is not None and d.hi <= lo_all:
                d.active = False  # certified at or below the maximum's lower bound: settled
        rescaled = False
        if kind == "delta":
            # the unit 2^-K must resolve delta itself: adapt it to the magnitude
            # seen (lower end, else the upper end when the lower end is still 0)
            new_scale = lo_all if lo_all > 0 else hi_all
            if new_scale is not None and new_scale > 0 and (scale is None or new_scale < scale / 1024):
                rescaled = True
            if new_scale is not None and new_scale > 0:
                scale = new_scale
        rel = _rel(lo_all, hi_all)
        done = (rel is not None and rel <= rel_width) or (decide is not None and decide(lo_all, hi_all))
        if done:
            return PldResult(lo_all, hi_all, m, K, time.monotonic() - t0, rel,
                             {d.name: (d.lo, d.hi) for d in dirs}, levels)
        inc = 1
        if rescaled and lo_all == 0:
            inc = 0  # the grid was not the problem: the mass unit was too coarse
        elif rel is not None and rel > 0:
            inc = max(1, min(3, math.ceil(math.log(rel / rel_width * 1.3) / math.log(4))))
        est = cost * (2.2 ** max(inc, 1))
        elapsed = time.monotonic() - t0
        length = max(d.length for d in dirs)
        if elapsed + est > time_budget:
            raise _budget_fail(what, lo_all, hi_all, m,
                               f"the next grid (2^-{m + inc}) would exceed the time budget of "
                               f"{time_budget:g} s (estimated {est:.3g} s more)")
        if length * (2 ** inc) > max_length:
            raise _budget_fail(what, lo_all, hi_all, m,
                               f"the next grid would hold more than {max_length} points (memory budget)")
        m += inc
