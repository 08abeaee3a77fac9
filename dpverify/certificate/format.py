"""The certificate format, shared by the writer and the independent verifier:
format names, typed count keys, the canonical bytes and their digest, and the
shipped JSON Schemas with one readable validation error.

This module imports only the standard library and jsonschema, so the re-check
package (:mod:`dpverify.recheck`) may use it without touching the arb side.

The digest is sha256 of ``json.dumps(cert_without_digest, sort_keys=True,
separators=(",", ":"), ensure_ascii=False).encode("utf-8")``. It only detects
accidents: anyone can recompute it, so ``verify`` re-derives every number.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from functools import lru_cache
from importlib import resources
from typing import Any, Mapping

from ..errors import MalformedCertificate

__all__ = ["FORMAT", "FORMAT_1", "SCHEMAS", "COUNT_KEYS", "canonical_bytes", "compute_digest",
           "load_schema", "check_schema", "schema_errors", "TF_STEPS_RULE"]

#: the format every writer emits (schema: ``schema-2.json``)
FORMAT = "dpverify-certificate/2"
#: the format of dpverify 0.1.0 (schema: ``schema.json``); still verified
FORMAT_1 = "dpverify-certificate/1"
#: format name -> the schema file shipped beside this module
SCHEMAS = {FORMAT_1: "schema.json", FORMAT: "schema-2.json"}
#: inputs that are counts: written as JSON integers (every other number is an
#: exact decimal string)
COUNT_KEYS = frozenset({"steps", "count", "k", "compositions", "digits", "accuracy_digits", "A", "B", "row_count",
                        "batch_size", "dataset_size"})

#: ``inputs.steps_rule`` of a schedule given as epochs, dataset size and batch
#: size (TF Privacy's ``compute_dp_sgd_privacy`` convention); the verifier
#: re-derives ``steps`` and ``sampling_rate`` from it and refuses a mismatch
TF_STEPS_RULE = "steps = ceil(epochs * dataset_size / batch_size), q = batch_size / dataset_size"


def canonical_bytes(cert: Mapping[str, Any]) -> bytes:
    """The bytes the digest is taken of: every field except ``digest``."""
    body = {k: v for k, v in cert.items() if k != "digest"}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode(
        "utf-8"
    )


def compute_digest(cert: Mapping[str, Any]) -> str:
    return hashlib.sha256(canonical_bytes(cert)).hexdigest()


@lru_cache(maxsize=None)
def load_schema(fmt: str) -> dict:
    """The shipped JSON Schema of certificate format ``fmt``."""
    name = SCHEMAS[fmt]
    text = resources.files(__package__).joinpath(name).read_text(encoding="utf-8")
    return json.loads(text)


def _path(parts: Any) -> str:
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out or "(top level)"


def _schema_error(err: Any) -> str:
    where = _path(err.absolute_path)
    if err.validator == "additionalProperties":
        allowed = sorted(err.schema.get("properties", {}))
        extra = sorted(set(err.instance) - set(allowed)) if isinstance(err.instance, dict) else []
        key = extra[0] if extra else "?"
        near = difflib.get_close_matches(key, allowed, n=1)
        hint = f"; did you mean {near[0]}?" if near else ""
        base = f"{where}.{key}" if where != "(top level)" else key
        return f"{base}: unknown key{hint} (allowed: {', '.join(allowed)})"
    if err.validator == "required":
        return f"{where}: {err.message}"
    if err.validator in ("enum", "const"):
        allowed = err.validator_value if err.validator == "enum" else [err.validator_value]
        return f"{where}: {str(err.instance)[:60]!r} is not allowed (allowed: {', '.join(map(str, allowed))})"
    return f"{where}: {err.message[:200]}"


def schema_errors(cert: Any) -> list[str]:
    """Every schema violation of ``cert`` as a readable line (empty: valid)."""
    import jsonschema

    if not isinstance(cert, dict):
        return ["not a JSON object"]
    fmt = cert.get("format")
    if fmt not in SCHEMAS:
        return [f"format: {str(fmt)[:60]!r} is not allowed (allowed: {', '.join(SCHEMAS)})"]
    validator = jsonschema.Draft202012Validator(load_schema(fmt))
    errors = sorted(validator.iter_errors(cert), key=lambda e: (len(e.absolute_path), str(e.absolute_path)))
    return [_schema_error(e) for e in errors]


def check_schema(cert: Any) -> str:
    """Validate against the schema of the certificate's format; returns the format.

    Raises :class:`~dpverify.errors.MalformedCertificate` naming the first
    violation (its JSON path and the allowed keys or values)."""
    errors = schema_errors(cert)
    if errors:
        raise MalformedCertificate(errors[0])
    return cert["format"]
