"""The rigorous core of the re-check: enclosures on MPFR with directed rounding.

Every number here is a closed interval ``(lo, hi)`` of two ``gmpy2.mpfr``
values with lo <= true value <= hi, produced by MPFR in the rounding mode that
keeps it so: the lower end in ``RoundDown`` (toward -inf), the upper end in
``RoundUp`` (toward +inf). MPFR rounds every operation and every elementary
function it provides (exp, expm1, log, log1p, erfc, sqrt, ...) *correctly* in
the chosen mode (MPFR manual, section 4.4 "Rounding Modes": "the result is the
exact result rounded in the given direction"), so

* a monotone function is enclosed by evaluating it at the interval's ends,
  each in its own direction (:meth:`Arith.exp`, :meth:`Arith.erfc`, ...);
* an arithmetic operation takes the min / max over the ends' combinations,
  each rounded outward (:meth:`Arith.mul`, :meth:`Arith.div`);
* a sum of many terms is MPFR's ``mpfr_sum`` (one correct rounding of the
  exact sum) of the lower ends down and of the upper ends up
  (:meth:`Arith.fsum`).

The error bound of every enclosure is therefore its own width: nothing is
estimated, and underflow or overflow only widens (RoundDown underflows to 0,
RoundUp to the least positive number; overflow goes to the largest number or
inf in the safe direction). An accept decided on these intervals is a proof by
a second implementation (MPFR through gmpy2), independent of the arb code.

This module also holds :data:`STEPS`, the classification of every kind's
re-check steps into proofs (directed rounding or exact integers / rationals)
and estimates (mpmath quadrature, mpmath's non-directed evaluation, float
searches), for ``verify --explain``.
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from typing import Iterable, Union

import gmpy2
import mpmath
from gmpy2 import mpfr, mpq, mpz

__all__ = ["Arith", "arith", "Iv", "to_fraction", "to_mpf", "floor_int", "ceil_int",
           "STEPS", "PROOF", "ESTIMATE", "accept_rests_on", "explain_steps"]

Iv = tuple  # (lo: mpfr, hi: mpfr)
Exact = Union[int, Fraction]

# MPFR's exponent range is limited per context; the widest range keeps tiny tails
# (e^-10^6 and below) representable instead of underflowing early
_EMIN, _EMAX = gmpy2.get_emin_min(), gmpy2.get_emax_max()


class Arith:
    """Interval arithmetic at ``prec`` bits with MPFR's directed rounding.

    ``dn`` rounds toward -inf, ``up`` toward +inf; every method returns an
    enclosure of the exact result of its exact (interval) arguments."""

    __slots__ = ("prec", "dn", "up", "_rsqrt2", "_log2")

    def __init__(self, prec: int) -> None:
        self.prec = int(prec)
        self.dn = gmpy2.context(precision=self.prec, round=gmpy2.RoundDown, emin=_EMIN, emax=_EMAX)
        self.up = gmpy2.context(precision=self.prec, round=gmpy2.RoundUp, emin=_EMIN, emax=_EMAX)
        self._rsqrt2 = (self.dn.rec_sqrt(mpfr(2)), self.up.rec_sqrt(mpfr(2)))
        self._log2 = (self.dn.const_log2(), self.up.const_log2())

    # ---------------------------------------------------------------- construction

    def q(self, x: Exact) -> Iv:
        """The exact rational (or integer) ``x``, rounded outward (one correct rounding
        each way: ``mpfr_set_q``)."""
        if isinstance(x, int):
            v = mpq(x)
        else:
            v = mpq(x.numerator, x.denominator)
        return (mpfr(v, self.prec, self.dn), mpfr(v, self.prec, self.up))

    def point(self, x: mpfr) -> Iv:
        """An mpfr value widened to this precision outward (exact when it fits)."""
        return (mpfr(x, self.prec, self.dn), mpfr(x, self.prec, self.up))

    def dyadic(self, i: int, m: int) -> Iv:
        """i 2^-m (a grid point), exact unless i has more than ``prec`` bits."""
        return (self.dn.mul_2exp(mpfr(mpz(i), self.prec, self.dn), -m),
                self.up.mul_2exp(mpfr(mpz(i), self.prec, self.up), -m))

    # ---------------------------------------------------------------- arithmetic

    def add(self, a: Iv, b: Iv) -> Iv:
        return (self.dn.add(a[0], b[0]), self.up.add(a[1], b[1]))

    def sub(self, a: Iv, b: Iv) -> Iv:
        return (self.dn.sub(a[0], b[1]), self.up.sub(a[1], b[0]))

    def neg(self, a: Iv) -> Iv:
        # not Python's unary minus: that rounds to the global context's 53 bits
        return (self.dn.minus(a[1]), self.up.minus(a[0]))

    def mul(self, a: Iv, b: Iv) -> Iv:
        if a[0] >= 0 and b[0] >= 0:  # the common case: masses, tails, exponentials
            return (self.dn.mul(a[0], b[0]), self.up.mul(a[1], b[1]))
        dn, up = self.dn, self.up
        lo = min(dn.mul(a[0], b[0]), dn.mul(a[0], b[1]), dn.mul(a[1], b[0]), dn.mul(a[1], b[1]))
        hi = max(up.mul(a[0], b[0]), up.mul(a[0], b[1]), up.mul(a[1], b[0]), up.mul(a[1], b[1]))
        return (lo, hi)

    def div(self, a: Iv, b: Iv) -> Iv:
        """a / b for an interval b that excludes 0 (else ZeroDivisionError: the caller
        must not divide by what it cannot bound away from zero)."""
        if not (b[0] > 0 or b[1] < 0):
            raise ZeroDivisionError("interval divisor contains 0")
        dn, up = self.dn, self.up
        if a[0] >= 0 and b[0] > 0:
            return (dn.div(a[0], b[1]), up.div(a[1], b[0]))
        lo = min(dn.div(a[0], b[0]), dn.div(a[0], b[1]), dn.div(a[1], b[0]), dn.div(a[1], b[1]))
        hi = max(up.div(a[0], b[0]), up.div(a[0], b[1]), up.div(a[1], b[0]), up.div(a[1], b[1]))
        return (lo, hi)

    def scale2(self, a: Iv, k: int) -> Iv:
        """a 2^k (exact unless the exponent range is left)."""
        return (self.dn.mul_2exp(a[0], k), self.up.mul_2exp(a[1], k))

    def fsum(self, terms: Iterable[Iv]) -> Iv:
        """The sum, each end one correct directed rounding of the exact sum of the
        ends (``mpfr_sum``)."""
        ts = list(terms)
        if not ts:
            return (mpfr(0), mpfr(0))
        return (self.dn.fsum([t[0] for t in ts]), self.up.fsum([t[1] for t in ts]))

    @staticmethod
    def hull(a: Iv, b: Iv) -> Iv:
        return (min(a[0], b[0]), max(a[1], b[1]))

    # ---------------------------------------------------------------- functions

    def exp(self, a: Iv) -> Iv:
        return (self.dn.exp(a[0]), self.up.exp(a[1]))

    def expm1(self, a: Iv) -> Iv:
        return (self.dn.expm1(a[0]), self.up.expm1(a[1]))

    def log(self, a: Iv) -> Iv:
        if not a[0] > 0:
            raise ValueError("log of an interval that reaches 0")
        return (self.dn.log(a[0]), self.up.log(a[1]))

    def log1p(self, a: Iv) -> Iv:
        if not a[0] > -1:
            raise ValueError("log1p of an interval that reaches -1")
        return (self.dn.log1p(a[0]), self.up.log1p(a[1]))

    def sqrt(self, a: Iv) -> Iv:
        if a[0] < 0:
            raise ValueError("sqrt of an interval that reaches below 0")
        return (self.dn.sqrt(a[0]), self.up.sqrt(a[1]))

    def erfc(self, a: Iv) -> Iv:
        """erfc is decreasing: the lower end at the upper argument."""
        return (self.dn.erfc(a[1]), self.up.erfc(a[0]))

    def ncdf(self, a: Iv) -> Iv:
        """Phi(x) = erfc(-x / sqrt 2) / 2 (increasing in x)."""
        t = self.mul(self.neg(a), self._rsqrt2)
        e = self.erfc(t)
        return (self.dn.mul_2exp(e[0], -1), self.up.mul_2exp(e[1], -1))

    def log2_const(self) -> Iv:
        return self._log2


@lru_cache(maxsize=64)
def arith(prec: int) -> Arith:
    """The (cached) :class:`Arith` of ``prec`` bits."""
    return Arith(prec)


def to_fraction(x: mpfr) -> Fraction:
    """The exact rational value of a finite mpfr."""
    n, d = x.as_integer_ratio()
    return Fraction(int(n), int(d))


def floor_int(x: mpfr) -> int:
    """floor(x) of a finite mpfr, exactly."""
    n, d = x.as_integer_ratio()
    return int(n // d)


def ceil_int(x: mpfr) -> int:
    """ceil(x) of a finite mpfr, exactly."""
    n, d = x.as_integer_ratio()
    return int(-((-n) // d))


def to_mpf(x: mpfr) -> "mpmath.mpf":
    """The mpfr's exact value as an mpmath number (no rounding: the mantissa is kept)."""
    if gmpy2.is_nan(x):
        raise ValueError("NaN")
    if gmpy2.is_infinite(x):
        return mpmath.inf if x > 0 else -mpmath.inf
    if x == 0:
        return mpmath.mpf(0)
    man, exp = x.as_mantissa_exp()
    return mpmath.mp.make_mpf(mpmath.libmp.from_man_exp(int(man), int(exp)))


# --------------------------------------------------------------------------- proof / estimate table

PROOF = "proof"
ESTIMATE = "estimate"

#: kind -> steps of its re-check, each (what, PROOF | ESTIMATE, on_accept_path). A step on
#: the accept path is one an accept depends on; an estimate there means the kind's accept
#: rests on an estimate (``tests/recheck/test_core.py`` lists the kinds where that is so
#: and fails once one of them is proved, so the list only shrinks). Steps off the accept
#: path only choose (grids, orders, brackets) or only refute.
STEPS: dict[str, list[tuple[str, str, bool]]] = {}


def _steps(kinds: Iterable[str], steps: list[tuple[str, str, bool]]) -> None:
    for k in kinds:
        STEPS[k] = steps


_PLD_STEPS = [
    ("per-step pair tails (Gaussian: erfc, expm1, log; Laplace: exp, log; finite pairs: sums) "
     "in MPFR with directed rounding", PROOF, True),
    ("connect-the-dots and bucket masses rounded outward to integer units 2^-K", PROOF, True),
    ("T-fold composition: exact integer products (Kronecker substitution on GMP integers)", PROOF, True),
    ("delta(eps) / eps(delta) read off the composed integers with directed exp, expm1, log", PROOF, True),
    ("grid, knot range and scale chosen from the recorded enclosure (untrusted hints)", ESTIMATE, False),
]
_steps(["pld.epsilon", "pld.delta", "pld.claim"], _PLD_STEPS)
_steps(["events.epsilon", "events.delta", "events.claim"], _PLD_STEPS + [
    ("leaves outside Gaussian / Laplace / finite pairs (mixture of Gaussians, discrete "
     "Laplace / Gaussian, zCDP, without-replacement maximum curve): mpmath, not directed",
     ESTIMATE, True),
])
_steps(["calibrate.bracket"], _PLD_STEPS + [
    ("without-replacement (Cor 32) pair: maximum of two Poisson curves decided in mpmath",
     ESTIMATE, True),
])
_steps(["oracle.rows"], [
    ("certified enclosure per row by the PLD route", PROOF, True),
    ("each accountant's reported number compared with the enclosure (exact decimals)", PROOF, True),
])
_steps(["rdp.epsilon"], [
    ("Gaussian + classic: closed form c + 2 sqrt(cL) in mpmath at two precisions", ESTIMATE, True),
    ("upper end: conversion at the recorded order; D_alpha by mpmath quadrature or binomial "
     "sums in mpmath (not directed)", ESTIMATE, True),
    ("lower end: cells of log(alpha - 1) evaluated in mpmath (not directed)", ESTIMATE, True),
])
_steps(["rdp.divergence", "rdp.to_dp_eps", "rdp.to_dp_delta", "rdp.abc_gain",
        "rdp.abc_extra_iterations"], [
    ("closed forms, sums or quadrature in mpmath (not directed)", ESTIMATE, True),
])
_steps(["gdp.delta", "gdp.mu", "gdp.eps", "gdp.thm4.5", "gdp.mills_scaled"], [
    ("delta_mu by mpmath.ncdf at two precisions (agreement test, not directed)", ESTIMATE, True),
])
_steps(["gdp.certify", "gdp.refinement_point", "gdp.tail_limit", "gdp.optimal_mu", "gdp.thm51",
        "gdp.clip_rectify"], [
    ("mpmath evaluation of the GDP transformation and its bounds (not directed)", ESTIMATE, True),
])
_steps(["composition.delta", "composition.eps", "dp.rr64", "dp.implies", "dp.sigma_refinement",
        "dp.profile", "finite.identity", "lt.residual", "lt.partial-transform"], [
    ("mpmath evaluation (exact rationals where the kind is combinatorial), not directed",
     ESTIMATE, True),
])


def accept_rests_on(kind: str) -> str:
    """PROOF when every step on ``kind``'s accept path is a proof, else ESTIMATE
    (also for a kind missing from :data:`STEPS`: unclassified is not proved)."""
    steps = STEPS.get(kind)
    if not steps:
        return ESTIMATE
    return PROOF if all(s == PROOF for _, s, on in steps if on) else ESTIMATE


def explain_steps(kind: str) -> str:
    """The lines ``verify --explain`` prints under a kind."""
    steps = STEPS.get(kind)
    if not steps:
        return "  steps: not classified (an accept of this kind is not a proof)"
    out = [f"  accept rests on: {accept_rests_on(kind)}"]
    for what, status, on in steps:
        tag = status if on else f"{status}, only chooses or refutes"
        out.append(f"  - [{tag}] {what}")
    return "\n".join(out)
