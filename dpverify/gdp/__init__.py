"""Gaussian differential privacy: delta_mu, mu_GDP (GDPT Sec 3, Def 4.1), the GDP
transformation, staircase head bounds, tails and mu-GDP certificates (GDPT Sec 4-5)."""

from .certify import GdpCertificate, certify_gdp
from .delta_mu import delta_mu, delta_mu_ball
from .eps_for_delta import eps_for_delta
from .mu_gdp import mu_gdp
from .staircase import HeadBound, head_bound
from .tail import TailResult, certify_tail, clip_and_rectify_scale, tail_model
from .thm51 import check_thm51, thm51_mu
from .transform import gdpt

__all__ = [
    "GdpCertificate",
    "HeadBound",
    "TailResult",
    "certify_gdp",
    "certify_tail",
    "check_thm51",
    "clip_and_rectify_scale",
    "delta_mu",
    "delta_mu_ball",
    "eps_for_delta",
    "gdpt",
    "head_bound",
    "mu_gdp",
    "tail_model",
    "thm51_mu",
]
