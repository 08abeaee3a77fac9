"""Second route for ``dp.profile`` certificates: each mechanism's privacy profile
enclosed in MPFR directed rounding (:mod:`.core`), dispatched on ``inputs.mechanism``.

Every profile here is a closed form in exp, expm1, log, erfc / Phi and the four
arithmetic operations of exact rational inputs, evaluated in interval arithmetic
whose every operation MPFR rounds outward; by inclusion isotonicity the interval
holds the exact value, and the precision rises until it is narrow
(:func:`.gdp.enclose`). Nothing is estimated: the accept is a proof.

* ``gaussian``: GDPT eq. 2, delta_mu(eps) (:func:`.gdp.delta_mu_iv`), mu = Delta / sigma exact.
* ``laplace``: the loss (|x - D| - |x|)/b exceeds eps iff x < x0 = (D - b eps)/2
  (|eps| < D/b), so delta(eps) = F_0(x0) - e^eps F_D(x0) with the Laplace cdfs
  F_0(x0) = 1 - e^(-x0/b)/2 and F_D(x0) = e^((x0 - D)/b)/2; 0 for eps >= D/b and
  1 - e^eps below -D/b.
* ``pure``, ``approx``: GDPT's 4-output mechanism summed output by output,
  sum_i (p_i - e^eps q_i)_+ (GDPT Thm 3.1's tight pair).
* ``rr``: the two outputs of randomized response, sum_i (p_i - e^eps q_i)_+.
* ``subsampled``: q delta_base(log(1 + (e^eps - 1)/q)) for eps >= 0 (the base's
  e^eps' is 1 + expm1(eps)/q itself: no logarithm), the (0, delta(0)) worst case
  1 - (1 - delta(0)) e^eps below 0.
* ``sgd-example``, ``icea-example``: the naive profiles exp(-eps^2) and
  min(1, 4 e^-2 / eps); refined (GDPT App B): eps_i isolated by bisection on a
  proved sign change of k(x) = f'(x)(1 + e^x) + e^x (1 - f(x)) in [1, 3/2] (the
  producer's bracket; k < 0 before eps_i and > 0 after), and min(the 4-output worst
  case of (eps_i, f(eps_i)), f(eps)) enclosed over the whole bracket.
* ``expr``: the user's expression walked on intervals (exp, expm1, log, log1p,
  sqrt, erfc, Phi, abs, min, max, + - * /, powers: integer exponents by repeated
  multiplication, others as exp(b log a) for a > 0), after the size, depth and
  magnitude caps of :mod:`.limits`; an operation undefined somewhere on its
  argument's enclosure (a log reaching 0, a division by an interval holding 0)
  answers "could not re-prove" (exit 3), never an estimate.

:data:`PROFILE_RECHECKS` keeps the mpmath profiles that the GDP-transformation
re-check (:mod:`.gdpt`) walks; the ``dp.profile`` accept uses only
:data:`PROFILE_IVS`.
"""

from __future__ import annotations

import ast
from fractions import Fraction
from functools import lru_cache
from typing import Any, Callable, Mapping

import gmpy2
import mpmath
from gmpy2 import mpfr
from mpmath import mpf

from ..errors import CouldNotReprove, MalformedCertificate
from .core import Arith, Iv
from .gdp import _square, delta_mu_iv, enclose, exact_input, side, fraction_to_mpf
from .limits import MAX_EXP_ARGUMENT, check_expression, guard_exponent
from .verify import Recheck, needed_digits, register

__all__ = ["register_profile_recheck", "PROFILE_RECHECKS", "PROFILE_IVS", "four_output_iv", "expr_over"]

#: mechanism name -> f(inputs) -> (eps -> mpf at the ambient mpmath precision); used by gdpt
ProfileRecheck = Callable[[Mapping[str, Any]], Callable[[Fraction], mpf]]
PROFILE_RECHECKS: dict[str, ProfileRecheck] = {}

#: mechanism name -> f(inputs) -> (A, eps) -> directed-rounding enclosure of delta(eps)
IvProfile = Callable[[Arith, Fraction], Iv]
PROFILE_IVS: dict[str, Callable[[Mapping[str, Any]], IvProfile]] = {}

_ZERO = (mpfr(0), mpfr(0))
_ONE = (mpfr(1), mpfr(1))
#: function -> (the end of its real domain, whether the end itself is outside): log needs x > 0,
#: log1p x > -1, sqrt x >= 0; an argument enclosure wholly past the end is undefined (exit 2)
_DOMAIN_EDGE = {"log": (0, True), "log1p": (-1, True), "sqrt": (0, False)}


def register_profile_recheck(name: str) -> Callable[[ProfileRecheck], ProfileRecheck]:
    def deco(fn: ProfileRecheck) -> ProfileRecheck:
        PROFILE_RECHECKS[name] = fn
        return fn

    return deco


def _iv(name: str):
    def deco(fn):
        PROFILE_IVS[name] = fn
        return fn

    return deco


@register("dp.profile")
def recheck_profile(inputs: Mapping[str, Any], result: Mapping[str, Any]) -> Recheck:
    """delta(eps) of the named mechanism, its closed form enclosed in MPFR directed
    rounding (the module docstring lists each mechanism's formula), precision rising
    until the enclosure is narrow."""
    name = inputs.get("mechanism")
    if name not in PROFILE_IVS:
        raise MalformedCertificate(f"no independent re-check for mechanism {name!r}")
    eps = exact_input(inputs, "eps")
    profile = PROFILE_IVS[name](inputs)

    def f(A: Arith) -> Iv:
        try:
            return profile(A, eps)
        except (ZeroDivisionError, ValueError) as e:
            raise CouldNotReprove(f"dp.profile of {name}: an operation is undefined on its argument's "
                                  f"enclosure ({e})") from None

    return enclose(f, needed_digits(result))


# --------------------------------------------------------------------------- helpers


def pos(x: Iv) -> Iv:
    """(x)_+ of an interval."""
    return (max(x[0], mpfr(0)), max(x[1], mpfr(0)))


def _scaled(A: Arith, E: Iv, q: Iv) -> Iv:
    """E q for q >= 0; an exact zero q gives 0 even where E overflowed to +inf."""
    if q[1] == 0:
        return _ZERO
    return A.mul(E, q)


def hinge_sum(A: Arith, P: list, Q: list, E: Iv) -> Iv:
    """sum_i (p_i - E q_i)_+ (the hockey-stick divergence of two pmfs at E = e^eps)."""
    return A.fsum([pos(A.sub(p, _scaled(A, E, q))) for p, q in zip(P, Q)])


def four_output_iv(A: Arith, E0: Iv, d0: Iv, E: Iv) -> Iv:
    """GDPT's 4-output mechanism of (eps0, delta0) at E = e^eps, output by output:
    P = (d0, (1-d0) a, (1-d0) b, 0), Q = (0, (1-d0) b, (1-d0) a, d0) with
    a = e^eps0/(1 + e^eps0) = 1/(1 + e^-eps0), b = 1/(1 + e^eps0)."""
    a = A.div(_ONE, A.add(_ONE, A.div(_ONE, E0)))
    b = A.div(_ONE, A.add(_ONE, E0))
    c = A.sub(_ONE, d0)
    ca, cb = A.mul(c, a), A.mul(c, b)
    return hinge_sum(A, [d0, ca, cb, _ZERO], [_ZERO, cb, ca, d0], E)


def _below_zero(A: Arith, nonneg: Callable[[Arith, Fraction], Iv], eps: Fraction) -> Iv:
    """A guarantee's profile below 0: the (0, delta(0)) worst case 1 - (1 - delta(0)) e^eps."""
    if eps >= 0:
        return nonneg(A, eps)
    d0 = nonneg(A, Fraction(0))
    return A.sub(_ONE, A.mul(A.sub(_ONE, d0), A.exp(A.q(eps))))


# --------------------------------------------------------------------------- mechanisms


@_iv("gaussian")
def _gaussian(inputs: Mapping[str, Any]) -> IvProfile:
    if "mu" in inputs:
        mu = exact_input(inputs, "mu")
    else:
        sens = exact_input(inputs, "sensitivity") if "sensitivity" in inputs else Fraction(1)
        mu = sens / exact_input(inputs, "noise_multiplier")
    if mu <= 0:
        raise MalformedCertificate("the Gaussian needs mu > 0")
    return lambda A, eps: delta_mu_iv(A, mu, eps)


@_iv("laplace")
def _laplace(inputs: Mapping[str, Any]) -> IvProfile:
    b = exact_input(inputs, "scale")
    d = exact_input(inputs, "sensitivity") if "sensitivity" in inputs else Fraction(1)
    if b <= 0 or d <= 0:
        raise MalformedCertificate("the Laplace mechanism needs scale > 0 and sensitivity > 0")
    r = d / b

    def f(A: Arith, eps: Fraction) -> Iv:
        if eps >= r:
            return _ZERO
        if eps < -r:
            return A.neg(A.expm1(A.q(eps)))
        # F_0(x0) = 1 - e^(-(r - eps)/2)/2, e^eps F_D(x0) = e^eps e^((-r - eps)/2)/2
        f0 = A.sub(_ONE, A.scale2(A.exp(A.q(-(r - eps) / 2)), -1))
        fd = A.scale2(A.mul(A.exp(A.q(eps)), A.exp(A.q((-r - eps) / 2))), -1)
        return pos(A.sub(f0, fd))

    return f


@_iv("pure")
def _pure(inputs: Mapping[str, Any]) -> IvProfile:
    e0 = exact_input(inputs, "eps0")
    return lambda A, eps: four_output_iv(A, A.exp(A.q(e0)), _ZERO, A.exp(A.q(eps)))


@_iv("approx")
def _approx(inputs: Mapping[str, Any]) -> IvProfile:
    e0, d0 = exact_input(inputs, "eps0"), exact_input(inputs, "delta0")
    return lambda A, eps: four_output_iv(A, A.exp(A.q(e0)), A.q(d0), A.exp(A.q(eps)))


@_iv("rr")
def _rr(inputs: Mapping[str, Any]) -> IvProfile:
    p = exact_input(inputs, "p")
    if not 0 <= p <= 1:
        raise MalformedCertificate("randomized response needs p in [0, 1]")

    def f(A: Arith, eps: Fraction) -> Iv:
        P, Q = [A.q(p), A.q(1 - p)], [A.q(1 - p), A.q(p)]
        return hinge_sum(A, P, Q, A.exp(A.q(eps)))

    return f


@_iv("subsampled")
def _subsampled(inputs: Mapping[str, Any]) -> IvProfile:
    q = exact_input(inputs, "rate")
    e0, d0 = exact_input(inputs, "eps0"), exact_input(inputs, "delta0")
    if not 0 < q <= 1:
        raise MalformedCertificate("the subsampled mechanism needs a rate in (0, 1]")

    def nonneg(A: Arith, eps: Fraction) -> Iv:
        Eb = A.add(_ONE, A.div(A.expm1(A.q(eps)), A.q(q)))  # e^(log(1 + (e^eps - 1)/q))
        return A.mul(A.q(q), four_output_iv(A, A.exp(A.q(e0)), A.q(d0), Eb))

    return lambda A, eps: _below_zero(A, nonneg, eps)


# ---- GDPT's trade-off examples (GDPT Sec 2, App B)


def _k_sign(name: str, x: Fraction) -> Callable[[Arith], Iv]:
    """k(x) = f'(x)(1 + e^x) + e^x (1 - f(x)) at the exact point x (GDPT App B)."""
    def k(A: Arith) -> Iv:
        X = A.q(x)
        ex = A.exp(X)
        f = _naive_iv(A, name, X)
        if name == "sgd-example":
            fd = A.neg(A.scale2(A.mul(X, f), 1))  # -2x e^(-x^2)
        else:
            fd = A.neg(A.div(_icea_k(A), A.mul(X, X)))  # -K / x^2 (x > K: f = K/x < 1)
        return A.add(A.mul(fd, A.add(_ONE, ex)), A.mul(ex, A.sub(_ONE, f)))

    return k


def _icea_k(A: Arith) -> Iv:
    return A.scale2(A.exp(A.q(-2)), 2)  # K = 4 e^-2


def _naive_iv(A: Arith, name: str, X: Iv) -> Iv:
    """The naive profile on an interval X of eps >= 0: exp(-eps^2) (sgd) or
    min(1, K/eps) (icea; 1 at eps = 0), both non-increasing."""
    if name == "sgd-example":
        sq = (A.dn.square(X[0]), A.up.square(X[1]))
        return A.exp(A.neg(sq))
    K = _icea_k(A)
    lo = mpfr(1) if X[1] <= 0 else min(mpfr(1), A.dn.div(K[0], X[1]))
    hi = mpfr(1) if X[0] <= 0 else min(mpfr(1), A.up.div(K[1], X[0]))
    return (lo, hi)


@lru_cache(maxsize=32)
def refinement_bracket(name: str, bits: int) -> tuple[Fraction, Fraction]:
    """[a, b] with k(a) < 0 < k(b) proved in directed rounding, b - a <= 2^-bits:
    bisection from the producer's bracket [1, 3/2] (GDPT App B; the sign change
    of k is the refinement point eps_i). A midpoint whose sign no precision up to
    the cap decides ends the bisection there (the bracket stays valid, only wider)."""
    a, b = Fraction(1), Fraction(3, 2)
    zero = lambda A: _ZERO  # noqa: E731
    digits = max(15, int(bits / 3.33))
    if side(_k_sign(name, a), zero, digits) != -1 or side(_k_sign(name, b), zero, digits) != 1:
        raise CouldNotReprove(f"{name}: no proved sign change of k on [1, 3/2]")
    while b - a > Fraction(1, 2 ** bits):
        m = (a + b) / 2
        s = side(_k_sign(name, m), zero, digits)
        if s == 0:
            break
        a, b = (m, b) if s < 0 else (a, m)
    return a, b


def _example(name: str) -> Callable[[Mapping[str, Any]], IvProfile]:
    def build(inputs: Mapping[str, Any]) -> IvProfile:
        refined = str(inputs.get("refined", "")).lower() == "true"

        def nonneg(A: Arith, eps: Fraction) -> Iv:
            naive = _naive_iv(A, name, A.q(eps))
            if not refined:
                return naive
            a, b = refinement_bracket(name, A.prec + 8)
            X = (A.q(a)[0], A.q(b)[1])  # eps_i in X
            worst = four_output_iv(A, A.exp(X), _naive_iv(A, name, X), A.exp(A.q(eps)))
            return (min(worst[0], naive[0]), min(worst[1], naive[1]))

        return lambda A, eps: _below_zero(A, nonneg, eps)

    return build


PROFILE_IVS["sgd-example"] = _example("sgd-example")
PROFILE_IVS["icea-example"] = _example("icea-example")


# ---- user expressions


def _abs(A: Arith, x: Iv) -> Iv:
    if x[0] >= 0:
        return x
    if x[1] <= 0:
        return A.neg(x)
    return (mpfr(0), max(A.up.minus(x[0]), x[1]))


def _guard_iv(x: Iv) -> None:
    """The cap on exp / power arguments (:func:`.limits.guard_exponent`), on an interval."""
    for v in x:
        if not abs(v) <= MAX_EXP_ARGUMENT:
            guard_exponent(mpmath.inf)


def _int_exponent(node: ast.AST, consts: "dict[int, Fraction]") -> "int | None":
    """The exponent when it is a literal of an exact integer value (possibly negated), else None."""
    sign = 1
    while isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        sign = -sign if isinstance(node.op, ast.USub) else sign
        node = node.operand
    v = consts.get(id(node)) if isinstance(node, ast.Constant) else None
    if v is not None and v.denominator == 1:
        return sign * int(v)  # "2.0" is the integer 2 (a power of a negative base stays real)
    return None


def _ipow(A: Arith, x: Iv, n: int) -> Iv:
    """x^n for an integer n >= 0 by repeated squaring on intervals (sound for any sign)."""
    if n == 0:
        return _ONE
    if n % 2 == 0:
        return _square(A, _ipow(A, x, n // 2))
    return A.mul(x, _ipow(A, x, n - 1))


def _log_mag(x: Iv) -> float:
    """log(max(|x|, 2)) of an interval, as a float upper bound (for the magnitude cap)."""
    m = max(abs(x[0]), abs(x[1]), mpfr(2))
    return float(gmpy2.log(m)) * 1.001 + 1  # 53 bits, nearest: widened to an upper bound


def expr_over(inputs: Mapping[str, Any]) -> Callable[[Arith, Iv], Iv]:
    """The user's expression walked on MPFR intervals with eps ranging over an interval:
    every operation is monotone or enclosed end by end in directed rounding (gmpy2), so
    the result contains f(eps) for every eps in the interval (a point enclosure at an
    exact eps, or a bound of sup / inf f over a cell for ``gdp.certify``). Constants are
    read as the exact decimals written. An operation whose argument's enclosure lies wholly
    outside its domain (a log of a value <= 0, a division by exactly 0, a negative base to a
    non-integer power) is undefined at every eps of the interval, since the enclosure holds the
    true argument: exit 2, the input the producer refuses (adv36 W2). One whose enclosure only
    reaches the edge of the domain answers exit 3 (ValueError / ZeroDivisionError to the caller)."""
    text = inputs.get("profile")
    tree = check_expression(text)
    src = text.strip()
    consts: dict[int, Fraction] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) \
                and not isinstance(node.value, bool):
            seg = ast.get_source_segment(src, node) or repr(node.value)
            try:
                consts[id(node)] = Fraction(seg)
            except (ValueError, ZeroDivisionError):
                raise MalformedCertificate(f"inputs.profile: {seg[:40]!r} is not an exact number") from None

    def undefined(e: Iv, what: str) -> MalformedCertificate:
        at = f"eps = {e[0]:.17g}" if e[0] == e[1] else f"every eps in [{e[0]:.17g}, {e[1]:.17g}]"
        return MalformedCertificate(f"inputs.profile: delta(eps) at {at} is undefined ({what}); the producer "
                                    "refuses such a profile")

    def ev(A: Arith, node: ast.AST, e: Iv) -> Iv:
        # check_expression admits constants, eps / e / pi, unary +-, the five operators and the
        # functions of EXPR_FUNCS with their arity, so every node below is one of those
        if isinstance(node, ast.Constant) and id(node) in consts:
            return A.q(consts[id(node)])
        if isinstance(node, ast.Name):
            if node.id == "eps":
                return e
            if node.id == "e":
                return A.exp(_ONE)
            return (A.dn.const_pi(), A.up.const_pi())
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            v = ev(A, node.operand, e)
            return A.neg(v) if isinstance(node.op, ast.USub) else v
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow)):
            a = ev(A, node.left, e)
            if isinstance(node.op, ast.Pow):
                n = _int_exponent(node.right, consts)
                if n is not None:
                    # the cap before the work: |n| log max(|a|, 2) (a power tower stops here)
                    if abs(n) * _log_mag(a) > MAX_EXP_ARGUMENT:
                        guard_exponent(mpmath.inf)
                    p = _ipow(A, a, abs(n))
                    if n < 0 and p[0] == 0 == p[1]:
                        raise undefined(e, "0 to a negative power")
                    return p if n >= 0 else A.div(_ONE, p)
                b = ev(A, node.right, e)
                if abs(b[0]) > MAX_EXP_ARGUMENT or abs(b[1]) > MAX_EXP_ARGUMENT:
                    guard_exponent(mpmath.inf)
                if a[0] == 0 == a[1] and b[0] > 0:
                    return _ZERO  # 0^b = 0 for b > 0 (eps**0.5 at eps = 0)
                if a[1] < 0:
                    raise undefined(e, "a negative base to a non-integer power")
                if a[0] == 0 == a[1] and b[1] < 0:
                    raise undefined(e, "0 to a negative power")
                if not a[0] > 0:
                    raise ValueError("a base that reaches 0 to a non-integer power")
                t = A.mul(b, A.log(a))  # a^b = e^(b log a), a > 0
                _guard_iv(t)
                return A.exp(t)
            b = ev(A, node.right, e)
            if isinstance(node.op, ast.Div) and b[0] == 0 == b[1]:
                raise undefined(e, "a division by 0")
            op = {ast.Add: A.add, ast.Sub: A.sub, ast.Mult: A.mul, ast.Div: A.div}[type(node.op)]
            return op(a, b)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            fn = node.func.id
            args = [ev(A, x, e) for x in node.args]
            if fn in ("min", "max"):
                pick = min if fn == "min" else max
                return (pick(x[0] for x in args), pick(x[1] for x in args))
            x = args[0]
            if fn in ("exp", "expm1"):
                _guard_iv(x)
                return A.exp(x) if fn == "exp" else A.expm1(x)
            edge = _DOMAIN_EDGE.get(fn)
            if edge is not None and (x[1] < edge[0] or (edge[1] and x[1] == edge[0])):
                raise undefined(e, f"{fn} of a value {'<=' if edge[1] else '<'} {edge[0]}")
            if fn in ("log", "log1p", "sqrt", "erfc"):
                return getattr(A, fn)(x)
            if fn == "Phi":
                return A.ncdf(x)
            return _abs(A, x)
        raise AssertionError(f"check_expression admitted {type(node).__name__}")

    def f(A: Arith, eps: Iv) -> Iv:
        v = ev(A, tree.body, eps)
        if v[0] != v[0] or v[1] != v[1]:
            raise CouldNotReprove("the expr profile is not defined on its enclosure")
        if v[0] > 1 or v[1] < 0:
            # proved outside [0, 1] for every eps of the cell: no privacy profile, and the producer
            # refuses such an expression wherever it evaluates it (mechanisms.expr, adv35 E3)
            raise MalformedCertificate(f"inputs.profile is no privacy profile: its value on eps in [{float(eps[0]):.6g}, "
                                       f"{float(eps[1]):.6g}] lies in [{float(v[0]):.6g}, {float(v[1]):.6g}], "
                                       "outside [0, 1]")
        return v

    return f


@_iv("expr")
def _expr(inputs: Mapping[str, Any]) -> IvProfile:
    over = expr_over(inputs)
    return lambda A, eps: over(A, A.q(eps))


# --------------------------------------------------------------------------- mpmath profiles (gdpt)


def _four_output(eps0: Fraction, delta0: Fraction) -> Callable[[Fraction], mpf]:
    """Profile of GDPT's 4-output mechanism on mpmath, summed output by output
    (sum_i (p_i - e^eps q_i)_+), for the GDP-transformation re-check."""

    def f(eps: Fraction) -> mpf:
        e0 = mpmath.exp(fraction_to_mpf(eps0))
        d0 = fraction_to_mpf(delta0)
        P = [d0, (1 - d0) * e0 / (1 + e0), (1 - d0) / (1 + e0), mpf(0)]
        Q = [mpf(0), (1 - d0) / (1 + e0), (1 - d0) * e0 / (1 + e0), d0]
        ee = mpmath.exp(fraction_to_mpf(eps))
        return mpmath.fsum(max(p - ee * q, 0) for p, q in zip(P, Q))

    return f


@register_profile_recheck("gaussian")
def _gaussian_mp(inputs: Mapping[str, Any]) -> Callable[[Fraction], mpf]:
    if "mu" in inputs:
        mu = exact_input(inputs, "mu")
    else:
        sens = exact_input(inputs, "sensitivity") if "sensitivity" in inputs else Fraction(1)
        mu = sens / exact_input(inputs, "noise_multiplier")

    def f(eps: Fraction) -> mpf:
        m, e = fraction_to_mpf(mu), fraction_to_mpf(eps)
        return mpmath.ncdf(-e / m + m / 2) - mpmath.exp(e) * mpmath.ncdf(-e / m - m / 2)

    return f


@register_profile_recheck("approx")
def _approx_mp(inputs: Mapping[str, Any]) -> Callable[[Fraction], mpf]:
    return _four_output(exact_input(inputs, "eps0"), exact_input(inputs, "delta0"))


@register_profile_recheck("pure")
def _pure_mp(inputs: Mapping[str, Any]) -> Callable[[Fraction], mpf]:
    return _four_output(exact_input(inputs, "eps0"), Fraction(0))
