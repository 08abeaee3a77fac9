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

The classification of every kind's re-check steps into proofs and estimates
lives with the rest of the kind table, in :mod:`.kinds`.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache
from typing import Callable, Iterable, Union

import gmpy2
import mpmath
from gmpy2 import mpfr, mpq, mpz

from ..errors import CouldNotReprove
from .decimals import ExactPoint

__all__ = ["Arith", "arith", "pow2", "Iv", "to_fraction", "mpf_to_fraction", "mpfr_to_mpf", "floor_int",
           "ceil_int", "slot_ones", "round_slots"]

Iv = tuple  # (lo: mpfr, hi: mpfr)

#: |x| from which Phi(x) goes through the continued fraction instead of MPFR's erfc
CF_FROM = 5
_PHI_MAX = mpfr("0.4")  # > 1/sqrt(2 pi) = 0.3989...; as a binary number 0.4000000000000000222
#: |x| below which Phi(x) to absolute accuracy goes through Taylor expansions at anchors
TAYLOR_TO = 16
#: |x| below which Phi(x) to absolute accuracy may use the Taylor anchors beyond TAYLOR_TO (:meth:`Arith._far_abs`)
TAYLOR_ABS_TO = 48
#: log2(e) / 2 = 0.7213475... rounded down: Q(t) < 2^-(0.7213 t^2) for t >= 1 (:meth:`Arith._far_abs`)
_LOG2E_HALF_DN = mpfr("0.7213")
#: > log2(e) / 2 = 0.72134...: Q(t) >= 2^-(_RHO t^2 + 6.4) for 1 <= t < 16 (:meth:`Arith.ncdf_rel`)
_RHO = mpfr("0.7214")
#: > 2 / sqrt(pi) = 1.12837...: the steepest slope of erfc (:meth:`Arith.neg_ncdf_erfc`)
_TWO_RSQRT_PI = mpfr("1.1284")
Exact = Union[int, Fraction]

# MPFR's default exponent range (about 2^+-10^9) is kept: widening it to the maximum
# makes every operation 4x slower in gmpy2, and what underflows still rounds in the
# safe direction (RoundDown to 0, RoundUp to the least positive number)


class Arith:
    """Interval arithmetic at ``prec`` bits with MPFR's directed rounding.

    ``dn`` rounds toward -inf, ``up`` toward +inf; every method returns an
    enclosure of the exact result of its exact (interval) arguments."""

    __slots__ = ("prec", "dn", "up", "_rsqrt2", "_log2", "_sqrt2pi")

    def __init__(self, prec: int) -> None:
        self.prec = int(prec)
        self.dn = gmpy2.context(precision=self.prec, round=gmpy2.RoundDown)
        self.up = gmpy2.context(precision=self.prec, round=gmpy2.RoundUp)
        self._rsqrt2 = (self.dn.rec_sqrt(mpfr(2)), self.up.rec_sqrt(mpfr(2)))
        self._log2 = (self.dn.const_log2(), self.up.const_log2())
        self._sqrt2pi = (self.dn.sqrt(self.dn.mul_2exp(self.dn.const_pi(), 1)),
                         self.up.sqrt(self.up.mul_2exp(self.up.const_pi(), 1)))

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
        # one directed division each way (gmpy2's mul_2exp and mpfr(mpz, prec, ctx)
        # are several times slower than a context division by an integer)
        two_m = _pow2(m)
        return (self.dn.div(mpz(i), two_m), self.up.div(mpz(i), two_m))

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
        """Phi(x), the standard normal cdf (increasing in x): the lower end is a lower
        bound of Phi(a.lo), the upper end an upper bound of Phi(a.hi).

        For |x| < :data:`CF_FROM` it is erfc(-x / sqrt 2) / 2 by MPFR; beyond, MPFR's
        erfc is slow (about 1 ms at 200 bits for 4 < x / sqrt 2 < 14, where the
        re-check evaluates most of its tails) and the Mills ratio's continued
        fraction is used instead (:meth:`upper_tail`)."""
        return (self._ncdf_point(a[0])[0], self._ncdf_point(a[1])[1])

    def _q_neg(self, x: mpfr, q: Callable[[mpfr], Iv]) -> Iv:
        """Q(-x) = Phi(x) from ``q``, an enclosure of Q at a point (Q decreases). -x is exact where x
        fits this precision (every caller forms its arguments so); otherwise its two roundings bound
        it, the lower end of Q from the one rounded up (ref51b: a 53-bit point at 40 bits gave a lower
        end of Phi above the truth, through a negation rounded down)."""
        a, b = self.dn.minus(x), self.up.minus(x)
        if a == b:
            return q(a)
        return (q(b)[0], q(a)[1])

    def _ncdf_point(self, x: mpfr) -> Iv:
        if x <= -CF_FROM:
            return self._q_neg(x, self.upper_tail)
        if x >= CF_FROM:
            t = self.upper_tail(x)
            return (self.dn.sub(1, t[1]), self.up.sub(1, t[0]))
        t = self.mul((self.dn.minus(x), self.up.minus(x)), self._rsqrt2)
        e = self.erfc(t)
        return (self.dn.mul_2exp(e[0], -1), self.up.mul_2exp(e[1], -1))

    def ncdf_rel(self, a: Iv) -> Iv:
        """Phi on an interval, as :meth:`ncdf` (each end to relative accuracy about
        2^-prec), through the Taylor anchors at a raised precision instead of MPFR's erfc
        and the continued fraction (each 10-100 times slower at the precisions the order
        series use). For x <= 0, Phi(x) = Q(-x) >= phi(t) t / (1 + t^2) with t = -x >= 1
        (Gordon's inequality; Q(t) >= Q(1) > 2^-3 below 1), and for t < 16
        phi(t) t / (1 + t^2) >= 2^-(0.7214 t^2 + 6.4) (log2(e) / 2 < 0.7214,
        sqrt(2 pi) < 2^1.33, t / (1 + t^2) >= 1 / (2t) > 2^-5): absolute accuracy
        2^-(prec + ceil(0.7214 t^2) + 8) is relative 2^-prec. For x > 0, Phi >= 1/2 and
        absolute accuracy 2^-(prec + 2) is enough. The result is the Taylor enclosure
        rounded outward to this precision (an enclosure whatever the accuracy: the
        accuracy is only its width). Beyond |x| = 16 or 512 bits: :meth:`ncdf`."""
        return (self._ncdf_rel_point(a[0])[0], self._ncdf_rel_point(a[1])[1])

    def _ncdf_rel_point(self, x: mpfr) -> Iv:
        if not (-TAYLOR_TO < x < TAYLOR_TO):
            return self._ncdf_point(x)
        if x > 0:
            need = self.prec + 2
        else:
            t2 = self.up.square(x)
            need = self.prec + 8 + int(self.up.mul(t2, _RHO)) + 1
        if need > 512:
            return self._ncdf_point(x)
        B = arith(-(-need // 32) * 32)  # a few distinct precisions: cached Ariths
        dn, up = self.dn, self.up
        if x > 0:
            t = B._taylor_q(x)
            return (dn.sub(1, t[1]), up.sub(1, t[0]))
        t = B._q_neg(x, B._taylor_q)
        return (dn.add(t[0], 0), up.add(t[1], 0))  # rounded outward to this precision

    def ncdf_abs(self, a: Iv) -> Iv:
        """Phi on an interval to *absolute* accuracy about 2^-prec (what a mass rounded
        to units needs), much faster than :meth:`ncdf` where most tails are evaluated:
        a Taylor expansion around the nearest anchor j/16 (:meth:`_taylor_q`). One
        evaluation at the lower end; the upper end adds (hi - lo) / sqrt(2 pi) < 0.4 (hi - lo)
        (the mean value theorem: Phi' <= 1 / sqrt(2 pi))."""
        lo, hi = self._ncdf_abs_point(a[0])
        if a[1] == a[0]:
            return (lo, hi)
        w = self.up.mul(self.up.sub(a[1], a[0]), _PHI_MAX)
        return (lo, min(self.up.add(hi, w), mpfr(1)))

    def _ncdf_abs_point(self, x: mpfr) -> Iv:
        if not (-TAYLOR_TO < x < TAYLOR_TO):
            return self._far_abs(x)
        if x <= 0:
            return self._q_neg(x, self._taylor_q)
        t = self._taylor_q(x)
        return (self.dn.sub(1, t[1]), self.up.sub(1, t[0]))

    def _far_abs(self, x: mpfr) -> Iv:
        """Phi(x) for |x| >= TAYLOR_TO to absolute accuracy about 2^-prec (:meth:`ncdf_abs`), t = |x|.
        Q(t) <= phi(t) / t < 2^-s with s = floor(0.7213 t^2) (log2(e) / 2 = 0.72135..., t sqrt(2 pi) > 1):

        * s >= prec + 2: Q(t) in [0, 2^-(prec+2)], already that accurate;
        * t < TAYLOR_ABS_TO: the Taylor anchors (:meth:`_taylor_q`, absolute 2^-(prec+2) for every t:
          its remainder bound holds at any anchor, and far anchors need few terms);
        * beyond: Q = phi M, the Mills ratio at prec - s + 8 bits (relative 2^-(prec - s + 2) is
          absolute 2^-prec).

        The continued fraction at full precision needs about (0.75 prec / t)^2 / 2 terms: at the 832
        bits of a delta near 1e-222 and t = 16 .. 34 it was most of the re-check's time. Any branch
        gives an enclosure; the choice only sets the width and the cost. Rounded outward to this
        precision."""
        dn, up = self.dn, self.up
        if x < 0 and dn.minus(x) != up.minus(x):  # x finer than this precision (see _q_neg)
            a, b = dn.minus(x), up.minus(x)  # -b <= x <= -a, each exact here; Phi increases
            return (self._far_abs(dn.minus(b))[0], self._far_abs(dn.minus(a))[1])
        t = dn.minus(x) if x < 0 else x
        s = int(dn.mul(dn.square(t), _LOG2E_HALF_DN))
        if s >= self.prec + 2:
            # 2^-(prec+2) >= 2^-s is all this branch promises; s itself passes a C long (and
            # mul_2exp raises OverflowError) once t > 3.6e9, a noise multiplier near 1e10 (adv41 N1)
            q = (mpfr(0), up.mul_2exp(mpfr(1), -(self.prec + 2)))
        elif t < TAYLOR_ABS_TO:
            q = self._taylor_q(t)
        else:
            need = self.prec - s + 8
            q = arith(max(64, -(-need // 32) * 32)).upper_tail(t)  # a few distinct precisions: cached
        if x < 0:
            return (dn.add(q[0], 0), up.add(q[1], 0))
        return (dn.sub(1, q[1]), up.sub(1, q[0]))

    def _taylor_q(self, x: mpfr) -> Iv:
        """Q(x) = 1 - Phi(x), 0 <= x < TAYLOR_ABS_TO (anchors beyond TAYLOR_TO only for absolute accuracy), as
        Q(a + d) = Q(a) - phi(a) sum_{k=1..n} (-1)^(k-1) He_{k-1}(a) d^k / k! + R
        around the anchor a = j/16 nearest x (|d| <= 1/32), since
        Q^(k)(x) = -(-1)^(k-1) He_{k-1}(x) phi(x) (He: probabilists' Hermite
        polynomials). Remainder (Taylor, Lagrange form, at some xi between a and x) with
        Cramer's inequality |He_n(x)| <= 1.0866 sqrt(n!) e^{x^2/4} (DLMF 18.14.9 for H_n,
        with He_n(x) = 2^{-n/2} H_n(x / sqrt 2)):
        |Q^(n+1)(xi)| <= 1.0866 sqrt(n!) e^{-xi^2/4} / sqrt(2 pi) < sqrt(n!) e^{-xi^2/4} / 2,
        so |R| <= sqrt(n!) g_j |d|^(n+1) / (2 (n+1)!) with g_j >= e^{-xi^2/4} for every
        xi within 1/32 of the anchor (:meth:`_anchor`), and n chosen per anchor so that
        this is below 2^-(prec+2): far anchors need fewer terms.

        The polynomial is evaluated by one Horner chain on integers in fixed point 2^-P,
        P >= prec + 8, with the coefficients' lower ends C_k (c_k 2^P in [C_k, C_k + w])
        and every product floored. Its error against the exact Horner values obeys
        |e_k| <= |e_{k+1}| |d| + 1 + w (one floor, one coefficient), so with |d| <= 1/32
        every |e_k| <= (1 + w) 32/31 and the last product (no coefficient added) leaves
        |e_0| <= (1 + w)/31 + 1 <= w + 2 units of 2^-P: the enclosure is the chain's value
        widened by w + 2 units and by the remainder (one chain instead of a lower and an
        upper one: half the work)."""
        # the nearest anchor j/16, in exact integers (so that |d| <= 1/32 holds exactly:
        # the remainder bound assumes it); d = x - j/16 exactly, as D / 2^E
        n, den = x.as_integer_ratio()  # GMP integers, den a power of two: the chain stays in mpz
        j = int((32 * n + den) // (2 * den))
        Qa, coeffs, err, two_p = _ANCHORS.get((self.prec, j)) or _anchor_at(self.prec, j)
        E = den.bit_length() + 3  # den = 2^(E - 4)
        D = n * 16 - j * den
        it = iter(coeffs)  # C_n, ..., C_1 (mpz: a third faster than Python ints at these sizes)
        acc = next(it)
        for c in it:
            acc = ((acc * D) >> E) + c
        acc = (acc * D) >> E
        dn, up = self.dn, self.up
        s_lo = dn.div(acc - err, two_p)  # one directed rounding of each end times 2^-P
        s_hi = up.div(acc + err, two_p)
        return (dn.add(Qa[0], s_lo), up.add(Qa[1], s_hi))

    def _anchor(self, j: int):
        """(Q(a) enclosed, the coefficients' lower ends C_1..C_n in units 2^-P, their width w
        in units, P, G) at a = j/16, n the degree this precision needs (:func:`_degree`).

        g_j = 2^-G with G = floor((2j - 1)^2 / 4096 * 1.4426) (j >= 1): every xi within
        1/32 of a has xi >= (2j - 1)/32 > 0, so e^{-xi^2/4} <= e^{-((2j-1)/32)^2/4}
        = 2^{-((2j-1)/32)^2 log2(e) / 4} <= 2^-G, as log2(e) = 1.44269... > 1.4426; j = 0:
        G = 0 (no factor). Exact integers throughout.

        The coefficient of d^k is c_k = -phi(a) (-1)^(k-1) He_{k-1}(a) / k! = phi(a) N_k / D_k with
        the exact integers h_i = 16^i He_i(j/16) (h_0 = 1, h_1 = j, h_{i+1} = j h_i - 256 i h_{i-1},
        from He_{i+1}(a) = a He_i(a) - i He_{i-1}(a), DLMF 18.9.1), N_k = (-1)^k h_{k-1} and
        D_k = 16^(k-1) k!. With phi(a) 2^P in [F0, F1] (MPFR's exp in directed rounding at P + 16
        bits, floored and ceiled), c_k 2^P lies between F0 N_k / D_k and F1 N_k / D_k: C_k is the
        floor of the smaller (exact integer division), its width the ceiling of the larger minus
        C_k. One exp and one erfc an anchor, the rest integers (the interval Hermite recursion
        and its n divisions by k! were most of an anchor's cost, and anchors most of a first
        re-check's tails: 310 of them, 0.4 of 0.77 s, on the events-claim fixture)."""
        P = self.prec + 8
        G = int(Fraction((2 * j - 1) ** 2 * 14426, 4096 * 10000)) if j >= 1 else 0
        n, _ = _degree(self.prec, G, P)
        hs, Ds = [1, j], [1]  # h_0, h_1, ...; D_1, D_2, ...
        for k in range(1, n):
            hs.append(j * hs[k] - 256 * k * hs[k - 1])
            Ds.append(Ds[-1] * 16 * (k + 1))
        # phi(a) 2^(P + S): S bits more than the coefficients' unit, so that one unit of phi's
        # floor or ceiling, times |N_k| / D_k (up to 2^50 at a = 48, where phi is tiny), stays
        # below a quarter unit of 2^-P; MPFR's exp at P + S + 16 bits keeps its own rounding as small
        S = max(0, max(abs(hs[k - 1]).bit_length() - Ds[k - 1].bit_length() for k in range(1, n + 1)) + 3)
        B = arith(P + S + 16)
        a = mpfr(j) / 16  # exact: j has few bits
        # Q(a): from a = 8 on by the continued fraction (an enclosure, :meth:`upper_tail`), where
        # MPFR's erfc is the slower (measured at 128 and 192 bits: 0.14-1.2 ms against 0.03-0.16 ms)
        Qa = self.upper_tail(a) if j >= _CF_ANCHOR_J else self.neg_ncdf_erfc(a)
        h = (B.dn.mul_2exp(B.dn.square(a), -1), B.up.mul_2exp(B.up.square(a), -1))
        # phi(a) = e^{-a^2/2} / sqrt(2 pi), each end in its own direction, times 2^(P + S) (exact)
        F0 = floor_int(B.dn.mul_2exp(B.dn.div(B.dn.exp(B.dn.minus(h[1])), B._sqrt2pi[1]), P + S))
        F1 = ceil_int(B.up.mul_2exp(B.up.div(B.up.exp(B.up.minus(h[0])), B._sqrt2pi[0]), P + S))
        clo, w = [], 0
        for k in range(1, n + 1):
            N = hs[k - 1] if k % 2 == 0 else -hs[k - 1]
            ends = (F0 * N, F1 * N)
            D = Ds[k - 1] << S
            lo_k = min(ends) // D
            clo.append(lo_k)
            w = max(w, -((-max(ends)) // D) - lo_k)
        return (Qa, clo, w, P, G)

    def neg_ncdf_erfc(self, t: mpfr) -> Iv:
        """Q(t) = erfc(t / sqrt 2) / 2 at a point t >= 0 (an anchor), by one MPFR erfc instead of two:
        with [x0, x1] enclosing t / sqrt 2, u = erfc(x0) rounded up is the upper end, and
        erfc(x0) > next_below(u) (u is the correctly rounded-up value), while erfc falls
        by at most (2 / sqrt(pi)) e^{-x0^2} (x1 - x0) < 1.1284 e^{-x0^2} (x1 - x0) over
        [x0, x1], 0 <= x0 (its derivative is -(2 / sqrt(pi)) e^{-x^2}), so next_below(u)
        minus that, rounded down, is below erfc(x1) <= erfc(t / sqrt 2)."""
        dn, up = self.dn, self.up
        x0, x1 = self.mul((t, t), self._rsqrt2)
        u = up.erfc(x0)
        slope = up.mul(up.exp(up.minus(dn.square(x0))), _TWO_RSQRT_PI)  # e^{-x0^2} rounded up
        lo = dn.sub(gmpy2.next_below(u), up.mul(up.sub(x1, x0), slope))
        return (self.dn.mul_2exp(max(lo, mpfr(0)), -1), self.up.mul_2exp(u, -1))

    def upper_tail(self, t: mpfr) -> Iv:
        """Q(t) = 1 - Phi(t) for a point t >= 1, as phi(t) M(t), M the Mills ratio.

        M(t) = 1/z_0 with z_k = t + (k + 1)/z_{k+1}: Laplace's continued fraction
        (Abramowitz & Stegun 26.2.14; it converges for t > 0, all its elements
        positive). Every true tail z_k exceeds t (it is t plus a positive number), so
        starting from z_N in [t, +inf] (N/z_N in [0, N/t]) and running the recursion
        backward in interval arithmetic encloses z_0 without any truncation estimate:
        the truncation shows as width, and N is doubled until the width is a few
        units of the working precision (at most 2^16 levels; beyond, the enclosure is
        returned as wide as it is, still sound)."""
        if t < 1:
            raise ValueError("upper_tail needs t >= 1")
        dn, up = self.dn, self.up
        # phi(t) = e^{-t^2/2} / sqrt(2 pi)
        h = (dn.mul_2exp(dn.square(t), -1), up.mul_2exp(up.square(t), -1))  # [lo, hi] of t^2 / 2
        phi = (dn.div(dn.exp(dn.minus(h[1])), self._sqrt2pi[1]), up.div(up.exp(up.minus(h[0])), self._sqrt2pi[0]))
        m = self.mills(t)
        return (dn.mul(phi[0], m[0]), up.mul(phi[1], m[1]))

    def mills(self, t: mpfr) -> Iv:
        """The Mills ratio M(t) = Q(t) / phi(t) at a point t >= 1, enclosed by the
        backward recursion of Laplace's continued fraction described in
        :meth:`upper_tail` (no truncation estimate: the truncation shows as width)."""
        if t < 1:
            raise ValueError("mills needs t >= 1")
        dn, up = self.dn, self.up
        n = int(((self.prec * 0.75) / float(t)) ** 2 / 2) + 8
        target = self.prec - 6
        while True:
            zlo, zhi = t, up.add(t, up.div(n, t))  # z_{n-1}: t + n / z_n with z_n in [t, inf]
            for k in range(n - 1, 0, -1):  # z_{k-1} = t + k / z_k
                zlo, zhi = dn.add(t, dn.div(k, zhi)), up.add(t, up.div(k, zlo))
            m = (dn.div(1, zhi), up.div(1, zlo))
            if n >= 1 << 16 or up.sub(m[1], m[0]) <= dn.mul_2exp(m[0], -target):
                break
            n *= 2
        return m

    def log2_const(self) -> Iv:
        return self._log2


#: the first anchor j/16 of :meth:`Arith._taylor_q` whose Q(a) comes from the continued fraction (a = 8)
_CF_ANCHOR_J = 128
#: the anchors of :meth:`Arith._taylor_q`, shared by every precision of one 64-bit band
_ANCHORS: dict = {}


def _degree(prec: int, G: int, P: int) -> tuple[int, int]:
    """(n, rem): the least degree n with sqrt(n!) 2^-G (1/32)^(n+1) / (2 (n+1)!) <= 2^-(prec+2)
    (the Taylor remainder bound of :meth:`Arith._taylor_q`), and that bound in units 2^-P
    rounded up, in exact integers: bound^2 = n! / (4 (n+1)!^2 32^(2n+2) 2^(2G))."""
    n, t2 = 1, 1 << (2 * prec + 4)  # target^2, target = 2^(prec + 2)
    f, f1, p = 1, 2, 1 << 20  # n!, (n + 1)!, 32^(2n + 2), kept from one n to the next
    while f * t2 > (4 * f1 * f1 * p) << (2 * G):
        n += 1
        f, f1, p = f1, f1 * (n + 1), p << 10
    rem = -((-(math.isqrt(f) + 1) << P) // ((2 * f1 << (5 * (n + 1))) << G)) + 1
    return n, rem


def _anchor_at(prec: int, j: int):
    """(Q(a), C_n..C_1, error bound in units 2^-P, 2^P) of the anchor a = j/16 for a Taylor
    evaluation at ``prec`` bits. The anchor is computed once at the precision rounded up
    to a multiple of 64 and shared by every precision of that band (the grids of one
    re-check differ by a few bits; an anchor costs an MPFR erfc and the Hermite
    recursion); an evaluation at ``prec`` then uses only the degree ``prec`` needs, with
    that degree's remainder (the coefficients are the same, the Taylor polynomial is
    truncated earlier). More bits than asked are sound: the anchor's data are enclosures
    at their own fixed point 2^-P, and the evaluation rounds its result outward to the
    caller's precision. The error bound is the remainder plus the Horner chain's w + 2."""
    got = _ANCHORS.get((prec, j))
    if got is not None:
        return got
    band = -(-prec // 64) * 64
    base = _ANCHORS.get((-band, j))
    if base is None:
        if len(_ANCHORS) > 16384:  # bounded memory: anchors are cheap to recompute
            _ANCHORS.clear()
        base = _ANCHORS[(-band, j)] = arith(band)._anchor(j)
    Qa, clo, w, P, G = base
    n, rem = _degree(prec, G, P)
    # the coefficients highest first, as GMP integers (the Horner chain's order and type)
    got = _ANCHORS[(prec, j)] = (Qa, tuple(mpz(c) for c in reversed(clo[:n])), rem + w + 2, _pow2(P))
    return got


@lru_cache(maxsize=256)
def _pow2(k: int) -> mpz:
    """2^k as a GMP integer (cached): multiplying by it scales an mpfr exactly."""
    return mpz(1) << k


pow2 = _pow2


# --------------------------------------------------------------------------- packed products
# A sequence of nonnegative integers c_0..c_{n-1} is packed as sum_i c_i 2^(S i) (slots of S bits);
# the product of two packed integers is the packed convolution as long as no exact coefficient
# reaches 2^S (nonnegative coefficients: each is at most the product of the factors' totals, which
# the callers check), so one GMP multiplication is the whole exact product (Kronecker substitution).


#: shapes of at most this many bits are remembered by :func:`slot_ones`; larger ones are built afresh
_SLOT_ONES_CACHED_BITS = 1 << 23


@lru_cache(maxsize=16)
def _slot_ones_cached(n: int, s: int) -> mpz:
    return gmpy2.pack([1] * n, s) if n else mpz(0)


def slot_ones(n: int, s: int) -> mpz:
    """sum_{i < n} 2^(s i): the packed sequence with every coefficient 1. Only shapes of up to
    :data:`_SLOT_ONES_CACHED_BITS` bits are remembered: sixteen of the largest shapes a PLD power
    meets (millions of slots of 180 bits, each shape met about once) held gigabytes (delta(1.5) at
    sigma 1.1, q 0.01, T 1000: 1.26 GB peak, 0.80 without them, the same CPU); building one afresh
    is a small part of the product it rounds."""
    if n * s > _SLOT_ONES_CACHED_BITS:
        return gmpy2.pack([1] * n, s) if n else mpz(0)
    return _slot_ones_cached(n, s)


def round_slots(z: mpz, n: int, u: int, s: int, up: bool) -> mpz:
    """The packed sequence z (n slots of s bits, each coefficient below 2^s - 2^u: the caller's
    check) with every coefficient divided by 2^u and rounded up (``up``) or down, slots beyond n
    dropped, all on the packed integer: adding 2^u - 1 to every slot (up) cannot carry into the
    next one, shifting right by u bits moves each slot's quotient to the slot's bottom with the
    next slot's low u bits above it, and masking each slot to its low s - u bits keeps
    floor(c_i / 2^u), or floor((c_i + 2^u - 1) / 2^u) = ceil(c_i / 2^u), in every slot, with no
    per-coefficient Python work."""
    ones = slot_ones(n, s)
    z = gmpy2.f_mod_2exp(z, s * n)
    if up:
        z += ones * ((1 << u) - 1)
    return (z >> u) & (ones * ((1 << (s - u)) - 1))


@lru_cache(maxsize=64)
def arith(prec: int) -> Arith:
    """The (cached) :class:`Arith` of ``prec`` bits."""
    return Arith(prec)


def to_fraction(x: mpfr) -> Fraction:
    """The exact rational value of a finite mpfr."""
    n, d = x.as_integer_ratio()
    return Fraction(int(n), int(d))


def mpf_to_fraction(x: "mpmath.mpf") -> Fraction:
    """The exact rational value of a finite mpf: its own mantissa (an mpf is not rounded
    to the working precision first) with its sign (``man_exp`` gives |mantissa|)."""
    if not isinstance(x, mpmath.mpf):
        x = mpmath.mpf(x)
    sign, man, exp, _ = x._mpf_
    if not man and exp:  # mpmath's special values (inf, nan) have a zero mantissa
        raise CouldNotReprove("a recorded number is not finite")
    if man and abs(int(exp)) > 10**6:  # 2^(10^6) is ~ 10^301030: beyond every quantity here
        raise CouldNotReprove(f"a recorded number of binary exponent {int(exp)} is beyond the second route's range")
    v = Fraction(int(man)) * (Fraction(2) ** int(exp)) if man else Fraction(0)
    return -v if sign else v


def floor_int(x: mpfr) -> int:
    """floor(x) of a finite mpfr, exactly."""
    n, d = x.as_integer_ratio()
    return int(n // d)


def ceil_int(x: mpfr) -> int:
    """ceil(x) of a finite mpfr, exactly."""
    n, d = x.as_integer_ratio()
    return int(-((-n) // d))


def mpfr_to_mpf(x: mpfr) -> "mpmath.mpf":
    """The mpfr's exact value as an mpmath number (no rounding: the mantissa is kept)."""
    if gmpy2.is_nan(x):
        raise ValueError("NaN")
    if gmpy2.is_infinite(x):
        return mpmath.inf if x > 0 else -mpmath.inf
    if x == 0:
        return mpmath.mpf(0)
    man, exp = x.as_mantissa_exp()
    return mpmath.mp.make_mpf(mpmath.libmp.from_man_exp(int(man), int(exp)))


def exact_enclosure(x: Exact) -> "tuple[mpmath.mpf, mpmath.mpf]":
    """An exact rational rounded outward once at 512 bits (MPFR's mpfr_set_q in each
    direction): far inside a recorded enclosure read at 60 digits, and an enclosure,
    not a nearest rounding (a dyadic x stays a point)."""
    lo, hi = arith(512).q(x)
    return mpfr_to_mpf(lo), mpfr_to_mpf(hi)


def exact_point(x: Exact) -> ExactPoint:
    """:func:`exact_enclosure` of x, tagged with x itself: the acceptance rule then compares x
    with the recorded decimals exactly (:class:`.decimals.ExactPoint`)."""
    p = ExactPoint(exact_enclosure(x))
    p.exact = Fraction(x)
    return p
