"""Map a CLI mechanism spec (``--mechanism NAME`` + options) to an RDP curve.

gaussian --mu M | --noise-multiplier S [--sensitivity D];  laplace --scale B
[--sensitivity D];  rr --p P;  pure --eps0 E0;  subsampled-gaussian
--noise-multiplier S --sampling-rate Q. Out-of-range options raise InvalidParameter
naming the option.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Callable, Mapping

from .. import _validate as V
from ..errors import InvalidParameter
from ..mechanisms.base import MechanismSpec, call_builder
from ..mechanisms.registry import build_profile
from .divergences import GaussianCurve, LaplaceCurve, PureDpCurve, RandomizedResponseCurve, RdpCurve
from .subsampled_gaussian import SubsampledGaussianCurve

__all__ = ["curve_from_spec", "RDP_MECHANISMS"]


def _gaussian(o: Mapping[str, str]) -> RdpCurve:
    # the shared Gaussian builder validates --mu / --noise-multiplier / --sensitivity
    prof = build_profile(MechanismSpec("gaussian", o))
    return GaussianCurve(prof.mu, dict(prof.params()))


def _laplace(o: Mapping[str, str]) -> RdpCurve:
    # one parser for the Laplace options: the profile builder's (same checks)
    prof = build_profile(MechanismSpec("laplace", o))
    return LaplaceCurve(prof.eps0, dict(prof.params()))


def _rr(o: Mapping[str, str]) -> RdpCurve:
    if "p" not in o:
        raise InvalidParameter("p", "--mechanism rr needs --p P in [1/2, 1)")
    p = V.real("p", o["p"])
    if not Fraction(1, 2) <= p < 1:
        raise InvalidParameter("p", f"p={o['p']!r} must be in [1/2, 1)")
    return RandomizedResponseCurve(p, {"p": o["p"]})


def _pure(o: Mapping[str, str]) -> RdpCurve:
    if "eps0" not in o:
        raise InvalidParameter("eps0", "--mechanism pure needs --eps0 E0 (in [0, 1e6])")
    e = V.eps0("eps0", o["eps0"])
    return PureDpCurve(e, {"eps0": o["eps0"]})


def _subsampled(o: Mapping[str, str]) -> RdpCurve:
    if "noise_multiplier" not in o or "rate" not in o:
        raise InvalidParameter(
            "noise_multiplier",
            "--mechanism subsampled-gaussian needs --noise-multiplier S (> 0) and --sampling-rate Q in (0, 1]",
        )
    # (0, 1e100], the range of every sampled Gaussian's sigma: 1e1000 was an internal error (exit 4)
    s = V.noise_multiplier("noise_multiplier", o["noise_multiplier"])
    q = V.half_open_unit("rate", o["rate"])
    return SubsampledGaussianCurve(s, q, {"noise_multiplier": o["noise_multiplier"], "rate": o["rate"]})


RDP_MECHANISMS: dict[str, Callable[[Mapping[str, str]], RdpCurve]] = {
    "gaussian": _gaussian,
    "laplace": _laplace,
    "pure": _pure,
    "rr": _rr,
    "subsampled-gaussian": _subsampled,
}


def curve_from_spec(spec: MechanismSpec) -> RdpCurve:
    """The RDP curve of a named mechanism (one step)."""
    if spec.name not in RDP_MECHANISMS:
        raise InvalidParameter(
            "mechanism",
            f"mechanism={spec.name!r} has no RDP curve here; known: {', '.join(sorted(RDP_MECHANISMS))}",
        )
    return call_builder(RDP_MECHANISMS[spec.name], spec)
