"""Second route for the Gaussian-DP quantities, on mpmath only.

Deliberately shares no code with :mod:`dpverify.gdp`: inputs are re-parsed
here, delta_mu is re-implemented with ``mpmath.ncdf`` (the arb route uses
``erfc``), the working precision is chosen by an agreement test between two
precisions, and mu_GDP is re-derived by mpmath's own ``findroot``, followed
by a monotonicity check at the recorded endpoints.
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


def stable_value(f: Any, digits: int) -> Recheck:
    """Evaluate f(dps) at rising precision until two precisions agree to
    digits + 10 significant digits; the difference (times 10) is the error."""
    dps = 2 * digits + 20
    for _ in range(12):
        v1 = f(dps)
        v2 = f(dps + 20 + dps // 2)
        with mpmath.workdps(dps + 20 + dps // 2):
            if v1 == 0 and v2 == 0:  # an exact zero (e.g. a profile beyond its support)
                return Recheck(value=mpf(0), err=mpf(0), dps=dps + 20)
            diff = abs(v1 - v2)
            if v2 != 0 and diff <= abs(v2) * mpf(10) ** (-(digits + 10)):
                return Recheck(value=v2, err=10 * diff + abs(v2) * mpf(10) ** (-dps), dps=dps + 20)
        dps *= 2
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
    lo, hi = Fraction(enc["lo"]), Fraction(enc["hi"])
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
    with mpmath.workdps(dps):
        guess = (to_mpf(lo) + to_mpf(hi)) / 2
        try:
            root = mpmath.findroot(
                lambda m: mpmath.log(
                    mpmath.ncdf(-to_mpf(eps) / m + m / 2)
                    - mpmath.exp(to_mpf(eps)) * mpmath.ncdf(-to_mpf(eps) / m - m / 2)
                )
                - mpmath.log(target),
                guess,
            )
        except (ValueError, ZeroDivisionError):
            raise CertificateRejected("mpmath findroot did not converge near the recorded mu") from None
        return Recheck(value=root, err=abs(root) * mpf(10) ** (-(digits + 8)), dps=dps)
