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

from ..errors import CertificateRejected, CouldNotReprove, MalformedCertificate
from .verify import Recheck, needed_digits, register


def exact_input(inputs: Mapping[str, Any], key: str) -> Fraction:
    """Re-parse an input string exactly (decimal or a/b), without dpverify.ball."""
    if key not in inputs:
        raise MalformedCertificate(f"missing inputs.{key}")
    text = inputs[key]
    if isinstance(text, int) and not isinstance(text, bool) and abs(text) < 10**1000:
        return Fraction(text)  # a count
    if not isinstance(text, str) or len(text) > 2000:
        raise MalformedCertificate(f"inputs.{key} must be a number string")
    try:
        if "/" in text:
            n, d = text.split("/")
            return Fraction(int(n), int(d))
        if "e" in text.lower() and abs(int(text.lower().split("e")[1])) > 100000:
            raise MalformedCertificate(f"inputs.{key}={text[:40]!r}: exponent beyond the cap 1e100000")
        return Fraction(text)
    except (ValueError, ZeroDivisionError):
        raise MalformedCertificate(f"inputs.{key}={text!r} is not an exact number") from None


def to_mpf(x: Fraction) -> mpf:
    return mpf(x.numerator) / x.denominator


def mpf_to_fraction(x: mpf) -> Fraction:
    """The exact rational value of a finite mpf."""
    man, exp = mpmath.mpf(x).man_exp
    if man and abs(int(exp)) > 10**6:  # 2^(10^6) is ~ 10^301030: beyond every quantity here
        raise CouldNotReprove(f"a recorded number of binary exponent {int(exp)} is beyond the second route's range")
    return Fraction(int(man)) * (Fraction(2) ** int(exp)) if man else Fraction(0)


def bracket_root(f: Any, target: Fraction, result: Mapping[str, Any], increasing: bool,
                 what: str) -> Recheck:
    """Prove that the root r of the monotone f(x) = target lies in the
    recorded enclosure [lo, hi] by two evaluations of f on mpmath: at a binary
    point lo' >= lo (f(lo') on the root's near side proves r >= lo' >= lo) and
    at hi' <= hi. The independent enclosure is then [lo', hi'] itself. An
    evaluation on the far side refutes the certificate; anything else is
    "could not re-prove". ``f(x: Fraction, dps) -> mpf``."""
    from .verify import enclosure_of

    enc = result.get("enclosure")
    digits = needed_digits(result) + 5
    lo, hi = enclosure_of(enc, "result.enclosure", digits + 20)
    if not (mpmath.isfinite(lo) and mpmath.isfinite(hi)):
        raise CouldNotReprove(f"{what}: infinite endpoints cannot bracket a finite root")
    with mpmath.workdps(digits + 20):
        t = to_mpf(target)
        # lo, hi are already rounded outward to binary; nudge inward by nothing: lo' = lo, hi' = hi
        a, b = mpf_to_fraction(lo), mpf_to_fraction(hi)
    ra = stable_value(lambda p: f(a, p), digits)
    rb = stable_value(lambda p: f(b, p), digits)
    with mpmath.workdps(max(ra.dps, rb.dps) + 10):
        sa = _sign(ra, t)
        sb = _sign(rb, t)
    near, far = (-1, 1) if increasing else (1, -1)
    if sa == far:
        raise CertificateRejected(f"{what}: the value at the recorded lower end is already past the target: the root is below it")
    if sb == near:
        raise CertificateRejected(f"{what}: the value at the recorded upper end has not reached the target: the root is above it")
    if sa == near and sb == far:
        return Recheck(lo=lo, hi=hi, dps=digits + 20)
    if sa == 0 and sb == far or sa == near and sb == 0 or sa == 0 and sb == 0:
        raise CouldNotReprove(f"{what}: the target is within the second route's error at a recorded end")
    raise CouldNotReprove(f"{what}: could not bracket the root")


def _sign(r: Recheck, t: mpf) -> int:
    """-1 / +1 when value -+ err is certainly below / above t, else 0."""
    if r.value + r.err < t:
        return -1
    if r.value - r.err > t:
        return 1
    return 0


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
    digits = needed_digits(result)
    return stable_value(lambda dps: _delta_mu(mu, eps, dps), digits)


@register("gdp.mu")
def recheck_mu(inputs: Mapping[str, Any], result: Mapping[str, Any]) -> Recheck:
    eps = exact_input(inputs, "eps")
    delta = exact_input(inputs, "delta")
    if not 0 < delta < 1:
        raise CertificateRejected(f"delta={inputs['delta']} is not in (0, 1)")
    if result.get("enclosure") is not None:
        # mu -> delta_mu(eps) is strictly increasing for every real eps (the pair
        # N(0,1), N(mu,1) is a post-processing of N(0,1), N(mu',1) for mu < mu':
        # data processing for the hockey-stick divergence), negative eps included
        return bracket_root(lambda m, p: _delta_mu(m, eps, p) if m > 0 else mpf(0), delta, result, True,
                            "mu_GDP")
    digits = needed_digits(result)
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
    # the bracket check above is the independent proof that the root lies in the
    # recorded [lo, hi] (delta_mu is increasing in mu): that interval is the
    # independent enclosure. (It was the midpoint with the width as error, an
    # interval twice as wide that the recorded one could never contain: exit 3
    # for every genuine certificate at eps < 0.)
    from .verify import enclosure_of

    r_lo, r_hi = enclosure_of(enc, "result.enclosure", 60)  # rounded outward, as the recorded one is read
    return Recheck(lo=r_lo, hi=r_hi, dps=60)


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
    """Slope d mu_GDP / d eps = e^eps Phi(-eps/mu - mu/2) / phi(eps/mu - mu/2)
    (implicit differentiation of delta_mu(eps) = delta; the arb route uses the
    Mills-ratio form), with mu_GDP found by bisection on mpmath at each
    precision and the value stabilised across two precisions; the verdict
    0 <= slope <= sqrt(2 pi)/2 is re-decided from it."""
    eps = exact_input(inputs, "eps")
    delta = exact_input(inputs, "delta")
    if not 0 < delta < 1 or eps < 0:
        raise CertificateRejected("GDPT Thm 4.5 needs eps >= 0 and 0 < delta < 1")

    def slope(dps: int) -> mpf:
        with mpmath.workdps(dps):
            e, t = to_mpf(eps), to_mpf(delta)
            f = lambda m: mpmath.ncdf(-e / m + m / 2) - mpmath.exp(e) * mpmath.ncdf(-e / m - m / 2)  # noqa: E731
            lo, hi = mpf(0), mpf(1)
            while f(hi) < t:
                lo, hi = hi, 2 * hi
            for _ in range(mpmath.mp.prec + 8):
                mid = (lo + hi) / 2
                if f(mid) < t:
                    lo = mid
                else:
                    hi = mid
            m = (lo + hi) / 2
            return mpmath.exp(e) * mpmath.ncdf(-e / m - m / 2) / mpmath.npdf(e / m - m / 2)

    # at eps = 0 the slope tends to the bound itself as mu -> 0 (Phi(0) / phi(0)): the
    # verdict may need far more digits than the enclosure, so precision rises until decided
    digits = needed_digits(result)
    while True:
        re = stable_value(slope, digits)
        with mpmath.workdps(re.dps + 10):
            bound = mpmath.sqrt(2 * mpmath.pi) / 2
            if re.value - re.err >= 0 and re.value + re.err <= bound:
                verdict = "holds"
            elif re.value + re.err < 0 or re.value - re.err > bound:
                verdict = "fails"
            else:
                verdict = "undecided"
        if verdict != "undecided" or digits >= 1200:
            return Recheck(value=re.value, err=re.err, dps=re.dps, verdict=verdict)
        digits *= 2


@register("gdp.eps")
def recheck_eps(inputs: Mapping[str, Any], result: Mapping[str, Any]) -> Recheck:
    """delta_mu is decreasing in eps, so [lo, hi] holds the root iff
    delta_mu(lo) >= delta >= delta_mu(hi), each evaluated on mpmath."""
    mu = exact_input(inputs, "mu")
    delta = exact_input(inputs, "delta")
    if mu <= 0 or not 0 < delta < 1:
        raise CertificateRejected("needs mu > 0 and 0 < delta < 1")
    return bracket_root(lambda e, p: _delta_mu(mu, e, p), delta, result, False, "eps(delta)")
    digits = needed_digits(result)
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
    digits = needed_digits(result)

    def f(dps: int) -> mpf:
        with mpmath.workdps(dps):
            x = to_mpf(t)
            return mpmath.sqrt(mpmath.pi / 2) * mpmath.exp(x * x / 2) * mpmath.erfc(-x / mpmath.sqrt(2)) / 2

    return stable_value(f, digits)
