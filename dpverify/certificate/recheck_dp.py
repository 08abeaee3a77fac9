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

from ..errors import CertificateRejected, MalformedCertificate
from .recheck_gdp import exact_input, stable_value, to_mpf
from .recheck_profiles import register_profile_recheck
from .verify import Recheck, parse_bound, register

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


def _check_grid(inputs: Mapping[str, Any], result: Mapping[str, Any], one: Callable[[Types], Recheck]) -> Recheck:
    """Grid certificates: the recorded [lo, hi] must contain the re-derived
    rounded-down value's lower end and the rounded-up value's upper end."""
    down = one(_types(inputs, "down"))
    up = one(_types(inputs, "up"))
    enc = result.get("enclosure")
    if not isinstance(enc, dict):
        raise MalformedCertificate("missing result.enclosure")
    dps = max(down.dps, up.dps)
    lo = parse_bound(enc.get("lo"), "result.enclosure.lo", dps)
    hi = parse_bound(enc.get("hi"), "result.enclosure.hi", dps)
    with mpmath.workdps(dps):
        if down.value is not None and lo > down.value + down.err:
            raise CertificateRejected("the lower end is above the rounded-down composition")
        if up.value is not None and hi < up.value - up.err:
            raise CertificateRejected("the upper end is below the rounded-up composition")
    return Recheck(value=None, err=mpf(0), dps=dps)


@register("composition.delta")
def recheck_composition_delta(inputs: Mapping[str, Any], result: Mapping[str, Any]) -> Recheck:
    eps = exact_input(inputs, "eps")
    digits = int(inputs.get("digits", inputs.get("accuracy_digits", 15)))

    def one(types: Types) -> Recheck:
        return stable_value(lambda dps: _at(types, eps, dps), digits)

    if "grid" in inputs:
        return _check_grid(inputs, result, one)
    types = _types(inputs)
    if all(d == 0 for _, d, _ in types) and eps >= sum(e * c for e, _, c in types):
        return Recheck(value=mpf(0), err=mpf(0), dps=30)
    return one(types)


def _eps_recheck(types: Types, delta: Fraction, digits: int, enc: Mapping[str, Any]) -> Recheck:
    R = Fraction(1)
    for _, d, c in types:
        R *= (1 - d) ** c
    T = sum(e * c for e, _, c in types)
    dps = 2 * digits + 30
    if delta < 1 - R:  # exact: no finite eps
        return Recheck(value=mpmath.inf, err=mpf(0), dps=dps)
    if R == 0 or T == 0:
        return Recheck(value=mpf(0), err=mpf(0), dps=dps)
    if delta == 1 - R:
        return Recheck(value=to_mpf(T), err=mpf(0), dps=dps)
    with mpmath.workdps(dps):
        D = to_mpf(delta)
        if _profile(types, Fraction(0)) <= D:
            return Recheck(value=mpf(0), err=mpf(0), dps=dps)
        lo = parse_bound(enc.get("lo"), "result.enclosure.lo", dps)
        hi = parse_bound(enc.get("hi"), "result.enclosure.hi", dps)
        if not (mpmath.isfinite(lo) and mpmath.isfinite(hi)):
            raise CertificateRejected(f"a finite eps meets the budget, but the certificate says [{lo}, {hi}]")
        # monotone bracket: d(lo) >= delta >= d(hi) (d is non-increasing)
        a, b = mpf(0), to_mpf(T)
        for _ in range(int(3.4 * (digits + 8)) + 10):
            m = (a + b) / 2
            if _profile(types, _to_frac(m)) > D:
                a = m
            else:
                b = m
        root = (a + b) / 2
        return Recheck(value=root, err=(b - a) + abs(root) * mpf(10) ** (-(digits + 6)), dps=dps)


def _to_frac(x: mpf) -> Fraction:
    m, e = mpmath.mpf(x).man_exp
    return Fraction(int(m)) * (Fraction(2) ** e if e >= 0 else Fraction(1, 2 ** (-e)))


@register("composition.eps")
def recheck_composition_eps(inputs: Mapping[str, Any], result: Mapping[str, Any]) -> Recheck:
    delta = exact_input(inputs, "delta")
    if not 0 <= delta <= 1:
        raise CertificateRejected(f"delta={inputs['delta']} is not in [0, 1]")
    digits = int(inputs.get("digits", inputs.get("accuracy_digits", 15)))
    enc = result.get("enclosure")
    if not isinstance(enc, dict):
        raise MalformedCertificate("missing result.enclosure")
    if "grid" in inputs:
        # the per-route enclosures are recorded under result.lower / result.upper
        def one(types: Types) -> Recheck:
            return _eps_recheck(types, delta, digits, {"lo": "0", "hi": "1e9"})

        return _check_grid(inputs, result, one)
    return _eps_recheck(_types(inputs), delta, digits, enc)


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
    eps0, delta0, eps = (exact_input(inputs, k) for k in ("eps0", "delta0", "eps"))
    digits = int(inputs.get("digits", 15))
    re = stable_value(lambda dps: _max_rows(eps0, delta0, eps, dps), digits)
    with mpmath.workdps(re.dps):
        u, E = mpmath.exp(to_mpf(eps0)), mpmath.exp(to_mpf(eps))
        printed = to_mpf(delta0) + (1 - to_mpf(delta0)) * max(u - E, 0) / (1 + u)
        differs = abs(printed - re.value) > 10 * re.err + abs(re.value) * mpf(10) ** (-digits)
        if result.get("equals_gdpt_formula") == "holds" and differs:
            raise CertificateRejected("the supremum differs from GDPT's formula, the certificate says it equals it")
        if result.get("equals_gdpt_formula") == "fails" and not differs:
            raise CertificateRejected("the supremum agrees with GDPT's formula, the certificate says it differs")
    return re


def _max_rows(eps0: Fraction, delta0: Fraction, eps: Fraction, dps: int) -> mpf:
    with mpmath.workdps(dps):
        return max(_gdpt_rows(eps0, delta0, eps))


@register("dp.implies")
def recheck_implies(inputs: Mapping[str, Any], result: Mapping[str, Any]) -> Recheck:
    eps0, delta0, eps, delta = (exact_input(inputs, k) for k in ("eps0", "delta0", "eps", "delta"))
    digits = int(inputs.get("digits", 15))
    # the required delta is the sup over the 4-output mechanism's events, by brute force
    re = stable_value(lambda dps: _max_rows(eps0, delta0, eps, dps), digits)
    with mpmath.workdps(re.dps):
        D = to_mpf(delta)
        if D > re.value + re.err and result.get("implies") == "fails":
            raise CertificateRejected("delta exceeds the required delta, the certificate says 'fails'")
        if D < re.value - re.err and result.get("implies") == "holds":
            raise CertificateRejected("delta is below the required delta, the certificate says 'holds'")
    return re



@register("dp.sigma_refinement")
def recheck_sigma(inputs: Mapping[str, Any], result: Mapping[str, Any]) -> Recheck:
    """GDPT Sec 5.2 / App C re-derived: mpmath findroot of d sigma / d eps0 by
    numerical differentiation (the arb route uses the closed-form derivative)."""
    eps = exact_input(inputs, "eps")
    L = exact_input(inputs, "log_delta")
    which = inputs.get("which")
    if which not in ("eps0", "delta0", "sigma"):
        raise MalformedCertificate("inputs.which must be eps0, delta0 or sigma")
    digits = int(inputs.get("digits", 15))
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
