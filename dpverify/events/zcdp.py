"""delta(eps) of a (xi, rho)-zCDP guarantee, certified (ball arithmetic).

Bun, Steinke 2016, Def 1.1: M is (xi, rho)-zCDP when D_alpha(M(x) || M(x'))
<= xi + rho alpha for every alpha > 1 (zCDP composes by adding xi and rho,
BS16 Lemma 2.3; the Gaussian with shift mu is (0, mu^2/2)-zCDP, BS16 Prop 1.6).

Conversion (Canonne, Kamath, Steinke 2020, arXiv 2004.00010, Prop 12, the
bound dp_accounting's RDP accountant uses): an (alpha, tau)-RDP mechanism is
(eps, delta)-DP with

    delta = e^{(alpha - 1)(tau - eps)} (1 - 1/alpha)^alpha / (alpha - 1)
          = exp(f(alpha)),
    f(alpha) = (alpha - 1)(xi + rho alpha - eps) + (alpha - 1) log(1 - 1/alpha) - log(alpha)

at tau = xi + rho alpha, for every alpha > 1; the enclosure here is of
min(1, inf_{alpha > 1} exp(f(alpha))), an upper bound of the mechanism's
delta(eps) (not tight: zCDP does not determine the privacy profile).

Why the infimum is certified: f'(alpha) = xi - eps + rho (2 alpha - 1) +
log(1 - 1/alpha) and f''(alpha) = 2 rho + 1/(alpha (alpha - 1)) > 0, so f is
strictly convex on (1, inf). With exact points a < b and certified
f'(a) < 0 < f'(b), the minimiser lies in (a, b), f is decreasing left of a and
increasing right of b, and on [a, b] the tangent at a gives
f >= f(a) + f'(a)(b - a). Hence inf f lies in [f(a) + f'(a)(b - a), min(f(a), f(b))].
If rho = 0 and xi <= eps, f' < 0 everywhere and f -> -inf: delta = 0.
"""

from __future__ import annotations

import math
from fractions import Fraction

from flint import arb

from ..ball import arb_to_fraction, ball, bits_for_digits, working_precision
from ..errors import PrecisionExhausted
from ..verdict import Enclosure

__all__ = ["zcdp_delta"]


def _f(a: arb, rho: arb, xi: arb, eps: arb) -> tuple[arb, arb]:
    """(f(a), f'(a)) as balls (module docstring)."""
    l1 = (-1 / a).log1p()
    f = (a - 1) * (xi + rho * a - eps) + (a - 1) * l1 - a.log()
    return f, xi - eps + rho * (2 * a - 1) + l1


def _float_root(rho: float, xi: float, eps: float) -> float:
    """A double near the root of f' (a proposal only): bisection in t = log(alpha - 1)."""
    def fp(t: float) -> float:
        a = 1 + math.exp(t)
        # log(1 - 1/a) = log((a - 1)/a) = t - log(1 + e^t), without cancellation near a = 1
        return xi - eps + rho * (2 * a - 1) + t - math.log1p(math.exp(t))

    lo, hi = -700.0, 0.0
    while fp(hi) < 0 and hi < 700:
        hi += 8
    for _ in range(200):
        mid = (lo + hi) / 2
        if mid in (lo, hi):
            break
        if fp(mid) < 0:
            lo = mid
        else:
            hi = mid
    return 1 + math.exp((lo + hi) / 2)


def zcdp_delta(rho: Fraction, xi: Fraction, eps: Fraction, digits: int = 15) -> Enclosure:
    """Enclosure of min(1, inf_alpha exp(f(alpha))) (module docstring, CKS 2020
    Prop 12 at tau = xi + rho alpha) with relative width <= 10^-digits."""
    if rho == 0 and xi <= eps:
        with working_precision(64):
            return Enclosure(arb(0), arb(0), digits, 0)
    bits = bits_for_digits(digits) + 64
    try:
        a_f = _float_root(float(rho), float(xi), float(eps))
    except (OverflowError, ValueError):
        a_f = math.nan
    if not math.isfinite(a_f) or a_f <= 1:
        raise PrecisionExhausted("zCDP conversion: the optimal order is outside the float range")
    w = Fraction(1, 1 << 40)
    for _ in range(5):
        with working_precision(bits):
            R, X, E = ball(rho), ball(xi), ball(eps)
            # polish the proposal by Newton steps on f' (f'' = 2 rho + 1/(a(a-1))), midpoints only:
            # the bracket below is what is proved, the polish only makes it narrow
            t = arb(a_f)
            for _ in range(8):
                _, d1 = _f(t, R, X, E)
                t2 = t - d1 / (2 * R + 1 / (t * (t - 1)))
                if not t2 > 1:
                    break
                t = arb(t2.mid())
            c = arb_to_fraction(t)
            w = min(w, Fraction(1, 1 << max(40, bits // 2 - 8)))
            a, b = max(c - w * c, 1 + (c - 1) / 2), c + w * c
            fa, da = _f(ball(a), R, X, E)
            fb, db = _f(ball(b), R, X, E)
            if da < 0 and db > 0:
                lo = fa + da * ball(b - a)
                hi_f = fa if fa.upper() <= fb.upper() else fb
                one = arb(1)
                d_lo, d_hi = lo.exp(), hi_f.exp()
                d_hi = one if d_hi.upper() >= 1 else d_hi
                d_lo = one if d_lo.lower() >= 1 else d_lo
                enc = Enclosure.from_bounds(d_lo, d_hi, digits, bits)
                if enc.hi == 0 or (enc.hi - enc.lo) <= enc.hi * arb(10) ** (-digits):
                    return enc
        w *= 1 << 8
        bits *= 2
    raise PrecisionExhausted(f"zCDP conversion delta not certified to 1e-{digits}")
