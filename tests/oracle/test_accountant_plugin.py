"""`dpverify oracle --accountant module:function`: a maintainer's accountant
classified over a battery (and the battery-runner records)."""

import json
from fractions import Fraction

import pytest

from dpverify.certificate import verify_certificate
from dpverify.cli import main


def test_underreporting_accountant_exits_1_and_names_the_row(capsys, tmp_path):
    cert = tmp_path / "o.json"
    code = main(["oracle", "--accountant", "tests.fixtures:underreporting_accountant",
                 "--accountant", "tests.fixtures:infinite_accountant",
                 "--accountant", "tests.fixtures:crashing_accountant",
                 "--accountant", "tests.fixtures:rdp_accountant",
                 "--battery", "smoke", "--certificate", str(cert)])
    out, err = capsys.readouterr()
    assert code == 1
    # the certified lower bound at sigma 1, q 0.01, T 100, delta 1e-5 is 0.7180...; RDP/2 is 0.607
    assert "1 unsafe row(s)" in err
    assert "tests.fixtures:underreporting_accountant at sigma=1, q=0.01, T=100, delta=0.00001" in err
    c = json.loads(cert.read_text())
    verdicts = {r["accountant"]: r["verdict"] for r in c["result"]["rows"]}
    assert verdicts == {"tests.fixtures:underreporting_accountant": "unsafe",
                        "tests.fixtures:infinite_accountant": "returned-inf",
                        "tests.fixtures:crashing_accountant": "crashed",
                        "tests.fixtures:rdp_accountant": "loose"}  # RDP 0.98 > 1.01 * 0.7181
    row = c["result"]["rows"][0]
    assert row["accountant_settings"] == {"rule": "dp_accounting RdpAccountant epsilon / 2"}
    assert "accountant_version" in row
    assert "confirmed" in verify_certificate(c)  # the verifier re-derives every verdict


def test_prv_estimate_and_upper_are_separate_rows_with_version(capsys):
    pytest.importorskip("prv_accountant")
    from importlib.metadata import version

    assert main(["oracle", "--battery", "smoke", "--accountants", "prv_accountant", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["result"]["rows"]
    assert [r["accountant"] for r in rows] == ["prv_accountant-estimate", "prv_accountant-upper"]
    assert all(r["accountant_version"] == version("prv-accountant") for r in rows)
    assert rows[0]["accountant_settings"]["eps_error"] == "0.01"
    # the upper bound is at least the estimate
    assert float(rows[1]["reported"]) >= float(rows[0]["reported"])


@pytest.mark.parametrize("argv, needle", [
    (["--battery", "smoke", "--accountant", "nocolon"], "module:function"),
    (["--battery", "smoke", "--accountant", "no_such_module_xyz:f"], "cannot import"),
    (["--battery", "smoke", "--accountant", "tests.fixtures:missing"], "has no function"),
    (["--input", "rows.csv", "--accountant", "tests.fixtures:rdp_accountant"], "--battery"),
])
def test_bad_accountant_exits_2(capsys, argv, needle):
    assert main(["oracle", *argv]) == 2
    assert needle in capsys.readouterr().err


def test_oracle_sweep_task_with_dpsgd_alias(tmp_path, capsys):
    g = tmp_path / "o.toml"
    g.write_text('task = "oracle"\n[fixed]\nmechanism = "dpsgd"\ndelta = "1e-5"\ndigits = 2\n'
                 'tolerance = "0.01"\nsampling_rate = "0.01"\nsteps = 100\nnoise_multiplier = 1\n'
                 '[product]\naccountant = ["tests.fixtures:underreporting_accountant", '
                 '"tests.fixtures:nan_accountant", "tests.fixtures:rdp_accountant"]\n')
    code = main(["sweep", str(g), "--workers", "1", "--out", str(tmp_path / "o")])
    assert code == 1  # an unsafe row
    body = json.loads((tmp_path / "o" / "results.json").read_text())
    assert [r["verdict"] for r in body["rows"]] == ["unsafe", "crashed", "loose"]
    assert body["summary"]["computed"] == 1  # one certified computation for three accountants
    assert body["rows"][1]["accountant_error"] == "returned nan"


def test_plugin_returns_and_exits_are_rows(capsys, tmp_path):
    """adv37 O1/O2. A numpy.float64 (what dp_accounting's RdpAccountant.get_epsilon returns) had
    stopped the oracle with exit 2 blaming a non-existent --reported option; sys.exit(0) inside
    the plug-in had ended the oracle with exit 0 and nothing printed; 10**5000 was exit 4.
    The reference for the numpy rows is the same accountant returning a Python float
    (tests.fixtures:rdp_accountant): the same reported text and verdict. The others are the
    documented 'crashed' rows (an accountant that raises, or returns no bounded number)."""
    import numpy as np

    cert = tmp_path / "o.json"
    code = main(["oracle", "--battery", "smoke", "--certificate", str(cert),
                 *(a for n in ("rdp_accountant", "numpy_rdp_accountant", "numpy_float32_accountant",
                               "exiting_accountant", "huge_accountant")
                   for a in ("--accountant", f"tests.fixtures:{n}"))])
    assert code == 0
    rows = {r["accountant"].split(":")[1]: r for r in json.loads(cert.read_text())["result"]["rows"]}
    ref, npy = rows["rdp_accountant"], rows["numpy_rdp_accountant"]
    assert (npy["reported"], npy["verdict"]) == (ref["reported"], ref["verdict"]) == (ref["reported"], "loose")
    assert rows["numpy_float32_accountant"]["reported"] == repr(float(np.float32(0.9)))
    assert rows["exiting_accountant"]["verdict"] == "crashed"
    assert rows["exiting_accountant"]["error"] == "SystemExit: 0"
    assert rows["huge_accountant"]["verdict"] == "crashed" and "4000 digits" in rows["huge_accountant"]["error"]
    assert "confirmed" in verify_certificate(json.loads(cert.read_text()))


def test_misbehaving_returns_and_exceptions_are_rows(capsys, tmp_path):
    """adv39 O2: the returned value was converted and shown outside the crash guard (a repr
    that raises was exit 4), and a plug-in's own BaseException, or an exception whose __str__
    raises one, was a traceback and exit 1. Now each is the plug-in's 'crashed' row (exit 0:
    no row is unsafe). Float and str subclasses are read by the one rule of _report: the value
    their built-in base stores (5.0 by construction), whatever their overridden float(),
    repr or strip say; 5.0 is above the certified enclosure of "smoke" ([0.7178, 0.7185], see
    test_underreporting_accountant_exits_1_and_names_the_row), so the row is loose."""
    names = ("lying_float_accountant", "raising_float_accountant", "raising_str_accountant",
             "unshowable_accountant", "base_exception_accountant", "unshowable_error_accountant")
    cert = tmp_path / "o.json"
    code = main(["oracle", "--battery", "smoke", "--certificate", str(cert),
                 *(a for n in names for a in ("--accountant", f"tests.fixtures:{n}"))])
    assert code == 0
    rows = {r["accountant"].split(":")[1]: r for r in json.loads(cert.read_text())["result"]["rows"]}
    for n in ("lying_float_accountant", "raising_float_accountant", "raising_str_accountant"):
        assert (rows[n]["reported"], rows[n]["verdict"]) == ("5.0", "loose"), rows[n]
    for n in ("unshowable_accountant", "base_exception_accountant", "unshowable_error_accountant"):
        assert rows[n]["verdict"] == "crashed", rows[n]
    assert rows["unshowable_accountant"]["error"] == "returned a value that could not be read (RuntimeError: no repr)"
    assert rows["base_exception_accountant"]["error"] == "_OwnBaseException: a plug-in's own BaseException"
    assert rows["unshowable_error_accountant"]["error"] == "_UnshowableError: (its message could not be shown)"
    assert "confirmed" in verify_certificate(json.loads(cert.read_text()))


def test_keyboard_interrupt_in_a_plugin_still_stops_the_run(capsys):
    """The user's Ctrl-C is no plug-in crash: the run stops (exit 130, the CLI's interrupt code)."""
    assert main(["oracle", "--battery", "smoke", "--accountant", "tests.fixtures:interrupted_accountant"]) == 130
    assert "interrupted" in capsys.readouterr().err


def test_int_and_fraction_subclasses_are_read_as_their_stored_values():
    """_report's one rule for the other built-in bases: an int subclass as int.__int__, a
    Fraction subclass as its stored numerator and denominator, whatever str(), repr() or an
    overridden numerator say (values fixed by construction: 3 and 7/2)."""
    from dpverify.oracle.accountants import _report

    class LyingInt(int):
        def __str__(self):
            return "0"

        __repr__ = __str__

    class LyingFraction(Fraction):
        @property
        def numerator(self):
            return 0

        def __str__(self):
            return "0"

    r = _report("x", "1", {}, LyingInt(3))
    assert (r.value, r.text, r.error) == (3, "3", "")
    r = _report("x", "1", {}, LyingFraction(7, 2))
    assert (r.value, r.text, r.error) == (Fraction(7, 2), "7/2", "")
