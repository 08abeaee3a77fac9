"""Bad input files answered by every reader alike (issue 22, mend49's findings): exit 2 and a
message naming the file, the path inside it and the allowed values, quoting only what the user
wrote. Each case was answered otherwise before (the old answer is stated at the case).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dpverify.cli import main

ROOT = Path(__file__).resolve().parents[2]
CERT = ROOT / "tests" / "certificate" / "format2" / "pld-claim.json"
#: the first shipped claim record (rdp.epsilon at sigma 20, 1000 compositions, delta 1e-5)
CLAIM = json.loads((ROOT / "dpverify" / "theorems" / "claims" / "abc.jsonl").read_text().splitlines()[0])
CORPUS = {"id": "t", "source": "s", "location": "https://example.org", "quote": "q", "mechanism": "dpsgd-poisson",
          "noise_multiplier": "1.1", "batch_size": 256, "dataset_size": 60000, "epochs": "1", "steps_rule": "ceil",
          "delta": "1e-5", "claimed_eps": "3.01", "accountant": "rdp"}
BIG = "__BIG__"  # replaced by a JSON number literal in the file's text


def _text(doc: dict, literal: str) -> str:
    return json.dumps(doc).replace(f'"{BIG}"', literal)


def _verify_file(tmp_path: Path, literal: str) -> tuple[list[str], str]:
    cert = json.loads(CERT.read_text())
    cert["inputs"]["delta"] = BIG
    f = tmp_path / "cert.json"
    f.write_text(_text(cert, literal))
    return ["verify", str(f)], "inputs.delta"


def _corpus_file(tmp_path: Path, literal: str) -> tuple[list[str], str]:
    f = tmp_path / "corpus.jsonl"
    f.write_text(_text({**CORPUS, "delta": BIG}, literal) + "\n")
    return ["audit", "corpus", str(f)], "record 1 (line 1): delta"


def _claims_folder(tmp_path: Path, literal: str) -> tuple[list[str], str]:
    d = tmp_path / "claims"
    d.mkdir()
    (d / "x.jsonl").write_text(_text({**CLAIM, "inputs": {**CLAIM["inputs"], "delta": BIG}}, literal) + "\n")
    return ["reproduce", "--claims", str(d)], "x.jsonl record 1 (line 1): inputs.delta"


@pytest.mark.parametrize("make", [_verify_file, _corpus_file, _claims_folder])
@pytest.mark.parametrize("literal, says", [
    ("5e99999", "the number 5e99999 is out of range"),  # before: "inf is not of type 'string'"
    ("-1e400", "the number -1e400 is out of range"),
    ("1e-99999", "the number 1e-99999 is out of range"),  # before: read as 0.0
    ("7" * 1500 + ".5", "a number of 1502 characters is too long"),
])
def test_a_json_number_beyond_a_double_is_named_as_written(make, literal, says, tmp_path, capsys):
    argv, where = make(tmp_path, literal)
    assert main(argv) == 2
    out, err = capsys.readouterr()
    text = out + err
    assert f"{where}: {says}" in text, text
    assert "inf" not in text.replace("inputs", "") and "0.0" not in text, text


GRID = 'task = "audit"\n[fixed]\nsampling_rate = "0.01"\nsteps = 10\ndelta = "1e-5"\ndigits = 1\n' \
       '[product]\nnoise_multiplier = ["1"]\n'
EVENTS = {"neighboring": "add-remove", "events": [{"type": "gaussian", "noise_multiplier": "1"}]}


def _utf16_cases(tmp_path: Path) -> list[tuple[list[str], str]]:
    """(argv, the file named) of every command that reads a file, each given a UTF-16 one."""
    def utf16(name: str, text: str) -> Path:
        f = tmp_path / name
        f.write_bytes(text.encode("utf-16"))
        return f

    claims = tmp_path / "claims"
    claims.mkdir()
    utf16("claims/x.jsonl", json.dumps(CLAIM) + "\n")
    return [
        (["verify", str(utf16("cert.json", CERT.read_text()))], "cert.json"),
        (["reproduce", "--claims", str(claims)], "x.jsonl"),
        (["audit", "corpus", str(utf16("corpus.jsonl", json.dumps(CORPUS) + "\n"))], "corpus.jsonl"),
        (["sweep", "--workers", "1", "--no-cache", "--out", str(tmp_path / "out"), str(utf16("g.toml", GRID))],
         "g.toml"),
        (["oracle", "--digits", "1", "--input", str(utf16("rows.csv", "accountant,mechanism,noise_multiplier,"
                                                          "sampling_rate,steps,delta,reported_eps\n"))], "rows.csv"),
        (["audit", "dpsgd", "--delta", "1e-5", "--events", str(utf16("ev.json", json.dumps(EVENTS)))], "ev.json"),
    ]


def test_a_utf16_file_is_refused_in_one_wording_by_every_reader(tmp_path, capsys):
    # before: verify said "not UTF-8 (byte 0)", reproduce and audit corpus printed Python's codec
    # text ("'utf-8' codec can't decode byte 0xff in position 0"), sweep "not UTF-8 text"
    for argv, name in _utf16_cases(tmp_path):
        assert main(argv) == 2, argv
        out, err = capsys.readouterr()
        text = out + err
        assert name in text and "not UTF-8 text (byte 0xff at line 1, offset 0); save the file as UTF-8" in text, \
            (argv, text)


@pytest.mark.parametrize("key, value, says", [
    ("delta", "0", "inputs.delta='0' is outside the producer's range: allowed (0, 1)"),
    ("delta", "5e99999", "inputs.delta='5e99999': decimal exponent must be within +-3000"),
    ("delta", "inf", "inputs.delta='inf' must be a finite real number"),
    ("noise_multiplier", "abc", "inputs.noise_multiplier='abc' is not a number (use a decimal like 0.1"),
    ("noise_multiplier", "-1", "inputs.noise_multiplier=-1: mechanism 'gaussian' needs noise_multiplier in (0, inf)"),
])
def test_a_claim_record_with_a_value_the_producer_refuses_is_refused_when_read(key, value, says, tmp_path, capsys):
    """reproduce --help: "exit 2 when a record is malformed or its inputs are invalid: the files are
    read whole first, so no claim runs and the message names the file, the record and the key".
    Before, the claim ran, was marked invalid in the table, and its message named the claim id only."""
    d = tmp_path / "claims"
    d.mkdir()
    good = dict(CLAIM, id="good")
    bad = {**CLAIM, "inputs": {**CLAIM["inputs"], key: value}}
    (d / "x.jsonl").write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n")
    assert main(["reproduce", "--claims", str(d)]) == 2
    out, err = capsys.readouterr()
    assert out == "", out  # no claim ran, not even the good one before it
    assert f"x.jsonl record 2 (line 2): {says}" in err, err


def test_reproduce_claims_given_a_file_says_a_folder_is_expected(tmp_path, capsys):
    # before: "no such claims directory", of a file that exists
    f = tmp_path / "x.jsonl"
    f.write_text(json.dumps(CLAIM) + "\n")
    assert main(["reproduce", "--claims", str(f)]) == 2
    err = capsys.readouterr().err
    assert f"{f}: is a file, not a folder: --claims takes the folder holding the *.jsonl claim files" in err, err


def test_a_long_grid_value_is_shortened_in_the_configuration_label(tmp_path, capsys):
    # before: configuration 0 (noise_multiplier=777...7 in full): a 5.2 kB message
    g = tmp_path / "g.toml"
    g.write_text(GRID.replace('noise_multiplier = ["1"]', f'noise_multiplier = ["{"7" * 5000}"]'))
    assert main(["sweep", "--workers", "1", "--no-cache", "--out", str(tmp_path / "out"), str(g)]) == 2
    err = capsys.readouterr().err
    assert f"{g.name}: configuration 0 (noise_multiplier={'7' * 57}...): noise_multiplier: a number of 5000 digits " \
           "is too long" in err and len(err) < 400, err


def _cert_file(tmp_path: Path, change) -> Path:
    cert = json.loads(CERT.read_text())
    change(cert)
    f = tmp_path / "cert.json"
    f.write_text(json.dumps(cert))
    return f


def test_a_misspelled_input_key_lists_the_keys_of_the_certificates_kind(tmp_path, capsys):
    # before: "allowed:" listed the schema's union over every kind, about 100 keys
    from dpverify.certificate.format import KIND_INPUTS

    f = _cert_file(tmp_path, lambda c: c["inputs"].__setitem__("delt", c["inputs"].pop("delta")))
    assert main(["verify", str(f)]) == 2
    out = "".join(capsys.readouterr())
    keys = ", ".join(sorted(KIND_INPUTS["pld.claim"]))
    assert f"inputs.delt: unknown key; did you mean delta? (allowed keys of pld.claim: {keys})\n" in out, out
    assert "eps_h" not in out, out


def test_a_certificate_without_format_says_it_is_missing(tmp_path, capsys):
    # before: "format: 'None' is not allowed", a value the file does not hold
    f = _cert_file(tmp_path, lambda c: c.pop("format"))
    assert main(["verify", str(f)]) == 2
    out = "".join(capsys.readouterr())
    assert "format: missing (required; allowed: dpverify-certificate/1, dpverify-certificate/2)" in out, out


@pytest.mark.parametrize("value, shown", [(None, "null"), (True, "true"), ([], "a list")])
def test_a_value_of_the_wrong_json_type_is_named_in_json_words(value, shown, tmp_path, capsys):
    # before: "None is not of type 'string'", Python's words for a null the file holds
    f = _cert_file(tmp_path, lambda c: c["inputs"].__setitem__("delta", value))
    assert main(["verify", str(f)]) == 2
    out = "".join(capsys.readouterr())
    assert f"inputs.delta: {shown} is not a string (a decimal string such as \"0.1\" or \"1e-5\", or a fraction " \
           "\"1/3\")" in out, out
    argv, where = _corpus_file(tmp_path, json.dumps(value))
    assert main(argv) == 2
    out = "".join(capsys.readouterr())
    assert f"{where}: {shown} is not a string (an exact decimal or fraction as a string" in out, out


@pytest.mark.parametrize("key, value, says", [
    # before: the claim ran and the writer refused its certificate, an internal error (exit 4)
    ("delta", 0.5, "inputs.delta: 0.5 is not a string (a decimal string such as \"0.1\""),
    # before: the claim ran and was marked invalid, named by its id only
    ("delta", None, "inputs.delta: null is not a string"),
    ("compositions", "abc", "inputs.compositions: 'abc' is not an integer"),
])
def test_a_claim_record_value_of_a_type_the_certificate_refuses_is_refused_when_read(key, value, says, tmp_path,
                                                                                     capsys):
    d = tmp_path / "claims"
    d.mkdir()
    (d / "x.jsonl").write_text(json.dumps({**CLAIM, "inputs": {**CLAIM["inputs"], key: value}}) + "\n")
    assert main(["reproduce", "--claims", str(d)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and f"x.jsonl record 1 (line 1): {says}" in err, out + err


def test_a_certificate_saved_with_a_byte_order_mark_is_read_as_every_input_file_is(tmp_path, capsys):
    # before: "not JSON (Unexpected UTF-8 BOM ...)", where the other readers drop the mark
    f = tmp_path / "cert.json"
    f.write_bytes(b"\xef\xbb\xbf" + CERT.read_bytes())
    assert main(["verify", str(f)]) == 0, capsys.readouterr()
