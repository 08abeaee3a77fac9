"""The (eps, delta) world: the exact implication order (GDPT Thm 3.1) and the
exhaustive check of GDPT's 4-output mechanism."""

from .implication import implies, worst_case_delta
from .rr64 import rr64_check

__all__ = ["implies", "rr64_check", "worst_case_delta"]
