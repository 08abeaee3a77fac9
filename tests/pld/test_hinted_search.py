"""eps_upper's hinted knot search (queries.ComposedBounds.eps_upper with ``hint``): the plan's
float estimate only chooses the knots probed, so every hint gives the unhinted answer to the bit,
and that answer is checked against a brute force over the knots in mpmath (60 digits) from the
law's integer masses: delta_U(answer) <= delta, and the answer is at or below the first knot where
delta_U <= delta (and 0 where delta_U(0) <= delta)."""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import pytest

from dpverify.ball import arb_to_fraction, working_precision
from dpverify.pld.dpsgd import GaussianSteps
from dpverify.pld.refine import compose_direction

_HINTS = [0.0, -5.0, 1e9, math.nan, math.inf, -math.inf, 1e-300]


def _delta_u(cb, eps: mpmath.mpf) -> mpmath.mpf:
    """2^-K [sum_{s_k > eps} u_k (1 - e^(eps - s_k)) + u_inf] from the integer masses."""
    U = cb.upper
    h = mpmath.mpf(1) / (1 << cb.m)
    tot = mpmath.mpf(cb.u_inf)
    for k, c in enumerate(U.poly.coeffs()):
        s = (U.offset + k) * h
        if s > eps and int(c):
            tot += int(c) * -mpmath.expm1(eps - s)
    return tot / mpmath.mpf(2) ** cb.K


@pytest.mark.parametrize("sigma,q,T,m", [(2, Fraction(1, 10), 5, 9), (1, Fraction(1, 2), 1, 10),
                                         (4, Fraction(1, 100), 40, 10)])
def test_hinted_eps_upper_is_the_unhinted_answer_and_brute_force_holds(sigma, q, T, m):
    K = 80
    steps = [GaussianSteps(Fraction(sigma), q, T).step()]
    cb = compose_direction(steps, "remove", m, K, 1e-30, 0)
    h = Fraction(1, 1 << m)
    n = cb.upper.poly.length()
    with mpmath.workdps(60):
        knots = [(k, (cb.upper.offset + k) * h) for k in range(n)]
        # every knot's value in one backward pass: 2^K delta_U(s_j) = sum_{k > j} u_k - e^(s_j)
        # sum_{k > j} u_k e^(-s_k) + u_inf (the terms k > j, whose losses exceed s_j)
        coeffs = [int(c) for c in cb.upper.poly.coeffs()]
        vals, S, V = {}, mpmath.mpf(0), mpmath.mpf(0)
        for k in range(n - 1, -1, -1):
            s = mpmath.mpf(knots[k][1].numerator) / knots[k][1].denominator
            vals[k] = (S - mpmath.exp(s) * V + cb.u_inf) / mpmath.mpf(2) ** cb.K
            S += coeffs[k]
            V += coeffs[k] * mpmath.exp(-s)
        d0 = _delta_u(cb, mpmath.mpf(0))
        for delta in (Fraction(1, 2), Fraction(1, 10 ** 3), Fraction(1, 10 ** 5), Fraction(1, 10 ** 8)):
            with working_precision(K + 96):
                base = cb.eps_upper(delta)
                e_true = None if base is None else float(base)
                hints = _HINTS + ([] if e_true is None else [e_true, e_true + 0.3, e_true - 0.3,
                                                             e_true + 3 * float(h), max(0.0, e_true - 5 * float(h))])
                for hint in hints:
                    got = cb.eps_upper(delta, hint)
                    assert got == base, (delta, hint, got, base)
            dd = mpmath.mpf(delta.numerator) / delta.denominator
            if d0 <= dd:
                assert base == 0
                continue
            assert base is not None and base > 0
            # sound: the certified upper curve is at or below delta there
            assert _delta_u(cb, mpmath.mpf(base.numerator) / base.denominator) <= dd
            # tight: at or below the first knot at loss >= 0 whose value is <= delta
            first = min(s for k, s in knots if s >= 0 and vals[k] <= dd)
            assert base <= first


def test_neighbour_sums_enclose_the_exact_suffix_sums():
    # ComposedBounds._sv_near: one term more or less than a knot _sv evaluated whole; the exact
    # suffix sum S_k and a ball around V_k = sum_(j >= k) u_j e^(-s_j) (mpmath, 60 digits), as
    # tight as the whole evaluation's
    from dpverify.pld.queries import ComposedBounds

    K, m = 80, 10
    steps = [GaussianSteps(Fraction(2), Fraction(1, 10), 5).step()]
    cb0 = compose_direction(steps, "remove", m, K, 1e-30, 0)
    coeffs = [int(c) for c in cb0.upper.poly.coeffs()]
    n = len(coeffs)
    with mpmath.workdps(60):
        h = mpmath.mpf(1) / (1 << m)
        for k in (1, n // 3, n // 2, n - 2):
            for k1 in (k - 1, k + 1):
                cb = ComposedBounds(cb0.upper, None)
                with working_precision(K + 96):
                    cb._sv(k1)
                    S, V = cb._sv_near(k)
                    assert all(key[0] != k for key in cb._svs)  # not kept for the root
                    S_d, V_d = ComposedBounds(cb0.upper, None)._sv(k)
                assert S == sum(coeffs[k:]) == S_d
                exact = mpmath.fsum(coeffs[j] * mpmath.exp(-(cb0.upper.offset + j) * h) for j in range(k, n))
                lo, hi = (mpmath.mpf(f.numerator) / f.denominator for f in (arb_to_fraction(V.lower()),
                                                                           arb_to_fraction(V.upper())))
                assert lo <= exact <= hi, (k, k1)
                assert float(V.rad()) <= 8 * float(V_d.rad()) + 1e-30 * float(exact)
