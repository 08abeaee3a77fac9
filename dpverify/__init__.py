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
from .gdp import delta_mu, mu_gdp
from .pld import GaussianSteps, Neighboring, PldAnswer, dpsgd_delta, dpsgd_epsilon
from .verdict import Enclosure, Outcome, Verdict

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
    "dpsgd_delta",
    "dpsgd_epsilon",
    "mu_gdp",
    "parse_exact",
]
