"""Forged PLD certificates against the re-check's coarser mass unit (issue 24).

The second route's unit 2^-K is 20 bits coarser than it was (:data:`dpverify.recheck.pld._UNIT_BITS`):
sound for any K (every mass and product is rounded outward), but a unit too coarse would widen
the independent enclosure until a forged end no longer excluded the truth. Each frozen fixture
below is accepted as written (the test can fail both ways), and refused with its enclosure moved
by a relative 10^-3 (both ends, up or down, digest recomputed: a forger's certificate) or its
verdict flipped. The move by 10^-6 is tested where it excludes the value: one end of the narrowest
(pld.claim, relative width 1.5e-6) moved inward, refused as false
(``test_pld_rigorous.test_an_end_moved_by_one_millionth_is_refused_on_the_packed_route``); a move
of 10^-6 leaves the value inside the wider enclosures (pld.delta: 6.7e-5), where an accept is
right. Both ends of pld.claim moved by 10^-6 overlap the re-check's enclosure at the producer's
grid: the search then refines (exit 3 after about a minute), which is why it is not here.
"""

from __future__ import annotations

import copy
import json
from fractions import Fraction
from pathlib import Path

import pytest

from ..certs import outcome, reseal, reword

FIXTURES = Path(__file__).parents[1] / "certificate" / "format2"


def _load(name: str) -> dict:
    return json.loads((FIXTURES / f"{name}.json").read_text())


def _moved(cert: dict, factor: Fraction) -> dict:
    enc = cert["result"]["enclosure"]
    for k in ("lo", "hi"):
        enc[k] = f"{float(Fraction(enc[k]) * factor):.17g}"
    return reseal(cert)


@pytest.mark.parametrize("name", ["pld-claim", "pld-delta", "pld-epsilon", "pld-epsilon-add"])
@pytest.mark.parametrize("sign", [1, -1])
def test_an_enclosure_moved_by_a_thousandth_is_refused(name: str, sign: int) -> None:
    """10^-3 is far past each recorded width (6.7e-5 at most here): the moved enclosure excludes
    the value, and the re-derivation proves it (exit 1), except pld.epsilon-add moved up, which
    is not re-proved (exit 3, before this unit as after it: its independent lower end stays below
    the moved one's on the grids tried), a refusal all the same."""
    cert = _load(name)
    assert outcome(copy.deepcopy(cert)) == 0
    got = outcome(_moved(cert, 1 + sign * Fraction(1, 10**3)))
    assert got == 1 or (got == 3 and name == "pld-epsilon-add" and sign == 1)


def test_a_flipped_pld_claim_is_refused() -> None:
    """delta(2) = 1.2e-13 <= 1e-5: 'holds'; recorded as 'fails' it is refused (the verdict is
    decided on the independent enclosure)."""
    cert = _load("pld-claim")
    assert cert["result"]["verdict"] == "holds"
    cert["result"]["verdict"] = "fails"
    assert outcome(reseal(cert)) in (1, 2)



@pytest.mark.parametrize("lo", [10**6, 10**100])
def test_an_absurd_eps_enclosure_is_refused_as_false(lo: int) -> None:
    """adv43 F3: the recorded upper end is a hint that sizes the mass unit (about 1.44 bits per unit
    of eps, for Q-masses e^-eps below their P-masses). [10^6, 10^6 + 1] for a true eps(1e-5) of
    1.5154 (sigma 1.1, q 0.01, T = 1000) asked for 3016-bit masses and stopped at the work cap
    (exit 3). The first grid now sizes its unit by at most 64 of it, and its upper end (the upper
    pair has no Q-masses) excludes the recorded enclosure: false, exit 1."""
    cert = _load("pld-epsilon")
    cert["inputs"].update(noise_multiplier="1.1", sampling_rate="0.01", steps=1000, digits=1)
    cert["result"].update(grid="2^-15", enclosure={"lo": str(lo), "hi": str(lo + 1)}, relative_width=f"{1 / lo:.3g}")
    assert outcome(reseal(reword(cert))) == 1
