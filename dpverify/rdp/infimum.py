"""The infimum over all real orders alpha > 1 of an RDP -> (eps, delta)
conversion of a Renyi curve, certified.

Optimisation over orders (what accountants do on a float grid): the reported
quantity is inf_{alpha > 1} eps(alpha). Its upper end is the certified
conversion at one exact order alpha*; its lower end eps_t is proved by
covering (1, inf) with cells and showing eps(alpha) >= eps_t on each cell,
using only f(alpha) = (alpha - 1) D_alpha at exact points and

* convexity of f: on [a, b] with x0 < a, f(alpha) >= f(a) + s (alpha - a), s the
  chord slope over [x0, a] (a linear minorant, error O(h^2));
* monotonicity of D_alpha: D_alpha >= KL >= curve.kl_lower() near alpha = 1 and
  D_alpha >= D_A for alpha >= A;
* classic: eps >= eps_t iff f + L - eps_t(alpha - 1) >= 0: linear in alpha after the
  minorant, so checked at the two cell ends;
* balle: (alpha-1) eps = f + L - log alpha + (alpha-1) log(1 - 1/alpha); the last two
  terms form a convex function with derivative log(1 - 1/alpha), replaced by its
  tangent at the cell centre: again linear, checked at the ends;
* optimal: eps_opt(alpha, gamma) >= eps_t as soon as G_alpha(eps_t) < gamma, and
  G_alpha(eps_t) <= eps_t + log S_alpha(p) / (alpha - 1) for any fixed p; the
  function (alpha - 1) eps_t + log S_alpha(p) is convex in alpha (log-sum-exp of
  affine functions), so it lies below the linear minorant of f on the cell if
  it does at both ends. eps_opt is nonincreasing in alpha at fixed gamma (the
  RDP classes shrink as alpha grows) and nondecreasing in gamma, which handles
  the end cells.

Every conversion result is clipped below at 0 (eps is an inf over eps >= 0).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from flint import arb

from .. import _validate as V
from ..ball import ball, bits_for_digits, endpoints, point, working_precision
from ..errors import PrecisionExhausted, Undecided
from ..limits import DEFAULT_TIME_BUDGET_SECONDS, MAX_RDP_CELLS
from ..progress import Tick, budget_tick, running_clock
from ..verdict import Enclosure
from .conversions import (
    balle_eps_ball,
    check_conversion,
    check_optimal_delta,
    classic_eps_ball,
    delta_bits,
    gamma_upper_at,
    log_s,
    optimal_eps,
)
from .divergences import RdpCurve
from .float_search import float_pstar, search_order

__all__ = ["RdpEpsilon", "rdp_epsilon"]


@dataclass(frozen=True)
class RdpEpsilon:
    """Certified inf over all real alpha > 1 of a conversion of an RDP curve.

    ``enclosure`` contains inf_{alpha > 1} eps_conv(alpha, D_alpha); ``alpha`` is
    the exact order at which the upper end is attained; ``cells`` is the number
    of order cells whose lower bounds were proved.
    """

    enclosure: Enclosure
    alpha: Fraction
    conversion: str
    delta: Fraction
    cells: int


def _eps_at(curve: RdpCurve, conversion: str, alpha: Fraction, delta: Fraction, digits: int) -> arb:
    """Certified upper-end ball of the conversion at one exact order."""
    a = ball(alpha)
    gamma = curve.cgf(a) / (a - 1)
    if conversion == "classic":
        return classic_eps_ball(a, gamma, ball(delta))
    if conversion == "balle":
        return balle_eps_ball(a, gamma, ball(delta))
    enc = optimal_eps(alpha, gamma, delta, digits + 2)
    return enc.hi


class _Prover:
    """Proves eps(alpha) >= eps_t on cells of (1, inf) for one curve/conversion."""

    def __init__(self, curve: RdpCurve, conversion: str, delta: Fraction, eps_t: arb):
        self.curve = curve
        self.conversion = conversion
        self.delta = ball(delta)
        self.deltaf = float(delta)
        self.L = -self.delta.log()
        self.eps_t = eps_t
        self.kappa = curve.kl_lower()
        self._f: dict[tuple, arb] = {}

    def f(self, x: arb) -> arb:
        # the key holds the radius too: a value cached for an exact point must
        # not be returned for an inexact ball with the same midpoint
        r = x.rad()
        key = (repr(x.mid().man_exp()), repr(r.man_exp()) if not r.is_zero() else "0")
        v = self._f.get(key)
        if v is None:
            v = self.curve.cgf(x)
            self._f[key] = v
        return v

    # -- end cells
    def near_one(self, a0: arb) -> bool:
        t0 = a0 - 1
        k, e = self.kappa, self.eps_t
        if self.conversion == "classic":
            return bool(k + self.L / t0 > e)
        if self.conversion == "balle":
            if not t0 < self.L:
                return False
            return bool(k + t0.log() + self.L / t0 - t0 - 1 > e)
        # optimal: eps_opt(alpha, gamma(alpha)) >= eps_opt(a0, kappa) >= eps_t iff G_a0(eps_t) < kappa
        if not k > 0:
            return False
        p = self._p(a0, e)
        return bool(gamma_upper_at(a0, e, self.delta, p) < k)

    def tail(self, A: arb) -> bool:
        gA = self.f(A) / (A - 1)
        e = self.eps_t
        if self.conversion == "classic":
            return bool(gA > e)
        if self.conversion == "balle":
            return bool(gA + (-1 / A).log1p() - A.log() / (A - 1) > e)
        return bool(gA + (1 - self.delta).log() > e)

    def _p(self, alpha: arb, eps: arb) -> arb:
        try:
            pf = float_pstar(float(alpha.mid()), float(eps.mid()), self.deltaf)
        except (OverflowError, ValueError, ZeroDivisionError):
            pf = min(1.0, 2 * self.deltaf)
        p = point(arb(pf))
        if not (p > self.delta):
            p = point(self.delta * (1 + arb(2) ** -40))
        if p > 1:
            p = arb(1)
        return p

    # -- interior cells [a, b], with x0 < a the left chord point (x0 = 1 allowed: f(1) = 0)
    def cell(self, x0: arb, a: arb, b: arb) -> bool:
        fa = self.f(a)
        f0 = arb(0) if x0 == 1 else self.f(x0)
        s = (fa - f0) / (a - x0)

        def line(x: arb) -> arb:
            return fa + s * (x - a)

        e = self.eps_t
        if self.conversion == "classic":
            return all(bool(line(x) + self.L - e * (x - 1) > 0) for x in (a, b))
        if self.conversion == "balle":
            m = point((a + b) / 2)
            cm = -m.log() + (m - 1) * (-1 / m).log1p()
            dm = (-1 / m).log1p()
            return all(
                bool(line(x) + self.L + cm + dm * (x - m) - e * (x - 1) > 0) for x in (a, b)
            )
        m = point((a + b) / 2)
        p = self._p(m, e)
        for x in (a, b):
            lhs = (x - 1) * e + log_s(x, e, self.delta, p)
            if not bool(lhs < line(x)):
                return False
        return True


def rdp_epsilon(
    curve: RdpCurve,
    delta: object,
    conversion: str = "classic",
    digits: int = 10,
    *,
    max_cells: int = 20000,
    time_budget: float = DEFAULT_TIME_BUDGET_SECONDS,
) -> RdpEpsilon:
    """Enclosure of inf_{alpha > 1} eps_conv(alpha, D_alpha(curve)) over ALL real
    orders (not a grid), with relative width <= 10^-digits.

    The upper end is the certified conversion at one exact order alpha*; the
    lower end is proved on a cover of (1, inf) by cells (module docstring).
    Raises PrecisionExhausted when ``max_cells`` cells do not suffice, or when ``time_budget``
    seconds pass (checked between conversions: one order's certified divergence of a subsampled
    Gaussian at a small sigma is a quadrature of up to 20,000 pieces, and sigma 0.001 ran past
    two minutes with no budget). The clock only stops a run; it chooses nothing.
    """
    conversion = check_conversion(conversion)
    d = V.open_unit("delta", delta)
    check_optimal_delta(conversion, d)
    digits = V.digits(digits)
    max_cells = V.integer("max_cells", max_cells, lo=1, hi=MAX_RDP_CELLS)
    tick = budget_tick(V.seconds("time_budget", time_budget), "the Renyi epsilon")
    with running_clock(tick):  # also inside each certified quadrature of the curve
        return _rdp_epsilon(curve, conversion, d, digits, max_cells, tick)


def _rdp_epsilon(curve: RdpCurve, conversion: str, d: Fraction, digits: int, max_cells: int,
                 tick: Tick) -> RdpEpsilon:
    t_star = search_order(curve, conversion, d, tick)
    alpha_star = 1 + Fraction(t_star).limit_denominator(1 << 40) if t_star < 2**40 else Fraction(int(t_star)) + 1
    if alpha_star <= 1:
        alpha_star = 1 + Fraction(1, 1 << 40)
    bits = bits_for_digits(digits) + 30 + (delta_bits(d) if conversion == "optimal" else 0)
    for attempt in range(4):
        with working_precision(bits):
            U = _eps_at(curve, conversion, alpha_star, d, digits)
            _, U_hi = endpoints(U)
            if not U_hi.is_finite():
                bits *= 2
                continue
            if U_hi <= 0:
                return RdpEpsilon(Enclosure(arb(0), arb(0), digits, bits), alpha_star, conversion, d, 0)
            tau = U_hi * arb(10) ** (-digits) * arb(0.45)
            eps_t = point(U_hi - tau)
            prover = _Prover(curve, conversion, d, eps_t)
            ok, cells, better = _prove(prover, max_cells, tick)
            if ok:
                return RdpEpsilon(Enclosure(eps_t, U_hi, digits, bits), alpha_star, conversion, d, cells)
            if better is not None:
                alpha_star = better
                continue
        bits *= 2
    raise PrecisionExhausted(
        f"could not certify inf over alpha of the {conversion} conversion to 1e-{digits} "
        f"within max_cells={max_cells} cells"
    )


def _prove(prover: _Prover, max_cells: int, tick: Tick = None):
    """Cover (1, inf) by cells and prove each; returns (ok, cells, better_alpha)."""
    # near-one cell (1, 1 + 2^-k]
    k = 8
    while not prover.near_one(arb(1) + arb(2) ** (-k)):
        k *= 2
        if k > 4096:
            return False, 0, None
    # tail [1 + 2^K, inf)
    K = 8
    while not prover.tail(arb(1) + arb(2) ** K):
        K *= 2
        if K > 4096:
            return False, 0, None
    # geometric cells in t = alpha - 1 between 2^-k and 2^K, ratio 2
    stack = []
    e = -k
    while e < K:
        a = arb(1) + arb(2) ** e
        b = arb(1) + arb(2) ** (e + 1)
        stack.append((a, b))
        e += 1
    done = 0
    while stack:
        a, b = stack.pop()
        done += 1
        if tick is not None:
            tick()
        if done > max_cells:
            # the hardest cell: maybe alpha* was not the optimum there
            m = (a + b) / 2
            return False, done, None
        h = b - a
        x0 = a - h
        if not x0 > 1:
            x0 = arb(1)
        try:
            ok = prover.cell(x0, a, b)
        except Undecided:
            ok = False
        if not ok:
            m = point((a + b) / 2)
            if not (m > a and m < b):
                return False, done, None
            stack.append((a, m))
            stack.append((m, b))
    return True, done, None
