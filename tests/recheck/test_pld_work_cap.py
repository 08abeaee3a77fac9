"""The PLD re-check prices each grid before its work (recheck.pld._Meter, cap PLD_MAX_GRID_WORK).

* the price is a pure function of the query and the grid: a grid remembered from an earlier query is
  charged exactly what computing it afresh charges, for either side (so a certificate's answer does
  not depend on what was verified before it in the same process);
* the price is the knots of each step law's range x (K + m + 32) x bit length of the steps x sides,
  recomputed here from the discretisation's own range;
* a grid that would pass the cap is refused before its work, naming the cap (exit 3).
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import mpmath
import pytest

from dpverify.errors import CouldNotReprove
from dpverify.recheck import pld as P
from dpverify.recheck.limits import PLD_MAX_GRID_WORK

FORMAT2 = Path(__file__).resolve().parents[1] / "certificate" / "format2"
INPUTS = {"noise_multiplier": "1.1", "sampling_rate": "0.01", "steps": 50, "neighboring": "add-remove", "eps": "1"}


def _priced(call, *args) -> int:
    """What one call charges to a fresh meter."""
    meter = P._Meter()
    token = P._METER.set(meter)
    try:
        call(*args)
    finally:
        P._METER.reset(token)
    return meter.spent


def _query(sides: str):
    E = mpmath.mpf(1)
    return (INPUTS, "delta", E, mpmath.mpf("1e-3"), E, 9, sides, "remove")


def _check_replay(bounds, query) -> None:
    """A "both" grid costs what its two sides cost afresh, and serves either side for exactly
    that side's fresh price."""
    with mpmath.workdps(40):
        fresh = {s: _priced(P._remembered(bounds), *query(s)) for s in ("upper", "lower")}
        for sides in ("upper", "lower"):
            both = P._remembered(bounds)
            first = _priced(both, *query("both"))
            again = _priced(both, *query(sides))  # served by the "both" result
            assert fresh[sides] > 0 and again == fresh[sides], (sides, again, fresh)
            assert first == fresh["upper"] + fresh["lower"]


def test_a_remembered_grid_is_charged_what_a_fresh_one_is() -> None:
    _check_replay(P._bounds, _query)


def test_a_remembered_upper_only_event_tree_is_charged_what_a_fresh_one_is() -> None:
    """ref43 D1: an upper-only event tree (sampling without replacement under replace-one) composes
    its main pair as "upper" and its realised lower pair as "lower", so its "both" total is not three
    equal thirds; replaying a third of it charged a history-dependent price."""
    from dpverify.recheck import events as E

    c = json.loads((FORMAT2 / "events-epsilon-wor.json").read_text())
    D = mpmath.mpf(c["inputs"]["delta"])
    _check_replay(E._bounds, lambda sides: (c["inputs"], "eps", D, D, mpmath.mpf(0), 8, sides, None))


def _grid_price(query) -> tuple[int, int]:
    """(the grid's price, all it charges): the meter's charge calls, before the work, and its total
    with the exact products past that price (tests/recheck/test_pld_product_meter.py)."""
    charged: list = []
    real = P._Meter.charge

    def spy(self, units, m, sides):
        charged.append(units * (sides != "lower") + 2 * units * (sides != "upper"))
        return real(self, units, m, sides)

    P._Meter.charge = spy  # type: ignore[method-assign]
    try:
        with mpmath.workdps(40):
            spent = _priced(P._remembered(P._bounds), *query)
    finally:
        P._Meter.charge = real  # type: ignore[method-assign]
    return sum(charged), spent


def test_the_price_is_knots_times_bits_times_log_steps_times_sides() -> None:
    price, spent = _grid_price(_query("both"))
    with mpmath.workdps(40):
        K, tau, _ = P._units(mpmath.mpf("1e-3"), mpmath.mpf(1), 50)
        (off, up, _), _ = P._discretise(P.gauss_tails(Fraction(11, 10), Fraction(1, 100), "remove"), K, tau, 9)
    # the range's knots (the upper masses: one per knot), the masses' bits, 50 < 2^6, both sides (1 + 2)
    assert price == len(up) * (K + 9 + 32) * 6 * 3 <= spent


def test_a_grid_past_the_cap_is_refused_before_its_work() -> None:
    meter = P._Meter()
    meter.upper = PLD_MAX_GRID_WORK - 1000  # the grids before it spent all but a little of the cap
    token = P._METER.set(meter)
    try:
        with mpmath.workdps(40), pytest.raises(CouldNotReprove, match="work cap"):
            P._remembered(P._bounds)(*_query("both"))
    finally:
        P._METER.reset(token)
    # refused when priced, that is before its masses: nothing beyond the price was added
    price, _ = _grid_price(_query("both"))
    assert meter.spent == PLD_MAX_GRID_WORK - 1000 + price


def test_the_drop_keeps_the_trims_working() -> None:
    """A product rounds every coefficient up to a whole unit, so its far tail is a run of one-unit
    masses about a factor long; a trim removes them only within its budget. With the upper pair's
    unit two bits coarser the budget fell below a step's knots (sigma 1.1, q 0.01, T = 1024, digits 6
    on 2^-17: 367,622 units against 530,000 knots) and each squaring kept half a length more: base^64
    had 10.7 million knots. Here the same shape at 2^-10: a budget of 3 step lengths, which a drop of
    2 cuts to 3/4 of one. The drop is now taken only while the budget stays twice a step's knots, and
    the 1024-fold power stays within three step lengths, as with no drop at all."""
    tails = P.gauss_tails(Fraction(11, 10), Fraction(1, 100), "remove")
    events = [(lambda d: (tails, mpmath.mpf(0)), 1024)]
    with mpmath.workdps(40):
        K, tau, _ = P._units(mpmath.mpf("1e-5"), mpmath.mpf(1), 1024)
        (_, one, _), _ = P._discretise(tails, K, tau, 10)
        budget = 3 * len(one)
        assert P._drop_within_budget(2, budget, len(one)) == 0 and P._drop_within_budget(2, 8 * len(one), len(one)) == 2
        U, _ = P._compose(events, "remove", K, tau, budget, 10, "upper", upper_drop=2)
        U0, _ = P._compose(events, "remove", K, tau, budget, 10, "upper", upper_drop=0)
    assert len(U[1]) == len(U0[1]) < 3 * len(one)
