"""Float proposals for the RDP conversions: uncertified, used only to choose
where the certified code looks.

* :func:`float_pstar`: the minimiser p* of S(p) of ABC Thm 3 (bisection on the
  sign of S', in log space);
* :func:`float_eps_opt`: eps_opt(alpha, gamma) (bisection of G(eps) = gamma);
* :func:`search_order`: the order alpha that minimises a conversion of a
  curve (scan in log(alpha - 1), then golden section).

Nothing here is a bound: a wrong proposal costs time (more cells, a retry), never
soundness, because :mod:`dpverify.rdp.conversions` and
:mod:`dpverify.rdp.infimum` certify every end they report.
"""

from __future__ import annotations

import math
from fractions import Fraction

from flint import arb

from ..ball import working_precision
from ..limits import MAX_SUBSAMPLED_ORDER
from ..numtext import log_fraction
from ..progress import Tick
from .divergences import RdpCurve

__all__ = ["float_eps_opt", "float_pstar", "search_order"]


def _float_logaddexp(a: float, b: float) -> float:
    if a < b:
        a, b = b, a
    if b == -math.inf:
        return a
    return a + math.log1p(math.exp(b - a))


def _float_logw(eps: float, p: float, delta: float) -> float:
    """log(e^eps - p + delta) without overflow for huge eps."""
    return eps + math.log1p((delta - p) * math.exp(-eps))


def _float_log_s(alpha: float, eps: float, delta: float, p: float) -> float:
    first = math.log(p - delta) + alpha * math.log(p / (p - delta))
    if p >= 1:
        return first
    lw = _float_logw(eps, p, delta)
    return _float_logaddexp(first, lw + alpha * (math.log(1 - p) - lw))


def float_pstar(alpha: float, eps: float, delta: float) -> float:
    """Uncertified minimiser of S (bisection on the sign of S', log space)."""
    if alpha * delta >= 1:
        return 1.0
    lo, hi = delta, 1.0
    for _ in range(200):
        if hi - lo <= 1e-15 * hi:
            break
        if lo > 0 and hi > 4 * lo and lo > 2 * delta:
            m = math.sqrt(lo * hi)
        elif lo > delta and (hi - delta) > 4 * (lo - delta):
            m = delta + math.sqrt((lo - delta) * (hi - delta))
        else:
            m = 0.5 * (lo + hi)
        if m == delta:
            m = delta * (1 + 1e-12) + 1e-300
        if not lo < m < hi:
            break
        u = m / (m - delta)
        v = math.exp(math.log(1 - m) - _float_logw(eps, m, delta))
        a1 = alpha - (alpha - 1) * u
        if a1 <= 0:
            lo = m
            continue
        t1 = (alpha - 1) * math.log(u) + math.log(a1)
        t2 = (alpha - 1) * math.log(v) + math.log(alpha - (alpha - 1) * v) if v > 0 else -math.inf
        if t1 < t2:
            lo = m
        else:
            hi = m
    return 0.5 * (lo + hi) if lo > delta else hi


def _float_gamma_opt(alpha: float, eps: float, delta: float) -> float:
    p = float_pstar(alpha, eps, delta)
    return eps + _float_log_s(alpha, eps, delta, p) / (alpha - 1)


def float_eps_opt(alpha: float, gamma: float, delta: float) -> float:
    """Uncertified eps_opt(alpha, gamma): bisection of G(eps) = gamma."""
    if _float_gamma_opt(alpha, 0.0, delta) >= gamma:
        return 0.0
    lo, hi = 0.0, gamma + math.log(1 / delta) / (alpha - 1) + 1e-9
    for _ in range(200):
        if hi - lo <= 1e-16 * hi:
            break
        m = 0.5 * (lo + hi)
        if _float_gamma_opt(alpha, m, delta) >= gamma:
            hi = m
        else:
            lo = m
    return hi


def _float_conversion(conversion: str, alpha: float, gamma: float, delta: Fraction) -> float:
    # log(1/delta) from the exact fraction's integers: a delta below the float range (1e-400) is 0.0
    # as a float, and -log(0.0) failed every proposal (the producer answered exit 3 where verify proves it)
    L = -log_fraction(delta)
    if conversion == "classic":
        return gamma + L / (alpha - 1)
    if conversion == "balle":
        return max(0.0, gamma + math.log1p(-1 / alpha) + (L - math.log(alpha)) / (alpha - 1))
    return float_eps_opt(alpha, gamma, float(delta))


def _logaddexp_signed(acc: tuple[float, int], x: float, sign: int) -> tuple[float, int]:
    """log|s| and sign(s) of s = (sign_acc e^acc) + (sign e^x), in floats."""
    a, sa = acc
    if x == -math.inf:
        return acc
    if a == -math.inf:
        return x, sign
    hi, shi, lo, slo = (a, sa, x, sign) if a >= x else (x, sign, a, sa)
    r = math.exp(lo - hi)
    v = 1 + r if shi == slo else 1 - r
    return (hi + math.log(v), shi) if v > 0 else (-math.inf, 1)


def _log_half_erfc(x: float) -> float:
    """log(erfc(x) / 2) in floats, with the asymptotic form where erfc underflows."""
    v = math.erfc(x)
    if v > 1e-300:
        return math.log(v / 2)
    return -x * x - math.log(x * math.sqrt(math.pi)) - math.log(2)


#: terms of :func:`float_log_a` beyond 10 alpha after which a series that has not settled is given
#: up (NaN: the caller proposes by the arb route); a smaller cap gave up on slow but convergent series
#: (alpha = 1.001, q = 0.3, sigma = 5 needs more than 2,000)
_SERIES_SLACK = 10**5


#: the smallest log A_alpha the float form proposes (below, the arb route at 64 bits does: see
#: :func:`_float_cgf`); 2^-16 keeps its relative error near 1e-11
_FLOAT_LOG_A_MIN = 2.0 ** -16


def float_log_a(alpha: float, q: Fraction, sigma: float) -> float:
    """Uncertified log A_alpha of the Poisson-subsampled Gaussian at a real order alpha > 1
    (MTZ 2019 Sec 3.3: A_alpha = E_{z ~ N(0, s^2)}[(1 - q + q e^{(2z - 1)/(2 s^2)})^alpha], written as
    the two binomial series of the split at z0 = s^2 log(1/q - 1) + 1/2, each term a binomial
    coefficient, a power of q and 1 - q, a Gaussian moment and a half erfc), in log space.
    A proposal only: the certified value is :func:`.subsampled_gaussian.log_a_real`'s quadrature,
    which costs seconds per order at large orders (the search evaluates ~80 orders)."""
    # log q and log(1 - q) from the exact fraction's integers: q = 1e-400 is 0.0 as a float,
    # q = 1 - 1e-30 is 1.0
    lq, l1q = log_fraction(q), log_fraction(1 - q)
    z0 = sigma * sigma * (l1q - lq) + 0.5
    s0 = s1 = (-math.inf, 1)
    i = 0
    lg_a1 = math.lgamma(alpha + 1)
    while True:
        # the generalised binomial C(alpha, i) = Gamma(alpha + 1) / (i! Gamma(j + 1)): past alpha + 1
        # Gamma(j + 1) < 0 exactly when ceil(-(j + 1)) is odd; at a non-positive integer j + 1 the
        # coefficient is 0 (an integer order's series ends there)
        j = alpha - i
        if j + 1 <= 0 and j == math.floor(j):
            break
        sign = 1 if j + 1 > 0 else (-1 if math.ceil(-(j + 1)) % 2 else 1)
        coef = lg_a1 - math.lgamma(i + 1) - math.lgamma(j + 1)
        t0 = coef + i * lq + j * l1q + (i * i - i) / (2 * sigma * sigma) + _log_half_erfc((i - z0) / (math.sqrt(2) * sigma))
        t1 = coef + j * lq + i * l1q + (j * j - j) / (2 * sigma * sigma) + _log_half_erfc((z0 - j) / (math.sqrt(2) * sigma))
        s0 = _logaddexp_signed(s0, t0, sign)
        s1 = _logaddexp_signed(s1, t1, sign)
        i += 1
        if i > alpha and max(t0, t1) < -40 + max(s0[0], s1[0]):
            break
        if i > 10 * alpha + _SERIES_SLACK:
            return math.nan
    tot = _logaddexp_signed(s0, s1[0], s1[1])
    return tot[0] if tot[1] > 0 else math.nan


def _float_cgf(curve: RdpCurve, alpha: float) -> float | None:
    """A float proposal of curve.cgf(alpha) where a closed float form is known (the subsampled
    Gaussian, and compositions of curves that have one), else None (the arb route at 64 bits)."""
    from .subsampled_gaussian import SubsampledGaussianCurve

    if isinstance(curve, SubsampledGaussianCurve):
        q, s = curve.q, float(curve.sigma)
        # past the certified route's order cap the arb route refuses at once (the scan stops there,
        # as before the float form: adv44 R2, sigma 1e6 summed ~alpha terms at alpha up to 2^30)
        if q == 1 or not math.isfinite(s) or s == 0.0 or alpha > MAX_SUBSAMPLED_ORDER:
            return None
        if alpha * alpha < _FLOAT_LOG_A_MIN * s * s:
            # log A_alpha is about alpha (alpha - 1) q^2 / (2 sigma^2) < 2^-16 here, which the float form
            # would not propose anyway; its series settles only after ~10 alpha + 1e5 terms at a huge sigma
            # (the Gaussian moments are all about 1: sigma 1e20 at q 0.5 ran past 60 s of proposals)
            return None
        try:
            v = float_log_a(alpha, q, s)
        except (ValueError, OverflowError, ZeroDivisionError):
            return None  # a proposal only: the arb route at 64 bits proposes instead
        # a series that did not settle (adv44 R3: orders near 1 at q >= 0.1) is the arb route's too, and
        # so is a small log A: it is a log-sum of O(1) terms, so its absolute error is about 1e-16 and a
        # value near 1e-6 (alpha - 1 = 0.012 at q 0.01) is noisy at the 1e-10 relative level the proof
        # of the infimum needs at 10^9 steps (adv44 R4: exit 3 where the arb proposal answered in 1 s)
        return v if math.isfinite(v) and abs(v) >= _FLOAT_LOG_A_MIN else None
    parts = getattr(curve, "parts", None)
    if parts is not None:
        vals = [_float_cgf(c, alpha) for c, _ in parts]
        if any(v is None for v in vals):
            return None
        return sum(k * v for (_, k), v in zip(parts, vals))  # type: ignore[operator]
    return None


def _float_eps(curve: RdpCurve, conversion: str, t: float, delta: Fraction) -> float:
    """Uncertified conversion at alpha = 1 + t (guess only): the curve's float form where one is
    known (:func:`_float_cgf`), else its arb value at 64 bits."""
    f = _float_cgf(curve, 1 + t) if t > 0 else None
    if f is not None:
        g = f / t
    else:
        with working_precision(64):
            a = arb(1) + arb(t)
            try:
                g = float((curve.cgf(a) / (a - 1)).mid())
            except Exception:  # noqa: BLE001 - a guess, any failure means "skip"
                return math.inf
    if not math.isfinite(g):
        return math.inf
    try:
        return _float_conversion(conversion, 1 + t, g, delta)
    except (ValueError, OverflowError, ZeroDivisionError):
        return math.inf


def search_order(curve: RdpCurve, conversion: str, delta: Fraction, tick: Tick = None) -> float:
    """Uncertified minimiser t = alpha - 1 (scan in log t, then golden section); ``tick``, the
    run's clock, is called before each evaluation (one may be a long certified quadrature)."""
    conv0 = "balle" if conversion == "optimal" else conversion
    # scan upward in log t; stop once clearly past the minimum (a guess only:
    # the certification below does not rely on unimodality)
    ks: list[float] = []
    vals: list[float] = []
    best = math.inf
    rising = 0
    for j in range(-60, 800):
        k = j / 2
        if tick is not None:
            tick()
        v = _float_eps(curve, conv0, 2.0**k, delta)
        ks.append(k)
        vals.append(v)
        if v < best:
            best, rising = v, 0
        elif math.isfinite(best):
            rising += 1
            if rising >= 12 or not math.isfinite(v):
                break
    i = min(range(len(ks)), key=lambda j: vals[j])
    lo, hi = ks[max(i - 2, 0)], ks[min(i + 2, len(ks) - 1)]
    if conversion == "optimal":
        lo, hi = lo - 2, hi + 2
    g = (math.sqrt(5) - 1) / 2
    def f(k: float) -> float:
        if tick is not None:
            tick()
        return _float_eps(curve, conversion, 2.0**k, delta)

    x1, x2 = hi - g * (hi - lo), lo + g * (hi - lo)
    f1, f2 = f(x1), f(x2)
    for _ in range(80 if conversion != "optimal" else 50):
        if hi - lo < 1e-12:
            break
        if f1 <= f2:
            hi, x2, f2 = x2, x1, f1
            x1 = hi - g * (hi - lo)
            f1 = f(x1)
        else:
            lo, x1, f1 = x1, x2, f2
            x2 = lo + g * (hi - lo)
            f2 = f(x2)
    return 2.0 ** ((lo + hi) / 2)
