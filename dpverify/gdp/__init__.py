"""Gaussian differential privacy: delta_mu, mu_GDP (GDPT Sec 3, Def 4.1)."""

from .delta_mu import delta_mu, delta_mu_ball
from .mu_gdp import mu_gdp

__all__ = ["delta_mu", "delta_mu_ball", "mu_gdp"]
