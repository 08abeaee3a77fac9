"""Paper statements as checkable predicates returning Verdicts; the claims
are data (dpverify/theorems/claims/*.jsonl), computed through the quantity registry."""

from .quantities import QUANTITIES, Quantity, compute
from .registry import Claim, check, claims, decide, load_claims

__all__ = ["Claim", "QUANTITIES", "Quantity", "check", "claims", "compute", "decide", "load_claims"]
