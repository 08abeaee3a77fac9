"""dpverify: certified differential-privacy accounting.

Every quantity is returned as an :class:`Enclosure` proven to contain the true
value for the exact inputs (its ends as exact ``Fraction``s: ``lo_fraction``,
``hi_fraction``; as outward-rounded decimals: ``decimals()``); every check as a
three-valued :class:`Verdict`. Library errors are :class:`InvalidParameter`
naming the parameter (``exc.name``).
"""

from ._lazy import lazy_getattr as _lazy_getattr
from ._version import __version__
from .api import calibrate, dpsgd_delta, dpsgd_epsilon
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
    **dict.fromkeys(("Enclosure", "Outcome", "Verdict"), ".verdict"),
    "parse_exact": ".ball",
    **dict.fromkeys(("GaussianSteps", "PldAnswer"), ".pld"),
    **dict.fromkeys(("EventAnswer", "check_claim", "delta", "epsilon", "supports"), ".events"),
    **dict.fromkeys(("Calibration", "Template"), ".calibration"),
    "SampledCalibration": ".calibration.sampled",
    **dict.fromkeys(("delta_mu", "eps_for_delta", "mu_gdp", "certify_gdp", "check_thm51", "gdpt",
                     "head_bound"), ".gdp"),
    "GdpCertificate": ".gdp.certify",
    "HeadBound": ".gdp.staircase",
    **dict.fromkeys(("implies", "rr64_check"), ".dp"),
    "RR64Result": ".dp.rr64",
    **dict.fromkeys(("refine_sigma", "SigmaRefinement"), ".dp.sigma"),
    "FiniteMechanism": ".mechanisms.finite",
    "RandomizedResponse": ".mechanisms.randomized_response",
    **dict.fromkeys(("ComposeResult", "EpsDelta", "GridBounds", "compose_delta", "compose_eps",
                     "compose_eps_grid"), ".composition"),
    **dict.fromkeys(("Relation", "Direction"), ".relation"),
    **dict.fromkeys(("RdpEpsilon", "SubsampledGaussianCurve", "rdp_epsilon", "renyi_divergence"), ".rdp"),
}


__getattr__ = _lazy_getattr(__name__, _LAZY, globals())


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "__version__",
    # results and errors
    "Enclosure",
    "Outcome",
    "Verdict",
    "DpverifyError",
    "InvalidParameter",
    "PrecisionExhausted",
    "Undecided",
    "CertificateRejected",
    "MalformedCertificate",
    "parse_exact",
    # neighbouring relations and their directions
    "Relation",
    "Direction",
    # DP-SGD and event trees: the PLD accountant
    "dpsgd_epsilon",
    "dpsgd_delta",
    "PldAnswer",
    "GaussianSteps",
    "epsilon",
    "delta",
    "check_claim",
    "supports",
    "EventAnswer",
    # calibration of one free parameter
    "calibrate",
    "Calibration",
    "SampledCalibration",
    "Template",
    # Gaussian DP and the GDP transformation
    "delta_mu",
    "eps_for_delta",
    "mu_gdp",
    "certify_gdp",
    "GdpCertificate",
    "check_thm51",
    "gdpt",
    "head_bound",
    "HeadBound",
    # (eps, delta) guarantees: implication, randomized response, finite mechanisms
    "implies",
    "rr64_check",
    "RR64Result",
    "refine_sigma",
    "SigmaRefinement",
    "FiniteMechanism",
    "RandomizedResponse",
    # tight (eps, delta) composition
    "EpsDelta",
    "compose_delta",
    "compose_eps",
    "compose_eps_grid",
    "GridBounds",
    "ComposeResult",
    # Renyi DP
    "renyi_divergence",
    "rdp_epsilon",
    "RdpEpsilon",
    "SubsampledGaussianCurve",
]
