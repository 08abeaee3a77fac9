"""dpverify: certified differential-privacy accounting.

Every quantity is returned as an :class:`Enclosure` proven to contain the true
value for the exact inputs; every check as a three-valued :class:`Verdict`.
"""

from ._lazy import lazy_getattr as _lazy_getattr
from ._version import __version__
from .errors import (
    CertificateRejected,
    DpverifyError,
    InvalidParameter,
    MalformedCertificate,
    PrecisionExhausted,
    Undecided,
)

#: public name -> the module that defines it, imported on first use (PEP 562), so
#: that ``import dpverify`` (and with it ``dpverify verify``, whose re-checkers run
#: on mpmath alone) does not load python-flint
_LAZY = {
    **dict.fromkeys(("parse_exact",), ".ball"),
    **dict.fromkeys(("EpsDelta", "compose_delta", "compose_eps", "compose_eps_grid"), ".composition"),
    **dict.fromkeys(("implies", "rr64_check"), ".dp"),
    "refine_sigma": ".dp.sigma",
    **dict.fromkeys(("certify_gdp", "check_thm51", "delta_mu", "eps_for_delta", "gdpt", "head_bound",
                     "mu_gdp"), ".gdp"),
    "FiniteMechanism": ".mechanisms.finite",
    "RandomizedResponse": ".mechanisms.randomized_response",
    **dict.fromkeys(("GaussianSteps", "PldAnswer", "dpsgd_delta", "dpsgd_epsilon"), ".pld"),
    **dict.fromkeys(("Relation", "Direction"), ".relation"),
    **dict.fromkeys(("RdpEpsilon", "SubsampledGaussianCurve", "rdp_epsilon", "renyi_divergence"), ".rdp"),
    **dict.fromkeys(("Enclosure", "Outcome", "Verdict"), ".verdict"),
    **dict.fromkeys(("EventAnswer", "check_claim", "delta", "epsilon", "supports"), ".events"),
    # the function shadows its subpackage's name; the subpackage is callable too (calibrate/__init__)
    **dict.fromkeys(("Calibration", "calibrate"), ".calibrate"),
}


__getattr__ = _lazy_getattr(__name__, _LAZY, globals())


def __dir__() -> list:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "CertificateRejected",
    "DpverifyError",
    "Enclosure",
    "GaussianSteps",
    "InvalidParameter",
    "MalformedCertificate",
    "Relation",
    "Direction",
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
