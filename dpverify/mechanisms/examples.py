"""The two trade-off examples of GDPT Sec 2, naive and refined (GDPT Sec 3, App B).

* ``sgd-example``: noise sigma = A eps^-1 sqrt(log(B/delta)) with A = 2, B = 1,
  sigma = 2. Inverting the trade-off gives the *naive* profile
  delta^(eps) = B exp(-(sigma eps / A)^2) = exp(-eps^2).
* ``icea-example``: ICEA is (eps, delta)-DP when m > 10 log(n/(eps delta)),
  m = 20, n = 4, so delta^(eps) = K / eps with K = n e^{-m/10} = 4 e^{-2},
  capped at 1.

*Refined* (GDPT App B): delta(eps) = inf_{eps0 >= eps} g(eps, eps0) with
g(eps, eps0) = delta^(eps0) + (1 - delta^(eps0)) (e^eps0 - e^eps)/(1 + e^eps0)
(GDPT Thm 3.1 applied to every naive pair). Derivation (checked against the
paper): dg/deps0 = (1+e^eps)/(1+e^eps0)^2 k(eps0) with
k(x) = delta^'(x)(1 + e^x) + e^x (1 - delta^(x)), whose sign does not depend on
eps. For both examples k < 0 before a point eps_i and > 0 after, so the
infimum is at eps0 = max(eps, eps_i): the refined profile is
min(worst case of (eps_i, delta^(eps_i))-DP at eps, delta^(eps)). GDPT prints
eps2 ~ 1.187, delta2 ~ 0.244 (sgd) and eps3 ~ 1.159, delta3 ~ 0.468 (icea);
eps_i is isolated here with a certified sign change of k (bracket [1, 3/2]).
Soundness does not rest on k having a single root: for *any* eps_i the
minimum above is a valid privacy guarantee (each term is implied by a naive
pair), and it is the App B infimum when the sign pattern holds.

These are guarantees, not mechanisms with a known pair, so the profile is
only meaningful for eps >= 0. For eps < 0 we return the worst case of the
(0, delta(0))-DP guarantee (GDPT Thm 3.1 / its reversal), the smallest
profile consistent with what the guarantee implies.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Callable, Mapping

from flint import arb, ctx

from ..ball import ball, isolate_increasing_root, working_precision
from .approx_dp import approx_dp_delta_ball
from .base import register_profile

__all__ = ["ExampleProfile", "guarantee_profile", "refinement_point", "SGD_A", "SGD_B", "SGD_SIGMA", "ICEA_M", "ICEA_N"]

SGD_A, SGD_B, SGD_SIGMA = Fraction(2), Fraction(1), Fraction(2)
ICEA_M, ICEA_N = Fraction(20), Fraction(4)


def _sgd_naive(eps: arb) -> arb:
    """B exp(-(sigma eps / A)^2) = exp(-eps^2), for eps >= 0."""
    s = ball(SGD_SIGMA) * eps / ball(SGD_A)
    return ball(SGD_B) * (-(s * s)).exp()


def _sgd_naive_d(eps: arb) -> arb:
    s2 = (ball(SGD_SIGMA) / ball(SGD_A)) ** 2
    return -2 * s2 * eps * _sgd_naive(eps)


def icea_k() -> arb:
    """K = n e^{-m/10} (= 4 e^-2 for the paper's m = 20, n = 4)."""
    return ball(ICEA_N) * (-ball(ICEA_M) / 10).exp()


def guarantee_profile(nonneg: Callable[[arb], arb], eps: arb) -> arb:
    """A guarantee's profile at any real eps: ``nonneg`` for eps >= 0, and
    below 0 the worst case of the (0, delta(0))-DP guarantee (GDPT Thm 3.1);
    a ball straddling 0 joins both branches (the profile is continuous)."""
    if eps >= 0:
        return nonneg(eps)
    zero = arb(0)
    below = approx_dp_delta_ball(zero, nonneg(zero), eps)
    if eps < 0:
        return below
    return below.union(nonneg(zero.union(arb(eps.upper()))))


def _min_ball(x: arb, y: arb) -> arb:
    """Ball containing min(s, t) for every s in x, t in y. When the order is
    certain the smaller ball itself (no cancellation); else (x + y - |x - y|)/2."""
    if x <= y:
        return x
    if y <= x:
        return y
    return (x + y - abs(x - y)) / 2


def _icea_naive(eps: arb) -> arb:
    """min(1, K / eps) for eps >= 0 (the trade-off gives nothing below K)."""
    if eps <= 0:
        return arb(1)
    if not eps > 0:  # ball touching 0: the values run from min(1, K/hi) up to 1
        hi = arb(eps.upper())
        return _min_ball(arb(1), icea_k() / hi).union(arb(1))
    return _min_ball(arb(1), icea_k() / eps)


def _icea_naive_d(eps: arb) -> arb:
    return -icea_k() / (eps * eps)


_NAIVE: dict[str, tuple[Callable[[arb], arb], Callable[[arb], arb]]] = {
    "sgd-example": (_sgd_naive, _sgd_naive_d),
    "icea-example": (_icea_naive, _icea_naive_d),
}

_POINT_CACHE: dict[tuple[str, int], tuple[arb, arb]] = {}


def refinement_point(name: str, digits: int = 40) -> tuple[arb, arb]:
    """Certified bracket [a, b] (exact points) of eps_i, the sign change of
    k(x) = delta^'(x)(1 + e^x) + e^x (1 - delta^(x)) in [1, 3/2] (GDPT App B)."""
    key = (name, digits)
    if key not in _POINT_CACHE:
        f, fd = _NAIVE[name]

        def k(x: arb) -> arb:
            ex = x.exp()
            return fd(x) * (1 + ex) + ex * (1 - f(x))

        a, b, _ = isolate_increasing_root(
            k, arb(1), arb(3) / 2, digits=digits, what=f"eps_i of {name} (GDPT App B)"
        )
        _POINT_CACHE[key] = (a, b)
    return _POINT_CACHE[key]


@dataclass(frozen=True)
class ExampleProfile:
    """Naive or refined profile of ``sgd-example`` / ``icea-example``."""

    name: str
    refined: bool = False
    nonincreasing: bool = True
    source_params: Mapping[str, str] = field(default_factory=dict)

    def naive(self, eps: arb) -> arb:
        return _NAIVE[self.name][0](eps)

    def refinement(self) -> tuple[arb, arb]:
        """Balls of (eps_i, delta^(eps_i)) at the current precision."""
        digits = max(30, int(ctx.prec * 0.302) + 10)
        a, b = refinement_point(self.name, digits)
        with working_precision(max(ctx.prec, 64)):
            ei = a.union(b)
        return ei, self.naive(ei)

    def delta(self, eps: arb) -> arb:
        return guarantee_profile(self._nonneg, eps)

    def _nonneg(self, eps: arb) -> arb:
        naive = self.naive(eps)
        if not self.refined:
            return naive
        ei, di = self.refinement()
        worst = approx_dp_delta_ball(ei, di, eps)
        return _min_ball(worst, naive)

    def params(self) -> Mapping[str, str]:
        return {"refined": "true"} if self.refined else {}


def _builder(name: str) -> Callable[[Mapping[str, str]], ExampleProfile]:
    def build(options: Mapping[str, str]) -> ExampleProfile:
        refined = str(options.get("refined", "")).lower() in ("true", "1", "yes")
        return ExampleProfile(name, refined)

    return build


register_profile("sgd-example")(_builder("sgd-example"))
register_profile("icea-example")(_builder("icea-example"))
