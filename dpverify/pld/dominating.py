"""The one interface of a dominating pair, as the PLD accountant uses it, and the
code every pair shares.

A dominating pair (P, Q) of a mechanism (AFA Def 7) is used only through its
privacy-loss tails: for the loss L = log(dP/dQ),

* ``tails(eps)`` -> balls of (P(eps < L < inf), Q(eps < L < inf)) for a real ball eps;
* ``inf_mass()`` -> the ball of P(L = +inf);
* ``tails_at_grid(m, i0, n)`` -> the tails at the knots eps = i 2^-m, i = i0..n;
* ``delta(eps)`` -> the hockey-stick divergence
  H_{e^eps}(P || Q) = P(L > eps) - e^eps Q(L > eps) + P(L = inf)  (AFA Lemma 37).

:class:`PairFromTails` derives the last two from the first two, once, so that a
pair class writes only what is its own (its tails, its mass at infinity, and a
faster grid evaluation where it has one).
"""

from __future__ import annotations

from typing import Callable, Optional, Protocol, runtime_checkable

from flint import arb

__all__ = ["DominatingPair", "PairFromTails", "tails_on_grid"]

#: progress is reported every this many knots (a callback per knot costs more than an erfc)
_PROGRESS_EVERY = 256


@runtime_checkable
class DominatingPair(Protocol):
    """What :mod:`dpverify.pld.discretise` and the queries need of a pair."""

    def tails(self, eps: arb) -> tuple[arb, arb]: ...

    def inf_mass(self) -> arb: ...

    def tails_at_grid(self, m: int, i0: int, n: int,
                      progress: Optional[Callable[[float], None]] = None) -> tuple[list, list]: ...

    def delta(self, eps: arb) -> arb: ...


def tails_on_grid(m: int, i0: int, n: int, progress: Optional[Callable[[float], None]],
                  at: Callable[[int, arb], tuple]) -> tuple[list, list]:
    """(P tails, Q tails) of ``at(k, eps)`` at the exact knots eps = i 2^-m,
    i = i0..n (k = i - i0 is the knot's index, for per-knot hints)."""
    h = arb(2) ** (-m)
    P_t: list = []
    Q_t: list = []
    total = n - i0 + 1
    for k, i in enumerate(range(i0, n + 1)):
        if progress is not None and k % _PROGRESS_EVERY == 0:
            progress(k / total)
        p, q = at(k, h * i)
        P_t.append(p)
        Q_t.append(q)
    return P_t, Q_t


class PairFromTails:
    """``tails_at_grid`` and ``delta`` of a pair from its ``tails`` and ``inf_mass``."""

    def tails_at_grid(self, m: int, i0: int, n: int,
                      progress: Optional[Callable[[float], None]] = None) -> tuple[list, list]:
        return tails_on_grid(m, i0, n, progress, lambda k, eps: self.tails(eps))  # type: ignore[attr-defined]

    def delta(self, eps: arb) -> arb:
        """H_{e^eps}(P || Q) = P(L > eps) - e^eps Q(L > eps) + P(L = inf) (AFA Lemma 37)."""
        p, q = self.tails(eps)  # type: ignore[attr-defined]
        return p - eps.exp() * q + self.inf_mass()  # type: ignore[attr-defined]
