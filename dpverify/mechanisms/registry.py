"""The named mechanisms: every module that registers a profile builder, imported by name.

The list is written out, not discovered from the package at run time: a new mechanism
module is added here, and nothing below imports its own package.
"""

from __future__ import annotations

from . import approx_dp, examples, expr, gaussian, laplace, randomized_response, subsampled  # noqa: F401 (registration)
from .base import _BUILDERS, MechanismSpec, Profile, call_builder
from ..errors import InvalidParameter

__all__ = ["profile_names", "build_profile"]


def profile_names() -> list[str]:
    """The CLI names of every registered mechanism, sorted."""
    return sorted(_BUILDERS)


def build_profile(spec: MechanismSpec) -> Profile:
    """The profile of a named mechanism; InvalidParameter for unknown names
    and for options out of range (named by the builder)."""
    if spec.name not in _BUILDERS:
        raise InvalidParameter(
            "mechanism",
            f"mechanism={spec.name!r} has no privacy profile here; known: {', '.join(sorted(_BUILDERS))}",
        )
    return call_builder(_BUILDERS[spec.name], spec)
