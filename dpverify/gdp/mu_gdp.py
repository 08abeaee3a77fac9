"""mu_GDP(eps, delta): the unique mu > 0 with delta_mu(eps) = delta, certified.

GDPT Def 4.1 defines the GDP transformation through this inverse; GDPT App D
Alg 1 finds it by float binary search. Here the root is isolated with proof:

* uniqueness: d delta_mu(eps) / d mu = phi(-eps/mu + mu/2) > 0 for every mu > 0
  (GDPT App A.5; derived in :func:`dpverify.gdp.delta_mu.ddelta_dmu_ball`), so
  mu -> delta_mu(eps) is strictly increasing;
* range: as mu -> 0, delta_mu(eps) -> (1 - e^eps)_+ and as mu -> inf it -> 1,
  so a root exists iff (1 - e^eps)_+ < delta < 1;
* isolation: certified signs of log delta_mu(eps) - log delta at exact points
  (:func:`dpverify.ball.isolate_increasing_root`).
"""

from __future__ import annotations

from fractions import Fraction

from flint import arb

from .. import _validate as V
from .._validate import ExactInput
from ..ball import (
    DEFAULT_MAX_BITS,
    ball,
    brief_str,
    exact_str,
    upper_decimal,
    isolate_increasing_root,
    normal_cdf,
    normal_pdf,
    sign_at,
    working_precision,
)
from ..errors import InvalidParameter, PrecisionExhausted
from ..verdict import Enclosure, Outcome, Verdict
from .delta_mu import delta_mu_ball

__all__ = ["mu_gdp", "mu_gdp_exact", "dmu_deps_ball", "check_thm45"]

_MAX_DOUBLINGS = 24  # mu in [2^-(2^24), 2^(2^24)]: far beyond any meaningful input


def dmu_deps_ball(mu: arb, eps: arb) -> arb:
    """d mu_GDP(eps, delta) / d eps at fixed delta, evaluated at mu = mu_GDP.

    Implicit differentiation of delta_mu(eps) = delta with the two partials of
    :mod:`dpverify.gdp.delta_mu` gives e^eps Phi(b) / phi(a) = Phi(b) / phi(b),
    b = -eps/mu - mu/2: the Mills ratio R(-b). GDPT Thm 4.5 states
    0 <= this <= sqrt(2 pi)/2; for eps >= 0, -b >= 0 and R is decreasing with
    R(0) = sqrt(2 pi)/2.
    """
    b = -eps / mu - mu / 2
    return normal_cdf(b) / normal_pdf(b)


def _check_domain(eps: Fraction, delta: Fraction) -> None:
    """delta must exceed (1 - e^eps)_+ (the mu -> 0 limit); decided with proof."""
    if eps >= 0:
        return
    bits = 64
    while True:
        with working_precision(bits):
            floor = 1 - ball(eps).exp()
            if ball(delta) > floor:
                return
            if ball(delta) <= floor:
                raise InvalidParameter(
                    "delta",
                    f"delta={brief_str(delta)} must be in (1 - e^eps, 1) = "
                    f"({upper_decimal(floor, 6)}, 1) "
                    f"for eps={brief_str(eps)}: no mu-GDP mechanism has a smaller delta at negative eps",
                )
        bits *= 2
        if bits > DEFAULT_MAX_BITS:  # delta = 1 - e^eps is impossible for rational eps != 0
            raise PrecisionExhausted("could not compare delta with 1 - e^eps")


def mu_gdp(eps: ExactInput, delta: ExactInput, digits: int = 15) -> Enclosure:
    """Enclosure of mu_GDP(eps, delta) (GDPT Def 4.1) with relative width <= 10^-digits.

    The unique mu > 0 with delta_mu(eps) = delta; exists for 0 < delta < 1 when
    eps >= 0, and for 1 - e^eps < delta < 1 when eps < 0.

    Raises:
        InvalidParameter: delta outside that range, non-numeric input.
        PrecisionExhausted: the root could not be isolated within the precision cap.
    """
    e = V.real("eps", eps)
    dl = V.open_unit("delta", delta)
    d = V.digits(digits)
    return mu_gdp_exact(e, dl, d)


def _show(x: "Fraction | arb") -> str:
    """A message-sized rendering of an exact input or an exact arb point."""
    if isinstance(x, arb):
        return x.str(10, radius=False)
    return str(x)


def mu_gdp_exact(e: Fraction, dl: "Fraction | arb", d: int) -> Enclosure:
    """:func:`mu_gdp` for already validated exact inputs (0 < dl < 1): the
    entry point of the GDP transformation (:mod:`dpverify.gdp.transform`),
    which calls it at exact endpoints of profile enclosures. ``dl`` may be an
    exact arb point (radius 0): profile values at large eps are dyadics far
    below any Fraction one would want to build (2^-(10^9))."""
    if isinstance(dl, arb) and not dl.is_exact():
        raise ValueError("mu_gdp_exact needs an exact delta")
    _check_domain(e, dl)

    def g(mu: arb) -> arb:
        # log keeps the equation well scaled over delta's huge range
        return delta_mu_ball(mu, ball(e)).log() - ball(dl).log()

    def s(mu: arb) -> int:
        return sign_at(g, mu, what=f"the mu_GDP equation for eps={_show(e)}, delta={_show(dl)}")

    # galloping bracket in the exponent: mu = 2^(+-2^k)
    lo, hi = arb(1), arb(1)
    k = 0
    while s(lo) >= 0:
        if k > _MAX_DOUBLINGS:
            raise PrecisionExhausted(f"mu_GDP(eps={_show(e)}, delta={_show(dl)}) is below 2^-2^{_MAX_DOUBLINGS}")
        hi, lo = lo, arb(2) ** (-(2**k))
        k += 1
    k = 0
    while s(hi) <= 0:
        if k > _MAX_DOUBLINGS:
            raise PrecisionExhausted(f"mu_GDP(eps={_show(e)}, delta={_show(dl)}) is above 2^2^{_MAX_DOUBLINGS}")
        lo, hi = hi, arb(2) ** (2**k)
        k += 1
    a, b, bits = isolate_increasing_root(
        g, lo, hi, digits=d + 1, what=f"mu_GDP(eps={_show(e)}, delta={_show(dl)})"
    )
    return Enclosure(a, b, d, bits)


def check_thm45(eps: ExactInput, delta: ExactInput, max_bits: int = 4096) -> tuple[Verdict, Enclosure]:
    """GDPT Thm 4.5 at one point: 0 <= d mu_GDP(eps, delta) / d eps <= sqrt(2 pi)/2.

    The derivative (:func:`dmu_deps_ball`) is enclosed over the whole certified
    mu enclosure, at rising precision until the comparison is decided (near
    eps = 0 with tiny mu the slope tends to the bound itself). Returns the
    verdict and the slope enclosure.
    """
    e = V.nonnegative("eps", eps)
    enc = mu_gdp(e, delta)
    bits = 128
    while True:
        with working_precision(bits):
            slope = dmu_deps_ball(enc.as_ball(), ball(e))
            bound = (2 * arb.pi()).sqrt() / 2
            s_enc = Enclosure.from_ball(slope, 15, bits)
            if slope >= 0 and slope <= bound:
                return Verdict(Outcome.HOLDS, "0 <= slope <= sqrt(2 pi)/2", {"slope": s_enc}), s_enc
            if slope < 0 or slope > bound:
                return Verdict(Outcome.FAILS, "slope outside [0, sqrt(2 pi)/2]", {"slope": s_enc}), s_enc
        if bits >= max_bits:
            return Verdict(Outcome.UNDECIDED, f"undecided at {bits} bits", {"slope": s_enc}), s_enc
        bits *= 2
