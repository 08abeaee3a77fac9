"""Truncated power series with proven error balls, in fixed-point integers, and the exact
evaluation of a polynomial at consecutive integers: the block route of the PLD re-check's
tails (:func:`.pld.gauss_tails`), which replaces one chain of MPFR calls and two Taylor
evaluations of Phi per knot by one series per block of knots.

A *ball* is a pair of integers (m, r), r >= 0, standing for every real in
[(m - r) 2^-P, (m + r) 2^-P] at a fixed point 2^-P chosen by the caller; a *series* is a
list of balls, its coefficients. Every operation here is an inclusion: if each input ball
contains the corresponding exact input, the output ball contains the exact output. That is
all a proof needs (midpoint-radius arithmetic; e.g. van der Hoeven, "Ball arithmetic",
2010), and it holds as well for inputs that enclose a whole *family* of exact values (a
series whose constant term encloses u(e) for every e of an interval): the output then
encloses the output of every member, which is how a Taylor remainder is bounded
(:func:`remainder_ok`). The arithmetic on the midpoints is exact integer arithmetic; the only
roundings are the final divisions by 2^P (floored, one unit added to the radius) and the
radii's (rounded up).

Nothing here is a float, and nothing imports the arb side.
"""

from __future__ import annotations

from math import factorial
from operator import mul as _mul
from typing import Sequence

import gmpy2
from gmpy2 import mpz

from .core import Arith

Ball = tuple  # (mid: int, rad: int) at the caller's fixed point 2^-P


def ball_of(iv: tuple, P: int) -> Ball:
    """A ball at 2^-P containing the MPFR interval ``iv`` = (lo, hi): with L = floor(lo 2^P)
    and H = ceil(hi 2^P) (exact: scaling an mpfr by 2^P only moves its exponent), the middle
    m = floor((L + H) / 2) has m - L <= (H - L) / 2 <= H - m, so [L, H] lies in [m - r, m + r]
    with r = H - m."""
    n0, d0 = iv[0].as_integer_ratio()
    n1, d1 = iv[1].as_integer_ratio()
    L, H = (int(n0) << P) // int(d0), -((-int(n1) << P) // int(d1))
    m = (L + H) >> 1
    return (m, H - m)


def _round(M: int, R: int, P: int, div: int = 1) -> Ball:
    """The ball of (M +- R) / (div 2^P) at 2^-P for exact integers M, R >= 0 (a value at
    2^-2P, divided by a positive integer): the floored middle is within one unit of the exact
    quotient, so that unit is added to the radius, which is rounded up."""
    d = div << P
    return (M // d, -((-R) // d) + 1)


class Ser:
    """A series of balls held as three lists: the middles m_j, their magnitudes |m_j| and the
    bounds |m_j| + r_j (so that a convolution is three C-level dot products, :func:`_conv`)."""

    __slots__ = ("m", "a", "u")

    def __init__(self, balls: Sequence[Ball] = ()) -> None:
        self.m: list = [x[0] for x in balls]
        self.a: list = [abs(m) for m in self.m]
        self.u: list = [a + x[1] for a, x in zip(self.a, balls)]

    def push(self, x: Ball) -> None:
        m, r = x
        self.m.append(m)
        self.a.append(abs(m))
        self.u.append(abs(m) + r)

    def __getitem__(self, j: int) -> Ball:
        return (self.m[j], self.u[j] - self.a[j])

    def __len__(self) -> int:
        return len(self.m)

    def balls(self) -> list:
        return [(m, u - a) for m, a, u in zip(self.m, self.a, self.u)]

    def weighted(self) -> "Ser":
        """i s_i for every i (exact: middles and radii times i)."""
        w = Ser()
        w.m = [i * x for i, x in enumerate(self.m)]
        w.a = [i * x for i, x in enumerate(self.a)]
        w.u = [i * x for i, x in enumerate(self.u)]
        return w


def _conv(x: Ser, y: Ser, i0: int, i1: int, j: int) -> tuple[int, int]:
    """(M, R) of sum_{i=i0..i1} x_i y_{j-i}: M = sum of the middles' products exactly and
    R = sum (|x_m| + x_r)(|y_m| + y_r) - sum |x_m| |y_m| = sum |x_m| y_r + x_r |y_m| + x_r y_r,
    both at 2^-2P (|xy - x_m y_m| <= |x_m| y_r + x_r |y_m| + x_r y_r for every x, y in the
    balls)."""
    lo, hi = i0, i1 + 1
    b0, b1 = j - i1, j - i0 + 1
    M = sum(map(_mul, x.m[lo:hi], y.m[b0:b1][::-1]))
    U = sum(map(_mul, x.u[lo:hi], y.u[b0:b1][::-1]))
    V = sum(map(_mul, x.a[lo:hi], y.a[b0:b1][::-1]))
    return M, U - V


def _conv_all(x: Ser, y: Ser, n: int) -> list:
    """[:func:`_conv`(x, y, 0, j, j) for j = 0..n-1] (the first ``n`` coefficients of the full
    product, every pair of indices i + k = j of the two series' coefficients), the same exact
    integers by Kronecker substitution: four GMP products of packed nonnegative integers instead
    of 3 n (n + 1) / 2 Python products.

    With x+ = max(m, 0) and x- = max(-m, 0) (so a = |m| = x+ + x-, a + m = 2 x+, a - m = 2 x-):
    V = sum a_x a_y, U = sum u_x u_y, P1 = sum (a_x + m_x)(a_y + m_y) = 4 sum x+ y+ and
    P2 = sum (a_x - m_x)(a_y - m_y) = 4 sum x- y-; V is also sum x+ y+ + x- y- + x+ y- + x- y+,
    so sum m_x m_y = (P1 + P2) / 2 - V exactly, and R = U - V as in :func:`_conv`. Each of the
    four is a sum of at most n products of nonnegative integers below 4 max u_x max u_y (as
    u >= a >= |m|), so a slot of s bits, 2^s above n times that, holds every coefficient of the
    packed products with no carry between slots: unpacking reads them exactly."""
    xm, xa, xu = x.m[:n], x.a[:n], x.u[:n]
    ym, ya, yu = y.m[:n], y.a[:n], y.u[:n]
    if not xm or not ym:
        return [(0, 0)] * n
    s = (4 * n * max(xu) * max(yu)).bit_length() + 1

    def prod(p: list, q: list) -> list:
        out = gmpy2.unpack(gmpy2.pack(p, s) * gmpy2.pack(q, s), s)[:n] if any(p) and any(q) else []
        return out + [0] * (n - len(out))

    V = prod(xa, ya)
    U = prod(xu, yu)
    P1 = prod([a + m for a, m in zip(xa, xm)], [a + m for a, m in zip(ya, ym)])
    P2 = prod([a - m for a, m in zip(xa, xm)], [a - m for a, m in zip(ya, ym)])
    return [(int((p1 + p2) >> 1) - int(v), int(u) - int(v)) for p1, p2, u, v in zip(P1, P2, U, V)]


def mul(a: Ball, b: Ball, P: int) -> Ball:
    """The product of two balls."""
    (am, ar), (bm, br) = a, b
    return _round(am * bm, abs(am) * br + ar * (abs(bm) + br), P)


def scale(s: Ser, c: Ball, P: int) -> Ser:
    """Every coefficient times the ball ``c``: :func:`mul` of each, written out on the lists (the
    same integers)."""
    cm, cr = c
    cu, d = abs(cm) + cr, 1 << P
    return Ser([(m * cm // d, -((-(a * cr + (u - a) * cu)) // d) + 1) for m, a, u in zip(s.m, s.a, s.u)])


def add(a: Ser, b: Ser) -> Ser:
    """Coefficient-wise sum (exact: middles and radii add)."""
    return Ser([(x[0] + y[0], x[1] + y[1]) for x, y in zip(a.balls(), b.balls())])


def sub(a: Ser, b: Ser) -> Ser:
    """Coefficient-wise difference a - b (exact: middles subtract, radii add)."""
    return Ser([(x[0] - y[0], x[1] + y[1]) for x, y in zip(a.balls(), b.balls())])


def product(x: Ser, y: Ser, n: int, P: int) -> Ser:
    """The first ``n`` coefficients of x y: (xy)_j = sum_{i=0..j} x_i y_{j-i}."""
    return Ser([_round(M, R, P) for M, R in _conv_all(x, y, n)])


def product_coeff(x: Ser, y: Ser, j: int, P: int) -> Ball:
    """The coefficient j of x y alone."""
    return _round(*_conv(x, y, 0, j, j), P)


def neg_half(a: Ser, P: int) -> Ser:
    """-a / 2 coefficient-wise."""
    return Ser([_round(-m << P, r << P, P, 2) for m, r in a.balls()])


def square(y: Ser, n: int, P: int) -> Ser:
    """The first ``n`` coefficients of y^2: (y^2)_j = sum_{i=0..j} y_i y_{j-i}."""
    return Ser([_round(M, R, P) for M, R in _conv_all(y, y, n)])


def log_tail(u: Ser, inv0: Ball, n: int, P: int) -> list:
    """Coefficients 1..n-1 of log(u) (the constant term is the caller's), from
    u (log u)' = u': j u_0 v_j = j u_j - sum_{i=1..j-1} i v_i u_{j-i}, with ``inv0`` a ball of
    1 / u_0 (u_0 > 0). Entry 0 of the result is a placeholder (0, 0)."""
    v: list = [(0, 0)]
    iv = Ser([(0, 0)])  # i v_i
    for j in range(1, n):
        M, R = _conv(iv, u, 1, j - 1, j) if j > 1 else (0, 0)
        # t = u_j - S / j at 2^-P: u_j's ball scaled to 2^-2P enters exactly
        um, ur = u[j]
        t = _round((um * j << P) - M, (ur * j << P) + R, P, j)
        v.append(mul(t, inv0, P))
        iv.push((j * v[j][0], j * v[j][1]))
    return v


def exp_tail(w: Ser, e0: Ball, n: int, P: int) -> Ser:
    """The first n coefficients of exp(w) with e0 a ball of exp(w_0), from (e^w)' = w' e^w:
    j e_j = sum_{i=1..j} i w_i e_{j-i}."""
    e = Ser([e0])
    iw = w.weighted()
    for j in range(1, n):
        M, R = _conv(iw, e, 1, j, j)
        e.push(_round(M, R, P, j))
    return e


def integral_tail(y: Ser, f: Ser, n: int, P: int) -> Ser:
    """Coefficients 1..n-1 of F with F' = f(y) y' given the series of f(y) (``f``):
    j F_j = sum_{i=1..j} i y_i f_{j-i}. Entry 0 is a placeholder (0, 0)."""
    F = Ser([(0, 0)])
    iy = y.weighted()  # i y_i is (0, 0) at i = 0, so the sums over i = 0..j are the same
    for j, (M, R) in enumerate(_conv_all(iy, f, n)):
        if j:
            F.push(_round(M, R, P, j))
    return F


def power_coeffs(A: Arith, ex: tuple, H: "object", s: int, n: int, P: int) -> list:
    """Balls of ex (s H)^j / j! for j = 1..n-1 (entry 0 a placeholder), ``ex`` an MPFR interval
    (>= 0), H > 0 an exact dyadic (mpfr), s = +-1: the coefficients of e^{s (E + H t)} at t = 0
    beyond the constant, with ex enclosing e^{sE}."""
    out: list = [(0, 0)]
    dn, up = A.dn, A.up
    c0, c1 = ex
    for j in range(1, n):
        c0, c1 = dn.mul(c0, H), up.mul(c1, H)
        f = factorial(j)
        lo, hi = dn.div(c0, f), up.div(c1, f)
        out.append(ball_of((dn.minus(hi), up.minus(lo)) if s < 0 and j % 2 else (lo, hi), P))
    return out


def remainder_ok(top: Ball, coeffs: Sequence[Ball], tol: int) -> "int | None":
    """The error bound W (units 2^-P) of evaluating the series with ball coefficients
    ``coeffs`` (c_0..c_N) at any |t| <= 1 through their middles, where ``top`` encloses the
    Taylor coefficient N + 1 at every point of the segment (Taylor's theorem, Lagrange form:
    g(t) = sum_{j<=N} g_j t^j + g^(N+1)(xi) t^(N+1) / (N+1)! with xi between 0 and t, and
    g^(N+1)(xi) / (N+1)! in ``top``): W = sum_j r_j + |top| >= |g(t) - sum_j m_j t^j|, as
    |t|^j <= 1. None when W exceeds ``tol``."""
    W = sum(r for _, r in coeffs) + abs(top[0]) + top[1]
    return W if W <= tol else None


def values_at_integers(coeffs: Sequence[int], rho: int, k0: int, k1: int) -> list:
    """The exact integers p(k) = sum_j c_j k^j 2^(rho (N - j)) for k = k0..k1 (p(k) / 2^(rho N)
    is the polynomial sum_j c_j t^j at t = k / 2^rho): :func:`at_integers` of
    :func:`k_basis`."""
    return at_integers(k_basis(coeffs, rho), k0, k1)


def at_integers(B: Sequence[int], k0: int, k1: int, shift: "int | None" = None, add: int = 0,
                up: bool = False) -> list:
    """The exact integers p(k) = sum_j B_j k^j for k = k0..k1, by forward differences: p has
    degree N, so its N-th difference is constant and each next value is N additions of exact
    integers. The N + 1 differences live in one integer, D_j in bits [s j, s (j + 1)) as signed
    slots (X = sum_j D_j 2^(s j)), so the N additions D_j += D_{j+1} are one shift and one
    addition: X - D_0 is divisible by 2^s and (X - D_0) / 2^s = sum_{j>=1} D_j 2^(s (j-1)).
    X is this sum as an exact integer whatever the sizes of the D_j (the slots may overlap;
    only the sum is used), so D_0 = p(k) is read back as the residue of X mod 2^s in
    [-2^(s-1), 2^(s-1)), which it is when |p(k)| < 2^(s-1): |p(k)| <= sum |B_j| K^j with K the
    largest |k| (:func:`abs_bound`), and s is one bit above that bound.

    With ``shift``: max(0, floor((p(k) + add) / 2^shift)) instead (``up``: the ceiling), exact
    integer rounding of each value as it is read (an arithmetic shift floors)."""
    N = len(B) - 1

    def p(k: int) -> int:
        acc = 0
        for c in reversed(B):
            acc = acc * k + c
        return acc

    s = abs_bound(B, max(abs(k0), abs(k1))).bit_length() + 2
    vals = [p(k0 + i) for i in range(N + 1)]
    D = []
    for _ in range(N + 1):  # D_j = Delta^j p(k0)
        D.append(vals[0])
        vals = [b - a for a, b in zip(vals, vals[1:])]
    X = mpz(0)
    for d in reversed(D):
        X = (X << s) + d
    # X = D_0 + 2^s Y exactly, so X >> s (a floor) is Y - 1 when D_0 < 0 and Y otherwise. GMP
    # integers (gmpy2 mpz, exact like Python's): the shift and the addition of X, (N + 1) s bits,
    # are most of the time here, and GMP's are about twice as fast at these sizes
    half, full, mask = mpz(1) << (s - 1), mpz(1) << s, (mpz(1) << s) - 1
    out = []
    n = k1 - k0 + 1
    if shift is None:
        for _ in range(n):
            d0 = X & mask
            if d0 >= half:
                d0 -= full
                X += (X >> s) + 1
            else:
                X += X >> s
            out.append(d0)
        return out
    # the rounded reading, with v = d0 - full (d0 >= half) or d0 the signed value:
    # floor((v + add) / 2^shift) = (d0 + cn) >> shift, cn = add - full or add;
    # ceil((v + add) / 2^shift) = -((cn - d0) >> shift), cn = full - add or -add
    if not up:
        neg, pos = add - full, add
        for _ in range(n):
            d0 = X & mask
            if d0 >= half:
                X += (X >> s) + 1
                v = (d0 + neg) >> shift
            else:
                X += X >> s
                v = (d0 + pos) >> shift
            out.append(v if v > 0 else 0)
    else:
        neg, pos = full - add, -add
        for _ in range(n):
            d0 = X & mask
            if d0 >= half:
                X += (X >> s) + 1
                v = -((neg - d0) >> shift)
            else:
                X += X >> s
                v = -((pos - d0) >> shift)
            out.append(v if v > 0 else 0)
    return out


def k_basis(coeffs: Sequence[int], rho: int) -> list:
    """The integer coefficients B_j = c_j 2^(rho (N - j)) of the polynomial in the knot offset k
    whose value at every integer k is :func:`values_at_integers`'s p(k) = 2^(rho N) sum_j c_j t^j,
    t = k / 2^rho (exact)."""
    N = len(coeffs) - 1
    return [int(c) << (rho * (N - j)) for j, c in enumerate(coeffs)]


def taylor_shift(B: Sequence[int], s: int) -> list:
    """The integer coefficients of p(k + s), s = +1 or -1, given those of p(k) (``B``, in k): the
    Horner scheme of the Taylor shift (repeated synthetic division by k - s), additions and
    subtractions of integers only, so exact."""
    a = list(B)
    N = len(a) - 1
    for i in range(N):
        for j in range(N - 1, i - 1, -1):
            a[j] = a[j] + a[j + 1] if s > 0 else a[j] - a[j + 1]
    return a


def abs_bound(B: Sequence[int], kmax: int) -> int:
    """sum_j |B_j| kmax^j, an upper bound of |sum_j B_j k^j| for every |k| <= kmax (exact)."""
    acc = 0
    for b in reversed(B):
        acc = acc * kmax + abs(b)
    return acc
