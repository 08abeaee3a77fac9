"""The price of a tilted lower pair's exact products (issue 22, session 55: what dpverify writes, verify
accepts). `audit dpsgd --noise-multiplier 30 --sampling-rate 1e-6 --steps 10000000 --delta 1e-5 --digits 3`
recorded 2^-30, priced 7.0e6 by its 712 knots a step, so the writer (which asks the verifier where the
price is above 1 / PLD_PRICE_SPREAD of the cap) wrote it at once; verify charged 1.5e9 on that grid's
lower pair alone, exact products on windows of up to 1.8 million knots, and answered exit 3 at the cap.
From 2^20 steps the lower pair is composed tilted and takes no Fourier power (recheck.pld._tilts), so
those products are certain and :func:`pld.grid_work` now counts them (:func:`pld._tilted_lower_bits`).

The small certificate kept as data is the same class: sigma 30, q 1e-6, T = 1,572,865 = 2^20 + 2^19 + 1
(tilted: T >= 2^20), eps(1e-5) on 2^-30, where the step spans 262 knots and its lower pair's windows
grow to 2.6e5: priced 6.0e6 by its knots (re-proved only above 1.9e8) where verify charges 9.0e8 in all.
Under a cap lowered below verify's spend it is the break in small: the knots' price alone had it
written without asking verify, which then refuses it."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import mpmath
import pytest
from mpmath import mpf

from dpverify.certificate.writer import unverifiable
from dpverify.cli._common import emit
from dpverify.errors import InvalidParameter
from dpverify.recheck import pld as P
from dpverify.recheck.limits import PLD_MAX_GRID_WORK, PLD_PRICE_SPREAD

DATA = Path(__file__).parent / "data"
SMALL = DATA / "pld-dpsgd-t1572865-sigma30-q1e-6-digits3.json"

# a delta query of the same class on a coarser grid (a fraction of a second): T = 2^20 + 2^19 + 1 steps
# of sigma 30, q 1e-6 on 2^-24, 11 knots a step, windows up to about 10^4 knots
INPUTS = {"noise_multiplier": "30", "sampling_rate": "1e-6", "steps": 1572865, "neighboring": "add-remove",
          "eps": "0.0001"}
RESULT = {"grid": "2^-24", "enclosure": {"lo": "4e-7", "hi": "5e-7"}}


def _lower_products(monkeypatch, d: str) -> "tuple[list, list, P._Meter]":
    """The lengths of every lower-pair product the re-check forms on RESULT's grid in direction ``d``
    (both sides computed, as the price counts), the bits of each (:func:`P._product_bits`, P's and Q's),
    and the meter it charged."""
    seen: list = []
    bits: list = []
    real = P._pmul_lower

    def counted(x, y, K, budget, drop=0):
        seen.append((x[1].n, y[1].n))
        bits.append(P._product_bits(x[1], y[1], K - drop) + P._product_bits(x[2], y[2], K))
        return real(x, y, K, budget, drop)

    monkeypatch.setattr(P, "_pmul_lower", counted)
    meter = P._Meter(limit=10**15)
    token = P._METER.set(meter)
    try:
        with mpmath.workdps(P._DPS):
            E = P.fraction_to_mpf(P._eps_input(INPUTS, "eps"))
            P._bounds(INPUTS, "delta", E, P._delta_scale(RESULT, mpf(1)), E, 24, "both", d)
    finally:
        P._METER.reset(token)
        monkeypatch.setattr(P, "_pmul_lower", real)
    return seen, bits, meter


def test_the_window_law_is_the_lengths_of_the_products_formed(monkeypatch) -> None:
    """An independent count: the lengths of the products the re-check really forms (every squaring and
    product of its power of the tilted lower pair) against the price's law. Why the law: a product of
    two trimmed factors keeps the composed law between the quantiles at the trimming budget's mass
    rho = budget 2^-K of either end, and the composed loss of s steps is about normal with standard
    deviation sigma_1 sqrt(s) (central limit), so a base of s steps spans about 2 z(rho) sigma_1 sqrt(s)
    knots, at most its support s (n - 1) + 1 and at least one step's n knots."""
    seen, _, _ = _lower_products(monkeypatch, "remove")
    with mpmath.workdps(P._DPS):
        events = P._events(INPUTS)
        E = P.fraction_to_mpf(P._eps_input(INPUTS, "eps"))
        scale = P._delta_scale(RESULT, mpf(1))
        steps, K, budget = P.tilted_lower(scale, E, [1572865])
        _, tau, _ = P._units(scale, E, 1572865)
        tails = events[0][0]("remove")[0]
        n = seen[0][0]
        window = P._step_window(tails, n, P.arith(K + 24 + 32), tau, 24, P._trim_quantile(budget, K))
    model = P._power_products(1572865, window)
    # the price leaves out the last squaring and the last product (a reader may cut them)
    assert len(seen) == len(model) + 2 == 1572865 .bit_length() - 1 + bin(1572865).count("1") - 1
    for (a, b), (x, y) in zip(model, seen):
        assert abs(a - x) <= 0.05 * x and abs(b - y) <= 0.05 * y


def test_the_price_counts_the_lower_products_as_the_meter_charges_them(monkeypatch) -> None:
    """recorded_grid_price against what the meter charges the same grid: past the knots' price (3 units
    a knot x bit: 1 upper, 2 lower), the lower pair's exact products, each charged its bits / 3 once the
    lower side's prepaid share (1 unit a knot x bit) is used up (:meth:`P._Meter.products`), counted here
    from the products really formed but the last two (which a reader may cut): the price's count is
    within 5 % of it. It is below the grid's whole spend (the upper pair's products, which a Fourier
    power may answer, and the last two are left out), and the knots alone were a third of it."""
    from dpverify.recheck.limits import PLD_PRODUCT_BITS_PER_UNIT

    price, m = P.recorded_grid_price(INPUTS, "pld.delta", RESULT)
    monkeypatch.setattr(P, "tilted_lower", lambda *a: None)
    knots, _ = P.recorded_grid_price(INPUTS, "pld.delta", RESULT)
    monkeypatch.undo()
    runs = [_lower_products(monkeypatch, d) for d in ("remove", "add")]
    charged = max(sum(bits[:-2]) // PLD_PRODUCT_BITS_PER_UNIT - knots // 3 for _, bits, _ in runs)
    assert m == 24 and abs((price - knots) - charged) <= 0.05 * charged
    assert 3 * knots < price <= max(meter.spent for _, _, meter in runs)


def _cap(monkeypatch, work: int) -> None:
    """The work cap as both sides read it: the writer (limits) and the re-check's meter (pld)."""
    from dpverify.recheck import limits

    monkeypatch.setattr(limits, "PLD_MAX_GRID_WORK", work)
    monkeypatch.setattr(P, "PLD_MAX_GRID_WORK", work)


def _json_args() -> argparse.Namespace:
    return argparse.Namespace(certificate=None, json=True)


def test_written_and_verified_or_refused_at_write_time(monkeypatch) -> None:
    """The T = 1,572,865 certificate: under the real cap the writer asks verify, which accepts it (so it
    is written). Under caps that verify cannot re-prove it within, it was the break: its knots' price
    times PLD_PRICE_SPREAD is within them, so it was written without asking; now the price refuses it at
    once below the price (exit 2 naming --digits), and above it the writer asks verify, which refuses."""
    cert = json.loads(SMALL.read_text())
    price, m = P.recorded_grid_price(cert["inputs"], "pld.epsilon", cert["result"])
    assert m == 30 and PLD_MAX_GRID_WORK / PLD_PRICE_SPREAD < price <= PLD_MAX_GRID_WORK
    assert unverifiable(cert) is None  # re-proved by verify, accepted: written
    with monkeypatch.context() as mp:
        mp.setattr(P, "tilted_lower", lambda *a: None)
        knots, _ = P.recorded_grid_price(cert["inputs"], "pld.epsilon", cert["result"])
    low, high = price * 3 // 4, price * 2
    assert PLD_PRICE_SPREAD * knots < low
    _cap(monkeypatch, low)  # priced past it: refused at once, verify not asked
    with pytest.raises(InvalidParameter, match="3 needs the grid 2\\^-30, which `dpverify verify` cannot re-prove"):
        emit(_json_args(), cert, "")
    _cap(monkeypatch, high)  # verify asked, with its own meter: it refuses at that cap (and so at the lower one)
    with pytest.raises(InvalidParameter, match="3 needs the grid 2\\^-30, where `dpverify verify` could not "
                                               "re-prove it: .*work cap"):
        emit(_json_args(), cert, "")
