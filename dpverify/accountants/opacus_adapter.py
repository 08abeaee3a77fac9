"""Opacus accountant under the name ``"dpverify"`` (``import dpverify.accountants``
registers it whenever Opacus is installed): ``PrivacyEngine(accountant="dpverify")``,
``make_private_with_epsilon`` and ``opacus.accountants.utils.get_noise_multiplier(...,
accountant="dpverify")`` then run on certified enclosures.

History has Opacus' own shape [(noise_multiplier, sample_rate, steps)], merged
as Opacus' RDP and PRV accountants merge it, so ``len()`` counts history entries
as theirs does and ``state_dict`` works unchanged. Each entry is ``steps``
Poisson-subsampled Gaussian steps under add-remove (Opacus' noise multiplier =
sigma / max_grad_norm, the per-record bound); ``get_epsilon`` returns the upper
end of a certified enclosure, rounded up. ``make_private_with_epsilon`` calls
Opacus' bisection with this accountant, so every comparison it makes is against
a certified upper end: the noise multiplier it returns certainly meets the
target. ``poisson_sampling=False`` (shuffled fixed batches) is refused.
"""

from __future__ import annotations

import sys
from typing import Any, Callable, Optional

from opacus.accountants import IAccountant, register_accountant

from ..ball import parse_exact
from ..errors import InvalidParameter
from ..events import api as A
from ..events import model as E
from .dp_accounting_adapter import _float_up

__all__ = ["DpverifyOpacusAccountant", "register_opacus"]

#: Opacus' PRV accountant's default accuracy, used here too (absolute width of eps).
DEFAULT_EPS_ERROR = 0.01

_SHUFFLE = ("poisson_sampling=False draws fixed-size batches by shuffling the data once per epoch; "
            "the dpverify accountant certifies Poisson sampling only (no certified bound for shuffled "
            "batches is implemented yet), and reporting the Poisson number for shuffling would not be "
            "a proved guarantee: use poisson_sampling=True, or another accountant knowingly")


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

    def answer(self, delta: float, rel_width: float = 1e-4) -> A.EventAnswer:
        """The certified answer (enclosure, theorems) at a relative width."""
        return A.epsilon(self._tree(), delta, neighboring="add-remove", rel_width=rel_width)

    def get_epsilon(self, delta: float, eps_error: Optional[float] = None, rel_width: Optional[float] = None,
                    alphas: Any = None, delta_error: Any = None, **kwargs: Any) -> float:
        """Upper end of the certified epsilon(delta) so far, rounded up (0 before any step).

        Accuracy: ``eps_error`` (absolute, as Opacus' PRV accountant; default
        0.01) or ``rel_width`` (relative): the enclosure whose upper end is
        returned is at most that wide. ``alphas`` (RDP orders) and
        ``delta_error`` have no meaning for a certified PLD and are refused
        rather than ignored, as is any other keyword."""
        if alphas is not None:
            raise InvalidParameter("alphas", "alphas are RDP orders; the dpverify accountant composes privacy "
                                   "loss distributions with certified error and has no orders to choose: "
                                   "drop alphas (use the 'rdp' accountant for an RDP bound)")
        if delta_error is not None:
            raise InvalidParameter("delta_error", "delta_error trades delta for speed in the PRV accountant; "
                                   "the dpverify accountant answers for the exact delta given: drop "
                                   "delta_error (eps_error or rel_width set the accuracy)")
        if kwargs:
            raise InvalidParameter(next(iter(kwargs)), f"unknown argument(s) {sorted(kwargs)} for the dpverify "
                                   "accountant's get_epsilon (allowed: delta, eps_error, rel_width)")
        if eps_error is not None and rel_width is not None:
            raise InvalidParameter("eps_error", "give eps_error or rel_width, not both")
        if not self.history:
            return 0.0
        if rel_width is not None:
            return _float_up(self.answer(delta, rel_width).enclosure.hi)
        err = DEFAULT_EPS_ERROR if eps_error is None else float(eps_error)
        if not err > 0:
            raise InvalidParameter("eps_error", f"eps_error={eps_error!r} must be > 0")
        # a coarse enclosure first; a finer one only when it is wider than eps_error
        enc = self.answer(delta, 1e-2).enclosure
        hi = _float_up(enc.hi)
        if hi == float("inf") or hi - float(enc.lo.mid()) <= err:
            return hi
        # relative width err / hi suffices: the fine enclosure's absolute width is at most
        # rel * (its lower end) <= rel * (true eps) <= rel * hi = err
        return _float_up(self.answer(delta, max(1e-8, min(1e-3, err / hi))).enclosure.hi)

    def __len__(self) -> int:
        """Number of history entries, as Opacus' RDP and PRV accountants count."""
        return len(self.history)

    @classmethod
    def mechanism(cls) -> str:
        return "dpverify"

    def get_optimizer_hook_fn(self, sample_rate: float) -> Callable:
        """Opacus' hook, after refusing a PrivacyEngine that samples by shuffling
        (make_private's ``poisson_sampling`` is read from its frame: the
        accountant is not told otherwise)."""
        caller = sys._getframe(1)
        if caller.f_code.co_name == "make_private" and caller.f_locals.get("poisson_sampling") is False:
            raise InvalidParameter("poisson_sampling", _SHUFFLE)
        return super().get_optimizer_hook_fn(sample_rate)


def register_opacus() -> None:
    """Register the accountant in Opacus' registry (idempotent)."""
    register_accountant("dpverify", DpverifyOpacusAccountant, force=True)


register_opacus()
