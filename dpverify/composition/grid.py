"""Grid rounding for compositions of many distinct (eps_i, delta_i): certified
lower and upper bounds from rounding every eps_i down / up onto multiples of a
grid h (monotone in every eps_i, LT Thm 4.5), the automatic choice of h, and the
choice between the exact lattice and the grid (:func:`compose_eps_auto`)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Iterable, Optional, Sequence

from flint import arb

from .. import _validate as V
from ..errors import InvalidParameter
from ..limits import AUTO_GRID_LATTICE, MAX_LATTICE_SUPPORT
from ..verdict import Enclosure
from .guarantee import EpsDelta, as_guarantee, guarantee_types, mechanism_list
from .tight import LatticeTooLarge, ShiftDistribution, compose_delta, compose_eps

__all__ = [
    "ComposeResult",
    "GridBounds",
    "auto_grid",
    "compose_delta_auto",
    "compose_delta_grid",
    "compose_eps_auto",
    "compose_eps_grid",
    "round_to_grid",
]


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
    for m in mechanism_list(mechs):
        g = as_guarantee(m)
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
    mechs = mechanism_list(mechs)  # read once: the two roundings each read it
    lower = compose_eps(round_to_grid(mechs, h, False), delta, k=k, digits=digits)
    upper = compose_eps(round_to_grid(mechs, h, True), delta, k=k, digits=digits)
    enc = Enclosure(lower.lo, upper.hi, digits, max(lower.precision_bits, upper.precision_bits))
    return GridBounds(lower, upper, enc, h)


def compose_delta_grid(
    mechs: Sequence[object], eps: object, grid: object, *, k: int = 1, digits: int = 15
) -> GridBounds:
    """As :func:`compose_eps_grid`, for delta(eps)."""
    h = V.positive("grid", grid)
    mechs = mechanism_list(mechs)  # read once: the two roundings each read it
    lower = compose_delta(round_to_grid(mechs, h, False), eps, k=k, digits=digits)
    upper = compose_delta(round_to_grid(mechs, h, True), eps, k=k, digits=digits)
    enc = Enclosure(lower.lo, upper.hi, digits, max(lower.precision_bits, upper.precision_bits))
    return GridBounds(lower, upper, enc, h)


def auto_grid(mechs: Iterable[object], k: int = 1, budget: int = AUTO_GRID_LATTICE) -> Fraction:
    """The finest grid h = E / n (E = sum of the distinct eps_i times their
    counts, n an integer) on which the rounded-up composition has a lattice of
    at most ``budget`` points: sum_i c_i ceil(eps_i / h) + 1 <= budget. Rounding
    up is the larger of the two lattices (ceil >= floor), so the rounded-down
    one fits as well. Raises InvalidParameter when even a grid of one step per
    mechanism is too large (more than ``budget`` mechanisms with eps_i > 0)."""
    every = guarantee_types(mechs, k)
    types = [(g, c) for g, c in every if g.exp_eps is None and g.eps > 0]
    if any(g.exp_eps is not None for g, _ in every):
        raise InvalidParameter("grid", "grid rounding needs rational eps_i")
    count = sum(c for _, c in types)
    if count + 1 > budget:
        raise InvalidParameter(
            "k", f"{count} mechanisms with eps_i > 0: even the coarsest grid needs more than "
            f"{budget} lattice points; compose fewer mechanisms or group equal guarantees")
    total = sum(c * g.eps for g, c in types)

    def size(h: Fraction) -> int:
        return sum(c * math.ceil(g.eps / h) for g, c in types) + 1

    # sum c_i ceil(eps_i/h) <= total/h + count, so n = budget - 1 - count steps of
    # total/n always fit; then refine n upward while it still fits (binary search)
    lo_n = max(1, budget - 1 - count)
    hi_n = 2 * budget
    if size(total / hi_n) <= budget:
        lo_n = hi_n
    while hi_n - lo_n > 1:
        mid = (lo_n + hi_n) // 2
        if size(total / mid) <= budget:
            lo_n = mid
        else:
            hi_n = mid
    return _round_up_2_digits(total / lo_n)


def _round_up_2_digits(h: Fraction) -> Fraction:
    """h rounded up to two significant decimal digits (a readable grid; a
    coarser grid has a lattice no larger, since ceil(eps/h) is non-increasing in h)."""
    e = math.floor(math.log10(h.numerator) - math.log10(h.denominator)) - 1
    unit = Fraction(10) ** e
    out = math.ceil(h / unit) * unit
    while out / unit >= 100:  # log10 rounding at a power of ten
        unit *= 10
        out = math.ceil(h / unit) * unit
    return out


@dataclass(frozen=True)
class ComposeResult:
    """An exact composition (``grid`` None) or, when the exact lattice would
    exceed its budget, certified grid bounds: ``enclosure`` = [lower.lo, upper.hi]
    with ``lower``/``upper`` the compositions with every eps_i rounded down/up
    onto multiples of ``grid``, and ``lattice_estimate`` the size the exact
    table would have had."""

    enclosure: Enclosure
    grid: Optional[Fraction] = None
    lower: Optional[Enclosure] = None
    upper: Optional[Enclosure] = None
    lattice_estimate: Optional[int] = None

    @property
    def exact(self) -> bool:
        return self.grid is None


def _auto(exact_fn, grid_fn, mechs: Sequence[object], target: object, k: int, digits: int,
          exact: bool, budget: int) -> ComposeResult:
    mechs = mechanism_list(mechs)
    try:
        dist = ShiftDistribution(mechs, k, budget=budget)
    except LatticeTooLarge as exc:
        if exact or exc.single:
            raise
        h = auto_grid(mechs, k)
        gb = grid_fn(mechs, target, h, k=k, digits=digits)
        return ComposeResult(gb.enclosure, h, gb.lower, gb.upper, exc.estimate)
    return ComposeResult(exact_fn(dist, target, digits=digits))


def compose_eps_auto(mechs: Sequence[object], delta: object, *, k: int = 1, digits: int = 15,
                     exact: bool = False, budget: int = MAX_LATTICE_SUPPORT) -> ComposeResult:
    """:func:`compose_eps` when the exact lattice fits ``budget`` points (its
    size is estimated before anything is built, :func:`_plan`); otherwise,
    unless ``exact``, certified grid bounds on the grid :func:`auto_grid`
    (:func:`compose_eps_grid`: monotone in every eps_i, LT Thm 4.5). With
    ``exact=True`` an oversized lattice raises :class:`LatticeTooLarge` (exit 2)."""
    return _auto(compose_eps, compose_eps_grid, mechs, delta, k, digits, exact, budget)


def compose_delta_auto(mechs: Sequence[object], eps: object, *, k: int = 1, digits: int = 15,
                       exact: bool = False, budget: int = MAX_LATTICE_SUPPORT) -> ComposeResult:
    """As :func:`compose_eps_auto`, for the composed delta(eps)."""
    return _auto(compose_delta, compose_delta_grid, mechs, eps, k, digits, exact, budget)
