"""Drop-in certified accountants (thin adapters, no numerics here):

* :class:`CertifiedPLDAccountant` -- a real ``dp_accounting.PrivacyAccountant``
  (needs the dp-accounting extra);
* :class:`DpverifyOpacusAccountant` -- an Opacus ``IAccountant`` registered
  under the name ``"dpverify"``: importing this package registers it whenever
  Opacus is installed (Opacus and torch are then imported here).

Both delegate to :mod:`dpverify.events` and import their host library only
when it is installed. docs/guide/ecosystem.md lists what each host's own test suite
says about them.
"""

from __future__ import annotations

import importlib.util
from typing import Any

__all__ = ["CertifiedPLDAccountant", "DpverifyOpacusAccountant", "register_opacus"]

if importlib.util.find_spec("opacus") is not None:
    # registration is the point of importing this package with Opacus around:
    # PrivacyEngine(accountant="dpverify") must work without a second import
    from . import opacus_adapter as _opacus_adapter  # noqa: F401


def __getattr__(name: str) -> Any:
    if name == "CertifiedPLDAccountant":
        from .dp_accounting_adapter import CertifiedPLDAccountant

        return CertifiedPLDAccountant
    if name in ("DpverifyOpacusAccountant", "register_opacus"):
        from . import opacus_adapter

        return getattr(opacus_adapter, name)
    raise AttributeError(name)
