"""Certificates: writer, builders and independent re-verification."""

from .build import claim_certificate, quantity_certificate, verdict_certificate
from .verify import verify_certificate, verify_file
from .writer import FORMAT, compute_digest, dumps, make_certificate, write

__all__ = [
    "FORMAT",
    "claim_certificate",
    "compute_digest",
    "dumps",
    "make_certificate",
    "quantity_certificate",
    "verify_certificate",
    "verdict_certificate",
    "verify_file",
    "write",
]
