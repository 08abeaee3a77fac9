"""The E-epoch balls-in-bins re-check stops its products where its loss window stops reading, and
clips a recorded window to the loss indices its grid can reach (:meth:`dpverify.recheck.bins._Epochs._window`,
:meth:`._reach`). Both only drop what the route never reads, so the reference here is the same route
run on the recorded hints as they are (``cut=False``): the lower ends must be the same exact
rationals, the upper ends the same up to the smaller tracked rounding excess of the shorter products
(never above the reference, and within 2^-100 of it). Cases: the genuine frozen two-epoch certificate,
and its hints forged the ways that used to cost verify time (keep and top raised, windows widened far
beyond the grid's reach, a window wholly beyond it)."""

import copy
from fractions import Fraction
import json
from pathlib import Path

import pytest

from dpverify.recheck import bins as RB

from ..certs import outcome, reseal

FIX = Path(__file__).parents[1] / "certificate" / "format2"
EPS = [Fraction("1.471"), Fraction("1.474"), Fraction(1, 2), Fraction(3)]


def _hints(**edits):
    cert = json.loads((FIX / "bins-epsilon-epochs.json").read_text())
    r = RB._run(cert["inputs"])
    grids, loss = RB._epochs_hints(cert["result"], r["dirs"])
    for k, v in edits.items():
        if k in loss:
            loss[k] = v
        else:
            d, key = k.split("__")
            grids[d][key] = v
    return cert, r, grids, loss


CASES = {
    "genuine": {},
    # the grid extended past the window's reach (remove reads up to about 36.8k degrees at its hi)
    "keep-and-top-raised": {"remove__top": 60_000, "remove__keep": 60_000, "add__top": 70_000, "add__keep": 70_000},
    "windows-widened": {"remove_lo": -40_000, "remove_hi": 40_000, "add_lo": -40_000, "add_hi": 40_000},
    "window-beyond-reach": {"remove_lo": 200_000, "remove_hi": 200_010, "add_lo": -200_010, "add_hi": -200_000},
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_cut_route_gives_the_bounds_of_the_recorded_hints(case):
    _, r, grids, loss = _hints(**CASES[case])
    cut = RB._Epochs(r, grids, loss)
    ref = RB._Epochs(r, grids, loss, cut=False)
    for eps in EPS:
        (lo, hi), (lo_ref, hi_ref) = cut.delta(eps), ref.delta(eps)
        assert lo == lo_ref
        assert hi_ref - Fraction(1, 2**100) <= hi <= hi_ref
    for d in r["dirs"]:  # the composed laws are never longer than the recorded windows make them
        assert len(cut.parts[d]["up"]) <= len(ref.parts[d]["up"])


def test_a_window_forged_wide_is_clipped_to_the_grids_reach():
    # E = 2, the windows at the composed-points cap (2 x 655,341 points per direction): the grid of T = 4
    # reaches losses within about [-7.7, 2.9] (remove) only, so each composed law (what the E-fold products
    # make) has about 2 x 44k points, not 1.3M
    half = RB.BINS_MAX_COMPOSED // 4 - 10
    cert, r, grids, loss = _hints(remove_lo=-half, remove_hi=half, add_lo=-half, add_hi=half)
    L = RB._Epochs(r, grids, loss)
    assert all(len(p["up"]) < 100_000 < half for p in L.parts.values())
    forged = copy.deepcopy(cert)
    forged["result"]["bins_epochs"]["loss"].update(loss)
    assert outcome(reseal(forged)) == 0  # the recorded ends are true: cheap, not lax
