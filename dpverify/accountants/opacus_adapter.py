"""Opacus accountant under the name ``"dpverify"`` (importing this module
registers it): ``PrivacyEngine(accountant="dpverify")`` and
``opacus.accountants.utils.get_noise_multiplier(..., accountant="dpverify")``
then run on certified enclosures. History has Opacus' own shape
[(noise_multiplier, sample_rate, steps)], so ``state_dict`` works unchanged.
Each history entry is ``steps`` Poisson-subsampled Gaussian steps under
add-remove (Opacus' noise multiplier = sigma / max_grad_norm, the per-record
bound); ``get_epsilon`` returns the certified upper end rounded up.
"""

from __future__ import annotations

from typing import Any

from opacus.accountants import IAccountant, register_accountant

from ..events import api as A
from ..events import model as E
from ..ball import parse_exact
from .dp_accounting_adapter import _float_up

__all__ = ["DpverifyOpacusAccountant", "register_opacus"]


class DpverifyOpacusAccountant(IAccountant):
    """Certified PLD accountant for Opacus (Poisson sampling, add-remove)."""

    def __init__(self) -> None:
        super().__init__()

    def step(self, *, noise_multiplier: float, sample_rate: float) -> None:
        if self.history and self.history[-1][0] == noise_multiplier and self.history[-1][1] == sample_rate:
            z, q, n = self.history.pop()
            self.history.append((z, q, n + 1))
        else:
            self.history.append((noise_multiplier, sample_rate, 1))

    def _tree(self) -> Any:
        parts = []
        for z, q, n in self.history:
            zz, qq = parse_exact(z, "noise_multiplier"), parse_exact(q, "sample_rate")
            inner = E.NonPrivate() if zz == 0 else E.Gaussian(zz)
            parts.append(E.SelfComposed(inner if qq == 1 else E.PoissonSampled(qq, inner), int(n)))
        return E.Composed(tuple(parts))

    def answer(self, delta: float, rel_width: float = 1e-4, **kwargs: Any) -> A.EventAnswer:
        return A.epsilon(self._tree(), delta, neighboring="add-remove", rel_width=rel_width)

    def get_epsilon(self, delta: float, rel_width: float = 1e-4, **kwargs: Any) -> float:
        """Upper end of the certified epsilon(delta) so far, rounded up (0 before any step)."""
        if not self.history:
            return 0.0
        return _float_up(self.answer(delta, rel_width).enclosure.hi)

    def __len__(self) -> int:
        return sum(n for _, _, n in self.history)

    @classmethod
    def mechanism(cls) -> str:
        return "dpverify"


def register_opacus() -> None:
    """Register the accountant in Opacus' registry (idempotent)."""
    register_accountant("dpverify", DpverifyOpacusAccountant, force=True)


register_opacus()
