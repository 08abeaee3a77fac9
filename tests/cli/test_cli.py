"""The CLI through main(argv): outputs, JSON, exit codes, bad-input table."""

import json
import subprocess
import sys

import mpmath
import pytest

from dpverify.cli import main

from ..reference import delta_mu_ref
from fractions import Fraction


def test_gdp_delta_acceptance(capsys):
    # float64 underflows here; the certified width is <= 1e-15 relative around ~4.7e-2166
    assert main(["gdp", "delta", "--mu", "0.5", "--eps", "50", "--json"]) == 0
    cert = json.loads(capsys.readouterr().out)
    enc = cert["result"]["enclosure"]
    with mpmath.workdps(60):
        lo, hi = mpmath.mpf(enc["lo"]), mpmath.mpf(enc["hi"])
        assert (hi - lo) / lo <= mpmath.mpf("1e-15")
        assert lo <= delta_mu_ref(Fraction(1, 2), Fraction(50)) <= hi
    assert cert["inputs"] == {"mu": "0.5", "eps": "50", "digits": 15}
    assert cert["claim"]["quantity"] == "gdp.delta"


def test_gdp_delta_40_digits(capsys):
    assert main(["gdp", "delta", "--mu", "0.5", "--eps", "50", "--digits", "40"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("delta_mu(eps) in [4.68957373347163560361356952130932109843")


def test_gdp_mu_human_and_certificate_file(tmp_path, capsys):
    path = tmp_path / "mu.json"
    assert main(["gdp", "mu", "--eps", "1", "--delta", "1e-5", "--certificate", str(path)]) == 0
    assert capsys.readouterr().out.startswith("mu_GDP(eps, delta) in [0.26805112321129")
    assert json.loads(path.read_text())["claim"]["quantity"] == "gdp.mu"


BAD = [
    (["gdp", "delta", "--mu", "-1", "--eps", "1"], "--mu"),
    (["gdp", "delta", "--mu", "0", "--eps", "1"], "--mu"),
    (["gdp", "delta", "--mu", "nan", "--eps", "1"], "--mu"),
    (["gdp", "delta", "--mu", "inf", "--eps", "1"], "--mu"),
    (["gdp", "delta", "--mu", "abc", "--eps", "1"], "--mu"),
    (["gdp", "delta", "--mu", "1", "--eps", "inf"], "--eps"),
    (["gdp", "delta", "--mu", "1"], "--eps"),
    (["gdp", "delta", "--mu", "1", "--eps", "1", "--digits", "0"], "--digits"),
    (["gdp", "delta", "--mu", "1", "--eps", "1", "--digits", "many"], "--digits"),
    (["gdp", "mu", "--eps", "1", "--delta", "0"], "--delta"),
    (["gdp", "mu", "--eps", "1", "--delta", "1"], "--delta"),
    (["gdp", "mu", "--eps", "1", "--delta", "2"], "--delta"),
    (["gdp", "mu", "--eps", "-1", "--delta", "0.1"], "--delta"),
    (["gdp", "mu", "--eps", "1e999999", "--delta", "0.5"], "--eps"),
    (["gdp", "mu", "--delta", "0.5"], "--eps"),
    (["gdp", "nosuch"], "invalid choice"),
    (["reproduce", "--only", "no-such-claim"], "--only"),
]


@pytest.mark.parametrize("argv, needle", BAD)
def test_bad_input_exits_2_naming_the_option(argv, needle, capsys):
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse's own usage errors
        code = exc.code
    assert code == 2
    err = capsys.readouterr().err
    assert needle in err
    assert "Traceback" not in err


def test_reproduce_table_and_json(capsys):
    assert main(["reproduce"]) == 0
    out = capsys.readouterr().out
    assert "gdpt-sec4.2-delta6-100" in out and "holds" in out
    assert main(["reproduce", "--json", "--only", "gdpt-sec4.2-delta6-100"]) == 0
    arr = json.loads(capsys.readouterr().out)
    assert [c["claim"]["id"] for c in arr] == ["gdpt-sec4.2-delta6-100"]
    assert arr[0]["claim"]["printed"] == "10^-43"
    assert arr[0]["result"]["verdict"] == "holds"


def test_python_dash_m_runs():
    proc = subprocess.run(
        [sys.executable, "-m", "dpverify", "gdp", "delta", "--mu", "6", "--eps", "100"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0
    assert proc.stdout.startswith("delta_mu(eps) in [2.43442311357366")
