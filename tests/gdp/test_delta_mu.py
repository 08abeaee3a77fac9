"""delta_mu(eps) (GDPT eq. 2) against mpmath at more than twice the digits."""

from fractions import Fraction

import mpmath
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from dpverify import ball as B
from dpverify.errors import InvalidParameter
from dpverify.gdp import delta_mu
from dpverify.gdp.delta_mu import ddelta_deps_ball, ddelta_dmu_ball, delta_mu_ball

from dpverify.ball import exact_str
from dpverify.certificate import quantity_certificate

from ..certs import record
from ..reference import delta_mu_ref, in_enclosure

mus = st.fractions(min_value=Fraction(1, 10**4), max_value=50, max_denominator=10**4)
epss = st.fractions(min_value=-100, max_value=10**4, max_denominator=10**3)


@given(mus, epss)
@example(Fraction(1, 10), Fraction(5))  # float64 gives 0; true ~2.6e-547
@example(Fraction(1, 2), Fraction(50))  # ~4.7e-2166
@example(Fraction(1, 10**4), Fraction(10**4))  # tiny mu, huge eps: terms cancel to 1e-12
@example(Fraction(1, 10**4), Fraction(0))  # both terms ~1/2
@example(Fraction(50), Fraction(-100))  # both terms ~1 / e^-100
def test_contains_mpmath_and_meets_width(mu, eps):
    enc = delta_mu(mu, eps)
    assert in_enclosure(delta_mu_ref(mu, eps, 15), enc)
    record(
        quantity_certificate(
            quantity="gdp.delta",
            inputs={"mu": exact_str(mu), "eps": exact_str(eps), "digits": 15},
            enclosure=enc,
            algorithm="erfc in arb, precision escalation",
        )
    )
    assert B.is_accurate(enc.as_ball(), 15) or enc.rel_width() <= mpmath.mpf(10) ** -15


@pytest.mark.parametrize("digits", [5, 15, 40, 100])
def test_requested_digits_are_met(digits):
    enc = delta_mu("0.5", "50", digits)
    assert enc.rel_width() <= B.ball(Fraction(1, 10**digits))
    assert in_enclosure(delta_mu_ref(Fraction(1, 2), Fraction(50), digits), enc)


def test_issue_values():
    # Values quoted in the foundation issue: ~2.6e-547 and ~4.7e-2166.
    assert delta_mu("0.1", "5").short(2) == "[2.6e-547, 2.7e-547]"
    assert delta_mu("0.5", "50").short(2) == "[4.6e-2166, 4.7e-2166]"


def test_float_input_is_its_binary_value():
    # 0.1 (float) is not 1/10: the enclosures differ at the 17th digit
    a, b = delta_mu(0.1, 5, 25), delta_mu("0.1", "5", 25)
    assert a.hi < b.lo or b.hi < a.lo


def test_mu_tiny_regime():
    # delta_mu(0) = 2 Phi(mu/2) - 1 ~ mu / sqrt(2 pi) for tiny mu: both terms ~1/2
    enc = delta_mu("1e-300", "0")
    with mpmath.workdps(700):
        ref = 2 * mpmath.ncdf(mpmath.mpf("1e-300") / 2) - 1
    assert in_enclosure(ref, enc)


@given(mus, epss, st.fractions(min_value=Fraction(1, 100), max_value=10, max_denominator=100))
def test_decreasing_in_eps(mu, eps, gap):
    # d delta / d eps = -e^eps Phi(...) < 0: a larger eps can never certify a larger delta
    a, b = delta_mu(mu, eps), delta_mu(mu, eps + gap)
    assert not (a.hi < b.lo)


@given(mus, epss, st.fractions(min_value=Fraction(1, 100), max_value=10, max_denominator=100))
def test_increasing_in_mu(mu, eps, gap):
    a, b = delta_mu(mu, eps), delta_mu(mu + gap, eps)
    assert not (b.hi < a.lo)


@given(mus, st.fractions(min_value=-20, max_value=20, max_denominator=100))
def test_partial_derivatives_match_finite_differences(mu, eps):
    # the closed forms of GDPT App A.5 against mpmath's numerical differentiation
    with B.working_precision(200):
        dmu = ddelta_dmu_ball(B.ball(mu), B.ball(eps))
        deps = ddelta_deps_ball(B.ball(mu), B.ball(eps))
    # 150 digits: f's first term is 1 - tiny, which the reference must resolve
    with mpmath.workdps(150):
        m, e = mpmath.mpf(mu.numerator) / mu.denominator, mpmath.mpf(eps.numerator) / eps.denominator
        f = lambda mm, ee: mpmath.ncdf(-ee / mm + mm / 2) - mpmath.exp(ee) * mpmath.ncdf(-ee / mm - mm / 2)
        ref_mu = mpmath.diff(lambda mm: f(mm, e), m)
        ref_eps = mpmath.diff(lambda ee: f(m, ee), e)
        for got, ref in ((dmu, ref_mu), (deps, ref_eps)):
            tol = abs(ref) * mpmath.mpf(10) ** -25 + mpmath.mpf(10) ** -140
            assert mpmath.mpf(B.lower_decimal(got, 40)) - tol <= ref <= mpmath.mpf(B.upper_decimal(got, 40)) + tol


def test_ball_inputs_give_enclosures_of_the_range():
    with B.working_precision(128):
        x = delta_mu_ball(B.ball(Fraction(2)), B.ball(Fraction(1)))
    assert in_enclosure(delta_mu_ref(Fraction(2), Fraction(1)), _enc(x))


def _enc(x):
    from dpverify.verdict import Enclosure

    return Enclosure.from_ball(x, 15)


@pytest.mark.parametrize(
    "mu, eps, digits, needle",
    [
        ("-1", "1", 15, "mu='-1' must be > 0"),
        ("0", "1", 15, "mu='0' must be > 0"),
        ("nan", "1", 15, "finite"),
        ("inf", "1", 15, "finite"),
        ("1", "abc", 15, "eps='abc' is not a number"),
        ("1", "1", 0, "digits=0"),
        ("1", "1", 301, "digits=301"),
    ],
)
def test_bad_input(mu, eps, digits, needle):
    with pytest.raises(InvalidParameter) as info:
        delta_mu(mu, eps, digits)
    assert needle in str(info.value)
