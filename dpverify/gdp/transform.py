"""The Gaussian differential privacy transformation G_f(eps) = mu_GDP(eps, f(eps)).

GDPT Def 4.1: for a non-increasing profile f with f(0) <= 1, G_f maps eps >= 0
to the unique mu with delta_mu(eps) = f(eps). Conventions at the ends of the
range (both limits of mu_GDP, :mod:`dpverify.gdp.mu_gdp`): f(eps) = 0 gives
G_f(eps) = 0 (delta_mu(eps) -> 0 as mu -> 0 for eps >= 0), and f(eps) >= 1
gives +inf (delta_mu(eps) < 1 for every mu, so no mu-GDP bound holds at eps).

The enclosure uses only monotonicity: mu_GDP is strictly increasing in its
second argument (d delta_mu / d mu > 0, GDPT App A.5), so for f(eps) in
[y_lo, y_hi], G_f(eps) lies in [mu_GDP(eps, y_lo), mu_GDP(eps, y_hi)], each end
isolated with proof at exact rational points.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Optional

from flint import arb

from .. import _validate as V
from .._validate import ExactInput
from ..ball import endpoints, working_precision
from ..errors import InvalidParameter
from ..mechanisms.base import Profile, profile_delta
from ..verdict import Enclosure
from .mu_gdp import mu_gdp_exact

__all__ = ["gdpt", "gdpt_bounds", "mu_bracket", "INF"]

INF = arb("inf")


def mu_bracket(eps: Fraction, y: arb, digits: int) -> tuple[arb, arb]:
    """Exact points lo <= mu_GDP(eps, y) <= hi for an exact point y, of relative width
    <= 10^-digits (:func:`dpverify.gdp.mu_gdp.mu_gdp_exact`); [0, 0] and [+inf, +inf] at the
    range ends."""
    if y <= 0:
        return arb(0), arb(0)
    if y >= 1:
        return INF, INF
    enc = mu_gdp_exact(eps, y, digits)  # y stays an arb point: it may be 2^-(10^9)
    return enc.lo, enc.hi


def mu_of(eps: Fraction, y: arb, digits: int, upper: bool) -> arb:
    """An exact point bounding mu_GDP(eps, y) from below (upper=False) or
    above (upper=True) for an exact point y; 0 and +inf at the range ends."""
    return mu_bracket(eps, y, digits)[upper]


def gdpt_bounds(eps: Fraction, f_ball: arb, digits: int) -> tuple[arb, arb]:
    """(lo, hi) exact points with lo <= G_f(eps) <= hi, given a ball of f(eps)."""
    if not f_ball.is_finite():
        return arb(0), INF
    y_lo, y_hi = endpoints(f_ball)
    return mu_of(eps, y_lo, digits, False), mu_of(eps, y_hi, digits, True)


def gdpt(profile: Profile, eps: ExactInput, digits: int = 15, *, f_digits: Optional[int] = None) -> Enclosure:
    """Enclosure of G_f(eps) = mu_GDP(eps, f(eps)) for eps >= 0 (GDPT Def 4.1).

    f(eps) is enclosed to relative width 10^-(digits+3) first, then both ends
    are mapped through mu_GDP (monotone in delta, GDPT App A.5). The result
    is always sound; its width is about that of f(eps) times
    d mu_GDP / d delta plus the root brackets. hi is +inf when f(eps) >= 1.
    """
    e = V.nonnegative("eps", eps)
    d = V.digits(digits)
    f = profile_delta(profile, e, f_digits or d + 3)
    with working_precision(max(128, int(d * 3.4) + 64)):
        f_ball = f.lo.union(f.hi)
        if f.lo.is_zero() and f.hi.is_zero():
            return Enclosure(arb(0), arb(0), d, f.precision_bits)
        lo, hi = gdpt_bounds(e, f_ball, d)
    if not lo.is_finite():
        raise InvalidParameter(
            "eps", f"the profile is >= 1 at eps={e}: G_f(eps) = +inf (no mu-GDP bound holds)"
        )
    return Enclosure(lo, hi, d, f.precision_bits)
