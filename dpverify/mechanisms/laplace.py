"""The Laplace mechanism: pair (Lap(0, b), Lap(D, b)), scale b, sensitivity D.

With eps0 = D / b the privacy profile is, for every real eps,

    delta(eps) = 0                          for eps >= eps0,
               = 1 - exp((eps - eps0) / 2)  for -eps0 <= eps < eps0,
               = 1 - exp(eps)               for eps < -eps0.

GDPT Sec 3 cites the middle branch from Balle et al. (2020a, Thm 3) as
``max(1 - exp(eps/2 - D/(2b)), 0)``. Derivation (checked against the
hockey-stick integral by quadrature in tests/mechanisms/test_laplace.py): the
privacy loss log p/q is (|x - D| - |x|)/b, which exceeds eps exactly on
x < x0 = (D - b eps)/2; for |eps| <= eps0, 0 <= x0 <= D and
P(X < x0) - e^eps Q(X < x0) = 1 - e^{-x0/b}/2 - e^{eps + (x0-D)/b}/2, both
exponents being (eps - eps0)/2. For eps < -eps0 the loss exceeds eps
everywhere, so delta = 1 - e^eps. The pair is symmetric (reflect x -> D - x).
The profile is computed with expm1, so it keeps its relative accuracy near eps0.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Mapping

from flint import arb

from .. import _validate as V
from ..ball import ball
from ..errors import InvalidParameter
from ..limits import MAX_EPS0
from .base import register_profile

__all__ = ["LaplaceProfile", "laplace_delta_ball"]


def laplace_delta_ball(eps0: arb, eps: arb) -> arb:
    """Ball of the Laplace profile with eps0 = D/b at eps (any real ball).

    For a ball straddling a branch point the branches are joined (the
    profile is continuous there, so the union of the branch enclosures over
    the ball's parts contains every value)."""
    if eps >= eps0:
        return arb(0)
    if eps < -eps0:
        return -eps.expm1()
    if eps >= -eps0:
        mid = -((eps - eps0) / 2).expm1()
        if eps < eps0:
            return mid
        return mid.union(arb(0))
    return (-eps.expm1()).union(-((eps - eps0) / 2).expm1())


@dataclass(frozen=True)
class LaplaceProfile:
    """Profile of the Laplace mechanism with scale b and sensitivity D."""

    scale: Fraction
    sensitivity: Fraction
    source_params: Mapping[str, str]
    name: str = "laplace"
    #: delta(eps) is non-increasing in eps (the staircase may use f(a) as the
    #: cell maximum, GDPT Thm 4.6)
    nonincreasing: bool = True

    @property
    def eps0(self) -> Fraction:
        """D / b: the profile vanishes from here on (the mechanism is eps0-DP)."""
        return self.sensitivity / self.scale

    def delta(self, eps: arb) -> arb:
        return laplace_delta_ball(ball(self.eps0), eps)

    def params(self) -> Mapping[str, str]:
        return dict(self.source_params)


@register_profile("laplace")
def _build(options: Mapping[str, str]) -> LaplaceProfile:
    if "scale" not in options:
        raise InvalidParameter("scale", "--mechanism laplace needs --scale B (> 0)")
    b = V.positive("scale", options["scale"])
    d = V.positive("sensitivity", options.get("sensitivity", "1"))
    params = {"scale": options["scale"]}
    if "sensitivity" in options:
        params["sensitivity"] = options["sensitivity"]
    if d / b > MAX_EPS0:  # Laplace(b) of sensitivity D is (D/b)-DP: the eps0 cap of every guarantee
        raise InvalidParameter(
            # the text as given: the exact value of 1e-3000 is a 3,000-digit fraction
            "scale", f"scale={options['scale']!r} must be >= 1e-6 * sensitivity (eps0 = D/b <= 1e6)"
        )
    return LaplaceProfile(b, d, params)
