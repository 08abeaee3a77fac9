"""Mechanisms: privacy profiles delta(eps) for all real eps (one module each).

Modules register their profile builder under the CLI mechanism name
(:mod:`dpverify.mechanisms.base`); :mod:`dpverify.mechanisms.registry` lists them.
"""

from .base import MechanismSpec, Profile, profile_delta
from .registry import build_profile, profile_names

__all__ = ["MechanismSpec", "Profile", "build_profile", "profile_delta", "profile_names"]
