"""Second routes for the (eps, delta) world, on mpmath only.

* ``composition.delta`` / ``composition.eps``: one guarantee type -> the LT
  Cor 4.7 binomial sum (the arb route unrolls the recursion on a lattice);
  several types and few mechanisms -> the LT Thm 4.6 recursion itself,
  evaluated top-down with a memo; otherwise a forward mpmath convolution.
  eps certificates: the monotone bracket d(lo) >= delta >= d(hi) is checked
  and the root re-found by bisection; "inf" is re-decided in exact rationals.
  Grid certificates: the rounded-down and rounded-up compositions are
  re-derived and must bracket the recorded enclosure.
* ``dp.profile`` of ``rr``: the two-output sum of (p_i - e^t q_i)_+.
* ``dp.implies``: re-decided from the GDPT Thm 3.1 condition in mpmath.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache
from typing import Any, Callable, Mapping

import mpmath
from mpmath import mpf

from ..errors import CertificateRejected, CouldNotReprove, MalformedCertificate
from .gdp import exact_input, mpf_to_fraction, stable_value, to_mpf
from .profiles import register_profile_recheck
from .verify import Recheck, needed_digits, parse_bound, register

Types = tuple  # ((eps, delta, count), ...)


def _frac(text: Any, what: str) -> Fraction:
    return exact_input({what: text}, what)


def _types(inputs: Mapping[str, Any], grid_mode: str = "") -> Types:
    mechs = inputs.get("mechs")
    k = inputs.get("k")
    if not isinstance(mechs, list) or not mechs or not isinstance(k, int) or k < 1:
        raise MalformedCertificate("composition needs inputs.mechs (list of 'E,D') and integer inputs.k")
    counts: dict[tuple[Fraction, Fraction], int] = {}
    for m in mechs:
        if not isinstance(m, str) or m.count(",") != 1:
            raise MalformedCertificate(f"inputs.mechs entry {m!r} is not 'E,D'")
        e, d = (_frac(x.strip(), "mech") for x in m.split(","))
        if e < 0 or not 0 <= d <= 1:
            raise CertificateRejected(f"mechanism {m} is not a valid (eps >= 0, delta in [0,1]) pair")
        if grid_mode:
            h = exact_input(inputs, "grid")
            n = e / h
            e = h * (math.ceil(n) if grid_mode == "up" else math.floor(n))
        counts[(e, d)] = counts.get((e, d), 0) + k
    return tuple((e, d, c) for (e, d), c in counts.items())


def _profile(types: Types, t: Fraction) -> mpf:
    """Composed profile at t, at the ambient mpmath precision."""
    tt = to_mpf(t)
    R = mpf(1)
    for e, d, c in types:
        R *= (1 - to_mpf(d)) ** c
    if len(types) == 1:
        e, d, c = types[0]
        E = to_mpf(e)
        p = mpmath.exp(E) / (1 + mpmath.exp(E))
        # LT Cor 4.7: 1 - (1-delta)^k (1 - E[(1 - e^{t - eps(2Y-k)})_+])
        acc = mpmath.fsum(
            mpmath.binomial(c, y) * p**y * (1 - p) ** (c - y) * max(mpf(0), -mpmath.expm1(tt - E * (2 * y - c)))
            for y in range(c + 1)
        )
        return 1 - R + R * acc
    seq = [(e, d) for e, d, c in types for _ in range(c)]
    if len(seq) <= 12:
        return _recursion(tuple(seq), t)
    law = _law(types, mpmath.mp.prec)
    acc = mpmath.fsum(w * max(mpf(0), -mpmath.expm1(tt - to_mpf(s))) for s, w in law if s > t)
    return 1 - R + R * acc


@lru_cache(maxsize=8)
def _law(types: Types, prec: int) -> tuple:
    """Forward law of the shift S (exact rational keys), built one mechanism at
    a time in mpmath: independent of the arb lattice/arb_poly code. Cached per
    precision, since a root search evaluates the profile many times."""
    law: dict[Fraction, mpf] = {Fraction(0): mpf(1)}
    for e, d, c in types:
        E = to_mpf(e)
        p = mpmath.exp(E) / (1 + mpmath.exp(E))
        for _ in range(c):
            new: dict[Fraction, mpf] = {}
            for s, w in law.items():
                new[s + e] = new.get(s + e, mpf(0)) + w * p
                new[s - e] = new.get(s - e, mpf(0)) + w * (1 - p)
            law = new
    return tuple(law.items())


def _recursion(seq: tuple, t: Fraction) -> mpf:
    """LT Thm 4.6 literally: d_l(t) = delta_l + (1-delta_l)/(e^eps_l+1)
    [e^eps_l d_{l-1}(t - eps_l) + d_{l-1}(t + eps_l)], d_0(t) = (1 - e^t)_+."""

    @lru_cache(maxsize=None)
    def d(l: int, s: Fraction) -> mpf:
        if l == 0:
            return max(mpf(0), -mpmath.expm1(to_mpf(s)))
        e, de = seq[l - 1]
        E = mpmath.exp(to_mpf(e))
        return to_mpf(de) + (1 - to_mpf(de)) / (E + 1) * (E * d(l - 1, s - e) + d(l - 1, s + e))

    return d(len(seq), t)


def _at(types: Types, t: Fraction, dps: int) -> mpf:
    with mpmath.workdps(dps):
        return _profile(types, t)


def _check_grid(inputs: Mapping[str, Any], result: Mapping[str, Any],
                one: Callable[[Types, Mapping[str, Any]], Recheck]) -> Recheck:
    """Grid certificates: eps_i rounded down and up onto the grid bound the
    quantity (monotonicity, LT Thm 4.5). The rounded-down composition is
    re-derived inside ``result.lower``, the rounded-up one inside
    ``result.upper``, ``result.gap`` must be >= upper.hi - lower.lo, and the
    independent enclosure is [lower'.lo, upper'.hi]."""
    from .verify import accept_enclosure, enclosure_of

    lower = enclosure_of(result.get("lower"), "result.lower", 60)
    upper = enclosure_of(result.get("upper"), "result.upper", 60)
    down = one(_types(inputs, "down"), {"enclosure": result.get("lower")})
    up = one(_types(inputs, "up"), {"enclosure": result.get("upper")})
    d, u = down.enclosure(), up.enclosure()
    if d is None or u is None:
        raise CouldNotReprove("no independent enclosure of the rounded compositions")
    accept_enclosure(lower, d, "result.lower (eps_i rounded down)")
    accept_enclosure(upper, u, "result.upper (eps_i rounded up)")
    gap = parse_bound(result.get("gap"), "result.gap", 60, "c")
    with mpmath.workdps(60):
        # the gap is the exact distance of the two roundings; the printed endpoints are
        # rounded outward at 17-18 significant digits, so they may be wider by that much
        slack = 4 * mpf(10) ** -17 * max(abs(upper[1]), abs(lower[0]))
        if mpmath.isfinite(upper[1]) and gap < upper[1] - lower[0] - slack:
            raise CertificateRejected("result.gap is smaller than upper.hi - lower.lo")
    # lower and upper are re-proved above (containment); gap is an upper bound, checked
    return Recheck(lo=d[0], hi=u[1], dps=max(down.dps, up.dps), proved=frozenset({"lower", "upper", "gap"}))


@register("composition.delta")
def recheck_composition_delta(inputs: Mapping[str, Any], result: Mapping[str, Any]) -> Recheck:
    """Composed delta(eps): LT Cor 4.7 binomial sum (one type), the LT Thm 4.6
    recursion (few mechanisms) or a forward mpmath convolution, stabilised
    across two precisions; grid certificates: both rounded compositions."""
    eps = exact_input(inputs, "eps")

    def one(types: Types, res: Mapping[str, Any]) -> Recheck:
        if all(d == 0 for _, d, _ in types) and eps >= sum(e * c for e, _, c in types):
            return Recheck(value=mpf(0), err=mpf(0), dps=30)
        return stable_value(lambda dps: _at(types, eps, dps), needed_digits(res))

    if "grid" in inputs:
        return _check_grid(inputs, result, one)
    return one(_types(inputs), result)


def _eps_recheck(types: Types, delta: Fraction, result: Mapping[str, Any]) -> Recheck:
    """eps(delta) of a composition: the exact special cases (no finite eps,
    0, the total eps) decided in rationals; otherwise the recorded enclosure is
    bracketed by the composed profile (non-increasing in eps) on mpmath."""
    from .gdp import bracket_root

    R = Fraction(1)
    for _, d, c in types:
        R *= (1 - d) ** c
    T = sum(e * c for e, _, c in types)
    if delta < 1 - R:  # exact: no finite eps
        return Recheck(lo=mpmath.inf, hi=mpmath.inf)
    if R == 0 or T == 0:
        return Recheck(lo=mpf(0), hi=mpf(0))
    if delta == 1 - R:
        return Recheck(lo=to_mpf(T), hi=to_mpf(T), dps=60) if T.denominator == 1 else \
            stable_value(lambda p: _at_dps(lambda: to_mpf(T), p), 30)
    with mpmath.workdps(60):
        if _profile(types, Fraction(0)) <= to_mpf(delta) * (1 - mpf(10) ** -50):
            return Recheck(lo=mpf(0), hi=mpf(0))
    return bracket_root(lambda x, p: _at(types, x, p), delta, result, False, "composed eps(delta)")


def _at_dps(fn: Callable[[], mpf], dps: int) -> mpf:
    with mpmath.workdps(dps):
        return fn()


def _to_frac(x: mpf) -> Fraction:
    m, e = mpmath.mpf(x).man_exp
    return Fraction(int(m)) * (Fraction(2) ** e if e >= 0 else Fraction(1, 2 ** (-e)))


@register("composition.eps")
def recheck_composition_eps(inputs: Mapping[str, Any], result: Mapping[str, Any]) -> Recheck:
    """Composed eps(delta): exact special cases in rationals, otherwise the
    recorded enclosure bracketed by the composed profile on mpmath (LT Cor 4.7
    / Thm 4.6 / forward convolution); grid certificates: both rounded
    compositions, each inside its recorded sub-enclosure."""
    delta = exact_input(inputs, "delta")
    if not 0 <= delta <= 1:
        raise CertificateRejected(f"delta={inputs['delta']} is not in [0, 1]")
    if "grid" in inputs:
        return _check_grid(inputs, result, lambda types, res: _eps_recheck(types, delta, res))
    return _eps_recheck(_types(inputs), delta, result)


@register_profile_recheck("rr")
def _rr(inputs: Mapping[str, Any]) -> Callable[[Fraction], mpf]:
    p = exact_input(inputs, "p")

    def f(t: Fraction) -> mpf:
        P, Q = [to_mpf(p), 1 - to_mpf(p)], [1 - to_mpf(p), to_mpf(p)]
        e = mpmath.exp(to_mpf(t))
        return mpmath.fsum(max(a - e * b, 0) for a, b in zip(P, Q))

    return f


def _gdpt_rows(eps0: Fraction, delta0: Fraction, eps: Fraction) -> list[mpf]:
    """All 32 neighbouring (event, s) rows of GDPT's 4-output mechanism, by brute force."""
    u = mpmath.exp(to_mpf(eps0))
    a0 = u / (1 + u)
    d = to_mpf(delta0)
    P = {0: [d, mpf(0), (1 - d) * a0, (1 - d) * (1 - a0)], 1: [mpf(0), d, (1 - d) * (1 - a0), (1 - d) * a0]}
    E = mpmath.exp(to_mpf(eps))
    return [
        mpmath.fsum(P[s][i] - E * P[1 - s][i] for i in range(4) if mask >> i & 1)
        for s in (0, 1) for mask in range(16)
    ]


@register("dp.rr64")
def recheck_rr64(inputs: Mapping[str, Any], result: Mapping[str, Any]) -> Recheck:
    """The supremum over all 32 neighbouring (event, input) rows of GDPT's
    4-output mechanism by brute force on mpmath (enclosure). The verdict "the
    sup equals GDPT's formula delta0 + (1-delta0)(e^eps0 - e^eps)_+/(1+e^eps0)"
    is decided in exact rationals: the sup is the worst-case profile
    W(eps) = formula + (1-delta0)(1 - e^(eps+eps0))_+/(1+e^eps0) (GDPT Cor 3.2:
    below eps = -eps0 the event {1, 3, 4} under s = 1 adds the second term), so
    they are equal iff delta0 = 1 or eps >= -eps0; agreement of two floating
    values never decides an equality. ``result.gdpt_formula`` is re-derived
    (closed form on mpmath) and ``result.rows`` must count the 64 rows."""
    eps0, delta0, eps = (exact_input(inputs, k) for k in ("eps0", "delta0", "eps"))
    if eps0 < 0 or not 0 <= delta0 <= 1:
        raise MalformedCertificate("dp.rr64 needs eps0 >= 0 and delta0 in [0, 1]")
    digits = needed_digits(result)
    if delta0 == 1 or eps >= eps0:
        # the sup is delta0 exactly: with e^eps >= e^eps0 every term of a row is <= 0 but
        # P_0[0] - e^eps P_1[0] = delta0 (outputs 2 and 3 give (1-delta0)(e^eps0 - e^eps)/(1+e^eps0)
        # <= 0 and its mirror, output 1 gives -e^eps delta0), so the row {0} under s = 0 attains
        # it; an exact point, rounded outward once (a recorded exact "0.25" is then re-proved)
        from .core import exact_enclosure

        lo, hi = exact_enclosure(delta0)
        re = Recheck(lo=lo, hi=hi, dps=60)
    else:
        re = stable_value(lambda dps: _max_rows(eps0, delta0, eps, dps), digits)
    verdict = "holds" if (delta0 == 1 or eps + eps0 >= 0) else "fails"
    details = {}
    proved = set()
    if "gdpt_formula" in result and (delta0 == 1 or eps >= eps0):
        # the formula is exactly delta0: compared in exact rationals
        from .verify import enclosure_of

        flo, fhi = enclosure_of(result["gdpt_formula"], "result.gdpt_formula", 60)
        if not (mpf_to_fraction(flo) <= delta0 <= mpf_to_fraction(fhi)):
            raise CertificateRejected(f"result.gdpt_formula does not contain its exact value delta0 = {delta0}")
        proved.add("gdpt_formula")
    elif "gdpt_formula" in result:
        f = stable_value(lambda dps: _formula(eps0, delta0, eps, dps), needed_digits(
            {"enclosure": result["gdpt_formula"]} if isinstance(result["gdpt_formula"], dict) else {}))
        details["gdpt_formula"] = f.enclosure()
    if "rows" in result:
        if result["rows"] not in (64, "64"):
            raise CertificateRejected(f"result.rows={str(result['rows'])[:20]!r}: the check enumerates 64 rows")
        proved.add("rows")
    if "equals_gdpt_formula" in result:
        if result["equals_gdpt_formula"] != verdict:
            raise CertificateRejected(f"result.equals_gdpt_formula={result['equals_gdpt_formula']!r}: the "
                                      f"sup equals GDPT's formula is {verdict!r} (exact)")
        proved.add("equals_gdpt_formula")
    enc_lo, enc_hi = re.enclosure()
    return Recheck(lo=enc_lo, hi=enc_hi, dps=re.dps, verdict=verdict, details=details, proved=frozenset(proved))


def _formula(eps0: Fraction, delta0: Fraction, eps: Fraction, dps: int) -> mpf:
    with mpmath.workdps(dps):
        u, E = mpmath.exp(to_mpf(eps0)), mpmath.exp(to_mpf(eps))
        return to_mpf(delta0) + (1 - to_mpf(delta0)) * max(u - E, 0) / (1 + u)


def _max_rows(eps0: Fraction, delta0: Fraction, eps: Fraction, dps: int) -> mpf:
    with mpmath.workdps(dps):
        return max(_gdpt_rows(eps0, delta0, eps))


@register("dp.implies")
def recheck_implies(inputs: Mapping[str, Any], result: Mapping[str, Any]) -> Recheck:
    """The required delta = sup over the 4-output mechanism's events (GDPT
    Thm 3.1), by brute force on mpmath (enclosure); the verdict holds iff the
    given delta reaches it, decided outside the second route's error
    (equality is left undecided: exit 3)."""
    eps0, delta0, eps, delta = (exact_input(inputs, k) for k in ("eps0", "delta0", "eps", "delta"))
    digits = needed_digits(result)
    re = stable_value(lambda dps: _max_rows(eps0, delta0, eps, dps), digits)
    with mpmath.workdps(re.dps):
        D = to_mpf(delta)
        verdict = "holds" if D > re.value + re.err else "fails" if D < re.value - re.err else "undecided"
    if verdict == "undecided" and eps >= eps0 and delta >= delta0:
        # equality cases such as (0.5, 0.1) => (1, 0.1): by the definition of DP alone
        # (every event's bound e^eps0 P + delta0 is at most e^eps P + delta), decided exactly
        verdict = "holds"
    return Recheck(value=re.value, err=re.err, dps=re.dps, verdict=verdict)


@register("dp.sigma_refinement")
def recheck_sigma(inputs: Mapping[str, Any], result: Mapping[str, Any]) -> Recheck:
    """GDPT Sec 5.2 / App C re-derived: mpmath findroot of d sigma / d eps0 by
    numerical differentiation (the arb route uses the closed-form derivative)."""
    eps = exact_input(inputs, "eps")
    L = exact_input(inputs, "log_delta")
    which = inputs.get("which")
    if which not in ("eps0", "delta0", "sigma"):
        raise MalformedCertificate("inputs.which must be eps0, delta0 or sigma")
    digits = needed_digits(result)
    dps = 2 * digits + 30
    with mpmath.workdps(dps):
        a, D = mpmath.exp(to_mpf(eps)), mpmath.exp(to_mpf(L))
        d0 = lambda x: (D * (1 + mpmath.exp(x)) - mpmath.exp(x) + a) / (1 + a)  # noqa: E731
        sig = lambda x: -mpmath.log(d0(x)) / x  # noqa: E731
        emax = mpmath.log((D + a) / (1 - D))
        # golden-section-free: root of the numerical derivative, bracketed
        g = lambda x: mpmath.diff(sig, x)  # noqa: E731
        lo, hi = to_mpf(eps), emax - (emax - to_mpf(eps)) * mpf(10) ** -6
        if g(lo) >= 0:
            x = lo
        else:
            x = mpmath.findroot(g, (lo, hi), solver="anderson")
        value = {"eps0": x, "delta0": d0(x), "sigma": sig(x)}[which]
        return Recheck(value=value, err=abs(value) * mpf(10) ** (-(digits + 5)), dps=dps)
