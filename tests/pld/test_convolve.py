"""Exact integer convolution with directed rounding, against Python big ints."""

import random

from flint import fmpz, fmpz_poly
from hypothesis import given, strategies as st

from dpverify.pld.convolve import mul_lower, mul_upper, power
from dpverify.pld.discretise import LowerDist, UpperDist

K = 70


def _conv(a, b):
    out = [0] * (len(a) + len(b) - 1)
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            out[i + j] += x * y
    return out


coeffs = st.lists(st.integers(min_value=0, max_value=2**K), min_size=1, max_size=12)


@given(coeffs, coeffs, st.integers(0, 3), st.integers(0, 3))
def test_upper_product_rounds_up_and_keeps_mass(a, b, ia, ib):
    A = UpperDist(8, K, -5, fmpz_poly(a), fmpz(ia))
    B = UpperDist(8, K, 2, fmpz_poly(b), fmpz(ib))
    C = mul_upper(A, B, budget=0)
    exact = _conv(a, b)
    got = [int(c) for c in C.poly.coeffs()]
    # no truncation with budget 0 unless leading coefficients are 0 (never moved)
    shift = C.offset - (-3)
    for k, e in enumerate(exact):
        g = got[k - shift] if 0 <= k - shift < len(got) else 0
        assert g * 2**K >= e  # ceiling: never below the exact product
        assert g <= e // 2**K + 1
    assert int(C.inf) == ia + ib


@given(coeffs, coeffs)
def test_lower_product_rounds_p_down_q_up(a, b):
    rng = random.Random(len(a) * 31 + len(b))
    qa = [rng.randrange(0, 2**K) for _ in a]
    qb = [rng.randrange(0, 2**K) for _ in b]
    A = LowerDist(8, K, 0, fmpz_poly(a), fmpz_poly(qa))
    B = LowerDist(8, K, 0, fmpz_poly(b), fmpz_poly(qb))
    C = mul_lower(A, B, budget=0)
    P = [int(c) for c in C.P.coeffs()]
    Q = [int(c) for c in C.Q.coeffs()]
    eP, eQ = _conv(a, b), _conv(qa, qb)
    s = C.offset
    for k in range(len(eP)):
        p = P[k - s] if 0 <= k - s < len(P) else 0
        q = Q[k - s] if 0 <= k - s < len(Q) else 0
        assert p * 2**K <= eP[k]
        if 0 <= k - s < len(P) and p > 0:
            assert q * 2**K >= eQ[k]  # every kept class has its Q rounded up


def test_truncation_moves_mass_to_inf_and_up():
    a = [1, 1, 2**K, 2**K, 1, 1]
    A = UpperDist(8, K, 0, fmpz_poly(a), fmpz(0))
    C = mul_upper(A, A, budget=10)
    total_exact = sum(_conv(a, a))
    total = sum(int(c) for c in C.poly.coeffs()) + int(C.inf)
    assert total * 2**K >= total_exact  # nothing is lost on the pessimistic side
    assert int(C.inf) > 0 and C.offset > 0


def test_power_matches_repeated_products():
    a = [3 * 2**(K - 3), 2**(K - 1), 2**(K - 3)]
    A = UpperDist(8, K, -1, fmpz_poly(a), fmpz(1))
    P7 = power(A, 7, budget=0)
    B = A
    for _ in range(6):
        B = mul_upper(B, A, budget=0)
    # both are upper bounds of the same exact distribution; both near it
    pa = [int(c) for c in P7.poly.coeffs()]
    pb = [int(c) for c in B.poly.coeffs()]
    assert P7.offset == B.offset == -7
    assert all(abs(x - y) <= 64 for x, y in zip(pa, pb))


def _ends_by_scan(coeffs: list, budget: int) -> tuple:
    # the definition, read coefficient by coefficient from each end
    n = len(coeffs)
    a, s_lo = 0, 0
    while a < n - 1 and s_lo + coeffs[a] <= budget:
        s_lo += coeffs[a]
        a += 1
    b, s_hi = n, 0
    while b - 1 > a and s_hi + coeffs[b - 1] <= budget:
        s_hi += coeffs[b - 1]
        b -= 1
    return a, s_lo, b, s_hi


def test_trim_ends_equal_the_scan_from_each_end():
    from dpverify.pld.convolve import _ends

    rng = random.Random(11)
    for _ in range(400):
        n = rng.choice([1, 2, 3, 5, 17, 200, 1500])
        kind = rng.random()
        coeffs = [0 if rng.random() < kind else rng.choice([1, 2, 7, 10**30, rng.getrandbits(rng.randint(1, 90))])
                  for _ in range(n)]
        while coeffs and coeffs[-1] == 0:  # the polynomial's length ends at its last nonzero
            coeffs.pop()
        total = sum(coeffs)
        for budget in (0, 1, rng.randint(0, 50), total // 3, total, total + 5, rng.randint(0, max(1, total))):
            assert _ends(fmpz_poly(coeffs), budget) == _ends_by_scan(coeffs, budget), (coeffs[:10], budget)
