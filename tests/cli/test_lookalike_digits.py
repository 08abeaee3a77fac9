"""Issue 22: a number written with look-alike characters (full-width "１.５", Arabic-Indic "٣", a
full-width point "1．5") is refused with one plain reason wherever a number is read (an option, an
--events file, an oracle rows file, a certificate): "not a decimal number: '１' (U+FF11 FULLWIDTH
DIGIT ONE) is not ASCII; use ASCII digits 0-9". Before, the reason was the grammar itself: "is not a
number (use a decimal like 0.1 ...)", "must be an integer in [1, 10000000]", or, in verify, the
regular expression "does not match '^(-?([0-9]+)...'". The words come from one place,
:func:`dpverify.numtext.not_ascii`."""

import json
import unicodedata
from pathlib import Path

import pytest

from dpverify.certificate.format import compute_digest
from dpverify.cli import main
from dpverify.numtext import not_ascii
from dpverify.recheck.verify import verify_file

F2 = Path(__file__).resolve().parents[1] / "certificate" / "format2"
ADVICE = "is not ASCII; use ASCII digits 0-9"


@pytest.mark.parametrize("text,char", [("\uff11.\uff15", "\uff11"), ("1\uff0e5", "\uff0e"), ("\u0663", "\u0663"),
                                       ("\u09e7e-5", "\u09e7"), ("1\uff0f3", "\uff0f"), ("\uff0d1", "\uff0d")])
def test_the_reason_names_the_first_lookalike_character(text, char):
    why = not_ascii(text)
    assert why is not None and why.startswith("not a decimal number") and f"U+{ord(char):04X}" in why
    assert unicodedata.name(char) in why


@pytest.mark.parametrize("text", ["1.5", "1e-5", "1/3", "-2", "abc", "inf", "\u00e9", "\u00b5", "x\u00b2"])
def test_ascii_or_unrelated_text_gets_no_such_reason(text):
    # "\u00b2" (superscript two) has a digit value but is no look-alike of a number text: it is caught
    # (unicodedata.digit), which is the point; the others are no numbers at all
    assert (not_ascii(text) is not None) == (text == "x\u00b2")


@pytest.mark.parametrize("argv,option", [
    (["gdp", "delta", "--mu", "1", "--eps", "\uff11.\uff15"], "--eps"),
    (["gdp", "delta", "--mu", "1\uff0e5", "--eps", "1"], "--mu"),
    (["audit", "dpsgd", "--noise-multiplier", "1", "--sampling-rate", "0.01", "--steps", "\uff11\uff12",
      "--delta", "1e-5"], "--steps"),
    (["audit", "dpsgd", "--noise-multiplier", "1", "--sampling-rate", "0.01", "--steps", "12",
      "--delta", "1e-5", "--digits", "\u0663"], "--digits"),
    (["verify", "--time-budget", "\uff11", "none.json"], "--time-budget"),
])
def test_an_option(argv, option, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert option in err and ADVICE in err and "Traceback" not in err, err


@pytest.mark.parametrize("count,sigma,where", [('"\uff11\uff12"', '"1"', "events[0].count"),
                                               ("12", '"\uff11"', "events[0].event.noise_multiplier")])
def test_an_events_file(count, sigma, where, tmp_path, capsys):
    p = tmp_path / "e.json"
    p.write_text('{"events": [{"type": "self_composed", "count": %s, "event": {"type": "gaussian", '
                 '"noise_multiplier": %s}}]}' % (count, sigma), encoding="utf-8")
    assert main(["audit", "dpsgd", "--events", str(p), "--delta", "1e-5"]) == 2
    err = capsys.readouterr().err
    assert f"{where}: " in err and ADVICE in err, err


def test_an_oracle_rows_file(tmp_path, capsys):
    p = tmp_path / "rows.json"
    p.write_text(json.dumps([{"accountant": "a", "mechanism": "gaussian", "noise_multiplier": "1",
                              "sampling_rate": 1, "steps": "\uff11\uff10", "delta": "1e-5", "reported_eps": "3"}]),
                 encoding="utf-8")
    assert main(["oracle", "--input", str(p)]) == 2
    err = capsys.readouterr().err
    assert "rows[0].steps" in err and ADVICE in err, err


@pytest.mark.parametrize("key,value", [("mu", "\uff11"), ("eps", "1\uff0e0"), ("digits", "\uff11\uff15")])
def test_a_certificate(key, value, tmp_path):
    """verify explained a number string that failed the schema's pattern by the pattern itself."""
    cert = json.loads((F2 / "gdp-delta.json").read_text())
    cert["inputs"][key] = value
    cert["digest"] = compute_digest(cert)
    p = tmp_path / "c.json"
    p.write_text(json.dumps(cert, ensure_ascii=False), encoding="utf-8")
    code, msg = verify_file(p)
    assert code == 2 and f"inputs.{key}: " in msg and ADVICE in msg and "[0-9]" not in msg, msg


def test_a_certificate_number_of_another_wrong_form_is_explained_in_words(tmp_path):
    cert = json.loads((F2 / "gdp-delta.json").read_text())
    cert["inputs"]["mu"] = "1.2.3"
    cert["digest"] = compute_digest(cert)
    p = tmp_path / "c.json"
    p.write_text(json.dumps(cert))
    code, msg = verify_file(p)
    assert code == 2 and "inputs.mu: '1.2.3' is not a number as a certificate writes one" in msg, msg
    assert "[0-9]" not in msg
