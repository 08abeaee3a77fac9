"""result.gap of a grid composition states an upper bound of the distance between the
two rounded compositions; verify proves it against the independent enclosures in
directed rounding (at least u.hi - d.lo: proved; below u.lo - d.hi: false; between:
not re-proved), with no slack.

Independent route: the distance bounds written out in exact rationals from the
fixture's recorded sub-enclosures (the independent ones lie inside them, and are
narrower than the 1e-15 margins used here).
"""

from __future__ import annotations

import copy
import json
from decimal import Decimal, localcontext
from fractions import Fraction
from pathlib import Path

import pytest

from tests.certs import outcome, reseal

FIXTURE = Path(__file__).resolve().parents[1] / "certificate" / "format2" / "compose-grid.json"


def _with_gap(gap: str) -> dict:
    cert = copy.deepcopy(json.loads(FIXTURE.read_text()))
    cert["result"]["gap"] = gap
    return reseal(cert)


def _bounds() -> tuple[Fraction, Fraction]:
    r = json.loads(FIXTURE.read_text())["result"]
    lo, up = r["lower"], r["upper"]
    # the distance of the true roundings lies in [up.lo - lo.hi, up.hi - lo.lo] (recorded ends)
    return Fraction(up["lo"]) - Fraction(lo["hi"]), Fraction(up["hi"]) - Fraction(lo["lo"])


def test_the_genuine_gap_is_proved() -> None:
    assert Fraction(json.loads(FIXTURE.read_text())["result"]["gap"]) >= _bounds()[1]
    assert outcome(json.loads(FIXTURE.read_text())) == 0


@pytest.mark.parametrize("shift,code", [(Fraction(-1, 10**6), 1), (Fraction(-1, 10**15), 1),
                                        (Fraction(1, 10**15), 0), (Fraction(1, 10**3), 0)])
def test_a_gap_below_the_distance_is_refused(shift: Fraction, code: int) -> None:
    least, most = _bounds()
    edge = least if shift < 0 else most
    gap = edge + shift
    with localcontext() as ctx:  # the ends and shifts are decimals: the division is exact
        ctx.prec = 60
        text = str(Decimal(gap.numerator) / Decimal(gap.denominator))
    assert Fraction(text) == gap
    assert outcome(_with_gap(text)) == code
