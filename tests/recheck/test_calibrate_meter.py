"""A calibrate.bracket certificate (Poisson and fixed-batch templates) is re-proved on one static work
budget, :data:`dpverify.recheck.limits.CALIBRATE_MAX_WORK`, in the PLD re-check's units
(:class:`dpverify.recheck.pld._Meter`): every curve is priced before its work, knots x bits x log2
steps x sides, and its exact products past half that price are charged their bits
(``recheck.calibrate._Route._priced``). Before, its grids had no meter: a sampling-rate bracket
forged to T = 10^7 and target_eps 1014 (the unit K grows about 1.45 bits a nat) ran 171 CPU s and
4.2 GB to the 300 s clock (adv53 M1, issue 22 deliverable 4). The work is counted by spies on the
meter and on the products, never by a clock, so the tests say the same on every machine."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from dpverify.errors import CouldNotReprove
from dpverify.recheck import calibrate as RC
from dpverify.recheck import limits as L
from dpverify.recheck import pld as P
from dpverify.recheck.verify import verify_certificate

from ..certs import outcome, reseal, reword

FIX = Path(__file__).parents[1] / "certificate" / "format2"
#: the genuine fixtures whose ends the grid route re-proves (the others take the closed forms or the
#: shuffled and balls-in-bins routes, which charge nothing here)
GRID = "calibrate-sampling-rate.json"
CALIBRATIONS = sorted(p.name for p in FIX.glob("calibrate-*.json"))


def _spies(monkeypatch, product_bits_cap: int) -> dict:
    """{"work": units the meter charged and let run, "bits": bits of the exact products done}. A
    product past ``product_bits_cap`` bits in all fails the test at once (AssertionError), so an
    unmetered route fails quickly instead of running to the clock."""
    seen = {"work": 0, "bits": 0}
    replay, product = P._Meter.replay, P._product

    def spy(self, upper: int, lower: int, m: int) -> None:
        replay(self, upper, lower, m)
        seen["work"] += upper + lower

    def counted(x, y, K, up):
        seen["bits"] += P._product_bits(x, y, K)
        assert seen["bits"] <= product_bits_cap, f"{seen['bits']:.3e} product bits: the route is not metered"
        return product(x, y, K, up)

    monkeypatch.setattr(P._Meter, "replay", spy)
    monkeypatch.setattr(P, "_product", counted)
    return seen


def _forged() -> dict:
    """adv53 M1's forgery, on the committed sampling-rate bracket (sigma 3, T = 10, its ends 0.4154 /
    0.4326): T = 10^7, target_eps 1014, ends 0.0099 / 0.0101 (sigma 1: eps(1e-5) = 1014 at q = 0.01), the
    statement and relative width rewritten to match, resealed."""
    cert = json.loads((FIX / GRID).read_text())
    cert["inputs"].update(noise_multiplier="1", steps=10**7, target_eps="1014")
    ends = cert["result"]["ends"]
    ends["safe"].update(value="0.0099", delta_at_target={"lo": "0", "hi": "0.0000099"})
    ends["unsafe"].update(value="0.0101", delta_at_target={"lo": "0.00001", "hi": "1"})
    cert["result"]["relative_width"] = "0.0202"
    return reseal(reword(cert))


def _budget_bits(limit: int) -> int:
    """Product bits a route held to ``limit`` units may do: every unit charged is at most
    PLD_PRODUCT_BITS_PER_UNIT bits, the prepaid share included (1 / PLD_PRODUCT_PREPAID of a price that
    is itself charged), plus the one product whose charge refuses (not done)."""
    return L.PLD_PRODUCT_BITS_PER_UNIT * limit + 10**6  # and each product's bits rounded down to units


def test_the_forgery_is_refused_within_a_small_budget(monkeypatch):
    # a budget of 10^8 units (the cap / 35): the first curve's price (its 9,549 knots at 2^-11, 1614
    # bits, x 24 x 1, 3.7e8) already exceeds it, so the answer is exit 3 before any mass is computed.
    # The old route composed 10^7 steps unmetered: the product spy stops it after 3e8 bits
    monkeypatch.setattr(RC, "CALIBRATE_MAX_WORK", 10**8)
    seen = _spies(monkeypatch, _budget_bits(10**8))
    cert = _forged()
    with pytest.raises(CouldNotReprove, match=r"work cap \(1.0e[+]08 knots x bits x log2 steps x sides for one calibrate.bracket certificate,"):
        verify_certificate(copy.deepcopy(cert))
    assert seen["work"] == 0 and seen["bits"] == 0


def test_the_forgery_stops_mid_composition_within_the_budget(monkeypatch):
    # 6e8 units: the first curve's price (3.7e8, and 1.2e8 for its discretisation) is paid and its
    # squarings run until their bits, past the prepaid half of the price, take the meter past the
    # budget (exit 3); the spies see no more than the budget's work and its bits
    monkeypatch.setattr(RC, "CALIBRATE_MAX_WORK", 6 * 10**8)
    seen = _spies(monkeypatch, _budget_bits(6 * 10**8))
    assert outcome(_forged()) == 3
    assert 3 * 10**8 < seen["work"] <= 6 * 10**8
    assert 0 < seen["bits"] <= _budget_bits(6 * 10**8)


@pytest.mark.slow
def test_the_forgery_is_refused_at_the_budget(monkeypatch):
    # the real budget: exit 3 after at most CALIBRATE_MAX_WORK units (3.1e9 charged at 2^-11, 22 CPU s
    # here at load 3 on 2 cores; before the meter, 171 CPU s and 4.2 GB to the 300 s clock)
    seen = _spies(monkeypatch, _budget_bits(L.CALIBRATE_MAX_WORK))
    assert outcome(_forged()) == 3
    assert 0 < seen["work"] <= L.CALIBRATE_MAX_WORK


@pytest.mark.parametrize("name", CALIBRATIONS)
def test_the_genuine_fixtures_verify_within_a_small_share_of_the_budget(monkeypatch, name):
    seen = _spies(monkeypatch, _budget_bits(L.CALIBRATE_MAX_WORK))
    assert outcome(json.loads((FIX / name).read_text())) == 0
    assert seen["work"] <= L.CALIBRATE_MAX_WORK // 10, seen["work"]
    if name == GRID:  # its ends are re-proved on grids, every one of them priced
        assert seen["work"] > 0


def test_a_budget_below_a_genuine_certificates_work_refuses_it(monkeypatch):
    # the plumbing: the genuine sampling-rate bracket charges about 2.8e8 units; held to 10^7 it is exit 3,
    # naming the certificate's budget, and runs no more than that
    monkeypatch.setattr(RC, "CALIBRATE_MAX_WORK", 10**7)
    seen = _spies(monkeypatch, _budget_bits(10**7))
    with pytest.raises(CouldNotReprove, match="for one calibrate.bracket certificate"):
        verify_certificate(json.loads((FIX / GRID).read_text()))
    assert seen["work"] <= 10**7


def test_the_writer_does_not_write_what_the_meter_refuses(monkeypatch):
    # the write-time contract (certificate/writer.unverifiable): a Poisson or fixed-batch bracket is
    # re-proved with verify's own static caps before it is written, so a genuine calibration past the
    # budget is refused at write time (`calibrate dpsgd --target-eps 3 --delta 1e-5 --sampling-rate
    # 256/60000 --steps 14063 --digits 5`, ends on 2^-15: written before, verify took 53 CPU s; now the
    # meter refuses it in 11 and the writer does not write it, exit 2 naming --digits). Before, only
    # an end on 2^-16 was re-proved, so this one was written
    from dpverify.certificate.writer import unverifiable

    cert = json.loads((FIX / GRID).read_text())
    assert unverifiable(cert) is None
    monkeypatch.setattr(RC, "CALIBRATE_MAX_WORK", 10**7)
    why = unverifiable(cert)
    assert why is not None and "1.0e+07 knots x bits x log2 steps x sides for one calibrate.bracket certificate," in why
