"""Mechanisms: privacy profiles delta(eps) for all real eps (one module each).

Modules register their profile builder under the CLI mechanism name; see
:mod:`dpverify.mechanisms.base`.
"""

from .base import MechanismSpec, Profile, build_profile, profile_delta, profile_names

__all__ = ["MechanismSpec", "Profile", "build_profile", "profile_delta", "profile_names"]
