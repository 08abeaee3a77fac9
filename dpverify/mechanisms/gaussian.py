"""The Gaussian mechanism: pair (N(0,1), N(mu,1)), mu = sensitivity / sigma.

Its privacy profile is delta_mu(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)
for every real eps (GDPT eq. 2, Thm 3.2; Balle & Wang 2018 Thm 8). The pair is
symmetric, so both directions have the same profile.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Mapping

from flint import arb

from .. import _validate as V
from ..ball import ball, normal_cdf, normal_pdf
from ..errors import InvalidParameter
from .base import register_profile

__all__ = ["GaussianProfile", "delta_mu_ball", "ddelta_dmu_ball", "ddelta_deps_ball"]


def delta_mu_ball(mu: arb, eps: arb) -> arb:
    """Ball enclosure of delta_mu(eps) at the current precision, for balls
    mu > 0 and eps (GDPT eq. 2). No accuracy guarantee: callers refine."""
    a = -eps / mu + mu / 2
    b = -eps / mu - mu / 2
    return normal_cdf(a) - eps.exp() * normal_cdf(b)


def ddelta_dmu_ball(mu: arb, eps: arb) -> arb:
    """d delta_mu(eps) / d mu = phi(-eps/mu + mu/2) > 0 (GDPT App A.5).

    Derivation: with a = -eps/mu + mu/2 and b = a - mu, b^2 - a^2 = 2 eps, so
    e^eps phi(b) = phi(a); the derivative phi(a)(eps/mu^2 + 1/2) -
    e^eps phi(b)(eps/mu^2 - 1/2) collapses to phi(a). Strict positivity is the
    uniqueness proof used by :func:`dpverify.gdp.mu_gdp`.
    """
    return normal_pdf(-eps / mu + mu / 2)


def ddelta_deps_ball(mu: arb, eps: arb) -> arb:
    """d delta_mu(eps) / d eps = -e^eps Phi(-eps/mu - mu/2) < 0 (the phi terms
    cancel by the same identity as in :func:`ddelta_dmu_ball`)."""
    return -eps.exp() * normal_cdf(-eps / mu - mu / 2)


@dataclass(frozen=True)
class GaussianProfile:
    """Profile of the Gaussian mechanism with GDP parameter ``mu`` > 0."""

    mu: Fraction
    source_params: Mapping[str, str]
    name: str = "gaussian"

    def delta(self, eps: arb) -> arb:
        return delta_mu_ball(ball(self.mu), eps)

    def params(self) -> Mapping[str, str]:
        return dict(self.source_params)


@register_profile("gaussian")
def _build(options: Mapping[str, str]) -> GaussianProfile:
    if "mu" in options and "noise_multiplier" in options:
        raise InvalidParameter("mu", "give either --mu or --noise-multiplier, not both")
    if "mu" in options:
        mu = V.positive("mu", options["mu"])
        return GaussianProfile(mu, {"mu": options["mu"]})
    if "noise_multiplier" in options:
        sigma = V.positive("noise_multiplier", options["noise_multiplier"])
        sens = V.positive("sensitivity", options.get("sensitivity", "1"))
        params = {"noise_multiplier": options["noise_multiplier"]}
        if "sensitivity" in options:
            params["sensitivity"] = options["sensitivity"]
        return GaussianProfile(sens / sigma, params)
    raise InvalidParameter("mu", "--mechanism gaussian needs --mu M or --noise-multiplier S")
