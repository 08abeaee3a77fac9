"""result.gap of a grid composition states an upper bound of the distance between the
two rounded compositions; verify proves it against the independent enclosures in
directed rounding (at least u.hi - d.lo, or at least the recorded upper.hi - lower.lo in exact
rationals once both recorded enclosures are accepted: proved; below u.lo - d.hi: false; between:
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
                                        (Fraction(0), 0), (Fraction(1, 10**15), 0), (Fraction(1, 10**3), 0)])
def test_a_gap_below_the_distance_is_refused(shift: Fraction, code: int) -> None:
    """Shift 0 is the gap of exactly upper.hi - lower.lo, a true bound (adv43 F4: exit 3, the
    binary ends read outward and their difference rounded up exceeded the decimal one)."""
    least, most = _bounds()
    edge = least if shift < 0 else most
    gap = edge + shift
    with localcontext() as ctx:  # the ends and shifts are decimals: the division is exact
        ctx.prec = 60
        text = str(Decimal(gap.numerator) / Decimal(gap.denominator))
    assert Fraction(text) == gap
    assert outcome(_with_gap(text)) == code


@pytest.mark.parametrize("gap", [None, "1e-1990"])
def test_a_gap_far_narrower_than_the_ends_is_proved_at_a_finer_precision(gap, tmp_path) -> None:
    """delta_1 = 1 - 10^-50 composed 400 times (with delta_2 = 10^-3): both rounded compositions
    lie in [1 - prod (1 - delta_i), 1] (Kairouz et al. / Murtagh-Vadhan: delta = 1 - prod (1 -
    delta_i) (1 - delta'(eps)) with delta' the pure part, LT Thm 4.6), and prod (1 - delta_i) <
    (10^-50)^400 = 10^-20000, so every gap of at least 10^-20000 is true. The writer's gap
    (about 4.1e-56) sat far inside ends recorded about 1e-17 wide: verify left it 'not re-proved'
    (exit 3) instead of re-enclosing the two compositions to the gap's digits."""
    from dpverify.cli import main
    path = tmp_path / "c.json"
    nines = "0." + "9" * 50
    assert main(["compose", "--mech", f"0.1,{nines}", "--mech", "0.2,1e-3", "--steps", "400", "--grid", "0.03",
                 "--eps", "1", "--certificate", str(path)]) == 0
    cert = json.loads(path.read_text())
    assert Fraction(cert["result"]["gap"]) < Fraction(1, 10**55)
    if gap is not None:
        cert["result"]["gap"] = gap
        reseal(cert)
    assert outcome(cert) == 0
