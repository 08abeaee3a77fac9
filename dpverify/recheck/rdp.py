"""Second route for the Renyi-DP quantities, on mpmath and MPFR (gmpy2).

Shares no code with :mod:`dpverify.rdp`:

* Renyi divergences are re-derived from their *defining integrals*
  (E_Q[(dP/dQ)^alpha] by ``mpmath.quad`` for Gaussian, Laplace and fractional
  orders of the subsampled Gaussian; finite sums for randomized response and
  for integer orders of the subsampled Gaussian, i.e. the binomial sum the
  arb route uses, but re-implemented here in mpmath);
* fixed-order conversions (``rdp.to_dp_*``) by their closed forms (classic, Balle) in
  MPFR directed rounding (:mod:`.core`: an enclosure, not an estimate), and ABC Thm 3
  by mpmath bisection in p and eps (an estimate);
* ``rdp.epsilon``, the infimum over every real alpha > 1: the upper end is the conversion
  at one order (the recorded alpha*, a hint, polished by a local search), the lower end is
  proved on cells of log(alpha - 1) (:func:`_prove_infimum_at_least`); an order that
  converts below the recorded lower end refutes it.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Callable, Mapping

import mpmath
from gmpy2 import mpfr
from mpmath import mpf

from ..errors import CertificateRejected, CouldNotReprove, MalformedCertificate
from .core import Arith, Iv
from .gdp import enclose, exact_input, to_mpf
from .verify import Recheck, needed_digits, parse_bound, register

_DPS = 40


def _opt(inputs: Mapping[str, Any], key: str, default: str) -> Fraction:
    if key not in inputs:
        return Fraction(default)
    return exact_input(inputs, key)


def _cgf_fn(inputs: Mapping[str, Any]) -> Callable[[mpf], mpf]:
    """alpha -> log E_Q[(dP/dQ)^alpha] of one step, on mpmath."""
    name = inputs.get("mechanism")
    if name == "gaussian":
        if "mu" in inputs:
            mu = to_mpf(exact_input(inputs, "mu"))
        else:
            mu = to_mpf(_opt(inputs, "sensitivity", "1")) / to_mpf(exact_input(inputs, "noise_multiplier"))

        def f(a: mpf) -> mpf:
            g = lambda x: mpmath.npdf(x, mu, 1) ** a * mpmath.npdf(x, 0, 1) ** (1 - a)  # noqa: E731
            return mpmath.log(mpmath.quad(g, [-mpmath.inf, 0, mu, mpmath.inf]))

        return f
    if name == "laplace":
        lam = to_mpf(_opt(inputs, "sensitivity", "1")) / to_mpf(exact_input(inputs, "scale"))

        def f(a: mpf) -> mpf:
            g = lambda x: mpmath.exp(-a * abs(x) - (1 - a) * abs(x - lam)) / 2  # noqa: E731
            return mpmath.log(mpmath.quad(g, [-mpmath.inf, 0, lam, mpmath.inf]))

        return f
    if name in ("rr", "pure"):
        if name == "rr":
            p = to_mpf(exact_input(inputs, "p"))
        else:
            e0 = to_mpf(exact_input(inputs, "eps0"))
            p = mpmath.exp(e0) / (1 + mpmath.exp(e0))
        return lambda a: mpmath.log(p**a * (1 - p) ** (1 - a) + (1 - p) ** a * p ** (1 - a))
    if name == "subsampled-gaussian":
        s = to_mpf(exact_input(inputs, "noise_multiplier"))
        q = to_mpf(exact_input(inputs, "rate"))

        def f(a: mpf) -> mpf:
            if a == int(a) and a <= 5000:
                n = int(a)
                tot = mpf(0)
                for k in range(n + 1):
                    tot += mpmath.binomial(n, k) * q**k * (1 - q) ** (n - k) * mpmath.exp((k * k - k) / (2 * s * s))
                return mpmath.log(tot)
            g = lambda x: mpmath.npdf(x, 0, s) * (1 - q + q * mpmath.exp((2 * x - 1) / (2 * s * s))) ** a  # noqa: E731
            pts = [-mpmath.inf, -10 * s, 0, mpf(1) / 2, a, a + 10 * s, mpmath.inf]
            return mpmath.log(mpmath.quad(g, sorted(set(pts))))

        return f
    raise CertificateRejected(f"no RDP re-checker for mechanism {name!r}")


def _curve_fn(inputs: Mapping[str, Any]) -> Callable[[mpf], mpf]:
    k = int(exact_input(inputs, "compositions")) if "compositions" in inputs else 1
    f = _cgf_fn(inputs)
    return lambda a: k * f(a)


def _search_fn(inputs: Mapping[str, Any]) -> Callable[[mpf], mpf]:
    """The curve used only to *choose* orders in searches (never as the
    re-derived value): for the Gaussian the textbook alpha mu^2 / 2 instead of
    the (slow) quadrature; other mechanisms use their re-check route."""
    if inputs.get("mechanism") == "gaussian":
        k = int(exact_input(inputs, "compositions")) if "compositions" in inputs else 1
        if "mu" in inputs:
            mu = to_mpf(exact_input(inputs, "mu"))
        else:
            mu = to_mpf(_opt(inputs, "sensitivity", "1")) / to_mpf(exact_input(inputs, "noise_multiplier"))
        return lambda a: k * (a - 1) * a * mu * mu / 2
    return _curve_fn(inputs)


@register("rdp.divergence")
def recheck_divergence(inputs: Mapping[str, Any], result: Mapping[str, Any]) -> Recheck:
    a = exact_input(inputs, "alpha")
    if a <= 0 or a == 1:
        raise CertificateRejected("alpha must be in (0,1) or (1, inf)")
    digits = needed_digits(result)
    with mpmath.workdps(2 * digits + 20):
        am = to_mpf(a)
        v = _curve_fn(inputs)(am) / (am - 1)
    with mpmath.workdps(3 * digits + 30):
        am = to_mpf(a)
        v2 = _curve_fn(inputs)(am) / (am - 1)
        err = 10 * abs(v - v2) + abs(v2) * mpf(10) ** (-(2 * digits + 10))
        if inputs.get("mechanism") == "gaussian":
            # the quadrature agrees with the closed form alpha mu^2 / 2 to its error:
            # the exact rational closed form is the value (a point enclosure)
            fs = _search_fn(inputs)(am) / (am - 1)
            if abs(fs - v2) <= err + abs(v2) * mpf(10) ** -(2 * digits):
                mu = (exact_input(inputs, "mu") if "mu" in inputs else
                      _opt(inputs, "sensitivity", "1") / exact_input(inputs, "noise_multiplier"))
                k = exact_input(inputs, "compositions") if "compositions" in inputs else 1
                exact = k * a * mu * mu / 2
                if True:
                    return Recheck(lo=_floor(exact), hi=_ceil(exact), dps=3 * digits + 30)
    return Recheck(value=v2, err=err, dps=3 * digits + 30)


def _floor(x: Fraction) -> mpf:
    return mpf(mpmath.libmp.from_rational(x.numerator, x.denominator, 400, "f"))


def _ceil(x: Fraction) -> mpf:
    return mpf(mpmath.libmp.from_rational(x.numerator, x.denominator, 400, "c"))


# --------------------------------------------------------------------------- conversions


def _classic(a: mpf, g: mpf, d: mpf) -> mpf:
    return g + mpmath.log(1 / d) / (a - 1)


def _balle(a: mpf, g: mpf, d: mpf) -> mpf:
    return max(mpf(0), g + mpmath.log1p(-1 / a) - (mpmath.log(d) + mpmath.log(a)) / (a - 1))


def _s(a: mpf, e: mpf, d: mpf, p: mpf) -> mpf:
    """ABC eq. (16): p^a (p-d)^(1-a) + (1-p)^a (e^e - p + d)^(1-a)."""
    return p**a * (p - d) ** (1 - a) + (1 - p) ** a * (mpmath.exp(e) - p + d) ** (1 - a)


def _min_log_s(a: mpf, e: mpf, d: mpf, iters: int) -> tuple[mpf, mpf]:
    """(p, value): min over p in (d, 1] of log ABC (16) by golden-section search in
    t = log(p - d), so that minimisers near d are resolved (S is convex in p). The value
    is log S at an evaluated point, so e + value / (a - 1) bounds gamma from above; p is
    the search's point (any p in (d, 1] gives such a bound). For a d >= 1 the minimum is
    at p = 1 (ABC Thm 4 eq. 17)."""
    if a * d >= 1:
        return mpf(1), (1 - a) * mpmath.log(1 - d)
    tl, th = mpmath.log(mpf(10) ** (-mpmath.mp.dps) * d), mpmath.log(1 - d)
    h = lambda t: mpmath.log(_s(a, e, d, d + mpmath.exp(t)))  # noqa: E731
    t_star, best = _golden(h, tl, th, iters)
    edge = h(th)
    return (d + mpmath.exp(t_star), best) if best < edge else (mpf(1), edge)


def _gamma_opt(a: mpf, e: mpf, d: mpf) -> mpf:
    """ABC's gamma_alpha(e, delta) = e + min_p log S(p) / (alpha - 1)."""
    return e + _min_log_s(a, e, d, int(mpmath.mp.prec * 1.6) + 40)[1] / (a - 1)


def _optimal(a: mpf, g: mpf, d: mpf) -> mpf:
    if _gamma_opt(a, mpf(0), d) >= g:
        return mpf(0)
    lo, hi = mpf(0), _classic(a, g, d) + 1
    for _ in range(int(mpmath.mp.prec) + 20):
        m = (lo + hi) / 2
        if _gamma_opt(a, m, d) >= g:
            hi = m
        else:
            lo = m
    return hi


_CONV = {"classic": _classic, "balle": _balle, "optimal": _optimal}


def _conv(inputs: Mapping[str, Any]) -> Callable[[mpf, mpf, mpf], mpf]:
    c = inputs.get("conversion")
    if c not in _CONV:
        raise MalformedCertificate(f"inputs.conversion={c!r} is not one of {sorted(_CONV)}")
    return _CONV[c]


@register("rdp.epsilon", explain=(
    "The infimum over every real alpha > 1 of the conversion of D_alpha. Upper end: the "
    "conversion at one order (the recorded alpha*, a hint, polished by golden-section search), "
    "D_alpha by mpmath quadrature or finite sums (Gaussian + classic: the closed form c + 2 sqrt(cL)). "
    "Lower end: cells of log(alpha - 1); convexity of (alpha - 1) D_alpha gives a linear minorant "
    "per cell; classic and Balle are Moebius functions of alpha on a cell (checked at its ends), the "
    "optimal conversion is bounded through ABC's gamma at a fixed p (convex in alpha); alpha near 1 "
    "uses KL >= -f(1 - u)/u, large alpha the monotonicity of D_alpha. An order converting below the "
    "recorded lower end refutes the certificate."))
def recheck_epsilon(inputs: Mapping[str, Any], result: Mapping[str, Any]) -> Recheck:
    conv = _conv(inputs)
    d = exact_input(inputs, "delta")
    if not 0 < d < 1:
        raise CertificateRejected("delta must be in (0, 1)")
    if inputs.get("mechanism") == "gaussian" and inputs.get("conversion") == "classic":
        # inf over real alpha > 1 of c alpha + L/(alpha - 1) (convex) = c + 2 sqrt(c L),
        # c = k mu^2 / 2, L = log(1/delta): the infimum in closed form, no alpha trusted
        k = exact_input(inputs, "compositions") if "compositions" in inputs else Fraction(1)
        mu = (exact_input(inputs, "mu") if "mu" in inputs else
              _opt(inputs, "sensitivity", "1") / exact_input(inputs, "noise_multiplier"))
        from .gdp import stable_value

        def closed(dps: int) -> mpf:
            with mpmath.workdps(dps):
                c = to_mpf(k * mu * mu / 2)
                L = -mpmath.log(to_mpf(d))
                return c + 2 * mpmath.sqrt(c * L)

        return stable_value(closed, needed_digits(result))
    alpha_text = result.get("alpha")
    if alpha_text is None:
        # claim certificates carry no order: search it here (classic / balle only)
        if inputs.get("conversion") == "optimal":
            raise MalformedCertificate("an optimal-conversion rdp.epsilon needs result.alpha")
        f0 = _search_fn(inputs)
        with mpmath.workdps(needed_digits(result) + 12):
            dm0 = to_mpf(d)
            h0 = lambda t: conv(1 + mpmath.exp(t), f0(1 + mpmath.exp(t)) / mpmath.exp(t), dm0)  # noqa: E731
            grid = [mpf(k) for k in range(-8, 16)]
            t0 = min(grid, key=h0)
            alpha_text = mpmath.nstr(1 + mpmath.exp(_golden(h0, t0 - 1, t0 + 1, 4 * mpmath.mp.dps + 40)[0]), mpmath.mp.dps + 10)
    if not isinstance(alpha_text, str):
        raise MalformedCertificate("rdp.epsilon needs result.alpha (the order of the upper end)")
    a_star = exact_input({"alpha": alpha_text}, "alpha")
    if a_star <= 1:
        raise CertificateRejected("recorded order must be > 1")
    digits = needed_digits(result)
    dps = 2 * digits + 15
    with mpmath.workdps(dps):
        f = _curve_fn(inputs)  # built at this precision: it captures its parameters as mpf
        dm = to_mpf(d)
        eps_of = lambda a: conv(a, f(a) / (a - 1), dm)  # noqa: E731
        am = to_mpf(a_star)
        if inputs.get("conversion") != "optimal":
            # the recorded order is a rounded hint: polish it (any order's value bounds the
            # infimum from above, so the search only tightens the upper end)
            g = _cell_curve(inputs, f)
            h = lambda t: conv(1 + mpmath.exp(t), g(1 + mpmath.exp(t)) / mpmath.exp(t), dm)  # noqa: E731
            t_star = mpmath.log(am - 1)
            # the search only chooses the order (every order's value bounds the infimum from
            # above) and eps is flat there: 60 golden steps at 30 digits place t within
            # 2e-3 * 0.618^60 ~ 6e-16, an eps error ~ t-error^2, far below any recorded width;
            # at the full precision each step cost a quadrature of up to 2000 bits
            with mpmath.workdps(min(dps, 30)):
                t_best = _golden(h, t_star - mpf(10) ** -3, t_star + mpf(10) ** -3, 60)[0]
            if h(t_best) < h(t_star):
                am = 1 + mpmath.exp(t_best)
        v = eps_of(am)
    lo_rec = parse_bound(result["enclosure"]["lo"], "result.enclosure.lo", dps, "f") \
        if isinstance(result.get("enclosure"), dict) else None
    with mpmath.workdps(dps):
        err = abs(v) * mpf(10) ** (-(digits + 4))
        if lo_rec is None or lo_rec <= 0:
            return Recheck(value=v, err=err, dps=dps)  # eps >= 0 always: nothing to prove below
        # the lower end: inf over every real alpha > 1 is >= the recorded lo, by cells. Each
        # cell compares with a slack of 10^-(digits + 6) relative: 12 guard digits beyond
        # the recorded width suffice (the route's values at 2 digits + 15 were wasted on
        # quadratures, most of the time of a Balle certificate)
        with mpmath.workdps(min(dps, digits + 12)):
            _prove_infimum_at_least(inputs, lo_rec, dm, f, digits)
        # [lo_rec, v + err] encloses the infimum (lo proved, v an upper bound at alpha*)
        return Recheck(lo=lo_rec, hi=v + err, dps=dps)


def _gaussian_mu(inputs: Mapping[str, Any]) -> Fraction:
    return exact_input(inputs, "mu") if "mu" in inputs else (
        _opt(inputs, "sensitivity", "1") / exact_input(inputs, "noise_multiplier"))


def _cell_curve(inputs: Mapping[str, Any], f: Callable[[mpf], mpf]) -> Callable[[mpf], mpf]:
    """alpha -> (alpha - 1) D_alpha of the composed mechanism, as used by the cell proof:
    the Gaussian's closed form k alpha (alpha - 1) mu^2 / 2 (Mironov 2017 Prop 7), else the
    re-check route's own curve (quadrature or finite sums)."""
    if inputs.get("mechanism") == "gaussian":
        k = int(exact_input(inputs, "compositions")) if "compositions" in inputs else 1
        mu = to_mpf(_gaussian_mu(inputs))
        return lambda a: k * a * (a - 1) * mu * mu / 2
    return f


def _prove_infimum_at_least(inputs: Mapping[str, Any], lo: mpf, d: mpf, f: Callable[[mpf], mpf],
                            digits: int) -> None:
    """Prove inf_{alpha > 1} conv(alpha, D_alpha, delta) >= lo, or refute it, or raise
    CouldNotReprove. No order is trusted.

    Used: f(alpha) = (alpha - 1) D_alpha is convex (Hoelder: the cumulant generating
    function of the privacy loss), f(1) = 0, and D_alpha = f / (alpha - 1) is
    non-decreasing (van Erven, Harremoes 2014 Thm 3). On a cell [a, b] of orders f is
    bounded below by the line f(a) + s (alpha - a), s the chord slope over [a - w, a]
    (convexity), an error O(w^2), so cells near the optimum stay wide. Then, with
    L = log(1/delta):

    * classic: eps >= (f(a) + s (alpha - a) + L) / (alpha - 1), a Moebius function of
      alpha, monotone on the cell: checked at both ends;
    * balle: (alpha - 1) eps = f + L + k(alpha), k = -log alpha + (alpha - 1) log(1 - 1/alpha)
      convex with k' = log(1 - 1/alpha), so k lies above its tangent at the cell centre:
      again linear over (alpha - 1), checked at both ends;
    * optimal (ABC Thm 3): eps_opt(alpha, r) >= lo iff gamma_alpha(lo, delta) < r, and
      (alpha - 1) gamma_alpha(lo) <= (alpha - 1) lo + log S_alpha(p) for any fixed p, a
      convex function of alpha (log-sum-exp of affine terms): below the line of f on the
      cell if it is at both ends.

    The orders (1, 1 + e^t0] use D_alpha >= KL >= -f(1 - u) / u (f convex, f(1) = 0) with
    the conversion's bound at the cell's far end (classic and optimal are non-increasing
    in alpha at fixed RDP value; Balle's terms are bounded one by one); [1 + e^t1, inf)
    uses D_alpha >= D_{1 + e^t1} and each conversion's limit. A cell whose midpoint order
    converts below ``lo`` refutes it (the infimum is at most any order's value)."""
    conv_name = inputs.get("conversion")
    curve = _cell_curve(inputs, f)
    L = -mpmath.log(d)
    slack = lo * mpf(10) ** (-(digits + 6))  # the route's own rounding, far below the widths
    target = lo + slack

    def D(a: mpf) -> mpf:
        return curve(a) / (a - 1)

    def cell_ok(a: mpf, b: mpf) -> bool:
        w = b - a
        x0 = a - w if a - w > 1 else (1 + a) / 2
        fa = curve(a)
        sl = (fa - curve(x0)) / (a - x0)
        line = lambda x: fa + sl * (x - a)  # noqa: E731  (f >= line on [a, b])
        if conv_name == "classic":
            return min((line(x) + L) / (x - 1) for x in (a, b)) >= target
        if conv_name == "balle":
            c = (a + b) / 2
            kc, kp = -mpmath.log(c) + (c - 1) * mpmath.log1p(-1 / c), mpmath.log1p(-1 / c)
            return min((line(x) + L + kc + kp * (x - c)) / (x - 1) for x in (a, b)) >= target
        p = _min_log_s((a + b) / 2, target, d, int(mpmath.mp.prec) + 20)[0]
        return all((x - 1) * target + mpmath.log(_s(x, target, d, p)) < line(x) for x in (a, b))

    def below(a: mpf) -> bool:
        """Is the conversion at the order a below lo (then so is the infimum)?"""
        if conv_name == "optimal":  # eps_opt(a, r) <= x iff gamma_a(x, delta) >= r
            return _gamma_opt(a, lo - slack, d) >= D(a)
        return _CONV[conv_name](a, D(a), d) < lo - slack

    # the end near alpha = 1
    t0 = mpf(-14)
    u0 = mpmath.exp(t0)
    kl = -curve(1 - u0) / u0
    a0 = 1 + u0
    if conv_name == "classic":
        near = kl + L / u0 >= target
    elif conv_name == "balle":
        near = kl + mpmath.log(u0) - mpmath.log(a0) + (L - mpmath.log(a0)) / u0 >= target
    else:
        near = _gamma_opt(a0, target, d) < kl  # an upper bound of gamma (value at a point)
    if not near:
        raise CouldNotReprove("the orders alpha near 1 are not re-proved above the recorded lower end")
    # the far end: double t1 until D_A alone (with the conversion's limit) clears lo
    t1 = mpf(2)
    while True:
        A = 1 + mpmath.exp(t1)
        r = D(A)
        far = {"classic": r, "balle": r + mpmath.log1p(-1 / A) - mpmath.log(A) / (A - 1),
               "optimal": r + mpmath.log1p(-d)}[conv_name]
        if far >= target:
            break
        if t1 > 64:
            raise CouldNotReprove("the orders alpha -> inf are not re-proved above the recorded lower end")
        t1 *= 2
    stack = [(t0 + (t1 - t0) * i / 64, t0 + (t1 - t0) * (i + 1) / 64) for i in range(64)][::-1]
    min_w = mpf(10) ** (-(digits + 8))
    cells = 0
    while stack:
        ta, tb = stack.pop()
        cells += 1
        if cells > 20000:
            raise CouldNotReprove("the infimum over alpha needs more than 20000 cells")
        a, b = 1 + mpmath.exp(ta), 1 + mpmath.exp(tb)
        if cell_ok(a, b):
            continue
        tm = (ta + tb) / 2
        if below(1 + mpmath.exp(tm)):
            raise CertificateRejected(
                f"the order alpha = {mpmath.nstr(1 + mpmath.exp(tm), 12)} gives an eps below the recorded "
                f"lower end {mpmath.nstr(lo, 15)}: the infimum over alpha is smaller"
            )
        if tb - ta < min_w:
            raise CouldNotReprove(f"the cell of orders near alpha = {mpmath.nstr(a, 12)} is not re-proved")
        stack.append((tm, tb))
        stack.append((ta, tm))


def _classic_iv(A: Arith, a: Fraction, g: Fraction, d: Fraction) -> Iv:
    """rdp + log(1/delta) / (alpha - 1) (Mironov 2017 Prop 3), directed rounding."""
    return A.add(A.q(g), A.div(A.neg(A.log(A.q(d))), A.q(a - 1)))


def _balle_iv(A: Arith, a: Fraction, g: Fraction, d: Fraction) -> Iv:
    """max(0, rdp + log1p(-1/alpha) - (log delta + log alpha) / (alpha - 1)) (Balle et al.
    2020 Thm 21), directed rounding; max(0, .) is monotone, applied to both ends."""
    v = A.sub(A.add(A.q(g), A.log1p(A.q(-1 / a))), A.div(A.add(A.log(A.q(d)), A.log(A.q(a))), A.q(a - 1)))
    return (max(mpfr(0), v[0]), max(mpfr(0), v[1]))


def _balle_delta_exponent(A: Arith, a: Fraction, g: Fraction, e: Fraction) -> Iv:
    """log of zeta e^((alpha-1)(rdp-eps)), zeta = (1/alpha)(1-1/alpha)^(alpha-1) (Balle et al.
    2020 Thm 21 solved for delta): -log alpha + (alpha-1) log1p(-1/alpha) + (alpha-1)(rdp-eps)."""
    return A.add(A.sub(A.mul(A.q(a - 1), A.log1p(A.q(-1 / a))), A.log(A.q(a))), A.q((a - 1) * (g - e)))


_CONV_IV = {"classic": _classic_iv, "balle": _balle_iv}


@register("rdp.to_dp_eps")
def recheck_to_dp_eps(inputs: Mapping[str, Any], result: Mapping[str, Any]) -> Recheck:
    """eps at one order: classic and Balle by their closed forms in MPFR directed
    rounding (:func:`_classic_iv`, :func:`_balle_iv`); optimal (ABC Thm 3) by mpmath
    bisection in eps and golden-section search in p (an estimate)."""
    conv = _conv(inputs)
    a, g, d = exact_input(inputs, "alpha"), exact_input(inputs, "rdp"), exact_input(inputs, "delta")
    if a <= 1 or g < 0 or not 0 < d < 1:
        raise CertificateRejected("need alpha > 1, rdp >= 0, delta in (0, 1)")
    digits = needed_digits(result)
    c = inputs.get("conversion")
    if c in _CONV_IV:
        return enclose(lambda A: _CONV_IV[c](A, a, g, d), digits)
    dps = 2 * digits + 20
    with mpmath.workdps(dps):
        v = conv(to_mpf(a), to_mpf(g), to_mpf(d))
        return Recheck(value=v, err=abs(v) * mpf(10) ** (-(digits + 5)), dps=dps)


@register("rdp.to_dp_delta")
def recheck_to_dp_delta(inputs: Mapping[str, Any], result: Mapping[str, Any]) -> Recheck:
    """delta at one order: classic exp(-(alpha-1)(eps-rdp)) and Balle
    zeta e^((alpha-1)(rdp-eps)), each capped at 1 (a delta is a probability), in MPFR
    directed rounding: the cap is decided on the exact rationals (classic) or on an
    enclosure of the exponent that excludes 0 (Balle); an exponent below MPFR's range
    gives [0, least positive], never a floor. Optimal (ABC Thm 3): mpmath bisection on
    log delta (an estimate)."""
    c = inputs.get("conversion")
    a, g, e = exact_input(inputs, "alpha"), exact_input(inputs, "rdp"), exact_input(inputs, "eps")
    if a <= 1 or g < 0 or e < 0:
        raise CertificateRejected("need alpha > 1, rdp >= 0, eps >= 0")
    digits = needed_digits(result)
    one = Recheck(lo=mpf(1), hi=mpf(1), dps=30)
    # a delta capped at 1 is exactly 1: the enclosure is the point [1, 1], not 1 +- err
    # (which the producer's exact [1, 1] could never contain)
    if c == "classic":
        if e <= g:  # exp(-(alpha - 1)(eps - rdp)) >= 1, decided on the exact rationals
            return one
        return enclose(lambda A: A.exp(A.q(-(a - 1) * (e - g))), digits)
    if c == "balle":
        def f(A: Arith) -> Iv:
            x = _balle_delta_exponent(A, a, g, e)
            if x[0] >= 0:
                return (mpfr(1), mpfr(1))
            v = A.exp(x)
            return (v[0], min(v[1], mpfr(1)))

        r = enclose(f, digits)
        return one if r.lo == 1 else r
    dps = 2 * digits + 20
    with mpmath.workdps(dps):
        am, gm, em = to_mpf(a), to_mpf(g), to_mpf(e)
        if c == "optimal":
            # smallest delta with gamma_alpha^eps(delta) >= rdp: bisection on log delta
            lo, hi = mpmath.log(mpf(10) ** -300), mpf(0)
            for _ in range(int(mpmath.mp.prec) + 30):
                m = (lo + hi) / 2
                if _gamma_opt(am, em, mpmath.exp(m)) >= gm:
                    hi = m
                else:
                    lo = m
            v = mpmath.exp(hi)
        else:
            raise MalformedCertificate(f"inputs.conversion={c!r} is not one of {sorted(_CONV)}")
        return Recheck(value=v, err=abs(v) * mpf(10) ** (-(digits + 3)), dps=dps)


# --------------------------------------------------------------------------- ABC Fig 2 quantities


def _golden(h: Callable[[mpf], mpf], tl: mpf, th: mpf, iters: int) -> tuple[mpf, mpf]:
    """(argmin, min) of a unimodal h on [tl, th] by golden-section search."""
    gr = (mpmath.sqrt(5) - 1) / 2
    x1, x2 = th - gr * (th - tl), tl + gr * (th - tl)
    f1, f2 = h(x1), h(x2)
    for _ in range(iters):
        if f1 <= f2:
            th, x2, f2 = x2, x1, f1
            x1 = th - gr * (th - tl)
            f1 = h(x1)
        else:
            tl, x1, f1 = x1, x2, f2
            x2 = tl + gr * (th - tl)
            f2 = h(x2)
    return (tl + th) / 2, min(f1, f2)


def _gauss_balle_inf(sigma: mpf, T: int, d: mpf) -> mpf:
    """inf over alpha in (1, 1/delta] of Balle's conversion of alpha T/(2 sigma^2)
    (= ABC Lemma 2's eps_0), by golden-section search in log(alpha - 1) (the
    function is smooth and unimodal there)."""
    rho = 1 / (2 * sigma**2)
    h = lambda t: _balle(1 + mpmath.exp(t), (1 + mpmath.exp(t)) * rho * T, d)  # noqa: E731
    return _golden(h, mpf(-12), mpmath.log(1 / d - 1), 200)[1]


def _eps_ma(sigma: mpf, T: int, d: mpf) -> mpf:
    rho = 1 / (2 * sigma**2)
    return rho * T + mpmath.sqrt(4 * rho * T * mpmath.log(1 / d))


@register("rdp.abc_gain")
def recheck_abc_gain(inputs: Mapping[str, Any], result: Mapping[str, Any]) -> Recheck:
    sigma, d = exact_input(inputs, "noise_multiplier"), exact_input(inputs, "delta")
    T = int(exact_input(inputs, "compositions"))
    with mpmath.workdps(40):
        s, dm = to_mpf(sigma), to_mpf(d)
        v = _eps_ma(s, T, dm) - _gauss_balle_inf(s, T, dm)
        return Recheck(value=v, err=mpf(10) ** -25, dps=40)


@register("rdp.abc_extra_iterations")
def recheck_abc_extra(inputs: Mapping[str, Any], result: Mapping[str, Any]) -> Recheck:
    sigma, d, e = (exact_input(inputs, k) for k in ("noise_multiplier", "delta", "eps"))
    with mpmath.workdps(40):
        s, dm, em = to_mpf(sigma), to_mpf(d), to_mpf(e)
        L = mpmath.log(1 / dm)
        tma = int(mpmath.floor(2 * s**2 * (mpmath.sqrt(L + em) - mpmath.sqrt(L)) ** 2))
        lo, hi = tma, 4 * tma + 10
        while _gauss_balle_inf(s, hi, dm) <= em:
            hi *= 2
        while hi - lo > 1:
            m = (lo + hi) // 2
            if _gauss_balle_inf(s, m, dm) <= em:
                lo = m
            else:
                hi = m
        return Recheck(value=mpf(lo - tma), err=mpf(0), dps=40)
