"""eps(delta) = 0 of a DP-SGD schedule whose total-variation bound is at most delta, answered before
any grid (dpverify.pld.tail.tv_upper). At sigma 1e100 (or a rate of 1e-400) the grid resolves only an
upper end of one cell, so the eps search ran to its clock (exit 3) while verify re-proved the [0, 0]
by the same bound (recheck.events._tv_upper).

Independent route: delta(0) of one step is q (2 Phi(1/(2 sigma)) - 1) in closed form (the pair
differs by q (N(1/sigma, 1) - N(0, 1))), evaluated at 60 digits in mpmath; TV is subadditive over a
composition, so T times it bounds delta(0), and the producer's bound must lie above that."""

from fractions import Fraction as F
import json

import mpmath
import pytest

from dpverify.cli import main
from dpverify.pld.accountant import Step
from dpverify.pld.pairs import SubsampledGaussianPair
from dpverify.pld.tail import tv_upper
from dpverify.recheck.verify import verify_file


def _steps(sigma: F, q: F, T: int) -> list:
    return [Step(lambda d, s=sigma, r=q: SubsampledGaussianPair(s, r, d), T)]


@pytest.mark.parametrize("sigma,q,T", [(F(10) ** 100, F(1, 100), 1000), (F(1), F(1, 10**400), 1000),
                                       (F(2), F(1, 100), 50), (F(10) ** 6, F(1), 3)])
def test_the_bound_lies_above_the_closed_form_tv(sigma, q, T):
    with mpmath.workdps(60):
        one = mpmath.mpf(q.numerator) / q.denominator * mpmath.erf(sigma.denominator / (2 * mpmath.sqrt(2) * sigma.numerator))
        exact_sum = T * one  # >= delta(0) of the composition (subadditivity)
        U = tv_upper(_steps(sigma, q, T), ("add", "remove"))
        assert U is not None and mpmath.mpf(U.numerator) / U.denominator >= exact_sum > 0


@pytest.mark.parametrize("argv", [
    ["--noise-multiplier", "1e100", "--sampling-rate", "0.01", "--steps", "1000", "--delta", "1e-5"],
    ["--noise-multiplier", "1", "--sampling-rate", "1e-400", "--steps", "1000", "--delta", "1e-5"],
    ["--noise-multiplier", "1e50", "--sampling-rate", "1", "--steps", "10", "--delta", "1e-40", "--neighboring", "remove"],
])
def test_eps_zero_by_total_variation_answers_at_once_and_verifies(argv, tmp_path):
    """sigma 1e100: exit 3 at the clock before (the budget here is 5 s); verify confirms the [0, 0]."""
    cert = tmp_path / "c.json"
    assert main(["audit", "dpsgd", *argv, "--time-budget", "5", "--certificate", str(cert)]) == 0
    c = json.loads(cert.read_text())
    assert c["result"]["enclosure"] == {"lo": "0", "hi": "0"}
    assert verify_file(cert)[0] == 0, verify_file(cert)


def test_a_bound_above_delta_leaves_the_query_to_the_grid():
    """sigma 2, q 0.01, 50 steps: the bound is 0.1, above delta 1e-5, and eps(delta) > 0 (no shortcut)."""
    U = tv_upper(_steps(F(2), F(1, 100), 50), ("add", "remove"))
    assert U == F(1, 10)
    assert tv_upper([Step(lambda d: SubsampledGaussianPair(F(2), F(1), "replace"), 5)], ("replace",)) is None


def test_a_delta_far_below_any_unit_is_the_tv_tail_and_verifies(tmp_path):
    """A sampling rate of 1e-400: delta(0.1) lies near 1e-398, the Renyi tail bound at eps 0.1 only near
    e^-409 (above 2^-1000), and the grid ran to its clock (exit 3). delta(eps) <= delta(0) <= the TV
    bound answers [0, U] (U a power of two, at least twice the bound), which verify settles by its own
    copy of the bound (recheck.events._pld_tail)."""
    cert = tmp_path / "c.json"
    argv = ["--noise-multiplier", "1", "--sampling-rate", "1e-400", "--steps", "1000", "--eps", "0.1"]
    assert main(["audit", "dpsgd", *argv, "--time-budget", "5", "--certificate", str(cert)]) == 0
    enc = json.loads(cert.read_text())["result"]["enclosure"]
    assert enc["lo"] == "0"
    with mpmath.workdps(60):
        tv = 1000 * mpmath.mpf(10) ** -400 * mpmath.erf(1 / (2 * mpmath.sqrt(2)))  # >= delta(0), as above
        assert 2 * tv <= mpmath.mpf(enc["hi"]) < mpmath.mpf(2) ** -1000
    assert verify_file(cert)[0] == 0, verify_file(cert)
