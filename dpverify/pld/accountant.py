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
we use the suffix sets {k >= j} and take the best of a few j near the first
class with P_k > e^eps Q_k. Q is stored tilted (Qt_k = Q_k e^{s_k},
discretise docstring), so e^eps Q_{>=j} = e^{eps - s_j - tilt} Qt_{>=j}(e^{-h}), a
positive-term polynomial evaluation like V.

epsilon(delta) = inf { eps : delta(eps) <= delta } (the curve is nonincreasing):

* upper end: any exact eps_hi with delta_U(eps_hi) <= delta (certified) has
  epsilon(delta) <= eps_hi. On (s_{k0-1}, s_k0] delta_U is
  2^-K (S - e^eps V + u_inf) and the crossing is log((S + u_inf - delta 2^K) / V).
* lower end: for each j with P_{>=j} > delta 2^K, every
  eps < log((P_{>=j} - delta 2^K) / Q_{>=j}) has lower curve > delta, so
  epsilon(delta) >= that log (take the lower end of its ball).

Grid choice (:func:`refine_query`): a probe two halvings coarser than the
a-priori guess m* = log2 sqrt(T / rel_width), then the grid predicted by the
measured h^2 law of the width (usually the last level). The cost of each
level is estimated before it starts and the deadline is checked inside it;
when the budget ends, an enclosure within NARROW_FACTOR of the requested width
is returned with a note, else PrecisionExhausted states the width reached.
The grid choice and the estimates affect only speed: every level's bounds are
certified on their own. Bounds from every level are valid, so each direction keeps the
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
from .convolve import FOURIER_MIN_STEPS, compose, mul_count, product_seconds
from .discretise import LowerDist, UpperDist, discretise, grid_range

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
    """Composed pessimistic and optimistic distributions of one direction.

    Suffix sums are exact integers obtained by evaluating the shifted integer
    polynomial at 1 (FLINT, C speed); tilted Q-sums are the shifted tilted
    polynomial evaluated at the ball e^{-h} (all terms positive, so arb's
    enclosure is tight). No query walks the coefficients in Python: the
    suffix that gives the best optimistic bound is located by a binary search
    on a handful of coefficients (tightness only, every suffix is sound)."""

    def __init__(self, upper: UpperDist, lower: LowerDist) -> None:
        self.upper = upper
        self.lower = lower
        self.K = upper.K
        self.m = upper.m
        self.u_inf = int(upper.inf)
        # P at +inf, less the mass the Fourier wrap may have added to the classes
        self.l_inf = int(lower.inf) - int(lower.deficit)
        self._us: dict[int, int] = {}
        self._ps: dict[int, int] = {}

    # -- exact suffix sums
    def _u_suffix(self, k: int) -> int:
        v = self._us.get(k)
        if v is None:
            p = self.upper.poly
            v = int((p.right_shift(k) if k else p)(1)) if k < p.length() else 0
            self._us[k] = v
        return v

    def _p_suffix(self, j: int) -> int:
        v = self._ps.get(j)
        if v is None:
            p = self.lower.P
            v = int((p.right_shift(j) if j else p)(1)) if j < p.length() else 0
            self._ps[j] = v
        return v

    def _qt_eval(self, j: int) -> arb:
        """sum_{k >= j} Qt_k e^{-(k - j) h}: e^{s_j + tilt} times the Q-mass
        of the classes k >= j (times 2^K), an upper bound (Qt rounded up)."""
        q = self.lower.Q
        if j >= q.length():
            return arb(0)
        h = arb(1) / arb(2) ** self.m
        return (q.right_shift(j) if j else q)((-h).exp())

    # -- upper curve
    def _k0(self, eps: Fraction, offset: int, length: int) -> int:
        k0 = math.floor(eps * (1 << self.m)) - offset + 1
        return min(max(k0, 0), length)

    def _upper_at(self, eps: Fraction, k0: int) -> arb:
        """2^K delta_U(eps) for eps in (s_{k0-1}, s_k0] (module docstring)."""
        U = self.upper
        if k0 >= U.poly.length():
            return arb(self.u_inf)
        S = self._u_suffix(k0)
        tail = U.poly.right_shift(k0) if k0 else U.poly
        h = arb(1) / arb(2) ** self.m
        V = (-(h * (U.offset + k0))).exp() * tail((-h).exp())
        return arb(fmpz(S)) - ball(eps).exp() * V + self.u_inf

    def delta_upper_ball(self, eps: Fraction) -> arb:
        n = self.upper.poly.length()
        return self._upper_at(eps, self._k0(eps, self.upper.offset, n)) / arb(2) ** self.K

    # -- lower curve
    def _j_star(self, eps: float) -> int:
        """First class whose effective loss s_k + log(P_k / Qt_k) exceeds
        ``eps`` (binary search; the effective loss is about nondecreasing).
        Including exactly the classes with P_k > e^eps Q_k maximises the
        suffix bound, so the best suffix starts near here. Tightness only."""
        L = self.lower
        n = L.P.length()
        h = 2.0 ** -self.m

        def above(k: int) -> bool:
            # empty classes (sparse finite pairs): decide on the nearest
            # nonempty class above (else below)
            for kk in list(range(k, min(n, k + 4096))) + list(range(k - 1, max(-1, k - 4096), -1)):
                p = int(L.P[kk])
                if p > 0:
                    break
            else:
                return k > n // 2
            q = int(L.Q[kk]) if kk < L.Q.length() else 0
            if q <= 0:
                return True
            return (L.offset + kk) * h + float(L.tilt) + math.log(p) - math.log(q) > eps

        lo, hi = 0, n
        while lo < hi:
            mid = (lo + hi) // 2
            if above(mid):
                hi = mid
            else:
                lo = mid + 1
        return lo

    def _suffix_window(self, eps: float) -> range:
        n = self.lower.P.length()
        j = self._j_star(eps)
        return range(max(0, j - 6), min(n, j + 4))

    def delta_lower_ball(self, eps: Fraction) -> arb:
        """A lower bound of 2^-K sum over a suffix of (P_k - e^eps Q_k), plus
        the +inf class (module docstring); the suffix is chosen near
        :meth:`_j_star` and every suffix is valid."""
        L = self.lower
        h = Fraction(1, 1 << self.m)
        best = arb(0)
        for j in self._suffix_window(float(eps)):
            w = self._qt_eval(j)
            v = arb(fmpz(self._p_suffix(j))) - ball(eps - (L.offset + j) * h - L.tilt).exp() * w
            lo = endpoints(v)[0]
            if lo > best:
                best = lo
        v = (best + self.l_inf) / arb(2) ** self.K
        return v if v >= 0 else arb(0)  # a deficit can push the bound below 0

    # -- epsilon(delta)
    def eps_upper(self, delta: Fraction) -> Optional[Fraction]:
        """An exact eps with certified upper curve <= delta, near the crossing;
        None if none exists (mass at +inf already exceeds delta)."""
        U = self.upper
        D = arb(delta.numerator) / delta.denominator * arb(2) ** self.K
        n = U.poly.length()
        if not arb(self.u_inf) < D:
            return None
        h = Fraction(1, 1 << self.m)

        def ok_at(j: int) -> bool:
            # knot s_j = (offset + j) h lies in (s_{j-1}, s_j]: k0 = j
            return bool(self._upper_at((U.offset + j) * h, min(max(j, 0), n)) <= D)

        # smallest knot index j (loss (offset + j) h) with upper curve <= delta
        if self.delta_upper_ball(Fraction(0)) * arb(2) ** self.K <= D:
            return Fraction(0)  # epsilon(delta) is taken over eps >= 0
        lo, hi = -1, n  # ok at hi (loss beyond the last knot: only +inf mass)
        if not ok_at(hi):
            return None
        if U.offset < 0:  # search only eps >= 0; the knot of loss 0 is not ok
            lo = min(-U.offset, n - 1)
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if ok_at(mid):
                hi = mid
            else:
                lo = mid
        # on (s_{hi-1}, s_hi] the curve is 2^-K (S - e^eps V + u_inf), k0 = hi
        best = (U.offset + hi) * h
        if hi >= 1:
            S = self._u_suffix(hi)
            tail = U.poly.right_shift(hi)
            hb = arb(1) / arb(2) ** self.m
            V = (-(hb * (U.offset + hi))).exp() * tail((-hb).exp())
            num = arb(fmpz(S)) + self.u_inf - D
            if num > 0 and V > 0:
                root = (num / V).log()
                # nudge above the exact crossing, where the check is decidable
                cand = to_fraction(endpoints(root)[1])
                cand += abs(cand) * Fraction(1, 1 << 64) + Fraction(1, 1 << 200)
                if cand < best and self.delta_upper_ball(cand) * arb(2) ** self.K <= D:
                    best = cand
        return best

    def eps_lower(self, delta: Fraction, hint: Optional[float] = None) -> Optional[Fraction]:
        """An exact eps with epsilon(delta) >= eps (certified): for a suffix
        j with P_{>=j} + P_inf > delta, every eps below
        log((P_{>=j} + P_inf - delta) / Q_{>=j}) has lower curve > delta.
        ``hint`` (a float near epsilon(delta), e.g. the upper end) only
        chooses the suffixes tried."""
        L = self.lower
        D = arb(delta.numerator) / delta.denominator * arb(2) ** self.K
        h = Fraction(1, 1 << self.m)
        n = L.P.length()
        if hint is None:
            js: Sequence[int] = range(0, n, max(1, n // 64))
        else:
            js = self._suffix_window(hint)
        best: Optional[Fraction] = None
        for j in js:
            num = arb(fmpz(self._p_suffix(j) + self.l_inf)) - D
            w = self._qt_eval(j)
            if num > 0 and w > 0:
                # Q_{>=j} 2^K = e^{-s_j - tilt} w: eps < log(num / w) + s_j + tilt
                g = to_fraction(endpoints((num / w).log() + ball((L.offset + j) * h + L.tilt))[0])
                if best is None or g > best:
                    best = g
        return max(best, Fraction(0)) if best is not None else Fraction(0)


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


# --------------------------------------------------------------------------- cost model

#: the Fourier power may add proven float error of 1/_FOURIER_SHARE of the
#: target width (scale * rel_width) per polynomial (refine_query's allowance)
_FOURIER_SHARE = 50


def fourier_usable(K: int, scale: Optional[Fraction], rel_width: float) -> bool:
    """Whether the Fourier power can be expected to certify at unit 2^-K for
    a target of scale * rel_width: its allowance must clear its binary64
    error floor (~1e-12 at 2^23 points), and it declines K > MAX_K. Cost
    model only: a wrong guess misplans a level, nothing else."""
    from .fourier import MAX_K

    return scale is not None and K <= MAX_K and float(scale) * rel_width / _FOURIER_SHARE > 2e-12


def _moments(u: UpperDist) -> tuple[float, float]:
    """Float mean and variance (in grid units) of one discretised step's loss
    (pessimistic masses; only for the length estimate)."""
    c = [int(x) / (1 << u.K) for x in u.poly.coeffs()]  # int / int: no overflow
    tot = sum(c) or 1.0
    mean = sum(i * x for i, x in enumerate(c)) / tot
    var = sum((i - mean) ** 2 * x for i, x in enumerate(c)) / tot
    return mean, var


def estimate_length(parts: Sequence[tuple[UpperDist, int]], z: float = 8.0) -> int:
    """Estimated length of the composed distribution: z standard deviations
    each side of the composed loss (central limit), never more than the
    untruncated support. Cost model only."""
    var = 0.0
    full = 0
    n1 = 1
    for u, T in parts:
        _, v = _moments(u)
        var += T * v
        full += T * (u.poly.length() - 1)
        n1 = max(n1, u.poly.length())
    return int(min(full + 1, 2 * z * math.sqrt(var) + n1))


def estimate_seconds(length: int, K: int, steps: Sequence[Step], directions: int,
                     fourier: bool = False) -> float:
    """A-priori cost of composing one grid level: per direction three
    polynomials (pessimistic P, optimistic P and tilted Q), each about
    (2 + popcount T) products at the final length (square-and-multiply: the
    squarings' lengths double, so they sum to about twice the last one), at
    product_seconds() each (rounding and truncation are cheaper than the
    product and measured to fit within the model's slack); with ``fourier``
    (the caller expects the Fourier power to certify: fourier_usable) a single
    step kind may cost fourier.transform_seconds per polynomial instead."""
    products = sum(2 + bin(s.count).count("1") for s in steps) + len(steps)
    exact = product_seconds(length, K) * products * 3 * directions
    if fourier and len(steps) == 1 and steps[0].count >= FOURIER_MIN_STEPS:
        from .fourier import transform_seconds

        return min(exact, transform_seconds(length) * 3 * directions)
    return exact


# --------------------------------------------------------------------------- a-priori plan


def _log_sf(x: float) -> float:
    """log of the standard normal survival function (float; estimates only)."""
    if x < 5:
        return math.log(max(0.5 * math.erfc(x / math.sqrt(2)), 1e-300))
    return -x * x / 2 - math.log(x * math.sqrt(2 * math.pi)) + math.log1p(-1 / (x * x) + 3 / x ** 4)


def _log_delta_gauss(eps: float, M: float, V: float) -> float:
    """log delta(eps) for a loss L ~ N(M, V) under P (central-limit model):
    delta = P(L > eps) - e^eps E[e^-L; L > eps]
          = Sf(a) - e^{eps - M + V/2} Sf(a + s),  a = (eps - M)/s.
    Float estimate (grid planning only); log-space so 1e-300 is reachable."""
    s = math.sqrt(max(V, 1e-300))
    a = (eps - M) / s
    l1 = _log_sf(a)
    l2 = eps - M + V / 2 + _log_sf(a + s)
    r = l2 - l1
    return l1 + math.log(-math.expm1(min(r, -1e-12)))


@dataclass(frozen=True)
class Plan:
    """Float a-priori estimates for one query (speed only, never soundness):
    the central-limit model N(M, V) of the composed loss per direction (moments
    of one coarse discretisation of each step), the estimated answer
    (epsilon(delta) or delta(eps)), the slope d log delta / d eps there, and
    the loss range (nats) the composition must hold."""

    eps: float
    log_delta: float
    slope: float
    range_nats: float


def plan_query(steps: Sequence[Step], directions: Sequence[str], kind: str,
               target: Fraction) -> Optional[Plan]:
    """Estimate the answer before any fine grid is built: discretise each step
    once on the coarse grid 2^-6 (one step's range, at most a few hundred
    knots), take the mean and variance of its loss, compose them (T M, T V)
    and solve the Gaussian model. Used to choose the first grid from the
    *answer's* scale (abs width ~ T h^2 must be compared with rel_width * eps,
    and with rel_width / slope for a delta query), the delta unit before the
    first level (instead of a 160-bit guess) and the first level's length
    before it is discretised. Returns None when the model does not apply
    (the refinement then starts from :func:`first_grid` as before)."""
    try:
        plans = []
        for d in directions:
            M = V = 0.0
            spread = 0.0
            for st in steps:
                pair = st.make_pair(d)
                bounds = grid_range(pair, 6, 1e-15)
                if bounds[1] - bounds[0] > 4096:
                    # a step spanning more than 64 nats (sigma ~ 0.1 and below):
                    # the model's one cheap discretisation would not be cheap
                    return None
                u, _ = discretise(pair, 6, 64, 1e-15, bounds=bounds)
                mean, var = _moments(u)
                M += st.count * (mean + u.offset) / 64
                V += st.count * var / 4096
                spread = max(spread, u.poly.length() / 64)
            if V <= 0:
                return None
            if kind == "eps":
                ld = math.log(float(target))
                lo, hi = 0.0, M + 60 * math.sqrt(V) + 60
                if _log_delta_gauss(lo, M, V) <= ld:
                    e = 0.0
                else:
                    for _ in range(200):
                        mid = (lo + hi) / 2
                        if _log_delta_gauss(mid, M, V) > ld:
                            lo = mid
                        else:
                            hi = mid
                    e = hi
            else:
                e = float(target)
                ld = _log_delta_gauss(e, M, V)
            de = 1e-4 * max(1.0, e)
            slope = abs(_log_delta_gauss(e + de, M, V) - _log_delta_gauss(e, M, V)) / de
            z = math.sqrt(2 * max(1.0, -ld)) + 4
            plans.append(Plan(e, ld, slope, 2 * z * math.sqrt(V) + spread))
        worst = Plan(max(p.eps for p in plans), max(p.log_delta for p in plans),
                     max(p.slope for p in plans), max(p.range_nats for p in plans))
        if not all(map(math.isfinite, (worst.eps, worst.log_delta, worst.slope, worst.range_nats))):
            return None
        if worst.log_delta < -2000:  # beyond any unit worth planning (delta < e^-2000)
            return None
        return worst
    except Exception:  # only a speed hint: any failure falls back to the old start
        return None


def planned_grid(plan: Plan, total_steps: int, kind: str, rel_width: float) -> int:
    """Probe grid from the plan: the absolute width in eps is about T h^2
    (measured c in [0.2, 2.3] on A-D, MNIST, T = 1e5, 1e6), the absolute width
    a query needs is rel_width * max(1, eps / 4) for an eps query (the /4
    keeps short schedules on the probe that measured best) and rel_width /
    slope for a delta query (relative width in delta = slope * absolute width
    in eps); probe two halvings coarser than that, as :func:`first_grid`."""
    if kind == "eps":
        w = rel_width * max(1.0, plan.eps / 4)
    else:
        w = rel_width / max(plan.slope, 1e-3)
    m_star = math.ceil(0.5 * math.log2(max(1, total_steps) / w))
    return max(4, min(14, m_star - 2))


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
    or delta(eps), with the grid that produced it and per-direction bounds.
    ``note`` says when the requested width was narrowly missed within the
    budget (the enclosure is certified all the same)."""

    lo: Fraction
    hi: Optional[Fraction]
    m: int
    K: int
    seconds: float
    rel_width: Optional[float]
    directions: dict = field(default_factory=dict)
    levels: list = field(default_factory=list)
    note: Optional[str] = None


def _rel(lo: Fraction, hi: Optional[Fraction]) -> Optional[float]:
    if hi is None:
        return None
    if hi == lo:
        return 0.0
    if lo <= 0:
        return None
    return float((hi - lo) / lo)


def _budget_fail(what: str, lo: Fraction, hi: Optional[Fraction], m: Optional[int], why: str) -> PrecisionExhausted:
    rel = _rel(lo, hi)
    # printed for people: outward (a rounded-to-nearest end would not be a bound)
    with working_precision(128):
        shown = "inf" if hi is None else upper_decimal(ball(hi), 10)
        shown_lo = lower_decimal(ball(lo), 10)
    width = "unbounded" if rel is None else f"{rel:.3g}"
    grid = "no grid finished" if m is None else f"on the grid h = 2^-{m}"
    exc = PrecisionExhausted(
        f"{what}: {why}; best certified enclosure [{shown_lo}, {shown}] "
        f"(relative width {width}) {grid}"
    )
    # the ends themselves, for callers whose contract is a sound one-sided answer
    # (the adapters return the upper end); None: no finite upper end was certified
    exc.best_enclosure = (lo, hi)  # type: ignore[attr-defined]
    return exc


class _Deadline(Exception):
    """Raised inside a grid level when the time budget is spent."""


class _Coarser(Exception):
    """The first grid's estimated cost exceeds the budget: start coarser."""

    def __init__(self, m: int) -> None:
        self.m = m


#: A width within this factor of the requested one counts as "narrowly
#: missed": the best enclosure is returned with a note (unless strict).
NARROW_FACTOR = 10.0

#: Each grid level is chosen from the model "relative width ~ c h^2" (the
#: connect-the-dots and bucket errors are second order in h per step; measured
#: ratios 3.9-4.1 per halving on A-D, MNIST, T = 1e5) with this safety margin.
_MARGIN = 0.7


def _inc_for(rel: Optional[float], rel_width: float) -> int:
    """Grid halvings from a level of relative width ``rel`` to the target."""
    if rel is None:
        return 2
    if rel <= 0:
        return 1
    return max(1, min(6, math.ceil(math.log(rel / (rel_width * _MARGIN)) / math.log(4))))


def first_grid(total_steps: int, rel_width: float) -> int:
    """A-priori probe grid: the model abs width ~ T h^2 (measured c in
    [0.3, 2] on the benchmark schedules) at eps ~ 1 suggests
    m* = log2(sqrt(T / rel_width)); probe 2 halvings coarser (1/4 of the
    cost of m*; coarser probes are outside the h^2 regime and overshoot), then jump with :func:`_inc_for`."""
    m_star = math.ceil(0.5 * math.log2(max(1, total_steps) / rel_width))
    return max(4, min(14, m_star - 2))


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
    strict_width: bool = False,
) -> PldResult:
    """Certified enclosure of epsilon(target) (kind "eps") or delta(target)
    (kind "delta"), the maximum over ``directions``, with relative width
    <= ``rel_width`` (or ``decide(lo, hi)`` says it is enough).

    Grid choice: a cheap probe grid (:func:`first_grid`), then the grid the
    h^2 width model predicts (usually one more level). The cost of every
    level is estimated before it starts (:func:`estimate_seconds` for the
    first, the previous level's measured time scaled by its length and unit
    afterwards) and the deadline ``time_budget`` is checked between products
    and discretisation chunks inside a level. When no further level fits:
    if the best enclosure's width is within NARROW_FACTOR of ``rel_width``
    (and not ``strict_width``) it is returned with a ``note``; otherwise
    PrecisionExhausted states the best certified enclosure reached. Bounds
    from every level are valid, so each direction keeps its best lower /
    upper bound; a direction certified below the other's lower bound is not
    refined further (AFA Sec 4.1: add-remove is the maximum of the two)."""
    t0 = time.monotonic()
    deadline = t0 + time_budget
    total_steps = sum(s.count for s in steps)
    nm = total_muls(steps)
    dirs = [_Dir(d) for d in directions]
    plan = plan_query(steps, directions, kind, target) if m_start is None else None
    if m_start is not None:
        m = m_start
    elif plan is not None:
        m = planned_grid(plan, total_steps, kind, rel_width)
    else:
        m = first_grid(total_steps, rel_width)
    levels: list = []
    what = "epsilon(delta)" if kind == "eps" else "delta(eps)"
    scale = target if kind == "eps" else delta_scale  # delta scale for K, tau, budget
    if scale is None and plan is not None:
        # the unit must resolve delta: a power of two 2^7 below the model's
        # estimate (a wrong estimate costs bits or a rescaled level, never
        # soundness; the rescale below still applies)
        scale = Fraction(1, 1 << (7 + max(0, math.ceil(-plan.log_delta / math.log(2)))))
    if plan is not None:
        # the first level's length from the plan, *before* it is discretised
        # (a probe that would outgrow memory or time is coarsened up front)
        while m > 4:
            n_est = int(plan.range_nats * (1 << m))
            if n_est > max_length // 8:
                m -= 1
                continue
            K_est = 48 + max(1, int(-plan.log_delta / math.log(2)) + 14)
            if estimate_seconds(n_est, K_est, steps, len(directions),
                                fourier_usable(K_est, scale, rel_width)) > time_budget:
                m -= 1
                continue
            break
    prev: Optional[dict] = None
    lo_all: Fraction = Fraction(0)
    hi_all: Optional[Fraction] = None

    def tick() -> None:
        if time.monotonic() > deadline:
            raise _Deadline

    def finish(note: Optional[str] = None) -> PldResult:
        return PldResult(lo_all, hi_all, prev["m"] if prev else m, prev["K"] if prev else 0,
                         time.monotonic() - t0, _rel(lo_all, hi_all),
                         {d.name: (d.lo, d.hi) for d in dirs}, levels, note)

    def stop(why: str) -> PldResult:
        rel = _rel(lo_all, hi_all)
        if (prev is not None and rel is not None and rel <= NARROW_FACTOR * rel_width
                and not strict_width and decide is None):
            return finish(f"the requested relative width {rel_width:g} was not reached ({why}); "
                          f"this certified enclosure has relative width {rel:.3g}")
        raise _budget_fail(what, lo_all, hi_all, prev["m"] if prev else None, why)

    while True:
        # the unit 2^-K: rounding adds at most one unit per coefficient per
        # product (<= nm * length units in all, 2^-8 small) and truncation
        # moves at most budget * T units per end per product into the final
        # result (convolve.power); both are kept ~1% of 'small'
        length_est = prev["length"] << (m - prev["m"]) if prev else (
            int(plan.range_nats * (1 << m)) + 1 if plan is not None else 1 << 20)
        margin = max(1, nm + 2).bit_length() + max(1, length_est).bit_length() + 8 \
            + total_steps.bit_length()
        if scale is not None:
            small = scale * Fraction(1) / max(1, int(1 / rel_width))
            K = max(48, (1 / small).__ceil__().bit_length() + margin)
            tau = small / (1000 * total_steps)
            # per step (convolve.power): at most small / 100 reaches +inf in all
            budget = int(small * (1 << K) / (100 * total_steps * (2 * nm + 2)))
            # proven float error the Fourier route may add per polynomial
            # (fourier.py): 2% of the target width each
            allowance: Optional[int] = int(small * (1 << K) / _FOURIER_SHARE)
        else:
            allowance = None
            K = 160
            tau = Fraction(1, (1 << 100) * total_steps)
            budget = 1 << 20
        t_level = time.monotonic()
        active = [d for d in dirs if d.active]
        if prev is not None:
            est = prev["seconds"] * (1 << (m - prev["m"])) * (2 * K + 32) / (2 * prev["K"] + 32) \
                * len(active) / max(1, prev["dirs"])
            if t_level + est > deadline:
                return stop(f"the next grid (2^-{m}) would exceed the time budget of "
                            f"{time_budget:g} s (estimated {est:.3g} s more)")
        try:
            tick()
            results = []
            for di, d in enumerate(active):
                if progress:
                    progress(di / max(1, len(active)), f"grid 2^-{m}, {d.name}")
                ups, lows = _discretise_all(steps, d.name, m, K, tau, tick)
                if prev is None and di == 0:
                    n_est = estimate_length(ups)
                    if n_est > max_length // 8 and m > 4 and m_start is None:
                        # a-priori m* assumes eps ~ 1; long schedules (T = 1e6:
                        # eps ~ 150, a 180-nat range) need a coarser probe
                        raise _Coarser(max(4, m - math.ceil(math.log2(8 * n_est / max_length))))
                    est = estimate_seconds(n_est, K, steps, len(active),
                                           fourier_usable(K, scale, rel_width))
                    left = deadline - time.monotonic()
                    if est > left:
                        # the cost halves with every coarser halving of h
                        coarser = max(4, m - max(1, math.ceil(math.log2(est / max(left, 1e-3)))) - 1)
                        if coarser < m:
                            raise _Coarser(coarser)
                        return stop(f"the first grid (2^-{m}) alone would take about {est:.3g} s, "
                                    f"more than the time budget of {time_budget:g} s")
                with working_precision(K + 64):
                    U = compose(ups, budget, tick, allowance)
                    L = compose(lows, budget, tick, allowance)
                cb = ComposedBounds(U, L)  # type: ignore[arg-type]
                d.length = cb.upper.poly.length()
                with working_precision(K + 96):
                    if kind == "eps":
                        hi = cb.eps_upper(target)
                        lo = cb.eps_lower(target, None if hi is None else float(hi))
                    else:
                        lo = to_fraction(endpoints(cb.delta_lower_ball(target))[0])
                        hi = to_fraction(endpoints(cb.delta_upper_ball(target))[1])
                results.append((d, lo, hi))
        except _Deadline:
            return stop(f"the time budget of {time_budget:g} s ran out during grid 2^-{m}")
        except _Coarser as c:
            m = c.m
            continue
        except PrecisionExhausted as exc:
            if prev is None and m > 4 and m_start is None:  # probe outgrew memory: coarser
                m = max(4, m - 3)
                continue
            if prev is not None:  # a finer grid outgrew memory: report the best so far
                return stop(f"grid 2^-{m} outgrew the memory budget ({exc})")
            raise
        for d, lo, hi in results:
            if lo is not None and (d.lo is None or lo > d.lo):
                d.lo = lo
            if hi is not None and (d.hi is None or hi < d.hi):
                d.hi = hi
        lo_all = max((d.lo for d in dirs if d.lo is not None), default=Fraction(0))
        his = [d.hi for d in dirs]
        hi_all = None if any(h is None for h in his) else max(his)  # type: ignore[type-var]
        cost = time.monotonic() - t_level
        prev = {"m": m, "K": K, "seconds": cost, "dirs": len(active),
                "length": max(d.length for d in dirs)}
        levels.append({"m": m, "K": K, "lo": lo_all, "hi": hi_all, "seconds": cost,
                       "length": prev["length"]})
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
            return finish()
        inc = 0 if (rescaled and lo_all == 0) else _inc_for(rel, rel_width)
        # largest affordable step (memory: the length doubles per halving)
        while inc > 0 and prev["length"] << inc > max_length:
            inc -= 1
        if inc == 0 and not rescaled:
            return stop(f"the next grid would hold more than {max_length} points (memory budget)")
        # largest affordable step in time (cost ~ 2^inc; the check at the top
        # of the loop refuses when even one halving does not fit)
        while inc > 1 and time.monotonic() + cost * (1 << inc) > deadline:
            inc -= 1
        m += inc


def _discretise_all(steps: Sequence[Step], direction: str, m: int, K: int, tau,
                    tick: Callable[[], None]) -> tuple[list, list]:
    ups, lows = [], []
    for st in steps:
        u, l = discretise(st.make_pair(direction), m, K, tau, progress=lambda _f: tick())
        ups.append((u, st.count))
        lows.append((l, st.count))
        tick()
    return ups, lows
