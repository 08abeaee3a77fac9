"""The grid search's choices near the work cap (ref49 MEDIUM-1, :func:`dpverify.recheck.pld._grid_search`).

A recorded end forged to the far side of the truth (a lower end above it, an upper end below it) is
settled only by the opposite proved end: the search refined just the unconfirmed side, which cannot
pass the forged end, grid after grid until the cap (sigma 1, q 0.01, T = 10^6: 24-100 CPU s, exit 3).
Now (1) a probe's target grid priced past the cap goes to the finest grid priced within it instead of
a staged grid first (a target refused before its price, past 2^-24, is passed over), and (2) where one
side is confirmed and the truth looks past the other recorded end, the far side is refined. A grid
chosen past the cap still answers exit 3 at once, before its work.

The model: a direction whose proved ends close like h^2 around x (as the two discretisations do), and a
meter charged as :class:`~dpverify.recheck.pld._Meter` charges (2^m per side unit, the lower pair twice)
at a rate where 2^-14 for both sides is within the cap and 2^-15 is not: the T = 10^6 certificate's
prices (1.55e9 for 2^-14, 3.1e9 for 2^-15, against the cap, 2.5e9 then, 3e9 now). Grids are counted, not timed. The real
certificate is checked end to end in ``test_pld_t1e6_tilted.py``."""

from __future__ import annotations

import mpmath
import pytest
from mpmath import mpf

from dpverify.errors import CouldNotReprove
from dpverify.recheck import pld as P
from dpverify.recheck.limits import PLD_MAX_GRID_WORK

X = mpf("139.0302")
A, B = mpf("3.3e-3") * 4**12, mpf("6.6e-3") * 4**12  # lower and upper end errors times 4^m
RATE = PLD_MAX_GRID_WORK // (3 * 2**14) * 6 // 10  # 2^-14 both: 0.6 of the cap; 2^-15 both: 1.2


def _ends(m: int) -> tuple:
    # the probe's lower end is far from its h^2 regime, as the real one (104.6 at 2^-8 for 139.03):
    # a probe's gap of 36 asks for 6-7 halvings at recorded widths of 1e-2 .. 6e-3
    return X - (mpf("34.4") if m <= 8 else A / mpf(4) ** m), X + B / mpf(4) ** m


def _search(lo: mpf, hi: mpf, rate: int = RATE, probe_upper: mpf = mpf(1)) -> tuple:
    """(the search's answer or 'exit 3', the grids computed (m, sides)); ``probe_upper`` scales the
    upper end's error on the probe (2^-8 and coarser)."""
    done = []

    def compute(m, sides, d, floor):
        if m > 24:  # as a Gaussian step past 2^-24: no floor bounds its knots, refused before its price
            raise CouldNotReprove("past 2^-24 without a floor")
        P._METER.get().charge(rate << m, m, sides)  # refused here, before the "work", past the cap
        done.append((m, sides))
        a, b = _ends(m)
        if m <= 8:
            b = X + (b - X) * probe_upper
        return (a if sides != "upper" else -mpmath.inf), (b if sides != "lower" else mpmath.inf)

    result = {"enclosure": {"lo": mpmath.nstr(lo, 30), "hi": mpmath.nstr(hi, 30)}, "grid": "2^-12"}
    with mpmath.workdps(40):
        try:
            return P._grid_for_width(compute, ["remove"], result), done
        except CouldNotReprove:
            return "exit 3", done


def _refuted(got, lo: mpf, hi: mpf) -> bool:
    return got != "exit 3" and (got[1] < lo or got[0] > hi)


def test_the_model_needs_2_to_the_minus_14_and_cannot_afford_15() -> None:
    assert 3 * RATE << 14 <= PLD_MAX_GRID_WORK < 3 * RATE << 15


@pytest.mark.parametrize("name,lo,hi", [
    # a lower end one part in 10^12 above the upper end 2^-14 proves, a recorded width of 6e-3
    # (a probe predicts 2^-15, staged at 2^-12 before): the old search went 2^-12 both, 2^-13 both,
    # 2^-14 lower, then 2^-15 lower past the cap (exit 3)
    ("lo above", _ends(14)[1] * (1 + mpf("1e-12")), _ends(14)[1] + mpf("6e-3")),
    # an upper end one part in 10^12 below the lower end 2^-14 proves
    ("hi below", _ends(14)[0] - mpf("3e-3"), _ends(14)[0] * (1 - mpf("1e-12"))),
])
def test_a_far_side_forgery_is_refused_on_the_finest_grid_within_the_cap(name, lo, hi) -> None:
    got, done = _search(lo, hi)
    assert _refuted(got, lo, hi), (name, got, done)
    assert done == [(8, "both"), (14, "both")], (name, done)  # the probe, then the finest affordable grid


@pytest.mark.parametrize("name,lo,hi", [
    ("narrow above", _ends(14)[1] * (1 + mpf("1e-12")), _ends(14)[1] * (1 + mpf("2e-12"))),
    ("narrow below", _ends(14)[0] * (1 - mpf("2e-12")), _ends(14)[0] * (1 - mpf("1e-12"))),
])
def test_a_narrow_forgery_far_past_the_cap_is_refused_after_the_probe(name, lo, hi) -> None:
    # a narrow forged enclosure next to the truth: the probe predicts 2^-22, eight halvings past 2^-14,
    # the finest grid within the cap (pld._STOP_MARGIN: 2). Refuted (exit 1) on 2^-14 before, at the
    # price of that grid (11.5 CPU s at T = 10^6); now exit 3 before it (issue 22, gen54)
    got, done = _search(lo, hi)
    assert got == "exit 3" and done == [(8, "both")], (name, got, done)


def test_a_genuine_narrow_certificate_is_confirmed_on_the_same_grid() -> None:
    a, b = _ends(14)
    lo, hi = a * (1 - mpf("1e-9")), b * (1 + mpf("1e-9"))
    got, done = _search(lo, hi)
    assert got != "exit 3" and lo <= got[0] and got[1] <= hi, (got, done)
    assert done == [(8, "both"), (14, "both")], done


def test_a_genuine_wide_certificate_keeps_its_grids() -> None:
    # the producer's own width (as the T = 10^6 certificate's): a probe predicts 2^-14 directly, as before
    a, b = _ends(12)
    got, done = _search(a - mpf("1e-4"), b + mpf("1e-4"))
    assert got != "exit 3" and done == [(8, "both"), (14, "both")], (got, done)


def test_a_staged_search_refines_the_far_side() -> None:
    # at a rate where 2^-15 is within the cap (the probe's target is affordable, so it is staged at
    # 2^-12), a lower end forged just above the truth is refused by the upper side: after 2^-12 the
    # upper ends' extrapolation puts the truth below the recorded lower end, and the upper side is
    # refined with the lower one (the old search refined only the lower side, which cannot pass it:
    # 2^-12 .. 2^-16 lower, five rounds, then the answer it started with)
    rate = RATE // 4
    lo = X + mpf("2e-4")
    hi = lo + mpf("6e-3")
    got, done = _search(lo, hi, rate)
    assert _refuted(got, lo, hi), (got, done)
    assert len(done) <= 4 and any(s != "lower" and m > 12 for m, s in done), done


def test_a_round_priced_past_the_cap_together_is_refused_before_any_of_its_work() -> None:
    # two directions, each needing 2^-14 (one both sides, one upper): each grid alone is within the
    # cap, the two together are not. The round computes both before it reads either, so the meter
    # refused the second after the first's work (T = 10^7: about 160 CPU s); now neither is computed
    rate = RATE * 3 // 2
    assert 3 * rate << 14 <= PLD_MAX_GRID_WORK < 4 * rate << 14
    done = []

    def compute(m, sides, d, floor):
        P._METER.get().charge(rate << m, m, sides)
        done.append((m, sides, d))
        a, b = _ends(m)
        return (a if sides != "upper" else -mpmath.inf), (b if sides != "lower" else mpmath.inf)

    result = {"enclosure": {"lo": mpmath.nstr(X - mpf("0.01"), 30), "hi": mpmath.nstr(X + mpf("0.01"), 30)}}
    with mpmath.workdps(40), pytest.raises(CouldNotReprove, match="next round"):
        P._grid_for_width(compute, ["add", "remove"], result)
    assert done == [(8, "both", "add"), (8, "both", "remove")], done


def _search_misled(lo: mpf, hi: mpf) -> tuple:
    """:func:`_search` at a rate where 2^-15 is within the cap, on a model whose probe's upper end lies
    a tenth closer to the truth than its h^2 law: the Richardson estimate of the upper ends of 2^-8
    and 2^-12 then puts the truth 0.106 B / 4^12 (7.0e-4) above X, as the real probes mislead it
    (sigma 1, q 0.01, T = 1000, digits 4: 1.82823689 from 2^-8 and 2^-13, against 1.82823667)."""
    return _search(lo, hi, RATE // 4, mpf("0.9"))


def test_a_lower_end_forged_above_the_truth_is_refuted_by_the_upper_side_alone() -> None:
    # the upper end genuine, the lower end 3e-4 above the truth (below the misled estimate): the
    # lower side is refined once (2^-13), its ends' extrapolation then puts the truth below the
    # recorded lower end, and only the upper side is refined, to the grid predicted to pass it. Before,
    # the lower side alone was refined grid after grid (it closes on the truth, below the forged end)
    # to the cap or the last round: exit 3 (issue 22: 34 CPU s)
    lo, hi = X + mpf("3e-4"), _ends(12)[1] + mpf("1e-4")
    got, done = _search_misled(lo, hi)
    assert _refuted(got, lo, hi), (got, done)
    assert done == [(8, "both"), (12, "both"), (13, "lower"), (15, "upper")], done


def test_a_lower_end_forged_next_to_the_truth_is_refused_before_the_far_side() -> None:
    # 1e-5 above the truth, under 4^-4 of the recorded width (6.7e-3): the upper end would have to come
    # within 1e-5 of the truth, four halvings and more past the grid the width asks for. Exit 3
    # before that grid (pld._refuse_near_far_end), never an accept
    lo, hi = X + mpf("1e-5"), _ends(12)[1] + mpf("1e-4")
    got, done = _search_misled(lo, hi)
    assert got == "exit 3" and done == [(8, "both"), (12, "both"), (13, "lower")], (got, done)


def test_a_genuine_certificate_is_still_confirmed_under_the_misled_estimate() -> None:
    # the producer's own ends at 2^-12 (a lower end below the truth): the estimate only chooses sides
    lo, hi = _ends(12)[0] - mpf("1e-4"), _ends(12)[1] + mpf("1e-4")
    got, done = _search_misled(lo, hi)
    assert got != "exit 3" and lo <= got[0] and got[1] <= hi, (got, done)
    lo = X - mpf("1e-4")  # narrowed toward the truth, still genuine: the lower side settles it
    got, done = _search_misled(lo, hi)
    assert got != "exit 3" and lo <= got[0] and got[1] <= hi, (got, done)
