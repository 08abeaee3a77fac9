"""eps_mu(delta): the unique eps with delta_mu(eps) = delta, certified.

d delta_mu / d eps = -e^eps Phi(-eps/mu - mu/2) < 0 (GDPT App A.5; see
:func:`dpverify.mechanisms.gaussian.ddelta_deps_ball`), delta_mu -> 1 as
eps -> -inf and -> 0 as eps -> +inf, so for every 0 < delta < 1 there is
exactly one real root. It is the tight epsilon of the mu-GDP Gaussian
mechanism (and of T-fold composition with mu = sqrt(T)/sigma) at delta.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Callable

from flint import arb

from .. import _validate as V
from .._validate import ExactInput
from ..ball import ball, isolate_increasing_root, sign_at
from ..errors import PrecisionExhausted
from ..limits import DEFAULT_MAX_BITS
from ..mechanisms.gaussian import delta_mu_ball
from ..verdict import Enclosure

__all__ = ["eps_for_delta"]


def eps_for_delta(mu: ExactInput, delta: ExactInput, digits: int = 15) -> Enclosure:
    """Enclosure of the eps with delta_mu(eps) = delta, relative width <= 10^-digits
    (absolute when the root is within 10^-digits of 0).

    Raises InvalidParameter for mu <= 0 or delta outside (0, 1).
    """
    m = V.positive("mu", mu)
    dl = V.open_unit("delta", delta)
    d = V.digits(digits)
    return eps_root(mu_curve(lambda: ball(m)), dl, d, f"mu={m}", from_zero=False)


def mu_curve(mu: Callable[[], arb]) -> Callable[[arb], arb]:
    """The curve delta_mu(eps) (GDPT eq. 2) of a mu made at the working precision by ``mu()``
    (an exact rational, or the square root of one: a composition of Gaussians)."""
    return lambda eps: delta_mu_ball(mu(), eps)


def eps_root(curve: Callable[[arb], arb], dl: Fraction, d: int, what: str, *, from_zero: bool,
             max_bits: int = DEFAULT_MAX_BITS) -> Enclosure:
    """:func:`eps_for_delta` of a strictly decreasing curve delta(eps) (ball in, ball out; a ball it
    cannot resolve is nan, which raises the precision), 0 < dl < 1: delta_mu (:func:`mu_curve`) or
    another.

    ``from_zero``: the curve is defined for eps >= 0 only; the root is then sought in [0, 2^127] and
    is [0, 0] where delta(0) <= dl is proved (the least eps >= 0 with delta(eps) <= dl). Otherwise
    it is sought in [-2^80, 2^127]. ``max_bits``: the precision cap of every sign decided."""

    def g(eps: arb) -> arb:
        # increasing in eps: log delta - log delta(eps)
        y = curve(eps)
        if y.is_zero():
            return arb("inf")  # the curve is 0 there (a bounded loss at or past its bound): below delta
        return ball(dl).log() - y.log()

    def s(eps: arb) -> int:
        return sign_at(g, eps, what=f"the eps_mu(delta) equation for {what}, delta={dl}", max_bits=max_bits)

    lo, hi = arb(-1), arb(1)
    if from_zero:
        lo = arb(0)
        if s(lo) >= 0:
            return Enclosure(lo, lo, d, 0)
    k = 0
    while s(lo) >= 0:
        lo = arb(-(2 ** (2 * k + 1)))
        k += 1
        if k > 40:
            raise PrecisionExhausted("eps below -2^80")
    k = 0
    # the bounds tested reach 2^127, as the re-check's (recheck.gdp.composed_gaussian_eps_iv, 1 .. 2^127);
    # 2^81 left a noise multiplier of 1e-12 at rate 1 (eps near 5e24) to a grid that cannot hold its loss
    # (adv48 L4). k > 64: the last bound assigned, 2^127, is tested before the refusal (ref50 LOW-1)
    while s(hi) <= 0:
        hi = arb(2 ** (2 * k + 1))
        k += 1
        if k > 64:
            raise PrecisionExhausted("eps above 2^127")
    a, b, bits = isolate_increasing_root(g, lo, hi, digits=d + 1, max_bits=max_bits, what=f"eps_mu(delta) for {what}")
    return Enclosure(a, b, d, bits)
