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

T-fold composition by binary exponentiation (square-and-multiply). This
module is a leaf kernel, like :mod:`.fourier`; :mod:`.compose` chooses
between the two.
"""

from __future__ import annotations

from typing import Callable, Optional, Union

from flint import fmpz, fmpz_poly

from .discretise import LowerDist, UpperDist
from .units import _ones, ceil_shift, floor_shift

__all__ = ["mul", "mul_upper", "mul_lower", "power", "trim_upper", "trim_lower", "mul_count", "poly_power"]

Dist = Union[UpperDist, LowerDist]


def _ends(p: fmpz_poly, budget: int) -> tuple[int, int, int, int]:
    """(a, s_lo, b, s_hi): coefficients [0, a) sum to s_lo <= budget, [b, n)
    sum to s_hi <= budget, with a <= b (each end taken as far as the budget
    allows; a <= n - 1 and b >= a + 1, as a scan from each end would stop).

    The coefficients are masses, never negative (every kernel rounds into the
    nonnegative integers), so the prefix sums S(k) = p.truncate(k)(1) grow with k
    and the last k with S(k) <= budget is found by a galloping search: about
    2 log2(a) sums taken in FLINT over at most 2a coefficients each, and the same
    from the top end (right_shift), where a scan read them one by one in Python
    (31 ms per trim at T = 1e6, a Fourier window's thin ends) and the list of all
    coefficients would cost more than the product itself. Same ends, same sums
    (tests/pld/test_convolve.py checks them against the scan)."""
    n = p.length()
    if n == 0:
        return 0, 0, 0, 0

    def prefix(k: int) -> int:
        return int(p.truncate(k)(1)) if k > 0 else 0

    def suffix(t: int) -> int:
        return int(p.right_shift(n - t)(1)) if t > 0 else 0

    def last_within(lo: int, hi: int, ok: Callable[[int], bool]) -> int:
        # the largest k in [lo, hi] with ok(k), given ok(lo) and ok monotone (true, then false)
        step = 1
        while lo + step <= hi and ok(lo + step):
            lo += step
            step *= 2
        top = min(hi, lo + step - 1)  # ok(lo + step) is false, or lo + step > hi
        while lo < top:
            mid = (lo + top + 1) // 2
            if ok(mid):
                lo = mid
            else:
                top = mid - 1
        return lo

    a = last_within(0, n - 1, lambda k: prefix(k) <= budget)
    s_lo = prefix(a)
    if a + 1 >= n:
        return a, s_lo, n, 0
    # the suffix [n - t, n) for t = 0 .. n - a - 1: its sum from its own t coefficients
    t = last_within(0, n - a - 1, lambda t: suffix(t) <= budget)
    return a, s_lo, n - t, suffix(t)


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
    p = ceil_shift(A.poly * B.poly, K)
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
    P = floor_shift(A.P * B.P, K)
    Q = ceil_shift(A.Q * B.Q, K)
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


def mul(A: Dist, B: Dist, budget: int) -> Dist:
    """The pessimistic or optimistic product, whichever kind A and B are."""
    if isinstance(A, UpperDist):
        return mul_upper(A, B, budget)  # type: ignore[arg-type]
    return mul_lower(A, B, budget)  # type: ignore[arg-type]


def power(D: Dist, T: int, budget: int, tick: Optional[Callable[[], None]] = None,
          steps_before: int = 0) -> Dist:
    """T-fold self-composition by square-and-multiply (T >= 1), exact
    products only (:mod:`.compose` chooses between this and the Fourier power).

    ``budget`` is a truncation budget *per step*: a product whose result
    covers k steps may truncate ``budget * k`` units at each end. Why: mass
    moved to +inf in a product covering k steps is counted again by every
    later product that uses it (the union bound doubles the +inf mass at each
    squaring), T / k times in the final result, so each product contributes
    at most ``budget * T`` units there, and the total is at most
    ``budget * T * (number of products)`` (likewise for the dropped classes
    of the optimistic side). ``steps_before``: steps already composed into
    the result this power will be multiplied with (their budget share)."""
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
                result = mul(result, base, budget * (steps_before + r_steps))
            if tick:
                tick()
        T >>= 1
        if not T:
            break
        b_steps *= 2
        base = mul(base, base, budget * b_steps)
        if tick:
            tick()
    assert result is not None
    return result


def mul_count(T: int) -> int:
    """Number of products :func:`power` performs (for progress bars)."""
    return T.bit_length() - 1 + bin(T).count("1")


def poly_power(coeffs: list[int], T: int, bits: int, up: bool, keep: Optional[int] = None,
               tick: Optional[Callable[[], None]] = None) -> fmpz_poly:
    """T-th power (T >= 1) of sum_i c_i z^i, the c_i >= 0 being masses in units
    2^-bits, by square-and-multiply with every product rescaled to units: the
    exact ceiling when ``up`` (a super-measure of the true T-fold law, since
    products of nonnegative sequences are monotone in each factor), the floor
    otherwise (a sub-measure).

    ``keep``: only degrees < keep are kept after every product. Exact for those
    degrees: the coefficients are nonnegative and degrees only add, so a dropped
    term never reaches a lower degree.

    ``tick``: called before every product (a time budget may stop the power there; it never
    changes a product)."""
    one = fmpz(1) << bits

    def rescale(p: fmpz_poly) -> fmpz_poly:
        if keep is not None:
            p = p.truncate(keep)
        if up and p.length():  # exact ceiling: floor((c + 2^bits - 1) / 2^bits)
            p = p + _ones(p.length()) * (one - 1)
        return floor_shift(p, bits)

    base = fmpz_poly(coeffs)
    if keep is not None:
        base = base.truncate(keep)
    res: Optional[fmpz_poly] = None
    while True:
        if T & 1:
            if res is not None and tick:
                tick()
            res = base if res is None else rescale(res * base)
        T >>= 1
        if not T:
            break
        _check_length(base.length(), base.length())
        if tick:
            tick()
        base = rescale(base * base)
    assert res is not None
    return res
