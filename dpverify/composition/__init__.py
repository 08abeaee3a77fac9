"""Tight (eps, delta) composition: LT Thm 4.6 recursion on the lattice of
reachable shifts, LT Cor 4.7 closed form, certified eps(delta) (tight.py); the
guarantees it composes and their parsing (guarantee.py); grid bounds for many
distinct eps_i and the choice between lattice and grid (grid.py)."""

from .grid import (
    ComposeResult,
    GridBounds,
    compose_delta_auto,
    compose_delta_grid,
    compose_eps_auto,
    compose_eps_grid,
)
from .guarantee import EpsDelta, parse_mech
from .tight import LatticeTooLarge, ShiftDistribution, compose_delta, compose_eps, cor47_delta_ball

__all__ = [
    "ComposeResult",
    "EpsDelta",
    "GridBounds",
    "LatticeTooLarge",
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
