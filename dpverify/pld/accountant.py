"""The PLD accountant's public names, kept where callers import them from:
certified queries live in :mod:`.queries`, float planning and the static
cost model in :mod:`.plan`, the refinement loop in :mod:`.refine`, and the
choice between the exact and Fourier kernels in :mod:`.compose`."""

from __future__ import annotations

from .plan import plan_query
from .queries import ComposedBounds
from .refine import PldResult, Step, compose_direction, refine_query

__all__ = ["ComposedBounds", "PldResult", "Step", "compose_direction", "plan_query", "refine_query"]
