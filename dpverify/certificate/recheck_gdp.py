"""Second route for the Gaussian-DP quantities, on mpmath only.

Deliberately shares no code with :mod:`dpverify.gdp`: inputs are re-parsed
here, delta_mu is re-implemented with ``mpmath.ncdf`` (the arb route uses
``erfc``), the working precision is chosen by an agreement test between two
precisions, and mu_GDP is re-derived by evaluating delta_mu at the recorded endpoints (monotonicity
makes that a proof that they bracket the root).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Mapping

import mpmath
from mpmath import mpf

from ..errors import CertificateRejected, MalformedCertificate
from .verify import Recheck, register


def exact_input(inputs: Mapping[str, Any], key: str) -> Fraction:
    """Re-parse an input string exactly (decimal or a/b), without dpverify.ball."""
    if key not in inputs:
        raise MalformedCertificate(f"missing inputs.{key}")
    text = inputs[key]
    if not isinstance(text, str) or len(text) > 2000:
        raise MalformedCertificate(f"inputs.{key} must be a number string")
    try:
        if "/" in text:
            n, d = text.split("/")
            return Fraction(int(n), int(d))
        if "e" in text.lower() and abs(int(text.lower().split("e")[1])) > 100000:
            raise ValueError
        return Fraction(text)
    except (ValueError, ZeroDivisionError):
        raise MalformedCertificate(f"inputs.{key}={text!r} is not an exact number") from None


def to_mpf(x: Fraction) -> mpf:
    return mpf(x.numerator) / x.denominator


def _delta_mu(mu: Fraction, eps: Fraction, dps: int) -> mpf:
    with mpmath.workdps(dps):
        m, e = to_mpf(mu), to_mpf(eps)
        return mpmath.ncdf(-e / m + m / 2) - mpmath.exp(e) * mpmath.ncdf(-e / m - m / 2)


def stable_value(f: Any, digits: int, max_dps: int = 20000) -> Recheck:
    """Evaluate f(dps) at rising precision until two precisions agree to
    digits + 10 significant digits; the difference (times 10) is the error.

    Two zeros are *not* agreement: cancellation gives exact zeros at every
    working precision below the cancelled digits (delta_mu(0) for mu = 1e-300
    is 0.5 - 0.5 at 60 digits). Precision keeps rising, and zero is accepted
    only if it persists up to ``max_dps`` (a structural zero, such as a
    profile beyond its support)."""
    dps = 2 * digits + 20
    while dps <= max_dps:
        v1 = f(dps)
        v2 = f(dps + 20 + dps // 2)
        with mpmath.workdps(dps + 20 + dps // 2):
            if not (v1 == 0 and v2 == 0):
                diff = abs(v1 - v2)
                if v2 != 0 and diff <= abs(v2) * mpf(10) ** (-(digits + 10)):
                    return Recheck(
                        value=v2, err=10 * diff + abs(v2) * mpf(10) ** (-dps), dps=dps + 20
                    )
        dps *= 2
    if v1 == 0 and v2 == 0:
        return Recheck(value=mpf(0), err=mpf(0), dps=max_dps)
    raise CertificateRejected("the mpmath re-derivation did not stabilise")


@register("gdp.delta")
def recheck_delta(inputs: Mapping[str, Any], result: Mapping[str, Any]) -> Recheck:
    mu = exact_input(inputs, "mu")
    eps = exact_input(inputs, "eps")
    if mu <= 0:
        raise CertificateRejected(f"mu={inputs['mu']} is not > 0")
    digits = int(inputs.get("digits", 15))
    return stable_value(lambda dps: _delta_mu(mu, eps, dps), digits)


@register("gdp.mu")
def recheck_mu(inputs: Mapping[str, Any], result: Mapping[str, Any]) -> Recheck:
    eps = exact_input(inputs, "eps")
    delta = exact_input(inputs, "delta")
    if not 0 < delta < 1:
        raise CertificateRejected(f"delta={inputs['delta']} is not in (0, 1)")
    digits = int(inputs.get("digits", 15))
    dps = 2 * digits + 30
    enc = result.get("enclosure")
    if not isinstance(enc, dict) or "lo" not in enc or "hi" not in enc:
        raise MalformedCertificate("gdp.mu needs result.enclosure with lo and hi")
    # mu -> delta_mu(eps) is increasing (d/dmu = phi(...) > 0), so [lo, hi]
    # contains the root iff delta_mu(lo) <= delta <= delta_mu(hi).
    try:
        lo, hi = Fraction(enc["lo"]), Fraction(enc["hi"])
    except (ValueError, TypeError):
        raise MalformedCertificate("result.enclosure endpoints must be decimal strings") from None
    if lo <= 0:
        raise CertificateRejected("mu enclosure must be positive")
    d_lo = stable_value(lambda p: _delta_mu(lo, eps, p), digits + 5)
    d_hi = stable_value(lambda p: _delta_mu(hi, eps, p), digits + 5)
    with mpmath.workdps(d_lo.dps):
        target = to_mpf(delta)
        if d_lo.value - d_lo.err > target or d_hi.value + d_hi.err < target:
            raise CertificateRejected(
                "delta_mu at the recorded mu endpoints does not bracket delta "
                f"({mpmath.nstr(d_lo.value, 17)} .. {mpmath.nstr(d_hi.value, 17)} vs {inputs['delta']})"
            )
    # the bracket check above is the independent proof; the value reported for
    # the containment check is the recorded midpoint, with the width as error
    with mpmath.workdps(dps):
        m_lo, m_hi = to_mpf(lo), to_mpf(hi)
        return Recheck(value=(m_lo + m_hi) / 2, err=(m_hi - m_lo), dps=dps)


def _mu_by_bisection(eps: mpf, delta: mpf, dps: int) -> mpf:
    """mu_GDP by plain bisection on log mu (mpmath), with each delta_mu value
    taken from :func:`stable_value` so cancellation cannot flip a sign."""
    eps_f = Fraction(mpmath.nstr(eps, dps + 10, strip_zeros=False)) if eps != 0 else Fraction(0)

    def above(mu: mpf) -> bool:
        m = Fraction(mpmath.nstr(mu, dps + 10, strip_zeros=False))
        v = stable_value(lambda p: _delta_mu(m, eps_f, p), 12).value
        with mpmath.workdps(dps):
            return v > delta

    with mpmath.workdps(dps):
        lo, hi = mpf(1), mpf(1)
        while above(lo):
            lo /= mpf(2) ** 64
        while not above(hi):
            hi *= 16
        for _ in range(400):
            mid = mpmath.sqrt(lo * hi)
            if above(mid):
                hi = mid
            else:
                lo = mid
            if hi - lo <= hi * mpf(10) ** (-(dps - 10)):
                break
        return (lo + hi) / 2


@register("gdp.thm4.5")
def recheck_thm45(inputs: Mapping[str, Any], result: Mapping[str, Any]) -> Recheck:
    """Slope d mu_GDP / d eps by a finite difference of mu_GDP computed by
    bisection on mpmath (not by the Mills-ratio formula of the arb route); the
    verdict is re-derived from it."""
    eps = exact_input(inputs, "eps")
    delta = exact_input(inputs, "delta")
    if not 0 < delta < 1 or eps < 0:
        raise CertificateRejected("GDPT Thm 4.5 needs eps >= 0 and 0 < delta < 1")
    dps = 40
    with mpmath.workdps(dps):
        t, e0 = to_mpf(delta), to_mpf(eps)
        mu0 = _mu_by_bisection(e0, t, dps)
        # one-sided difference (mu_GDP is defined here for eps >= 0) with a step
        # relative to mu: the slope varies on the scale of mu (1e-77 for tiny delta)
        h = mu0 * mpf(10) ** -12
        slope = (_mu_by_bisection(e0 + h, t, dps) - mu0) / h
        bound = mpmath.sqrt(2 * mpmath.pi) / 2
        err = mpf(10) ** -7
        verdict = "holds" if -err <= slope <= bound + err else "fails"
        return Recheck(value=slope, err=err, dps=dps, verdict=verdict)


@register("gdp.eps")
def recheck_eps(inputs: Mapping[str, Any], result: Mapping[str, Any]) -> Recheck:
    """delta_mu is decreasing in eps, so [lo, hi] holds the root iff
    delta_mu(lo) >= delta >= delta_mu(hi), each evaluated on mpmath."""
    mu = exact_input(inputs, "mu")
    delta = exact_input(inputs, "delta")
    if mu <= 0 or not 0 < delta < 1:
        raise CertificateRejected("needs mu > 0 and 0 < delta < 1")
    digits = int(inputs.get("digits", 15))
    enc = result.get("enclosure")
    try:
        lo, hi = Fraction(enc["lo"]), Fraction(enc["hi"])
    except (ValueError, TypeError, KeyError):
        raise MalformedCertificate("result.enclosure endpoints must be decimal strings") from None
    d_lo = stable_value(lambda p: _delta_mu(mu, lo, p), digits + 5)
    d_hi = stable_value(lambda p: _delta_mu(mu, hi, p), digits + 5)
    with mpmath.workdps(d_lo.dps):
        t = to_mpf(delta)
        if d_lo.value + d_lo.err < t or d_hi.value - d_hi.err > t:
            raise CertificateRejected("delta_mu at the recorded eps endpoints does not bracket delta")
        return Recheck(value=(to_mpf(lo) + to_mpf(hi)) / 2, err=to_mpf(hi - lo), dps=d_lo.dps)


@register("gdp.mills_scaled")
def recheck_mills(inputs: Mapping[str, Any], result: Mapping[str, Any]) -> Recheck:
    """sqrt(pi/2) e^{t^2/2} Phi(t) with mpmath's erfc (the arb route uses
    its own erfc at exact midpoints)."""
    t = exact_input(inputs, "t")
    digits = int(inputs.get("digits", 30))

    def f(dps: int) -> mpf:
        with mpmath.workdps(dps):
            x = to_mpf(t)
            return mpmath.sqrt(mpmath.pi / 2) * mpmath.exp(x * x / 2) * mpmath.erfc(-x / mpmath.sqrt(2)) / 2

    return stable_value(f, digits)
