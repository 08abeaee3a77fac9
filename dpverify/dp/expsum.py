"""Exact signs of sums c_1 e^{a_1} + ... + c_n e^{a_n} with rational c_j, a_j.

Lindemann-Weierstrass: for distinct algebraic a_j the numbers e^{a_j} are
linearly independent over the algebraic numbers. So after merging equal
exponents exactly, the sum is 0 iff every coefficient is 0, and a nonzero sum
has a sign that ball arithmetic decides at some finite precision (escalated
here). This turns "is the profile *equal* to the formula" into a proof.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Callable, Iterable

from flint import arb

from ..ball import DEFAULT_MAX_BITS, ball, sign, working_precision
from ..errors import PrecisionExhausted, Undecided

__all__ = ["ExpSum", "escalated_sign", "exp_sum_sign", "exp_sum_ball"]

#: {exponent a: coefficient c} meaning sum c e^a
ExpSum = dict


def merge(terms: Iterable[tuple[Fraction, Fraction]]) -> ExpSum:
    """Combine (coefficient, exponent) pairs with equal exponents, drop zeros."""
    out: dict[Fraction, Fraction] = {}
    for c, a in terms:
        out[Fraction(a)] = out.get(Fraction(a), Fraction(0)) + Fraction(c)
    return {a: c for a, c in out.items() if c != 0}


def exp_sum_ball(s: ExpSum) -> arb:
    """Ball of the sum at the current precision."""
    return sum((ball(c) * ball(a).exp() for a, c in s.items()), arb(0))


def escalated_sign(f: Callable[[], arb], what: str, max_bits: int = DEFAULT_MAX_BITS) -> int:
    """Certified sign of the ball f() (evaluated at the current precision),
    doubling the precision while undecided; PrecisionExhausted past max_bits."""
    bits = 64
    while True:
        with working_precision(bits):
            try:
                return sign(f())
            except Undecided:
                pass
        if bits >= max_bits:
            raise PrecisionExhausted(f"the sign of {what} was not decided within {max_bits} bits")
        bits *= 2


def exp_sum_sign(s: ExpSum, max_bits: int = DEFAULT_MAX_BITS) -> int:
    """Exact sign (-1, 0, +1) of a merged exp-sum (see the module docstring):
    zero exactly when every coefficient is, else decided by balls."""
    s = {a: c for a, c in s.items() if c != 0}
    if not s:
        return 0
    return escalated_sign(lambda: exp_sum_ball(s), "a nonzero exponential sum", max_bits)
