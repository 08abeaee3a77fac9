"""Exact signs of sums c_1 e^{a_1} + ... + c_n e^{a_n} with rational c_j, a_j.

Lindemann-Weierstrass: for distinct algebraic a_j the numbers e^{a_j} are
linearly independent over the algebraic numbers. So after merging equal
exponents exactly, the sum is 0 iff every coefficient is 0, and a nonzero sum
has a sign that ball arithmetic decides at some finite precision (escalated
here). This turns "is the profile *equal* to the formula" into a proof.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Iterable

from flint import arb

from ..ball import DEFAULT_MAX_BITS, ball, sign, working_precision
from ..errors import PrecisionExhausted, Undecided

__all__ = ["ExpSum", "exp_sum_sign", "exp_sum_ball"]

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


def exp_sum_sign(s: ExpSum, max_bits: int = DEFAULT_MAX_BITS) -> int:
    """Exact sign (-1, 0, +1) of a merged exp-sum (see the module docstring)."""
    s = {a: c for a, c in s.items() if c != 0}
    if not s:
        return 0
    bits = 64
    while True:
        with working_precision(bits):
            try:
                return sign(exp_sum_ball(s))
            except Undecided:
                pass
        if bits >= max_bits:
            raise PrecisionExhausted("the sign of a nonzero exponential sum was not decided")
        bits *= 2
