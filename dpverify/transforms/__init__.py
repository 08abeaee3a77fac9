"""Transforms of privacy-loss distributions: characteristic functions (AFA
Def 12) and their inversion (AFA Lemma 18)."""

from .characteristic import (
    FinitePair,
    compose_phi,
    gaussian_phi,
    gaussian_pld_cdf,
    laplace_phi,
    levy_cdf_estimate,
    rr_phi,
)

__all__ = [
    "FinitePair",
    "compose_phi",
    "gaussian_phi",
    "gaussian_pld_cdf",
    "laplace_phi",
    "levy_cdf_estimate",
    "rr_phi",
]
