"""Certificate writer: canonical JSON and its sha256 digest (ARCHITECTURE.md,
"Certificates").

The digest is sha256 of ``json.dumps(cert_without_digest, sort_keys=True,
separators=(",", ":"), ensure_ascii=False).encode("utf-8")``. It only detects
accidents; :mod:`dpverify.certificate.verify` re-derives the numbers.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any, Mapping, Optional

from .._version import __version__

__all__ = ["FORMAT", "canonical_bytes", "compute_digest", "make_certificate", "dumps", "write"]

FORMAT = "dpverify-certificate/1"


def _backend() -> str:
    # read on use: verify imports this module and must not load python-flint
    from ..ball import BACKEND

    return BACKEND


def canonical_bytes(cert: Mapping[str, Any]) -> bytes:
    """The bytes the digest is taken of: every field except ``digest``."""
    body = {k: v for k, v in cert.items() if k != "digest"}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode(
        "utf-8"
    )


def compute_digest(cert: Mapping[str, Any]) -> str:
    return hashlib.sha256(canonical_bytes(cert)).hexdigest()


def make_certificate(
    *,
    claim: Mapping[str, Any],
    inputs: Mapping[str, Any],
    result: Mapping[str, Any],
    precision_bits: int,
    algorithm: str,
    extra_method: Optional[Mapping[str, Any]] = None,
) -> dict[str, Any]:
    """Assemble a certificate and seal it with its digest.

    ``claim`` needs at least ``quantity``, ``statement`` and ``source``;
    ``inputs`` holds the exact input strings as the user gave them.
    """
    for key in ("quantity", "statement", "source"):
        if key not in claim:
            raise ValueError(f"certificate claim lacks {key!r}")
    method: dict[str, Any] = {
        "backend": _backend(),
        "precision_bits": int(precision_bits),
        "algorithm": algorithm,
    }
    if extra_method:
        method.update(extra_method)
    cert: dict[str, Any] = {
        "format": FORMAT,
        "dpverify": __version__,
        "claim": dict(claim),
        "inputs": dict(inputs),
        "result": dict(result),
        "method": method,
    }
    cert["digest"] = compute_digest(cert)
    return cert


def dumps(cert: Mapping[str, Any]) -> str:
    """Human-friendly JSON text (key order kept; the digest does not depend on it)."""
    return json.dumps(cert, indent=2, ensure_ascii=False) + "\n"


def write(cert: Mapping[str, Any], path: "os.PathLike[str] | str") -> Path:
    p = Path(path)
    if p.parent and not p.parent.exists():
        p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(dumps(cert), encoding="utf-8")
    return p
