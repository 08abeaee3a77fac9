"""A declined Fourier power's transforms are charged to the grid's meter (issue 22, vm51).

The 1.1 KB forgery below (delta(20) at sigma 1, q 0.01, T = 10^5, the recorded grid removed and the
lower end raised by 1e-6 of the upper one, so it lies above the truth) had its search stage from 2^-8
to 2^-16, priced by the knots alone just within the cap; the declined Fourier powers and the exact
products of both sides then ran 72 CPU s and 2 GB to an exit 3. With the declined transforms
charged (:func:`dpverify.recheck.fourier.transform_work`), the lower pair's declined tilted power
takes the meter past the cap before any of the lower pair's long exact products: the same exit 3,
about a third of the work. Checked by what was charged and what was multiplied, not by a clock."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpverify.cli import main
from dpverify.recheck import fourier as F
from dpverify.recheck import pld as P
from dpverify.recheck.limits import PLD_MAX_GRID_WORK

DATA = Path(__file__).parent / "data"


def test_transform_work_counts_length_power_and_log_length() -> None:
    assert F.transform_work(1 << 21, 100000) == (1 << 21) * (2 * 17 + 22)
    assert F.transform_work(2, 8) == 2 * (2 * 4 + 2)


@pytest.mark.slow
def test_a_forged_lower_end_at_t1e5_is_refused_before_the_lower_pair_s_long_work(monkeypatch) -> None:
    long_lower = []
    spent = []
    pmul_lower, replay = P._pmul_lower, P._Meter.replay

    def counted(x, y, K, budget, drop=0):
        if max(x[1].n, y[1].n) >= P.FOURIER_MIN_LENGTH:
            long_lower.append((x[1].n, y[1].n))
        return pmul_lower(x, y, K, budget, drop)

    def recorded(self, upper, lower, m):
        if self.cap >= 0:  # not a dry price
            spent.append((m, self.spent, self.spent + upper + lower))
        return replay(self, upper, lower, m)

    monkeypatch.setattr(P, "_pmul_lower", counted)
    monkeypatch.setattr(P._Meter, "replay", recorded)
    assert main(["verify", "--quiet", str(DATA / "pld-t100000-delta20-forged-lo-nohint.json")]) == 3
    # refused by a charge past the cap, everything before it within the cap. Since session 52 the
    # staging takes a grid at 1.25x its knots' price (its exact products are charged past half of
    # it): 2^-15 is computed, its long lower products each charged before their work, and 2^-17 is
    # refused at its price (22 CPU s here; 2^-16 refused at its declined transforms before, 11 s)
    m, before, after = spent[-1]
    assert m == 17 and before <= PLD_MAX_GRID_WORK < after
    # the long lower products that ran were on 2^-15 and were metered: one lower charge each at least
    # (the prepaid half of the grid's price covers the first ones)
    charged_15 = [c for c in spent if c[0] == 15 and c[2] > c[1]]
    assert long_lower and len(charged_15) >= len(long_lower) // 2, (len(long_lower), len(charged_15))
