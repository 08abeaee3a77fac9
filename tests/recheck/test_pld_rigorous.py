"""The PLD re-check's directed-rounding parts against independent routes.

* interval tails (:func:`gauss_tails`, :func:`laplace_tails`, :func:`finite_tails`) must
  contain the same tails written out in mpmath at 1000 bits, and be narrow;
* the composed bounds of T Gaussian steps at sampling rate 1 must contain the closed form
  of the Gaussian mechanism with mu sqrt(T) (composition of Gaussians is Gaussian,
  GDPT Cor 3.3): delta(eps) = Phi(-eps/m + m/2) - e^eps Phi(-eps/m - m/2), and eps(delta)
  its root (mpmath bisection at 1000 bits);
* the discretisation's integers must agree with the older mpmath discretisation to the
  one unit of margin that one carries.
"""

from __future__ import annotations

from fractions import Fraction

import mpmath
import pytest
from hypothesis import given, settings, strategies as st

from dpverify.recheck import pld as P
from dpverify.recheck.core import arith, to_fraction, mpfr_to_mpf

HP = 400


def _mp(x: Fraction) -> mpmath.mpf:
    return mpmath.mpf(x.numerator) / x.denominator


def _inside(iv, ref: mpmath.mpf, width: mpmath.mpf) -> None:
    with mpmath.workprec(HP + 20):
        a, b = mpfr_to_mpf(iv[0]), mpfr_to_mpf(iv[1])
        assert a <= ref <= b, (a, ref, b)
        assert b - a <= width, (a, b)


@settings(max_examples=40, deadline=None)
@given(sig=st.sampled_from([Fraction(1, 2), Fraction(1), Fraction(2), Fraction(13, 4)]),
       q=st.sampled_from([Fraction(1, 1000), Fraction(1, 10), Fraction(1, 2), Fraction(1)]),
       direction=st.sampled_from(["remove", "add"]), i=st.integers(-600, 600))
def test_gaussian_tails_enclose_mpmath_at_1000_bits(sig: Fraction, q: Fraction, direction: str, i: int) -> None:
    A = arith(160)
    e = Fraction(i, 64)
    got = P.gauss_tails(sig, q, direction)(A, A.dyadic(i, 6))
    with mpmath.workprec(HP):
        ref = P._tails(_mp(sig), _mp(q), direction if q != 1 else "remove", _mp(e))
    for g, r in zip(got, ref):
        _inside(g, r, mpmath.mpf(2) ** -140)


@settings(max_examples=40, deadline=None)
@given(b=st.sampled_from([Fraction(1, 2), Fraction(1), Fraction(3)]),
       q=st.sampled_from([Fraction(1, 100), Fraction(1, 3), Fraction(1)]),
       direction=st.sampled_from(["remove", "add"]), i=st.integers(-300, 300))
def test_laplace_tails_enclose_mpmath_at_1000_bits(b: Fraction, q: Fraction, direction: str, i: int) -> None:
    A = arith(160)
    got = P.laplace_tails(b, q, direction)(A, A.dyadic(i, 7))
    with mpmath.workprec(HP):
        ref = P._laplace_tails(_mp(b), _mp(q), direction, _mp(Fraction(i, 128)))
    for g, r in zip(got, ref):
        with mpmath.workprec(HP):
            a, c = mpfr_to_mpf(g[0]), mpfr_to_mpf(g[1])
            assert a <= r <= c, (a, r, c)  # [0, 1] at an undecided range end is allowed: still contains


def test_finite_tails_are_exact_sums() -> None:
    A = arith(64)
    P_, Q_ = [Fraction(1, 2), Fraction(1, 3), Fraction(1, 6), Fraction(0)], [Fraction(0), Fraction(1, 6),
                                                                               Fraction(1, 3), Fraction(1, 2)]
    t = P.finite_tails(P_, Q_)
    assert t.inf == Fraction(1, 2)
    (p, q) = t(A, A.dyadic(0, 8))  # L > 0: the atom with P/Q = 2 only
    assert to_fraction(p[0]) <= Fraction(1, 3) <= to_fraction(p[1]) and p[1] - p[0] < 2.0**-60
    assert to_fraction(q[0]) <= Fraction(1, 6) <= to_fraction(q[1]) and q[1] - q[0] < 2.0**-60


def _gauss_delta(m: mpmath.mpf, e: mpmath.mpf) -> mpmath.mpf:
    return mpmath.ncdf(-e / m + m / 2) - mpmath.exp(e) * mpmath.ncdf(-e / m - m / 2)


@pytest.mark.parametrize("sigma,steps,eps", [("2", 1, "0.5"), ("1", 4, "1"), ("3", 16, "0.25")])
def test_composed_gaussian_delta_contains_closed_form(sigma: str, steps: int, eps: str) -> None:
    inputs = {"noise_multiplier": sigma, "sampling_rate": "1", "steps": steps, "neighboring": "add-remove"}
    with mpmath.workdps(40):
        E = mpmath.mpf(eps)
        lo, hi = P._bounds(inputs, "delta", E, mpmath.mpf("0.1"), E, 9)
    with mpmath.workprec(HP):
        true = _gauss_delta(mpmath.sqrt(steps) / mpmath.mpf(sigma), mpmath.mpf(eps))
        assert lo <= true <= hi
        assert hi - lo < true * mpmath.mpf(10) ** -2  # and the enclosure says something


@pytest.mark.parametrize("sigma,steps,delta", [("2", 1, "1e-5"), ("1", 9, "1e-6")])
def test_composed_gaussian_eps_contains_the_root(sigma: str, steps: int, delta: str) -> None:
    inputs = {"noise_multiplier": sigma, "sampling_rate": "1", "steps": steps, "neighboring": "add-remove"}
    with mpmath.workdps(40):
        D = mpmath.mpf(delta)
        lo, hi = P._bounds(inputs, "eps", D, D, mpmath.mpf(0), 9)
    with mpmath.workprec(HP):
        m = mpmath.sqrt(steps) / mpmath.mpf(sigma)
        a, b = mpmath.mpf(0), mpmath.mpf(60)  # delta(eps) decreases: bisection to 2^-200
        for _ in range(210):
            c = (a + b) / 2
            a, b = (c, b) if _gauss_delta(m, c) > mpmath.mpf(delta) else (a, c)
        root = a
        assert lo <= root and b <= hi
        assert hi - lo < root * mpmath.mpf(10) ** -2


def test_discretisation_agrees_with_the_mpmath_route_to_its_margin() -> None:
    """The older mpmath discretisation carries one unit of margin each way (and rounds
    from mpmath values); the interval one none: their integers differ by at most 2."""
    K, m = 80, 9
    tau = mpmath.mpf(10) ** -15
    s, q = Fraction(3, 2), Fraction(1, 5)
    new_u, new_l = P._discretise(P.gauss_tails(s, q, "remove"), mpmath.mpf(0), K, tau, m)
    with mpmath.workdps(40):
        old_u, old_l = P._discretise(lambda x: P._tails(_mp(s), _mp(q), "remove", x), mpmath.mpf(0), K, tau, m)
    assert new_u[0] == old_u[0] and len(new_u[1]) == len(old_u[1])
    assert all(0 <= o - n <= 2 for n, o in zip(new_u[1], old_u[1]))  # old rounds up one more
    assert all(0 <= n - o <= 2 for n, o in zip(new_l[1], old_l[1]))  # old rounds P down one more
    assert all(0 <= o - n <= 2 for n, o in zip(new_l[2], old_l[2]))


def test_format1_schedule_counts_as_digit_strings() -> None:
    """Format 1 (0.1.0) wrote dataset_size and batch_size as digit strings: the frozen
    certificate tests/certificate/format1/main-pld-epsilon-epochs.json was refused as
    malformed (exit 2) once the schedule check wanted integers."""
    import json
    from pathlib import Path

    from dpverify.errors import CertificateRejected

    path = Path(__file__).parents[1] / "certificate" / "format1" / "main-pld-epsilon-epochs.json"
    inputs = json.loads(path.read_text())["inputs"]
    assert isinstance(inputs["dataset_size"], str)
    P.check_tf_schedule(inputs)  # the recorded schedule is consistent
    with pytest.raises(CertificateRejected):
        P.check_tf_schedule({**inputs, "steps": str(inputs["steps"] + 1)})
