"""Tight (eps, delta) composition: LT Thm 4.6 recursion on the lattice of
reachable shifts, LT Cor 4.7 closed form, certified eps(delta), grid bounds."""

from .tight import (
    ComposeResult,
    EpsDelta,
    LatticeTooLarge,
    GridBounds,
    ShiftDistribution,
    compose_delta,
    compose_delta_auto,
    compose_delta_grid,
    compose_eps,
    compose_eps_auto,
    compose_eps_grid,
    cor47_delta_ball,
    parse_mech,
)

__all__ = [
    "ComposeResult",
    "EpsDelta",
    "LatticeTooLarge",
    "GridBounds",
    "ShiftDistribution",
    "compose_delta",
    "compose_delta_auto",
    "compose_delta_grid",
    "compose_eps",
    "compose_eps_auto",
    "compose_eps_grid",
    "cor47_delta_ball",
    "parse_mech",
]
