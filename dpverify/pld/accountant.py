"""The PLD accountant's public names, kept where callers import them from:
certified queries live in :mod:`.queries`, float planning and the static
cost model in :mod:`.plan`, the refinement loop in :mod:`.refine`, and the
choice between the exact and Fourier kernels in :mod:`.compose`."""

from __future__ import annotations

from .compose import compose
from .plan import Plan, estimate_length, estimate_units, first_grid, fourier_usable, plan_query, planned_grid
from .queries import ComposedBounds, to_fraction
from .refine import NARROW_FACTOR, PldResult, Step, compose_direction, refine_query, total_muls

__all__ = [
    "NARROW_FACTOR",
    "ComposedBounds",
    "Plan",
    "PldResult",
    "Step",
    "compose",
    "compose_direction",
    "estimate_length",
    "estimate_units",
    "first_grid",
    "fourier_usable",
    "plan_query",
    "planned_grid",
    "refine_query",
    "to_fraction",
    "total_muls",
]
