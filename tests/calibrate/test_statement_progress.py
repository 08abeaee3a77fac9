"""Privacy statements and the progress display."""

import io

import pytest

from dpverify.progress import Progress
from dpverify.statement import round_up
from dpverify.cli import main


@pytest.mark.parametrize("text, digits, out", [
    ("2.99111", 3, "3"), ("2.99111", 4, "2.992"), ("0.000123401", 3, "0.000124"), ("7", 3, "7"),
])
def test_round_up_never_below(text, digits, out):
    from decimal import Decimal

    assert round_up(text, digits) == out and Decimal(out) >= Decimal(text)


@pytest.mark.parametrize("fmt", ["md", "tex", "txt"])
def test_audit_statement_states_everything(fmt, capsys, tmp_path):
    path = tmp_path / "c.json"
    code = main(["audit", "dpsgd", "--noise-multiplier", "2", "--sampling-rate", "0.1", "--steps", "10",
                 "--delta", "1e-5", "--statement", fmt, "--certificate", str(path)])
    assert code == 0
    out = capsys.readouterr().out
    import json

    cert = json.loads(path.read_text())
    hi = cert["result"]["enclosure"]["hi"]
    assert round_up(hi) in out and cert["digest"] in out
    for word in ("Poisson", "0.1", "10 steps", "per example", "dpverify verify", "add"):
        assert word in out.replace("\n", " "), word


def test_claimed_eps_output_states_the_certified_eps(capsys):
    code = main(["audit", "dpsgd", "--noise-multiplier", "2", "--sampling-rate", "0.1", "--steps", "10",
                 "--delta", "1e-5", "--claimed-eps", "2"])
    assert code == 0
    assert "certified eps" in capsys.readouterr().out


def test_progress_is_silent_off_a_terminal():
    s = io.StringIO()
    with Progress("x", stream=s) as p:
        p(0.0, "grid 2^-9, add")
        p.width(0.5, 1e-3)
        p.update()
    assert s.getvalue() == ""


def test_progress_never_moves_backwards():
    s = io.StringIO()
    p = Progress("x", stream=s, enabled=True)
    seen = []
    for frac in (0.0, 0.5, 0.0, 0.5, 0.0):  # the PLD loop restarts at each level
        p(frac, "grid 2^-9, add")
        seen.append(p._frac)
    p.width(1e-1, 1e-3)
    seen.append(p._frac)
    p.width(1e-2, 1e-3)
    seen.append(p._frac)
    p.width(5e-2, 1e-3)  # a wider bracket later must not pull the bar back
    seen.append(p._frac)
    p.close()
    assert seen == sorted(seen) and "loss grid 1/512" in s.getvalue()
