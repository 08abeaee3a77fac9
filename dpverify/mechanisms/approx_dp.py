"""Worst cases of pure eps0-DP and of (eps0, delta0)-DP.

GDPT Thm 3.1 / Cor 3.2: every (eps0, delta0)-DP mechanism has a profile
pointwise below that of the 4-output mechanism

    P = (delta0, (1-delta0) e^eps0 / (1+e^eps0), (1-delta0) / (1+e^eps0), 0)
    Q = (0,      (1-delta0) / (1+e^eps0), (1-delta0) e^eps0 / (1+e^eps0), delta0),

whose profile, summing (p_i - e^eps q_i)_+ over the four outputs, is for every
real eps

    delta(eps) = delta0 + (1-delta0) [ (e^eps0 - e^eps)_+ + (1 - e^(eps+eps0))_+ ] / (1 + e^eps0).

For eps >= 0 the second bracket vanishes and this is GDPT's
delta0 + (1-delta0)(e^eps0 - e^eps)_+ / (1+e^eps0); for eps < -eps0 it is the
reversal (LT eq. 7) of the same pair. Pure eps0-DP is delta0 = 0 (randomized
response with p = e^eps0 / (1+e^eps0), LT Thm 3.4). The pair is symmetric
(swap outputs 1<->4, 2<->3), so both directions agree.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Mapping

from flint import arb

from .. import _validate as V
from ..ball import ball, exact_str, positive_part
from .base import register_profile

__all__ = ["ApproxDPProfile", "approx_dp_delta_ball"]


def approx_dp_delta_ball(eps0: arb, delta0: arb, eps: arb) -> arb:
    """Ball of the worst-case profile of (eps0, delta0)-DP at eps (any real)."""
    e0 = eps0.exp()
    e = eps.exp()
    bracket = positive_part(e0 - e) + positive_part(1 - e * e0)
    return delta0 + (1 - delta0) * bracket / (1 + e0)


@dataclass(frozen=True)
class ApproxDPProfile:
    """Worst-case profile of (eps0, delta0)-DP (delta0 = 0: pure eps0-DP)."""

    eps0: Fraction
    delta0: Fraction
    name: str = "approx"

    def delta(self, eps: arb) -> arb:
        # eps >= eps0 exactly: the profile is exactly delta0 (both brackets vanish)
        if eps >= ball(self.eps0):
            return ball(self.delta0)
        return approx_dp_delta_ball(ball(self.eps0), ball(self.delta0), eps)

    def delta_at_rational(self, eps: Fraction) -> "arb | None":
        """Exactly delta0 for eps >= eps0, decided on the rationals."""
        return ball(self.delta0) if eps >= self.eps0 else None

    def params(self) -> Mapping[str, str]:
        if self.name == "pure":
            return {"eps0": exact_str(self.eps0)}
        return {"eps0": exact_str(self.eps0), "delta0": exact_str(self.delta0)}


@register_profile("approx")
def _build_approx(options: Mapping[str, str]) -> ApproxDPProfile:
    eps0 = V.eps0("eps0", _need(options, "eps0", "approx"))
    delta0 = V.closed_unit("delta0", _need(options, "delta0", "approx"))
    return ApproxDPProfile(eps0, delta0, "approx")


@register_profile("pure")
def _build_pure(options: Mapping[str, str]) -> ApproxDPProfile:
    eps0 = V.eps0("eps0", _need(options, "eps0", "pure"))
    return ApproxDPProfile(eps0, Fraction(0), "pure")


def _need(options: Mapping[str, str], key: str, mechanism: str) -> str:
    from ..errors import InvalidParameter

    if key not in options:
        raise InvalidParameter(key, f"--mechanism {mechanism} needs --{key.replace('_', '-')}")
    return options[key]
