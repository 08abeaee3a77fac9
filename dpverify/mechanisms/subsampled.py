"""Poisson subsampling of an (eps0, delta0)-DP guarantee (GDPT Sec 5.3).

GDPT Sec 5.3 (after Balle et al. 2020a): if A is (eps, delta)-DP then A o S_q,
with Poisson sampling rate q, is (log(1 - q + q e^eps), q delta)-DP (add/remove
neighbours). Applied to every point of the worst-case profile W of
(eps0, delta0)-DP (GDPT Thm 3.1), the subsampled profile is, for eps' >= 0,

    delta'(eps') = q W(eps),   eps = log(1 + (e^eps' - 1) / q),

the map eps -> eps' being increasing and onto [0, inf). This is the profile
whose GDPT the paper plots in App E.2. It vanishes for
eps' >= log(1 - q + q e^eps0) when delta0 = 0 and tends to q delta0 otherwise.
Like the examples it is a guarantee, so for eps' < 0 the worst case of the
(0, delta'(0))-DP guarantee is returned.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Mapping

from flint import arb

from .. import _validate as V
from ..ball import ball, exact_str
from ..errors import InvalidParameter
from .approx_dp import approx_dp_delta_ball
from .base import register_profile
from .examples import guarantee_profile

__all__ = ["SubsampledProfile"]


@dataclass(frozen=True)
class SubsampledProfile:
    """Profile of an (eps0, delta0)-DP guarantee under Poisson rate q."""

    rate: Fraction
    eps0: Fraction
    delta0: Fraction
    name: str = "subsampled"
    nonincreasing: bool = True

    def zero_from(self) -> arb:
        """Ball of log(1 - q + q e^eps0): the profile is 0 beyond it when delta0 = 0."""
        q = ball(self.rate)
        return (q * ball(self.eps0).expm1()).log1p()

    def _nonneg(self, eps: arb) -> arb:
        q = ball(self.rate)
        base_eps = (eps.expm1() / q).log1p()
        return q * approx_dp_delta_ball(ball(self.eps0), ball(self.delta0), base_eps)

    def delta(self, eps: arb) -> arb:
        return guarantee_profile(self._nonneg, eps)

    def params(self) -> Mapping[str, str]:
        return {
            "rate": exact_str(self.rate),
            "eps0": exact_str(self.eps0),
            "delta0": exact_str(self.delta0),
        }


@register_profile("subsampled")
def _build(options: Mapping[str, str]) -> SubsampledProfile:
    for key in ("rate", "eps0", "delta0"):
        if key not in options:
            raise InvalidParameter(
                key, "--mechanism subsampled needs --sampling-rate Q --eps0 E0 --delta0 D0"
            )
    q = V.half_open_unit("rate", options["rate"])
    e0 = V.eps0("eps0", options["eps0"])
    d0 = V.closed_unit("delta0", options["delta0"])
    if d0 == 1:
        raise InvalidParameter("delta0", "delta0=1 is no guarantee: must be in [0, 1)")
    return SubsampledProfile(q, e0, d0)
