"""The numeric core: exact parsing, outward output, special functions, escalation, roots."""

from fractions import Fraction

import mpmath
import pytest
from flint import arb
from hypothesis import given
from hypothesis import strategies as st

from dpverify import ball as B
from dpverify.errors import InvalidParameter, PrecisionExhausted, Undecided

from .reference import mpf_exact


@pytest.mark.parametrize(
    "text, value",
    [
        ("0.1", Fraction(1, 10)),
        ("1e-5", Fraction(1, 100000)),
        ("1/3", Fraction(1, 3)),
        ("-2.5E+3", Fraction(-2500)),
        (".5", Fraction(1, 2)),
        ("256/60000", Fraction(256, 60000)),
        (" 7 ", Fraction(7)),
        (3, Fraction(3)),
        (Fraction(2, 7), Fraction(2, 7)),
        # a float is taken at its exact binary value, not at its repr
        (0.1, Fraction(3602879701896397, 36028797018963968)),
    ],
)
def test_parse_exact_accepts(text, value):
    assert B.parse_exact(text, "x") == value


@pytest.mark.parametrize(
    "bad", ["abc", "nan", "inf", "-Infinity", "1/0", "", "1e999999", "0x10", "1,5", float("nan"), True, None]
)
def test_parse_exact_rejects_and_names_the_argument(bad):
    with pytest.raises(InvalidParameter) as info:
        B.parse_exact(bad, "sigma")
    assert "sigma" in str(info.value)


@pytest.mark.parametrize(
    "x, text",
    [(Fraction(1, 100000), "0.00001"), (Fraction(-3, 4), "-0.75"), (Fraction(1, 3), "1/3"), (Fraction(5), "5")],
)
def test_exact_str(x, text):
    assert B.exact_str(x) == text
    assert B.parse_exact(text) == x


@given(st.integers(-10**60, 10**60), st.integers(-2940, 2940))
def test_exact_str_of_every_decimal_input_is_short_and_exact(m, e):
    # every decimal a user may write (at most 1000 characters, exponent within +-3000)
    # is recorded in text that parses back to the same rational and stays within the
    # 1000-character cap that verify applies to a certificate's numbers; before, 1e-3000
    # was written as "1/1000...0" (3003 characters) and its certificate refused
    x = Fraction(m) * Fraction(10) ** e
    text = B.exact_str(x)
    assert B.parse_exact(text) == x and Fraction(text) == x
    assert len(text) <= 1000


@given(
    st.fractions(min_value=Fraction(-10**6), max_value=Fraction(10**6), max_denominator=10**9),
    st.integers(min_value=1, max_value=30),
)
def test_decimal_bounds_are_outward(x, digits):
    with B.working_precision(200):
        b = B.ball(x)
    lo = Fraction(B.lower_decimal(b, digits))
    hi = Fraction(B.upper_decimal(b, digits))
    assert lo <= x <= hi
    if x != 0:
        # and tight: within one unit of the last printed digit
        assert hi - lo <= abs(x) * Fraction(10) ** (2 - digits)


def test_decimal_bounds_far_outside_double_range():
    with B.working_precision(128):
        x = arb(10) ** -100000 * 3
    lo, hi = B.lower_decimal(x, 5), B.upper_decimal(x, 5)
    assert lo.startswith("2.9999") or lo.startswith("3e") or lo.startswith("3.")
    assert lo.endswith("e-100000") and hi.endswith("e-100000")
    assert B.upper_decimal(arb(-2) / 3, 3) == "-0.666"
    assert B.lower_decimal(arb(-2) / 3, 3) == "-0.667"


@given(st.fractions(min_value=-(10**6), max_value=10**6, max_denominator=1000))
def test_normal_cdf_sf_logcdf_contain_mpmath(x):
    with B.working_precision(128):
        bx = B.ball(x)
        cdf, sf, lcdf = B.normal_cdf(bx), B.normal_sf(bx), B.normal_logcdf(bx)
    with mpmath.workdps(80):
        m = mpf_exact(x)
        ref_cdf, ref_sf = mpmath.ncdf(m), mpmath.ncdf(-m)
        # log of 1 - tiny needs log1p in the reference too, or it loses digits
        ref_log = mpmath.log1p(-ref_sf) if m > 0 else mpmath.log(ref_cdf)
        for got, ref in ((cdf, ref_cdf), (sf, ref_sf), (lcdf, ref_log)):
            assert got.is_finite()
            assert mpmath.mpf(B.lower_decimal(got, 30)) <= ref <= mpmath.mpf(B.upper_decimal(got, 30))
            # accurate, not just sound: at least 25 correct digits at 128 bits
            assert B.is_accurate(got, 25) or abs(ref) < mpmath.mpf(10) ** -30


def test_erfc_of_inexact_huge_argument_stays_accurate():
    # arb's own erfc returns [+/- 2e-217147239390] here; ours keeps ~30 digits
    with B.working_precision(128):
        z = arb(10**6) / arb(2).sqrt()
        assert z.rad() > 0
        v = B.erfc(z)
        assert B.is_accurate(v, 25)
    with mpmath.workdps(60):
        ref = mpmath.erfc(mpmath.mpf(10**6) / mpmath.sqrt(2))
        assert mpmath.mpf(B.lower_decimal(v, 40)) <= ref <= mpmath.mpf(B.upper_decimal(v, 40))


def test_positive_part():
    with B.working_precision(64):
        assert B.positive_part(arb(-3)).is_zero()
        assert B.positive_part(arb(2)) == 2
        pp = B.positive_part(arb(0, 1))  # [-1, 1] -> [0, 1]
        assert pp.lower() >= 0 and pp.upper() >= 1


def test_sign_is_three_valued():
    with B.working_precision(64):
        assert B.sign(arb(1) / 3) == 1
        assert B.sign(-arb(1) / 3) == -1
        assert B.sign(arb(0)) == 0
        with pytest.raises(Undecided):
            B.sign(arb(0, 1))


def test_refine_reaches_accuracy_and_reports_exhaustion():
    x, bits = B.refine(lambda: arb.pi() * 2, digits=50)
    assert B.is_accurate(x, 50) and bits >= 166
    with pytest.raises(PrecisionExhausted) as info:
        B.refine(lambda: arb(1, 1), digits=5, max_bits=256, what="a stubborn value")
    assert "a stubborn value" in str(info.value)


@given(st.fractions(min_value=Fraction(1, 1000), max_value=1000, max_denominator=1000))
def test_isolate_increasing_root_cube_root(c):
    a, b, _ = B.isolate_increasing_root(
        lambda x: x * x * x - B.ball(c), arb(0), arb(11), digits=20
    )
    # independent check with exact rationals: a^3 <= c <= b^3
    lo = Fraction(B.lower_decimal(a, 40))
    hi = Fraction(B.upper_decimal(b, 40))
    assert lo**3 <= c <= hi**3
    assert hi - lo <= Fraction(10) ** -19 * max(lo, Fraction(1, 10**9))


def test_isolate_rejects_non_bracket():
    with pytest.raises(ValueError):
        B.isolate_increasing_root(lambda x: x - 5, arb(0), arb(1), digits=10)


@given(st.integers(-(2**80), 2**80), st.integers(-1200, 1200))
def test_arb_to_fraction_is_exact_on_dyadic_points(m, e):
    """Reference: the dyadic m * 2^e written as a Fraction by hand (exact rationals)."""
    want = Fraction(m) * Fraction(2) ** e
    with B.working_precision(200):
        x = arb(m) * arb(2) ** e  # exact: |m| < 2^81 fits in 200 bits, a power of two is exact
        assert x.is_exact()
        assert B.arb_to_fraction(x) == want


@pytest.mark.parametrize("x", [arb(1) / 3, arb("inf"), arb("nan")], ids=["third", "inf", "nan"])
def test_arb_to_fraction_refuses_a_ball_it_cannot_state_exactly(x):
    """1/3 is a ball with a radius: its midpoint is not its value, so the conversion
    must refuse rather than hand back a rational the ball only approximates."""
    with pytest.raises(ValueError):
        B.arb_to_fraction(x)


@pytest.mark.parametrize("rad_exp", [-70, -200, -5000, -10**6])
def test_endpoints_of_a_ball_far_narrower_than_its_midpoint_keep_its_radius(rad_exp) -> None:
    # 1 +- 2^rad_exp: the ends are exact dyadics within 1/256 of the radius of 1 -+ 2^rad_exp (up to
    # 2^-DEFAULT_MAX_BITS), checked as exact rationals. At the midpoint's bits + 64 alone they were
    # 1 -+ 2^-64 (adv53 M5: `gdp delta --mu 1e100 --eps 1 --digits 30` printed a width 8e-20)
    x = arb(1) + arb(0, arb(2) ** rad_exp)
    lo, hi = B.endpoints(x)
    exact = [_dyadic(e) for e in (lo, hi)]
    r = Fraction(2) ** max(rad_exp, -B.DEFAULT_MAX_BITS + 9)
    assert exact[0] <= 1 - Fraction(2) ** rad_exp and exact[1] >= 1 + Fraction(2) ** rad_exp  # still an enclosure
    assert 1 - exact[0] <= r * Fraction(257, 256) and exact[1] - 1 <= r * Fraction(257, 256)


def _dyadic(e: arb) -> Fraction:
    m, x = (int(v) for v in e.man_exp())
    return Fraction(m) * Fraction(2) ** x
