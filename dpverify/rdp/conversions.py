"""RDP -> (eps, delta) conversions at one exact order, certified.

Fixed-order conversions of an (alpha, gamma)-RDP guarantee, L = log(1/delta):

* classic (ABC Thm 1 / eq. 4; Mironov 2017 Prop 3):
  eps = gamma + L / (alpha - 1),  delta = e^{-(alpha-1)(eps - gamma)};
* balle (Balle et al. 2020 Thm 21; Canonne, Kamath, Steinke 2020 Prop 12):
  eps = gamma + log(1 - 1/alpha) + (L - log alpha) / (alpha - 1),
  delta = zeta_alpha e^{(alpha-1)(gamma - eps)},  zeta_alpha = (1/alpha)(1 - 1/alpha)^{alpha-1};
* optimal (ABC Thm 3): with S(p) = p^alpha (p-delta)^{1-alpha} + (1-p)^alpha (e^eps - p + delta)^{1-alpha},
  G(eps) = eps + min_{p in (delta, 1]} log S(p) / (alpha - 1) is the largest gamma for
  which every (alpha, gamma)-RDP mechanism is (eps, delta)-DP, and the optimal
  eps is inf{eps >= 0 : G(eps) >= gamma}.

Certifying the p-minimisation (ABC Thm 3 says "convex in p"): S is a sum of
perspectives x^alpha y^{1-alpha} (jointly convex for alpha > 1) of affine
functions of p, hence convex. With u = p/(p - delta), v = (1-p)/(e^eps - p + delta),
S(p) = (p-delta) u^alpha + (e^eps - p + delta) v^alpha and
S'(p) = u^{alpha-1}(alpha - (alpha-1) u) - v^{alpha-1}(alpha - (alpha-1) v);
S' -> -inf as p -> delta and S'(1) > 0 iff alpha delta < 1. So for alpha delta >= 1
the minimum is S(1) = (1-delta)^{1-alpha} (ABC Thm 4 eq. 17), otherwise the
minimiser lies in every bracket [p1, p2] with certified S'(p1) < 0 < S'(p2), and
the centred form S(m) + S'([p1,p2])([p1,p2] - m) bounds S there from below.

The infimum over all real orders is proved in :mod:`dpverify.rdp.infimum`; the float
proposals both use (p*, eps_opt, the order that minimises) are in
:mod:`dpverify.rdp.float_search`.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Callable

from flint import arb

from .. import _validate as V
from ..certificate.format import CONVERSIONS, RDP_OPTIMAL_MIN_DELTA
from ..ball import ball, bits_for_digits, brief_str, endpoints, point, refine, working_precision
from ..errors import InvalidParameter, PrecisionExhausted, Undecided, shown
from ..limits import MAX_CONVERSION_ALPHA_EPS
from ..verdict import Enclosure
from .float_search import float_eps_opt, float_pstar

__all__ = [
    "CONVERSIONS",
    "classic_eps_ball",
    "balle_eps_ball",
    "classic_delta_ball",
    "balle_delta_ball",
    "optimal_gamma_ball",
    "gamma_upper_at",
    "optimal_eps",
    "optimal_delta",
    "conversion_eps",
    "conversion_delta",
    "abc_thm4_gamma_lower",
    "abc_lemma1_eps_upper",
]


#: the optimal conversion's smallest delta (classic and balle have no such limit), shared with verify
OPTIMAL_MIN_DELTA = RDP_OPTIMAL_MIN_DELTA


def check_optimal_delta(conversion: str, delta: Fraction) -> None:
    if conversion == "optimal" and delta < OPTIMAL_MIN_DELTA:
        raise InvalidParameter(
            "delta", f"delta={brief_str(delta)} is below 1e-50, the smallest delta the optimal conversion "
            "supports here; use --conversion balle or classic"
        )


def check_conversion(conversion: str) -> str:
    if conversion not in CONVERSIONS:
        raise InvalidParameter(
            "conversion", f"conversion={shown(conversion)} must be one of {', '.join(CONVERSIONS)}"
        )
    return conversion


# --------------------------------------------------------------------------- fixed order


def classic_eps_ball(alpha: arb, gamma: arb, delta: arb) -> arb:
    """ABC Thm 1 / eq. (4) solved for eps: gamma + log(1/delta) / (alpha - 1)."""
    return gamma - delta.log() / (alpha - 1)


def balle_eps_ball(alpha: arb, gamma: arb, delta: arb) -> arb:
    """Balle et al. 2020 Thm 21 (= ABC's citation after Lemma 1), clipped at 0:
    (gamma + log(1 - 1/alpha) - (log delta + log alpha)/(alpha - 1))_+."""
    raw = gamma + (-1 / alpha).log1p() - (delta.log() + alpha.log()) / (alpha - 1)
    return raw.nonnegative_part()


def classic_delta_ball(alpha: arb, gamma: arb, eps: arb) -> arb:
    """ABC eq. (3): delta = min(1, e^{-(alpha-1)(eps - gamma)})."""
    return _min1(((alpha - 1) * (gamma - eps)).exp())


def balle_delta_ball(alpha: arb, gamma: arb, eps: arb) -> arb:
    """Canonne et al. 2020 Prop 12: min(1, zeta_alpha e^{(alpha-1)(gamma - eps)})."""
    log_zeta = -alpha.log() + (alpha - 1) * (-1 / alpha).log1p()
    return _min1((log_zeta + (alpha - 1) * (gamma - eps)).exp())


def _min1(x: arb) -> arb:
    if x <= 1:
        return x
    if x >= 1:
        return arb(1)
    lo, _ = endpoints(x)
    return lo.union(arb(1))


def log_s(alpha: arb, eps: arb, delta: arb, p: arb) -> arb:
    """log S(p) of ABC Thm 3 (p in (delta, 1]); at p = 1 the second term is 0."""
    w = eps.exp() - p + delta
    first = (p - delta).log() + alpha * (p / (p - delta)).log()
    if p.is_exact() and p == 1:
        return first
    second = w.log() + alpha * ((1 - p) / w).log()
    return _logaddexp(first, second)


def _logaddexp(x: arb, y: arb) -> arb:
    if x > y:
        return x + (y - x).exp().log1p()
    return y + (x - y).exp().log1p()


def _log_s_t(alpha: arb, eps: arb, delta: arb, t: arb) -> arb:
    """log S at p = delta + t, written in t so that p - delta never cancels."""
    w = eps.exp() - t
    return _logaddexp(t.log() + alpha * ((delta + t) / t).log(), w.log() + alpha * ((1 - delta - t) / w).log())


def _ds_sign_t(alpha: arb, eps: arb, delta: arb, t: arb) -> arb:
    """S'(p) at p = delta + t: u^{alpha-1}(alpha - (alpha-1)u) - v^{alpha-1}(alpha - (alpha-1)v),
    u = p/(p - delta), v = (1 - p)/(e^eps - p + delta) (module docstring)."""
    u = (delta + t) / t
    v = (1 - delta - t) / (eps.exp() - t)
    return ((alpha - 1) * u.log()).exp() * (alpha - (alpha - 1) * u) - (
        (alpha - 1) * v.log()
    ).exp() * (alpha - (alpha - 1) * v)


def interior(alpha: arb, delta: arb) -> bool:
    """True iff alpha delta < 1 (certified); raises Undecided at the boundary."""
    x = alpha * delta
    if x < 1:
        return True
    if x >= 1:
        return False
    raise Undecided("alpha * delta = 1 is not decided")


def _minlog_s(alpha: arb, eps: arb, delta: arb, rel: arb) -> arb:
    """Ball containing min_{p in (delta,1]} log S(p) (ABC Thm 3), at the
    current precision; the p-bracket is narrowed until its relative width
    is below ``rel`` (a ball; only the order of magnitude matters)."""
    if not interior(alpha, delta):
        return (1 - alpha) * (1 - delta).log()
    # bisection on t = p - delta in (0, 1 - delta]; t_hi = 1 - delta is a certified
    # right end (S'(1) > 0 when alpha delta < 1), and S' -> -inf as t -> 0, so a
    # certified left end t_lo > 0 is found by shrinking t geometrically.
    from flint import ctx

    t_hi = 1 - delta
    if not t_hi.is_exact():
        t_hi = endpoints(t_hi)[0]
    t_lo = point(t_hi / 2)
    floor = delta * arb(2) ** -256
    while True:
        s = _ds_sign_t(alpha, eps, delta, t_lo)
        if s < 0:
            break
        if not s > 0:
            raise Undecided("sign of S' undecided at this precision")
        t_hi = t_lo
        t_lo = point(t_lo / 16)
        if t_lo < floor:
            raise Undecided("no certified left end of the p-bracket")
    for _ in range(4 * ctx.prec + 400):
        if (t_hi - t_lo) <= rel * t_lo:
            break
        if t_hi > 4 * t_lo:
            m = point((t_lo * t_hi).sqrt())
        else:
            m = point((t_lo + t_hi) / 2)
        if not (m > t_lo and m < t_hi):
            break
        s = _ds_sign_t(alpha, eps, delta, m)
        if s < 0:
            t_lo = m
        elif s > 0:
            t_hi = m
        else:
            break
    # centred form in t: log S(T) within log S(m) + (d log S/dt)(T) (T - m), and
    # d log S / dt = S'(p) / S(p)
    m = point((t_lo + t_hi) / 2)
    T = t_lo.union(t_hi)
    s_m = _log_s_t(alpha, eps, delta, m)
    dlog = _ds_sign_t(alpha, eps, delta, T) / _log_s_t(alpha, eps, delta, T).exp()
    return s_m + dlog * (T - m)


def optimal_gamma_ball(alpha: arb, eps: arb, delta: arb) -> arb:
    """Ball of gamma_alpha^eps(delta) of ABC Thm 3 (eq. 16) at the current precision."""
    from flint import ctx

    # the centred form is quadratic in the bracket width: half the bits suffice
    # (bits beyond ~256 only resolve the cancellation in S' for tiny delta,
    # the bracket itself needs no more than that)
    rel = arb(2) ** (-(min(ctx.prec, 256) // 2 + 8))
    return eps + _minlog_s(alpha, eps, delta, rel) / (alpha - 1)


def gamma_upper_at(alpha: arb, eps: arb, delta: arb, p: arb) -> arb:
    """eps + log S(p)/(alpha-1) >= gamma_alpha^eps(delta) for any p in (delta, 1]."""
    return eps + log_s(alpha, eps, delta, p) / (alpha - 1)


def optimal_eps(alpha: Fraction, gamma: arb, delta: Fraction, digits: int = 15) -> Enclosure:
    """Enclosure of eps_alpha^delta(gamma) = inf{eps >= 0 : G_alpha(eps) >= gamma}
    (ABC eq. 13 with Thm 3), for exact alpha > 1, a ball gamma >= 0 (its width
    adds to the result) and delta in (0, 1).

    G is nondecreasing in eps (its defining class of mechanisms only grows), so
    an exact eps with certified G(eps) >= gamma_hi is an upper bound and one with
    certified G_upper(eps) < gamma_lo (G_upper from any p) is a lower bound.
    """
    # S'(p) is O(delta) against O(1) terms: log2(1/delta) extra bits avoid cancellation
    bits = bits_for_digits(digits) + 20 + delta_bits(delta)
    g_lo, g_hi = endpoints(gamma)
    # a float proposal only: an order beyond the float range (alpha = 1e309 overflowed, exit 4) is
    # proposed as 1e300, where the guess has long stopped depending on alpha
    af, df = float(min(alpha, Fraction(10) ** 300)), float(delta)
    try:
        guess = float_eps_opt(af, float(gamma.mid()), df)
    except (OverflowError, ValueError, ZeroDivisionError):
        # a float guess only: fall back to the classic value (a valid upper bound)
        guess = float(gamma.mid()) + math.log(1 / df) / (af - 1)
    for _ in range(8):
        with working_precision(bits):
            a, d = ball(alpha), ball(delta)
            try:
                # exact zero: every (alpha, gamma)-RDP mechanism is (0, delta)-DP
                if g_hi <= optimal_gamma_ball(a, arb(0), d):
                    return Enclosure(arb(0), arb(0), digits, bits)
                # float steps cannot resolve 15 digits (a double carries ~16, and the
                # float p* makes the lower test lose a few more): bracket to 11 digits
                # from the float guess, then bisect with certified tests only
                lo_e, hi_e = _bracket_eps(a, g_lo, g_hi, d, guess, min(digits, 11))
                if lo_e is not None:
                    lo_e, hi_e = _bisect_eps(a, g_lo, g_hi, d, lo_e, hi_e, digits)
            except Undecided:
                lo_e = None
            if lo_e is not None:
                enc = Enclosure(lo_e, hi_e, digits, bits)
                if _rel_ok(lo_e, hi_e, digits):
                    return enc
        bits *= 2
    raise PrecisionExhausted(f"optimal conversion at alpha={alpha} not certified to 1e-{digits}")


def delta_bits(delta: Fraction) -> int:
    """About log2(1/delta): the extra precision the optimal conversion needs."""
    return max(0, Fraction(delta).denominator.bit_length() - Fraction(delta).numerator.bit_length())


def _rel_ok(lo: arb, hi: arb, digits: int) -> bool:
    with working_precision(max(128, bits_for_digits(digits) + 40)):
        if lo <= 0:
            return bool(hi - lo <= arb(10) ** (-digits)) or bool(hi == 0)
        return bool(hi - lo <= lo * arb(10) ** (-digits))


def _bisect_eps(a: arb, g_lo: arb, g_hi: arb, d: arb, lo: arb, hi: arb, digits: int) -> tuple[arb, arb]:
    """Narrow a certified bracket [lo, hi] of eps_opt (G(eps) = optimal_gamma(alpha, eps,
    delta) is nondecreasing in eps) until its relative width meets 10^-digits."""
    return _bisect_increasing(lambda m: optimal_gamma_ball(a, m, d), g_lo, g_hi, lo, hi,
                              lambda lo, hi: _rel_ok(lo, hi, digits), 200)


def _bisect_increasing(G: Callable[[arb], arb], g_lo: arb, g_hi: arb, lo: arb, hi: arb,
                       narrow: Callable[[arb, arb], bool], steps: int) -> tuple[arb, arb]:
    """Narrow a certified bracket [lo, hi] of the crossing of a nondecreasing G with
    gamma in [g_lo, g_hi]: a midpoint m replaces hi when the enclosure of G(m) is
    >= g_hi, lo when it is < g_lo (the ball contains G(m), so each end keeps its
    side); stops when ``narrow(lo, hi)``, when G(m) is undecided (the caller raises
    the precision), when the midpoint rounds onto an end (no progress is possible at
    this precision), or after ``steps`` halvings."""
    for _ in range(steps):
        if narrow(lo, hi):
            break
        m = point((lo + hi) / 2)
        if not (m > lo and m < hi):
            break
        g = G(m)
        if g >= g_hi:
            hi = m
        elif g < g_lo:
            lo = m
        else:
            break
    return lo, hi


def _bracket_eps(a: arb, g_lo: arb, g_hi: arb, d: arb, guess: float, digits: int):
    """Certified [lo, hi] around eps_opt by testing points near the float guess."""
    tol = 10.0 ** (-digits) / 4
    scale = max(abs(guess), 1e-300)
    step = scale * tol
    lo = hi = None
    x_hi = guess + step
    for _ in range(60):
        e = point(arb(x_hi))
        if optimal_gamma_ball(a, e, d) >= g_hi:
            hi = e
            break
        x_hi += step
        step *= 4
    if hi is None:
        return None, None
    step = scale * tol
    x_lo = max(0.0, guess - step)
    for _ in range(60):
        e = point(arb(x_lo))
        try:
            p = arb(float_pstar(float(a.mid()), x_lo, float(d.mid())))
        except (OverflowError, ValueError, ZeroDivisionError):
            p = 2 * d
        if p <= d:
            p = point(d * (1 + arb(2) ** -40))
        if gamma_upper_at(a, e, d, point(p)) < g_lo:
            lo = e
            break
        if x_lo == 0.0:
            lo = arb(0)
            break
        x_lo = max(0.0, x_lo - step)
        step *= 4
    return lo, hi


def optimal_delta(alpha: Fraction, gamma: arb, eps: Fraction, digits: int = 15) -> Enclosure:
    """Enclosure of delta_alpha^eps(gamma) (ABC eq. 10): the smallest delta such
    that every (alpha, gamma)-RDP mechanism is (eps, delta)-DP, i.e. the root of
    G_alpha^eps(delta) = gamma (G is nonincreasing in delta: a larger delta is an
    easier target... handled by certified bisection on log delta)."""
    g_lo, g_hi = endpoints(gamma)
    bits = bits_for_digits(digits) + 20 + 64
    for _ in range(6):
        with working_precision(bits):
            a, e = ball(alpha), ball(eps)
            # G_alpha^eps(delta) is nondecreasing in delta (a weaker DP target);
            # find the smallest delta with G >= gamma.
            # the largest power 2^-k that is not (certainly) enough: "not enough" only
            # turns on as k grows (G is monotone), so gallop k = 1, 2, 4, ... and bisect
            # between the last two: about 24 evaluations of G instead of up to 3999 (a
            # scan of every k ran for hours at gamma = 0, where the delta is 0 and no
            # k is ever "not enough")
            def not_enough(k: int) -> bool:
                cand = arb(2) ** (-k)
                return interior(a, cand) and not (optimal_gamma_ball(a, e, cand) >= g_hi)

            enough_k, k = 0, 1
            while not not_enough(k):
                if k >= 3999:
                    raise PrecisionExhausted("the optimal delta is below 2^-3999")
                enough_k, k = k, min(2 * k, 3999)
            while k - enough_k > 1:
                mid = (enough_k + k) // 2
                if not_enough(mid):
                    k = mid
                else:
                    enough_k = mid
            found = k
            lo, hi = arb(2) ** (-found), arb(2) ** (-found + 1)
            # lo: G(lo) may be undecided; require G_upper(lo) < g_lo
            lo, hi = _bisect_increasing(lambda m: optimal_gamma_ball(a, e, m), g_lo, g_hi, lo, hi,
                                        lambda lo, hi: bool(hi - lo <= lo * arb(10) ** (-digits) / 2), 400)
            # certify lo really is below: G_upper(lo) < g_lo with some p
            try:
                pf = float_pstar(float(a.mid()), float(e.mid()), float(lo.mid()))
            except (OverflowError, ValueError, ZeroDivisionError):
                pf = 1.0
            p = point(arb(pf))
            if not (p > lo):
                p = point(lo * (1 + arb(2) ** -30))
            if gamma_upper_at(a, e, lo, p) < g_lo and optimal_gamma_ball(a, e, hi) >= g_hi:
                if _rel_ok(lo, hi, digits):
                    return Enclosure(lo, hi, digits, bits)
        bits *= 2
    raise PrecisionExhausted(f"optimal delta at alpha={alpha} not certified to 1e-{digits}")


def _alpha_gamma(alpha: object, gamma: object) -> tuple[Fraction, Fraction]:
    a = V.positive("alpha", alpha)
    if a <= 1:
        raise InvalidParameter("alpha", f"alpha={alpha!r} must be > 1")
    return a, V.nonnegative("rdp", gamma)


def _fixed_order(conversion: str, a: Fraction, g: Fraction, x: Fraction, digits: int,
                 optimal: Callable[..., Enclosure], closed: Callable[[arb, arb, arb], arb]) -> Enclosure:
    """Optimal route (its own certified search) or a closed form refined to ``digits``."""
    if conversion == "optimal":
        with working_precision(bits_for_digits(digits) + 40):
            return optimal(a, ball(g), x, digits)
    v, bits = refine(lambda: closed(ball(a), ball(g), ball(x)), digits=digits + 1,
                     what=f"{conversion} conversion")
    return Enclosure.from_ball(v, digits, bits)


def conversion_eps(
    alpha: object, gamma: object, delta: object, conversion: str = "classic", digits: int = 15
) -> Enclosure:
    """Enclosure of the eps that ``conversion`` gives for an (alpha, gamma)-RDP
    guarantee at this delta (alpha > 1, gamma >= 0, delta in (0, 1); exact inputs)."""
    conversion = check_conversion(conversion)
    a, g = _alpha_gamma(alpha, gamma)
    d = V.open_unit("delta", delta)
    check_optimal_delta(conversion, d)
    fn = classic_eps_ball if conversion == "classic" else balle_eps_ball
    return _fixed_order(conversion, a, g, d, V.digits(digits), optimal_eps, fn)


def conversion_delta(
    alpha: object, gamma: object, eps: object, conversion: str = "classic", digits: int = 15
) -> Enclosure:
    """Enclosure of the delta that ``conversion`` gives at this eps >= 0."""
    conversion = check_conversion(conversion)
    a, g = _alpha_gamma(alpha, gamma)
    e = V.nonnegative("eps", eps)
    if a * e > MAX_CONVERSION_ALPHA_EPS:  # a delta verify can enclose and a decimal can print (limits.py)
        raise InvalidParameter("eps", f"eps={shown(eps)} with alpha={shown(alpha)}: alpha * eps must be at most "
                                      f"{MAX_CONVERSION_ALPHA_EPS} (beyond it delta may fall below e^-(10^8), out of "
                                      "the exponent range verify evaluates in; no privacy is left to state)")
    fn = classic_delta_ball if conversion == "classic" else balle_delta_ball
    return _fixed_order(conversion, a, g, e, V.digits(digits), optimal_delta, fn)


def abc_thm4_gamma_lower(alpha: arb, eps: arb, delta: arb) -> arb:
    """ABC Thm 4 (18): gamma_alpha^eps(delta) >= max(g, f) for 0 < alpha delta < 1, with
    g = eps - log(zeta_alpha / delta)/(alpha - 1) and
    f = eps + log((e^eps - alpha delta)((delta - 1)/(delta - e^eps))^alpha + alpha delta)/(alpha - 1);
    for alpha delta >= 1 it returns the exact value eps - log(1 - delta) (eq. 17)."""
    if not interior(alpha, delta):
        return eps - (1 - delta).log()
    log_zeta = -alpha.log() + (alpha - 1) * (-1 / alpha).log1p()
    g = eps - (log_zeta - delta.log()) / (alpha - 1)
    ee = eps.exp()
    inner = (ee - alpha * delta) * (alpha * ((1 - delta) / (ee - delta)).log()).exp() + alpha * delta
    f = eps + inner.log() / (alpha - 1)
    return g.union(f) if not (g > f or f > g) else (g if g > f else f)


def abc_lemma1_eps_upper(alpha: arb, gamma: arb, delta: arb) -> arb:
    """ABC Lemma 1: eps_alpha^delta(gamma) = (gamma + log(1 - delta))_+ if alpha delta >= 1,
    else <= (1/(alpha-1)) min{((alpha-1)gamma - log(delta/zeta_alpha))_+,
    log((alpha-1) chi(gamma)/(alpha delta) + 1)}, chi(gamma) = (e^{(alpha-1)gamma} - 1)/(alpha - 1)."""
    if not interior(alpha, delta):
        return (gamma + (1 - delta).log()).nonnegative_part()
    log_zeta = -alpha.log() + (alpha - 1) * (-1 / alpha).log1p()
    first = ((alpha - 1) * gamma - delta.log() + log_zeta).nonnegative_part()
    second = (((alpha - 1) * gamma).expm1() / (alpha * delta)).log1p()
    m = first if first < second else (second if second < first else first.union(second))
    return m / (alpha - 1)
