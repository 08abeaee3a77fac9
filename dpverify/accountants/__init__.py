"""Drop-in certified accountants (thin adapters, no numerics here):

* :class:`CertifiedPLDAccountant` -- a real ``dp_accounting.PrivacyAccountant``
  (import :mod:`dpverify.accountants.dp_accounting_adapter`; needs the
  dp-accounting extra);
* :class:`DpverifyOpacusAccountant` -- an Opacus ``IAccountant`` registered
  under the name ``"dpverify"`` when :func:`register_opacus` runs (importing
  :mod:`dpverify.accountants.opacus_adapter` registers it).

Both delegate to :mod:`dpverify.events` and import their host library lazily.
"""

from __future__ import annotations

from typing import Any

__all__ = ["CertifiedPLDAccountant", "DpverifyOpacusAccountant", "register_opacus"]


def __getattr__(name: str) -> Any:
    if name == "CertifiedPLDAccountant":
        from .dp_accounting_adapter import CertifiedPLDAccountant

        return CertifiedPLDAccountant
    if name in ("DpverifyOpacusAccountant", "register_opacus"):
        from . import opacus_adapter

        return getattr(opacus_adapter, name)
    raise AttributeError(name)
