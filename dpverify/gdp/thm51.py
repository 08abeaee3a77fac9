"""GDPT Thm 5.1: every eps-DP algorithm is mu-GDP with mu = -2 Phi^-1(1/(1 + e^eps)), tightly.

Derivation (GDPT Sec 5.1): the worst case of eps0-DP has profile
f(eps) = (e^eps0 - e^eps)_+ / (1 + e^eps0) (Thm 3.1 with delta0 = 0), and
G_f is decreasing on [0, eps0) and 0 beyond, so sup G_f = G_f(0). At eps = 0,
delta_mu(0) = 2 Phi(mu/2) - 1 = (e^eps0 - 1)/(e^eps0 + 1) = tanh(eps0/2), so
G_f(0) = 2 Phi^-1(e^eps0 / (1 + e^eps0)) = -2 Phi^-1(1/(1 + e^eps0))
= 2 sqrt 2 erfinv(tanh(eps0/2)).

The check does not rely on the monotonicity argument: it encloses the
closed form (erfinv in arb) and, independently, the optimal mu of the worst
case by the staircase head bound on [0, eps0] plus the zero tail. HOLDS
means the closed form lies in the certified [mu_lo, mu_hi] (width <= margin):
eps0-DP implies (mu51 + margin)-GDP and no mu < mu51 - margin works
(tightness, attained at eps = 0). FAILS if the closed form lies outside.
"""

from __future__ import annotations

from fractions import Fraction

from flint import arb

from .. import _validate as V
from .._validate import ExactInput
from ..ball import ball, refine, working_precision
from ..errors import InvalidParameter
from ..mechanisms.approx_dp import ApproxDPProfile
from ..verdict import Enclosure, Outcome, Verdict
from .certify import certify_gdp

__all__ = ["thm51_mu", "check_thm51"]


def thm51_mu(eps0: ExactInput, digits: int = 15) -> Enclosure:
    """Enclosure of -2 Phi^-1(1/(1+e^eps0)) = 2 sqrt(2) erfinv(tanh(eps0/2)), eps0 > 0."""
    e = V.positive("eps0", eps0)
    if e > 700:
        raise InvalidParameter("eps0", f"eps0={eps0} must be in (0, 700]")
    d = V.digits(digits)
    x, bits = refine(lambda: 2 * arb(2).sqrt() * (ball(e) / 2).tanh().erfinv(), digits=d + 1,
                     what=f"Thm 5.1 mu for eps0={e}")
    return Enclosure.from_ball(x, d, bits)


def check_thm51(eps0: ExactInput, margin: ExactInput = "1e-6") -> Verdict:
    """Certified check of GDPT Thm 5.1 with tightness (module docstring)."""
    e = V.positive("eps0", eps0)
    mu51 = thm51_mu(e, 15)
    cert = certify_gdp(ApproxDPProfile(e, Fraction(0), "pure"), e, margin)
    if cert.status != "GDP":
        return Verdict(Outcome.UNDECIDED, f"the worst case of eps0-DP was not certified ({cert.tail.reason})",
                       {"thm51": mu51})
    head = cert.head.enclosure
    with working_precision(256):
        inside = mu51.lo >= head.lo and mu51.hi <= head.hi
        outside = mu51.hi < head.lo or mu51.lo > head.hi
    encs = {"thm51": mu51, "optimal_mu": head}
    if inside:
        return Verdict(Outcome.HOLDS, f"Thm 5.1's mu {mu51.short(10)} lies in the certified optimal mu "
                       f"{head.short(10)}: eps0-DP implies it (up to the margin) and it is tight", encs)
    if outside:
        return Verdict(Outcome.FAILS, f"Thm 5.1's mu {mu51.short(10)} is outside the certified optimal mu "
                       f"{head.short(10)}", encs)
    return Verdict(Outcome.UNDECIDED, "the enclosures overlap only partly", encs)
