"""Masses in units of 2^-K: the directed rounding of integer polynomials that
both kernels (:mod:`.convolve`, :mod:`.fourier`) apply to their products."""

from __future__ import annotations

from flint import fmpz, fmpz_poly

__all__ = ["ceil_shift", "floor_shift"]


def floor_shift(p: fmpz_poly, K: int) -> fmpz_poly:
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


def ceil_shift(p: fmpz_poly, K: int) -> fmpz_poly:
    """An upper bound of ceil(c / 2^K) for every nonnegative coefficient:
    floor(c / 2^K) + 1 on the whole support (one unit looser where the
    division is exact; never lower)."""
    n = p.length()
    if n == 0:
        return p
    return floor_shift(p, K) + _ones(n)
