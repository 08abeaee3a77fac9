"""Float planning of the Renyi tail bound of delta(eps): the integer order at which it is proved,
one copy for the producer (:func:`dpverify.pld.tail.renyi_exponent`) and the re-check
(:func:`dpverify.recheck.events.leaves_delta_upper`).

Floats only, and never a reason to accept: for every integer order a >= 2,
delta_d(eps) <= zeta_a e^(K_d(a) - (a - 1) eps) (Balle et al. 2020 Thm 21, K_d the sum of the
steps' cumulants by Mironov 2017 Prop 1), so any order proves a bound and the proposal only
chooses which one each side evaluates (each with its own certified cumulants). Both sides
choosing the same order is what keeps the re-check's rounding of the bound below the producer's
recorded upper end, which is one power of two above its own.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Callable, Sequence

__all__ = ["ORDERS", "propose_order"]

#: a step of the composition: (kind, 1/scale, rate, count), see :func:`propose_order`
Leaf = tuple[str, Fraction, Fraction, int]
#: a Laplace step's cumulant K(a) in binary64, from the order a and 1/b
LaplaceTerm = Callable[[int, Fraction], float]

#: integer orders proposed (about 2^(1/4) apart up to 2^12)
ORDERS = sorted({max(2, round(2 ** (k / 4))) for k in range(4, 49)})


def _exponent(leaves: Sequence[Leaf], direction: str, a: int, eps: float, laplace: LaplaceTerm) -> float:
    """The exponent log zeta_a + sum K - (a - 1) eps in binary64 (the cumulants of
    :mod:`dpverify.pld.tail`'s docstring; log-sum-exp of the binomial sum for the
    Poisson-subsampled Gaussian's remove pair; a Laplace step's K(a) from ``laplace``)."""
    f = 0.0
    for t, inv, q, times in leaves:
        if t == "laplace":
            k = laplace(a, inv)
        else:
            c = float(inv * inv / 2)  # an exact rational first: the same float from 1/sigma or from sigma
            if q == 1:
                k = a * (a - 1) * c
            elif direction == "remove":
                lq, l1q = math.log(float(q)), math.log1p(-float(q))
                logs = [math.lgamma(a + 1) - math.lgamma(j + 1) - math.lgamma(a - j + 1) + j * lq
                        + (a - j) * l1q + (j * j - j) * c for j in range(a + 1)]
                top = max(logs)
                k = top + math.log(sum(math.exp(v - top) for v in logs))
            else:
                lam = (a - 1) * float(q)
                k = min((a - 1) * -math.log1p(-float(q)), lam * (1 + lam) * c)
        f += times * k
    return f - (a - 1) * eps - math.log(a) + (a - 1) * math.log1p(-1 / a)


def propose_order(leaves: Sequence[Leaf], direction: str, eps: Fraction, laplace: LaplaceTerm) -> int:
    """The order of :data:`ORDERS` with the smallest float exponent for ``direction`` ("add" or
    "remove") at ``eps``; the first order where binary64 overflows at any order. ``leaves`` are
    (kind, 1/scale, rate, count): ("gaussian", 1/noise multiplier, q, count) or
    ("laplace", 1/b, 1, count). ``laplace(a, 1/b)`` is a Laplace step's K(a) in binary64: each
    side keeps its own (the producer's closed form overflows where (a - 1)/b > 709 and then
    proposes the first order; the re-check's rounds its MPFR enclosure), so that each side's
    choice is the one it made before this proposal was shared."""
    try:
        e = float(eps)
        return min(ORDERS, key=lambda a: _exponent(leaves, direction, a, e, laplace))
    except (OverflowError, ValueError):
        return ORDERS[0]
