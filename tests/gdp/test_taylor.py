"""Taylor-model cells (dpverify.gdp.taylor) and the GDP cases that were undecided or slow before them.

Known answers: Laplace D/b = 2 and pure eps0 = 1 from GDPT's tables (printed
intervals [1.800905193, 1.800906194] and [1.232035385, 1.232036386]); the
Gaussian mechanism is exactly mu0-GDP (GDPT Def 4.1). The Taylor cell test is
checked against a brute-force mpmath scan of f(x) <= delta_T(x) at 60 digits.
"""

from fractions import Fraction

import mpmath
import pytest
from flint import ctx

from dpverify.gdp.certify import certify_gdp
from dpverify.gdp.taylor import cell_le_taylor, profile_series
from dpverify.mechanisms import MechanismSpec, build_profile


def _mp_delta_mu(mu, x):
    return mpmath.ncdf(-x / mu + mu / 2) - mpmath.exp(x) * mpmath.ncdf(-x / mu - mu / 2)


@pytest.mark.parametrize("name,opts,cells,T", [
    ("gaussian", {"mu": "1"}, [(0, 0.25), (1, 1.5), (3, 3.125)], Fraction(1) + Fraction(1, 10**9)),
    ("laplace", {"scale": "0.5"}, [(0.5, 0.75), (1.5, 1.75)], Fraction(1800906, 10**6)),
    ("pure", {"eps0": "1"}, [(0.0, 0.125), (0.5, 0.625)], Fraction(1232036, 10**6)),
])
def test_taylor_cells_agree_with_a_dense_mpmath_scan(name, opts, cells, T):
    profile = build_profile(MechanismSpec(name, opts))
    series = profile_series(profile)
    old = ctx.prec
    ctx.prec = 256
    try:
        for a, b in cells:
            a, b = Fraction(a), Fraction(b)
            proved = cell_le_taylor(series, a, b, T)
            with mpmath.workdps(60):
                mpT = mpmath.mpf(T.numerator) / T.denominator
                xs = [mpmath.mpf(a.numerator) / a.denominator
                      + (mpmath.mpf(b.numerator) / b.denominator - mpmath.mpf(a.numerator) / a.denominator) * i / 200
                      for i in range(201)]
                if name == "gaussian":
                    f = [_mp_delta_mu(mpmath.mpf(1), x) for x in xs]
                elif name == "laplace":
                    f = [1 - mpmath.exp((x - 2) / 2) for x in xs]
                else:
                    e = mpmath.e
                    f = [(e - mpmath.exp(x)) / (1 + e) for x in xs]
                holds = all(fx <= _mp_delta_mu(mpT, x) for fx, x in zip(f, xs))
            if proved:  # soundness: a proved cell is never violated
                assert holds
    finally:
        ctx.prec = old
    # and it can fail: below the optimum no cell containing the argmax closes
    assert not cell_le_taylor(series, Fraction(0), Fraction(1, 8), Fraction(1, 2)) or name == "laplace"


def test_gaussian_flat_cell_is_closed_wide():
    """A flat G_f (the Gaussian) closes a cell of width 1/4 at margin 1e-9, where
    the staircase needs width ~1e-9 (GDPT Thm 4.5 slope bound)."""
    s = profile_series(build_profile(MechanismSpec("gaussian", {"mu": "1"})))
    old = ctx.prec
    ctx.prec = 256
    try:
        assert cell_le_taylor(s, Fraction(0), Fraction(1, 4), Fraction(1) + Fraction(1, 10**9))
        assert not cell_le_taylor(s, Fraction(0), Fraction(1, 4), Fraction(1) - Fraction(1, 10**9))
    finally:
        ctx.prec = old


@pytest.mark.parametrize("name,opts,lo,hi", [
    ("laplace", {"scale": "0.5"}, "1.800905193", "1.800906194"),
    ("pure", {"eps0": "1"}, "1.232035385", "1.232036386"),
    ("gaussian", {"mu": "1"}, "0.999999999999", "1.000000000001"),  # exactly 1, widened by 2^-100
])
def test_known_answers_at_margin_1e9(name, opts, lo, hi):
    c = certify_gdp(build_profile(MechanismSpec(name, opts)), "10", "1e-9")
    assert c.status == "GDP"
    with mpmath.workdps(40):
        assert mpmath.mpf(lo) <= mpmath.mpf(c.head.enclosure.lo_str())
        assert mpmath.mpf(c.head.enclosure.hi_str()) <= mpmath.mpf(hi) + mpmath.mpf("1e-25")


def test_gaussian_any_eps_h():
    c = certify_gdp(build_profile(MechanismSpec("gaussian", {"mu": "0.3"})), "10000", "1e-12")
    assert c.status == "GDP" and c.head.closed_form
    with mpmath.workdps(40):
        assert mpmath.mpf(c.head.enclosure.lo_str()) <= mpmath.mpf("0.3") <= mpmath.mpf(c.head.enclosure.hi_str())


@pytest.mark.parametrize("eps_h", ["2", "0.5"])
def test_rr_tail_is_zero_past_log3(eps_h):
    """rr --p 0.75: profile (3/4 - e^t/4)_+ is 0 from t = log 3 (LT Thm 3.4)."""
    c = certify_gdp(build_profile(MechanismSpec("rr", {"p": "0.75"})), eps_h, "1e-6")
    assert c.tail.status == "certified" and c.tail.kind == "zero"
    # G_f(0) = mu_GDP(0, 1/2): 2 Phi(mu/2) - 1 = 1/2, mu = 2 Phi^-1(3/4)
    with mpmath.workdps(30):
        ref = 2 * mpmath.sqrt(2) * mpmath.erfinv(mpmath.mpf(1) / 2)
        assert mpmath.mpf(c.head.enclosure.lo_str()) <= ref <= mpmath.mpf(c.head.enclosure.hi_str())
