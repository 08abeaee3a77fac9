"""The producer's refusal of digits whose certificate the re-check could not re-prove within its work
cap (issue 22, adv48 M5): :func:`pld.recorded_grid_price` prices the recorded grid as the re-check's meter
would, and `audit dpsgd` answers exit 2 past :data:`limits.PLD_MAX_GRID_WORK` instead of writing it.
The digits-7 certificate below (sigma 1.1, q 256/60000, T = 14063, 2^-18; 57 CPU s to produce) was
answered exit 3 by verify at its cap; genuine certificates that verify are priced below the cap."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from dpverify.certificate.writer import unverifiable
from dpverify.cli._common import emit
from dpverify.errors import InvalidParameter
from dpverify.recheck import pld as P
from dpverify.recheck.limits import PLD_MAX_GRID_WORK, PLD_PRICE_SPREAD

DATA = Path(__file__).parent / "data"
ROOT = Path(__file__).parents[2]


def _price(path: Path) -> "tuple[int, int] | None":
    c = json.loads(path.read_text())
    return P.recorded_grid_price(c["inputs"], c["claim"]["quantity"], c["result"])


def test_the_unverifiable_digits_are_priced_past_the_cap_and_refused() -> None:
    path = DATA / "pld-mnist-digits7-unverifiable.json"
    work, m = _price(path)
    assert m == 18 and work > PLD_MAX_GRID_WORK
    c = json.loads(path.read_text())
    with pytest.raises(InvalidParameter, match="7 needs the grid 2\\^-18"):
        emit(argparse.Namespace(certificate=None, json=True), c, "")


def test_a_certificate_near_the_cap_is_re_proved_before_it_is_written() -> None:
    """ref50 MEDIUM-1: delta(20) at sigma 1, q 0.01, T = 10^5, --digits 5 recorded 2^-16, priced at 0.96
    of the cap (the grid alone), and verify answered exit 3 (its search needs the staged grids and both
    directions). Priced above 1 / PLD_PRICE_SPREAD of the cap, the writer asks the verifier itself (no time budget:
    its static caps, so the answer does not depend on the clock) and writes nothing: exit 2 naming the
    digits. test_genuine_verifiable_certificates_... below are asked the same and pass."""
    path = DATA / "pld-dpsgd-t100000-delta20-digits5-near-cap.json"
    work, m = _price(path)
    assert m == 16 and PLD_MAX_GRID_WORK / PLD_PRICE_SPREAD < work <= PLD_MAX_GRID_WORK
    c = json.loads(path.read_text())
    assert "could not re-prove" in unverifiable(c)
    with pytest.raises(InvalidParameter, match="5 needs the grid 2\\^-16, where `dpverify verify` could not"):
        emit(argparse.Namespace(certificate=None, json=True), c, "")


@pytest.mark.parametrize("path", [
    DATA / "pld-dpsgd-t1000-sigma1.1-delta1.5.json",  # 2^-17, verified in about 14 CPU s
    DATA / "pld-dpsgd-t1000000-sigma1-eps.json",
    ROOT / "tests" / "certificate" / "format2" / "pld-claim.json",
    ROOT / "tests" / "certificate" / "format2" / "pld-epsilon.json",
])
def test_genuine_verifiable_certificates_are_priced_below_the_cap(path: Path) -> None:
    got = _price(path)
    assert got is not None and got[0] <= PLD_MAX_GRID_WORK
    assert unverifiable(json.loads(path.read_text())) is None  # near the cap: re-proved by the verifier


def test_no_grid_no_price() -> None:
    assert P.recorded_grid_price({"noise_multiplier": "1", "sampling_rate": "0.01", "steps": 10,
                                  "neighboring": "add-remove", "delta": "1e-5"}, "pld.epsilon", {}) is None

