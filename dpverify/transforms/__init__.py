"""Transforms of privacy-loss distributions: characteristic functions (AFA
Def 12) and their inversion (AFA Lemma 18) in ``characteristic``; the Laplace-
transform identities of LT Sec 3 (Thm 3.2/3.3/3.5) in ``laplace``."""

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
