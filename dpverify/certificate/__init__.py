"""Certificates: the format (:mod:`.format`), the writer and the builders.

The independent re-verification lives in :mod:`dpverify.recheck`;
``verify_certificate`` and ``verify_file`` are re-exported here. Names are
imported on first use (PEP 562): ``verify`` reaches the re-checkers without
loading the builders (and with them python-flint)."""

from .._lazy import lazy_getattr as _lazy_getattr

_LAZY = {
    **dict.fromkeys(("claim_certificate", "quantity_certificate", "verdict_certificate"), ".build"),
    **dict.fromkeys(("verify_certificate", "verify_file"), "..recheck.verify"),
    **dict.fromkeys(("FORMAT", "compute_digest", "dumps", "make_certificate", "write"), ".writer"),
}

__all__ = sorted(_LAZY)


__getattr__ = _lazy_getattr(__name__, _LAZY, globals())
