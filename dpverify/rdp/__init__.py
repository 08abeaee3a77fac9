"""Renyi differential privacy: certified Renyi curves of mechanisms, their
composition, and RDP -> (eps, delta) conversions optimised over all real
orders (ABC Thm 1, 3, 4, Lemma 1; Balle et al. 2020; Mironov 2017).

Stable API (used by the oracle feature):

* curves: :class:`GaussianCurve`, :class:`LaplaceCurve`,
  :class:`RandomizedResponseCurve`, :class:`PureDpCurve`,
  :class:`SubsampledGaussianCurve`; :func:`compose`; :func:`curve_from_spec`;
* :func:`renyi_divergence` (curve, alpha) -> Enclosure of D_alpha;
* :func:`rdp_epsilon` (curve, delta, conversion) -> RdpEpsilon (enclosure of
  inf_alpha eps, and the order attaining its upper end);
* :func:`conversion_eps` / :func:`conversion_delta` at one order.
"""

from .composition import ComposedCurve, compose
from .divergences import (
    GaussianCurve,
    LaplaceCurve,
    PureDpCurve,
    RandomizedResponseCurve,
    RdpCurve,
    renyi_divergence,
)
from .specs import curve_from_spec
from .subsampled_gaussian import SubsampledGaussianCurve
from .conversions import CONVERSIONS, conversion_delta, conversion_eps
from .infimum import RdpEpsilon, rdp_epsilon

__all__ = [
    "CONVERSIONS",
    "ComposedCurve",
    "GaussianCurve",
    "LaplaceCurve",
    "PureDpCurve",
    "RandomizedResponseCurve",
    "RdpCurve",
    "RdpEpsilon",
    "SubsampledGaussianCurve",
    "compose",
    "conversion_delta",
    "conversion_eps",
    "curve_from_spec",
    "rdp_epsilon",
    "renyi_divergence",
]
