"""Poisson-subsampled Gaussian mechanism: RDP at every real order alpha > 1.

Pair (Mironov, Talwar, Zhang 2019 "Renyi DP of the sampled Gaussian
mechanism", Sec 3; the direction dp_accounting and Opacus use, D(mu || mu0);
MTZ argue it is the larger of the two directions; dpverify computes this
direction only, also at fractional orders): mu0 = N(0, s^2),
mu = (1-q) mu0 + q N(1, s^2) with s the noise multiplier (sensitivity 1),
D_alpha = log(A_alpha) / (alpha - 1) with A_alpha = E_{mu0}[(mu/mu0)^alpha] and
mu/mu0 (x) = 1 + q expm1((2x - 1)/(2 s^2)).

* Integer alpha (MTZ Sec 3.3): binomial expansion and E_{mu0}[e^{k(2x-1)/(2s^2)}] =
  e^{(k^2 - k)/(2 s^2)} give the exact finite sum
  A_alpha - 1 = sum_{k=2}^{alpha} C(alpha,k) q^k (1-q)^{alpha-k} (e^{k(k-1)/(2 s^2)} - 1),
  all terms >= 0 (the k = 0, 1 terms cancel against the binomial sum = 1), so
  log1p of it loses nothing even when A - 1 ~ 1e-14.
* Real alpha: A_alpha - 1 = int phi_s(x) [(mu/mu0)(x)^alpha - 1] dx by rigorous
  quadrature (python-flint ``acb.integral``, Petras' algorithm with error
  bounds; the integrand is analytic in the strip |Im x| < pi s^2, the branch
  cut of the power is detected through the ``analytic`` flag) on [-R, R] plus
  proven tail bounds:
  left (x < -R <= 0): |(mu/mu0)^alpha - 1| <= 1 - (1-q)^alpha <= 1, tail <= Phibar(R/s);
  right (x > R >= 1/2): 0 <= (mu/mu0)^alpha - 1 <= e^{alpha(2x-1)/(2s^2)}, and
  int_R^inf phi_s(x) e^{alpha(2x-1)/(2 s^2)} dx = e^{(alpha^2-alpha)/(2s^2)} Phibar((R-alpha)/s).
  (This replaces MTZ's fractional-order series by a quadrature whose
  remainder is proven; both give the same function.)
* KL lower bound (for certified order optimisation near alpha = 1):
  Pinsker, KL >= 2 TV^2 with TV(mu, mu0) = q TV(N(1,s^2), N(0,s^2)) = q (2 Phi(1/(2s)) - 1).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Dict, Mapping

from flint import acb, arb, ctx, fmpz

from .. import _validate as V
from ..ball import ball, brief_str as _brief, fresh_integration_state, normal_cdf, normal_sf
from ..errors import InvalidParameter, PrecisionExhausted
from ..limits import MAX_SUBSAMPLED_FRACTIONAL_ORDER, MAX_SUBSAMPLED_ORDER
from ..progress import ambient_tick

__all__ = ["SubsampledGaussianCurve", "log_a_integer", "log_a_real", "MAX_SUBSAMPLED_ORDER"]

_DEBUG = False


def _binom_terms(n: int, q: arb, s: arb):
    """Yield C(n,k) q^k (1-q)^{n-k} (e^{k(k-1)/(2 s^2)} - 1) for k = 2..n."""
    one_m_q = 1 - q
    two_s2 = 2 * s * s
    c = fmpz(1)
    for k in range(1, n + 1):
        c = c * (n - k + 1) // k  # exact C(n, k)
        if k < 2:
            continue
        yield arb(c) * q**k * one_m_q ** (n - k) * (arb(k * (k - 1)) / two_s2).expm1()


def log_a_integer(n: int, q: Fraction, sigma: Fraction) -> arb:
    """Ball of log A_n (integer n >= 2) at the current precision (MTZ Sec 3.3)."""
    if n < 2:
        raise ValueError("integer order must be >= 2")
    qb, sb = ball(q), ball(sigma)
    total = arb(0)
    for t in _binom_terms(n, qb, sb):
        total += t
    return total.log1p()


def _tails(alpha: arb, q: arb, s: arb, R: arb) -> tuple[arb, arb]:
    """(left, right) bounds of |int| outside [-R, R] (module docstring).

    Right: for y = (2x-1)/(2s^2) >= y_R >= 0, 1 - q + q e^y = e^y (q + (1-q) e^{-y})
    <= e^y c with c = q + (1-q) e^{-y_R}, so the tail is at most
    c^alpha e^{(alpha^2 - alpha)/(2 s^2)} Phibar((R - alpha)/s)."""
    left = normal_sf(R / s)
    yR = (2 * R - 1) / (2 * s * s)
    c = q + (1 - q) * (-yR).exp()
    right = (alpha * c.log() + (alpha * alpha - alpha) / (2 * s * s)).exp() * normal_sf((R - alpha) / s)
    return left, right


def log_a_real(alpha: arb, q: Fraction, sigma: Fraction) -> arb:
    """Ball of log A_alpha for a real exact alpha > 1 by certified quadrature."""
    qb, sb = ball(q), ball(sigma)
    a = acb(alpha)
    qa = acb(qb)
    two_s2 = acb(2 * sb * sb)
    norm = acb(1 / (sb * (2 * arb.pi()).sqrt()))
    s2 = acb(2 * sb * sb)
    prec = ctx.prec

    def integrand(x: acb, analytic: bool) -> acb:
        base = 1 + qa * ((2 * x - 1) / two_s2).expm1()
        # base^alpha = exp(alpha log base) is analytic off the cut base <= 0,
        # which acb.log(analytic=True) detects (returns a non-finite ball)
        dens = norm * (-(x * x) / s2).exp()
        return dens * (a * base.log(analytic=analytic)).expm1()

    # R: tails below 2^-(prec+20) relative to a crude size of A - 1
    fa = float(alpha.mid())
    sf = float(sigma)
    import math

    z = math.sqrt(2 * (prec * 0.7 + 40 + max(0.0, math.log(1 / max(float(q), 1e-300)) * 2)))
    R_val = max(fa, 1.0) + sf * z + 1
    R = arb(int(R_val * 1024)) / 1024  # exact dyadic
    left, right = _tails(alpha, qb, sb, R)
    # pieces no wider than the Gaussian's scale keep Petras' ellipses away
    # from the branch cut (|Im x| = pi s^2) and the dynamic range per piece small
    width = 2 * sf
    # sigma below the doubles (1e-400: sf = 0) or so small that R / sigma overflows (1e-308) has more
    # pieces than any budget: the same answer as too many pieces (it was an internal error, exit 4)
    if not width > 0 or not math.isfinite(2 * R_val / width) or 2 * R_val / width >= 20000:
        raise PrecisionExhausted("subsampled-Gaussian quadrature: order too large for the quadrature")
    n = max(1, int(2 * R_val / width) + 1)
    if n > 20000:
        raise PrecisionExhausted("subsampled-Gaussian quadrature: order too large for the quadrature")
    body = arb(0)
    if _DEBUG:
        print("tails", left, right)
    fresh_integration_state()
    for i in range(n):
        ambient_tick()  # one piece can take a second at a small sigma: the budget is checked per piece
        x0 = -R + 2 * R * i / n
        x1 = -R + 2 * R * (i + 1) / n
        body += acb.integral(integrand, x0, x1, rel_tol=arb(2) ** (-prec), eval_limit=100000).real
    total = body + arb(0, (left + right).upper())
    if not total.is_finite():
        raise PrecisionExhausted("subsampled-Gaussian quadrature did not converge")
    return total.log1p()


@dataclass(frozen=True)
class SubsampledGaussianCurve:
    """RDP curve of the Poisson-subsampled Gaussian (add/remove, MTZ 2019),
    defined for alpha > 1. f(alpha) = log A_alpha."""

    sigma: Fraction
    q: Fraction
    source_params: Mapping[str, str] = field(default_factory=dict)
    name: str = "subsampled-gaussian"
    _cache: Dict[tuple, arb] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        # the library's guard (the CLI's spec parser names its own options): a rate outside
        # (0, 1] or a sign-flipped sigma is no mechanism, and the series would still run
        object.__setattr__(self, "sigma", V.noise_multiplier("sigma", self.sigma))
        object.__setattr__(self, "q", V.half_open_unit("q", self.q))

    def cgf(self, alpha: arb) -> arb:
        if not alpha > 1:
            raise InvalidParameter("alpha", "the subsampled-Gaussian curve needs alpha > 1")
        if alpha > MAX_SUBSAMPLED_ORDER and self.q != 1:
            raise PrecisionExhausted(
                f"subsampled-Gaussian RDP is evaluated for orders <= {MAX_SUBSAMPLED_ORDER} only"
            )
        if self.q == 1:
            s = ball(self.sigma)
            return (alpha - 1) * alpha / (2 * s * s)
        if not alpha.is_exact():
            lo = alpha.lower()
            hi = alpha.upper()
            # monotone D: [D(lo), D(hi)] (f = (alpha-1) D, alpha - 1 > 0 over the ball)
            d = (self.cgf(lo) / (lo - 1)).union(self.cgf(hi) / (hi - 1))
            return (alpha - 1) * d
        key = (alpha.mid().man_exp(), ctx.prec)
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        if alpha.is_integer():  # at most MAX_SUBSAMPLED_ORDER (refused above)
            v = log_a_integer(int(alpha.unique_fmpz()), self.q, self.sigma)
        else:
            v = log_a_real(alpha, self.q, self.sigma)
        self._cache[key] = v
        return v

    def check_order(self, alpha: Fraction) -> None:
        """Refuse (InvalidParameter, exit 2) an order asked of :func:`.divergences.renyi_divergence`
        beyond the caps of :mod:`dpverify.limits`, before any work: above MAX_SUBSAMPLED_ORDER the
        sampling rate < 1 is not evaluated at all (:meth:`cgf` would raise PrecisionExhausted, exit 3,
        for an answer that no budget changes), and a fractional order above
        MAX_SUBSAMPLED_FRACTIONAL_ORDER would be a quadrature costing about alpha^2."""
        if self.q == 1:  # the Gaussian's closed form at every order
            return
        if alpha > MAX_SUBSAMPLED_ORDER:
            raise InvalidParameter(
                "alpha", f"alpha={_brief(alpha)}: the subsampled-gaussian RDP (sampling rate < 1) is certified for "
                f"orders alpha <= {MAX_SUBSAMPLED_ORDER} (an integer order is an exact sum of alpha terms)")
        if alpha.denominator != 1 and alpha > MAX_SUBSAMPLED_FRACTIONAL_ORDER:
            raise InvalidParameter(
                "alpha", f"alpha={_brief(alpha)}: fractional orders of subsampled-gaussian are certified up to "
                f"{MAX_SUBSAMPLED_FRACTIONAL_ORDER} (the quadrature's cost grows like alpha^2); use an integer order "
                f"(exact finite sum, up to {MAX_SUBSAMPLED_ORDER}) or a smaller alpha")

    def kl_lower(self) -> arb:
        s = ball(self.sigma)
        tv = ball(self.q) * (2 * normal_cdf(1 / (2 * s)) - 1)
        return 2 * tv * tv

    def params(self) -> Mapping[str, str]:
        return dict(self.source_params)
