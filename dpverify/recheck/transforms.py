"""Second route for the LT transform claims, on mpmath only: the same integrals
by mpmath.quad (tanh-sinh, split at the kinks) with mpmath's own profile and
E_q closed forms; no flint, no dpverify.transforms."""

from __future__ import annotations

from typing import Any, Callable, Mapping

import mpmath
from mpmath import mpf

from ..errors import MalformedCertificate
from .gdp import exact_input, to_mpf
from .verify import Recheck, register

_DPS = 60


def _mech(inputs: Mapping[str, Any]):
    name = inputs.get("mechanism")
    a = to_mpf(exact_input(inputs, "param"))
    if name == "gaussian":
        h = a * a / 2
        prof = lambda t: mpmath.ncdf(-t / a + a / 2) - mpmath.exp(t) * mpmath.ncdf(-t / a - a / 2)
        sf = lambda x: mpmath.ncdf((h - x) / a)  # Pr[Z > x], Z ~ N(h, a^2)
        cdfp = lambda y: mpmath.ncdf((y - h) / a)
        mom = lambda q: mpmath.exp(q * (q - 1) * h)
        kinks: list = []
    elif name == "laplace":
        s = a
        prof = lambda t: (1 - mpmath.exp(t)) if t < -s else ((1 - mpmath.exp((t - s) / 2)) if t < s else mpf(0))
        mid = lambda z: mpmath.exp(-(s - z) / 2) / 2
        sf = lambda x: mpf(1) if x < -s else ((1 - mid(x)) if x < s else mpf(0))
        cdfp = lambda y: mpf(0) if y < -s else (mid(y) if y < s else mpf(1))
        mom = lambda q: q / (2 * q - 1) * mpmath.exp((q - 1) * s) + (q - 1) / (2 * q - 1) * mpmath.exp(-q * s)
        kinks = [-s, s]
    elif name == "rr":
        e0 = a
        p = mpmath.exp(e0) / (1 + mpmath.exp(e0))
        prof = lambda t: max(p - mpmath.exp(t) * (1 - p), 0) + max(1 - p - mpmath.exp(t) * p, 0)
        sf = lambda x: mpf(1) if x < -e0 else (p if x < e0 else mpf(0))
        cdfp = lambda y: mpf(0) if y < -e0 else ((1 - p) if y < e0 else mpf(1))
        mom = lambda q: p**q * (1 - p) ** (1 - q) + (1 - p) ** q * p ** (1 - q)
        kinks = [-e0, e0]
    else:
        raise MalformedCertificate(f"unknown mechanism {name!r}")
    return prof, sf, cdfp, mom, kinks


def _quad(f: Callable, a, b, kinks) -> Any:
    pts = sorted({*(k for k in kinks if a < k < b)})
    return mpmath.quad(f, [a, *pts, b], error=True)


@register("lt.residual")
def recheck_residual(inputs: Mapping[str, Any], result: Mapping[str, Any]) -> Recheck:
    with mpmath.workdps(_DPS):
        prof, sf, cdfp, mom, kinks = _mech(inputs)
        ident = inputs.get("identity")
        if ident in ("eq22", "eq23"):
            eps = to_mpf(exact_input(inputs, "eps"))
            if ident == "eq22":
                v, err = _quad(lambda t: mpmath.exp(-t) * sf(t + eps), mpf(0), mpmath.inf, [k - eps for k in kinks])
            else:
                v, err = _quad(lambda t: mpmath.exp(t) * cdfp(-t - eps), mpf(0), mpmath.inf, [-k - eps for k in kinks])
                v, err = mpmath.exp(eps) * v, mpmath.exp(eps) * err
            r = v - prof(eps)
        elif ident == "eq27":
            q = mpmath.mpc(to_mpf(exact_input(inputs, "q_re")), to_mpf(exact_input(inputs, "q_im")))
            v, err = _quad(lambda t: mpmath.exp((q - 1) * t) * prof(t), -mpmath.inf, mpmath.inf, kinks)
            r = abs(q * (q - 1) * v - mom(q))
            err = abs(q * (q - 1)) * err
            # |.| >= 0: the enclosure of an absolute value starts at 0 at worst
            e2 = 100 * abs(err) + mpf(10) ** -50
            return Recheck(lo=max(mpf(0), r - e2), hi=r + e2, dps=_DPS)
        else:
            raise MalformedCertificate(f"unknown identity {ident!r}")
        # quadrature error estimates are heuristic; the residual is compared with a
        # generous tolerance (the claim's relation is |r| <= 1e-20)
        return Recheck(value=mpmath.re(r), err=100 * abs(err) + mpf(10) ** -50, dps=_DPS)


@register("lt.partial-transform")
def recheck_partial(inputs: Mapping[str, Any], result: Mapping[str, Any]) -> Recheck:
    with mpmath.workdps(_DPS):
        prof, _, _, _, kinks = _mech(inputs)
        q = to_mpf(exact_input(inputs, "q"))
        A, B = inputs.get("A"), inputs.get("B")
        if not isinstance(A, int) or not isinstance(B, int):
            raise MalformedCertificate("A and B must be integers")
        v, err = _quad(lambda t: mpmath.exp((q - 1) * t) * prof(t), mpf(-A), mpf(B), kinks)
        val = q * (q - 1) * v
        return Recheck(value=val, err=abs(val) * mpf(10) ** -40 + abs(err) * 10, dps=_DPS)
