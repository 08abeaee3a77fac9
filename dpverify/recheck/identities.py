"""Second route for ``finite.identity`` certificates: each identity's two sides
re-computed on mpmath (60 digits) from the pmfs, from the definitions
(sup over events as a sum of positive parts, PLD masses, Neyman-Pearson
trade-off by bisection on the randomisation level), independently of
dpverify.theorems.identities."""

from __future__ import annotations

from typing import Any, Mapping

import mpmath
from mpmath import mpf

from ..errors import MalformedCertificate
from .gdp import exact_input, to_mpf
from .verify import Recheck, register

_DPS = 60


def _pmf(inputs: Mapping[str, Any], key: str) -> list:
    v = inputs.get(key)
    if not isinstance(v, list) or not v:
        raise MalformedCertificate(f"inputs.{key} must be a non-empty list of numbers")
    out = [to_mpf(exact_input({"x": x}, "x")) for x in v]
    if any(x < 0 for x in out) or abs(mpmath.fsum(out) - 1) > mpf(10) ** -50:
        raise MalformedCertificate(f"inputs.{key} is not a pmf")
    return out


def _H(P, Q, a):
    return mpmath.fsum(max(p - a * q, 0) for p, q in zip(P, Q))


def _f(P, Q, alpha):
    """Trade-off f_{P|Q}(alpha) by the Neyman-Pearson lemma: reject outcomes in
    increasing p/q order, randomising the last one (in mpmath; the inverse is
    then found by bisection, not by the segment formula of the first route)."""
    idx = sorted(range(len(P)), key=lambda i: (Q[i] == 0, P[i] / Q[i] if Q[i] > 0 else 0))
    used, gained = mpf(0), mpf(0)
    for i in idx:
        if Q[i] == 0:
            break
        if used + P[i] <= alpha:
            used += P[i]
            gained += Q[i]
        else:
            gained += (alpha - used) / P[i] * Q[i] if P[i] > 0 else Q[i]
            break
    return 1 - gained


@register("finite.identity")
def recheck_identity(inputs: Mapping[str, Any], result: Mapping[str, Any]) -> Recheck:
    ident = inputs.get("identity")
    with mpmath.workdps(_DPS):
        P, Q = _pmf(inputs, "P"), _pmf(inputs, "Q")
        if len(P) != len(Q):
            raise MalformedCertificate("P and Q differ in length")
        arg = lambda k: to_mpf(exact_input(inputs, k))  # noqa: E731
        if ident == "lt-eq7":
            r = arg("r")
            res = _H(Q, P, r) - (1 - r + r * _H(P, Q, 1 / r))
        elif ident == "afa-lemma46":
            a = arg("r")
            res = _H(Q, P, a) - (a * _H(P, Q, 1 / a) - a + 1)
        elif ident == "afa-lemma19":
            a = arg("r")
            A = [i for i in range(len(P)) if P[i] > 0 and a * Q[i] <= P[i] * (1 + mpf(10) ** -40)]
            res = _H(P, Q, a) - (mpmath.fsum(P[i] for i in A) - a * mpmath.fsum(Q[i] for i in A))
        elif ident == "lt-eq19":
            r = arg("r")
            same = [i for i in range(len(P)) if Q[i] > 0 and abs(P[i] - r * Q[i]) <= mpf(10) ** -50]
            res = mpmath.fsum(P[i] for i in same) - r * mpmath.fsum(Q[i] for i in same)
        elif ident == "lt-eq21":
            k = arg("q")
            res = mpmath.fsum(p ** k * q ** (1 - k) for p, q in zip(P, Q) if p > 0) - mpmath.fsum(
                q * (p / q) ** k for p, q in zip(P, Q) if q > 0
            )
        elif ident == "lt-eq12":
            beta = arg("beta")
            # inverse by bisection on alpha (f is non-increasing)
            # f is computed in 60-digit floats: f = 0 comes out as ~1e-60, so
            # "f <= beta" is tested with a slack far below the 1e-40 verdict threshold
            slack = mpf(10) ** -50
            lo, hi = mpf(0), mpf(1)
            if _f(P, Q, lo) <= beta + slack:
                inv = lo
            else:
                for _ in range(190):
                    mid = (lo + hi) / 2
                    if _f(P, Q, mid) <= beta + slack:
                        hi = mid
                    else:
                        lo = mid
                inv = hi
            res = inv - _f(Q, P, beta)
        elif ident == "lt-thm5.1":
            r, lam = arg("r"), arg("lam")
            Pm = [lam * p + (1 - lam) * q for p, q in zip(P, Q)]
            left = _H(Pm, Q, r)
            right = lam * _H(P, Q, 1 + (r - 1) / lam) if r > 1 - lam else 1 - r
            res = left - right
        else:
            raise MalformedCertificate(f"unknown identity {ident!r}")
        tol = mpf(10) ** -40
        verdict = "holds" if abs(res) <= tol else "fails"
        return Recheck(value=res, err=tol, dps=_DPS, verdict=verdict)
