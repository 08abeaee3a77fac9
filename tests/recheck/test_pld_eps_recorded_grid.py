"""An eps(delta) certificate is settled on its recorded grid (issue 22, adv56 M3; pld-speed.md, "An
eps(delta) certificate on its recorded grid").

adv56's genuine sigma 0.15, q 0.01, T = 2, eps(1e-5) = 46.43, digits 8 (recorded 2^-12) took `verify`
about 51 CPU s: the eps route's delta scale was delta itself, whatever the recorded width, so its tail
budget and units (10^-10 of delta) left its ends 4.4e-10 (lower) and 1.2e-11 (upper) looser than the
producer's on the recorded grid, which then settled nothing, and 2^-13 (550,000 knots a step) was
computed too. The scale now carries the recorded width (:func:`pld._eps_scale`: delta times min(1, 10^5 w),
as the delta route's carries min(1, 10^3 w)). The same shape at digits 7 (recorded 2^-11, written by the
producer: arb, an independent route) shows the same miss at its upper end, so it stands in for it here
at a fifth of the cost. And where the h^2 law lands one halving past the recorded grid (T = 3, recorded
2^-13: 2^-14 ran), the recorded grid is computed first (a stub whose ends close like h^2)."""

from __future__ import annotations

import copy

import mpmath
from mpmath import mpf

from dpverify.recheck import pld as P

from ..certs import outcome, reseal

#: `dpverify audit dpsgd --noise-multiplier 0.15 --sampling-rate 0.01 --steps 2 --delta 1e-5 --digits 7`
CERT = {
    "format": "dpverify-certificate/2",
    "dpverify": "0.1.0",
    "claim": {
        "quantity": "pld.epsilon",
        "statement": "epsilon(delta) of the composed (Poisson-subsampled) mechanisms under the add-remove "
                     "relation lies in [lo, hi]",
        "source": "AFA Def 7, Thm 10, Thm 11; Doroshenko et al. 2022 (connect-the-dots)",
    },
    "inputs": {"noise_multiplier": "0.15", "sampling_rate": "0.01", "steps": 2, "neighboring": "add-remove",
               "delta": "1e-5", "digits": 7},
    "result": {
        "quantity": "epsilon(delta=1e-5)",
        "enclosure": {"lo": "46.430320867554212", "hi": "46.430320937476156"},
        "neighboring": "add-remove",
        "grid": "2^-11",
        "mass_unit": "2^-74",
        "relative_width": "1.51e-09",
    },
    "method": {
        "backend": "python-flint 0.9.0 arb",
        "precision_bits": 74,
        "algorithm": "pessimistic connect-the-dots and optimistic quantised pairs on the grid 2^-11, exact "
                     "fmpz_poly convolution in units of 2^-74, square-and-multiply, certified suffix-sum queries",
    },
    "digest": "afaf6e7d34bf6e7c6554f3692767ca7d3da0f78b1f2fb03c4fb43f4576a50115",
}


def test_the_genuine_certificate_is_accepted_on_its_recorded_grid(monkeypatch) -> None:
    """Accepted (exit 0), and no grid finer than the recorded 2^-11 is computed: the route's ends there lie
    inside the producer's (before, its upper end was 2.0e-12 above the recorded one and 2^-12 ran)."""
    assert reseal(copy.deepcopy(CERT))["digest"] == CERT["digest"]  # the producer's bytes, unedited
    grids: list = []
    direction_bounds = P.direction_bounds

    def spy(events, d, kind, target, exact, K, tau, budget, m, *args, **kwargs):
        grids.append(m)
        return direction_bounds(events, d, kind, target, exact, K, tau, budget, m, *args, **kwargs)

    monkeypatch.setattr(P, "direction_bounds", spy)
    assert outcome(copy.deepcopy(CERT)) == 0
    assert grids and max(grids) == 11


def test_the_scale_carries_the_recorded_width() -> None:
    """The eps route's scale is delta times min(1, 10^5 w) (w = 1.51e-9 relative here: 13 bits more
    unit, a tail budget 1.5e-4 times delta's); without a record, delta."""
    with mpmath.workdps(P._DPS):
        D = mpf("1e-5")
        w = (mpf("46.430320937476156") - mpf("46.430320867554212")) / mpf("46.430320937476156")
        assert abs(P._eps_scale(CERT["result"], D) / (D * w * 10**5) - 1) < mpf(10) ** -30
        assert P._eps_scale({}, D) == D
        assert P._units(D * w * 10**5, mpf(46), 2)[0] - P._units(D, mpf(46), 2)[0] in (12, 13, 14)


def _closing(tried: list, c: str = "0.85"):
    """A direction whose ends close like h^2 from 2^-9, the finer grids' gaps ``c`` times the law's
    prediction from 2^-9 (as i_3's: its 2^-13 gap is below the h^2 extrapolation of its 2^-9 one)."""
    def compute(m, sides, d, lo):
        meter = P._METER.get()
        meter.charge(1000 * 2 ** m, m, sides)
        if meter.cap >= 0:  # not a dry price
            tried.append(m)
        g = mpf(4) ** -(m - 9) * (1 if m <= 9 else mpf(c))
        return 1 - g, 1 + g
    return compute


def _record(m: int, width: mpf, grid: "int | None") -> dict:
    got = {"enclosure": {"lo": mpmath.nstr(1 - width / 2, 30), "hi": mpmath.nstr(1 + width / 2, 30)}}
    return dict(got, grid=f"2^-{grid}") if grid is not None else got


def test_the_recorded_grid_is_tried_where_the_law_lands_one_halving_past_it() -> None:
    """i_3's search: 2^-9's gap predicts 2^-13 at 1.18 times the recorded width (the law's 7 % slack
    passed), so 2^-14 was next; the recorded grid 2^-13 is computed first and settles it. Without a
    recorded grid, or where it does not settle (a forged hint), the law's grid follows as before."""
    width = 2 * mpf(4) ** -4 * mpf("0.851")  # the producer's gap on 2^-13, rounded outward
    with mpmath.workdps(P._DPS):
        tried: list = []
        P._grid_for_width(_closing(tried), ["remove"], _record(13, width, 13))
        assert tried == [9, 13]
        tried = []
        P._grid_for_width(_closing(tried), ["remove"], _record(13, width, None))
        assert tried == [8, 14]  # no hint: the default start, then the law
        tried = []
        P._grid_for_width(_closing(tried, "0.95"), ["remove"], _record(13, width, 13))
        assert tried == [9, 13, 14]  # 2^-13 does not settle: one more round
