"""Second route for the LT transform claims: the integrals in closed form,
evaluated in MPFR directed rounding (:mod:`.core`); no quadrature, no flint, no
dpverify.transforms.

Every integrand is, piece by piece between the kinks (exact rationals), a sum of
terms c e^(k t) (k an exact, possibly complex, rational; c an enclosed
constant), whose integral over [x0, x1] is c (e^(k x1) - e^(k x0)) / k (x1 - x0
when k = 0; a bound at +-inf contributes 0 where Re(k x) -> -inf, and the
integral diverges otherwise), or, for the Gaussian, one of the two Gaussian
integrals derived below by parts. Complex numbers are rectangles of two MPFR
intervals; cos and sin at an enclosed point are widened by the interval's width
(both are 1-Lipschitz). The residual and the partial transform are therefore
enclosed, not estimated: the accept is a proof.

Gaussian (privacy loss Z ~ N(h, a^2), h = a^2/2, under P; Z' ~ N(h, a^2) under Q
by symmetry), with Phi the normal cdf and phi its density:

* eq22: int_0^inf e^-t Phi((h - eps - t)/a) dt
  = Phi((h - eps)/a) - e^(eps - h + a^2/2) Phi((h - eps)/a - a)
  (by parts, then w = (t - h + eps)/a and e^(-a w) phi(w) = e^(a^2/2) phi(w + a));
* eq23: e^eps int_0^inf e^t Phi(c - t/a) dt, c = -(eps + h)/a,
  = e^eps (e^(a c + a^2/2) Phi(c + a) - Phi(c));
* eq27 and the partial transform: with delta'(t) = -e^t Phi(-t/a - a/2),
  int_x0^x1 e^((q-1)t) delta(t) dt = [e^((q-1)t) delta(t)/(q-1)] + J/(q-1),
  J = [e^(qt) Phi(-t/a - a/2)/q] + (a/(q a)) e^(q(q-1)h) [Phi(u - q a)]_{u(x0)}^{u(x1)},
  u(t) = t/a + a/2 (e^(q a u - q h) phi(u) = e^(q(q-1)h) phi(u - q a)); over the
  whole line (Re q > 1) every bracket but the last vanishes and the integral is
  e^(q(q-1)h) / (q(q-1)) (complex q: only this whole-line form is used).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Callable, Mapping, Optional

import gmpy2
from gmpy2 import mpfr

from ..errors import CouldNotReprove, MalformedCertificate
from .core import Arith, Iv, arith, mpfr_to_mpf
from .gdp import MAX_BITS, _square, delta_mu_iv, enclose, exact_input
from .profiles import _ONE, _ZERO, hinge_sum
from .verify import Recheck, needed_digits, register

F = Fraction
C = tuple  # (re: Iv, im: Iv)
INF = None  # an infinite bound of integration


def _c(A: Arith, x: Iv) -> C:
    return (x, _ZERO)


def cadd(A: Arith, x: C, y: C) -> C:
    return (A.add(x[0], y[0]), A.add(x[1], y[1]))


def csub(A: Arith, x: C, y: C) -> C:
    return (A.sub(x[0], y[0]), A.sub(x[1], y[1]))


def cmul(A: Arith, x: C, y: C) -> C:
    return (A.sub(A.mul(x[0], y[0]), A.mul(x[1], y[1])), A.add(A.mul(x[0], y[1]), A.mul(x[1], y[0])))


def cdiv(A: Arith, x: C, y: C) -> C:
    """x / y = x conj(y) / |y|^2 (ZeroDivisionError when |y|^2's enclosure reaches 0)."""
    n = A.add(_square(A, y[0]), _square(A, y[1]))
    num = cmul(A, x, (y[0], A.neg(y[1])))
    return (A.div(num[0], n), A.div(num[1], n))


def _trig(A: Arith, y: Iv) -> tuple[Iv, Iv]:
    """cos and sin on the interval y: their values at y.lo rounded outward, widened by
    the width of y (|cos' |, |sin'| <= 1)."""
    w = A.up.sub(y[1], y[0])
    c = (A.dn.sub(A.dn.cos(y[0]), w), A.up.add(A.up.cos(y[0]), w))
    s = (A.dn.sub(A.dn.sin(y[0]), w), A.up.add(A.up.sin(y[0]), w))
    return c, s


def cexp(A: Arith, z: C) -> C:
    m = A.exp(z[0])
    if z[1] == _ZERO:
        return (m, _ZERO)
    c, s = _trig(A, z[1])
    return (A.mul(m, c), A.mul(m, s))


def _cq(A: Arith, k: tuple) -> C:
    return (A.q(k[0]), A.q(k[1]))


def exp_integral(A: Arith, k: tuple, x0: Optional[F], x1: Optional[F]) -> C:
    """int_x0^x1 e^(k t) dt for an exact complex rational k = (re, im) and exact
    bounds (None: -inf for x0, +inf for x1, which need Re k > 0 resp. < 0)."""
    if k == (0, 0):
        if x0 is None or x1 is None:
            raise CouldNotReprove("an integral of a constant over an infinite range diverges")
        return _c(A, A.q(x1 - x0))

    def at(x: Optional[F], inf_sign: int) -> C:
        if x is None:
            if not k[0] * inf_sign < 0:
                raise CouldNotReprove("the transform diverges (outside its region of convergence)")
            return (_ZERO, _ZERO)
        return cexp(A, (A.q(k[0] * x), A.q(k[1] * x)))

    return cdiv(A, csub(A, at(x1, 1), at(x0, -1)), _cq(A, k))


def piece_integral(A: Arith, terms: list, x0: Optional[F], x1: Optional[F]) -> C:
    """sum over terms (c: C, k) of c int_x0^x1 e^(k t) dt (an empty range gives 0)."""
    if x0 is not None and x1 is not None and x1 <= x0:
        return (_ZERO, _ZERO)
    out = (_ZERO, _ZERO)
    for c, k in terms:
        out = cadd(A, out, cmul(A, c, exp_integral(A, k, x0, x1)))
    return out


def _clip(lo: Optional[F], hi: Optional[F], a: Optional[F], b: Optional[F]) -> tuple:
    """[lo, hi] intersected with [a, b] (None: infinite)."""
    x0 = a if lo is None else (lo if a is None else max(lo, a))
    x1 = b if hi is None else (hi if b is None else min(hi, b))
    return x0, x1


# --------------------------------------------------------------------------- mechanisms


def _mech(inputs: Mapping[str, Any]) -> tuple[str, F]:
    name = inputs.get("mechanism")
    if name not in ("gaussian", "laplace", "rr"):
        raise MalformedCertificate(f"unknown mechanism {name!r}")
    a = exact_input(inputs, "param")
    if a <= 0:
        raise MalformedCertificate("inputs.param must be > 0")
    if a > 10 ** 6:
        raise CouldNotReprove("inputs.param beyond 10^6 is outside the second route's range")
    return name, a


def _rr_p(A: Arith, e0: F) -> Iv:
    return A.div(_ONE, A.add(_ONE, A.exp(A.q(-e0))))  # e^e0 / (1 + e^e0)


def profile_iv(A: Arith, name: str, a: F, t: F) -> Iv:
    """delta(t) of the mechanism, from its own formula (not from the integrals)."""
    if name == "gaussian":
        return delta_mu_iv(A, a, t)
    if name == "laplace":
        if t < -a:
            return A.neg(A.expm1(A.q(t)))
        if t < a:
            return A.neg(A.expm1(A.q((t - a) / 2)))
        return _ZERO
    p = _rr_p(A, a)
    return hinge_sum(A, [p, A.sub(_ONE, p)], [A.sub(_ONE, p), p], A.exp(A.q(t)))


def _profile_pieces(A: Arith, name: str, a: F) -> list:
    """delta(t) as pieces (x0, x1, [(c, k)]) with delta(t) = sum c e^(k t) on (x0, x1)
    (laplace, rr; real k)."""
    one = _c(A, _ONE)
    if name == "laplace":
        # 1 - e^t below -a; 1 - e^((t - a)/2) on [-a, a); 0 beyond
        return [(None, -a, [(one, (F(0), F(0))), (_c(A, A.neg(_ONE)), (F(1), F(0)))]),
                (-a, a, [(one, (F(0), F(0))), (_c(A, A.neg(A.exp(A.q(-a / 2)))), (F(1, 2), F(0)))])]
    p = _rr_p(A, a)
    # (p - e^t (1-p))_+ + (1 - p - e^t p)_+: 1 - e^t below -a; p - (1 - p) e^t on [-a, a)
    return [(None, -a, [(one, (F(0), F(0))), (_c(A, A.neg(_ONE)), (F(1), F(0)))]),
            (-a, a, [(_c(A, p), (F(0), F(0))), (_c(A, A.neg(A.sub(_ONE, p))), (F(1), F(0)))])]


def weighted_profile_integral(A: Arith, name: str, a: F, q: tuple, x0: Optional[F], x1: Optional[F]) -> C:
    """int_x0^x1 e^((q-1)t) delta(t) dt in closed form (module docstring)."""
    k = (q[0] - 1, q[1])
    if name != "gaussian":
        out = (_ZERO, _ZERO)
        for lo, hi, terms in _profile_pieces(A, name, a):
            y0, y1 = _clip(lo, hi, x0, x1)
            shifted = [(c, (kk[0] + k[0], kk[1] + k[1])) for c, kk in terms]
            out = cadd(A, out, piece_integral(A, shifted, y0, y1))
        return out
    h = a * a / 2
    if x0 is None and x1 is None:
        if not q[0] > 1:
            raise CouldNotReprove("the transform diverges (outside its region of convergence Re q > 1)")
        e = (q[0] * (q[0] - 1) - q[1] * q[1], q[1] * (2 * q[0] - 1))  # q (q - 1) exactly
        return cdiv(A, cexp(A, (A.q(e[0] * h), A.q(e[1] * h))), _cq(A, e))
    if q[1] != 0 or x0 is None or x1 is None:
        raise CouldNotReprove("the Gaussian's transform over a half-line or at a complex order is not "
                              "re-derived in closed form")
    Q = q[0]
    if Q in (0, 1):
        raise CouldNotReprove("the closed form needs q not in {0, 1}")
    Aq = A.q

    def bracket1(t: F) -> Iv:  # e^((q-1)t) delta(t) / (q-1)
        return A.div(A.mul(A.exp(Aq((Q - 1) * t)), delta_mu_iv(A, a, t)), Aq(Q - 1))

    def bracket2(t: F) -> Iv:  # e^(qt) Phi(-t/a - a/2) / q
        return A.div(A.mul(A.exp(Aq(Q * t)), A.ncdf(Aq(-t / a - a / 2))), Aq(Q))

    def gauss(t: F) -> Iv:  # Phi(u(t) - q a)
        return A.ncdf(Aq(t / a + a / 2 - Q * a))

    K = A.mul(A.div(A.exp(Aq(Q * (Q - 1) * h)), Aq(Q)), A.sub(gauss(x1), gauss(x0)))
    J = A.add(A.sub(bracket2(x1), bracket2(x0)), K)
    return _c(A, A.add(A.sub(bracket1(x1), bracket1(x0)), A.div(J, Aq(Q - 1))))


def tail_integral(A: Arith, name: str, a: F, eps: F, ident: str) -> Iv:
    """eq22: int_0^inf e^-t Pr_P[Z > t + eps] dt; eq23: e^eps int_0^inf e^t Pr_Q[Z' <= -t - eps] dt."""
    if name == "gaussian":
        h = a * a / 2
        if ident == "eq22":
            x = (h - eps) / a
            return A.sub(A.ncdf(A.q(x)), A.mul(A.exp(A.q(eps - h + a * a / 2)), A.ncdf(A.q(x - a))))
        c = -(eps + h) / a
        inner = A.sub(A.mul(A.exp(A.q(a * c + a * a / 2)), A.ncdf(A.q(c + a))), A.ncdf(A.q(c)))
        return A.mul(A.exp(A.q(eps)), inner)
    # the loss is piecewise constant (rr) or piecewise exponential (laplace) in x:
    # Pr_P[Z > x] = 1 (x < -a), m(x) (-a <= x < a), 0 (x >= a), and
    # Pr_Q[Z' <= y] = 0 (y < -a), n(y) (-a <= y < a), 1 (y >= a)
    one = _c(A, _ONE)
    if name == "laplace":
        # m(x) = 1 - e^(-(a - x)/2)/2; n(y) = e^(-(a - y)/2)/2
        half = A.scale2(_ONE, -1)
        if ident == "eq22":  # x = t + eps: terms in t
            mid = [(one, (F(-1), F(0))),
                   (_c(A, A.neg(A.mul(half, A.exp(A.q(-(a - eps) / 2))))), (F(-1, 2), F(0)))]
        else:  # y = -t - eps: e^t n(y) = e^(-(a + eps)/2) e^(t/2) / 2
            mid = [(_c(A, A.mul(half, A.exp(A.q(-(a + eps) / 2)))), (F(1, 2), F(0)))]
    else:
        p = _rr_p(A, a)
        mid = [(_c(A, p), (F(-1), F(0)))] if ident == "eq22" else [(_c(A, A.sub(_ONE, p)), (F(1), F(0)))]
    if ident == "eq22":  # t in [0, inf): x < -a for t < -a - eps; mid for t < a - eps
        parts = [(None, -a - eps, [(one, (F(-1), F(0)))]), (-a - eps, a - eps, mid)]
    else:  # y >= a for t <= -a - eps (integrand e^t); mid for t < a - eps; 0 beyond
        parts = [(None, -a - eps, [(one, (F(1), F(0)))]), (-a - eps, a - eps, mid)]
    out = (_ZERO, _ZERO)
    for lo, hi, terms in parts:
        y0, y1 = _clip(lo, hi, F(0), None)
        out = cadd(A, out, piece_integral(A, terms, y0, y1))
    v = out[0]
    return A.mul(A.exp(A.q(eps)), v) if ident == "eq23" else v


def _cabs(A: Arith, z: C) -> Iv:
    return A.sqrt(A.add(_square(A, z[0]), _square(A, z[1])))


def moment(A: Arith, name: str, a: F, q: tuple) -> C:
    """E_Q[(P/Q)^q] from each mechanism's pmf / density (its own formula)."""
    if name == "gaussian":
        e = (q[0] * (q[0] - 1) - q[1] * q[1], q[1] * (2 * q[0] - 1))
        h = a * a / 2
        return cexp(A, (A.q(e[0] * h), A.q(e[1] * h)))
    if name == "laplace":
        # q/(2q-1) e^((q-1)a) + (q-1)/(2q-1) e^(-q a)
        qq = _cq(A, q)
        two_q1 = _cq(A, (2 * q[0] - 1, 2 * q[1]))
        t1 = cmul(A, cdiv(A, qq, two_q1), cexp(A, (A.q((q[0] - 1) * a), A.q(q[1] * a))))
        t2 = cmul(A, cdiv(A, _cq(A, (q[0] - 1, q[1])), two_q1), cexp(A, (A.q(-q[0] * a), A.q(-q[1] * a))))
        return cadd(A, t1, t2)
    # rr: p^q (1-p)^(1-q) + (1-p)^q p^(1-q) = e^(q log p + (1-q) log(1-p)) + ...
    p = _rr_p(A, a)
    lp, lq = A.log(p), A.log(A.sub(_ONE, p))

    def term(x: Iv, y: Iv) -> C:
        re = A.add(A.mul(A.q(q[0]), x), A.mul(A.q(1 - q[0]), y))
        im = A.sub(A.mul(A.q(q[1]), x), A.mul(A.q(q[1]), y))
        return cexp(A, (re, im))

    return cadd(A, term(lp, lq), term(lq, lp))


def _tight(f: Callable[[Arith], Iv], width_bits: int = 200) -> Recheck:
    """f at rising precision until its enclosure is narrower than 2^-width_bits in
    absolute terms (a residual near 0 is never relatively narrow) or the cap."""
    bits = 256
    while True:
        try:
            v = f(arith(bits))
        except ZeroDivisionError:
            raise CouldNotReprove("a divisor's enclosure reaches 0") from None
        ok = not (gmpy2.is_nan(v[0]) or gmpy2.is_nan(v[1])) and v[1] - v[0] <= mpfr(2) ** -width_bits
        if ok or bits >= MAX_BITS:
            break
        bits *= 2
    if gmpy2.is_nan(v[0]) or gmpy2.is_nan(v[1]):
        raise CouldNotReprove("the directed-rounding evaluation gave no enclosure")
    return Recheck(lo=mpfr_to_mpf(v[0]), hi=mpfr_to_mpf(v[1]), dps=60)


@register("lt.residual")
def recheck_residual(inputs: Mapping[str, Any], result: Mapping[str, Any]) -> Recheck:
    """The residual of LT eq. (22) / (23) (integral minus profile) or of eq. (27)
    (|q(q-1) int e^((q-1)t) delta(t) dt - E_q|), each integral in closed form
    (module docstring) and each side from its own formula, in MPFR directed rounding."""
    name, a = _mech(inputs)
    ident = inputs.get("identity")
    if ident in ("eq22", "eq23"):
        eps = exact_input(inputs, "eps")
        if abs(eps) > 10 ** 6:
            raise CouldNotReprove("|eps| beyond 10^6 is outside the second route's range")
        return _tight(lambda A: A.sub(tail_integral(A, name, a, eps, ident), profile_iv(A, name, a, eps)))
    if ident == "eq27":
        q = (exact_input(inputs, "q_re"), exact_input(inputs, "q_im"))
        if abs(q[0]) > 10 ** 4 or abs(q[1]) > 10 ** 4:
            raise CouldNotReprove("|q| beyond 10^4 is outside the second route's range")

        def f(A: Arith) -> Iv:
            v = weighted_profile_integral(A, name, a, q, None, None)
            e = (q[0] * (q[0] - 1) - q[1] * q[1], q[1] * (2 * q[0] - 1))
            r = _cabs(A, csub(A, cmul(A, _cq(A, e), v), moment(A, name, a, q)))
            return (max(r[0], mpfr(0)), r[1])

        return _tight(f)
    raise MalformedCertificate(f"unknown identity {ident!r}")


@register("lt.partial-transform")
def recheck_partial(inputs: Mapping[str, Any], result: Mapping[str, Any]) -> Recheck:
    """q(q-1) int_{-A}^{B} e^((q-1)t) delta(t) dt at a real order q, the integral in
    closed form (module docstring) in MPFR directed rounding."""
    name, a = _mech(inputs)
    q = exact_input(inputs, "q")
    lo, hi = inputs.get("A"), inputs.get("B")
    if not isinstance(lo, int) or not isinstance(hi, int) or isinstance(lo, bool) or isinstance(hi, bool):
        raise MalformedCertificate("A and B must be integers")
    if abs(q) > 10 ** 4 or abs(lo) > 10 ** 5 or abs(hi) > 10 ** 5:
        raise CouldNotReprove("q beyond 10^4 or a range beyond 10^5 is outside the second route's range")

    def f(A: Arith) -> Iv:
        v = weighted_profile_integral(A, name, a, (q, F(0)), F(-lo), F(hi))[0]
        return A.mul(A.q(q * (q - 1)), v)

    return enclose(f, needed_digits(result))
