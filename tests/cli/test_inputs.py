"""Strict inputs (docs/reference/inputs.md): a table of bad command lines per
command, each answered with exit 2 and a message naming the option; the cases
that motivated the strict boundary; the caps stated in --help; outward-rounded
human output of the oracle.

Every case here failed before the strict boundary in one of three ways: exit 0 with a
silently ignored or misread input, a traceback with exit 1 (the code for
"fails"), or a file error after the work was done.
"""

from __future__ import annotations

import argparse
import json
import re
from fractions import Fraction
from pathlib import Path

import pytest

from dpverify.cli import build_parser, main

from ..reference import nested_events_file

ROWS_HEADER = "accountant,mechanism,noise_multiplier,sampling_rate,steps,delta,reported_eps\n"
ROW = "a,subsampled-gaussian,1,0.01,10,1e-5,0.5\n"


@pytest.fixture()
def files(tmp_path):
    """Input files for the table: a good and a non-UTF-8 rows file, bad JSON."""
    good = tmp_path / "rows.csv"
    good.write_text(ROWS_HEADER + ROW)
    latin = tmp_path / "latin.csv"
    latin.write_bytes((ROWS_HEADER + "caf\xe9," + ROW.split(",", 1)[1]).encode("latin-1"))
    bad_json = tmp_path / "mechs.json"
    bad_json.write_text('["1,0", {"eps": 1, "delt": 0}]')
    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    return {"GOOD": str(good), "LATIN": str(latin), "BADJSON": str(bad_json), "FILE": str(a_file),
            "DIR": str(tmp_path), "MISSING": str(tmp_path / "no-such-folder" / "x.json")}


DIGITS_5000 = "9" * 5000
GD = ["gdp", "delta", "--mu", "1", "--eps", "1"]
CERT = ["gdp", "certify", "--eps-h", "1"]
PROF = ["dp", "profile", "--eps", "1"]
DPSGD = ["audit", "dpsgd", "--noise-multiplier", "1", "--sampling-rate", "0.01", "--steps", "10"]
ORACLE = ["oracle", "--input", "{GOOD}"]

# (argv, the option the message must name). {NAME} is a path from the fixture.
BAD = [
    # gdp delta / mu: numbers, caps, repeats, abbreviations, output paths
    (["gdp", "delta", "--mu", "-1", "--eps", "1"], "--mu"),
    (["gdp", "delta", "--mu", DIGITS_5000, "--eps", "1"], "--mu"),
    (["gdp", "delta", "--mu", "1e-3001", "--eps", "1"], "--mu"),
    (["gdp", "delta", "--mu", "\uff11", "--eps", "1"], "--mu"),  # a full-width digit one
    (["gdp", "delta", "--mu", "1", "--eps", "nan"], "--eps"),
    (["gdp", "delta", "--mu", "1", "--eps", "1e999999999"], "--eps"),
    (GD + ["--digits", "301"], "--digits"),
    (GD + ["--digits", "1e3"], "--digits"),
    (GD + ["--mu", "2"], "--mu"),  # given twice: argparse would keep the last one
    (GD + ["--dig", "3"], "--dig"),  # abbreviations are not expanded
    (GD + ["--certificate", "{MISSING}"], "--certificate"),
    (GD + ["--certificate", "{DIR}"], "--certificate"),
    (["gdp", "mu", "--eps", "50", "--delta", "1e-4301"], "--delta"),
    (["gdp", "mu", "--eps", "1", "--delta", "0"], "--delta"),
    (["gdp", "mu", "--eps", "1e3001", "--delta", "0.5"], "--eps"),
    # gdp certify / plot: mechanism options that do not apply, ranges, image formats
    (CERT + ["--mechanism", "laplace", "--scale", "1", "--mu", "1"], "--mu"),
    (CERT + ["--mechanism", "gaussian", "--mu", "1", "--sensitivity", "2"], "--sensitivity"),
    (CERT + ["--mechanism", "gaussian", "--mu", "1", "--refined"], "--refined"),
    (CERT + ["--mechanism", "expr", "--profile", "2+eps"], "--profile"),
    (CERT + ["--mechanism", "pure", "--eps0", "1", "--margin", "2"], "--margin"),
    (["gdp", "certify", "--mechanism", "pure", "--eps0", "1", "--eps-h", "1e5"], "--eps-h"),
    (CERT + ["--mechanism", "pure", "--eps0", "1", "--algorithm", "fast"], "--algorithm"),
    (["gdp", "plot", "--mechanism", "pure", "--eps0", "1", "--eps-h", "1", "--out", "{DIR}/g.bmpx"], "--out"),
    (["gdp", "plot", "--mechanism", "pure", "--eps0", "1", "--eps-h", "1", "--out", "{DIR}/g"], "--out"),
    (["gdp", "plot", "--mechanism", "pure", "--eps0", "1", "--eps-h", "1", "--out", "{MISSING}.png"], "--out"),
    # dp profile / implies
    (PROF[:3] + ["-1", "--mechanism", "expr", "--profile", "exp(-eps)"], "--profile"),
    (PROF[:3] + ["-1", "--mechanism", "expr", "--profile", "log(eps)"], "--profile"),
    (PROF + ["--mechanism", "expr", "--profile", "(-1)**0.5*eps"], "--profile"),
    (PROF + ["--mechanism", "expr", "--profile", "eps" + "+eps" * 300], "--profile"),
    (PROF + ["--mechanism", "expr", "--profile", "eps**1001"], "--profile"),
    # power towers: bounded before arb evaluates them (9**9**9**9 made GMP abort the process)
    (PROF + ["--mechanism", "expr", "--profile", "9**9**9**9*eps"], "--profile"),
    (PROF + ["--mechanism", "expr", "--profile", "exp(exp(exp(exp(eps+3))))*eps"], "--profile"),
    (PROF + ["--mechanism", "expr", "--profile", "__import__('os')"], "--profile"),
    (PROF + ["--mechanism", "rr", "--p", "0.75", "--scale", "1"], "--scale"),
    (PROF + ["--mechanism", "sgd-example", "--p", "0.75"], "--p"),
    (PROF + ["--mechanism", "nosuch"], "--mechanism"),
    (["dp", "implies", "--from", "1", "--to", "1,0"], "--from"),
    (["dp", "implies", "--from", "1,0", "--to", "1,2"], "--to"),
    (["dp", "implies", "--from", "1e4000,0", "--to", "1,0"], "--from"),
    # check rr64
    (["check", "rr64", "--eps0", "1", "--delta0", "2", "--eps", "1"], "--delta0"),
    (["check", "rr64", "--eps0", "-1", "--delta0", "0", "--eps", "1"], "--eps0"),
    (["check", "rr64", "--eps0", "1", "--delta0", "0", "--eps", "abc"], "--eps"),
    # compose
    (["compose", "--mech", "1", "--eps", "1"], "--mech"),
    (["compose", "--mech", "1,2", "--eps", "1"], "--mech"),
    (["compose", "--mech", "1,0", "--steps", "0", "--eps", "1"], "--steps"),
    (["compose", "--mech", "1,0", "--steps", "10000001", "--eps", "1"], "--steps"),
    # other scripts' digits: str.isdigit and int() read ARABIC-INDIC THREE as 3 (adv34 M1)
    (["compose", "--mech", "1,0", "--steps", "\u0663", "--eps", "1"], "--steps"),
    (["audit", "dpsgd", "--noise-multiplier", "1", "--dataset-size", "1000", "--batch-size", "10",
      "--epochs", "\u0663", "--delta", "1e-5"], "--epochs"),
    (["compose", "--mech", "1,0", "--eps", "1", "--grid", "0"], "--grid"),
    (["compose", "--mech", "1,0", "--delta", "2"], "--delta"),
    (["compose", "--mech", "1,0", "--eps", "1", "--delta", "0.1"], "--delta"),
    (["compose", "--mechs-file", "{BADJSON}", "--eps", "1"], "--mechs-file"),
    (["compose", "--mechs-file", "{DIR}/none.json", "--eps", "1"], "--mechs-file"),
    # audit dpsgd: 10^9 steps, ranges, options of another mode
    (["audit", "dpsgd", "--noise-multiplier", "1", "--sampling-rate", "0.01", "--steps", "1000000000",
      "--delta", "1e-5"], "--steps"),
    (["audit", "dpsgd", "--noise-multiplier", "1", "--sampling-rate", "0", "--steps", "10", "--delta", "1e-5"],
     "--sampling-rate"),
    (["audit", "dpsgd", "--noise-multiplier", "1", "--sampling-rate", "1.5", "--steps", "10", "--delta", "1e-5"],
     "--sampling-rate"),
    (["audit", "dpsgd", "--noise-multiplier", "0", "--sampling-rate", "0.1", "--steps", "10", "--delta", "1e-5"],
     "--noise-multiplier"),
    # a noise multiplier past 1e100 (limits.MAX_NOISE_MULTIPLIER): exit 2 at once on every DP-SGD route,
    # where 1e3000 was exit 4 after 27 s (a grid 2^-m underflowing to 0.0) or an OverflowError
    (["audit", "dpsgd", "--noise-multiplier", "1e3000", "--sampling-rate", "0.01", "--steps", "10",
      "--delta", "1e-5"], "--noise-multiplier"),
    (["audit", "dpsgd", "--noise-multiplier", "1e3000", "--sampling-rate", "0.01", "--steps", "10",
      "--eps", "1"], "--noise-multiplier"),
    (["audit", "dpsgd", "--sampling", "shuffle", "--dataset-size", "1000", "--batch-size", "100", "--epochs", "2",
      "--noise-multiplier", "1e3000", "--delta", "1e-5"], "--noise-multiplier"),
    (["calibrate", "dpsgd", "--noise-multiplier", "1e3000", "--steps", "10", "--delta", "1e-5",
      "--target-eps", "1"], "--noise-multiplier"),
    (DPSGD + ["--delta", "1"], "--delta"),
    (DPSGD + ["--delta", "1e-5", "--batch-size", "5"], "--batch-size"),
    (DPSGD + ["--delta", "1e-5", "--epochs", "1"], "--epochs"),
    (["audit", "dpsgd", "--events", "{GOOD}", "--batch-size", "5", "--delta", "1e-5"], "--batch-size"),
    (["audit", "dpsgd", "--events", "{GOOD}", "--steps", "5", "--delta", "1e-5"], "--steps"),
    (DPSGD + ["--delta", "1e-5", "--claimed-eps", "1", "--digits", "6"], "--digits"),
    (DPSGD + ["--delta", "1e-5", "--time-budget", "1e3000"], "--time-budget"),
    (DPSGD + ["--delta", "1e-5", "--time-budget", "0"], "--time-budget"),
    (DPSGD + ["--delta", "1e-5", "--neighboring", "neighbours"], "--neighboring"),
    (DPSGD + ["--delta", "1e-5", "--certificate", "{MISSING}"], "--certificate"),
    # rdp
    (["rdp", "divergence", "--mechanism", "gaussian", "--mu", "1", "--alpha", "1"], "--alpha"),
    (["rdp", "divergence", "--mechanism", "gaussian", "--mu", "1", "--alpha", "2", "--steps", "0"],
     "--steps"),
    (["rdp", "divergence", "--mechanism", "gaussian", "--mu", "1", "--sampling-rate", "0.1", "--alpha", "2"], "--sampling-rate"),
    (["rdp", "epsilon", "--mechanism", "laplace", "--scale", "1", "--mu", "1", "--delta", "1e-5"], "--mu"),
    (["rdp", "epsilon", "--mechanism", "gaussian", "--mu", "1", "--delta", "1e-5", "--conversion", "best"],
     "--conversion"),
    (["rdp", "epsilon", "--mechanism", "gaussian", "--mu", "1", "--delta", "0"], "--delta"),
    (["rdp", "epsilon", "--mechanism", "gaussian", "--mu", "1", "--delta", "1e-5", "--digits", "31"], "--digits"),
    (["rdp", "to-dp", "--alpha", "0.5", "--rdp", "1", "--delta", "0.1"], "--alpha"),
    (["rdp", "to-dp", "--alpha", "2", "--rdp", "-1", "--delta", "0.1"], "--rdp"),
    # oracle: files, modes, report paths (checked before any certified computation)
    (ORACLE + ["--accountants", "opacus-gdp"], "--accountants"),
    (["oracle", "--input", "{LATIN}"], "--input"),
    (["oracle", "--input", "{DIR}/none.csv"], "--input"),
    (["oracle", "--input", "{DIR}"], "--input"),
    (ORACLE + ["--report", "{MISSING}"], "--report"),
    (ORACLE + ["--time-budget", "0"], "--time-budget"),
    (ORACLE + ["--tolerance", "-1"], "--tolerance"),
    (ORACLE + ["--digits", "9"], "--digits"),
    (["oracle", "--battery", "nope"], "--battery"),
    (["oracle", "--battery", "smoke", "--input", "{GOOD}"], "--input"),
    # reproduce
    (["reproduce", "--only", "no-such-claim"], "--only"),
    (["reproduce", "--out", "{FILE}", "--only", "no-such-claim"], "--out"),
]


def _fill(argv, files):
    return [a.format(**files) if "{" in a and "}" in a and "__import__" not in a else a for a in argv]


def run(argv) -> int:
    """main(argv), with argparse's own exits (SystemExit(2)) as exit codes."""
    try:
        return main(argv)
    except SystemExit as exc:
        return int(exc.code)


@pytest.mark.parametrize("argv, option", BAD, ids=[" ".join(a)[:70] for a, _ in BAD])
def test_bad_command_line_exits_2_naming_the_option(argv, option, files, capsys):
    code = run(_fill(argv, files))
    err = capsys.readouterr().err
    assert code == 2, err
    assert option in err, err
    assert "Traceback" not in err and "internal error" not in err


# --------------------------------------------------------------------------- the cases


def test_long_number_is_exit_2_not_a_traceback(capsys):
    # before: ValueError (Python's 4,300-digit int/str limit), traceback, exit 1
    assert main(["gdp", "mu", "--eps", "50", "--delta", "1e-4301"]) == 2
    assert "--delta" in capsys.readouterr().err
    # 1e-3000 is inside the caps and is computed (mu = 0.0085..., eps = 1)
    assert main(["gdp", "mu", "--eps", "1", "--delta", "1e-3000"]) == 0
    assert capsys.readouterr().out.startswith("mu_GDP(eps, delta) in [0.0085168624")


def test_expr_profile_outside_unit_interval_is_refused(capsys):
    # before: delta = 2.718 (exp(1)), exit 0
    assert main(["dp", "profile", "--mechanism", "expr", "--profile", "exp(-eps)", "--eps", "-1"]) == 2
    assert "outside [0, 1]" in capsys.readouterr().err
    # a value above 1 by 1e-40 is decided with more precision and refused too
    assert main(["dp", "profile", "--mechanism", "expr", "--profile", "1+1e-40*exp(-eps)", "--eps", "1"]) == 2
    assert "outside [0, 1]" in capsys.readouterr().err
    # 1 - 1e-40 e^-1 is a value in [0, 1]: computed
    assert main(["dp", "profile", "--mechanism", "expr", "--profile", "1-1e-40*exp(-eps)", "--eps", "1"]) == 0


def test_options_of_another_mechanism_or_mode_are_refused(files, capsys):
    # before: each was silently ignored (exit 0)
    assert main(["dp", "profile", "--mechanism", "laplace", "--scale", "1", "--mu", "3", "--eps", "1"]) == 2
    assert "--mu does not apply to --mechanism laplace" in capsys.readouterr().err
    assert main(["audit", "dpsgd", "--events", files["GOOD"], "--batch-size", "5", "--delta", "1e-5"]) == 2
    assert "--batch-size does not apply with --events FILE" in capsys.readouterr().err
    assert main(["oracle", "--input", files["GOOD"], "--accountants", "opacus-gdp"]) == 2
    assert "--accountants does not apply with --input FILE" in capsys.readouterr().err


def test_output_paths_are_checked_before_the_work(files, capsys, monkeypatch):
    # before: the oracle ran its certified computation, then crashed writing --report
    import dpverify.oracle.run as oracle_run

    monkeypatch.setattr(oracle_run.S, "epsilon", _must_not_run)
    assert run(["oracle", "--input", files["GOOD"], "--report", files["MISSING"]]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert not Path(files["MISSING"]).parent.exists()  # nothing created either


def _must_not_run(*args, **kwargs):
    raise AssertionError("the certified computation ran before the output path was checked")


def test_negative_numbers_with_exponents_are_values(capsys):
    # argparse reads "-1e-5" as an option unless told otherwise
    assert main(["gdp", "delta", "--mu", "1", "--eps", "-1e-5"]) == 0
    assert main(["gdp", "delta", "--mu", "1", "--eps", "-1/3"]) == 0


def test_result_beyond_printable_range_is_exit_2(capsys):
    # erfc(10^3000) ~ 10^(-4.3 * 10^5999): no decimal exponent of sensible size exists
    assert main(["dp", "profile", "--mechanism", "expr", "--profile", "erfc(eps*1e3000)", "--eps", "1"]) == 2
    assert "printable range" in capsys.readouterr().err


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_a_full_disk_is_exit_2_not_a_bug(capsys):
    """adv34 C1: the write to /dev/full fails with ENOSPC and no file name attached; that is the
    environment's answer (exit 2, the reason and the options given), not exit 4 "a bug"."""
    assert main(["gdp", "delta", "--mu", "1", "--eps", "1", "--certificate", "/dev/full"]) == 2
    err = capsys.readouterr().err
    assert "No space left on device" in err and "--certificate /dev/full" in err and "a bug" not in err


def test_last_resort_handler_is_exit_4_with_a_message(monkeypatch, capsys):
    # a bug is exit 4 ("internal error"), distinct from 2 (bad input) and never 1 ("fails")
    import dpverify.cli.gdp as g

    def boom(*a, **k):
        raise RuntimeError("simulated bug")

    monkeypatch.setattr(g, "delta_mu", boom)
    assert main(["gdp", "delta", "--mu", "1", "--eps", "1"]) == 4
    err = capsys.readouterr().err
    assert err.startswith("dpverify: internal error: RuntimeError: simulated bug")
    assert "a bug; please report it" in err


def test_a_certificate_that_would_not_validate_is_exit_4_and_no_file(monkeypatch, capsys, tmp_path):
    # the write-time contract: the writer validates against the shipped schema before
    # anything leaves the process; a field the schema does not know is a writer bug
    import dpverify.certificate.writer as w

    real = w.make_certificate

    def with_unknown_field(**kw):
        return real(**{**kw, "inputs": {**kw["inputs"], "not_in_the_schema": "1"}})

    monkeypatch.setattr("dpverify.certificate.build.make_certificate", with_unknown_field)
    out = tmp_path / "c.json"
    code = main(["gdp", "delta", "--mu", "1", "--eps", "1", "--certificate", str(out)])
    err = capsys.readouterr().err
    assert code == 4 and "inputs.not_in_the_schema: unknown key" in err and not out.exists()


# --------------------------------------------------------------------------- --help states the caps


def _parsers(parser: argparse.ArgumentParser, prefix=()):
    yield prefix, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _parsers(sub, prefix + (name,))


def test_every_help_states_the_number_caps():
    for path, p in _parsers(build_parser()):
        text = re.sub(r"\s+", " ", p.format_help())
        assert "at most 1000 characters" in text and "+-3000" in text, path


def test_help_states_the_other_caps():
    helps = {" ".join(path): re.sub(r"\s+", " ", p.format_help()) for path, p in _parsers(build_parser())}
    assert "1..10000000" in helps["audit dpsgd"]  # steps
    assert "[5e-324, 604800]" in helps["audit dpsgd"]  # time budget
    assert "500 characters and 200 parts, integer powers within +-1000" in helps["dp profile"]
    assert "1..10000000" in helps["compose"]
    assert "1..300" in helps["gdp delta"]


# --------------------------------------------------------------------------- outward rounding


def test_oracle_human_band_is_rounded_outward(files, capsys, tmp_path):
    # before: hi[:9] cut the certified upper end downward
    cert = tmp_path / "o.json"
    assert main(["oracle", "--input", files["GOOD"], "--certificate", str(cert)]) == 0  # loose
    line = capsys.readouterr().out.splitlines()[0]
    lo_p, hi_p = re.search(r"in \[([^,]+), ([^\]]+)\]", line).groups()
    band = json.loads(cert.read_text())["result"]["rows"][0]["certified"]
    assert Fraction(lo_p) <= Fraction(band["lo"]) and Fraction(band["hi"]) <= Fraction(hi_p)
    # and it is the band, to 7 digits: within one unit of the 7th digit
    assert Fraction(hi_p) - Fraction(band["hi"]) <= Fraction(hi_p) * Fraction(1, 10**6)


# --------------------------------------------------------------------------- found by fuzzing the producer side


def test_other_spellings_of_a_number_are_recorded_in_the_schema_spelling(capsys):
    # before: "+1", " 1", ".5", "1.e-05" were parsed as numbers, then recorded as given and
    # refused by the writer's own schema check: exit 4 ("internal error") for a valid input
    assert main(["gdp", "delta", "--mu", "+1", "--eps", " .5", "--json"]) == 0
    cert = json.loads(capsys.readouterr().out)
    assert cert["inputs"]["mu"] == "1" and cert["inputs"]["eps"] == "0.5"
    assert main(["dp", "implies", "--from", "1.,1.e-05", "--to", "+1,+1/100000", "--json"]) == 0
    cert = json.loads(capsys.readouterr().out)
    assert {k: cert["inputs"][k] for k in ("eps0", "delta0", "eps", "delta")} == {
        "eps0": "1", "delta0": "1e-5", "eps": "1", "delta": "1/100000"}


@pytest.mark.parametrize("profile", [
    "erfc(eps*1e300)",  # ~ 10^(-4.3e599)
    "erfc(eps*1e20)",  # ~ 10^(-4.3e39): exponent of 40 digits
])
def test_result_whose_exponent_has_more_than_18_digits_is_exit_2(profile, capsys):
    # before: printed exponents up to a thousand digits, which the certificate schema
    # (at most 18) refused at write time: exit 4 ("internal error"). (gdp delta at mu 1e-300 was the
    # example here; it is now refused before any work, by the stated eps / mu <= 1e8)
    assert main(["dp", "profile", "--mechanism", "expr", "--profile", profile, "--eps", "1"]) == 2
    err = capsys.readouterr().err
    assert "printable range" in err and "internal error" not in err
    # the error is raised where the result is printed; the message names the inputs
    # that led there, so the user knows which option to change
    assert f"for --mechanism expr --profile {profile} --eps 1" in err


@pytest.mark.parametrize("argv", [["gdp", "delta", "--mu", "1e-300", "--eps", "1"], ["gdp", "delta", "--mu", "1e-20", "--eps", "1"]])
def test_a_gdp_delta_past_the_printable_range_is_refused_before_any_work(argv, capsys):
    """delta_mu(1) at mu 1e-300 is about 10^(-2e599): refused by the stated eps / mu <= 1e8 (limits.py),
    naming --eps and the bound, as verify refuses such a certificate (tests/recheck/test_input_ranges.py)."""
    from dpverify.limits import MAX_GDP_EPS_OVER_MU

    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"--eps: eps='1' with mu='{argv[3]}': eps / mu must be at most {MAX_GDP_EPS_OVER_MU}" in err, err


def test_printable_range_error_names_a_huge_option_value_cut_short(capsys):
    # erfc(10^60) ~ 10^(-4.3e119)
    assert main(["dp", "profile", "--mechanism", "expr", "--profile", "erfc(eps)", "--eps", "1" + "0" * 60]) == 2
    err = capsys.readouterr().err
    assert "--eps " + "1" + "0" * 39 + "..." in err and "0" * 41 not in err


@pytest.mark.parametrize("text", ["-inf", "-Infinity", "-nan"])
def test_negative_infinity_is_named_as_not_finite(text, capsys):
    # before: argparse took "-inf" for an option: "expected one argument"
    assert run(["gdp", "delta", "--mu", "1", "--eps", text]) == 2
    assert "must be a finite real number" in capsys.readouterr().err


@pytest.mark.parametrize("budget", ["1e3000", "604801"])
def test_sweep_time_budget_above_the_cap_is_exit_2(budget, tmp_path, capsys):
    # before: 1e3000 passed the "> 0" check and float() overflowed: a traceback (exit 4);
    # the shared time budget's range [5e-324, 604800] now holds for sweep too
    grid = tmp_path / "g.toml"
    grid.write_text('task = "audit"\n[fixed]\nsampling_rate = "0.01"\nsteps = 10\ndelta = "1e-5"\n'
                    'digits = 1\nnoise_multiplier = "1"\n')
    argv = ["sweep", str(grid), "--workers", "1", "--no-cache", "--out", str(tmp_path / "o"),
            "--time-budget", budget]
    assert run(argv) == 2
    err = capsys.readouterr().err
    assert "--time-budget" in err and "604800" in err and "internal error" not in err


@pytest.mark.parametrize("budget", ["\uff11", "1_0", "0", "0/5", "1/0", "604801", "1e99999999", "nan", "inf", "-1",
                                    "1e-99999999"])
def test_verify_time_budget_is_read_like_every_number_option(budget, tmp_path, capsys):
    # before: float() read the fullwidth digit U+FF11 as 1 and "1_0" as 10 (adv41 C1); every other
    # number option refuses both as "not a number"
    assert run(["verify", "--time-budget", budget, str(tmp_path / "none.json")]) == 2
    assert "--time-budget" in capsys.readouterr().err


@pytest.mark.parametrize("text", ["+5", "0.000000001e11", "0.0000001e11", "604800", "604800.0000001", "1e-99999999",
                                  "1e-400", " 7 ", "1/3", "-0", "2e5", "\uff11"])
def test_verify_time_budget_reader_is_the_shared_one(text):
    """adv43 F2: verify read --time-budget with a grammar and a cap of its own (86,400 s against
    604,800 for audit, calibrate and sweep): it refused "+5" and 0.000000001e11 (100 s) and took
    1e-99999999. The same text is now the same budget, or the same refusal, on every command."""
    from dpverify._validate import seconds
    from dpverify.cli.verify import _seconds
    from dpverify.errors import InvalidParameter

    try:
        want = seconds("time_budget", text)
    except InvalidParameter:
        want = None
    try:
        got = _seconds(text)
    except InvalidParameter:
        got = None
    assert got == want, (text, got, want)


@pytest.mark.parametrize("argv", [["verify", "--time-budget", "5e-324"], ["verify", "--time-budget", "1/3"]])
def test_verify_time_budget_down_to_the_least_double_runs_out_at_once(argv, tmp_path, capsys):
    """A positive budget a double can hold is accepted however small: 5e-324 s is the least double,
    the budget that runs out at once (exit 3), not 0.0 (which the producer side refused as
    "time_budget=0.0", naming a value nobody gave)."""
    assert run(["gdp", "delta", "--mu", "1", "--eps", "1", "--certificate", str(tmp_path / "c.json")]) == 0
    code = run(argv + [str(tmp_path / "c.json")])
    assert code in (0, 3) and (code == 0) == (argv[-1] == "1/3")
    assert run(DPSGD + ["--delta", "1e-5", "--time-budget", "1e-320"]) == 3
    assert "0.0" not in capsys.readouterr().err
    # the shared reader (audit, calibrate, sweep, oracle): 0.0 was falsy where the sweep decides to run a
    # job under a deadline, so `sweep --time-budget 1e-400` ran with no limit at all (adv41 C2)
    from dpverify._validate import seconds
    assert seconds("time_budget", "5e-324") > 0 and seconds("time_budget", "1e-320") > 0


@pytest.mark.parametrize("budget", ["1e-400", "1e-3000", "2e-324", "0", "-1", "nan", "inf", "abc", "5e99999",
                                    "\uff11"])
@pytest.mark.parametrize("command", ["verify", "audit"])
def test_a_time_budget_outside_its_range_names_the_option_and_the_range(budget, command, tmp_path, capsys):
    """Issue 22: a budget below 5e-324 (1e-400) rounds to 0 s; it was silently read as the least double
    (a budget nobody gave). Now it is refused like 0, a negative, nan, inf, a word or an exponent past
    the cap: exit 2, naming --time-budget and its range [5e-324, 604800], on verify and the producer."""
    argv = (["verify", "--time-budget", budget, str(tmp_path / "none.json")] if command == "verify"
            else DPSGD + ["--delta", "1e-5", "--time-budget", budget])
    assert run(argv) == 2
    err = capsys.readouterr().err
    assert "--time-budget" in err and "[5e-324, 604800]" in err and "Traceback" not in err, err


def test_verify_help_states_the_time_budget_default_and_range(capsys):
    run(["verify", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "in [5e-324, 604800] (default 300;" in out


@pytest.mark.parametrize("expr", ["9**9**9**9*eps", "exp(exp(exp(1000)))*eps", "10**10**10**10*exp(-eps)",
                                  "1/0*eps", "log(eps-eps)"])
def test_expr_profile_undefined_or_overflowing_at_a_point_is_refused(expr, capsys):
    # before: exit 3 "could not enclose ... within 65536 bits" (dp profile) or "the adaptive
    # staircase needs more than 15000 cell splits ... use a larger --margin" (gdp certify):
    # hints at precision or margin for an expression that has no value there at all
    assert main(["dp", "profile", "--mechanism", "expr", "--profile", expr, "--eps", "1"]) == 2
    err = capsys.readouterr().err
    assert "--profile" in err and "undefined or too large" in err
    assert main(["gdp", "certify", "--mechanism", "expr", "--profile", expr, "--eps-h", "1"]) == 2
    assert "undefined or too large" in capsys.readouterr().err


def test_expr_profile_needing_more_precision_at_a_point_is_still_computed(capsys):
    # a denominator that the first precision cannot tell from 0 is not "undefined":
    # 1 - (1 - 2^-200) = 2^-200 at eps = 1, so the profile is 2^-200 * 2^200 / 2 = 1/2
    expr = "2**-200/(1-(1-2**-200)*eps)/2"
    assert main(["dp", "profile", "--mechanism", "expr", "--profile", expr, "--eps", "1", "--digits", "5"]) == 0
    assert "[0.5, 0.5]" in capsys.readouterr().out


@pytest.mark.parametrize("argv, option", [
    (["gdp", "certify", "--mechanism", "laplace", "--scale", "1e-3000", "--eps-h", "1"], "--scale"),
    (["gdp", "mu", "--eps", "-1", "--delta", "1e-3000"], "--delta"),
    (["rdp", "to-dp", "--alpha", "2", "--rdp", "1", "--delta", "1e-3000", "--conversion", "optimal"], "--delta"),
])
def test_refusal_of_a_tiny_number_is_one_short_line(argv, option, capsys):
    # before: the message spelled the exact value, a 3,000-digit fraction 1/1000...0,
    # or float() of it: "delta=0 is below 1e-50" for the 1e-3000 typed
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert option in err and len(err.splitlines()) == 1 and len(err) < 300, err[:400]
    assert "1e-3000" in err, err


def test_the_largest_step_count_of_the_range_is_accepted(capsys):
    # before: --steps 1000000000000 (13 characters) was refused by a 12-character cap with
    # "must be an integer in [1, 1000000000000]"; D_alpha of N(1, 1) vs N(0, 1) is alpha/2,
    # so 10^12 compositions at alpha = 2 give exactly 10^12
    assert main(["rdp", "divergence", "--mechanism", "gaussian", "--mu", "1", "--alpha", "2",
                 "--steps", "1000000000000", "--digits", "5"]) == 0
    lo, hi = re.search(r"in \[([^,]+), ([^\]]+)\]", capsys.readouterr().out).groups()
    assert Fraction(lo) <= 10**12 <= Fraction(hi)
    assert main(["rdp", "divergence", "--mechanism", "gaussian", "--mu", "1", "--alpha", "2",
                 "--steps", "1000000000001"]) == 2
    assert "--steps" in capsys.readouterr().err


_TWICE = ('{"neighboring": "add-remove", "event": {"type": "gaussian", '
          '"noise_multiplier": "1", "noise_multiplier": "2"}}')
_HUGE_COUNT = ('{"neighboring": "add-remove", "event": {"type": "self_composed", "count": '
               '1000000000000000000000000000000, "event": {"type": "gaussian", "noise_multiplier": "1"}}}')


@pytest.mark.parametrize("text, says", [
    # before: "must be an integer" for a 31-digit count (it is one)
    (_HUGE_COUNT, "event.count: '1000000000000000000000000000000' must be an integer in [0, 1000000000000]"),
    # before: the last of two "noise_multiplier" keys was used silently (sigma = 2)
    (_TWICE, "'noise_multiplier' appears twice"),
    # before: "type: unknown key", which did not say that the node needs a document around it
    ('{"type": "gaussian", "noise_multiplier": "1"}', 'an event node, not an event document: wrap it as {"event": <node>}'),
])
def test_bad_event_file_is_refused_naming_the_file(text, says, tmp_path, capsys):
    ev = tmp_path / "ev.json"
    ev.write_text(text)
    assert main(["audit", "dpsgd", "--events", str(ev), "--delta", "1e-5", "--digits", "1"]) == 2
    err = capsys.readouterr().err
    assert "--events" in err and says in err, err


def test_a_pair_with_a_negative_first_number_is_a_value(capsys):
    # before: argparse took "-1,0" for an option: "argument --to: expected one argument";
    # (1, 1/10)-DP does not imply (-1, 0)-DP (GDPT Thm 3.1: a delta of 0 at eps < 0)
    assert main(["dp", "implies", "--from", "1,0.1", "--to", "-1,0"]) == 1
    assert main(["dp", "implies", "--from", "1,0.1", "--to", "-1e3000,0"]) == 1
    out, err = capsys.readouterr()
    assert "expected one argument" not in err
    # and the verdict line names -1e3000 in its own short spelling, not as a 3,001-digit integer
    assert "(-1e3000, 0)-DP" in out and len(out) < 300, out[:400]


@pytest.mark.parametrize("data, says", [
    (b'{"event": {"type": "gaussian", "noise_multiplier": "1\xed\xa0\x80"}}', "not UTF-8"),  # a raw surrogate
    (b"\xef\xbb\xbf" + b'{"event": {"type": "gaussian", "noise_multiplier": "1"}}', None),  # BOM: read
])
def test_event_file_bytes(data, says, tmp_path, capsys):
    # before: bytes that are not UTF-8 were an internal error (UnicodeDecodeError, exit 4)
    # and a leading byte-order mark was "not valid JSON"
    ev = tmp_path / "ev.json"
    ev.write_bytes(data)
    code = main(["audit", "dpsgd", "--events", str(ev), "--delta", "1e-5", "--digits", "1"])
    err = capsys.readouterr().err
    if says:
        assert code == 2 and "--events" in err and says in err, err
    else:
        assert code == 0, err


def test_event_file_that_is_a_folder(tmp_path, capsys):
    assert main(["audit", "dpsgd", "--events", str(tmp_path), "--delta", "1e-5"]) == 2
    assert "--events" in capsys.readouterr().err


@pytest.mark.parametrize("name", ["a\nb", "a|b", "a\x1b[31m"])
def test_oracle_accountant_name_that_breaks_the_table_is_refused(name, tmp_path, capsys):
    # before: a newline, '|' or an escape sequence in the name went into the printed
    # table and the Markdown report (a row split over lines, a cell split in two)
    rows = tmp_path / "rows.json"
    rows.write_text(json.dumps([{"accountant": name, "mechanism": "subsampled-gaussian", "noise_multiplier": "1",
                                 "sampling_rate": "0.01", "steps": 10, "delta": "1e-5", "reported_eps": "0.5"}]))
    assert main(["oracle", "--input", str(rows), "--digits", "1"]) == 2
    err = capsys.readouterr().err
    assert "--input" in err and "rows[0].accountant" in err, err


def test_event_tree_with_too_many_repetitions_names_the_events_file(tmp_path, capsys):
    # before: "--count: count: 16777216 repetitions" named an option that does not exist;
    # 2^24 = 16777216 > 10^7 repetitions from 24 nested self_composed of count 2
    ev = nested_events_file(tmp_path / "ev.json", "1", 24)
    assert main(["audit", "dpsgd", "--events", str(ev), "--delta", "1e-5", "--digits", "1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("dpverify: error: --events:") and "16777216" in err and "--count" not in err, err


def test_plot_path_that_is_a_folder_is_refused_before_the_work(tmp_path, capsys):
    # before: a folder named x.png passed the checks, the accounting ran, and drawing the
    # picture raised IsADirectoryError: an internal error (exit 4) after the work;
    # and the suffix message spelled the option --plot_eps
    folder = tmp_path / "x.png"
    folder.mkdir()
    base = ["audit", "dpsgd", "--noise-multiplier", "1", "--sampling-rate", "0.01", "--steps", "10",
            "--delta", "1e-5", "--digits", "1"]
    assert main(base + ["--plot-eps", str(folder)]) == 2
    err = capsys.readouterr().err
    assert "--plot-eps" in err and "is a folder" in err and "internal error" not in err, err
    assert main(base + ["--plot-eps", str(tmp_path / "x.bmp")]) == 2
    assert "--plot_eps" not in capsys.readouterr().err


def test_too_many_steps_of_one_guarantee_names_the_option_not_the_library_keyword(capsys):
    # before: "--steps: ... use k <= 399999 for one guarantee": the CLI user has no k
    # 0.1 = 1 * (1/10): the lattice of 500000 steps spans 500001 points > budget 400000
    assert main(["compose", "--mech", "0.1,1e-6", "--steps", "500000", "--eps", "1", "--exact"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("dpverify: error: --steps:") and "399999" in err, err
    assert "use k" not in err and " k " not in err, err


@pytest.mark.parametrize("text, says", [
    ("task = \n", "not TOML"),
    ('task = "audit"\n[fixed]\nsteps = 0\n', "configuration"),
])
def test_bad_grid_file_is_named_as_the_positional_grid_file(text, says, tmp_path, capsys):
    # before: "dpverify: error: --grid: ...", but sweep has no --grid option (GRID is positional)
    grid = tmp_path / "g.toml"
    grid.write_text(text)
    assert run(["sweep", str(grid), "--workers", "1", "--no-cache", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("dpverify: error: GRID FILE: g.toml: ") and says in err, err
    assert "--grid" not in err, err


def test_oracle_input_with_too_many_distinct_configurations_is_refused_before_the_work(
        tmp_path, capsys, monkeypatch):
    # before: 10,000 distinct rows (the schema allows 100,000) ran one certified computation
    # each, up to --time-budget apiece: the run was not bounded before it started
    import dpverify.oracle.run as oracle_run
    from dpverify.limits import MAX_ORACLE_CONFIGURATIONS
    from dpverify.oracle.rows import parse_rows

    head = "accountant,mechanism,noise_multiplier,sampling_rate,steps,delta,reported_eps\n"
    lines = [f"a,subsampled-gaussian,1,0.01,{t},1e-5,1\n" for t in range(1, MAX_ORACLE_CONFIGURATIONS + 2)]
    many = tmp_path / "many.csv"
    many.write_text(head + "".join(lines) + lines[0] * 5)  # repeats of a configuration are free
    monkeypatch.setattr(oracle_run.S, "epsilon", _must_not_run)
    assert run(["oracle", "--input", str(many)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"dpverify: error: --input: {many}:") and "101 distinct configurations" in err, err
    assert f"at most {MAX_ORACLE_CONFIGURATIONS}" in err and "internal error" not in err, err
    # the cap itself is accepted, repeats included, and stated in --help and the schema
    assert len(parse_rows(head + "".join(lines[:-1]) + lines[0] * 5, "csv")) == MAX_ORACLE_CONFIGURATIONS + 5
    helps = {" ".join(path): re.sub(r"\s+", " ", p.format_help()) for path, p in _parsers(build_parser())}
    assert f"at most {MAX_ORACLE_CONFIGURATIONS} distinct configurations" in helps["oracle"]
    from dpverify.schemas import schema
    assert f"At most {MAX_ORACLE_CONFIGURATIONS} distinct" in schema("oracle_rows")["description"]


def test_audit_eps_beyond_every_float_is_answered_not_an_internal_error(capsys, tmp_path):
    # float(eps) only proposes a window in the PLD query; 1e3000 overflowed it (exit 4), and later the
    # Renyi tail bound's log2, about -1.4e3000, overflowed a float (exit 4). delta(1e3000) is positive
    # and below the tail bound's floor 2^-12000 (pld.tail): [0, 2^-12000], which verify re-proves
    path = tmp_path / "c.json"
    code = main(["audit", "dpsgd", "--noise-multiplier", "1", "--sampling-rate", "0.01", "--steps", "10",
                 "--eps", "1e3000", "--time-budget", "2", "--certificate", str(path)])
    assert code == 0 and "internal error" not in capsys.readouterr().err
    from fractions import Fraction

    from dpverify.pld.tail import TAIL_FLOOR_BITS
    from dpverify.recheck.verify import verify_file

    enc = json.loads(path.read_text())["result"]["enclosure"]
    assert enc["lo"] == "0" and Fraction(enc["hi"]) >= Fraction(1, 2**TAIL_FLOOR_BITS)
    assert verify_file(path)[0] == 0


def test_a_folder_the_file_system_refuses_after_the_checks_is_exit_2(capsys):
    """/proc passes the writable-folder check (it exists and root may write it) but refuses
    a new folder: that was an internal error (exit 4); it is the path and the reason."""
    if not Path("/proc").is_dir():
        pytest.skip("needs a /proc file system")
    code = main(["reproduce", "--out", "/proc/nonexistent/x", "--only", "gdpt-sec3-eps2"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "/proc/nonexistent" in err and "internal error" not in err


@pytest.mark.parametrize("tree,path", [
    ({"type": "poisson_sampled", "sampling_probability": "0.01",
      "event": {"type": "gaussian", "noise_multiplier": "1e3000"}}, "event.event.noise_multiplier"),
    ({"type": "gaussian", "noise_multiplier": "2e100"}, "event.noise_multiplier"),
])
def test_huge_noise_multiplier_in_an_event_tree_is_refused_naming_the_node(tmp_path, capsys, tree, path):
    """The events route refuses a Gaussian noise multiplier above 1e100 before any accountant
    runs (1e3000 under Poisson sampling was exit 4 after 27 s), naming the file and the node;
    1e100 itself is inside the range and answered (eps(delta) = 0 exactly: delta(0) <= 1e-5)."""
    f = tmp_path / "ev.json"
    f.write_text(json.dumps({"neighboring": "add-remove", "event": tree}))
    assert main(["audit", "dpsgd", "--events", str(f), "--delta", "1e-5"]) == 2
    err = capsys.readouterr().err
    assert f"{f}: {path}:" in err and "(0, 1e100]" in err and "Traceback" not in err
    f.write_text(json.dumps({"neighboring": "add-remove", "event": {"type": "gaussian", "noise_multiplier": "1e100"}}))
    assert main(["audit", "dpsgd", "--events", str(f), "--delta", "1e-5", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["result"]["enclosure"] == {"lo": "0", "hi": "0"}


#: (argv, the option typed with spaces, the inputs key it is recorded under)
SPACED = [
    (["gdp", "delta", "--mu", "1", "--eps", " .5 "], "eps"),
    (["audit", "dpsgd", "--noise-multiplier", "1", "--sampling-rate", "0.01", "--steps", "10",
      "--delta", " 1e-05", "--claimed-eps", " 1 "], "claimed_eps"),
    (["audit", "dpsgd", "--noise-multiplier", "2", "--dataset-size", "1000", "--batch-size", "10", "--epochs", "1",
      "--sampling", "shuffle", "--delta", " 1e-05 "], "delta"),
    (["audit", "dpsgd", "--noise-multiplier", "2", "--dataset-size", "1000", "--batch-size", "10", "--epochs", "1",
      "--sampling", "poisson", "--neighboring", "replace-one", "--eps", " 0.5"], "eps"),
]


@pytest.mark.parametrize("argv,key", SPACED, ids=lambda v: " ".join(v[:2]) if isinstance(v, list) else v)
def test_a_number_typed_with_spaces_is_quoted_as_recorded(argv, key, capsys):
    """``result.quantity`` names the number as ``inputs`` records it: the writers filled it from
    the text as typed, so --eps " 1" was quoted "delta(eps= 1)" (verify matched it by value, so
    only a reader saw it). Checked by value against the typed text, read by Fraction."""
    assert main([*argv, "--json"]) == 0
    cert = json.loads(capsys.readouterr().out)
    typed = argv[argv.index("--" + key.replace("_", "-")) + 1]
    quoted = re.search(r"\(\w+=([^)]*)\)", cert["result"]["quantity"]).group(1)
    assert quoted == cert["inputs"][key] == quoted.strip()
    assert Fraction(quoted) == Fraction(typed.strip())
