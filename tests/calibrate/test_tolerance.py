"""noise_to_tolerance: Opacus' contract (target - tolerance <= upper(z) < target)
whatever the float model says. ``upper`` here is an independent route, the
exact epsilon(delta) of one Gaussian mechanism (Balle, Wang 2018, Thm 8:
delta(eps) = Phi(1/(2z) - eps z) - e^eps Phi(-1/(2z) - eps z)) solved with
mpmath at 60 digits and rounded up to a float; it is decreasing in z."""

import math

import mpmath as mp
import pytest

from dpverify.calibration.tolerance import noise_to_tolerance

DELTA = mp.mpf("1e-5")


def _exact_eps(z: float) -> float:
    with mp.workdps(60):
        zz = mp.mpf(z)

        def delta(eps):
            return mp.ncdf(1 / (2 * zz) - eps * zz) - mp.exp(eps) * mp.ncdf(-1 / (2 * zz) - eps * zz)

        if delta(0) <= DELTA:
            return 0.0
        lo, hi = mp.mpf(0), mp.mpf(1)
        while delta(hi) > DELTA:
            lo, hi = hi, 2 * hi
        for _ in range(120):  # delta(eps) is decreasing: bisection to 2^-120 of the bracket
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if delta(mid) > DELTA else (lo, mid)
        eps = hi  # at or above the root
        return math.nextafter(float(eps), math.inf)  # a float at or above the exact value


class _Counted:
    def __init__(self):
        self.calls = []

    def __call__(self, z):
        self.calls.append(z)
        return _exact_eps(z)


@pytest.mark.parametrize("model", [None, "exact", "three_times", "fails"])
def test_window_is_met_whatever_the_model(model):
    target, tol = 2.0, 0.01
    models = {None: None, "exact": _exact_eps, "three_times": lambda z: 3 * _exact_eps(z),
              "fails": lambda z: None}
    upper = _Counted()
    z = noise_to_tolerance(upper, target, tol, model=models[model], guess=1.0)
    assert z in upper.calls  # the returned z was evaluated itself
    assert target - tol <= _exact_eps(z) < target
    if model == "exact":
        assert len(upper.calls) == 1  # a right model: one certified evaluation confirms it


def test_a_wrong_model_never_returns_an_unproved_multiplier():
    # a model that under-reports 10x would, trusted, return a multiplier far below
    # the target's: the search returns one whose upper end it evaluated below the target
    upper = _Counted()
    z = noise_to_tolerance(upper, 1.0, 0.01, model=lambda z: _exact_eps(z) / 10, guess=5.0)
    assert _exact_eps(z) < 1.0 and z in upper.calls


def test_a_budget_no_multiplier_meets_is_refused_as_opacus_refuses_it():
    with pytest.raises(ValueError, match="The privacy budget is too low"):
        noise_to_tolerance(lambda z: 1.0, 0.5, 0.01)
