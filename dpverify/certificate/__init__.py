"""Certificates: writer, builders and independent re-verification.

Names are imported on first use (PEP 562): ``verify`` reaches the re-checkers
without loading the builders (and with them python-flint)."""

_LAZY = {
    "claim_certificate": ".build", "quantity_certificate": ".build", "verdict_certificate": ".build",
    "verify_certificate": ".verify", "verify_file": ".verify",
    "FORMAT": ".writer", "compute_digest": ".writer", "dumps": ".writer", "make_certificate": ".writer",
    "write": ".writer",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'dpverify.certificate' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value
