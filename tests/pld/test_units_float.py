"""The producer's Fourier window reads its allowance (an integer of mass units 2^-K) as a double
to choose a target. At sigma 1e100 the allowance is past the double range and the conversion
raised OverflowError: `audit dpsgd --noise-multiplier 1e100 --sampling-rate 0.01 --steps 1000
--eps 0.1` was an internal error (exit 4). It is read from its top 64 bits now."""

from __future__ import annotations

from fractions import Fraction

import pytest

from dpverify.cli import main
from dpverify.pld.fourier import _units_float


@pytest.mark.parametrize("v, K", [(1, 0), (3, 2), (2**70 + 12345, 80), (10**400, 1300), (7 * 2**1100, 1090)])
def test_units_float_is_the_value_to_double_precision(v, K):
    exact = Fraction(v, 2**K)  # the exact rational, an independent route
    got = _units_float(v, K)
    assert abs(Fraction(got) - exact) <= exact * Fraction(1, 2**52)


def test_past_the_double_range_it_is_a_target_no_mass_reaches():
    assert _units_float(10**400, 0) >= 2.0**936


def test_the_huge_sigma_delta_query_is_no_internal_error(capsys):
    # the query cannot reach its digits (a loss of 0.1 needs an output x near 0.1 sigma^2 / q = 1e201, of
    # probability about e^(-x^2 / (2 sigma^2)) = e^(-5e201); the lower end stays 0): exit 3 at the
    # budget, with a proved enclosure, where it was exit 4
    code = main(["audit", "dpsgd", "--noise-multiplier", "1e100", "--sampling-rate", "0.01", "--steps", "1000",
                 "--eps", "0.1", "--time-budget", "3"])
    assert code == 3
    assert "internal error" not in capsys.readouterr().err
