"""Independent reference values on mpmath (the tests' ground truth).

Each function evaluates at two precisions and insists that they agree far
beyond the accuracy under test, so a reference is never the weak link.
"""

from __future__ import annotations

from fractions import Fraction

import mpmath
from mpmath import mpf


def mpf_exact(x: Fraction) -> mpf:
    return mpf(x.numerator) / x.denominator


def stable(f, digits: int) -> mpf:
    dps = 2 * digits + 30
    for _ in range(8):
        with mpmath.workdps(dps):
            a = f()
        with mpmath.workdps(2 * dps):
            b = f()
            if b != 0 and abs(a - b) <= abs(b) * mpf(10) ** (-(2 * digits + 10)):
                return b
        dps *= 2
    raise AssertionError("mpmath reference did not stabilise")


def delta_mu_ref(mu: Fraction, eps: Fraction, digits: int = 15) -> mpf:
    """delta_mu(eps) of GDPT eq. 2 on mpmath's ncdf (not erfc, as the arb route)."""

    def f():
        m, e = mpf_exact(mu), mpf_exact(eps)
        return mpmath.ncdf(-e / m + m / 2) - mpmath.exp(e) * mpmath.ncdf(-e / m - m / 2)

    return stable(f, digits)


def in_enclosure(value: mpf, enc) -> bool:
    """Does the decimal-printed enclosure (outward rounded) contain value?"""
    j = enc.to_json()
    with mpmath.workdps(max(60, 3 * enc.digits + 40)):
        return mpf(j["lo"]) <= value <= mpf(j["hi"])


def golden_min(h, lo: mpf, hi: mpf, iters: int) -> tuple[mpf, mpf]:
    """(argmin, min) of a unimodal h on [lo, hi] by golden-section search (mpmath at
    the ambient precision): the references' minimiser, written apart from the product's
    and the re-check's own searches."""
    g = (mpmath.sqrt(5) - 1) / 2
    a, b = hi - g * (hi - lo), lo + g * (hi - lo)
    fa, fb = h(a), h(b)
    for _ in range(iters):
        if fa <= fb:
            hi, b, fb = b, a, fa
            a = hi - g * (hi - lo)
            fa = h(a)
        else:
            lo, a, fa = a, b, fb
            b = lo + g * (hi - lo)
            fb = h(b)
    return (a, fa) if fa <= fb else (b, fb)


def _mpf_any(x: "Fraction | mpmath.mpf") -> mpmath.mpf:
    return mpmath.mpf(x.numerator) / x.denominator if isinstance(x, Fraction) else mpmath.mpf(x)


def gaussian_delta(mu2: Fraction, eps: Fraction, dps: int = 130) -> mpmath.mpf:
    """delta_mu(eps) (GDPT eq. 2) for mu = sqrt(mu2), mu irrational in general (a composition of
    Gaussian steps at sampling rate 1), at ``dps`` digits."""
    with mpmath.workdps(dps):
        mu, e = mpmath.sqrt(_mpf_any(mu2)), _mpf_any(eps)
        return mpmath.ncdf(-e / mu + mu / 2) - mpmath.exp(e) * mpmath.ncdf(-e / mu - mu / 2)


def gaussian_eps(mu2: Fraction, delta: Fraction, hi: int = 2000, steps: int = 480) -> mpmath.mpf:
    """eps(delta) for mu = sqrt(mu2) by bisection on [0, hi] at 130 digits (a lower end, within
    hi 2^-steps of the root)."""
    with mpmath.workdps(130):
        D, a, b = _mpf_any(delta), mpmath.mpf(0), mpmath.mpf(hi)
        for _ in range(steps):
            c = (a + b) / 2
            a, b = (c, b) if gaussian_delta(mu2, c) > D else (a, c)
        return a


def nested_events_file(path, sigma: str, depth: int):
    """An ``--events`` file (add-remove) of ``depth`` nested ``self_composed`` x 2 around one Gaussian of
    noise multiplier ``sigma``: 2^depth steps written as a deep tree, for the CLI tests of the tree's depth
    and repetition caps. Returns ``path``."""
    import json

    ev: dict = {"type": "gaussian", "noise_multiplier": sigma}
    for _ in range(depth):
        ev = {"type": "self_composed", "count": 2, "event": ev}
    path.write_text(json.dumps({"neighboring": "add-remove", "event": ev}))
    return path


def tail_point_per_lambda(xf, a, log_target, above):
    """fourier._tail_point's Chernoff scan (16 points, then twice 12 about the best) with one numpy
    pass per lambda, as first written (the tests of its blocked and in-place forms compare
    (t, lambda) with this, bit for bit)."""
    import math

    import numpy as np

    idx = np.arange(xf.size, dtype=np.float64)
    with np.errstate(divide="ignore"):
        logx = np.where(xf > 0, np.log(np.where(xf > 0, xf, 1.0)), -np.inf)
    sgn = 1.0 if above else -1.0

    def required(lam):
        z = logx + sgn * lam * idx
        zmax = float(z.max())
        logM = zmax + math.log(float(np.exp(z - zmax).sum()))
        if above:
            return math.ceil((a * logM - log_target) / lam)
        return -math.floor((log_target - a * logM) / lam)

    # 16 geometric points, then twice 12 between the neighbours of the last scan's best
    lams = np.geomspace(1e-7, 50.0, 16)
    cand = [(required(float(v)), float(v)) for v in lams]
    for _ in range(2):
        ts = [t for t, _ in cand[-len(lams):]]
        i = int(np.argmin(ts))
        lams = np.geomspace(lams[max(0, i - 1)], lams[min(len(lams) - 1, i + 1)], 12)
        cand += [(required(float(v)), float(v)) for v in lams]
    t, lam = min(cand)
    return (t, lam) if above else (-t, lam)
