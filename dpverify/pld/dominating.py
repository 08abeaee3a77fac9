"""The one interface of a dominating pair, as the PLD accountant uses it, and the
code every pair shares.

A dominating pair (P, Q) of a mechanism (AFA Def 7) is used only through its
privacy-loss tails: for the loss L = log(dP/dQ),

* ``tails(eps)`` -> balls of (P(eps < L < inf), Q(eps < L < inf)) for a real ball eps;
* ``inf_mass()`` -> the ball of P(L = +inf);
* ``tails_at_grid(m, i0, n)`` -> the tails at the knots eps = i 2^-m, i = i0..n;
* ``delta(eps)`` -> the hockey-stick divergence
  H_{e^eps}(P || Q) = P(L > eps) - e^eps Q(L > eps) + P(L = inf)  (AFA Lemma 37);
* ``loss_bound()`` -> a number B with L <= B P-almost surely: an exact rational
  where the loss is bounded, ``math.inf`` otherwise (an unbounded loss, or P-mass at
  L = +inf). Where the supremum itself is rational (the Laplace pair at q = 1: 1/b;
  a finite list of rational losses) it is that number (:func:`exact_loss_bound`), so
  eps exactly at the composed bound (the eps of a pure-DP composition) is decided;
  otherwise the closed form rounded up to a dyadic grid (:func:`dyadic_loss_bound`).
  Each pair proves its own at the line.

Why the bound: delta(eps) = E_P[(1 - e^{eps - L})_+] + P(L = inf) (AFA Lemma 37
with P(L > eps) - e^eps Q(L > eps) = E_P[(1 - e^{eps - L}) 1{L > eps}], as
Q = e^{-L} P where L is finite). The loss of a composition is the sum of the
steps' independent losses under the product of the P's (AFA Thm 10), so it is at
most B = sum_i T_i B_i, and for every eps >= B the integrand is 0 P-a.s.:
delta(eps) = 0 exactly (:func:`composed_loss_bound`). For every delta > 0,
eps(delta) = inf {eps >= 0 : delta(eps) <= delta} <= B as well. No grid reaches
that answer (a grid's top knot lies up to one cell per step above the end).

:class:`PairFromTails` derives the last two from the first two, once, so that a
pair class writes only what is its own (its tails, its mass at infinity, and a
faster grid evaluation where it has one).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Callable, Iterable, Optional, Protocol, Union, runtime_checkable

from flint import arb

from ..certificate.format import LOSS_BOUND_BITS, LOSS_BOUND_CAP

__all__ = ["DominatingPair", "PairFromTails", "composed_loss_bound", "dyadic_loss_bound", "exact_loss_bound",
           "tails_on_grid"]

#: a loss bound: an exact rational, or math.inf where there is none
LossBound = Union[Fraction, float]

#: progress (and with it the caller's deadline) is reported every this many
#: knots: a callback per knot costs more than an erfc, but a tail at a huge
#: argument and thousands of bits takes milliseconds (sigma 0.01: 64 ms per
#: erfc on a loaded machine), so 256 knots let a 3 s budget run 24 s
_PROGRESS_EVERY = 16


@runtime_checkable
class DominatingPair(Protocol):
    """What :mod:`dpverify.pld.discretise` and the queries need of a pair."""

    def tails(self, eps: arb) -> tuple[arb, arb]: ...

    def inf_mass(self) -> arb: ...

    def tails_at_grid(self, m: int, i0: int, n: int,
                      progress: Optional[Callable[[float], None]] = None) -> tuple[list, list]: ...

    def delta(self, eps: arb) -> arb: ...

    def loss_bound(self) -> LossBound: ...


def dyadic_loss_bound(x: arb) -> LossBound:
    """A dyadic rational >= every value of the ball ``x`` (a pair's loss supremum, enclosed
    in arb), with room: (floor(u 2^N) + 2) 2^-N, u = the ball's upper end rounded up,
    N = LOSS_BOUND_BITS. So the result exceeds the supremum s by more than 2^-N, and
    verify's own bound (the least point of the same grid at which its interval tail
    P(L > e) is proved 0; it is proved at every grid point more than 2^-100 or so above s)
    is at most this one: every [0, 0] the producer decides, verify decides too.
    ``math.inf`` for a ball that is not finite or whose bound exceeds LOSS_BOUND_CAP."""
    if not x.is_finite():
        return math.inf
    u = (x * arb(2) ** LOSS_BOUND_BITS).upper()  # arf, rounded up
    b = Fraction(int(u.floor().unique_fmpz()) + 2, 1 << LOSS_BOUND_BITS)
    return b if b <= LOSS_BOUND_CAP else math.inf


def exact_loss_bound(x: Fraction) -> LossBound:
    """A loss supremum that is an exact rational, used as it is (no rounding): eps equal
    to a sum of such bounds (Laplace 20 + Laplace 2 at eps 1/20 + 1/2) then compares
    equal and is answered delta = 0, where a bound rounded up to 2^-LOSS_BOUND_BITS left
    eps in [B, B + 2^-39 T) to a grid search that only approaches 0. ``math.inf`` above
    LOSS_BOUND_CAP (as :func:`dyadic_loss_bound`)."""
    x = Fraction(x)
    return x if x <= LOSS_BOUND_CAP else math.inf


def composed_loss_bound(steps: Iterable[tuple]) -> LossBound:
    """sum_i T_i B_i over (pair, T_i): the composed loss bound of the module docstring,
    exact (a Fraction sum of rationals needs no rounding); ``math.inf`` when a step has none."""
    from ..ball import working_precision

    total = Fraction(0)
    for pair, count in steps:
        with working_precision(128):  # one precision everywhere: the same bound, the same bytes
            b = pair.loss_bound()
        if b == math.inf:
            return math.inf
        total += count * b
    return total


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
