"""Float planning of the E-epoch balls-in-bins linear grids (hints), one copy for the producer
(:func:`dpverify.sampling.balls_epochs.choose_grids`) and for the re-check's work bound
(:func:`dpverify.recheck.bins._bound_work`).

Floats only, and never a reason to accept: any grid gives valid bounds (the argument is in
:mod:`dpverify.sampling.balls_epochs`). The re-check uses the rule to price a certificate by its
inputs rather than by its hints: a recorded grid much longer than the rule writes for the run's
sigma, T and E is refused (exit 2) before any product, so a forged grid cannot buy more product work
than :data:`GRID_SLACK` times what the inputs imply (:func:`keep_cap`).
"""

from __future__ import annotations

import math
from statistics import NormalDist

__all__ = ["ADD_CUT", "ROUNDING_BUDGET", "REFINED_DEGREE", "GRID_SLACK", "UNITS", "s_max", "y_upper", "cell_exponent",
           "base_degree", "refines", "keep_cap"]

#: largest per-epoch L = e^{-Z} the add direction's linear grid resolves at most (beyond: raised to the
#: window's low end, sound); the remove direction needs the P-law of large L instead
ADD_CUT = 4.0
#: the default grid is refined while E h exceeds this (about the eps the rounding may cost per side) ...
ROUNDING_BUDGET = 0.25
#: ... up to this degree (work: about linear in the degree; 123 s CPU at T = 240, E = 60)
REFINED_DEGREE = 1 << 20
#: most unit cells of a proposed grid (the re-check caps a grid at 2^16 cells)
UNITS = 48_000
#: how far a recorded grid may exceed the rule before the re-check refuses it: 2x the rule's degree and
#: 4x its reach s_max / h (a platform's libm can move a float proposal by an ulp, so g by one step; an
#: older proposal of the same rule family stays inside)
GRID_SLACK = 2


def s_max(sigma: float, T: int, E: int, d: str) -> float:
    """Float proposal of the largest S = T L the linear grid of direction ``d`` covers.
    Remove (P-law): the tilted coordinate, log Y_1 ~ N(1/(2 sigma^2), 1/sigma^2), at its
    upper 1e-10 / E quantile, plus the other T - 1 (mean 1 each) at 8 standard deviations
    plus one of them at its 1e-12 / T quantile. Add (Q-law): the T coordinates alike, at most
    T e^4. Soundness does not depend on it (mass beyond goes to +inf or to the window's end)."""
    m, sd = 0.5 / sigma**2, 1.0 / sigma
    var = math.expm1(min(1.0 / sigma**2, 700.0))

    def q(mean: float, p: float) -> float:  # upper p-quantile of a log-normal
        z = -NormalDist().inv_cdf(p) if p > 1e-300 else 37.0
        return math.exp(min(mean + z * sd, 700.0))

    others = (T - 1) + 8 * math.sqrt(max(T - 1, 0) * var) + (q(-m, 1e-12 / T) if T > 1 else 0.0)
    if d == "remove":
        return min(q(m, 1e-10 / E) + others, 1e15)
    return min(T + 8 * math.sqrt(T * var) + q(-m, 1e-12 / T), T * math.exp(ADD_CUT))


def y_upper(sigma: float) -> float:
    """Float proposal of one coordinate Y = e^{Z/sigma - 1/(2 sigma^2)} at its upper 1e-6 quantile,
    clamped to [e^-600, e^700] (below sigma ~ 0.023 it underflowed to 0, and the cell rule divided
    by it: exit 4 at sigma 0.01, adv35 X1; any value below 2^-1000 gives the finest cells anyway)."""
    return math.exp(max(min(4.75 / sigma - 0.5 / sigma**2, 700.0), -600.0))


def cell_exponent(sigma: float, T: int, c_max: float, degree: int) -> int:
    """The rule's g (cell width h = 2^-g) for a grid covering S up to T c_max with about ``degree``
    cells and at most :data:`UNITS` unit cells, clamped to [-30, 40]."""
    g = min(math.floor(math.log2(degree / (T * c_max))),
            math.floor(math.log2(UNITS / min(y_upper(sigma), T * c_max))))
    return max(-30, min(g, 40))


def base_degree(E: int) -> int:
    """The default degree of the linear grid before refinement: 2^16, 2^17 from E = 3, 2^18 from E = 9."""
    return 1 << (16 if E < 3 else 17 if E < 9 else 18)


def refines(sigma: float, T: int, E: int, dirs: "list[str] | tuple[str, ...]") -> bool:
    """Whether the rule may refine past :func:`base_degree`: its grids at that degree have E h > 1/4
    in some direction, here with GRID_SLACK on h (a platform's libm can move g by one step). Priced
    from the inputs alone: a recorded grid is a hint, and one forged coarse grid must not lift the
    cap of the other direction (adv35 B1: 22 CPU s of products before exit 3, against 0.2 s)."""
    deg = base_degree(E)
    h = max(2.0 ** -cell_exponent(sigma, T, s_max(sigma, T, E, d) / T, deg) for d in dirs)
    return E * h * GRID_SLACK > ROUNDING_BUDGET


def keep_cap(sigma: float, T: int, E: int, d: str, h: float, refined: bool) -> int:
    """The longest ``keep`` the re-check accepts for direction ``d`` on a recorded cell width h
    (``refined``: :func:`refines` for the run's inputs). The rule writes keep = ceil(s_max / h) + 2
    at a degree of at most base_degree(E), or, when it refines, at most REFINED_DEGREE. Here:
    keep <= 2 GRID_SLACK s_max / h + 8 and keep <= GRID_SLACK x (REFINED_DEGREE if refined, else
    base_degree(E)) + 8."""
    degree = REFINED_DEGREE if refined else base_degree(E)
    reach = 2 * GRID_SLACK * s_max(sigma, T, E, d) / h
    return int(min(GRID_SLACK * degree, reach if math.isfinite(reach) else math.inf)) + 8
