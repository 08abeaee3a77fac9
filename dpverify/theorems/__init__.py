"""Paper statements as checkable predicates returning Verdicts."""

from .registry import Claim, check, claims, decide

__all__ = ["Claim", "check", "claims", "decide"]
