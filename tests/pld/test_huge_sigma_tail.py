"""delta(eps) at a huge noise multiplier (sigma 1e2 .. 1e100): the true delta is far below any unit a
grid resolves (about e^-(10^11) at sigma 1e6), so the refinement ran its whole budget and answered
exit 3. Such a query is now answered [0, U] from a Renyi tail bound (dpverify.pld.tail), and
`verify` settles it with its own bound (recheck.events.leaves_delta_upper).

Independent routes: the exact delta of one step in closed form at 60 digits in mpmath (the Gaussian,
and the Poisson-subsampled Gaussian's remove and add pairs through the loss's threshold), which both
bounds must lie above; a 30-digit mpmath quadrature of the add pair's cumulant, which the AM-GM bound
(the new ingredient of both routes) must lie above; and the CLI round trip."""

from fractions import Fraction as F

import mpmath
import pytest

from dpverify.cli import main
from dpverify.pld.accountant import Step
from dpverify.pld.pairs import SubsampledGaussianPair
from dpverify.pld.tail import TAIL_BITS, renyi_exponent, tail_answer
from dpverify.recheck.events import leaves_delta_upper

from ..certs import outcome, reseal


def _fr(v: F) -> mpmath.mpf:
    return mpmath.mpf(v.numerator) / v.denominator


def _exact_one_step(sigma: F, q: F, eps: F, direction: str) -> mpmath.mpf:
    """delta(eps) of one step at 60 digits, x ~ N(0, 1), mu = 1/sigma, W = e^(mu x - mu^2/2).
    remove (P the mixture, Q = N(0, 1)): L > eps iff x > x0 = (log((e^eps - 1 + q)/q) + mu^2/2)/mu, so
    delta = (1-q) Sf(x0) + q Sf(x0 - mu) - e^eps Sf(x0); q = 1 is the Gaussian. add (P = N(0, 1), Q the
    mixture): L = -log(1 - q + q W) > eps iff W < (e^-eps - 1 + q)/q (none when that is <= 0), i.e.
    x < x1 = (log((e^-eps - 1 + q)/q) + mu^2/2)/mu, and delta = Cdf(x1) - e^eps ((1-q) Cdf(x1) +
    q Cdf(x1 - mu))."""
    with mpmath.workdps(60):
        mu, qq, e = 1 / _fr(sigma), _fr(q), _fr(eps)
        if direction == "remove":
            x0 = (mpmath.log((mpmath.exp(e) - 1 + qq) / qq) + mu * mu / 2) / mu
            return (1 - qq) * mpmath.ncdf(-x0) + qq * mpmath.ncdf(mu - x0) - mpmath.exp(e) * mpmath.ncdf(-x0)
        w = (mpmath.exp(-e) - 1 + qq) / qq
        if w <= 0:
            return mpmath.mpf(0)
        x1 = (mpmath.log(w) + mu * mu / 2) / mu
        return mpmath.ncdf(x1) - mpmath.exp(e) * ((1 - qq) * mpmath.ncdf(x1) + qq * mpmath.ncdf(x1 - mu))


def _steps(sigma, q, count):
    return [Step(lambda d: SubsampledGaussianPair(F(sigma), F(q), d), count)]


@pytest.mark.parametrize("mu,q,a", [(F(1, 2), F(3, 10), 5), (F(2), F(1, 2), 3), (F(1, 10), F(1, 100), 40),
                                    (F(1), F(9, 10), 2)])
def test_amgm_bound_of_the_add_cumulant_lies_above_the_quadrature(mu, q, a):
    """E_P[(dP/dQ)^(a-1)] of the add pair, by quadrature over x ~ N(0, 1), is at most
    e^(q (a-1)(1 + q (a-1)) mu^2 / 2) (1 - q + q W >= W^q, weighted AM-GM)."""
    with mpmath.workdps(30):
        m, qq = _fr(mu), _fr(q)
        f = lambda x: mpmath.npdf(x) * (1 - qq + qq * mpmath.exp(m * x - m * m / 2)) ** -(a - 1)  # noqa: E731
        moment = mpmath.quad(f, [-mpmath.inf, -10, 0, 10, mpmath.inf])
        lam = (a - 1) * qq
        assert moment <= mpmath.exp(lam * (1 + lam) * m * m / 2)


@pytest.mark.parametrize("sigma,q,eps,direction", [
    (F(20), F(1, 2), F(3), "remove"),      # delta about 1e-1157: the tail answer
    (F(10), F(1), F(40), "remove"),        # the Gaussian, eps / mu = 400
    (F(4, 5), F(1, 2), F(3, 10), "add"),   # moderate: the add pair's bound (min of AM-GM and the loss bound)
    (F(3), F(1, 10), F(1, 20), "add"),
    (F(3, 2), F(1, 5), F(1), "remove"),
])
def test_both_bounds_lie_above_the_exact_delta(sigma, q, eps, direction):
    exact = _exact_one_step(sigma, q, eps, direction)
    e = renyi_exponent(_steps(sigma, q, 1), (direction,), eps)
    assert e is not None
    with mpmath.workdps(60):
        producer = mpmath.exp(mpmath.mpf(e.upper().str(30, radius=False)))
    recheck = leaves_delta_upper([("gaussian", sigma, q, 1)], direction, eps)
    assert exact <= producer * (1 + mpmath.mpf(10) ** -25) and exact <= recheck
    # both routes bound the same quantity at the same order: they agree closely
    assert abs(mpmath.log(recheck) - mpmath.log(producer)) < mpmath.mpf(10) ** -6 * max(1, abs(mpmath.log(recheck)))


def test_tail_answer_only_below_its_threshold_and_above_the_exact_value():
    U = tail_answer(_steps(20, F(1, 2), 1), ("remove",), F(3))
    assert U is not None and U <= F(1, 2**TAIL_BITS)
    assert _exact_one_step(F(20), F(1, 2), F(3), "remove") <= _fr(U)
    # a moderate delta (sigma 1.5: about 1e-2) is left to the grid
    assert tail_answer(_steps(F(3, 2), F(1, 5), 10), ("remove", "add"), F(1)) is None


@pytest.mark.parametrize("schedule", [
    ["--noise-multiplier", "1e6", "--sampling-rate", "0.01", "--steps", "100", "--eps", "1"],
    ["--noise-multiplier", "1e100", "--sampling-rate", "0.01", "--steps", "100", "--eps", "1"],
    ["--noise-multiplier", "1e3", "--dataset-size", "60000", "--batch-size", "600", "--epochs", "1", "--eps", "1"],
    ["--noise-multiplier", "1e6", "--sampling-rate", "0.01", "--steps", "100", "--claimed-eps", "1",
     "--delta", "1e-5"],
    # a delta budget far below 2^-TAIL_BITS: the recorded U is the bound itself (about 1.6e-1782), not a floor
    ["--noise-multiplier", "1e6", "--sampling-rate", "0.01", "--steps", "100", "--claimed-eps", "1",
     "--delta", "1e-1500"],
    # verify's own bound is e^-(7e8), which MPFR rounds up to 2^-(2^30): it was exit 3 ("beyond the
    # second route's range") until the bound was raised to verify's floor 2^-(2^19)
    ["--noise-multiplier", "1e20", "--sampling-rate", "1", "--steps", "10", "--claimed-eps", "1e16",
     "--delta", "1e-5"],
])
def test_huge_sigma_round_trip(schedule, tmp_path, capsys):
    """Exit 0 with [0, U], U <= 2^-TAIL_BITS, and `verify` confirms (before: exit 3 after the whole
    budget, [0, tiny]); a claim holds. The line says the width is unbounded (it printed "None")."""
    import json

    path = tmp_path / "c.json"
    assert main(["audit", "dpsgd", *schedule, "--time-budget", "60", "--certificate", str(path)]) == 0
    assert "None" not in capsys.readouterr().out
    cert = json.loads(path.read_text())
    enc = cert["result"]["enclosure"]
    assert enc["lo"] == "0" and mpmath.mpf(enc["hi"]) <= mpmath.mpf(2) ** -TAIL_BITS
    if "--claimed-eps" in schedule:
        assert cert["result"]["verdict"] == "holds"
    assert outcome(cert) == 0


def test_an_enclosure_above_the_bound_is_refused(tmp_path):
    """A recorded delta(1) in [1e-500, 2e-500] at sigma 1e6: verify's own bound (below 1e-1700) proves it
    false (exit 1)."""
    import json

    path = tmp_path / "c.json"
    assert main(["audit", "dpsgd", "--noise-multiplier", "1e6", "--sampling-rate", "0.01", "--steps", "100",
                 "--eps", "1", "--certificate", str(path)]) == 0
    cert = json.loads(path.read_text())
    cert["result"]["enclosure"] = {"lo": "1e-500", "hi": "2e-500"}
    assert outcome(reseal(cert)) == 1


def test_the_bound_is_floored_and_still_above_the_exact_delta():
    """At sigma 1e20, rate 1, 10 steps, eps 1e16 the composition is the Gaussian of mu = sqrt(10)/1e20, whose
    delta(eps) <= Sf(eps/mu - mu/2) (the first term of the closed form) has log below -10^70 (mpmath, which
    has no exponent floor): verify's bound is its floor 2^-(2^19), an upper bound, and a number."""
    U = leaves_delta_upper([("gaussian", F(10**20), F(1), 10)], "add-remove", F(10**16))
    assert U == mpmath.mpf(2) ** -(2**19)
    with mpmath.workdps(30):
        mu = mpmath.sqrt(10) / mpmath.mpf(10) ** 20
        log_exact = mpmath.log(mpmath.ncdf(-(mpmath.mpf(10) ** 16 / mu - mu / 2)))
    assert log_exact < -mpmath.mpf(10) ** 70 < mpmath.log(U)
