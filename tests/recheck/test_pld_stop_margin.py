"""A recorded width whose predicted grid lies more than _STOP_MARGIN halvings past the finest grid
priced within the cap is refused (exit 3) before any grid past the probe (issue 22, gen54).

The stub is a direction whose ends close like h^2 about 1 from 2^-9 on (the probe's ends, at
2^-8, are 4^k further out: a probe far from its h^2 regime, as the T = 10^6 probe's lower end 104.6
against 139.03), each grid priced twice the last, so that 2^-14 is the finest within the cap. The
search is checked by the grids it computed, not by a clock."""

from __future__ import annotations

import mpmath
import pytest

from dpverify.recheck import pld as P
from dpverify.errors import CouldNotReprove
from dpverify.recheck.limits import PLD_MAX_GRID_WORK

#: the gap of the ends on 2^-14, where the stub's search can go at most
GAP14 = 2 * mpmath.mpf(4) ** -6


def _stub(probe_over: int, tried: list):
    def compute(m, sides, d, lo):
        meter = P._METER.get()
        # 3 units a side-count of "both" (upper 1, lower 2): 2^-14 costs half the cap, 2^-15 all of it
        meter.charge(max(1, (PLD_MAX_GRID_WORK >> 7) * 2 ** (m - 8) // 3), m, sides)
        if meter.cap >= 0:  # not a dry price
            tried.append((m, sides))
        g = mpmath.mpf(4) ** -(m - 8) * (4 ** probe_over if m == 8 else 1)
        return 1 - g, 1 + g
    return compute


def _enclosure(width: mpmath.mpf) -> dict:
    return {"enclosure": {"lo": mpmath.nstr(1 - width / 2, 30), "hi": mpmath.nstr(1 + width / 2, 30)}}


def test_the_tightest_width_2_14_settles_is_verified_after_a_probe_that_overshoots_by_two_halvings():
    """ref49's tight_genuine: the probe predicts 2^-16 (excess 2 over 2^-14, the finest within the
    cap); 2^-14 is computed and settles it."""
    tried: list = []
    lo, hi = P._grid_for_width(_stub(2, tried), ["add"], _enclosure(GAP14 * mpmath.mpf("1.01")))
    assert [m for m, _ in tried] == [8, 14]
    assert 1 - lo <= GAP14 / 2 and hi - 1 <= GAP14 / 2


@pytest.mark.parametrize("shrink", [64, 1000, 10**6])
def test_a_width_far_narrower_than_the_cap_allows_is_refused_after_the_probe(shrink):
    """Narrowed by a factor 64 (3 halvings) or more below what 2^-14 proves, after the same
    probe: refused at once, naming the margin; before, 2^-14 was computed (half the cap) and the
    next grid refused at its price."""
    tried: list = []
    with pytest.raises(CouldNotReprove, match="halvings past 2\\^-14, the finest grid priced within"):
        P._grid_for_width(_stub(2, tried), ["add"], _enclosure(GAP14 * mpmath.mpf("1.01") / shrink))
    assert [m for m, _ in tried] == [8]


def test_a_width_two_halvings_past_the_cap_is_still_tried():
    """An exact probe (no overshoot) asking for 2^-16: two halvings past 2^-14 is within the margin,
    so 2^-14 is computed (it cannot settle the width) and 2^-16 is refused at its price."""
    tried: list = []
    with pytest.raises(CouldNotReprove):
        P._grid_for_width(_stub(0, tried), ["add"], _enclosure(GAP14 / 16 * mpmath.mpf("1.01")))
    assert [m for m, _ in tried][:2] == [8, 14]


def test_a_width_past_the_cap_where_no_grid_beyond_four_halvings_fits_is_refused_after_the_probe():
    """Priced 4x higher (2^-12 already costs the whole cap, so no grid from five halvings past the
    probe fits): a target of seven halvings or more is refused at once; before, 2^-12 was staged
    and computed (it cannot settle the width) and the next grid refused at its price."""
    tried: list = []

    def compute(m, sides, d, lo):
        meter = P._METER.get()
        meter.charge(max(1, (PLD_MAX_GRID_WORK >> 5) * 2 ** (m - 8) // 3), m, sides)
        if meter.cap >= 0:
            tried.append(m)
        g = mpmath.mpf(4) ** -(m - 8)
        return 1 - g, 1 + g

    with pytest.raises(CouldNotReprove, match="past 2\\^-12 \\(no finer grid is priced within\\) 4/5 of what is left"):
        P._grid_for_width(compute, ["add"], _enclosure(2 * mpmath.mpf(4) ** -7))
    assert tried == [8]
