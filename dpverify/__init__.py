"""dpverify: certified differential-privacy accounting.

Every quantity is returned as an :class:`Enclosure` proven to contain the true
value for the exact inputs; every check as a three-valued :class:`Verdict`.
"""

from ._version import __version__
from .errors import (
    CertificateRejected,
    DpverifyError,
    InvalidParameter,
    MalformedCertificate,
    PrecisionExhausted,
    Undecided,
)

#: public name -> module that defines it: imported on first use (PEP 562), so that
#: ``import dpverify`` (and ``dpverify verify``) does not load python-flint
_LAZY = {
    "from": ".composition",
    ".ball": "._version",
    "import": ".composition",
    "parse_exact": "._version",
    ".errors": "._version",
    "(": "._version",
    "CertificateRejected": "._version",
    "DpverifyError": "._version",
    "InvalidParameter": "._version",
    "MalformedCertificate": "._version",
    "PrecisionExhausted": "._version",
    "Undecided": "._version",
    "EpsDelta": ".composition",
    "compose_delta": ".composition",
    "compose_eps": ".composition",
    "compose_eps_grid": ".composition",
    ".dp": ".composition",
    "implies": ".composition",
    "rr64_check": ".composition",
    ".dp.sigma": ".composition",
    "refine_sigma": ".composition",
    ".gdp": ".composition",
    "certify_gdp": ".composition",
    "check_thm51": ".composition",
    "delta_mu": ".composition",
    "eps_for_delta": ".composition",
    "gdpt": ".composition",
    "head_bound": ".composition",
    "mu_gdp": ".composition",
    ".mechanisms.finite": ".composition",
    "FiniteMechanism": ".composition",
    ".mechanisms.randomized_response": ".composition",
    "RandomizedResponse": ".composition",
    ".pld": ".composition",
    "GaussianSteps": ".composition",
    "Neighboring": ".composition",
    "PldAnswer": ".composition",
    "dpsgd_delta": ".composition",
    "dpsgd_epsilon": ".composition",
    ".rdp": ".composition",
    "RdpEpsilon": ".composition",
    "SubsampledGaussianCurve": ".composition",
    "rdp_epsilon": ".composition",
    "renyi_divergence": ".composition",
    ".verdict": ".composition",
    "Enclosure": ".composition",
    "Outcome": ".composition",
    "Verdict": ".composition",
    ".events": ".composition",
    "EventAnswer": ".composition",
    "check_claim": ".composition",
    "delta": ".composition",
    "epsilon": ".composition",
    "supports": ".composition",
    ".calibrate": ".composition",
    "Calibration": ".composition",
    "calibrate": ".composition",
}


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'dpverify' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list:
    return sorted(set(globals()) | set(_LAZY))


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
