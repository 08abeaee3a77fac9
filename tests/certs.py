"""Certificate helpers shared by the tests.

With DPVERIFY_CERT_DIR set, property tests write a certificate for every
statement they checked (`dpverify verify $DPVERIFY_CERT_DIR` re-checks them).
The forgery tests share one mapping from the re-check's answer to verify's exit
code (`outcome`) and one way to re-seal a forged certificate (`reseal`), so a
change to the exception hierarchy is met in one place.
"""

from __future__ import annotations

import os
from pathlib import Path

from dpverify.certificate import write
from dpverify.certificate.format import compute_digest
from dpverify.errors import CertificateRejected, CouldNotReprove, MalformedCertificate
from dpverify.recheck.verify import verify_certificate


def record(cert: dict) -> None:
    target = os.environ.get("DPVERIFY_CERT_DIR")
    if not target:
        return
    name = cert["claim"].get("id") or cert["claim"]["quantity"]
    write(cert, Path(target) / f"{name}-{cert['digest'][:16]}.json")


def reword(cert: dict) -> dict:
    """A consistent forger also rewrites the words that follow from the inputs (statement,
    source, the sampled kinds' theorem list: dpverify/certificate/prose.py), so that what
    refuses the forgery is the second route, not the words."""
    from dpverify.certificate import prose

    claim, inputs, result = cert["claim"], cert["inputs"], cert["result"]
    kind = claim["quantity"]
    if "id" not in claim:
        claim["statement"] = prose.statement(kind, inputs, result)
        claim["source"] = prose.source(kind, inputs)
    if kind in prose.THEOREM_KINDS and "theorems" in result:
        result["theorems"] = prose.theorems(kind, inputs)[0]
    return cert


def reseal(cert: dict) -> dict:
    """A forger recomputes the digest, so only the re-derivation can catch the forgery."""
    cert["digest"] = compute_digest(cert)
    return cert


def outcome(cert: dict, budget: float = 120) -> int:
    """The exit code `dpverify verify` gives `cert`: 0 accepted, 1 refused, 2 malformed,
    3 not re-proved within `budget` seconds (a refusal all the same, never an accept)."""
    try:
        verify_certificate(cert, budget_seconds=budget)
        return 0
    except CouldNotReprove:  # a CertificateRejected subclass: first
        return 3
    except CertificateRejected:
        return 1
    except MalformedCertificate:
        return 2
