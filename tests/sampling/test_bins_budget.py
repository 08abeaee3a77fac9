"""The time budget of a balls-in-bins run: checked between the polynomial products and every few
thousand grid points (not only between whole enclosures), so a run stops near its budget with
exit 3; and the clock only stops a run, so a run that completes within its budget writes the
same bytes as one without a clock (the determinism rule). No timing is asserted: an expired
budget is one already spent (a budget far below one product), and the comparison is of bytes."""

import json

import pytest

from dpverify.certificate import bins_cert as C
from dpverify.cli import main
from dpverify.errors import PrecisionExhausted
from dpverify.sampling import balls as B
from dpverify.sampling import balls_epochs as BE
from dpverify.sampling import bins as BB

_DEG, _PTS = 1 << 13, 1 << 15


@pytest.mark.parametrize("epochs", [1, 2])
def test_a_spent_budget_stops_the_run(epochs):
    r = B.run("2", 3, 1, epochs, "add-remove")
    for call in (lambda: BB.enclose_eps(r, "1e-3", time_budget=1e-9),
                 lambda: BB.enclose_delta(r, "0.5", time_budget=1e-9)):
        with pytest.raises(PrecisionExhausted, match="time budget"):
            call()


def test_the_clock_never_changes_a_completed_answer():
    r = B.run("2", 3, 1, 2, "add-remove")
    grids = (BE.choose_grids(r, _DEG), None)
    free = BE.enclose_eps(r, "1e-3", grids=grids, points=_PTS)
    timed = BE.enclose_eps(r, "1e-3", grids=grids, points=_PTS, time_budget=3600)
    a = C.bracket_certificate(r, free, delta="1e-3")
    b = C.bracket_certificate(r, timed, delta="1e-3")
    assert json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
    one = B.run("2", 3, 1, 1, "add-remove")
    assert B.enclose_delta(one, "0.5") == B.enclose_delta(one, "0.5", time_budget=3600)


def test_cli_time_budget_reaches_balls_in_bins(capsys):
    """--time-budget was accepted and ignored by the balls-in-bins route (sigma 0.05, N 8, B 2,
    E 2 ran 84-92 s on a budget of 60); a spent budget now answers exit 3 and writes nothing."""
    argv = ["audit", "dpsgd", "--sampling", "balls-in-bins", "--noise-multiplier", "2", "--dataset-size", "3",
            "--batch-size", "1", "--epochs", "2", "--delta", "1e-3", "--time-budget", "1e-9", "--json"]
    assert main(argv) == 3
    out = capsys.readouterr()
    assert "time budget" in out.err and out.out.strip() == ""
