"""Rigorous composition of discretised pairs: exact integer convolution.

Masses are nonnegative integers in units of 2^-K (:mod:`discretise`). The
product of two distributions is the exact integer polynomial product
(FLINT ``fmpz_poly_mul``, no rounding at all), followed by one division by 2^K:

* pessimistic side: rounded *up* (ceil). Every true mass is <= its integer
  bound, convolution of nonnegative sequences is monotone, so the result still
  bounds the true composed masses from above, coefficient by coefficient. The
  +inf mass of a product is bounded by the union bound a + b
  (1 - (1-a)(1-b) <= a + b).
* optimistic side: P rounded *down*, Q rounded *up* (the lower curve is
  increasing in P and decreasing in Q, and convolution is monotone).

Index k of a product collects all tuples whose grid indices sum to k. On the
pessimistic side these tuples have loss exactly (offset + k) h. On the
optimistic side merging them into one class is a post-processing of the
product pair, which can only lower its curve (data processing) - sound.

Truncation (keeps the arrays short; every step is accounted for exactly):

* pessimistic, high end: coefficients whose total is <= ``budget`` move to +inf
  (the curve's integrand (1 - e^{eps - s})_+ is <= 1 = its value at +inf);
  low end: coefficients whose total is <= ``budget`` move *up* to the lowest
  kept index (the integrand is nondecreasing in s, and convolution preserves
  the stochastic order, so every later value is still an upper bound).
* optimistic: the +inf class of a product has P-mass 1 - (1-a)(1-b) = a + b - ab
  (increasing in a, b), computed from the lower bounds;
  classes at either end with P-mass total <= ``budget`` are merged
  into the "dropped" class, whose contribution (>= 0) is bounded below by 0.

The budget is given per step: a product covering k steps truncates at most
``budget * k`` units per end (:func:`power` says why: truncated mass is recounted
T / k times by the later products).

Optimistic Q polynomials hold the *tilted* masses Q_k e^{s_k} (discretise
docstring); the product is the same integer convolution, because
e^{s_i} e^{s_j} = e^{s_{i+j}} on the product's grid (the per-step tilt
offsets add: ``tilt`` of the product is the sum).

T-fold composition by binary exponentiation (square-and-multiply), or - when
the caller gives an error allowance, T >= FOURIER_MIN_STEPS and the cost model
prefers it - by the certified Fourier power of :mod:`fourier` (one binary64
FFT, a pointwise power and one inverse FFT with a proven error bound), which
returns the same kind of bound; anything it declines comes back here.
"""

from __future__ import annotations

import math
import time
from typing import Callable, Optional, Sequence, Union

from flint import fmpz, fmpz_poly

from .discretise import LowerDist, UpperDist

__all__ = ["mul_upper", "mul_lower", "power", "compose", "trim_upper", "trim_lower"]

Dist = Union[UpperDist, LowerDist]


def _floor_shift(p: fmpz_poly, K: int) -> fmpz_poly:
    """floor(c / 2^K) of every (nonnegative) coefficient. Only nonnegative
    polynomials reach here: python-flint 0.9's ``fmpz_poly // fmpz`` rounds
    negative coefficients toward zero for large divisors (seen: -5 // 2^62 = 0),
    so negation tricks for the ceiling are not used."""
    return p // (fmpz(1) << K)


_ONES = fmpz_poly([1])


def _ones(n: int) -> fmpz_poly:
    """The polynomial 1 + x + ... + x^(n-1), cut from a cached longer one
    (building it from a Python list costs more than the product it rounds)."""
    global _ONES
    if _ONES.length() < n:
        _ONES = fmpz_poly([1] * max(n, 2 * _ONES.length()))
    return _ONES.truncate(n)


def _ceil_shift(p: fmpz_poly, K: int) -> fmpz_poly:
    """An upper bound of ceil(c / 2^K) for every nonnegative coefficient:
    floor(c / 2^K) + 1 on the whole support (one unit looser where the
    division is exact; never lower)."""
    n = p.length()
    if n == 0:
        return p
    return _floor_shift(p, K) + _ones(n)


def _ends(p: fmpz_poly, budget: int) -> tuple[int, int, int, int]:
    """(a, s_lo, b, s_hi): coefficients [0, a) sum to s_lo <= budget, [b, n)
    sum to s_hi <= budget, with a <= b (each end taken as far as the budget
    allows). Reads coefficients one by one from the ends only: the list of
    all coefficients would cost more than the product itself."""
    n = p.length()
    a, s_lo = 0, 0
    while a < n - 1:
        c = int(p[a])
        if s_lo + c > budget:
            break
        s_lo += c
        a += 1
    b, s_hi = n, 0
    while b - 1 > a:
        c = int(p[b - 1])
        if s_hi + c > budget:
            break
        s_hi += c
        b -= 1
    return a, s_lo, b, s_hi


#: Largest product length attempted (memory budget: about 2^23 coefficients of
#: ~100 bits each, a few hundred MB at most); beyond it the accountant fails
#: closed instead of exhausting memory (e.g. 10^7 steps at sigma = 0.5, q = 1).
MAX_PRODUCT_LENGTH = 1 << 23


def _check_length(a: int, b: int) -> None:
    if a + b - 1 > MAX_PRODUCT_LENGTH:
        from ..errors import PrecisionExhausted

        raise PrecisionExhausted(
            f"the composed privacy-loss distribution needs more than {MAX_PRODUCT_LENGTH} grid "
            f"points (memory budget); no certified enclosure could be formed"
        )


def mul_upper(A: UpperDist, B: UpperDist, budget: int) -> UpperDist:
    """Pessimistic product with truncation (module docstring)."""
    K = A.K
    _check_length(A.poly.length(), B.poly.length())
    p = _ceil_shift(A.poly * B.poly, K)
    return trim_upper(UpperDist(A.m, K, A.offset + B.offset, p, A.inf + B.inf), budget)


def trim_upper(U: UpperDist, budget: int) -> UpperDist:
    """Pessimistic truncation of both ends, at most ``budget`` units each
    (module docstring): the top moves to +inf, the bottom up to the lowest
    kept index."""
    p, inf, offset = U.poly, U.inf, U.offset
    a, s_lo, b, s_hi = _ends(p, budget)
    if b < p.length():
        p = p.truncate(b)
        inf += s_hi
    if a > 0:
        p = p.right_shift(a) + fmpz_poly([s_lo])
        offset += a
    return UpperDist(U.m, U.K, offset, p, fmpz(inf))


def mul_lower(A: LowerDist, B: LowerDist, budget: int) -> LowerDist:
    """Optimistic product with truncation (module docstring)."""
    K = A.K
    _check_length(A.P.length(), B.P.length())
    P = _floor_shift(A.P * B.P, K)
    Q = _ceil_shift(A.Q * B.Q, K)
    # P(some factor at +inf) = a + b - ab, increasing in a and b on [0, 1]:
    # lower bounds in, lower bound out (ab rounded up)
    ab = A.inf * B.inf
    inf = A.inf + B.inf - ((ab + (fmpz(1) << K) - 1) >> K)
    # a missing P-mass d_A (Fourier wrap) becomes at most d_A * mass(B) <= d_A
    return trim_lower(LowerDist(A.m, K, A.offset + B.offset, P, Q, max(inf, fmpz(0)),
                                A.tilt + B.tilt, A.deficit + B.deficit), budget)


def trim_lower(L: LowerDist, budget: int) -> LowerDist:
    """Optimistic truncation: end classes with P-mass at most ``budget``
    units each are dropped (module docstring)."""
    P, Q, offset = L.P, L.Q, L.offset
    a, _, b, _ = _ends(P, budget)
    if b < P.length():
        P = P.truncate(b)
        Q = Q.truncate(b)
    if a > 0:
        P = P.right_shift(a)
        Q = Q.right_shift(a)
        offset += a
    return LowerDist(L.m, L.K, offset, P, Q, L.inf, L.tilt, L.deficit)


def _mul(A: Dist, B: Dist, budget: int) -> Dist:
    if isinstance(A, UpperDist):
        return mul_upper(A, B, budget)  # type: ignore[arg-type]
    return mul_lower(A, B, budget)  # type: ignore[arg-type]


#: fewest steps for which the Fourier route is tried (below it the exact
#: products are short and cheap)
FOURIER_MIN_STEPS = 64


def _power_fourier(D: Dist, T: int, budget: int, allowance: int,
                   tick: Optional[Callable[[], None]], steps_before: int) -> Dist:
    """D^{*T} as (D^{*2^j})^{*a} * D^{*(T mod 2^j)}, a = T >> j: j exact
    squarings, one certified Fourier power (:mod:`fourier`), one exact product
    with the remainder. The Fourier error bound grows about linearly in a, so
    when it exceeds ``allowance`` j is raised by the reported factor.
    Truncation budgets follow :func:`power` (each product covering k steps
    truncates at most budget * k; a power of a leaves its input's +inf
    mass multiplied by at most a, as T / k squarings would)."""
    from .fourier import FourierDeclined, fourier_power

    base, b_steps = D, 1
    while True:
        a = T // b_steps
        if a < 2:
            raise FourierDeclined("too few steps left for a power")
        try:
            F = fourier_power(base, a, allowance, tick)
            break
        except FourierDeclined as e:
            if e.factor is None:  # (fourier_power reports a non-finite ratio as None)
                raise
            for _ in range(max(1, math.ceil(math.log2(max(e.factor, 1.0))))):
                b_steps *= 2
                if T // b_steps < 2:
                    raise
                base = _mul(base, base, budget * b_steps)
                if tick:
                    tick()
    F = trim_upper(F, budget * a * b_steps) if isinstance(F, UpperDist) else \
        trim_lower(F, budget * a * b_steps)  # type: ignore[arg-type]
    rem = T - a * b_steps
    if rem:
        R = power(D, rem, budget, tick, steps_before + a * b_steps)
        F = _mul(F, R, budget * (steps_before + T))
    if tick:
        tick()
    return F


def power(D: Dist, T: int, budget: int, tick: Optional[Callable[[], None]] = None,
          steps_before: int = 0, allowance: Optional[int] = None) -> Dist:
    """T-fold self-composition by square-and-multiply (T >= 1); with an
    ``allowance`` (units of 2^-K of proven float error the caller accepts),
    by :func:`_power_fourier` when it certifies within it.

    ``budget`` is a truncation budget *per step*: a product whose result
    covers k steps may truncate ``budget * k`` units at each end. Why: mass
    moved to +inf in a product covering k steps is counted again by every
    later product that uses it (the union bound doubles the +inf mass at each
    squaring), T / k times in the final result, so each product contributes
    at most ``budget * T`` units there, and the total is at most
    ``budget * T * (number of products)`` (likewise for the dropped classes
    of the optimistic side)."""
    if allowance is not None and T >= FOURIER_MIN_STEPS:
        from .fourier import FourierDeclined, cheaper_than_exact

        try:
            if not cheaper_than_exact(D, T):
                raise FourierDeclined("the exact products are expected to be faster")
            return _power_fourier(D, T, budget, allowance, tick, steps_before)
        except FourierDeclined:
            pass
    result: Optional[Dist] = None
    r_steps = 0
    base = D
    b_steps = 1
    while True:
        if T & 1:
            if result is None:
                result, r_steps = base, b_steps
            else:
                r_steps += b_steps
                result = _mul(result, base, budget * (steps_before + r_steps))
            if tick:
                tick()
        T >>= 1
        if not T:
            break
        b_steps *= 2
        base = _mul(base, base, budget * b_steps)
        if tick:
            tick()
    assert result is not None
    return result


def compose(parts: Sequence[tuple[Dist, int]], budget: int,
            tick: Optional[Callable[[], None]] = None, allowance: Optional[int] = None) -> Dist:
    """Heterogeneous composition: the product of D_j^{T_j} over the parts
    (all on the same grid and unit 2^-K); ``budget`` per step, ``allowance``
    per power (:func:`power`)."""
    out: Optional[Dist] = None
    done = 0
    for D, T in parts:
        P = power(D, T, budget, tick, allowance=allowance)
        done += T
        out = P if out is None else _mul(out, P, budget * done)
    assert out is not None
    return out


_RATE: Optional[float] = None


def product_rate() -> float:
    """Seconds per (coefficient x bit) of one exact FLINT squaring on this
    machine right now, measured once per process on a 4096 x 64-bit
    polynomial (about a millisecond). Used only to *estimate* the cost of a
    grid level before it starts (the deadline is enforced during the level)."""
    global _RATE
    if _RATE is None:
        p = fmpz_poly([(1 << 63) - 1 - 7 * i for i in range(4096)])
        t = time.perf_counter()
        for _ in range(3):
            p * p
        _RATE = (time.perf_counter() - t) / (3 * 4096 * 64)
    return _RATE


def product_seconds(length: int, K: int) -> float:
    """Estimated cost of one exact product whose result has ``length``
    coefficients of about 2K + 32 bits (before the rounding to 2^-K).
    Cost model only."""
    return product_rate() * length * (2 * K + 32)


def mul_count(T: int) -> int:
    """Number of products :func:`power` performs (for progress bars)."""
    return T.bit_length() - 1 + bin(T).count("1")
