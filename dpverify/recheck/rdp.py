"""Second route for the Renyi-DP quantities: MPFR directed rounding (gmpy2) and exact rationals.

Shares no code with :mod:`dpverify.rdp`. Every accept rests on an enclosure (:mod:`.core`):

* the cumulant K(alpha) = log E_Q[(dP/dQ)^alpha] = (alpha - 1) D_alpha of one step
  (:class:`_Mech`): the Gaussian's exact rational alpha (alpha - 1) mu^2 / 2 (Mironov 2017
  Prop 7); Laplace, randomized response and pure eps0 by their defining integrals or sums in
  closed form; the Poisson-subsampled Gaussian at an integer order by the finite binomial sum
  (Mironov, Talwar, Zhang 2019 Sec 3.2: exact binomials, directed exp / expm1) and at a
  fractional order by their two binomial series (Sec 3.3) with a proved truncation bound
  (:func:`_ssg_series`);
* fixed-order conversions (``rdp.to_dp_*``): classic and Balle by their closed forms; ABC
  Thm 3 (optimal) through an enclosure of gamma_alpha^eps(delta) (:func:`_gamma_iv`: any p
  bounds the minimum over p from above, the convexity of S in p from below) and a bracket of
  the root proved at its two ends;
* ``rdp.epsilon``, the infimum over every real alpha > 1: the upper end is the conversion at
  one order (the recorded alpha*, a hint), the lower end is proved on cells of log2(alpha - 1)
  (:func:`_prove_inf_at_least`); an order whose conversion is proved below the recorded lower
  end refutes it;
* ABC Fig. 2 (``rdp.abc_*``): the same cells on the Gaussian curve, restricted to
  alpha <= 1/delta (ABC Lemma 2's eps_0), and exact integer arithmetic for the counts.

The mpmath helper only proposes: :func:`_golden` places the orders and p at which this
module and the zCDP leaf of the events route prove their bounds. Nothing accepts on it.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache
from typing import Any, Callable, Mapping, Optional

import gmpy2
import mpmath
from gmpy2 import mpfr
from mpmath import mpf

from ..certificate.format import MAX_SUBSAMPLED_ORDER, RDP_OPTIMAL_MIN_DELTA
from ..errors import CertificateRejected, CouldNotReprove, MalformedCertificate
from .core import Arith, Iv, arith, to_fraction, mpfr_to_mpf, mpf_to_fraction
from .gdp import enclose, exact_input, side, start_bits
from .verify import BudgetExceeded, Recheck, needed_digits, parse_bound, register, root_enclosure

#: the subsampled Gaussian's orders are evaluated up to the producer's cap (one copy, read through
#: certificate.format): an input order beyond it is refused (exit 2, :func:`recheck_divergence`), an
#: order a proof's search reaches beyond it is not re-proved (exit 3)
MAX_INT_ORDER = MAX_SUBSAMPLED_ORDER
#: terms of the fractional-order series before its (proved) tail bound is taken as it is
MAX_SERIES_TERMS = 4000
#: cells of the proof of the infimum over alpha
MAX_CELLS = 20000


def _opt(inputs: Mapping[str, Any], key: str, default: str) -> Fraction:
    if key not in inputs:
        return Fraction(default)
    return exact_input(inputs, key)


def _count(inputs: Mapping[str, Any], key: str = "compositions") -> int:
    if key not in inputs:
        return 1
    k = exact_input(inputs, key)
    if k.denominator != 1 or k < 1:
        raise MalformedCertificate(f"inputs.{key} must be a positive integer")
    if k > 10**12:
        raise CouldNotReprove(f"inputs.{key} is beyond the second route's cap 10^12")
    return int(k)


def _gaussian_mu(inputs: Mapping[str, Any]) -> Fraction:
    return exact_input(inputs, "mu") if "mu" in inputs else (
        _opt(inputs, "sensitivity", "1") / exact_input(inputs, "noise_multiplier"))


def _softplus(A: Arith, x: Iv) -> Iv:
    """log(1 + e^x), increasing; for x > 0 written x + log1p(e^-x) (no overflow)."""
    if x[0] > 0:
        return A.add(x, A.log1p(A.exp(A.neg(x))))
    return A.log1p(A.exp(x))


class _Mech:
    """One step of a mechanism with exact parameters; :meth:`curve` encloses
    f(alpha) = k K(alpha) = (alpha - 1) D_alpha of the k-fold composition (RDP composes
    additively: Mironov 2017 Prop 1)."""

    def __init__(self, inputs: Mapping[str, Any]) -> None:
        name = inputs.get("mechanism")
        self.k = _count(inputs)
        self.name = name
        if name == "gaussian":
            mu = _gaussian_mu(inputs)
            if mu <= 0:
                raise MalformedCertificate("the Gaussian needs mu > 0")
            self.c = mu * mu / 2
        elif name == "laplace":
            scale = exact_input(inputs, "scale")
            if scale <= 0:
                raise MalformedCertificate("the Laplace mechanism needs scale > 0")
            self.lam = _opt(inputs, "sensitivity", "1") / scale
        elif name == "rr":
            self.p = exact_input(inputs, "p")
            if not Fraction(1, 2) <= self.p < 1:
                raise MalformedCertificate("randomized response needs p in [1/2, 1)")
            if self.p == Fraction(1, 2):  # P = Q: every divergence is exactly 0, as the Gaussian
                self.name, self.c = "gaussian", Fraction(0)  # formula states with c = 0
        elif name == "pure":
            self.e0 = exact_input(inputs, "eps0")
            if not 0 <= self.e0 <= 10**6:
                raise MalformedCertificate("pure eps0 must be in [0, 10^6]")
            if self.e0 == 0:  # P = Q, as for randomized response at p = 1/2
                self.name, self.c = "gaussian", Fraction(0)
        elif name == "subsampled-gaussian":
            self.s = exact_input(inputs, "noise_multiplier")
            self.q = exact_input(inputs, "rate")
            if self.s <= 0 or not 0 < self.q <= 1:
                raise MalformedCertificate("the subsampled Gaussian needs noise_multiplier > 0, rate in (0, 1]")
            if self.q == 1:  # no subsampling: the Gaussian of mu = 1 / sigma
                self.name, self.c = "gaussian", 1 / (2 * self.s * self.s)
        else:
            raise CertificateRejected(f"no RDP re-checker for mechanism {name!r}")
        self._cache: dict = {}

    @property
    def exact(self) -> bool:
        return self.name == "gaussian"

    def curve(self, A: Arith, a: Fraction, tol: Optional[int] = None) -> Iv:
        """f(a) = k (a - 1) D_a, a > 0 (a != 1), enclosed at A's precision; ``tol``
        (bits) is the relative truncation of the fractional-order series (default:
        A's precision)."""
        key = (A.prec, a, tol if self._series(a) else None)
        got = self._cache.get(key)
        if got is None:
            got = self._cache[key] = A.mul(A.q(self.k), self._cgf(A, a, tol))
        return got

    def _series(self, a: Fraction) -> bool:
        return self.name == "subsampled-gaussian" and a.denominator != 1

    def _cgf(self, A: Arith, a: Fraction, tol: Optional[int]) -> Iv:
        name = self.name
        if name == "gaussian":
            return A.q(self.c * a * (a - 1))  # exact (Mironov 2017 Prop 7)
        if name == "laplace":
            return _laplace_cgf(A, a, self.lam)
        if name in ("rr", "pure"):
            if name == "rr":
                lp, lq = A.log(A.q(self.p)), A.log(A.q(1 - self.p))
                gap = A.sub(lp, lq)
            else:  # p = e^e0 / (1 + e^e0): log p = -log1p(e^-e0), log p - log(1-p) = e0
                gap = A.q(self.e0)
                lp = A.neg(A.log1p(A.exp(A.q(-self.e0))))
                lq = A.sub(lp, gap)
            # log(p^a (1-p)^(1-a) + (1-p)^a p^(1-a)) = a lq + (1-a) lp + log(1 + e^((2a-1)(lp - lq)))
            base = A.add(A.mul(A.q(a), lq), A.mul(A.q(1 - a), lp))
            return A.add(base, _softplus(A, A.mul(A.q(2 * a - 1), gap)))
        if a.denominator == 1:
            return _ssg_integer(A, int(a), self.s, self.q)
        lo, hi = _ssg_series(A, a, self.s, self.q, tol)
        # E_Q[(dP/dQ)^a] >= 1 for a > 1 and <= 1 for a < 1 (Jensen): a sound clamp of the
        # truncation bound, which keeps the logarithm defined
        lo, hi = (max(lo, mpfr(1)), hi) if a > 1 else (lo, min(hi, mpfr(1)))
        return (A.dn.log(lo) if lo > 0 else mpfr("-inf"), A.up.log(hi))


def _laplace_cgf(A: Arith, a: Fraction, lam: Fraction) -> Iv:
    """log of the defining integral int exp(-a|x| - (1-a)|x - lam|) dx / 2 in closed form,
    every a > 0 (split at 0 and lam; Mironov 2017 Table 2 for a > 1):
    M = e^(-a lam) (1 + a lam expm1(y) / y), y = (2a - 1) lam (the factor is 1 at y = 0),
    written so that nothing cancels or overflows: log M = -a lam + log1p(a lam expm1(y) / y),
    and for y > 1, with a lam / y = a / (2a - 1) and y - a lam = (a - 1) lam,
    log M = (a - 1) lam + log(a / (2a - 1)) + log1p(-e^-y) + log1p((2a - 1) / (a expm1(y)))."""
    y = (2 * a - 1) * lam
    if y > 1:
        Y = A.q(y)
        rest = A.add(A.log1p(A.neg(A.exp(A.neg(Y)))), A.log1p(A.div(A.q((2 * a - 1) / a), A.expm1(Y))))
        return A.add(A.add(A.q((a - 1) * lam), A.log(A.q(a / (2 * a - 1)))), rest)
    al = A.q(a * lam)
    ratio = (mpfr(1), mpfr(1)) if y == 0 else A.div(A.expm1(A.q(y)), A.q(y))
    return A.sub(A.log1p(A.mul(al, ratio)), al)


def _ssg_integer(A: Arith, n: int, s: Fraction, q: Fraction) -> Iv:
    """K(n) of the Poisson-subsampled Gaussian at an integer order n >= 2: the finite sum
    A_n = sum_k C(n,k) q^k (1-q)^(n-k) e^((k^2 - k) / (2 s^2)) (Mironov, Talwar, Zhang 2019
    Sec 3.2), written as A_n - 1 = sum_k C(n,k) q^k (1-q)^(n-k) expm1((k^2 - k)/(2 s^2))
    (the binomial weights sum to 1; the k = 0, 1 terms vanish), so log1p does not cancel.
    Exact binomials, directed exp / expm1 / log."""
    if n > MAX_INT_ORDER:
        raise CouldNotReprove(f"an integer order {n} of the subsampled Gaussian is beyond the cap {MAX_INT_ORDER}")
    if q == 1:  # the Gaussian itself: A_n = e^((n^2 - n) / (2 s^2)) (Mironov 2017 Prop 7)
        return A.q(Fraction(n * n - n) / (2 * s * s))
    # log(1 - q) from the exact rational 1 - q: log1p(-q) would first round -q, which reaches
    # -1 at a precision below log2(1 / (1 - q)) bits (q = 1 - 1e-30 at 90 bits)
    lq, l1q = A.log(A.q(q)), A.log(A.q(1 - q))
    two_s2 = 2 * s * s
    terms = []  # (log C(n,k) q^k (1-q)^(n-k), (k^2 - k) / (2 s^2)) for k = 2..n
    c = n  # C(n, 1)
    for k in range(2, n + 1):
        c = c * (n - k + 1) // k
        lw = A.add(A.add(A.log(A.q(c)), A.mul(A.q(k), lq)), A.mul(A.q(n - k), l1q))
        terms.append((lw, A.q(Fraction(k * k - k) / two_s2)))
    if Fraction(n * n - n) / two_s2 <= _LOG_SPACE_EXPONENT:
        return A.log1p(A.fsum(A.mul(A.exp(lw), A.expm1(x)) for lw, x in terms))
    # log space: w_k expm1(x_k) = e^(l_k), l_k = log w_k + x_k + log1p(-e^(-x_k)) (x_k > 0 for k >= 2)
    return _log1p_sum_exp(A, [A.add(A.add(lw, x), A.log1p(A.neg(A.exp(A.neg(x))))) for lw, x in terms])


#: beyond this largest exponent (k^2 - k) / (2 s^2) the sum's terms are taken in log space:
#: e^x itself leaves MPFR's exponent range near x = 7e8, and before that the interval of a
#: huge e^x only narrows at precisions that grow with log2(x)
_LOG_SPACE_EXPONENT = 10**4


def _log1p_sum_exp(A: Arith, logs: list) -> Iv:
    """log1p(sum_k e^(l_k)) in directed rounding without exponentiating beyond the range:
    sum_k e^(l_k) = e^M S with S = sum_k e^(l_k - M) for a point M, and
    log1p(e^M S) = M + log S + log1p(e^-(M + log S)). log-sum-exp is increasing in every
    l_k, so its lower end is taken at the lower ends of the l_k (M their largest) and its
    upper end at the upper ends: S >= 1 at each (the term at M is e^0), where one
    interval M for both ends would make the lower S underflow to 0 once the l_k are wider
    than MPFR's exponent range (an exponent (k^2 - k) / (2 s^2) of 1e6000 at a few
    hundred bits)."""
    ends = []
    for pick in (0, 1):
        M = A.point(max(v[pick] for v in logs))
        S = A.fsum(A.exp(A.sub(A.point(v[pick]), M)) for v in logs)
        ends.append(A.add(M, A.log(S))[pick])
    log_total = (ends[0], ends[1])
    return A.add(log_total, A.log1p(A.exp(A.neg(log_total))))


class _SlowSeries(CouldNotReprove):
    """The fractional-order series did not reach its tolerance within MAX_SERIES_TERMS terms."""


#: (precision, order, sigma, rate, i) -> the i-th moment pair of :func:`_ssg_series`, enclosed
_MOMENTS: dict = {}


def _ssg_series(A: Arith, a: Fraction, s: Fraction, q: Fraction, tol: Optional[int]) -> Iv:
    """A_a = E_{x ~ N(0, s^2)}[(1 - q + q e^((2x - 1)/(2 s^2)))^a] at a fractional order a > 0
    (Mironov, Talwar, Zhang 2019 Sec 3.3): split at z1 = s^2 log(1/q - 1) + 1/2, where
    r(x) = q e^((2x-1)/(2s^2)) / (1 - q) = 1, and expand (1 + r)^a (x <= z1) and (1 + 1/r)^a
    (x > z1) in binomial series (absolutely convergent for a > 0 at ratios <= 1):

      A_a = sum_i C(a,i) [m1_i + m2_i],
      m1_i = (1-q)^(a-i) q^i e^((i^2-i)/(2s^2)) Phi((z1 - i)/s)  = (1-q)^a E[r^i; x <= z1],
      m2_i = (1-q)^i q^j e^((j^2-j)/(2s^2)) Phi((j - z1)/s)      = E[(q e^u)^a r^-i; x > z1],  j = a - i,

    u = (2x - 1)/(2 s^2) (each by completing the square in the Gaussian integral).

    The tail from i0 = floor(a) + 1 on (proved, not estimated): for i > a the sign of C(a, i)
    alternates and |C(a, i)| = (|sin(pi a)| / pi) B(i - a, a + 1) = int_0^1 t^i w(t) dt with
    w(t) = |sin(pi a)| t^(-a-1) (1 - t)^a / pi >= 0 (reflection formula); m1_i + m2_i is
    E[r^i; x <= z1] + E[(q e^u)^a r^-i; x > z1], the moments of a positive measure on [0, 1]
    (the ratios r <= 1 and 1/r <= 1 on their half-lines). A product of two moment sequences
    is one, so the tail is sign * sum_k (-1)^k a_k with a_k = int_0^1 x^k d mu, mu >= 0: Cohen,
    Rodriguez Villegas, Zagier (Exp. Math. 2000, Prop. 1) with the shifted Chebyshev
    polynomial P_n(x) = T_n(1 - 2x) gives S_n = sum_k b_k a_k / P_n(-1) (integers b_k,
    :func:`_cvz`) and |S - S_n| <= int |P_n| / (P_n(-1) (1 + x)) d mu <= a_0 / T_n(3),
    T_n(3) >= (3 + sqrt 8)^n / 2: about 2.54 bits per term, so n is chosen from ``tol``
    (bits relative to the sum). Past MAX_SERIES_TERMS it raises :class:`_SlowSeries`."""
    if a > MAX_INT_ORDER:
        raise CouldNotReprove(f"an order {float(a):.6g} of the subsampled Gaussian is beyond the cap {MAX_INT_ORDER}")
    tol = A.prec - 8 if tol is None else tol
    if q == 1:  # the Gaussian itself: A_a = e^((a^2 - a) / (2 s^2)) (Mironov 2017 Prop 7)
        return A.exp(A.q((a * a - a) / (2 * s * s)))
    S = A.q(s)
    lq, l1q = A.log(A.q(q)), A.log(A.q(1 - q))  # (1 - q exact: see _ssg_integer)
    two_s2 = A.q(2 * s * s)
    z1 = A.add(A.mul(A.q(s * s), A.log(A.q(1 / q - 1))), A.q(Fraction(1, 2)))

    def moment(i: int) -> Iv:
        # the moments do not depend on the truncation: a cell tried at rising tolerances
        # (and its neighbours, which share their ends) reuses them
        key = (A.prec, a, s, q, i)
        got = _MOMENTS.get(key)
        if got is None:
            if len(_MOMENTS) > 1 << 16:
                _MOMENTS.clear()
            got = _MOMENTS[key] = _moment(i)
        return got

    def _moment(i: int) -> Iv:
        j = a - i
        e1 = A.add(A.add(A.mul(A.q(j), l1q), A.mul(A.q(i), lq)), A.div(A.q(i * i - i), two_s2))
        m1 = A.mul(A.exp(e1), A.ncdf_rel(A.div(A.sub(z1, A.q(i)), S)))
        e2 = A.add(A.add(A.mul(A.q(i), l1q), A.mul(A.q(j), lq)), A.div(A.q(j * j - j), two_s2))
        m2 = A.mul(A.exp(e2), A.ncdf_rel(A.div(A.sub(A.q(j), z1), S)))
        return A.add(m1, m2)

    i0 = math.floor(a) + 1
    total = (mpfr(0), mpfr(0))
    C = (mpfr(1), mpfr(1))  # C(a, 0)
    for i in range(i0):
        total = A.add(total, A.mul(C, moment(i)))
        C = A.mul(C, A.div(A.q(a - i), A.q(i + 1)))
    sign = 1 if C[0] > 0 else -1  # the sign of C(a, i0) (C never contains 0: a is not an integer)
    absC = C if sign > 0 else A.neg(C)
    a0 = A.mul(absC, moment(i0))
    if not total[0] > 0:
        raise _SlowSeries("the fractional-order series' head is not bounded away from 0")
    # n with a_0 / T_n(3) <= 2^-tol total, T_n(3) >= 5.828^n / 2
    ratio = float(A.up.div(a0[1], total[0]))
    n = max(2, math.ceil((tol + 1 + max(0.0, math.log2(ratio) if ratio > 0 else 0.0)) / 2.54) + 1)
    if n > MAX_SERIES_TERMS:
        raise _SlowSeries(f"the fractional-order series at alpha = {float(a):.6g} needs more than "
                          f"{MAX_SERIES_TERMS} terms for 2^-{tol}")
    b, D = _cvz(n)
    terms = [A.mul(A.q(b[0]), a0)]
    for k in range(1, n):
        i = i0 + k
        absC = A.mul(absC, A.div(A.q(i - 1 - a), A.q(i)))  # |C(a,i)| = |C(a,i-1)| (i-1-a)/i
        terms.append(A.mul(A.q(b[k]), A.mul(absC, moment(i))))
    sn = A.div(A.fsum(terms), A.q(D))
    err = A.up.div(a0[1], A.q(D)[0])
    tail = (A.dn.sub(sn[0], err), A.up.add(sn[1], err))
    if sign < 0:
        tail = A.neg(tail)
    return A.add(total, tail)


@lru_cache(maxsize=128)
def _cvz(n: int) -> tuple[tuple, int]:
    """(b_0..b_(n-1), D) with sum_k b_k x^k = (D - P(x)) / (1 + x), P(x) = T_n(1 - 2x) (integer
    coefficients, by the Chebyshev recurrence T_(m+1) = 2 y T_m - T_(m-1)) and D = P(-1) = T_n(3):
    the weights of Cohen, Rodriguez Villegas, Zagier's acceleration, exact integers."""
    p0, p1 = [1], [1, -2]  # T_0, T_1(1 - 2x)
    for _ in range(n - 1):
        y_p1 = [0] * (len(p1) + 1)
        for k, c in enumerate(p1):  # (1 - 2x) p1
            y_p1[k] += c
            y_p1[k + 1] -= 2 * c
        p2 = [2 * c for c in y_p1]
        for k, c in enumerate(p0):
            p2[k] -= c
        p0, p1 = p1, p2
    P = p1 if n >= 1 else p0
    D = sum(c if k % 2 == 0 else -c for k, c in enumerate(P))
    r = [D - P[0]] + [-c for c in P[1:]]  # D - P(x), divisible by (x + 1)
    m = len(r) - 1
    q = [0] * m
    q[m - 1] = r[m]
    for k in range(m - 1, 0, -1):  # synthetic division by x - (-1)
        q[k - 1] = r[k] - q[k]
    assert r[0] - q[0] == 0
    return tuple(q), D


# --------------------------------------------------------------------------- closed-form conversions


def _classic_iv(A: Arith, a: Fraction, g: Fraction, d: Fraction) -> Iv:
    """rdp + log(1/delta) / (alpha - 1) (Mironov 2017 Prop 3), directed rounding."""
    return _classic_eps(A, a, A.q(g), A.neg(A.log(A.q(d))))


def _balle_iv(A: Arith, a: Fraction, g: Fraction, d: Fraction) -> Iv:
    """max(0, rdp + log1p(-1/alpha) - (log delta + log alpha) / (alpha - 1)) (Balle et al.
    2020 Thm 21), directed rounding."""
    return _balle_eps(A, a, A.q(g), A.neg(A.log(A.q(d))))


def _balle_delta_exponent(A: Arith, a: Fraction, g: Fraction, e: Fraction) -> Iv:
    """log of zeta e^((alpha-1)(rdp-eps)), zeta = (1/alpha)(1-1/alpha)^(alpha-1) (Balle et al.
    2020 Thm 21 solved for delta): -log alpha + (alpha-1) log1p(-1/alpha) + (alpha-1)(rdp-eps)."""
    return A.add(A.sub(A.mul(A.q(a - 1), A.log(A.q(1 - Fraction(1) / a))), A.log(A.q(a))), A.q((a - 1) * (g - e)))


_CONV_IV = {"classic": _classic_iv, "balle": _balle_iv}


# --------------------------------------------------------------------------- conversions (directed)


def _classic_eps(A: Arith, a: Fraction, D: Iv, L: Iv) -> Iv:
    """D + L / (alpha - 1) (Mironov 2017 Prop 3), increasing in D and L."""
    return A.add(D, A.div(L, A.q(a - 1)))


def _balle_eps(A: Arith, a: Fraction, D: Iv, L: Iv) -> Iv:
    """max(0, D + log1p(-1/alpha) + (L - log alpha) / (alpha - 1)) (Balle et al. 2020 Thm 21),
    increasing in D and L; max(0, .) is monotone, applied to both ends."""
    v = A.add(A.add(D, A.log(A.q(1 - Fraction(1) / a))), A.div(A.sub(L, A.log(A.q(a))), A.q(a - 1)))
    return (max(mpfr(0), v[0]), max(mpfr(0), v[1]))


def _s_parts(A: Arith, a: Fraction, E: Iv, d: Fraction, t: Fraction) -> tuple[Iv, Iv]:
    """ABC eq. (16) at p = d + t (t in (0, 1 - d]): S(p) = p^a (p-d)^(1-a) + (1-p)^a (e^eps - p + d)^(1-a)
    and S'(p) = u^(a-1) (a - (a-1) u) - v^(a-1) (a - (a-1) v), u = p / (p - d),
    v = (1 - p) / (e^eps - p + d) (derivative of the two perspectives), E = e^eps; written in t
    so that p - d = t is exact."""
    p = d + t
    am1 = A.q(a - 1)
    lu = A.sub(A.log(A.q(p)), A.log(A.q(t)))  # log u >= 0
    s1 = A.exp(A.add(A.log(A.q(t)), A.mul(A.q(a), lu)))  # t u^a
    u = A.exp(lu)
    d1 = A.mul(A.exp(A.mul(am1, lu)), A.sub(A.q(a), A.mul(am1, u)))
    if p == 1:
        return s1, d1
    w = A.sub(E, A.q(t))  # e^eps - p + d > 1 - p > 0
    lv = A.sub(A.log(A.q(1 - p)), A.log(w))
    s2 = A.exp(A.add(A.log(w), A.mul(A.q(a), lv)))  # w v^a
    v = A.exp(lv)
    d2 = A.mul(A.exp(A.mul(am1, lv)), A.sub(A.q(a), A.mul(am1, v)))
    return A.add(s1, s2), A.sub(d1, d2)


def _gamma_iv(A: Arith, a: Fraction, eps: Fraction, d: Fraction) -> tuple[Iv, Fraction]:
    """(enclosure of gamma_a^eps(d), the p - d used) of ABC Thm 3 eq. (16):
    gamma = eps + min_{p in (d, 1]} log S(p) / (a - 1).

    * a d >= 1: S'(1) <= 0, so the minimum of the convex S is S(1) = (1 - d)^(1-a), and
      gamma = eps - log(1 - d) (ABC Thm 4 eq. 17).
    * a d < 1: S'(1) > 0 (decided on the rationals: a - (a-1)/(1-d) > 0). S is convex in p
      (a sum of perspectives x^a y^(1-a), jointly convex for a > 1, of affine functions of
      p), so a point t_lo with S' < 0 and one t_hi with S' > 0 (signs proved on intervals)
      bracket its minimiser, and at any m in the bracket the tangent gives
      S >= S(m) - |S'(m)| max(m - t_lo, t_hi - m) there; S at m itself bounds the minimum
      from above. The bracket is found by halving from p = 1, then bisection (geometric
      while wide) until its relative width is about 2^-(prec/2): the bound's error is then
      S'' w^2 ~ 2^-prec.
    ``d <= 0`` gives gamma = 0 (ABC Thm 4)."""
    if d <= 0:
        return (mpfr(0), mpfr(0)), Fraction(0)
    if d >= 1:
        raise CouldNotReprove("the optimal conversion at delta >= 1 is not defined")
    if a * d >= 1:
        return A.sub(A.q(eps), A.log(A.q(1 - d))), 1 - d  # (1 - d exact: no rounding of -d to -1)
    E = A.exp(A.q(eps))

    def sign(t: Fraction) -> int:
        ds = _s_parts(A, a, E, d, t)[1]
        return -1 if ds[1] < 0 else (1 if ds[0] > 0 else 0)

    t_lo: Optional[Fraction] = None
    t_hi = 1 - d
    m: Optional[Fraction] = None
    t = t_hi / 2
    seed = _t_float(a, eps, d)  # a float proposal: kept only where the signs prove it a bracket
    if seed is not None:
        s_lo, s_hi = seed * (1 - Fraction(1, 1 << 24)), min(seed * (1 + Fraction(1, 1 << 24)), t_hi)
        if s_lo < s_hi and sign(s_lo) < 0 and sign(s_hi) > 0:
            t_lo, t_hi = s_lo, s_hi
    # halving reaches t ~ 2^-(4 prec + 64) / d: the minimiser sits at p - d of the order of d
    # itself for tiny d (delta = 1e-300 needs about 1000 halvings more than the precision)
    halvings = 4 * A.prec + 64 + d.denominator.bit_length() - d.numerator.bit_length()
    for _ in range(0 if t_lo is not None else halvings):
        sg = sign(t)
        if sg < 0:
            t_lo = t
            break
        if sg == 0:
            m = t
            break
        t_hi, t = t, t / 2
    else:
        if t_lo is None:
            raise CouldNotReprove("the minimiser over p of ABC (16) is not bracketed")
    if m is None:
        # (beyond 1024 bits the bound's error S'' w^2 stays at 2^-1040: bounded work)
        stop = Fraction(1, 1 << (min(A.prec, 1024) // 2 + 8))
        for _ in range(4 * A.prec + 64):
            if t_hi - t_lo <= t_lo * stop:
                break
            mid = (t_lo + t_hi) / 2
            if t_hi > 4 * t_lo:  # geometric while wide: the minimiser may sit near p = d
                ratio = t_hi / t_lo
                r = ratio.numerator.bit_length() - ratio.denominator.bit_length()
                if t_lo * (1 << max(1, r // 2)) < t_hi:
                    mid = t_lo * (1 << max(1, r // 2))
            mid = _dyadic_round(mid, A.prec + 16)
            if not t_lo < mid < t_hi:
                break
            sg = sign(mid)
            if sg < 0:
                t_lo = mid
            elif sg > 0:
                t_hi = mid
            else:
                m = mid
                break
        if m is None:
            m = _dyadic_round((t_lo + t_hi) / 2, A.prec + 16)
    s, ds = _s_parts(A, a, E, d, m)
    lo_end = Fraction(0) if t_lo is None else t_lo
    w = A.q(max(m - lo_end, t_hi - m))[1]
    slope = max(abs(ds[0]), abs(ds[1]))
    smin = A.dn.sub(s[0], A.up.mul(slope, w))
    am1 = A.q(a - 1)
    hi = A.up.add(A.q(eps)[1], A.div(A.log(s), am1)[1])
    lo = A.dn.add(A.q(eps)[0], A.div(A.log((smin, smin)), am1)[0]) if smin > 0 else mpfr("-inf")
    return (lo, hi), m


def _t_float(a: Fraction, eps: Fraction, d: Fraction) -> Optional[Fraction]:
    """p - delta at the minimiser of ABC (16) on doubles (the sign of S'(p), bisected in
    log t): a proposal only, None where doubles overflow or lose the sign."""
    try:
        af, ef, df = float(a), math.exp(float(eps)), float(d)

        def ds(t: float) -> float:
            p = df + t
            lu = math.log(p) - math.log(t)
            d1 = math.exp((af - 1) * lu) * (af - (af - 1) * math.exp(lu))
            if p >= 1:
                return d1
            lv = math.log(1 - p) - math.log(ef - t)
            return d1 - math.exp((af - 1) * lv) * (af - (af - 1) * math.exp(lv))

        hi = 1 - df
        lo = hi / 2
        for _ in range(1100):
            if ds(lo) < 0:
                break
            hi, lo = lo, lo / 2
        else:
            return None
        for _ in range(80):
            mid = math.sqrt(lo * hi)
            if ds(mid) < 0:
                lo = mid
            else:
                hi = mid
        t = math.sqrt(lo * hi)
        return Fraction(t) if 0 < t < 1 - df else None
    except (OverflowError, ValueError, ZeroDivisionError):
        return None


def _dyadic_round(x: Fraction, bits: int) -> Fraction:
    """x rounded to ``bits`` significant bits (a short dyadic: keeps the rationals small)."""
    if x == 0:
        return x
    e = x.numerator.bit_length() - x.denominator.bit_length() - bits
    if e >= 0:
        return Fraction(round(x / (1 << e)) * (1 << e))
    return Fraction(round(x * (1 << -e)), 1 << -e)


def _optimal_eps_upper(A: Arith, a: Fraction, D: Iv, e_hi: Fraction, d: Fraction) -> bool:
    """Is eps_opt(a, D) <= e_hi proved? gamma_a^{e_hi}(d) >= every D in the enclosure
    (eps_opt = inf{eps >= 0 : gamma_a^eps(d) >= D}, ABC Thm 3 with eq. 10)."""
    return _gamma_iv(A, a, e_hi, d)[0][0] >= D[1]


# --------------------------------------------------------------------------- the infimum over orders


def _alpha_at(t: Fraction, bits: int) -> Fraction:
    """The cell end 1 + 2^t as a dyadic of ``bits`` bits (exact for an integer t). Any
    rational order is sound: the rounding only places the grid, the cells share their ends."""
    if t.denominator == 1:
        return 1 + Fraction(2) ** int(t)
    ctx = gmpy2.context(precision=bits)
    return 1 + to_fraction(ctx.exp2(ctx.div(gmpy2.mpz(t.numerator), gmpy2.mpz(t.denominator))))


def _decide(f: Callable[[Arith], Iv], target: Callable[[Arith], Iv], digits: int) -> int:
    """:func:`side` capped at 4096 bits (bounded work: the gamma enclosure's bisection grows
    with the precision)."""
    return side(f, target, digits, max_bits=4096)


def _p_proposal(a: Fraction, eps: Fraction, d: Fraction) -> Fraction:
    """p - delta near the minimiser of ABC (16) (only chooses: any p gives an upper bound)."""
    t = _t_float(a, eps, d)
    return t if t is not None else 1 - d


def _prove_inf_at_least(mech: _Mech, conv: str, lo: Fraction, d: Fraction, digits: int,
                        alpha_max: Optional[Fraction] = None) -> None:
    """Prove inf over alpha in (1, alpha_max] (default: every alpha > 1) of
    conv(alpha, D_alpha, delta) >= lo, or refute it (CertificateRejected), or raise
    CouldNotReprove. No order is trusted; every comparison is on directed-rounding enclosures.

    Used: f(alpha) = (alpha - 1) D_alpha is convex (Hoelder: the cumulant generating
    function of the privacy loss), f(1) = 0, and D_alpha = f / (alpha - 1) is non-decreasing
    in alpha (van Erven, Harremoes 2014 Thm 3). On a cell [a, b] of orders f lies above the
    line through (x0, f(x0)) and (a, f(a)), x0 < a (convexity: chord slopes increase), taken
    with f(a) rounded down and the slope rounded down (x - a >= 0 on the cell), an error
    O(w^2); with L = log(1/delta):

    * classic (Mironov 2017 Prop 3): eps >= (line(x) + L) / (x - 1), a Moebius function of x
      with exact coefficients, monotone on the cell: bounded below at its two ends;
    * balle (Balle et al. 2020 Thm 21): (alpha - 1) eps >= f + L + k(alpha),
      k = (alpha-1) log(alpha-1) - alpha log alpha convex with k' = log(1 - 1/alpha): k lies
      above its tangent at the cell centre c, taken with the slope's lower end and the
      slope's width times |x - c| subtracted: again a Moebius function, checked at the ends;
    * optimal (ABC Thm 3): eps_opt(alpha, D) >= lo iff gamma_alpha^lo(delta) < D (gamma is
      non-decreasing in eps), and (alpha - 1) gamma_alpha^lo <= (alpha - 1) lo + log S_alpha(p)
      for any fixed p, a convex function of alpha (log-sum-exp of affine functions): below the
      line on the cell if it is below at both ends.

    For the subsampled Gaussian a cell [a, b] with a >= 2 is first tried with
    D_x >= D_floor(a) (monotonicity; the integer order's finite sum), which settles the cells
    far from the optimum without a fractional-order series.

    The orders (1, 1 + 2^-20] use D_alpha >= D_beta for beta = 1 - 2^-20 < 1 (monotone in the
    order), with the conversion's bound at the cell's far end (classic: L/(alpha-1) decreasing;
    Balle: log u + L/u decreasing for u = alpha - 1 < L and log(1 + u) <= u; optimal:
    log S_alpha(p) / (alpha - 1) is a chord slope of a convex function vanishing at 1,
    non-decreasing in alpha). [1 + 2^t1, inf) uses D_alpha >= D_{1 + 2^t1} and each
    conversion's limit (optimal: eps_opt >= D + log(1 - delta), as gamma <= eps - log(1 - delta)
    at p = 1). A cell whose midpoint order converts (upper end) below ``lo`` refutes it."""
    bits = start_bits(digits + 4)
    A = arith(bits)
    L = A.neg(A.log(A.q(d)))
    T = A.q(lo)[1]
    series = mech.name == "subsampled-gaussian"
    # the fractional-order series is summed to the relative accuracy a cell needs, rising
    # (cells far from the optimum settle at a few terms); the last stage is what the
    # recorded width needs, with the compositions' factor k
    tols: list = [12, 24, 48, _series_tol(mech, digits + 6)] if series else [None]
    alphas: dict = {}

    def al(t: Fraction) -> Fraction:
        x = alphas.get(t)
        if x is None:
            x = alphas[t] = _alpha_at(t, bits)
        return x

    def f(x: Fraction, tol: Optional[int] = None) -> Iv:
        return mech.curve(A, x, tol)

    def at_least(num: Iv, x: Fraction) -> bool:
        """num / (x - 1) >= T, rounded down."""
        return A.div(num, A.q(x - 1))[0] >= T

    def crude_ok(ta: Fraction, tb: Fraction) -> bool:
        a, b = al(ta), al(tb)
        n = math.floor(a)
        if n < 2 or conv == "optimal":
            return False
        Dn = A.div(f(Fraction(n)), A.q(n - 1))[0]
        if conv == "classic":
            return A.dn.add(Dn, A.div(L, A.q(b - 1))[0]) >= T
        lb = A.log(A.q(b))
        if L[0] < lb[1]:
            return False
        rest = A.add(A.log(A.q(1 - Fraction(1) / a)), A.div(A.sub(L, lb), A.q(b - 1)))
        return A.dn.add(Dn, rest[0]) >= T

    def cell_ok(ta: Fraction, tb: Fraction, tol: Optional[int]) -> bool:
        a, b = al(ta), al(tb)
        x0 = al(2 * ta - tb)
        fa, f0 = f(a, tol), f(x0, tol)
        if not (gmpy2.is_finite(fa[0]) and gmpy2.is_finite(f0[1])):
            return False
        sl = A.div(A.sub(fa, f0), A.q(a - x0))[0]

        def line(x: Fraction) -> Iv:
            v = A.add((fa[0], fa[0]), A.mul((sl, sl), A.q(x - a)))[0]
            return (v, v)

        if conv == "classic":
            return all(at_least(A.add(line(x), L), x) for x in (a, b))
        c = (a + b) / 2
        if conv == "balle":
            kc = A.sub(A.mul(A.q(c - 1), A.log(A.q(c - 1))), A.mul(A.q(c), A.log(A.q(c))))
            kp = A.log(A.q(1 - Fraction(1) / c))
            k0 = A.dn.sub(kc[0], A.up.mul(A.up.sub(kp[1], kp[0]), A.q(c - a)[1]))

            def k(x: Fraction) -> Iv:
                v = A.add((k0, k0), A.mul((kp[0], kp[0]), A.q(x - c)))[0]
                return (v, v)

            return all(at_least(A.add(A.add(line(x), L), k(x)), x) for x in (a, b))
        tp = _p_proposal(c, lo, d)
        for x in (a, b):
            u = A.add(A.mul(A.q(x - 1), A.q(lo)), A.log(_s_parts(A, x, E_lo, d, tp)[0]))
            if not u[1] < line(x)[0]:
                return False
        return True

    def ok(ta: Fraction, tb: Fraction) -> bool:
        if series and crude_ok(ta, tb):
            return True
        for tol in tols:
            try:
                if cell_ok(ta, tb, tol):
                    return True
            except _SlowSeries:
                return False
        return False

    def below(x: Fraction) -> bool:
        """Is the conversion at the order x proved below lo (then so is the infimum)?"""
        try:
            D = A.div(f(x, 24), A.q(x - 1))  # a refutation only: a coarse series suffices
        except _SlowSeries:
            return False
        if conv == "classic":
            return _classic_eps(A, x, D, L)[1] < A.q(lo)[0]
        if conv == "balle":
            return _balle_eps(A, x, D, L)[1] < A.q(lo)[0]
        return lo > 0 and _optimal_eps_upper(A, x, D, lo - lo / (1 << (bits - 8)), d)

    E_lo = A.exp(A.q(lo))
    # the end near alpha = 1
    t0 = Fraction(-20)
    u0 = Fraction(1, 1 << 20)
    a0 = 1 + u0
    near = False
    for tol in ["zero"] + tols:  # first with KL >= 0 alone: enough unless lo is huge or optimal
        try:
            fb = (mpfr(0), mpfr(0)) if tol == "zero" else f(1 - u0, tol)
        except _SlowSeries:
            break
        kl = max(mpfr(0), A.div(fb, A.q(-u0))[0] if gmpy2.is_finite(fb[0]) else mpfr(0))
        if conv == "classic":
            near = A.dn.add(kl, A.div(L, A.q(u0))[0]) >= T
        elif conv == "balle":
            if L[0] > u0:
                v = A.add(A.add(A.log(A.q(u0)), A.div(L, A.q(u0))), A.q(-u0 - 1))
                near = A.dn.add(kl, v[0]) >= T
        else:
            tp = _p_proposal(a0, lo, d)
            g = A.add(A.q(lo), A.div(A.log(_s_parts(A, a0, E_lo, d, tp)[0]), A.q(u0)))
            near = g[1] < kl
        if near:
            break
    if not near:
        raise CouldNotReprove("the orders alpha near 1 are not re-proved above the recorded lower end")
    # the far end
    if alpha_max is not None:
        t1 = Fraction(max(1, (int(math.ceil(alpha_max - 1)) - 1).bit_length()))
        while al(t1) < alpha_max:
            t1 += 1
    else:
        t1 = Fraction(2)
        while True:
            big = al(t1)
            r = A.div(f(big), A.q(big - 1))[0]
            if conv == "classic":
                far = r
            elif conv == "balle":
                far = A.dn.sub(A.dn.add(r, A.log(A.q(1 - Fraction(1) / big))[0]),
                               A.div(A.log(A.q(big)), A.q(big - 1))[1])
            else:
                far = A.dn.add(r, A.log(A.q(1 - d))[0])
            if far >= T:
                break
            if t1 >= 64:
                raise CouldNotReprove("the orders alpha -> inf are not re-proved above the recorded lower end")
            t1 += 1
    n0 = 64
    stack = [(t0 + (t1 - t0) * i / n0, t0 + (t1 - t0) * (i + 1) / n0) for i in range(n0)][::-1]
    min_w = Fraction(1, 10 ** (digits + 8))
    cells = 0
    while stack:
        ta, tb = stack.pop()
        cells += 1
        if cells > MAX_CELLS:
            raise CouldNotReprove(f"the infimum over alpha needs more than {MAX_CELLS} cells")
        if ok(ta, tb):
            continue
        tm = (ta + tb) / 2
        if below(al(tm)):
            raise CertificateRejected(
                f"the order alpha = {float(al(tm)):.12g} gives an eps below the recorded lower end "
                f"{float(lo):.15g}: the infimum over alpha is smaller")
        if tb - ta < min_w:
            raise CouldNotReprove(f"the cell of orders near alpha = {float(al(ta)):.12g} is not re-proved")
        stack.append((tm, tb))
        stack.append((ta, tm))


def _series_tol(mech: _Mech, digits: int) -> int:
    """Bits of relative truncation of the fractional-order series for ``digits`` digits of
    a conversion of k K(alpha) (the factor k of the compositions costs its bits)."""
    return int(digits * 3.33) + mech.k.bit_length() + 4


def _eps_at(A: Arith, mech: _Mech, conv: str, a: Fraction, d: Fraction, tol: Optional[int] = None) -> Iv:
    """The classic or Balle conversion at the order a, enclosed."""
    D = A.div(mech.curve(A, a, tol), A.q(a - 1))
    L = A.neg(A.log(A.q(d)))
    return (_classic_eps if conv == "classic" else _balle_eps)(A, a, D, L)


def _search_order(mech: _Mech, conv: str, d: Fraction) -> Fraction:
    """An order near the minimiser of the conversion (only chooses: every order's value
    bounds the infimum from above): a grid in log2(alpha - 1), then golden-section search, on
    the midpoints of 64-bit enclosures."""
    A = arith(64)

    def h(t: float) -> float:
        try:
            a = Fraction(1 + 2.0 ** t)
            if conv == "optimal":
                return float("inf")
            v = _eps_at(A, mech, conv, a, d)
            return float((v[0] + v[1]) / 2)
        except (CouldNotReprove, ValueError, ZeroDivisionError, OverflowError):
            return float("inf")

    t0 = min(range(-10, 15), key=lambda t: h(float(t)))
    with mpmath.workdps(15):  # a proposal on doubles' worth of digits
        t = float(_golden(lambda x: h(float(x)), mpf(t0 - 1), mpf(t0 + 1), 60)[0])
    return Fraction(1 + 2.0 ** t)


def _conv_name(inputs: Mapping[str, Any]) -> str:
    c = inputs.get("conversion")
    if c not in ("classic", "balle", "optimal"):
        raise MalformedCertificate(f"inputs.conversion={c!r} is not one of ['balle', 'classic', 'optimal']")
    return c


# --------------------------------------------------------------------------- kinds


def _frac_bound(result: Mapping[str, Any], key: str, rounding: str) -> Optional[Fraction]:
    """The recorded enclosure end as an exact rational (rounded outward: 'c' up, 'f' down)."""
    enc = result.get("enclosure")
    if not isinstance(enc, dict) or key not in enc:
        return None
    with mpmath.workdps(60):
        v = parse_bound(enc[key], f"result.enclosure.{key}", 60, rounding)
        if not mpmath.isfinite(v):
            return None
        return mpf_to_fraction(v)


@register("rdp.divergence")
def recheck_divergence(inputs: Mapping[str, Any], result: Mapping[str, Any]) -> Recheck:
    """D_alpha of the k-fold composition, k K(alpha) / (alpha - 1): the Gaussian's exact
    rational k alpha mu^2 / 2 (Mironov 2017 Prop 7), every other mechanism's cumulant
    (:class:`_Mech`) in MPFR directed rounding at rising precision."""
    a = exact_input(inputs, "alpha")
    if a <= 0 or a == 1:
        raise MalformedCertificate("alpha must be in (0,1) or (1, inf)")
    mech = _Mech(inputs)
    if mech.name == "subsampled-gaussian" and a > MAX_INT_ORDER:  # a rate of 1 is the Gaussian's closed form
        raise MalformedCertificate(
            f"inputs.alpha = {str(inputs['alpha'])[:40]} is beyond the subsampled Gaussian's cap: orders alpha <= {MAX_INT_ORDER} "
            "(sampling rate < 1; the producer refuses a larger one too)")
    if mech.exact:
        return Recheck.of_exact(mech.k * mech.c * a)
    lo_rec, hi_rec = _frac_bound(result, "lo", "c"), _frac_bound(result, "hi", "f")
    for last, dg in _ladder(result):
        try:
            tol = _series_tol(mech, dg + 3)
            r = enclose(lambda A: A.div(mech.curve(A, a, tol), A.q(a - 1)), dg)
        except _SlowSeries:
            if last:
                raise
            continue
        inside = (lo_rec is None or lo_rec <= mpf_to_fraction(r.lo)) and (
            hi_rec is None or mpf_to_fraction(r.hi) <= hi_rec)
        if inside or last:
            return r
    raise AssertionError("unreachable: the ladder's last rung returns")


@register("rdp.epsilon", explain=(
    "The infimum over every real alpha > 1 of the conversion of D_alpha, on MPFR directed "
    "rounding. Gaussian + classic: the closed form c + 2 sqrt(cL) (AM-GM). Upper end: the "
    "conversion at one order (the recorded alpha*, a hint); optimal: ABC's gamma at the recorded "
    "upper end proved >= D_alpha* (the p-minimum bounded below by convexity). Lower end: cells of "
    "log2(alpha - 1); convexity of (alpha - 1) D_alpha gives a linear minorant per cell; classic and "
    "Balle are Moebius functions of alpha on a cell (checked at its ends), the optimal conversion is "
    "bounded through ABC's gamma at a fixed p (convex in alpha); alpha near 1 uses D_alpha >= D_beta "
    "for an order beta < 1, large alpha the monotonicity of D_alpha. An order proved to convert below "
    "the recorded lower end refutes the certificate."))
def recheck_epsilon(inputs: Mapping[str, Any], result: Mapping[str, Any]) -> Recheck:
    conv = _conv_name(inputs)
    d = exact_input(inputs, "delta")  # in (0, 1): certificate.ranges, before any route
    _optimal_delta_cap(conv, d)
    mech = _Mech(inputs)
    digits = needed_digits(result)
    # the order hint is read and checked (> 1) on every route, the closed form's too, which does
    # not use it (adv36 W3: 0.5 was accepted there and refused elsewhere)
    alpha_text = result.get("alpha")
    if alpha_text is not None and not isinstance(alpha_text, str):
        raise MalformedCertificate("rdp.epsilon needs result.alpha (the order of the upper end)")
    hint = None if alpha_text is None else exact_input({"alpha": alpha_text}, "alpha")
    if hint is not None and hint <= 1:
        raise MalformedCertificate("result.alpha: the recorded order must be > 1")
    if mech.exact and conv == "classic":
        # inf over real alpha > 1 of c alpha + L/(alpha - 1) = c + c (alpha - 1) + L / (alpha - 1)
        # >= c + 2 sqrt(c L) (AM-GM, equality at alpha = 1 + sqrt(L / c)), c = k mu^2 / 2,
        # L = log(1/delta): the infimum in closed form, no alpha trusted
        c = mech.k * mech.c

        def closed(A: Arith) -> Iv:
            L = A.neg(A.log(A.q(d)))
            return A.add(A.q(c), A.scale2(A.sqrt(A.mul(A.q(c), L)), 1))

        return enclose(closed, digits)
    if hint is None:
        # claim certificates carry no order: choose one here (classic / balle only)
        if conv == "optimal":
            raise MalformedCertificate("an optimal-conversion rdp.epsilon needs result.alpha")
        a_star = _search_order(mech, conv, d)
    else:
        a_star = hint
    lo_rec = _frac_bound(result, "lo", "c")
    hi_rec = _frac_bound(result, "hi", "f")
    enc = result.get("enclosure")
    if not isinstance(enc, dict):
        raise MalformedCertificate("rdp.epsilon needs result.enclosure")
    ceiling, at_most = mpmath.inf, None
    if conv == "optimal":
        if hi_rec is None or hi_rec < 0:
            raise CouldNotReprove("an optimal-conversion rdp.epsilon needs a finite recorded upper end")

        def at_most(x: Fraction) -> bool:
            """ABC's gamma at alpha* and eps = x proved >= D_alpha*: the conversion there is <= x."""
            for last, dg in _ladder(result):
                # the recorded width's digits first (cheap), the precision floor's if they do not decide
                try:
                    tol = _series_tol(mech, dg + 6)
                    if _decide(lambda A: _gamma_iv(A, a_star, x, d)[0],
                               lambda A: A.div(mech.curve(A, a_star, tol), A.q(a_star - 1)), dg + 4) > 0:
                        return True
                except _SlowSeries:
                    pass
            return False
    else:
        for last, dg in _ladder(result):
            # the recorded width's digits first (cheap: the series at the order needs fewer
            # terms), the precision floor's only where the first does not fit inside
            try:
                tol = _series_tol(mech, dg + 3)
                v = enclose(lambda A: _eps_at(A, mech, conv, a_star, d, tol), dg).hi
                if hi_rec is None or mpf_to_fraction(v) <= hi_rec or last:
                    ceiling = v  # the conversion at alpha*: an upper end of the infimum, the route's own
                    break
            except _SlowSeries:
                if last:
                    raise

    def at_least(x: Fraction) -> bool:
        """inf over alpha of the conversion proved >= x on the cells (:func:`_prove_inf_at_least`);
        an order converting below the recorded lower end refutes it (exit 1)."""
        for last, dg in _ladder(result):
            try:
                _prove_inf_at_least(mech, conv, x, d, dg)
                return True
            except BudgetExceeded:
                raise
            except CouldNotReprove:  # a CertificateRejected subclass: first
                continue
            except CertificateRejected:
                if x == lo_rec:
                    raise
                return False  # an order below a point past the recorded upper end: no refutation
        return False

    # the one rule for roots (verify.root_enclosure): the recorded ends first, then (to refute the
    # certificate) a point just past them; eps >= 0 always (nothing to prove below 0)
    lo_i, hi_i = root_enclosure(enc, at_least, at_most, ceiling=ceiling)
    return Recheck(lo=lo_i, hi=hi_i, dps=digits + 20)


def _ladder(result: Mapping[str, Any]) -> list:
    """(is last, digits): the recorded width's digits, then the precision floor's if larger."""
    ds = sorted({needed_digits(result, floor=4), needed_digits(result)})
    return [(i == len(ds) - 1, x) for i, x in enumerate(ds)]


def _optimal_delta_cap(conv: str, d: Fraction) -> None:
    """Refuse (exit 2) before any work an optimal conversion at a delta the producer refuses: its
    proofs need about log2(1/delta) more bits, and a 1e-3000 certificate ran to the budget (adv35 R1)."""
    if conv == "optimal" and d < RDP_OPTIMAL_MIN_DELTA:
        raise MalformedCertificate("inputs.delta is below 1e-50, the smallest delta of the optimal conversion "
                                   "(the producer's cap; classic and balle have none)")


@register("rdp.to_dp_eps")
def recheck_to_dp_eps(inputs: Mapping[str, Any], result: Mapping[str, Any]) -> Recheck:
    """eps at one order: classic and Balle by their closed forms in MPFR directed
    rounding (:func:`_classic_iv`, :func:`_balle_iv`); optimal (ABC Thm 3): eps_opt =
    inf{eps >= 0 : gamma_alpha^eps(delta) >= rdp}, gamma non-decreasing and continuous in
    eps, so gamma(0) > rdp proves eps_opt = 0, and gamma(lo) < rdp < gamma(hi) at the
    recorded ends proves lo <= eps_opt <= hi (:func:`_gamma_iv`, directed rounding)."""
    c = _conv_name(inputs)
    # alpha > 1, rdp >= 0, delta in (0, 1): certificate.ranges, before any route
    a, g, d = exact_input(inputs, "alpha"), exact_input(inputs, "rdp"), exact_input(inputs, "delta")
    _optimal_delta_cap(c, d)
    digits = needed_digits(result)
    if c in _CONV_IV:
        return enclose(lambda A: _CONV_IV[c](A, a, g, d), digits)

    def gam(A: Arith, e: Fraction) -> Iv:
        if e < 0:  # gamma is non-decreasing in eps: below 0 it is at most gamma(0)
            return (mpfr("-inf"), _gamma_iv(A, a, Fraction(0), d)[0][1])
        return _gamma_iv(A, a, e, d)[0]

    if g == 0 or _decide(lambda A: gam(A, Fraction(0)), lambda A: A.q(g), digits) > 0:
        return Recheck(lo=mpf(0), hi=mpf(0), dps=30)  # gamma(0) >= rdp: the infimum is eps = 0
    return _bracket(gam, g, result, "the optimal conversion's eps")


@register("rdp.to_dp_delta")
def recheck_to_dp_delta(inputs: Mapping[str, Any], result: Mapping[str, Any]) -> Recheck:
    """delta at one order: classic exp(-(alpha-1)(eps-rdp)) and Balle
    zeta e^((alpha-1)(rdp-eps)), each capped at 1 (a delta is a probability), in MPFR
    directed rounding: the cap is decided on the exact rationals (classic) or on an
    enclosure of the exponent that excludes 0 (Balle); an exponent below MPFR's range
    gives [0, least positive], never a floor. Optimal (ABC Thm 3 with eq. 10): the smallest
    delta with gamma_alpha^eps(delta) >= rdp; gamma is non-decreasing in delta (a larger
    delta is a weaker target), so gamma(lo) < rdp < gamma(hi) at the recorded ends proves
    the bracket (:func:`_gamma_iv`, directed rounding); rdp = 0 gives delta = 0."""
    c = _conv_name(inputs)
    # alpha > 1, rdp >= 0, eps >= 0: certificate.ranges, before any route
    a, g, e = exact_input(inputs, "alpha"), exact_input(inputs, "rdp"), exact_input(inputs, "eps")
    digits = needed_digits(result)
    one = Recheck(lo=mpf(1), hi=mpf(1), dps=30)
    # a delta capped at 1 is exactly 1: the enclosure is the point [1, 1], not 1 +- err
    # (which the producer's exact [1, 1] could never contain)
    if c == "classic":
        if e <= g:  # exp(-(alpha - 1)(eps - rdp)) >= 1, decided on the exact rationals
            return one
        return enclose(lambda A: A.exp(A.q(-(a - 1) * (e - g))), digits)
    if c == "balle":
        def f(A: Arith) -> Iv:
            x = _balle_delta_exponent(A, a, g, e)
            if x[0] >= 0:
                return (mpfr(1), mpfr(1))
            v = A.exp(x)
            return (v[0], min(v[1], mpfr(1)))

        r = enclose(f, digits)
        return one if r.lo == 1 else r
    if g == 0:  # an (alpha, 0)-RDP pair has P = Q: (eps, 0)-DP
        return Recheck(lo=mpf(0), hi=mpf(0), dps=30)

    def gam(A: Arith, x: Fraction) -> Iv:
        if x >= 1:
            raise CouldNotReprove("a recorded optimal delta >= 1 is not a bracket of the root")
        return _gamma_iv(A, a, e, x)[0]

    return _bracket(gam, g, result, "the optimal conversion's delta")


def _bracket(f: Callable[[Arith, Fraction], Iv], target: Fraction, result: Mapping[str, Any], what: str) -> Recheck:
    """The root r = inf{x : f(x) >= target} of a non-decreasing f, enclosed by the one rule for
    roots (:func:`~dpverify.recheck.verify.root_enclosure`): f(x) < target proves r >= x (x is below
    the up-set {f >= target}), f(x) > target proves r <= x; each decided on enclosures up to 4096
    bits (:func:`_decide`: bounded work). The recorded ends (read inward) are tried first; where
    one does not hold, a proof just past the other end makes the enclosure disjoint from the
    recorded one, which the acceptance rule refuses (exit 1), and otherwise it answers exit 3."""
    enc = result.get("enclosure")
    if _frac_bound(result, "lo", "c") is None or _frac_bound(result, "hi", "f") is None:
        raise CouldNotReprove(f"{what}: the recorded enclosure has no finite ends to bracket the root")
    digits = needed_digits(result) + 5

    def at_least(x: Fraction) -> bool:
        return _decide(lambda A: f(A, x), lambda A: A.q(target), digits) < 0

    def at_most(x: Fraction) -> bool:
        return _decide(lambda A: f(A, x), lambda A: A.q(target), digits) > 0

    lo_i, hi_i = root_enclosure(enc, at_least, at_most)
    return Recheck(lo=lo_i, hi=hi_i, dps=digits + 20)


# --------------------------------------------------------------------------- ABC Fig 2 quantities


def _gauss_mech(sigma: Fraction, T: int) -> _Mech:
    return _Mech({"mechanism": "gaussian", "noise_multiplier": f"{sigma.numerator}/{sigma.denominator}",
                  "compositions": T})


def _balle_float_inf(rho_t: float, d: float) -> float:
    """The order in (1, 1/delta] where Balle's conversion of alpha rho T is least, by
    golden-section search in log2(alpha - 1) on floats (only chooses)."""
    hi_t = math.log2(1 / d - 1)

    def h(t: float) -> float:
        a = 1 + 2.0 ** t
        return rho_t * a + math.log1p(-1 / a) - (math.log(d) + math.log(a)) / (a - 1)

    with mpmath.workdps(15):  # a proposal on doubles' worth of digits
        t = float(_golden(lambda x: h(float(x)), mpf(-20), mpf(hi_t), 120)[0])
    return min(1 + 2.0 ** t, 1 / d)


def _abc_upper(A: Arith, sigma: Fraction, T: int, d: Fraction) -> Iv:
    """Balle's conversion of the T-fold Gaussian at one order <= 1/delta (any such order
    bounds ABC Lemma 2's eps_0 = inf over (1, 1/delta] from above): the float proposal,
    polished by golden-section search on the midpoints of A's enclosures (only chooses)."""
    rho_t = T / (2 * float(sigma) ** 2)
    mech = _gauss_mech(sigma, T)
    a0 = min(Fraction(_balle_float_inf(rho_t, float(d))), 1 / d)

    def h(x: Fraction) -> mpfr:
        return _eps_at(A, mech, "balle", x, d)[0]  # (Python's mpfr operators round to 53 bits)

    lo_a, hi_a = max(a0 - a0 / 10**6, (1 + a0) / 2), min(a0 + a0 / 10**6, 1 / d)
    g = Fraction(618034, 1000000)
    for _ in range(min(200, A.prec // 2)):
        x1, x2 = _dyadic_round(hi_a - g * (hi_a - lo_a), A.prec), _dyadic_round(lo_a + g * (hi_a - lo_a), A.prec)
        if not lo_a < x1 < x2 < hi_a:
            break
        if h(x1) <= h(x2):
            hi_a = x2
        else:
            lo_a = x1
    best = min((a0, _dyadic_round((lo_a + hi_a) / 2, A.prec)), key=h)
    return _eps_at(A, mech, "balle", best, d)


def _abc_inf(sigma: Fraction, T: int, d: Fraction, digits: int) -> tuple[Fraction, Iv]:
    """(lo, upper enclosure): eps_0 = inf over alpha in (1, 1/delta] of Balle's conversion of
    alpha T / (2 sigma^2) (ABC Lemma 2) lies in [lo, hi], lo proved by the cells (over a
    superset of orders: the infimum over (1, 1/delta] is at least the one over more orders)."""
    A = arith(start_bits(digits + 6))
    hi = _abc_upper(A, sigma, T, d)
    lo = to_fraction(hi[1]) * (1 - Fraction(1, 10 ** (digits + 3)))
    lo = _dyadic_round(lo, int((digits + 6) * 3.33)) - Fraction(1, 1 << int((digits + 8) * 3.33))
    _prove_inf_at_least(_gauss_mech(sigma, T), "balle", lo, d, digits + 3, alpha_max=1 / d)
    return lo, hi


@register("rdp.abc_gain")
def recheck_abc_gain(inputs: Mapping[str, Any], result: Mapping[str, Any]) -> Recheck:
    """eps_MA - eps_0 at T (ABC eq. 23 against Lemma 2's eps_0): eps_MA = rho T + sqrt(4 rho T L)
    in directed rounding, eps_0 enclosed by :func:`_abc_inf`."""
    sigma, d = exact_input(inputs, "noise_multiplier"), exact_input(inputs, "delta")
    T = _count(inputs)
    if sigma <= 0 or not 0 < d < 1:
        raise MalformedCertificate("need noise_multiplier > 0, delta in (0, 1)")
    digits = needed_digits(result)
    lo, hi = _abc_inf(sigma, T, d, digits)
    A = arith(start_bits(digits + 6))
    rt = A.q(Fraction(T) / (2 * sigma * sigma))
    ma = A.add(rt, A.sqrt(A.scale2(A.mul(rt, A.neg(A.log(A.q(d)))), 2)))
    g = (A.dn.sub(ma[0], hi[1]), A.up.sub(ma[1], A.q(lo)[0]))
    return Recheck(lo=mpfr_to_mpf(g[0]), hi=mpfr_to_mpf(g[1]), dps=digits + 20)


@register("rdp.abc_extra_iterations")
def recheck_abc_extra(inputs: Mapping[str, Any], result: Mapping[str, Any]) -> Recheck:
    """T_0 - T_MA at equal eps (ABC Fig. 2): T_MA = floor(2 sigma^2 (sqrt(L + eps) - sqrt(L))^2)
    (the largest T with eq. 23 <= eps, its floor decided on an enclosure), T_0 the largest T with
    eps_0(T) <= eps (eps_0 non-decreasing in T: so is Balle's conversion at every order): proved
    by eps_0(T_0) <= eps (one order's value) and eps_0(T_0 + 1) > eps (the cells)."""
    sigma, d, e = (exact_input(inputs, k) for k in ("noise_multiplier", "delta", "eps"))
    if sigma <= 0 or not 0 < d < 1 or e <= 0:
        raise MalformedCertificate("need noise_multiplier > 0, delta in (0, 1), eps > 0")
    bits = 128
    while True:
        A = arith(bits)
        L = A.neg(A.log(A.q(d)))
        x = A.mul(A.q(2 * sigma * sigma), _square_nonneg(A, A.sub(A.sqrt(A.add(L, A.q(e))), A.sqrt(L))))
        if math.floor(to_fraction(x[0])) == math.floor(to_fraction(x[1])):
            t_ma = math.floor(to_fraction(x[0]))
            break
        if bits >= 4096:
            raise CouldNotReprove("floor(2 sigma^2 (sqrt(L + eps) - sqrt(L))^2) is not decided")
        bits *= 2
    if t_ma > 10**7:
        raise CouldNotReprove("the count is beyond the second route's cap 10^7")
    # proposal of T_0 on floats (only chooses), then the two proofs
    sf, df, ef = float(sigma), float(d), float(e)

    def inf_f(T: int) -> float:
        rt = T / (2 * sf * sf)
        a = _balle_float_inf(rt, df)
        return rt * a + math.log1p(-1 / a) - (math.log(df) + math.log(a)) / (a - 1)

    lo_t, hi_t = t_ma, 4 * t_ma + 10
    while inf_f(hi_t) <= ef:
        hi_t *= 2
        if hi_t > 10**8:
            raise CouldNotReprove("the count is beyond the second route's cap")
    while hi_t - lo_t > 1:
        m = (lo_t + hi_t) // 2
        lo_t, hi_t = (m, hi_t) if inf_f(m) <= ef else (lo_t, m)
    A = arith(start_bits(24))
    t0 = lo_t
    for _ in range(4):
        if _abc_upper(A, sigma, t0, d)[1] <= A.q(e)[0]:
            break
        t0 -= 1
    else:
        raise CouldNotReprove("eps_0 at the proposed count is not proved <= eps")
    # eps_0(t0 + 1) > eps: the cells prove eps_0 >= eps + a unit of 2^-100 relative
    target = e + e / (1 << 100)
    _prove_inf_at_least(_gauss_mech(sigma, t0 + 1), "balle", target, d, 24, alpha_max=1 / d)
    v = mpf(t0 - t_ma)
    return Recheck(lo=v, hi=v, dps=30)



def _square_nonneg(A: Arith, x: Iv) -> Iv:
    """x^2 of an enclosure of a non-negative number (sqrt(L + eps) > sqrt(L) here)."""
    return A.mul((max(x[0], mpfr(0)), x[1]), (max(x[0], mpfr(0)), x[1]))


# --------------------------------------------------------------------------- mpmath proposals
# only choose points (orders, p) at which the directed routes above prove; nothing accepts on them


def _golden(h: Callable[[mpf], mpf], tl: mpf, th: mpf, iters: int) -> tuple[mpf, mpf]:
    """(argmin, min) of a unimodal h on [tl, th] by golden-section search."""
    gr = (mpmath.sqrt(5) - 1) / 2
    x1, x2 = th - gr * (th - tl), tl + gr * (th - tl)
    f1, f2 = h(x1), h(x2)
    for _ in range(iters):
        if f1 <= f2:
            th, x2, f2 = x2, x1, f1
            x1 = th - gr * (th - tl)
            f1 = h(x1)
        else:
            tl, x1, f1 = x1, x2, f2
            x2 = tl + gr * (th - tl)
            f2 = h(x2)
    return (tl + th) / 2, min(f1, f2)
