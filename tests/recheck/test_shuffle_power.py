"""The E-fold composition of the max-of-batch-sums classes in the shuffled re-check
(:func:`dpverify.recheck.shuffle._power`), against a schoolbook reference in Python integers:

* the same repeated squaring (res = base at the first set bit, then res * base; base squared), each
  product a plain double loop with every coefficient floored (P) or ceiled (Q) to units 2^-K: equal
  coefficient for coefficient (a packing slot too narrow, a carry between slots or a rounding in the
  wrong direction differs);
* the exact E-th power of the unit masses, in units 2^-(K E): the down power, scaled, is at most it
  and the up power at least it, coefficient by coefficient (sub- and super-measures).
"""

import random

import pytest

from dpverify.recheck import shuffle as RS

K = RS._K


def _school(a, b, up):
    z = [0] * (len(a) + len(b) - 1)
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            z[i + j] += x * y
    return [-((-v) >> K) for v in z] if up else [v >> K for v in z]


def _ref_power(c, E, up):
    res, base = None, c
    while True:
        if E & 1:
            res = base if res is None else _school(res, base, up)
        E >>= 1
        if not E:
            return res
        base = _school(base, base, up)


def _exact_power(c, E):
    res = [1]
    for _ in range(E):
        z = [0] * (len(res) + len(c) - 1)
        for i, x in enumerate(res):
            for j, y in enumerate(c):
                z[i + j] += x * y
        res = z
    return res


def _masses(rng, n):
    """n nonnegative unit masses summing to at most 2^K (some zero, some tiny)."""
    w = [rng.choice([0, 1, rng.getrandbits(40), rng.getrandbits(120)]) for _ in range(n)]
    s = sum(w) or 1
    return [(x << K) // s for x in w]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("E", [1, 2, 3, 5, 8])
def test_power_matches_schoolbook_and_brackets_the_exact_power(seed, E):
    rng = random.Random(seed * 31 + E)
    c = _masses(rng, rng.randint(1, 12))
    exact = _exact_power(c, E)
    for up in (False, True):
        got = RS._power(c, E, up)
        assert got == _ref_power(c, E, up)
        assert len(got) == len(exact)
        scale = K * (E - 1)  # got is in units 2^-K, exact in units 2^-(K E)
        for g, x in zip(got, exact):
            assert (g << scale >= x) if up else (g << scale <= x)
