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
from typing import Callable, Optional

from flint import arb, fmpq

from .. import _validate as V
from .._validate import ExactInput
from ..ball import (
    DEFAULT_MAX_BITS,
    ball,
    bits_for_digits,
    brief_str,
    upper_decimal,
    isolate_increasing_root,
    normal_cdf,
    normal_pdf,
    point,
    sign_at,
    working_precision,
)
from ..errors import InvalidParameter, PrecisionExhausted
from ..verdict import Enclosure, Outcome, Verdict
from .delta_mu import ddelta_dmu_ball, delta_mu_ball

__all__ = ["mu_gdp", "mu_gdp_exact", "mu_gdp_near", "dmu_deps_ball", "check_thm45"]

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


#: eps from which the bracket of :func:`_large_eps_bracket` is tried first: there
#: the general route's signs need e^eps and ~log2(eps) bits of cancellation per
#: evaluation (eps = 1e3000: tens of seconds), the bracket a few evaluations of Phi
_LARGE_EPS = Fraction(2) ** 256


def _large_eps_bracket(e: Fraction, dl: "Fraction | arb", d: int) -> "Enclosure | None":
    """A certified bracket of mu_GDP(eps, delta) for large eps without e^eps,
    or None when it is not narrow enough (the caller then isolates the root).

    Proof. Write a = -eps/mu + mu/2 and b = -eps/mu - mu/2 < 0 (eps >= 0,
    mu > 0), so delta_mu(eps) = Phi(a) - e^eps Phi(b) (GDPT Cor 2.13). Since
    a^2 - b^2 = (a - b)(a + b) = mu (-2 eps/mu) = -2 eps, e^eps phi(b) = phi(a),
    and the Mills-ratio bound Phi(b) <= phi(b)/|b| for b < 0 (Gordon 1941) gives
        Phi(a) - phi(a)/|b| <= delta_mu(eps) <= Phi(a).
    delta_mu(eps) is strictly increasing in mu (module docstring), so a point
    mu_lo with Phi(a(mu_lo)) < delta lies below the root and a point mu_hi with
    Phi(a) - phi(a)/|b| > delta at mu_hi lies above it. Both are certified
    comparisons of balls; floats only propose the points: a = z -+ 2^-20 with
    Phi(z) ~ delta, mu(a) = a + sqrt(a^2 + 2 eps) (the root of mu/2 - eps/mu = a).
    Relative width ~ 2^-19 / sqrt(2 eps)."""
    bits = 2 * e.numerator.bit_length() - 2 * e.denominator.bit_length() + bits_for_digits(d) + 128
    with working_precision(bits):
        E, D = ball(e), ball(dl)
        logd = D.log()
        # propose z with Phi(z) ~ delta: bisection on midpoints (no proof needed here)
        lo_z, hi_z = arb(-(2**20)), arb(64)
        for _ in range(80):
            mid = ((lo_z + hi_z) / 2).mid()
            v = normal_cdf(mid).log() - logd
            if v.mid() < 0:
                lo_z = mid
            else:
                hi_z = mid
        z = lo_z.mid()
        step = arb(2) ** -20

        def point(a: arb) -> arb:
            return (a + (a * a + 2 * E).sqrt()).mid()

        mu_lo, mu_hi = point(z - step), point(z + step)
        if not (mu_lo > 0 and mu_hi > mu_lo):
            return None
        a_lo = -E / mu_lo + mu_lo / 2
        a_hi = -E / mu_hi + mu_hi / 2
        below = normal_cdf(a_lo) < D
        above = normal_cdf(a_hi) - normal_pdf(a_hi) / (E / mu_hi + mu_hi / 2) > D
        narrow = (mu_hi - mu_lo) <= mu_lo / arb(10) ** d
        if not (below and above and narrow):
            return None
        return Enclosure(mu_lo, mu_hi, d, bits)


def _show(x: "Fraction | arb") -> str:
    """A message-sized rendering of an exact input or an exact arb point."""
    if isinstance(x, arb):
        return x.str(10, radius=False)
    return str(x)


def _equation(e: Fraction, dl: "Fraction | arb") -> Callable[[arb], arb]:
    """g(mu) = log delta_mu(eps) - log delta, strictly increasing in mu (module docstring)."""

    q = fmpq(e.numerator, e.denominator)  # ball(e) without re-reading the Fraction at every sign

    def g(mu: arb) -> arb:
        # log keeps the equation well scaled over delta's huge range
        return delta_mu_ball(mu, arb(q)).log() - ball(dl).log()

    return g


def mu_gdp_exact(e: Fraction, dl: "Fraction | arb", d: int) -> Enclosure:
    """:func:`mu_gdp` for already validated exact inputs (0 < dl < 1): the
    entry point of the GDP transformation (:mod:`dpverify.gdp.transform`),
    which calls it at exact endpoints of profile enclosures. ``dl`` may be an
    exact arb point (radius 0): profile values at large eps are dyadics far
    below any Fraction one would want to build (2^-(10^9))."""
    if isinstance(dl, arb) and not dl.is_exact():
        raise ValueError("mu_gdp_exact needs an exact delta")
    _check_domain(e, dl)
    if e >= _LARGE_EPS:
        quick = _large_eps_bracket(e, dl, d)
        if quick is not None:
            return quick

    g = _equation(e, dl)
    what = f"the mu_GDP equation for eps={_show(e)}, delta={_show(dl)}"

    def s(mu: arb) -> int:
        return sign_at(g, mu, what=what)

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


#: a Newton step at most this (relative) leaves an error of about its square
_SMALL_STEP = 2.0**-24
#: Newton steps of the proposal, and the precision they run at
_NEAR_STEPS, _NEAR_BITS = 4, 128


def mu_gdp_near(e: Fraction, dl: arb, guess: arb) -> Optional[tuple[arb, arb]]:
    """Exact points lo < mu_GDP(eps, delta) < hi of relative width below 2^-23, found from
    ``guess``, a nearby root (a neighbouring cell's of a staircase), or None when that fails
    (the caller then isolates the root from scratch: :func:`mu_gdp_exact`).

    Proof: certified opposite signs at lo and hi of g = log delta_mu(eps) - log delta, the
    equation of :func:`mu_gdp_exact`, strictly increasing in mu (GDPT App A.5), so its unique
    root lies in (lo, hi). Floats only propose the points: Newton steps from ``guess``,
    mu' = mu - g(mu) delta_mu(eps) / phi(-eps/mu + mu/2) (d delta / d mu:
    :func:`dpverify.gdp.delta_mu.ddelta_dmu_ball`) on ball midpoints. Once a step h is small
    the root is near mu', within ~h^2: the sign of g(mu), a ball at 128 bits that excludes 0,
    makes mu one end, and mu' pushed past the root by h/256 + 2^-40 mu' the other (one more
    sign); failing that, mu' (1 -+ 2^-40) are tried. For eps >= 0 and an exact 0 < delta < 1
    (the domain check of :func:`mu_gdp_exact` is then void); None past :data:`_LARGE_EPS`,
    where the bracket of :func:`_large_eps_bracket` is the cheap route."""
    if e < 0 or e >= _LARGE_EPS or not (guess > 0 and guess.is_finite()):
        return None
    g = _equation(e, dl)
    side, small = 0, False
    with working_precision(_NEAR_BITS):
        mu, eps, logd = point(guess), ball(e), ball(dl).log()
        for _ in range(_NEAR_STEPS):
            d = delta_mu_ball(mu, eps)
            gmu = d.log() - logd  # g(mu), d kept for the step
            step = gmu * d / ddelta_dmu_ball(mu, eps)
            new = point(mu - step)
            if not (step.is_finite() and new > 0):
                return None
            small = bool(abs(step) <= new * _SMALL_STEP)
            if small:
                side = 1 if gmu > 0 else -1 if gmu < 0 else 0
                break
            mu = new
        tries = []
        if small and side != 0:
            # g(mu) has sign `side`; the root is ~step^2 from `new`, on the far side of it from mu
            tries.append((mu, point(new - side * (abs(step) / 256 + new * arb(2) ** -40)), side))
        w = arb(2) ** -40
        tries.append((point(new * (1 - w)), point(new * (1 + w)), 0))
    for a, b, sign_a in tries:
        try:  # an undecided sign only declines: the caller isolates (and words any failure) itself
            sign_a = sign_a or sign_at(g, a, what="mu_GDP")
            opposite = sign_a * sign_at(g, b, what="mu_GDP") < 0
        except PrecisionExhausted:
            continue
        if opposite:
            return (a, b) if a < b else (b, a)
    return None


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
