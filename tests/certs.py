"""With DPVERIFY_CERT_DIR set, property tests write a certificate for every
statement they checked (`dpverify verify $DPVERIFY_CERT_DIR` re-checks them)."""

from __future__ import annotations

import os
from pathlib import Path

from dpverify.certificate import write


def record(cert: dict) -> None:
    target = os.environ.get("DPVERIFY_CERT_DIR")
    if not target:
        return
    name = cert["claim"].get("id") or cert["claim"]["quantity"]
    write(cert, Path(target) / f"{name}-{cert['digest'][:16]}.json")
