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

__all__ = ["FORMAT", "FORMAT_1", "COUNT_KEYS", "canonical_bytes", "compute_digest", "make_certificate",
           "dumps", "write"]

#: the format every writer emits (schema: ``schema-2.json``)
FORMAT = "dpverify-certificate/2"
#: the format of dpverify 0.1.0 (schema: ``schema.json``); still verified
FORMAT_1 = "dpverify-certificate/1"
#: inputs that are counts: written as JSON integers (every other number is an
#: exact decimal string)
COUNT_KEYS = frozenset({"steps", "count", "k", "compositions", "digits", "accuracy_digits", "A", "B", "row_count",
                        "batch_size", "dataset_size"})


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
    software: Optional[list] = None,
) -> dict[str, Any]:
    """Assemble a format-2 certificate and seal it with its digest.

    ``claim`` needs at least ``quantity``, ``statement`` and ``source``;
    ``inputs`` holds the exact input strings as the user gave them (counts as
    integers: :data:`COUNT_KEYS`). ``software`` lists every other program that
    produced a number in the certificate: ``{"name", "version", "settings"}``.
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
    if software:
        method["software"] = [dict(s) for s in software]
    cert: dict[str, Any] = {
        "format": FORMAT,
        "dpverify": __version__,
        "claim": dict(claim),
        "inputs": _typed_inputs(inputs),
        # an absent detail is left out, not written as null (the schema types every field)
        "result": {k: v for k, v in result.items() if v is not None},
        "method": method,
    }
    cert["digest"] = compute_digest(cert)
    return cert


def _typed_inputs(inputs: Mapping[str, Any]) -> dict[str, Any]:
    """Inputs typed one way: counts as integers, every other number as an
    exact decimal string (a bool stays a bool, lists and objects are kept)."""
    out: dict[str, Any] = {}
    for key, v in inputs.items():
        if key in COUNT_KEYS and isinstance(v, str) and v.strip().isdigit():
            v = int(v)
        elif key not in COUNT_KEYS and isinstance(v, int) and not isinstance(v, bool):
            v = str(v)
        out[key] = v
    return out


def dumps(cert: Mapping[str, Any]) -> str:
    """Human-friendly JSON text (key order kept; the digest does not depend on it)."""
    return json.dumps(cert, indent=2, ensure_ascii=False) + "\n"


def write(cert: Mapping[str, Any], path: "os.PathLike[str] | str") -> Path:
    p = Path(path)
    if p.parent and not p.parent.exists():
        p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(dumps(cert), encoding="utf-8")
    return p
