"""Composition of RDP curves: Renyi divergences of product pairs add.

For (P1 x P2, Q1 x Q2), E_Q[(dP/dQ)^alpha] factorises, so
f(alpha) = (alpha - 1) D_alpha adds; for adaptive composition the sum of the
per-step worst-case curves is an upper bound (Mironov 2017 Prop 1; ABC Sec IV:
T steps of an (alpha, gamma)-RDP mechanism are (alpha, T gamma)-RDP). A sum of
convex curves with f(1) = 0 and nondecreasing D_alpha keeps both properties,
so composed curves go through the same certified conversions.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Mapping, Sequence, Tuple

from flint import arb

from .. import _validate as V
from .divergences import RdpCurve
from ..limits import MAX_RDP_COMPOSITIONS

__all__ = ["ComposedCurve", "compose", "MAX_RDP_COMPOSITIONS"]

#: compositions are a multiplier, not a loop, so even huge counts cost nothing;
#: the cap only keeps inputs meaningful.


@dataclass(frozen=True)
class ComposedCurve:
    """sum_i k_i f_i(alpha) for curves f_i with multiplicities k_i >= 1."""

    parts: Tuple[Tuple[RdpCurve, int], ...]
    name: str = "composed"

    def cgf(self, alpha: arb) -> arb:
        total = arb(0)
        for curve, k in self.parts:
            total += k * curve.cgf(alpha)
        return total

    def check_order(self, alpha: Fraction) -> None:
        """Each part's refusal of the order (:meth:`.SubsampledGaussianCurve.check_order`)."""
        for curve, _ in self.parts:
            check = getattr(curve, "check_order", None)
            if check is not None:
                check(alpha)

    def kl_lower(self) -> arb:
        total = arb(0)
        for curve, k in self.parts:
            total += k * curve.kl_lower()
        return total

    def params(self) -> Mapping[str, str]:
        out: dict[str, str] = {}
        for i, (curve, k) in enumerate(self.parts):
            for key, val in curve.params().items():
                out[f"{i}.{key}" if len(self.parts) > 1 else key] = val
            out[f"{i}.compositions" if len(self.parts) > 1 else "compositions"] = str(k)
        return out


def compose(curves: Sequence[RdpCurve], counts: "Sequence[int] | None" = None) -> RdpCurve:
    """The curve of running each curve k times (adaptive composition upper bound;
    exact for non-adaptive products). ``counts`` defaults to 1 each."""
    counts = list(counts) if counts is not None else [1] * len(curves)
    if len(counts) != len(curves) or not curves:
        raise ValueError("compose needs one count per curve and at least one curve")
    parts = []
    for curve, k in zip(curves, counts):
        k = V.integer("compositions", k, lo=1, hi=MAX_RDP_COMPOSITIONS)
        parts.append((curve, k))
    if len(parts) == 1 and parts[0][1] == 1:
        return parts[0][0]
    return ComposedCurve(tuple(parts), name="+".join(c.name for c, _ in parts))
