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
from dataclasses import dataclass
from fractions import Fraction
from typing import Iterable, Optional, Sequence

from flint import arb, arb_poly, ctx, fmpq

from .. import _validate as V
from ..ball import (
    DEFAULT_MAX_BITS,
    ball,
    bits_for_digits,
    endpoints,
    exact_str,
    isolate_increasing_root,
    parse_exact,
    refine,
    sign,
    working_precision,
)
from ..errors import InvalidParameter, PrecisionExhausted, Undecided
from ..verdict import Enclosure

__all__ = [
    "EpsDelta",
    "ShiftDistribution",
    "compose_delta",
    "compose_delta_grid",
    "compose_eps",
    "compose_eps_grid",
    "cor47_delta_ball",
    "parse_mech",
    "GridBounds",
    "MAX_SUPPORT",
    "MAX_K",
]

#: Largest number of lattice points of the shift distribution built (beyond it:
#: refuse and ask for grid rounding instead of hanging).
MAX_SUPPORT = 400_000
#: Largest total number of composed mechanisms.
MAX_K = 10_000_000

Key = tuple  # (a: Fraction, b: Fraction): the shift a + log b


@dataclass(frozen=True)
class EpsDelta:
    """An (eps, delta)-DP guarantee with exact eps >= 0 and delta in [0, 1].

    ``exp_eps`` (optional) gives eps as log of an exact rational r >= 1
    instead (then ``eps`` is None): randomized response with rational
    probabilities r / (1 + r), used for exact brute-force cross-checks.
    """

    eps: Optional[Fraction]
    delta: Fraction
    exp_eps: Optional[Fraction] = None

    def key(self) -> Key:
        """Exact shift eps = a + log b."""
        if self.exp_eps is not None:
            return (Fraction(0), self.exp_eps)
        return (self.eps, Fraction(1))

    def eps_ball(self) -> arb:
        if self.exp_eps is not None:
            return ball(self.exp_eps).log()
        return ball(self.eps)

    def text(self) -> str:
        e = exact_str(self.eps) if self.exp_eps is None else f"log({exact_str(self.exp_eps)})"
        return f"{e},{exact_str(self.delta)}"


def make(eps: object, delta: object, name: str = "mech") -> EpsDelta:
    """Validated guarantee: eps >= 0 and delta in [0, 1] (exact inputs)."""
    e = parse_exact(eps, name)
    d = parse_exact(delta, name)
    if e < 0:
        raise InvalidParameter(name, f"{name}: eps={eps!r} must be >= 0 (LT Thm 4.6 needs eps_i >= 0)")
    if not 0 <= d <= 1:
        raise InvalidParameter(name, f"{name}: delta={delta!r} must be in [0, 1]")
    return EpsDelta(e, d)


def parse_mech(text: str, name: str = "mech") -> EpsDelta:
    """``"E,D"`` (exact decimals or fractions) as a guarantee."""
    if not isinstance(text, str) or text.count(",") != 1:
        raise InvalidParameter(name, f"{name}={text!r} must be E,D (e.g. 0.1,1e-8) with E >= 0, D in [0, 1]")
    e, d = (s.strip() for s in text.split(","))
    return make(e, d, name)


def _as_guarantee(m: object) -> EpsDelta:
    if isinstance(m, EpsDelta):
        if m.exp_eps is not None and m.exp_eps < 1:
            raise InvalidParameter("mech", f"exp_eps={m.exp_eps} must be >= 1")
        return m
    if isinstance(m, str):
        return parse_mech(m)
    if isinstance(m, (tuple, list)) and len(m) == 2:
        return make(m[0], m[1])
    raise InvalidParameter("mech", f"mech={m!r} must be a pair (eps, delta) or 'E,D'")


def _types(mechs: Iterable[object], k: int, group: bool = True) -> list[tuple[EpsDelta, int]]:
    """Distinct guarantees with their multiplicities (the sequence repeated k
    times); ``group=False`` keeps one entry per mechanism (the plain recursion)."""
    k = V.integer("k", k, lo=1, hi=MAX_K)
    if not group:
        seq = [_as_guarantee(m) for m in mechs] * k
        if not seq or len(seq) > 5000:
            raise InvalidParameter("k", "the ungrouped recursion takes 1..5000 mechanisms")
        return [(g, 1) for g in seq]
    counts: dict[EpsDelta, int] = {}
    order: list[EpsDelta] = []
    for m in mechs:
        g = _as_guarantee(m)
        if g not in counts:
            order.append(g)
            counts[g] = 0
        counts[g] += k
    if not order:
        raise InvalidParameter("mech", "give at least one mechanism (--mech E,D)")
    if sum(counts.values()) > MAX_K:
        raise InvalidParameter("k", f"k: at most {MAX_K} composed mechanisms in total")
    return [(g, counts[g]) for g in order]


def _support_estimate(types: Sequence[tuple[EpsDelta, int]]) -> int:
    """Upper bound on the number of reachable shifts (product of binomial
    supports, and for rational eps also the lattice span / gcd)."""
    prod = 1
    for g, c in types:
        if g.key() != (0, 1):
            prod *= c + 1
        if prod > 10**12:
            break
    if all(g.exp_eps is None for g, _ in types):
        eps = [g.eps for g, _ in types if g.eps]
        if eps:
            den = math.lcm(*(e.denominator for e in eps))
            nums = [e.numerator * (den // e.denominator) for e in eps]
            unit = math.gcd(*nums)
            span = sum(c * n // unit for (g, c), n in zip([t for t in types if t[0].eps], nums))
            prod = min(prod, span + 1)
        else:
            prod = 1
    return prod


class ShiftDistribution:
    """The memo table of the LT Thm 4.6 recursion: the law of S on the lattice
    of reachable shifts, with R = prod (1 - delta_i), built per precision."""

    def __init__(self, mechs: Iterable[object], k: int = 1, *, group: bool = True) -> None:
        """``group=False``: convolve one mechanism at a time, exactly the LT
        Thm 4.6 recursion step by step (for cross-checks against Cor 4.7)."""
        self.types = _types(mechs, k, group)
        est = _support_estimate(self.types)
        if est > MAX_SUPPORT:
            raise InvalidParameter(
                "k" if len(self.types) == 1 else "grid",
                f"the composition has up to {est} distinct shifts (limit {MAX_SUPPORT}); "
                + ("use k <= " + str(MAX_SUPPORT - 1) + " for one guarantee"
                   if len(self.types) == 1 else
                   "round the eps_i onto a grid (--grid H, compose_eps_grid) for certified bounds"),
            )
        self.any_full = any(g.delta == 1 for g, _ in self.types)
        self._cache: dict[int, tuple] = {}

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

    def _table(self) -> tuple:
        prec = ctx.prec
        if prec in self._cache:
            return self._cache[prec]
        moving = [(g, c) for g, c in self.types if g.key() != (0, 1)]  # eps = 0: S does not move
        # Only the lattice path lists shifts in exact (descending) order; the
        # early stop in delta() relies on that order, so the dict path, whose
        # shifts a + log b are ordered only through float midpoints (which
        # overflow, underflow or tie), sums every term instead.
        ordered = all(g.exp_eps is None for g, _ in moving) and len(moving) > 1
        items = self._lattice_items(moving) if ordered else self._dict_items(moving)
        rmax = arb(0)
        for s, _ in items:  # an arb maximum: float keys would underflow to 0
            rmax = rmax.max(arb(s.rad()))
        entry = (items, rmax if ordered else None, self._L(), self._R())
        self._cache[prec] = entry
        return entry

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
            if len(dist) > MAX_SUPPORT:
                raise InvalidParameter("grid", f"more than {MAX_SUPPORT} reachable shifts; use grid rounding")
        items = [(_shift_ball(a, b), w) for (a, b), w in dist.items()]
        return items

    def _lattice_items(self, moving: list) -> list:
        """Rational eps_i = m_i * g on one integer lattice: S = g (2U - M) with
        U = sum m_i Y_i, whose law is the polynomial prod_i (q_i + p_i x^{m_i})^{c_i}
        (multiplied in arb_poly ball arithmetic). Exponents that are exactly zero
        are unreachable and skipped."""
        eps = [g.eps for g, _ in moving]
        den = math.lcm(*(e.denominator for e in eps))
        nums = [e.numerator * (den // e.denominator) for e in eps]
        unit = math.gcd(*nums)
        step = Fraction(unit, den)
        poly = arb_poly([1])
        M = 0
        for (g, c), n in zip(moving, nums):
            m = n // unit
            coeffs = [arb(0)] * (c * m + 1)
            for y, w in enumerate(self._binomial(g, c)):
                coeffs[y * m] = w
            poly = poly * arb_poly(coeffs)
            M += c * m
        items = []
        for u in range(M, -1, -1):  # descending shift
            w = poly[u]
            if w.is_zero():
                continue
            items.append((ball(step * (2 * u - M)), w.nonnegative_part()))
        return items

    def delta(self, t: arb) -> arb:
        """Ball of d_k(t) for a ball t (any real), at the current precision."""
        items, rmax, L, R = self._table()
        if self.any_full:
            return arb(1)
        acc = arb(0)
        for s, w in items:
            # lattice path (rmax set): exact descending order, so once
            # mid + rmax < t every later true shift is < t and contributes 0
            if rmax is not None and arb(s.mid()) + rmax < t:
                break
            acc += w * (-(t - s).expm1()).nonnegative_part()
        return L + R * acc


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
        x, bits = refine(lambda: _shift_ball(a, b), digits=digits + 1, what="sum of eps_i")
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
        hi = endpoints(_shift_ball(a, b))[1]  # an exact point >= T, where d_k = 1 - R < delta

    def g(x: arb) -> arb:
        return ball(d) - dist.delta(x)

    lo_pt, hi_pt, used = isolate_increasing_root(g, arb(0), hi, digits=digits, what="the composed eps(delta)")
    return Enclosure(lo_pt, hi_pt, digits, used)


def _shift_ball(a: Fraction, b: Fraction) -> arb:
    return ball(a) + (ball(b).log() if b != 1 else arb(0))


@dataclass(frozen=True)
class GridBounds:
    """Certified bounds from rounding every eps_i down / up onto the grid h:
    the true value lies in ``enclosure`` = [lower.lo, upper.hi]; ``gap`` =
    upper.hi - lower.lo is what the rounding costs."""

    lower: Enclosure
    upper: Enclosure
    enclosure: Enclosure
    grid: Fraction

    def gap(self) -> arb:
        return self.enclosure.width()


def round_to_grid(mechs: Iterable[object], grid: Fraction, up: bool) -> list[EpsDelta]:
    out = []
    for m in mechs:
        g = _as_guarantee(m)
        if g.exp_eps is not None:
            raise InvalidParameter("grid", "grid rounding needs rational eps_i")
        n = g.eps / grid
        n = math.ceil(n) if up else math.floor(n)
        out.append(EpsDelta(n * grid, g.delta))
    return out


def compose_eps_grid(
    mechs: Sequence[object], delta: object, grid: object, *, k: int = 1, digits: int = 15
) -> GridBounds:
    """Certified bounds on the composed eps(delta) when the eps_i are many and
    distinct: a (eps_i, delta_i)-DP mechanism is (eps', delta_i)-DP for eps' >= eps_i,
    and the tight composition is monotone in every eps_i (RR(eps') dominates
    RR(eps), LT Thm 4.5), so rounding down gives a lower and rounding up an
    upper bound on the exact value."""
    h = V.positive("grid", grid)
    lower = compose_eps(round_to_grid(mechs, h, False), delta, k=k, digits=digits)
    upper = compose_eps(round_to_grid(mechs, h, True), delta, k=k, digits=digits)
    enc = Enclosure(lower.lo, upper.hi, digits, max(lower.precision_bits, upper.precision_bits))
    return GridBounds(lower, upper, enc, h)


def compose_delta_grid(
    mechs: Sequence[object], eps: object, grid: object, *, k: int = 1, digits: int = 15
) -> GridBounds:
    """As :func:`compose_eps_grid`, for delta(eps)."""
    h = V.positive("grid", grid)
    lower = compose_delta(round_to_grid(mechs, h, False), eps, k=k, digits=digits)
    upper = compose_delta(round_to_grid(mechs, h, True), eps, k=k, digits=digits)
    enc = Enclosure(lower.lo, upper.hi, digits, max(lower.precision_bits, upper.precision_bits))
    return GridBounds(lower, upper, enc, h)
