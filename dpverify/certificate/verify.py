"""Independent re-verification of certificates.

``verify_certificate`` checks the format and the digest, then hands the
certificate to the re-checker registered for its ``claim.quantity``. A
re-checker is a *second implementation* of the mathematics on mpmath, at its
own precision; it never calls the arb code that produced the certificate.
It returns the re-derived value with an error estimate, and this module
checks that the recorded enclosure contains it, that the enclosure is as
narrow as the recorded accuracy promises, and, for claim certificates, that
the recorded verdict follows from the numbers.

Exit codes (CLI): 0 confirmed, 1 rejected (false number, wrong verdict, bad
digest), 2 malformed (not JSON, not a certificate, unknown kind).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

import mpmath
from mpmath import mpf

from ..errors import CertificateRejected, CouldNotReprove, MalformedCertificate
from . import relations
from .writer import FORMAT, compute_digest

__all__ = ["Recheck", "register", "verify_certificate", "verify_file", "RECHECKERS"]


@dataclass(frozen=True)
class Recheck:
    """The re-derived value and a bound on its error, from the second route.

    ``value`` is None for results that are not a single number (for instance
    a verdict re-derived directly); then ``verdict`` carries the re-derived
    verdict, if any.
    """

    value: "mpf | None"
    err: "mpf"
    dps: int
    verdict: "str | None" = None


Rechecker = Callable[[Mapping[str, Any], Mapping[str, Any]], Recheck]
#: quantity name -> re-checker(inputs, result) ; filled by the recheck_* modules
RECHECKERS: dict[str, Rechecker] = {}


def register(quantity: str) -> Callable[[Rechecker], Rechecker]:
    def deco(fn: Rechecker) -> Rechecker:
        RECHECKERS[quantity] = fn
        return fn

    return deco


def _load_recheckers() -> None:
    """Import every ``recheck_*`` module of this package (each registers its
    quantities); a new area adds a module, not a line here."""
    import importlib
    import pkgutil

    from .. import certificate

    for info in pkgutil.iter_modules(certificate.__path__):
        if info.name.startswith("recheck_"):
            importlib.import_module(f"{certificate.__name__}.{info.name}")


def _require(mapping: Any, key: str, where: str) -> Any:
    if not isinstance(mapping, dict) or key not in mapping:
        raise MalformedCertificate(f"missing {where}.{key}")
    return mapping[key]


def parse_bound(text: Any, where: str, dps: int) -> mpf:
    """A recorded decimal endpoint (or "inf"/"-inf") as an mpf at ``dps``."""
    if not isinstance(text, str):
        raise MalformedCertificate(f"{where} must be a decimal string, got {text!r}")
    with mpmath.workdps(dps):
        if text in ("inf", "-inf"):
            return mpmath.inf if text == "inf" else -mpmath.inf
        try:
            return mpf(text)
        except (ValueError, TypeError):
            raise MalformedCertificate(f"{where}={text!r} is not a decimal number") from None


def check_enclosure(enclosure: Any, re: Recheck, digits: "int | None") -> None:
    """Reject unless [lo, hi] contains the re-derived value (within the second
    route's own error) and is as narrow as the recorded accuracy says."""
    lo = parse_bound(_require(enclosure, "lo", "result.enclosure"), "result.enclosure.lo", re.dps)
    hi = parse_bound(_require(enclosure, "hi", "result.enclosure"), "result.enclosure.hi", re.dps)
    with mpmath.workdps(re.dps):
        if lo > hi:
            raise CertificateRejected(f"enclosure has lo > hi ({lo} > {hi})")
        if re.value is None:
            return
        v = re.value
        if v < lo - re.err or v > hi + re.err:
            raise CertificateRejected(
                f"the re-derived value {mpmath.nstr(v, 20)} (+- {mpmath.nstr(re.err, 3)}) "
                f"is outside the recorded enclosure [{enclosure['lo']}, {enclosure['hi']}]"
            )
        if digits is not None and mpmath.isfinite(lo) and mpmath.isfinite(hi):
            scale = min(abs(lo), abs(hi)) if lo * hi > 0 else mpf(1)
            if hi - lo > mpf(10) ** (-digits) * scale * (1 + mpf(10) ** -6):
                raise CertificateRejected(
                    f"the enclosure is wider than the recorded accuracy 1e-{digits}"
                )


def verify_certificate(cert: Any) -> str:
    """Re-verify one certificate (parsed JSON). Returns a one-line summary;
    raises CertificateRejected or MalformedCertificate."""
    _load_recheckers()
    if not isinstance(cert, dict):
        raise MalformedCertificate("not a JSON object")
    if cert.get("format") != FORMAT:
        raise MalformedCertificate(f"format is {cert.get('format')!r}, expected {FORMAT!r}")
    claim = _require(cert, "claim", "certificate")
    inputs = _require(cert, "inputs", "certificate")
    result = _require(cert, "result", "certificate")
    digest = _require(cert, "digest", "certificate")
    quantity = _require(claim, "quantity", "claim")
    if quantity not in RECHECKERS:
        raise MalformedCertificate(f"unknown quantity {quantity!r}")
    if not isinstance(inputs, dict) or not isinstance(result, dict):
        raise MalformedCertificate("inputs and result must be JSON objects")
    if digest != compute_digest(cert):
        raise CertificateRejected("digest does not match the certificate's contents")
    try:
        re = RECHECKERS[quantity](inputs, result)
    except (CertificateRejected, MalformedCertificate):
        raise
    except Exception as exc:  # a crash of the second route confirms nothing: fail closed
        raise CertificateRejected(
            f"the independent re-derivation failed ({type(exc).__name__}: {exc})"
        ) from exc
    digits = inputs.get("digits")
    if digits is not None and not isinstance(digits, int):
        raise MalformedCertificate("inputs.digits must be an integer")
    if "enclosure" in result:
        check_enclosure(result["enclosure"], re, digits)
    if "verdict" in result:
        relations.check_recorded_verdict(claim, result, re)
    what = claim.get("id") or quantity
    shown = "" if re.value is None else f" (re-derived {mpmath.nstr(re.value, 12)})"
    return f"{what}: confirmed{shown}"


def verify_file(path: "str | Path") -> tuple[int, str]:
    """Exit code and message for one file: 0 confirmed, 1 rejected, 2 malformed,
    3 could not re-prove (never an accept)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        return 2, f"{path}: cannot read ({exc.strerror})"
    try:
        cert = json.loads(text)
    except json.JSONDecodeError as exc:
        return 2, f"{path}: not JSON ({exc.msg} at line {exc.lineno})"
    try:
        return 0, f"{path}: {verify_certificate(cert)}"
    except CouldNotReprove as exc:
        return 3, f"{path}: NOT CONFIRMED (exit 3): {exc}"
    except CertificateRejected as exc:
        return 1, f"{path}: REJECTED: {exc}"
    except MalformedCertificate as exc:
        return 2, f"{path}: malformed certificate: {exc}"
