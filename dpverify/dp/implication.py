"""The exact partial order of (eps, delta)-DP conditions (GDPT Thm 3.1, Cor 3.1).

GDPT Thm 3.1: for eps0 >= 0 and 0 <= delta0 < 1, (eps0, delta0)-DP implies
(eps, delta)-DP iff delta >= W(eps), where W is the worst-case profile of
(eps0, delta0)-DP (GDPT Cor 3.2, :mod:`dpverify.mechanisms.approx_dp`):

    W(eps) = delta0 + (1 - delta0) [(e^eps0 - e^eps)_+ + (1 - e^(eps+eps0))_+] / (1 + e^eps0),

which for eps >= 0 is GDPT's delta0 + (1-delta0)(e^eps0 - e^eps)_+/(1+e^eps0)
(for eps < 0 the second bracket is the LT eq. 7 reversal; the same condition
extends to every real eps because W is the pointwise supremum of the profiles
of all (eps0, delta0)-DP mechanisms, attained by one of them). delta0 = 1 is
allowed too: then W = 1.

The decision is exact: multiplied by 1 + e^eps0 > 0, delta - W(eps) is a
rational combination of e^0, e^eps0, e^eps, e^(eps+eps0) whose positive parts
are resolved by comparing rational exponents, and its sign is decided by
:func:`dpverify.dp.expsum.exp_sum_sign` (Lindemann-Weierstrass for the zero
case). So the verdict is never undecided for rational inputs.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Iterable

from .. import _validate as V
from ..errors import InvalidParameter, shown
from .._validate import ExactInput
from flint import arb

from ..ball import ball, brief_str, refine, working_precision
from ..mechanisms.approx_dp import ApproxDPProfile
from ..mechanisms.base import profile_delta
from ..verdict import Enclosure, Outcome, Verdict
from .expsum import ExpSum, exp_sum_sign, merge

__all__ = ["implies", "worst_case_delta", "worst_case_terms"]


def worst_case_terms(eps0: Fraction, delta0: Fraction, eps: Fraction) -> list[tuple[Fraction, Fraction]]:
    """(1 + e^eps0) W(eps) as (coefficient, exponent) pairs, positive parts resolved exactly."""
    F = Fraction
    terms = [(delta0, F(0)), (delta0, eps0)]
    if eps < eps0:  # (e^eps0 - e^eps)_+ = e^eps0 - e^eps
        terms += [(1 - delta0, eps0), (delta0 - 1, eps)]
    if eps + eps0 < 0:  # (1 - e^(eps+eps0))_+
        terms += [(1 - delta0, F(0)), (delta0 - 1, eps + eps0)]
    return terms


def worst_case_delta(eps0: ExactInput, delta0: ExactInput, eps: ExactInput, digits: int = 15) -> Enclosure:
    """Enclosure of W(eps), the smallest delta with (eps0, delta0)-DP => (eps, delta)-DP."""
    e0 = V.nonnegative("eps0", eps0)
    d0 = V.closed_unit("delta0", delta0)
    e = V.real("eps", eps)
    digits = V.digits(digits)
    if e >= e0 or d0 == 1:  # decided on the exact rationals: W(eps) = delta0 (or 1)
        with working_precision(max(64, d0.numerator.bit_length() + d0.denominator.bit_length() + 64)):
            x = ball(d0)
        return Enclosure.from_bounds(x, x, digits, 0) if x.is_exact() else Enclosure.from_ball(
            _refined(d0, digits), digits, 0)
    return profile_delta(ApproxDPProfile(e0, d0), e, digits)


def _refined(d0: Fraction, digits: int) -> arb:
    return refine(lambda: ball(d0), digits=digits + 1, what="delta0")[0]


def _pair(name: str, value: object, what: str) -> tuple[ExactInput, ExactInput]:
    try:
        pair = tuple(value)  # type: ignore[call-overload]
    except TypeError:
        pair = ()
    if len(pair) != 2:
        raise InvalidParameter(name, f"{name}={shown(value)} must be a pair {what}")
    return pair[0], pair[1]


def implies(frm: Iterable[ExactInput], to: Iterable[ExactInput], digits: int = 15) -> Verdict:
    """Verdict of "(eps0, delta0)-DP implies (eps, delta)-DP" (GDPT Thm 3.1), exact.

    ``frm`` = (eps0, delta0) with eps0 >= 0, delta0 in [0, 1]; ``to`` = (eps, delta)
    with eps real and delta in [0, 1]. HOLDS iff delta >= W(eps); the verdict
    carries the enclosure of W(eps) as ``required_delta``.
    """
    eps0, delta0 = _pair("frm", frm, "(eps0, delta0)")
    eps, delta = _pair("to", to, "(eps, delta)")
    e0 = V.nonnegative("eps0", eps0)
    d0 = V.closed_unit("delta0", delta0)
    e = V.real("eps", eps)
    d = V.closed_unit("delta", delta)
    digits = V.digits(digits)
    need = worst_case_delta(e0, d0, e, digits)
    # (1 + e^eps0) (delta - W(eps)) as an exact exponential sum
    diff: ExpSum = merge([(d, Fraction(0)), (d, e0)] + [(-c, a) for c, a in worst_case_terms(e0, d0, e)])
    s = exp_sum_sign(diff)
    outcome = Outcome.HOLDS if s >= 0 else Outcome.FAILS
    rel = {1: ">", 0: "=", -1: "<"}[s]
    # brief_str: the exact value of 1e-3000 is a 3,000-digit fraction, too long for a line
    b = brief_str
    reason = (f"delta {rel} W(eps) = {need.short(digits)}: ({b(e0)}, {b(d0)})-DP "
              f"{'implies' if s >= 0 else 'does not imply'} ({b(e)}, {b(d)})-DP (GDPT Thm 3.1)")
    return Verdict(outcome, reason, {"required_delta": need}, {"sign": s})
