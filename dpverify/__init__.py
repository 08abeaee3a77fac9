"""dpverify: certified differential-privacy accounting.

Every quantity is returned as an :class:`Enclosure` proven to contain the true
value for the exact inputs; every check as a three-valued :class:`Verdict`.
"""

from ._version import __version__
from .ball import parse_exact
from .errors import (
    CertificateRejected,
    DpverifyError,
    InvalidParameter,
    MalformedCertificate,
    PrecisionExhausted,
    Undecided,
)
from .composition import EpsDelta, compose_delta, compose_eps, compose_eps_grid
from .dp import implies, rr64_check
from .dp.sigma import refine_sigma
from .gdp import certify_gdp, check_thm51, delta_mu, eps_for_delta, gdpt, head_bound, mu_gdp
from .mechanisms.finite import FiniteMechanism
from .mechanisms.randomized_response import RandomizedResponse
from .pld import GaussianSteps, Neighboring, PldAnswer, dpsgd_delta, dpsgd_epsilon
from .rdp import RdpEpsilon, SubsampledGaussianCurve, rdp_epsilon, renyi_divergence
from .verdict import Enclosure, Outcome, Verdict
from .events import EventAnswer, check_claim, delta, epsilon, supports
from .calibrate import Calibration, calibrate  # noqa: E402  (the function shadows the subpackage name)

__all__ = [
    "CertificateRejected",
    "DpverifyError",
    "Enclosure",
    "GaussianSteps",
    "InvalidParameter",
    "MalformedCertificate",
    "Neighboring",
    "Outcome",
    "PldAnswer",
    "PrecisionExhausted",
    "Undecided",
    "Verdict",
    "__version__",
    "delta_mu",
    "eps_for_delta",
    "dpsgd_delta",
    "dpsgd_epsilon",
    "mu_gdp",
    "parse_exact",
    # (eps, delta) world, composition (issue 4)
    "EpsDelta",
    "FiniteMechanism",
    "RandomizedResponse",
    "compose_delta",
    "compose_eps",
    "compose_eps_grid",
    "implies",
    "refine_sigma",
    "rr64_check",
    # GDP transformation (issue 3)
    "certify_gdp",
    "check_thm51",
    "gdpt",
    "head_bound",
    # Renyi DP (issue 7)
    "RdpEpsilon",
    "SubsampledGaussianCurve",
    "rdp_epsilon",
    "renyi_divergence",
    # event trees and accountants (issue 12)
    "EventAnswer",
    "check_claim",
    "delta",
    "epsilon",
    "supports",
    # certified calibration (issue 13)
    "Calibration",
    "calibrate",
]
