"""An honest undecided pld.claim that records no enclosure (issue 22, adv48 M6: sigma 1e-5, q 1,
T = 10^7, claimed eps 5e16, delta 0.5; the producer formed no enclosure, one step's loss spans past its
memory budget) is confirmed: it records no number, delta(eps) lies in [0, 1] for every eps >= 0 and
'undecided' is never false. Before, the grid route ran into its own cap (exit 3). A decided verdict
without an enclosure still goes the grid route and is refused here (exit 3, never an accept)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ..certs import outcome, reseal

CERT = Path(__file__).parent / "data" / "pld-claim-undecided-no-enclosure.json"


def test_the_undecided_claim_without_an_enclosure_is_confirmed() -> None:
    assert outcome(json.loads(CERT.read_text())) == 0


@pytest.mark.parametrize("verdict", ["holds", "fails"])
def test_a_decided_verdict_without_an_enclosure_is_not_confirmed(verdict: str) -> None:
    cert = json.loads(CERT.read_text())
    cert["result"]["verdict"] = verdict
    assert outcome(reseal(cert)) in (1, 2, 3)


def test_an_undecided_claim_with_a_false_enclosure_still_goes_the_grid_route() -> None:
    # the format-2 pld.claim fixture (delta(2) = 1.2e-13 at sigma 2, q 0.1, T = 10) relabelled
    # 'undecided' with its enclosure moved up 10^3-fold: the enclosure is re-proved and refused
    cert = json.loads((Path(__file__).parents[1] / "certificate" / "format2" / "pld-claim.json").read_text())
    cert["result"]["verdict"] = "undecided"
    cert["result"]["enclosure"] = {"lo": "1.2103929949134165e-10", "hi": "1.2103948472652284e-10"}
    assert outcome(reseal(cert)) in (1, 2)
