"""A PLD grid's discretisation is charged up to PLD_KNOT_WEIGHT a knot x bit (adv54 M2,
:func:`dpverify.recheck.pld.knot_charge`).

The grid's price is knots x bits x the bit length of T a side composed (1 upper, 2 lower): at T = 1
that is 1 + 2 units a knot x bit, while the discretisation's MPFR tails (the same work whichever
sides are composed) ran 130-300 ns a knot x bit here: `audit dpsgd --noise-multiplier 0.15
--sampling-rate 0.5 --steps 1 --delta 1e-5 --digits 8` verified exit 0 in 38.6 CPU s (74 ns a unit
against the cap's 5-10), and a sigma 0.1 certificate ran 80 CPU s and 2 GB to exit 3. Now the
discretisation is topped up to PLD_KNOT_WEIGHT (the calibrate route's weight, one rule) with what the
sides' 3 x log2 T already charge. Checked by spies on the meter against the knot ranges recomputed
from the discretisation itself, never by a clock."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import mpmath
import pytest

from dpverify.recheck import pld as P
from dpverify.recheck.limits import CALIBRATE_KNOT_WEIGHT, PLD_KNOT_WEIGHT, PLD_MAX_GRID_WORK

from ..certs import outcome

DATA = Path(__file__).parent / "data"
SIGMA, Q = Fraction(15, 100), Fraction(1, 2)


def _inputs(T: int) -> dict:
    return {"noise_multiplier": "0.15", "sampling_rate": "0.5", "steps": T, "neighboring": "add-remove",
            "delta": "1e-5"}


def _charged(T: int, sides: str, m: int = 8) -> int:
    """What the grid 2^-m of the remove direction charges before its work (the first charge, taken
    from a spy on :meth:`_Meter.charge`; a refusal threshold of 0 stops it there)."""
    seen: list = []
    real = P._Meter.charge

    def spy(self, units, m, sides, disc=0):
        seen.append(units * (sides != "lower") + 2 * units * (sides != "upper") + disc)
        return real(self, units, m, sides, disc)

    meter = P._Meter()
    meter.cap = 0
    token = P._METER.set(meter)
    P._Meter.charge = spy  # type: ignore[method-assign]
    try:
        with mpmath.workdps(P._DPS), pytest.raises(P._OverCap):
            D = mpmath.mpf("1e-5")
            P._bounds(_inputs(T), "eps", D, D, mpmath.mpf(40), m, sides, "remove")
    finally:
        P._Meter.charge = real  # type: ignore[method-assign]
        P._METER.reset(token)
    return seen[0]


def _knot_bits(T: int, m: int = 8) -> int:
    """knots x bits of the remove step's discretisation on 2^-m, from the masses themselves."""
    with mpmath.workdps(P._DPS):
        K, tau, _ = P._units(mpmath.mpf("1e-5"), mpmath.mpf(40), T)
        (_, up, _), _ = P._discretise(P.gauss_tails(SIGMA, Q, "remove"), K, tau, m)
    return len(up) * (K + m + 32)


def test_one_knot_weight_for_both_routes() -> None:
    assert CALIBRATE_KNOT_WEIGHT == PLD_KNOT_WEIGHT == 32
    assert P.knot_charge(10, 100, 3) == 10 * 100 * 29 and P.knot_charge(10, 100, 33) == 0


@pytest.mark.parametrize("T", [1, 2, 1000, 4096])
def test_a_grid_is_charged_its_discretisation(T: int) -> None:
    w = T.bit_length()
    kb = _knot_bits(T)
    # both sides: 3 w a knot x bit, at least PLD_KNOT_WEIGHT (T = 1: 32, where it was 3; T = 4096: 39)
    assert _charged(T, "both") == kb * max(3 * w, PLD_KNOT_WEIGHT)
    # one side: its own w or 2 w, and the same discretisation's rest (it computes every mass)
    assert _charged(T, "upper") == kb * (w + max(0, PLD_KNOT_WEIGHT - 3 * w))
    assert _charged(T, "lower") == kb * (2 * w + max(0, PLD_KNOT_WEIGHT - 3 * w))


def test_the_writer_s_price_is_the_meter_s() -> None:
    # the recorded grid's price (:func:`recorded_grid_price`, for the writer's refusal) counts the same
    # discretisation: at T = 1 a grid composes nothing, so it is all the meter charges for 2^-8
    c = {"grid": "2^-8", "enclosure": {"lo": "40", "hi": "40"}}
    work, m = P.recorded_grid_price(_inputs(1), "pld.epsilon", c)
    assert m == 8 and work == _charged(1, "both") == _knot_bits(1) * PLD_KNOT_WEIGHT


def test_a_t1_certificate_past_the_cap_is_stopped_by_its_price() -> None:
    # sigma 0.1, q 0.5, T = 1, digits 8 (hand-made: the writer refuses these digits): every knot x bit
    # discretised (a spy on the discretisation, before its masses) is charged PLD_KNOT_WEIGHT units,
    # within the cap, and the grid refused is refused at its price (80 CPU s, 2 GB before)
    done: list = []
    real = P._discretise_iv

    def spy(tails, K, tau, m, cap, max_knots, first=None, price=None):
        got: list = []

        def counted(n, bits):
            if price is not None:
                price(n, bits)
            got.append(n * bits)  # past the price: its masses are computed

        out = real(tails, K, tau, m, cap, max_knots, first, counted)
        done.extend(got)
        return out

    P._discretise_iv = spy
    try:
        cert = json.loads((DATA / "pld-dpsgd-t1-sigma0.1-digits8-handmade.json").read_text())
        assert outcome(cert) == 3
    finally:
        P._discretise_iv = real
    assert done and sum(done) * PLD_KNOT_WEIGHT <= PLD_MAX_GRID_WORK
