"""Exact finite mechanisms: a pair of pmfs (P, Q) on n outcomes.

The privacy profile delta_{P|Q}(t) = sup_S P(S) - e^t Q(S) (GDPT Sec 2) is
computed two ways that must agree:

(a) the likelihood-ratio formula sum_i (p_i - e^t q_i)_+ (the sup is attained
    at S = {i : p_i > e^t q_i});
(b) exhaustive enumeration of all 2^n events (n <= 20), in Gray-code order so
    that each event costs one addition.

Probabilities are exact :class:`~fractions.Fraction` (then (a) and (b) are
exact rationals whenever e^t is given as an exact rational ``exp_t``) or arb
balls when e^eps enters (then both are ball enclosures). Both directions:
``delta(t)`` is P|Q, ``reversed()`` gives Q|P.

No profile builder is registered: a pair of pmfs has no natural one-line CLI
form (randomized response, the natural finite mechanism, is ``rr``).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Mapping, Sequence, Union

from flint import arb

from ..ball import ball
from ..errors import InvalidParameter, shown
from ..limits import MAX_ENUMERATION_EXPONENT

__all__ = ["FiniteMechanism", "MAX_ENUMERATION_EXPONENT"]

Prob = Union[Fraction, arb]
#: Largest n for exhaustive enumeration of the 2^n events.


def _is_exact(xs: Sequence[Prob]) -> bool:
    return all(isinstance(x, (Fraction, int)) for x in xs)


@dataclass(frozen=True)
class FiniteMechanism:
    """Pair of pmfs P = M(D), Q = M(D') on outcomes 0..n-1."""

    P: tuple
    Q: tuple
    name: str = "finite"

    def __post_init__(self) -> None:
        if len(self.P) != len(self.Q) or not self.P:
            raise InvalidParameter("pmf", "P and Q must be non-empty and of equal length")
        for side, pmf in (("P", self.P), ("Q", self.Q)):
            # a probability is an exact number or a finite ball; a bool is neither (True was
            # read as 1: adv37 A4), nor is a NaN
            for x in pmf:
                if isinstance(x, bool) or not (isinstance(x, (Fraction, int)) or (isinstance(x, arb) and x.is_finite())):
                    raise InvalidParameter("pmf", f"{side}: {shown(x)} is not a probability (give Fractions, "
                                           "ints or finite arb balls; FiniteMechanism.of reads text and floats)")
            if _is_exact(pmf):
                if any(Fraction(x) < 0 for x in pmf) or sum(Fraction(x) for x in pmf) != 1:
                    raise InvalidParameter("pmf", f"{side} must be >= 0 and sum to exactly 1")
            else:
                total = sum((ball(x) for x in pmf), arb(0))
                if any(ball(x) < 0 for x in pmf) or not total.contains(1):
                    raise InvalidParameter("pmf", f"{side} must be >= 0 and sum to 1")

    @classmethod
    def of(cls, P: Sequence[object], Q: Sequence[object], name: str = "finite") -> "FiniteMechanism":
        def conv(x: object) -> Prob:
            if isinstance(x, arb):
                return x
            if isinstance(x, bool):
                raise InvalidParameter("pmf", f"{x!r} is not a probability")
            try:
                return Fraction(x)  # type: ignore[arg-type]
            except (ValueError, TypeError, OverflowError, ZeroDivisionError):
                raise InvalidParameter("pmf", f"{shown(x)} is not a probability") from None

        return cls(tuple(conv(x) for x in P), tuple(conv(x) for x in Q), name)

    @property
    def n(self) -> int:
        return len(self.P)

    @property
    def exact(self) -> bool:
        return _is_exact(self.P) and _is_exact(self.Q)

    def reversed(self) -> "FiniteMechanism":
        """The pair (Q, P): its profile is delta_{Q|P}."""
        return FiniteMechanism(self.Q, self.P, self.name)

    def product(self, other: "FiniteMechanism") -> "FiniteMechanism":
        """Non-adaptive composition: the product pmfs on n * m outcomes."""
        P = tuple(a * b for a in self.P for b in other.P)
        Q = tuple(a * b for a in self.Q for b in other.Q)
        return FiniteMechanism(P, Q, f"{self.name}x{other.name}")

    # ---------------------------------------------------------------- (a) likelihood ratio
    def delta(self, eps: arb) -> arb:
        """Ball of delta_{P|Q}(eps), route (a), for a ball eps (any real)."""
        e = eps.exp()
        return sum(((ball(p) - e * ball(q)).nonnegative_part() for p, q in zip(self.P, self.Q)), arb(0))

    def delta_exact(self, exp_t: Fraction) -> Fraction:
        """Exact delta_{P|Q}(log exp_t), route (a), for rational pmfs."""
        self._need_exact()
        return sum((max(Fraction(p) - exp_t * Fraction(q), Fraction(0)) for p, q in zip(self.P, self.Q)), Fraction(0))

    # ---------------------------------------------------------------- (b) enumeration
    def _gray(self, terms: Sequence) -> tuple:
        """max over all 2^n events of sum_{i in S} terms[i], and the best mask."""
        if self.n > MAX_ENUMERATION_EXPONENT:
            raise InvalidParameter("pmf", f"exhaustive enumeration needs n <= {MAX_ENUMERATION_EXPONENT} outcomes, got {self.n}")
        zero = terms[0] - terms[0]
        cur, best, mask, best_mask = zero, zero, 0, 0
        exact = not isinstance(zero, arb)
        for j in range(1, 1 << self.n):
            i = (j & -j).bit_length() - 1  # the bit that flips in Gray order
            mask ^= 1 << i
            cur = cur + terms[i] if mask >> i & 1 else cur - terms[i]
            if exact:
                if cur > best:
                    best, best_mask = cur, mask
            else:
                best = best.max(cur)
        return best, best_mask

    def delta_enumerated(self, eps: arb) -> arb:
        """Ball of sup over all 2^n events S of P(S) - e^eps Q(S), route (b)."""
        e = eps.exp()
        return self._gray([ball(p) - e * ball(q) for p, q in zip(self.P, self.Q)])[0]

    def delta_enumerated_exact(self, exp_t: Fraction) -> Fraction:
        """Exact route (b) for rational pmfs and rational e^t."""
        self._need_exact()
        return self._gray([Fraction(p) - exp_t * Fraction(q) for p, q in zip(self.P, self.Q)])[0]

    def _need_exact(self) -> None:
        if not self.exact:
            raise InvalidParameter("pmf", "exact evaluation needs rational probabilities")

    def params(self) -> Mapping[str, str]:
        return {"P": ",".join(map(str, self.P)), "Q": ",".join(map(str, self.Q))}
