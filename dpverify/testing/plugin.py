"""The pytest plugin ``dpverify`` (entry point ``pytest11``): the
``dpverify_certificates`` fixture and the ``--dpverify-certificates DIR``
option. Importing this module is cheap (no arb, no hypothesis)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable, Optional

import pytest


def pytest_addoption(parser: Any) -> None:
    parser.addoption("--dpverify-certificates", metavar="DIR", default=None,
                     help="write a dpverify certificate for each configuration checked through the "
                          "dpverify_certificates fixture (default: $DPVERIFY_CERT_DIR, else none)")


class CertificateRecorder:
    """``check(eps_fn, event, delta)`` runs :func:`dpverify.testing.assert_sound`
    and records the configuration as an ``events.epsilon`` certificate (in
    ``certificates``, and as a file in ``directory`` when one is set)."""

    def __init__(self, directory: Optional[Path]) -> None:
        self.directory = directory
        self.certificates: list = []

    def check(self, eps_fn: Callable[[Any, Any], float], event: Any, delta: Any, **kwargs: Any) -> dict:
        from . import deciding_answer, judge
        from ..certificate.events_cert import answer_certificate
        from ..certificate.writer import handed_out
        from ..events.api import as_event

        reported = eps_fn(event, delta)
        ans = deciding_answer(reported, event, delta, **kwargs)
        cert = handed_out(answer_certificate(as_event(event)[0], ans, delta=delta))
        self.certificates.append(cert)
        if self.directory is not None:
            from ..certificate.writer import write

            self.directory.mkdir(parents=True, exist_ok=True)
            write(cert, self.directory / f"events-epsilon-{cert['digest'][:16]}.json")
        judge(reported, ans, event, delta)  # recorded first: a failing configuration is kept too
        return cert


@pytest.fixture
def dpverify_certificates(request: Any) -> CertificateRecorder:
    """A :class:`CertificateRecorder` writing to ``--dpverify-certificates`` or
    ``$DPVERIFY_CERT_DIR`` (nothing written when neither is set)."""
    where = request.config.getoption("--dpverify-certificates") or os.environ.get("DPVERIFY_CERT_DIR")
    return CertificateRecorder(Path(where) if where else None)


__all__ = ["CertificateRecorder", "dpverify_certificates"]
