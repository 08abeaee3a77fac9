"""Second route for event-tree certificates (``events.epsilon``,
``events.delta``, ``events.claim``), on mpmath only (nothing from the arb
side, not even the event parser: the canonical JSON tree is walked here).

Covered, each by its own pair written again here:

* gaussian, laplace, their poisson_sampled versions (AFA Thm 11 (1)) and
  sampled_without_replacement: add/remove by AFA Thm 11 (2) (the Poisson pair
  at the replace-one shift 2C), replace-one by AFA Prop 30 + Cor 32 (the pair
  whose curve is the maximum of the "remove" and "add" curves, :func:`.wor.max_curve_tails`);
* epsilon_delta (LT Thm 4.5 pair, also Poisson-sampled), randomized_response
  (exact finite laws);
* mixture_of_gaussians (:func:`_mog`): N(0, s^2) vs sum_i p_i N(c_i, s^2) per
  direction, the loss inverted by a root whose bracket is certified in
  ``mpmath.iv`` interval arithmetic;
* discrete_laplace (:func:`_dlap`, exact rational loss atoms, closed-form
  geometric masses) and discrete_gaussian (:func:`_dgauss`, atoms on a window
  with a certified geometric bound of the rest);
* zcdp (with plain Gaussian events) through the optimal RDP -> DP conversion
  (:mod:`.events_zcdp`), no_op, non_private, self_composed, composed.

The same PLD as ``pld.*`` (recheck.pld) gives [lo', hi'].
Anything else is refused with "could not re-prove" (fail closed).

Proof and estimate: Gaussian and Laplace leaves (also Poisson-sampled and
without replacement, and the Cor 32 maximum) hand :mod:`.pld` interval tails in
directed rounding (:func:`.pld.gauss_tails`, :func:`.pld.laplace_tails`,
:func:`.wor.max_curve_tails`): a proof. The other leaves below still hand it
mpmath tails: an estimate (``verify --explain``, :data:`.kinds.STEPS`).

Precision of the mpmath tails: the PLD route rounds every such mass outward to units 2^-K (one unit
of margin each way) and forms second differences of the curve (which lose
about m = 8 bits). Every tail handed to it here is computed at a working
precision of at least K + 64 bits, so its error (evaluation, the certified
root bracket, the Gaussian series' tail) stays below 2^-(K + 30), far inside
the unit margin.
"""

from __future__ import annotations

import bisect
import math
from fractions import Fraction
from typing import Any, Mapping

import mpmath
from mpmath import iv, mpf

from ..errors import CertificateRejected, CouldNotReprove, MalformedCertificate
from .gdp import exact_input, to_mpf
from .pld import (_units, _compose, _delta_bounds, _eps_bounds, _finite, gauss_tails, laplace_tails,
                  register_queries)
from .wor import max_curve_tails
from ..certificate.format import EVENT_FIELDS, SENSITIVITY_CONVENTION
from .verify import RECHECKERS, Recheck

_DIRS = {"add-remove": ["remove", "add"], "add": ["add"], "remove": ["remove"],
         "replace-one": ["replace"], "replace-special": ["remove", "add"]}

#: Largest discrete-Gaussian window / discrete-Laplace sensitivity (atoms) enumerated before failing closed.
MAX_ATOMS = 200_000
#: Largest one-step grid (knots at 2^-8) the second route discretises before failing closed.
MAX_KNOTS = 1 << 21


def _num(obj: Mapping[str, Any], key: str) -> Fraction:
    return exact_input(obj, key)


def _int(obj: Mapping[str, Any], key: str) -> int:
    v = obj.get(key)
    if isinstance(v, bool) or not isinstance(v, int):
        raise MalformedCertificate(f"inputs.event: {key} must be an integer")
    return v


def _cannot(what: str) -> CouldNotReprove:
    return CouldNotReprove(f"could not re-prove: the independent route does not cover {what}")


def _dyadic(x: mpf) -> Fraction:
    """The exact value of a finite mpf (grid points i 2^-8 are exact)."""
    sign, man, exp, _ = x._mpf_
    if not mpmath.isfinite(x):
        raise ValueError("not finite")
    v = Fraction(int(man)) * (Fraction(2) ** int(exp))
    return -v if sign else v


def _ivq(x: Fraction):
    """A rational as an mpmath.iv interval (outward rounded)."""
    return iv.mpf(x.numerator) / x.denominator


# --------------------------------------------------------------------------- finite atoms


def _atoms(losses: list, P: list, Q: list, inf_p: mpf):
    """Tails of a pair whose loss takes the exact rational values ``losses``
    (any order) with masses P, Q, plus P-mass ``inf_p`` at loss +inf: the
    comparison loss > eps is exact (eps is a dyadic grid point)."""
    order = sorted(range(len(losses)), key=lambda j: losses[j])
    ls = [losses[j] for j in order]
    sp, sq = [mpf(0)] * (len(ls) + 1), [mpf(0)] * (len(ls) + 1)
    for k in range(len(ls) - 1, -1, -1):
        sp[k], sq[k] = sp[k + 1] + P[order[k]], sq[k + 1] + Q[order[k]]

    def tails(e: mpf) -> tuple[mpf, mpf]:
        j = bisect.bisect_right(ls, _dyadic(e))  # first atom with loss > e
        return sp[j], sq[j]

    return tails, inf_p


def _dlap(a: Fraction, D: int):
    """(DLap(a), DLap(a) + D), pmf e^{-a|x|} / Z, Z = (1 + r)/(1 - r), r = e^-a
    (the sum of the two geometric series). Loss a(|x - D| - |x|): a D for
    x <= 0, a (D - 2x) for 0 < x < D, -a D for x >= D. Lumped ends by the
    geometric series: P(x <= 0) = 1/((1 - r) Z), P(x >= D) = r^D/((1 - r) Z);
    Q(x) = P(x - D). The pair is symmetric (x -> D - x), so one orientation
    serves every direction (AFA Prop 8 remark: log-concave pmf)."""
    if a <= 0 or D < 1:
        raise CertificateRejected("discrete_laplace needs noise_parameter > 0 and sensitivity >= 1")
    if D > MAX_ATOMS:
        raise _cannot(f"discrete_laplace with sensitivity above {MAX_ATOMS}")
    r = mpmath.exp(-to_mpf(a))
    Z = (1 + r) / (1 - r)

    def point(x: int) -> mpf:  # P(X = x)
        return r ** abs(x) / Z

    def low(k: int) -> mpf:  # P(X <= k), k <= 0
        return r ** (-k) / ((1 - r) * Z)

    def high(k: int) -> mpf:  # P(X >= k), k >= 0
        return r ** k / ((1 - r) * Z)

    # atom x = 0 stands for all x <= 0 and atom x = D for all x >= D; Y = X + D
    losses = [a * (D - 2 * x) for x in range(D + 1)]
    P = [low(0)] + [point(x) for x in range(1, D)] + [high(D)]
    Q = [low(-D)] + [point(x - D) for x in range(1, D)] + [high(0)]
    return _atoms(losses, P, Q, mpf(0))


def _dgauss(s: Fraction, D: int):
    """(N_Z(0, s^2), N_Z(D, s^2)), pmf t_x / Z with t_x = e^{-x^2/(2 s^2)}.
    Loss (D^2 - 2 D x)/(2 s^2), exact rational. Atoms x in [-W, W + D] are
    listed. Z = sum_{|x| <= M} t_x + rest, M = W + D, with
    0 <= rest <= 2 t_{M+1}/(1 - rho), rho = e^{-(2M+3)/(2 s^2)} (ratio test:
    t_{x+1}/t_x = e^{-(2x+1)/(2 s^2)} <= rho for x >= M + 1); the midpoint is
    used, its error rest/2 <= t_{W+1}/(1 - rho) relative. The unlisted P-mass
    above the window (x < -W, the largest losses) is at most the same bound and
    is put at loss +inf (a pair that dominates: the original is a
    post-processing of it); the unlisted mass below (x > W + D) never reaches
    a grid point above the range. W is chosen so that t_{W+1} < 2^-(prec + 20)."""
    if s <= 0 or D < 1:
        raise CertificateRejected("discrete_gaussian needs sigma > 0 and sensitivity >= 1")
    s2 = s * s
    prec = mpmath.mp.prec
    W = int(math.ceil(math.sqrt(2 * float(s2) * (prec + 24) * math.log(2)))) + 1
    if 2 * W + D > MAX_ATOMS:
        raise _cannot(f"discrete_gaussian with sigma {float(s):.3g} (more than {MAX_ATOMS} atoms)")
    M = W + D
    S2 = to_mpf(2 * s2)
    t = {x: mpmath.exp(-mpf(x * x) / S2) for x in range(-M - 1, M + 2)}
    rho = mpmath.exp(-mpf(2 * M + 3) / S2)
    rest = 2 * t[M + 1] / (1 - rho)
    Z = mpmath.fsum(t[x] for x in range(-M, M + 1)) + rest / 2
    xs = list(range(-W, W + D + 1))
    losses = [(Fraction(D * D) - 2 * D * x) / (2 * s2) for x in xs]
    P = [t[x] / Z for x in xs]
    Q = [t[x - D] / Z for x in xs]
    above = t[W + 1] / (1 - mpmath.exp(-mpf(2 * W + 3) / S2)) / Z
    return _atoms(losses, P, Q, above)


# --------------------------------------------------------------------------- mixture of Gaussians


def _mog(s: Fraction, cs: list, ps: list, direction: str):
    """dp_accounting's MixtureOfGaussiansDpEvent pair in units of s
    (mu_i = c_i/s): remove: P = sum_i p_i N(mu_i, 1), Q = N(0, 1), loss
    g(x) = log sum_i p_i e^{mu_i x - mu_i^2/2}, nondecreasing (log-sum-exp of
    nondecreasing affine maps; increasing when some mu_i > 0) with range
    (log p_0, inf), p_0 = the mass of the mu_i = 0 components; add: P = N(0, 1),
    Q = the mixture, loss -g(x).

    L > eps iff x > x_y (remove, y = eps) or x < x_y (add, y = -eps), x_y the
    root of g(x) = y. The root is proposed by float, then mpmath Newton steps,
    and *certified*: g(t - r) < y < g(t + r) is checked in ``mpmath.iv``
    interval arithmetic (outward rounding), so the root lies in (t - r, t + r)
    with r = 2^-(prec - 12)(1 + |t|). The tails are normal tails at t; each
    moves by at most r/sqrt(2 pi) over the bracket (density bound)."""
    comps = [(Fraction(c) / s, Fraction(p)) for c, p in zip(cs, ps) if p != 0]
    if s <= 0 or not comps or any(c < 0 for c, _ in comps) or any(p < 0 for p in ps) or sum(ps) != 1:
        raise CertificateRejected("mixture_of_gaussians needs standard_deviation > 0, sensitivities >= 0, "
                                  "sampling_probs >= 0 summing to 1")
    p0 = sum((p for mu, p in comps if mu == 0), Fraction(0))
    remove = direction == "remove"
    if p0 == 1:  # every component at 0: P = Q, loss identically 0
        return (lambda e: (mpf(1), mpf(1)) if e < 0 else (mpf(0), mpf(0))), mpf(0)
    mus = [(to_mpf(mu), to_mpf(p)) for mu, p in comps]
    fl = [(math.log(float(p)), float(mu)) for mu, p in comps]
    state = {"guess": 0.0}

    def g_float(x: float) -> float:
        ts = [lp + mu * x - mu * mu / 2 for lp, mu in fl]
        mx = max(ts)
        return mx + math.log(sum(math.exp(v - mx) for v in ts))

    def g_mp(x: mpf) -> tuple[mpf, mpf]:
        ws = [p * mpmath.exp(mu * x - mu * mu / 2) for mu, p in mus]
        sw = mpmath.fsum(ws)
        return mpmath.log(sw), mpmath.fsum(w * mu for w, (mu, _) in zip(ws, mus)) / sw

    ivc: dict = {}

    def g_iv(x: mpf):
        """g(x) in interval arithmetic at iv.prec (constants cached per precision)."""
        if iv.prec not in ivc:
            ivc.clear()
            ivc[iv.prec] = [(iv.log(_ivq(p)) - _ivq(mu) * _ivq(mu) / 2, _ivq(mu)) for mu, p in comps]
        xi = iv.mpf(x)
        return iv.log(sum((iv.exp(c + m * xi) for c, m in ivc[iv.prec]), iv.mpf(0)))

    def gd_float(x: float) -> tuple[float, float]:
        ts = [lp + mu * x - mu * mu / 2 for lp, mu in fl]
        mx = max(ts)
        ws = [math.exp(v - mx) for v in ts]
        sw = sum(ws)
        return mx + math.log(sw), sum(w * mu for w, (_, mu) in zip(ws, fl)) / sw

    def float_root(yf: float) -> float:
        """A double near the root (a proposal only): Newton from the previous
        knot's root (the roots of neighbouring knots are close), else bisection."""
        x = state["guess"]
        for _ in range(8):
            v, d = gd_float(x)
            if d <= 1e-12:
                break
            step = (v - yf) / d
            x -= step
            if abs(step) <= 1e-15 * (1 + abs(x)):
                return x
        lo, hi = state["guess"] - 1.0, state["guess"] + 1.0
        step = 1.0
        while g_float(lo) > yf:
            step *= 2
            lo -= step
        step = 1.0
        while g_float(hi) < yf:
            step *= 2
            hi += step
        for _ in range(200):
            mid = (lo + hi) / 2
            if mid in (lo, hi):
                break
            if g_float(mid) < yf:
                lo = mid
            else:
                hi = mid
        return (lo + hi) / 2

    def root(y: mpf) -> mpf:
        t = mpf(float_root(float(y)))
        prec = mpmath.mp.prec
        # Newton from a double, doubling the working precision with the
        # correct bits (53 -> 106 -> 212 ...); the last step at full precision
        bits = 100
        while True:
            with mpmath.workprec(min(bits, prec) + 10):
                v, d = g_mp(t)
                if d <= 0:
                    break
                t = t - (v - y) / d
            if bits >= prec:
                break
            bits *= 2
        state["guess"] = float(t)
        r = mpf(2) ** -(prec - 12) * (1 + abs(t))
        old = iv.prec
        iv.prec = prec + 30
        try:
            yi = iv.mpf(y)
            for _ in range(6):
                if g_iv(t - r).b < yi.a and g_iv(t + r).a > yi.b:
                    return t
                r *= 16
        finally:
            iv.prec = old
        raise _cannot("a mixture-of-Gaussians loss whose inverse could not be bracketed")

    def below_range(y: mpf) -> bool:
        """Is y <= log p_0 (certified in iv)?"""
        if p0 == 0:
            return False
        old = iv.prec
        iv.prec = mpmath.mp.prec + 30
        try:
            lp, yi = iv.log(_ivq(p0)), iv.mpf(y)
            if yi.b <= lp.a:
                return True
            if yi.a > lp.b:
                return False
        finally:
            iv.prec = old
        raise _cannot("eps at the end of a mixture-of-Gaussians loss range")

    def tails(e: mpf) -> tuple[mpf, mpf]:
        y = e if remove else -e
        if below_range(y):
            return (mpf(1), mpf(1)) if remove else (mpf(0), mpf(0))
        x = root(y)
        if remove:
            return mpmath.fsum(p * mpmath.ncdf(mu - x) for mu, p in mus), mpmath.ncdf(-x)
        return mpmath.ncdf(x), mpmath.fsum(p * mpmath.ncdf(x - mu) for mu, p in mus)

    return tails, mpf(0)


# --------------------------------------------------------------------------- zCDP


def _zcdp_delta(rho: Fraction, xi: Fraction, eps: mpf) -> tuple[mpf, mpf]:
    """[lo', hi'] of min(1, inf_{alpha > 1} exp(f(alpha))),
    f(alpha) = (alpha - 1)(xi + rho alpha - eps) + (alpha - 1) log(1 - 1/alpha) - log alpha
    (Canonne, Kamath, Steinke 2020 Prop 12 at tau = xi + rho alpha). f is
    strictly convex (f'' = 2 rho + 1/(alpha(alpha - 1)) > 0), so a bracket
    a < b with f'(a) < 0 < f'(b), both signs checked in ``mpmath.iv``, holds
    the minimiser, and inf f lies in [f(a) + f'(a)(b - a), min(f(a), f(b))]
    (tangent at a; f decreasing left of a, increasing right of b), evaluated
    in interval arithmetic. The bracket is found by bisection in t = log(alpha - 1)."""
    E = _dyadic(eps) if isinstance(eps, mpf) else Fraction(eps)
    if rho == 0 and xi <= E:
        return mpf(0), mpf(0)  # f' < 0 everywhere and f -> -inf
    r, x, e = to_mpf(rho), to_mpf(xi), eps

    def fprime(a: mpf) -> mpf:
        return x - e + r * (2 * a - 1) + mpmath.log1p(-1 / a)

    lo, hi = mpf(-200), mpf(8)
    if not fprime(1 + mpmath.exp(lo)) < 0:
        raise _cannot("a zCDP conversion whose optimal order is below 1 + e^-200")
    while fprime(1 + mpmath.exp(hi)) < 0:
        hi += 8
        if hi > 10**4:
            raise _cannot("a zCDP conversion whose optimal order is beyond e^10000")
    for _ in range(mpmath.mp.prec // 2 + 20):  # bracket to about half the working bits
        mid = (lo + hi) / 2
        if fprime(1 + mpmath.exp(mid)) < 0:
            lo = mid
        else:
            hi = mid
    a, b = 1 + mpmath.exp(lo), 1 + mpmath.exp(hi)
    old = iv.prec
    iv.prec = mpmath.mp.prec + 30
    try:
        R, X, Ei = _ivq(rho), _ivq(xi), iv.mpf(e)

        def f_iv(al: mpf):
            A = iv.mpf(al)
            l1 = iv.log(1 - 1 / A)
            return (A - 1) * (X + R * A - Ei) + (A - 1) * l1 - iv.log(A), X - Ei + R * (2 * A - 1) + l1

        fa, da = f_iv(a)
        fb, db = f_iv(b)
        if not (da.b < 0 and db.a > 0):
            raise _cannot("the zCDP conversion's optimal order (sign check failed)")
        low = fa + da * (iv.mpf(b) - iv.mpf(a))
        d_lo, d_hi = iv.exp(low).a, min(iv.exp(fa).b, iv.exp(fb).b)
    finally:
        iv.prec = old
    return min(mpf(d_lo), mpf(1)), min(mpf(d_hi), mpf(1))


def _zcdp_eps(rho: Fraction, xi: Fraction, delta: mpf) -> tuple[mpf, mpf]:
    """Second opinion on the product's zCDP epsilon: inf over alpha of the
    optimal RDP -> DP conversion (ABC Thm 3; recheck.rdp's mpmath route),
    evaluated at the best order found by golden-section search in
    log(alpha - 1) (started at the classic conversion's optimum, where the
    curve is flat): the value is an upper end of the infimum, accurate to
    about 1e-10 relative. As for ``rdp.epsilon``, the infimum over all orders
    is not re-proved by this route; [v (1 - 1e-9), v] is returned."""
    from .rdp import _golden, _optimal

    r, x = to_mpf(rho), to_mpf(xi)
    if rho == 0:
        raise _cannot("a zCDP epsilon with rho = 0")
    with mpmath.workdps(15):
        t0 = mpmath.log(mpmath.sqrt(mpmath.log(1 / delta) / r))
        h = lambda t: _optimal(1 + mpmath.exp(t), x + r * (1 + mpmath.exp(t)), delta)  # noqa: E731
        t_best = _golden(h, t0 - mpf("1.5"), t0 + mpf("1.5"), 26)[0]
    with mpmath.workdps(25):
        a = 1 + mpmath.exp(t_best)
        v = _optimal(a, x + r * a, delta)
    return v * (1 - mpf(10) ** -9), v


def _zcdp_bounds(rho: Fraction, xi: Fraction, kind: str, target: mpf) -> tuple[mpf, mpf]:
    if rho == 0 and xi == 0:
        return mpf(0), mpf(0)
    try:
        with mpmath.workprec(max(mpmath.mp.prec, 160)):
            return _zcdp_delta(rho, xi, target) if kind == "delta" else _zcdp_eps(rho, xi, target)
    except (ArithmeticError, ValueError) as exc:  # extreme parameters: fail closed, not "rejected"
        raise _cannot(f"this zCDP conversion ({type(exc).__name__})") from exc


# --------------------------------------------------------------------------- tree walk


def _poisson_relation_covered(t: Any, q: Fraction, rel: str) -> None:
    """Refuse a Poisson-sampled leaf under a relation no theorem covers, as the
    producer does: AFA Thm 11 (1) turns a base pair into Poisson-sampled pairs
    for add and remove neighbours only. Replace-special reduces to add/remove for
    the additive leaves (a special record that contributes nothing), not for an
    (eps, delta)-DP leaf, whose guarantee says nothing about the special record;
    replace-one under Poisson sampling has no proved pair for any leaf."""
    if q == 1 or rel in ("add-remove", "add", "remove"):
        return
    if rel == "replace-special" and t in ("gaussian", "laplace"):
        return
    raise CertificateRejected(f"a Poisson-sampled {t} event under {rel}: no theorem gives a dominating pair "
                              "(AFA Thm 11 (1) covers add and remove neighbours)")


def _leaf(ev: Mapping[str, Any], q: Fraction, rel: str):
    t = ev.get("type")
    _poisson_relation_covered(t, q, rel)
    qm = to_mpf(q)
    if t in ("gaussian", "laplace"):
        s = _num(ev, "noise_multiplier")
        if s <= 0:
            raise CertificateRejected("noise_multiplier must be > 0")
        if rel == "replace-one":
            if q != 1:
                raise CertificateRejected("Poisson sampling under replace-one is not certified")
            if t == "gaussian":
                return lambda d: (gauss_tails(s, Fraction(1), "replace"), mpf(0))
            return lambda d: (laplace_tails(s / 2, Fraction(1), "remove"), mpf(0))
        f = gauss_tails if t == "gaussian" else laplace_tails
        return lambda d: (f(s, q, d if q != 1 else "remove"), mpf(0))
    if t == "epsilon_delta":
        e0, d0 = to_mpf(_num(ev, "epsilon")), to_mpf(_num(ev, "delta"))
        ex = mpmath.exp(e0)
        P = [d0, (1 - d0) * ex / (1 + ex), (1 - d0) / (1 + ex), mpf(0)]
        Q = list(reversed(P))

        def make(d: str):
            if q == 1:
                return _finite(P, Q)
            if d == "add":
                return _finite(P, [(1 - qm) * p + qm * r for p, r in zip(P, Q)])
            return _finite([(1 - qm) * r + qm * p for p, r in zip(P, Q)], Q)
        return make
    if t == "randomized_response" and q == 1:
        p, k = to_mpf(_num(ev, "noise_parameter")), _int(ev, "num_buckets")
        keep, other = 1 - p + p / k, p / k
        if rel == "replace-one":
            P, Q = [keep, other, (k - 2) * other], [other, keep, (k - 2) * other]
            return lambda d: _finite(P, Q)
        if rel == "replace-special":
            P, Q = [keep, (k - 1) * other], [mpf(1) / k, mpf(k - 1) / k]
            return lambda d: _finite(P, Q) if d == "remove" else _finite(Q, P)
    if t in ("discrete_laplace", "discrete_gaussian") and q == 1:
        D = _int(ev, "sensitivity") * (2 if rel == "replace-one" else 1)
        if t == "discrete_laplace":
            a = _num(ev, "noise_parameter")
            return lambda d: _dlap(a, D)
        s = _num(ev, "sigma")
        return lambda d: _dgauss(s, D)
    if t == "mixture_of_gaussians" and q == 1 and rel != "replace-one":
        s = _num(ev, "standard_deviation")
        cs, ps = ev.get("sensitivities"), ev.get("sampling_probs")
        if not isinstance(cs, list) or not isinstance(ps, list) or len(cs) != len(ps) or not 0 < len(cs) <= 10**4:
            raise MalformedCertificate("mixture_of_gaussians needs equal-length lists sensitivities, sampling_probs")
        cf = [_num({f"event.sensitivities[{i}]": c}, f"event.sensitivities[{i}]") for i, c in enumerate(cs)]
        pf = [_num({f"event.sampling_probs[{i}]": p}, f"event.sampling_probs[{i}]") for i, p in enumerate(ps)]
        return lambda d: _mog(s, cf, pf, d)
    raise _cannot(f"{t} (sampling {q}) under {rel}")


def _wor(ev: Mapping[str, Any], rel: str):
    n, m = _int(ev, "source_dataset_size"), _int(ev, "sample_size")
    inner = ev.get("event", {})
    if not isinstance(inner, dict) or inner.get("type") not in ("gaussian", "laplace") or not 0 < m <= n:
        raise _cannot(f"sampled_without_replacement under {rel}")
    s = _num(inner, "noise_multiplier") / 2  # replace-one base pair: shift 2C
    if s <= 0:
        raise CertificateRejected("noise_multiplier must be > 0")
    f = gauss_tails if inner["type"] == "gaussian" else laplace_tails
    g = Fraction(m, n)

    def pair(d: str, gamma: Fraction = g):
        return f(s, gamma, d), mpf(0)

    if rel in ("add-remove", "add", "remove") and m < n:
        return lambda d: pair(d)  # AFA Thm 11 (2)
    if rel == "replace-one":
        if m == n:
            return lambda d: pair("remove", Fraction(1))
        # AFA Prop 30 + Cor 32
        return lambda d: (max_curve_tails(pair("remove")[0], pair("add")[0]), mpf(0))
    raise _cannot(f"sampled_without_replacement ({m}/{n}) under {rel}")


class _Tree:
    """The flattened tree: PLD blocks (make, times), zCDP totals, and whether a
    non-private event occurs."""

    def __init__(self) -> None:
        self.blocks: list = []
        self.zcdp = [Fraction(0), Fraction(0)]
        self.has_zcdp = False
        self.gauss: list = []  # (noise multiplier, times) of plain Gaussian leaves (for zCDP)
        self.others = False  # any PLD leaf that is not a plain Gaussian
        self.non_private = False
        self.upper_only = False  # a pair that bounds the mechanism from above only (WOR replace-one)
        #: replace-one: (make, times) of the pairs one concrete dataset pair attains, or None
        self.realised: "list | None" = []
        self.wor_sizes: set = set()


def _flatten(ev: Any, times: int, rel: str, out: _Tree, depth: int = 0) -> None:
    if depth > 64 or not isinstance(ev, dict):
        raise MalformedCertificate("inputs.event is not an event tree")
    t = ev.get("type")
    if times > 10**7:
        raise CertificateRejected("more than 1e7 steps")
    if t == "no_op" or times == 0:
        return
    if t == "randomized_response":
        k, pr = _int(ev, "num_buckets"), _num(ev, "noise_parameter")
        if k < 1 or not 0 <= pr <= 1:
            raise CertificateRejected("randomized_response needs num_buckets >= 1 and noise_parameter in [0, 1]")
        if k == 1:
            return  # one bucket: the output is constant, no privacy cost
    if t == "non_private":
        out.non_private = True
    elif t == "self_composed":
        c = _int(ev, "count")
        if c < 0:
            raise CertificateRejected("count must be >= 0")
        _flatten(ev.get("event"), times * c, rel, out, depth + 1)
    elif t == "composed":
        evs = ev.get("events")
        if not isinstance(evs, list):
            raise MalformedCertificate("composed needs a list of events")
        for e in evs:
            _flatten(e, times, rel, out, depth + 1)
    elif t == "zcdp":
        rho, xi = _num(ev, "rho"), _num(ev, "xi")
        if rho < 0 or xi < 0:
            raise CertificateRejected("zcdp needs rho, xi >= 0")
        out.has_zcdp = True
        out.zcdp[0] += times * rho
        out.zcdp[1] += times * xi
    elif t == "poisson_sampled":
        q = _num(ev, "sampling_probability")
        if not 0 <= q <= 1:
            raise CertificateRejected("sampling_probability must be in [0, 1]")
        inner = ev.get("event", {})
        if q == 0 or (isinstance(inner, dict) and inner.get("type") == "no_op"):
            return
        if isinstance(inner, dict) and inner.get("type") == "non_private":
            out.non_private = True
            return
        out.blocks.append((_leaf(inner if isinstance(inner, dict) else {}, q, rel), times))
        _realise_whole(inner.get("type") if q == 1 and isinstance(inner, dict) else None, times, out)
        if q == 1 and inner.get("type") == "gaussian":
            out.gauss.append((_num(inner, "noise_multiplier"), times))
        else:
            out.others = True
    elif t == "sampled_without_replacement":
        if _int(ev, "sample_size") == 0:
            return
        out.blocks.append((_wor(ev, rel), times))
        out.others = True
        _realise_wor(ev, rel, times, out)
        if rel == "replace-one" and _int(ev, "sample_size") < _int(ev, "source_dataset_size"):
            out.upper_only = True  # AFA Cor 32: tight for one step only
    else:
        out.blocks.append((_leaf(ev, Fraction(1), rel), times))
        _realise_whole(t, times, out)
        if t == "gaussian":
            out.gauss.append((_num(ev, "noise_multiplier"), times))
        else:
            out.others = True


def _realise_wor(ev: Mapping[str, Any], rel: str, times: int, out: "_Tree") -> None:
    """Replace-one, m of n without replacement: the dataset pair x -> +e, x' and all others -e
    (linear loss) makes each step's laws the Poisson pair at rate m/n and noise z/2 after a known
    shift, in the remove (D, D') and add (D', D) orientation: a lower bound that is attained."""
    inner = ev.get("event", {})
    if out.realised is None or rel != "replace-one" or inner.get("type") not in ("gaussian", "laplace"):
        out.realised = None
        return
    n, m = _int(ev, "source_dataset_size"), _int(ev, "sample_size")
    out.wor_sizes.add(n)
    s = _num(inner, "noise_multiplier") / 2
    f = gauss_tails if inner["type"] == "gaussian" else laplace_tails
    g = Fraction(m, n)
    out.realised.append(((lambda d: (f(s, g, d), mpf(0))), times))


def _realise_whole(t: Any, times: int, out: "_Tree") -> None:
    """A Gaussian or Laplace step on the whole dataset: its (tight) replace-one pair is attained by
    the same dataset pair; anything else leaves no realised lower end."""
    if out.realised is None:
        return
    if t in ("gaussian", "laplace"):
        out.realised.append((out.blocks[-1][0], times))
    else:
        out.realised = None


def _bounds(inputs: Mapping[str, Any], kind: str, target: mpf, scale: mpf, hint: mpf, m: int = 8,
            sides: str = "both", direction: "str | None" = None) -> tuple[mpf, mpf]:
    rel = inputs.get("neighboring")
    if rel not in _DIRS:
        raise MalformedCertificate(f"inputs.neighboring={rel!r} is not a relation")
    tree = _Tree()
    _flatten(inputs.get("event"), 1, rel, tree)
    if tree.non_private:
        return (mpmath.inf, mpmath.inf) if kind == "eps" else (mpf(1), mpf(1))
    if tree.has_zcdp:
        if tree.others or rel == "replace-special":
            raise _cannot("a zCDP event composed with events other than plain Gaussians")
        rho, xi = tree.zcdp
        for z, t in tree.gauss:
            mu = Fraction(2 if rel == "replace-one" else 1) / z
            rho += t * mu * mu / 2  # the Gaussian is exactly (mu^2/2)-zCDP (Mironov 2017 Prop 7)
        lo, hi = _zcdp_bounds(rho, xi, kind, target)
        # the conversion bounds the mechanism from above only (zCDP fixes the Renyi curve,
        # not the privacy profile): its lower end says nothing about the mechanism
        return mpf(0), hi
    events = tree.blocks
    if not events:
        return mpf(0), mpf(0)
    K, tau, budget = _units(scale, hint, sum(t for _, t in events))
    with mpmath.workprec(max(mpmath.mp.prec, K + 64)):
        los, his = [], []
        for d in ([direction] if direction else _DIRS[rel]):
            # a loss range beyond the memory budget fails closed before the work
            U, L = _compose(events, d, K, tau, budget, m, sides, MAX_KNOTS)
            lo, hi = _eps_bounds(U, L, target, K, m) if kind == "eps" else _delta_bounds(U, L, target, K, m)
            los.append(lo)
            his.append(hi)
        # the mechanism's value is only bounded above by a non-tight pair (the producer reports [0, hi]
        # or, where one concrete dataset pair attains a lower curve, [its lower end, hi])
        if tree.upper_only:
            return _realised_lower(tree, rel, kind, target, K, tau, budget, m, sides), max(his)
        return max(los), max(his)


def _realised_lower(tree: "_Tree", rel: str, kind: str, target: mpf, K: int, tau: mpf, budget: int, m: int,
                    sides: str) -> mpf:
    if rel != "replace-one" or not tree.realised or len(tree.wor_sizes) > 1 or sides == "upper":
        return mpf(0)
    lows = []
    for d in ("remove", "add"):
        _, L = _compose(tree.realised, d, K, tau, budget, m, "lower", MAX_KNOTS)
        lows.append(_eps_bounds(None, L, target, K, m)[0] if kind == "eps" else _delta_bounds(None, L, target, K, m)[0])
    return max(lows)


def _directions(inputs: Mapping[str, Any]) -> list:
    rel = inputs.get("neighboring")
    if rel not in _DIRS:
        raise MalformedCertificate(f"inputs.neighboring={str(rel)[:40]!r} is not a relation (allowed: {', '.join(_DIRS)})")
    return _DIRS[rel]


_QUERIES = register_queries("events", _bounds, _directions)


def _check_nodes(ev: Any, path: str, depth: int = 0) -> None:
    """Every node has exactly the fields its type defines (the producer's strict reader
    refuses others: a ``count`` on a Gaussian, ``steps`` or ``sensitivity`` where the
    type has none would be ignored here and mean something to a reader)."""
    if depth > 64 or not isinstance(ev, dict):
        raise MalformedCertificate(f"{path} is not an event node")
    t = ev.get("type")
    if t not in EVENT_FIELDS:
        raise MalformedCertificate(f"{path}.type={str(t)[:40]!r}: allowed: {', '.join(EVENT_FIELDS)}")
    fields = EVENT_FIELDS[t]
    extra = sorted(set(ev) - set(fields) - {"type"})
    if extra:
        raise MalformedCertificate(f"{path}.{extra[0]}: unknown key for type {t!r} (allowed: "
                                   f"{', '.join(['type', *fields]) })")
    missing = sorted(set(fields) - set(ev))
    if missing:
        raise MalformedCertificate(f"{path}.{missing[0]}: missing for type {t!r}")
    for k, kind in fields.items():
        if kind == "event":
            _check_nodes(ev[k], f"{path}.{k}", depth + 1)
        elif kind == "events":
            if not isinstance(ev[k], list):
                raise MalformedCertificate(f"{path}.{k} must be a list of events")
            for i, e in enumerate(ev[k]):
                _check_nodes(e, f"{path}.{k}[{i}]", depth + 1)


def _with_fields(inner: Any) -> Any:
    """An events.* re-checker that also refuses inputs the producer would refuse and
    re-proves the certified detail fields: ``neighboring`` and ``sensitivity_convention``
    echo the inputs, ``upper_bound_only`` is re-derived from the tree, ``rho`` / ``xi``
    are the exact zCDP totals (composition adds them, BS16 Lemma 2.3)."""

    def recheck(inputs: Mapping[str, Any], result: Mapping[str, Any]) -> Recheck:
        if inputs.get("sensitivity_convention") != SENSITIVITY_CONVENTION:
            raise CertificateRejected("inputs.sensitivity_convention is not the convention the event pairs are "
                                      "built with (it defines what a noise multiplier means)")
        _check_nodes(inputs.get("event"), "inputs.event")
        rel = inputs.get("neighboring")
        _directions(inputs)
        tree = _Tree()
        _flatten(inputs.get("event"), 1, rel, tree)
        proved = set()
        for key, want in (("neighboring", rel), ("sensitivity_convention", SENSITIVITY_CONVENTION)):
            if key in result:
                if result[key] != want:
                    raise CertificateRejected(f"result.{key} differs from inputs.{key}")
                proved.add(key)
        upper_only = tree.upper_only or (tree.has_zcdp and not tree.non_private)
        if "upper_bound_only" in result:
            if bool(result["upper_bound_only"]) != upper_only:
                raise CertificateRejected(f"result.upper_bound_only={result['upper_bound_only']!r}, but the "
                                          f"tree's pairs are {'not ' if not upper_only else ''}upper bounds only")
            proved.add("upper_bound_only")
        if tree.has_zcdp:
            rho, xi = tree.zcdp
            for z, t in tree.gauss:
                mu = Fraction(2 if rel == "replace-one" else 1) / z
                rho += t * mu * mu / 2
            for key, want in (("rho", rho), ("xi", xi)):
                if key in result:
                    got = _num(result, key)
                    if got != want:
                        raise CertificateRejected(f"result.{key}={str(result[key])[:40]} is not the exact zCDP "
                                                  f"total {want}")
                    proved.add(key)
        re = inner(inputs, result)
        return Recheck(value=re.value, err=re.err, dps=re.dps, verdict=re.verdict, lo=re.lo, hi=re.hi,
                       proved=frozenset(proved) | re.proved, details=re.details)

    recheck.__doc__ = inner.__doc__
    return recheck


for _name, _fn in zip(("epsilon", "delta", "claim"), _QUERIES):
    RECHECKERS[f"events.{_name}"] = _with_fields(_fn)
