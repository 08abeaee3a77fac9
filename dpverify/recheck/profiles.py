"""Second route for ``dp.profile`` certificates: each mechanism's profile
re-implemented on mpmath, dispatched on ``inputs.mechanism``.

Mechanism areas register their own mpmath profile with
:func:`register_profile_recheck` from their ``recheck_*`` module.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Callable, Mapping

import mpmath
from mpmath import mpf

from ..errors import MalformedCertificate
from .gdp import exact_input, stable_value, to_mpf
from .verify import Recheck, needed_digits, register

__all__ = ["register_profile_recheck", "PROFILE_RECHECKS"]

#: mechanism name -> f(inputs) -> (eps -> mpf at the ambient mpmath precision)
ProfileRecheck = Callable[[Mapping[str, Any]], Callable[[Fraction], mpf]]
PROFILE_RECHECKS: dict[str, ProfileRecheck] = {}


def register_profile_recheck(name: str) -> Callable[[ProfileRecheck], ProfileRecheck]:
    def deco(fn: ProfileRecheck) -> ProfileRecheck:
        PROFILE_RECHECKS[name] = fn
        return fn

    return deco


@register("dp.profile")
def recheck_profile(inputs: Mapping[str, Any], result: Mapping[str, Any]) -> Recheck:
    name = inputs.get("mechanism")
    if name not in PROFILE_RECHECKS:
        raise MalformedCertificate(f"no independent re-check for mechanism {name!r}")
    eps = exact_input(inputs, "eps")
    profile = PROFILE_RECHECKS[name](inputs)
    digits = needed_digits(result)
    return stable_value(lambda dps: _at(profile, eps, dps), digits)


def _at(profile: Callable[[Fraction], mpf], eps: Fraction, dps: int) -> mpf:
    with mpmath.workdps(dps):
        return profile(eps)


@register_profile_recheck("gaussian")
def _gaussian(inputs: Mapping[str, Any]) -> Callable[[Fraction], mpf]:
    if "mu" in inputs:
        mu = exact_input(inputs, "mu")
    else:
        sens = exact_input(inputs, "sensitivity") if "sensitivity" in inputs else Fraction(1)
        mu = sens / exact_input(inputs, "noise_multiplier")

    def f(eps: Fraction) -> mpf:
        # hockey-stick of N(0,1) vs N(mu,1) written with erfc (the arb route uses
        # the same closed form through erfc of its own; here: ncdf via mpmath)
        m, e = to_mpf(mu), to_mpf(eps)
        return mpmath.ncdf(-e / m + m / 2) - mpmath.exp(e) * mpmath.ncdf(-e / m - m / 2)

    return f


def _four_output(eps0: Fraction, delta0: Fraction) -> Callable[[Fraction], mpf]:
    """Profile of GDPT's 4-output mechanism, summed output by output
    (sum_i (p_i - e^eps q_i)_+), not from the closed form."""

    def f(eps: Fraction) -> mpf:
        e0 = mpmath.exp(to_mpf(eps0))
        d0 = to_mpf(delta0)
        P = [d0, (1 - d0) * e0 / (1 + e0), (1 - d0) / (1 + e0), mpf(0)]
        Q = [mpf(0), (1 - d0) / (1 + e0), (1 - d0) * e0 / (1 + e0), d0]
        ee = mpmath.exp(to_mpf(eps))
        return mpmath.fsum(max(p - ee * q, 0) for p, q in zip(P, Q))

    return f


@register_profile_recheck("approx")
def _approx(inputs: Mapping[str, Any]) -> Callable[[Fraction], mpf]:
    return _four_output(exact_input(inputs, "eps0"), exact_input(inputs, "delta0"))


@register_profile_recheck("pure")
def _pure(inputs: Mapping[str, Any]) -> Callable[[Fraction], mpf]:
    return _four_output(exact_input(inputs, "eps0"), Fraction(0))
