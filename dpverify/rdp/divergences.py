"""Renyi divergences of the basic mechanisms, as certified curves.

The Renyi divergence of order alpha (alpha > 0, alpha != 1) is
D_alpha(P || Q) = (1 / (alpha - 1)) log E_Q[(dP/dQ)^alpha]   (ABC Sec II; Mironov 2017).
Every curve here works with f(alpha) = (alpha - 1) D_alpha = log E_Q[(dP/dQ)^alpha],
the cumulant generating function of the privacy loss at alpha - 1. Two facts
are used throughout and are what make the order optimisation of
:mod:`dpverify.rdp.infimum` certifiable over *all* real alpha > 1:

* f is convex in alpha (log of a moment generating function; ABC (4), van
  Erven & Harremoes 2014 Cor 2), and f(1) = 0;
* D_alpha is nondecreasing in alpha (van Erven & Harremoes Thm 3).

Closed forms (alpha > 0, alpha != 1, derivations in the docstrings):

* Gaussian (N(0,1), N(mu,1)):   D_alpha = alpha mu^2 / 2.
* Laplace (Lap(0,b), Lap(D,b)), lam = D/b:
  f = log( alpha/(2 alpha - 1) e^{(alpha-1) lam} + (alpha-1)/(2 alpha - 1) e^{-alpha lam} )
  for alpha != 1/2 (Mironov 2017 Table II), and D_{1/2} = lam - 2 log(1 + lam/2).
* Randomized response ((p, 1-p), (1-p, p)):
  f = log( p^alpha (1-p)^{1-alpha} + (1-p)^alpha p^{1-alpha} )     (LT Thm 3.5)
  and pure eps0-DP, whose worst pair is RR with p = e^eps0 / (1 + e^eps0)
  (LT Thm 4.5 with delta = 0; RDP is monotone under post-processing), so
  f = log( (e^{alpha eps0} + e^{(1-alpha) eps0}) / (1 + e^eps0) ).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Mapping, Protocol, runtime_checkable

from flint import acb, arb

from .. import _validate as V
from ..ball import ball
from ..errors import InvalidParameter

if TYPE_CHECKING:
    from ..verdict import Enclosure

__all__ = [
    "RdpCurve",
    "GaussianCurve",
    "LaplaceCurve",
    "RandomizedResponseCurve",
    "PureDpCurve",
    "rr_cgf_complex",
    "renyi_divergence",
]


@runtime_checkable
class RdpCurve(Protocol):
    """An RDP curve: f(alpha) = (alpha - 1) D_alpha, convex, f(1) = 0,
    D_alpha nondecreasing.

    ``cgf(alpha)`` returns a ball containing f(a) for every a in the ball
    ``alpha`` (callers pass exact points; a curve may restrict its domain,
    e.g. alpha > 1). ``kl_lower()`` is a lower bound (>= 0) of
    lim_{alpha -> 1+} D_alpha = KL, hence of D_alpha for every alpha > 1.
    ``min_order()`` is the smallest order the curve is defined for (0 or 1).
    """

    name: str

    def cgf(self, alpha: arb) -> arb: ...

    def kl_lower(self) -> arb: ...

    def params(self) -> Mapping[str, str]: ...


def divergence_ball(curve: RdpCurve, alpha: arb) -> arb:
    """D_alpha = f(alpha) / (alpha - 1) for a ball alpha not containing 1."""
    return curve.cgf(alpha) / (alpha - 1)


@dataclass(frozen=True)
class GaussianCurve:
    """Gaussian mechanism with GDP parameter mu = sensitivity / sigma:
    D_alpha = alpha mu^2 / 2 for every alpha > 0 (Mironov 2017 Prop 7)."""

    mu: Fraction
    source_params: Mapping[str, str] = field(default_factory=dict)
    name: str = "gaussian"

    def __post_init__(self) -> None:
        object.__setattr__(self, "mu", V.nonnegative("mu", self.mu))

    def cgf(self, alpha: arb) -> arb:
        m = ball(self.mu)
        return (alpha - 1) * alpha * m * m / 2

    def kl_lower(self) -> arb:
        m = ball(self.mu)
        return m * m / 2

    def params(self) -> Mapping[str, str]:
        return dict(self.source_params)


@dataclass(frozen=True)
class LaplaceCurve:
    """Laplace mechanism, lam = sensitivity / scale (Mironov 2017 Table II).

    Derivation: with x in units of b, E_Q[(p/q)^alpha] = int (1/2)
    e^{-alpha|x| - (1-alpha)|x - lam|} dx; splitting at 0 and lam gives
    (alpha e^{(alpha-1) lam} + (alpha-1) e^{-alpha lam}) / (2 alpha - 1)
    (the middle piece is ((e^{(alpha-1)lam} - e^{-alpha lam}) / (2(2alpha-1)))
    doubled by symmetry of the tails). At alpha = 1/2 the limit is
    e^{-lam/2}(1 + lam/2). Valid for every alpha > 0.
    """

    lam: Fraction
    source_params: Mapping[str, str] = field(default_factory=dict)
    name: str = "laplace"

    def __post_init__(self) -> None:
        object.__setattr__(self, "lam", V.nonnegative("lam", self.lam))

    def cgf(self, alpha: arb) -> arb:
        lam = ball(self.lam)
        if alpha.is_exact() and alpha == arb(0.5):
            return -lam / 2 + (lam / 2).log1p()
        d = 2 * alpha - 1
        inner = alpha / d * ((alpha - 1) * lam).exp() + (alpha - 1) / d * (-alpha * lam).exp()
        return inner.log()

    def kl_lower(self) -> arb:
        # KL = lam + e^{-lam} - 1 (derivative of f at alpha = 1)
        lam = ball(self.lam)
        return lam + (-lam).expm1()

    def params(self) -> Mapping[str, str]:
        return dict(self.source_params)


@dataclass(frozen=True)
class RandomizedResponseCurve:
    """Binary randomized response P = (p, 1-p), Q = (1-p, p), 1/2 <= p < 1:
    f(alpha) = log(p^alpha (1-p)^{1-alpha} + (1-p)^alpha p^{1-alpha})
    (LT Thm 3.5; the sum is E_Q[(P/Q)^alpha] over the two outputs)."""

    p: Fraction
    source_params: Mapping[str, str] = field(default_factory=dict)
    name: str = "rr"

    def __post_init__(self) -> None:
        p = V.real("p", self.p)
        if not Fraction(1, 2) <= p < 1:
            raise InvalidParameter("p", f"p={self.p!r} must be in [1/2, 1)")
        object.__setattr__(self, "p", p)

    def cgf(self, alpha: arb) -> arb:
        p = ball(self.p)
        r = p / (1 - p)  # likelihood ratio on the first output
        # E_Q[(P/Q)^alpha] = (1-p) r^alpha + p r^{-alpha}
        return ((1 - p) * (alpha * r.log()).exp() + p * (-alpha * r.log()).exp()).log()

    def kl_lower(self) -> arb:
        p = ball(self.p)
        return (2 * p - 1) * (p / (1 - p)).log()

    def params(self) -> Mapping[str, str]:
        return dict(self.source_params)


@dataclass(frozen=True)
class PureDpCurve:
    """Worst case of eps0-DP: randomized response with p = e^eps0/(1+e^eps0).
    f(alpha) = log((e^{alpha eps0} + e^{(1-alpha) eps0}) / (1 + e^eps0))."""

    eps0: Fraction
    source_params: Mapping[str, str] = field(default_factory=dict)
    name: str = "pure"

    def __post_init__(self) -> None:
        object.__setattr__(self, "eps0", V.nonnegative("eps0", self.eps0))

    def cgf(self, alpha: arb) -> arb:
        if self.eps0 == 0:  # P = Q, so f is exactly 0 (the formula's two log(2) balls never cancel)
            return arb(0)
        e = ball(self.eps0)
        # log(e^{a e} + e^{(1-a) e}) - log(1 + e^e), written to stay finite for huge alpha
        top = alpha * e + ((1 - 2 * alpha) * e).exp().log1p()
        return top - e.exp().log1p()

    def kl_lower(self) -> arb:
        e = ball(self.eps0)
        return e * (e / 2).tanh()  # (2p - 1) eps0 with 2p - 1 = tanh(eps0/2)

    def params(self) -> Mapping[str, str]:
        return dict(self.source_params)


def rr_cgf_complex(p: Fraction, alpha: acb) -> acb:
    """E_Q[(P/Q)^alpha] of randomized response at a complex order alpha
    (LT Thm 3.5: the Renyi "curve" extends to an entire function of alpha):
    (1 - p) r^alpha + p r^{-alpha} with r = p / (1 - p) > 0, so
    r^alpha = exp(alpha log r) is entire in alpha."""
    pb = acb(ball(p))
    lr = acb((ball(p) / (1 - ball(p))).log())
    return (1 - pb) * (alpha * lr).exp() + pb * (-alpha * lr).exp()


def renyi_divergence(curve: RdpCurve, alpha: object, digits: int = 15) -> "Enclosure":
    """Enclosure of D_alpha of ``curve`` at an exact order alpha > 0, alpha != 1
    (alpha > 1 only for curves defined there only, e.g. the subsampled
    Gaussian), with relative width <= 10^-digits."""
    from .. import _validate as V
    from ..ball import refine
    from ..errors import InvalidParameter
    from ..limits import MAX_RDP_ORDER
    from ..verdict import Enclosure

    a = V.positive("alpha", alpha)
    if a == 1:
        raise InvalidParameter("alpha", "alpha=1 is not allowed: orders must be in (0, 1) or (1, inf)")
    if a > MAX_RDP_ORDER:
        raise InvalidParameter("alpha", f"alpha={alpha!r} must be <= {MAX_RDP_ORDER}")
    check = getattr(curve, "check_order", None)  # a curve's own cap on its orders (before any work)
    if check is not None:
        check(a)
    digits = V.digits(digits)
    x, bits = refine(
        lambda: curve.cgf(ball(a)) / (ball(a) - 1),
        digits=digits + 1,
        what=f"D_alpha of {curve.name} at alpha={a}",
    )
    return Enclosure.from_ball(x, digits, bits)
