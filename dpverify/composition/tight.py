"""Exactly tight composition of (eps_i, delta_i)-DP guarantees (LT Thm 4.6, Cor 4.7).

What is proved. LT Thm 4.5: every (eps, delta)-DP pair is dominated by
randomized response RR(eps, delta) (LT Thm 3.4); LT Thm 4.6: the k-fold
(adaptive) composition of (eps_i, delta_i)-DP mechanisms has the profile

    d_l(t) = delta_l + (1 - delta_l) / (e^eps_l + 1) [e^eps_l d_{l-1}(t - eps_l) + d_{l-1}(t + eps_l)],
    d_0(t) = (1 - e^t)_+,

which is attained by the product of the RR(eps_i, delta_i), hence tight.
Unrolling the recursion (the proof of LT Cor 4.7, done here for unequal
eps_i) gives, with p_i = e^eps_i / (1 + e^eps_i), independent Y_i ~ Bernoulli(p_i)
and the shift S = sum_i eps_i (2 Y_i - 1),

    d_k(t) = 1 - R + R * E[(1 - e^{t - S})_+],   R = prod_i (1 - delta_i).

The recursion evaluated at t only ever asks for d_l at t minus a partial shift,
so its memo table is the distribution of S on the *lattice of reachable
shifts*: :class:`ShiftDistribution` builds exactly that table, once per
precision, forward (one convolution per distinct (eps, delta) type; a type
repeated c times contributes the Binomial(c, p) of LT Cor 4.7 directly). Shifts
are kept as exact keys (a, b) meaning a + log b with rational a, b (b = 1 for
the usual rational eps; b = e^eps rational is allowed for brute-force tests),
so equal shifts merge exactly. Every term of the sum is >= 0: no cancellation.

eps(delta): d_k is continuous, non-increasing, equal to 1 - R for t >= T =
sum eps_i and strictly decreasing on (-inf, T] when R > 0 (the derivative is
-R E[e^{t-S}; S > t] and P(S = T) > 0). Hence the smallest eps >= 0 with
d_k(eps) <= delta is: 0 if d_k(0) <= delta; T if delta = 1 - R exactly;
infinite if delta < 1 - R (decided exactly on rationals); else the unique root,
isolated with certified signs (:func:`dpverify.ball.isolate_increasing_root`).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Iterable, Optional, Sequence

from flint import arb, arb_poly, ctx, fmpq, fmpz_poly

from .. import _validate as V
from ..ball import (
    DEFAULT_MAX_BITS,
    arb_to_fraction,
    ball,
    bits_for_digits,
    endpoints,
    isolate_increasing_root,
    parse_exact,
    refine,
    sign,
    working_precision,
)
from ..errors import InvalidParameter, PrecisionExhausted, Undecided
from ..verdict import Enclosure
from ..limits import MAX_LATTICE_SUPPORT
from .guarantee import EpsDelta, Key, guarantee_types

__all__ = [
    "LatticeTooLarge",
    "ShiftDistribution",
    "compose_delta",
    "compose_eps",
    "cor47_delta_ball",
    "shift_ball",
]


class LatticeTooLarge(InvalidParameter):
    """The exact table of reachable shifts would exceed the size budget.

    ``estimate`` is the size the table would have (an upper bound);
    :func:`compose_eps_auto` / :func:`compose_delta_auto` catch it and fall
    back to grid rounding unless the exact lattice was asked for."""

    def __init__(self, message: str, estimate: int, budget: int, single: bool) -> None:
        super().__init__("k" if single else "exact", message)
        self.estimate = estimate
        self.budget = budget
        self.single = single


def _rational_unit(eps: Sequence[Fraction]) -> tuple[Fraction, list[int]]:
    """The largest g with every eps_i = m_i g, m_i integer (g = gcd / lcm)."""
    den = math.lcm(*(e.denominator for e in eps))
    nums = [e.numerator * (den // e.denominator) for e in eps]
    unit = math.gcd(*nums)
    return Fraction(unit, den), [n // unit for n in nums]


def _plan(moving: Sequence[tuple[EpsDelta, int]], budget: int) -> tuple[str, int]:
    """Which table to build, and its size, *before* building anything.

    * ``lattice``: every eps_i rational and the lattice span M = sum c_i m_i
      (eps_i = m_i g) has M + 1 <= budget points: one arb_poly product of size M.
      The span, not the number of reachable shifts, is what this route costs:
      eps = (0.1, 0.123456789) reach 4 shifts but span 223456789 lattice points
      (building it ran away to 10.7 GB), so the span is estimated first.
    * ``dict``: the reachable shifts are few (prod (c_i + 1) <= budget and the
      convolution work sum_l |table_l| (c_l + 1) <= 8 budget): exact keys.
    * otherwise :class:`LatticeTooLarge`.
    Returns (route, size estimate)."""
    if not moving:
        return "dict", 1
    reach = 1
    work = 0
    for g, c in moving:
        work += min(reach, budget + 1) * (c + 1)
        reach = min(reach * (c + 1), 10**18)
    span = None
    if all(g.exp_eps is None for g, _ in moving):
        _, ms = _rational_unit([g.eps for g, _ in moving])
        span = sum(c * m for (g, c), m in zip(moving, ms))
        reach = min(reach, span + 1)
        if span + 1 <= budget:
            return "lattice", span + 1
    if reach <= budget and work <= 8 * budget:
        return "dict", reach
    size = reach if span is None else min(reach, span + 1)
    single = len(moving) == 1
    raise LatticeTooLarge(
        f"the exact composition needs a table of about {size} shifts (budget {budget}); "
        + (f"at most {budget - 1} steps of one guarantee fit" if single else
           "drop --exact to let dpverify round the eps_i onto a grid (certified lower and upper "
           "bounds with their gap), or give --grid H"),
        size, budget, single)


class ShiftDistribution:
    """The memo table of the LT Thm 4.6 recursion: the law of S on the lattice
    of reachable shifts, with R = prod (1 - delta_i), built per precision."""

    def __init__(self, mechs: Iterable[object], k: int = 1, *, group: bool = True,
                 budget: int = MAX_LATTICE_SUPPORT) -> None:
        """``group=False``: convolve one mechanism at a time, exactly the LT
        Thm 4.6 recursion step by step (for cross-checks against Cor 4.7).
        Raises :class:`LatticeTooLarge` (an InvalidParameter) when the table
        would exceed ``budget`` entries; nothing is built before that check."""
        self.types = guarantee_types(mechs, k, group)
        moving = [(g, c) for g, c in self.types if g.key() != (0, 1)]
        self.route, self.size_estimate = _plan(moving, budget)
        self.budget = budget
        self.any_full = any(g.delta == 1 for g, _ in self.types)
        self._cache: dict[int, "_Table"] = {}

    # -- exact facts
    def one_minus_R_exact_cmp(self, delta: Fraction) -> int:
        """sign(delta - (1 - R)), decided with balls, exactly when they tie."""
        for bits in (128, 512, 2048, 8192):
            with working_precision(bits):
                try:
                    return sign(ball(delta) - self._L())
                except Undecided:
                    pass
        size = sum(c * len(str(g.delta.denominator)) for g, c in self.types)
        if size > 2_000_000:
            raise PrecisionExhausted("could not compare delta with 1 - prod(1 - delta_i)")
        R = Fraction(1)
        for g, c in self.types:
            R *= (1 - g.delta) ** c
        d = delta - (1 - R)
        return (d > 0) - (d < 0)

    def max_shift_key(self) -> Key:
        a, b = Fraction(0), Fraction(1)
        for g, c in self.types:
            ga, gb = g.key()
            a += c * ga
            b *= gb**c
        return (a, b)

    # -- balls at the current precision
    def _log_R(self) -> arb:
        return sum((c * ball(-g.delta).log1p() for g, c in self.types), arb(0))

    def _L(self) -> arb:
        """1 - R, as a ball (R = 0 exactly when some delta_i = 1)."""
        if self.any_full:
            return arb(1)
        return -self._log_R().expm1()

    def _R(self) -> arb:
        if self.any_full:
            return arb(0)
        return self._log_R().exp()

    def _table(self) -> "_Table":
        prec = ctx.prec
        if prec in self._cache:
            return self._cache[prec]
        moving = [(g, c) for g, c in self.types if g.key() != (0, 1)]  # eps = 0: S does not move
        if all(g.exp_eps is None for g, _ in moving):
            # rational shifts: exact integer keys n (shift = n * step), sorted
            if self.route == "lattice":
                step, ns, ws = self._lattice_items(moving)
            else:
                step, ns, ws = self._rational_dict_items(moving)
            table = _Table(self._L(), self._R(), step=step, ns=ns, ws=ws)
        else:  # shifts a + log b: no exact order, every term is summed
            table = _Table(self._L(), self._R(), items=self._dict_items(moving))
        self._cache[prec] = table
        return table

    @staticmethod
    def _binomial(g: EpsDelta, c: int) -> list[arb]:
        """Binomial(c, p) weights, p = e^eps/(1+e^eps), by the exact ratio of
        consecutive terms (LT Cor 4.7); each term keeps its relative accuracy."""
        r = g.eps_ball().exp()
        p = r / (1 + r)
        q = 1 / (1 + r)
        ratio = p / q
        w = q**c
        out = []
        for y in range(c + 1):
            out.append(w)
            if y < c:
                w = w * ratio * arb(fmpq(c - y, y + 1))
        return out

    def _dict_items(self, moving: list) -> list:
        """Exact keys (a, b) = a + log b; one convolution per type."""
        dist: dict[Key, arb] = {(Fraction(0), Fraction(1)): arb(1)}
        for g, c in moving:
            a, b = g.key()
            binom = {(a * (2 * y - c), b ** (2 * y - c)): w for y, w in enumerate(self._binomial(g, c))}
            new: dict[Key, arb] = {}
            for k1, w1 in dist.items():
                for k2, w2 in binom.items():
                    kk = (k1[0] + k2[0], k1[1] * k2[1])
                    v = w1 * w2
                    new[kk] = new[kk] + v if kk in new else v
            dist = new
        return [(shift_ball(a, b), w) for (a, b), w in dist.items()]

    def _rational_dict_items(self, moving: list) -> tuple[Fraction, list[int], list[arb]]:
        """Few reachable shifts on a huge lattice: convolve with exact integer
        keys (shift = n * step) and sort them descending."""
        step, ms = _rational_unit([g.eps for g, _ in moving]) if moving else (Fraction(1), [])
        dist: dict[int, arb] = {0: arb(1)}
        for (g, c), m in zip(moving, ms):
            binom = [(m * (2 * y - c), w) for y, w in enumerate(self._binomial(g, c))]
            new: dict[int, arb] = {}
            for n1, w1 in dist.items():
                for n2, w2 in binom:
                    v = w1 * w2
                    n = n1 + n2
                    new[n] = new[n] + v if n in new else v
            dist = new
        ns = sorted(dist, reverse=True)
        return step, ns, [dist[n] for n in ns]

    def _lattice_items(self, moving: list) -> tuple[Fraction, list[int], list[arb]]:
        """Rational eps_i = m_i * g on one integer lattice: S = g (2U - M) with
        U = sum m_i Y_i, whose law is the polynomial prod_i (q_i + p_i x^{m_i})^{c_i}.

        The product is taken in exact integer arithmetic (FLINT fmpz_poly, a
        balanced product tree) on fixed-point bounds: with P = prec + 32 bits,
        each binomial weight w is bracketed by integers floor(w 2^P) <= w 2^P
        <= ceil(w 2^P), and since every coefficient is >= 0 the product of the
        lower (upper) polynomials, rounded down (up) to P bits after each
        multiplication, is a lower (upper) bound of every true coefficient.
        Hence each weight lies in [lo, hi] 2^-P with hi - lo = O(levels) units
        (absolute error ~ 2^-P, far below what the requested width can see; the
        caller's precision escalation raises P when it is not). Exponents whose
        upper bound is 0 are unreachable (or below 2^-P: then [0, 0] is not
        claimed, they are kept as [0, hi]) and skipped only when hi = 0, which
        proves the weight is exactly 0 (the product of nonnegative terms)."""
        step, ms = _rational_unit([g.eps for g, _ in moving])
        span = sum(c * m for (g, c), m in zip(moving, ms))
        if len(moving) == 1 or span < 1 << 12:
            return step, *self._arb_lattice(moving, ms, span)
        P = ctx.prec + 32
        scale = arb(2) ** P
        lows, highs = [], []
        M = 0
        for (g, c), m in zip(moving, ms):
            lo = [0] * (c * m + 1)
            hi = [0] * (c * m + 1)
            for y, w in enumerate(self._binomial(g, c)):
                x = w * scale
                if x.is_finite():
                    lo[y * m] = max(0, math.floor(arb_to_fraction(x.lower())))
                    hi[y * m] = min(1 << P, math.ceil(arb_to_fraction(x.upper())))
                else:  # a probability: [0, 1] is always true
                    lo[y * m], hi[y * m] = 0, 1 << P
            lows.append(fmpz_poly(lo))
            highs.append(fmpz_poly(hi))
            M += c * m
        low = _product_tree(lows, P, up=False)
        high = _product_tree(highs, P, up=True)
        lc, hc = low.coeffs(), high.coeffs()
        ns, ws = [], []
        unit = arb(2) ** (-P)
        for u in range(M, -1, -1):  # descending shift
            h = int(hc[u]) if u < len(hc) else 0
            if h == 0:
                continue  # the upper bound of a sum of nonnegative products is 0: unreachable
            lo_u = int(lc[u]) if u < len(lc) else 0
            ns.append(2 * u - M)
            ws.append(arb(lo_u).union(arb(h)) * unit)
        return step, ns, ws

    def _arb_lattice(self, moving: list, ms: list[int], M: int) -> tuple[list[int], list[arb]]:
        """Small lattices (or one type, no product at all): arb_poly products,
        which keep the relative accuracy of tiny weights (fixed point would not,
        e.g. e^{-3 * 10^400} at eps = 10^400)."""
        polys = []
        for (g, c), m in zip(moving, ms):
            coeffs = [arb(0)] * (c * m + 1)
            for y, w in enumerate(self._binomial(g, c)):
                coeffs[y * m] = w
            polys.append(arb_poly(coeffs))
        while len(polys) > 1:
            polys = [polys[i] * polys[i + 1] if i + 1 < len(polys) else polys[i]
                     for i in range(0, len(polys), 2)]
        poly = polys[0]
        ns, ws = [], []
        for u in range(M, -1, -1):  # descending shift
            w = poly[u]
            if w.is_zero():
                continue
            ns.append(2 * u - M)
            ws.append(w.nonnegative_part())
        return ns, ws

    def delta_at_most_max_shift(self) -> arb:
        """Ball of d_k(t) for any t at or past the largest shift (:meth:`max_shift_key`): 1 - R."""
        return self._L()

    def delta(self, t: arb) -> arb:
        """Ball of d_k(t) for a ball t (any real), at the current precision."""
        table = self._table()
        if self.any_full:
            return arb(1)
        return table.L + table.R * table.expectation(t)


class _Table:
    """E[(1 - e^{t - S})_+] for the law of S at one precision.

    Rational shifts (``ns`` descending, shift n * step, exact): with the
    prefix sums W_j = sum_{i<j} w_i and V_j = sum_{i<j} w_i e^{-s_i},

        E[(1 - e^{t - S})_+] = (W_J - e^t V_J) + sum_{J <= i < J'} w_i (1 - e^{t - s_i})_+,

    where J counts the shifts proved > every point of the ball t (exact
    comparison of rationals with the ball's exact endpoints), and J' those not
    proved < it (the few shifts inside the ball are summed term by term; the
    rest contribute exactly 0). W_J - e^t V_J is a sum of terms >= 0, so its
    nonnegative part still contains it. This makes one evaluation O(log n)
    instead of O(n): a root isolation evaluates it dozens of times.
    """

    def __init__(self, L: arb, R: arb, *, step: Optional[Fraction] = None,
                 ns: Optional[list[int]] = None, ws: Optional[list[arb]] = None,
                 items: Optional[list] = None) -> None:
        self.L, self.R = L, R
        self.items = items
        if items is not None:
            return
        assert step is not None and ns is not None and ws is not None
        self.step, self.ns, self.ws = step, ns, ws
        self.neg = [-n for n in ns]  # ascending, for bisect
        W, V = [arb(0)], [arb(0)]
        z = ball(step).exp()  # e^{-s_i} = z^{-n_i}: exact integer powers of one ball
        for n, w in zip(ns, ws):
            W.append(W[-1] + w)
            V.append(V[-1] + w * z ** (-n))
        self.W, self.V = W, V

    def expectation(self, t: arb) -> arb:
        if self.items is not None:
            acc = arb(0)
            for s, w in self.items:
                acc += w * (-(t - s).expm1()).nonnegative_part()
            return acc
        import bisect

        if not t.is_finite():
            raise Undecided("the argument of the composed profile is not a finite ball")
        lo, hi = (arb_to_fraction(x) for x in endpoints(t))
        # J: shifts n step > hi  <=>  -n < -hi/step ; J': shifts n step >= lo
        J = bisect.bisect_left(self.neg, -hi / self.step)
        J2 = bisect.bisect_right(self.neg, -lo / self.step)
        acc = (self.W[J] - t.exp() * self.V[J]).nonnegative_part() if J else arb(0)
        for i in range(J, J2):
            s = ball(self.step * self.ns[i])
            acc += self.ws[i] * (-(t - s).expm1()).nonnegative_part()
        return acc


def _product_tree(polys: list, P: int, up: bool):
    """Product of nonnegative fixed-point polynomials (scale 2^P), balanced,
    rounding every product back to scale 2^P downward (``up=False``: floor)
    or upward (ceil), so the result bounds the exact product from that side."""
    while len(polys) > 1:
        nxt = []
        for i in range(0, len(polys), 2):
            if i + 1 == len(polys):
                nxt.append(polys[i])
                continue
            prod = polys[i] * polys[i + 1]
            if up:
                nxt.append(fmpz_poly([-((-int(v)) >> P) for v in prod.coeffs()]))
            else:
                nxt.append(fmpz_poly([int(v) >> P for v in prod.coeffs()]))
        polys = nxt
    return polys[0]


def cor47_delta_ball(eps: arb, delta: arb, k: int, t: arb) -> arb:
    """LT Cor 4.7 closed form 1 - (1-delta)^k (1 - E[(1 - e^{t - eps(2Y-k)})_+]),
    Y ~ Binomial(k, e^eps / (1 + e^eps)), evaluated term by term (a separate
    route from :class:`ShiftDistribution`, used to test the recursion)."""
    p = eps.exp() / (1 + eps.exp())
    acc = arb(0)
    for y in range(k + 1):
        w = arb(math.comb(k, y)) * p**y * (1 - p) ** (k - y)
        acc += w * (1 - (t - eps * (2 * y - k)).exp()).nonnegative_part()
    return 1 - (1 - delta) ** k * (1 - acc)


# --------------------------------------------------------------------------- public API


def compose_delta(mechs: Iterable[object], eps: object, *, k: int = 1, digits: int = 15) -> Enclosure:
    """Enclosure of the tight composed profile delta(eps) (LT Thm 4.6) of the
    sequence ``mechs`` (pairs (eps_i, delta_i) or "E,D" strings, exact) repeated
    ``k`` times, at any real ``eps``; relative width <= 10^-digits."""
    digits = V.digits(digits)
    e = parse_exact(eps, "eps")
    dist = mechs if isinstance(mechs, ShiftDistribution) else ShiftDistribution(mechs, k)
    a, b = dist.max_shift_key()
    if b == 1 and e >= a:
        # every shift S <= sum eps_i k_i <= eps, so each hinge (1 - e^(eps - S))_+ is exactly 0 and
        # delta(eps) = 1 - R (LT Thm 4.6), as verify's route reads it: the hinge at the ball of a
        # non-dyadic eps straddled the shift eps itself, and compose --mech 0.3,0 --eps 0.3 could not
        # reach its width around 0 (adv46 L2)
        x, bits = refine(lambda: dist.delta_at_most_max_shift(), digits=digits + 1, what="the composed delta(eps)")
    else:
        x, bits = refine(lambda: dist.delta(ball(e)), digits=digits + 1, what="the composed delta(eps)")
    return Enclosure.from_ball(x, digits, bits)


def compose_eps(mechs: Iterable[object], delta: object, *, k: int = 1, digits: int = 15) -> Enclosure:
    """Enclosure of the smallest eps >= 0 with composed delta(eps) <= ``delta``
    (LT Thm 4.6; monotone inversion, see the module docstring). Returns the
    point +inf when no finite eps meets the budget (delta < 1 - prod(1 - delta_i),
    decided exactly)."""
    digits = V.digits(digits)
    d = V.closed_unit("delta", delta)
    dist = mechs if isinstance(mechs, ShiftDistribution) else ShiftDistribution(mechs, k)
    if dist.any_full:  # d_k is identically 1
        return Enclosure(arb(0), arb(0), digits, 0) if d == 1 else Enclosure(arb("inf"), arb("inf"), digits, 0)
    c = dist.one_minus_R_exact_cmp(d)
    if c < 0:
        return Enclosure(arb("inf"), arb("inf"), digits, 0)
    a, b = dist.max_shift_key()
    if a == 0 and b == 1:  # every eps_i = 0: d_k(t) = 1 - R for all t >= 0
        return Enclosure(arb(0), arb(0), digits, 0)
    if c == 0:  # delta = 1 - R exactly: d_k > 1 - R below T, = 1 - R from T on
        x, bits = refine(lambda: shift_ball(a, b), digits=digits + 1, what="sum of eps_i")
        return Enclosure.from_ball(x, digits, bits)
    # delta > 1 - R and T > 0: is delta(0) already within budget?
    bits = bits_for_digits(digits)
    while True:
        with working_precision(bits):
            try:
                s0 = sign(dist.delta(arb(0)) - ball(d))
                break
            except Undecided:
                pass
        if bits >= DEFAULT_MAX_BITS:
            raise PrecisionExhausted("could not decide whether delta(0) meets the budget")
        bits *= 2
    if s0 <= 0:
        return Enclosure(arb(0), arb(0), digits, bits)
    with working_precision(128):
        hi = endpoints(shift_ball(a, b))[1]  # an exact point >= T, where d_k = 1 - R < delta

    def g(x: arb) -> arb:
        return ball(d) - dist.delta(x)

    lo_pt, hi_pt, used = isolate_increasing_root(g, arb(0), hi, digits=digits, what="the composed eps(delta)")
    return Enclosure(lo_pt, hi_pt, digits, used)


def shift_ball(a: Fraction, b: Fraction) -> arb:
    return ball(a) + (ball(b).log() if b != 1 else arb(0))
