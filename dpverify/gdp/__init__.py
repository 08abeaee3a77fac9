"""Gaussian differential privacy: delta_mu, mu_GDP (GDPT Sec 3, Def 4.1)."""

from .delta_mu import delta_mu, delta_mu_ball
from .eps_for_delta import eps_for_delta
from .mu_gdp import mu_gdp

__all__ = ["delta_mu", "delta_mu_ball", "eps_for_delta", "mu_gdp"]
