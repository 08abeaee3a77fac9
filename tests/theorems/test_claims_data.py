"""The paper claims are data (dpverify/theorems/claims/*.jsonl) computed through the quantity
registry; `reproduce` must write exactly the committed certificates, so the
move out of Python is provably lossless."""

from __future__ import annotations

import json
import math
from fractions import Fraction
from pathlib import Path

import mpmath
import pytest

from dpverify.cli import main
from dpverify.theorems import QUANTITIES, claims, load_claims
from dpverify.theorems.records import InvalidRecord

ROOT = Path(__file__).resolve().parents[2]
CERTS = ROOT / "certificates"
# claims whose computation takes more than about a second (the rest run by default)
EXPENSIVE = {"abc-fig2-100-more-iterations", "abc-fig2-gain-0.75", "prv-accountant-17-bracket",
             "prv-accountant-17-estimate", "gdpt-fig1-laplace-2gdp", "gdpt-fig1-laplace-not-1gdp",
             "gdpt-fig1-icea-not-4gdp"}


def _strip(cert: dict) -> dict:
    """A certificate without the fields that change with the software version."""
    c = json.loads(json.dumps(cert))
    c.pop("digest", None)
    c.pop("dpverify", None)
    c["method"].pop("backend", None)
    return c


def _committed(cid: str) -> dict:
    return json.loads((CERTS / f"{cid}.json").read_text())


def test_every_claim_record_matches_its_committed_certificate():
    from dpverify.certificate.writer import typed_inputs

    # the claim part of each certificate is the record itself: no field lost or renamed
    for c in claims():
        cert = _committed(c.id)
        body = {"id": c.id, "quantity": c.quantity, "statement": c.statement, "source": c.source,
                "printed": c.printed, "relation": dict(c.relation)}
        if c.domain:
            body["domain"] = c.domain
        if c.note:
            body["note"] = c.note
        assert cert["claim"] == body, c.id
        # typed one way by the writer (format 2): counts as integers, numbers as exact strings
        assert cert["inputs"] == typed_inputs(dict(c.inputs)), c.id


def _reproduce(tmp_path: Path, ids: list[str]) -> None:
    assert main(["reproduce", "--out", str(tmp_path), "--only", *ids]) == 0
    for cid in ids:
        got = json.loads((tmp_path / f"{cid}.json").read_text())
        assert _strip(got) == _strip(_committed(cid)), cid


def test_reproduce_writes_the_committed_certificates(tmp_path, capsys):
    _reproduce(tmp_path, [c.id for c in claims() if c.id not in EXPENSIVE])


@pytest.mark.slow
def test_reproduce_writes_every_committed_certificate(tmp_path, capsys):
    _reproduce(tmp_path, [c.id for c in claims()])
    assert {p.stem for p in CERTS.glob("*.json")} == {c.id for c in claims()}


def test_every_claim_quantity_is_registered_and_rechecked():
    from dpverify.recheck.verify import RECHECKERS, _load_recheckers

    _load_recheckers()
    for c in claims():
        assert c.quantity in QUANTITIES, c.id
        assert c.quantity in RECHECKERS, c.id


def _kairouz(k: int, i: int) -> str:
    # Kairouz, Oh, Viswanath (2015) Thm 3.3 at eps = 0.1, delta = 1e-8, evaluated here in
    # mpmath at 80 digits (an independent route from the data file's string)
    with mpmath.workdps(80):
        e, d = mpmath.mpf(1) / 10, mpmath.mpf(10) ** -8
        s = mpmath.fsum(math.comb(k, l) * (mpmath.exp((k - l) * e) - mpmath.exp((k - 2 * i + l) * e))
                        for l in range(i)) / (1 + mpmath.exp(e)) ** k
        return 1 - (1 - d) ** k * (1 - s)


@pytest.mark.parametrize("k, i", [(10, 2), (30, 6), (100, 12)])
def test_kairouz_printed_values_are_the_closed_form(k, i):
    c = {c.id: c for c in claims()}[f"lt-cor4.7-kairouz-k{k}-i{i}"]
    printed = Fraction(c.relation["printed"])
    with mpmath.workdps(80):
        truth = _kairouz(k, i)
        assert abs(mpmath.mpf(printed.numerator) / printed.denominator - truth) < truth * mpmath.mpf(10) ** -20


def test_rr64_printed_value_is_the_closed_form():
    # GDPT Thm 3.1: delta0 + (1 - delta0)(e^eps0 - e^eps)/(1 + e^eps0) at (1.187, 0.244), eps = 0.5
    c = {c.id: c for c in claims()}["gdpt-thm3.1-tightness"]
    with mpmath.workdps(60):
        u, E = mpmath.exp(mpmath.mpf("1.187")), mpmath.exp(mpmath.mpf("0.5"))
        w = mpmath.mpf("0.244") + (1 - mpmath.mpf("0.244")) * (u - E) / (1 + u)
        assert abs(mpmath.mpf(c.relation["printed"]) - w) < mpmath.mpf(10) ** -19


GOOD = {"id": "x-1", "source": "GDPT eq. (2)", "statement": "delta_6(100) ~ 1e-43", "printed": "1e-43",
        "relation": {"kind": "order_of_magnitude", "printed": "1e-43"}, "quantity": "gdp.delta",
        "inputs": {"mu": "6", "eps": "100", "digits": 15}}


def _write(tmp_path: Path, *recs: dict) -> Path:
    p = tmp_path / "c.jsonl"
    p.write_text("// a comment line\n" + "".join(json.dumps(r) + "\n" for r in recs))
    return p


def test_a_new_claim_is_a_record(tmp_path):
    (c,) = load_claims([_write(tmp_path, GOOD)])
    from dpverify.theorems import check

    enc, verdict = check(c)
    assert verdict.outcome.value == "holds"  # delta_6(100) = 2.46e-43 (GDPT Sec 4.2)


@pytest.mark.parametrize(
    "change, field, text",
    [
        ({"sorce": "x"}, "sorce", "unknown field; did you mean source?"),
        ({"inputs": {"mu": "6", "epz": "100"}}, "inputs.epz", "did you mean eps?"),
        ({"inputs": {"mu": "6"}}, "inputs.eps", "missing"),
        ({"quantity": "gdp.delt"}, "quantity", "did you mean gdp.delta?"),
        ({"relation": {"kind": "rounds", "printed": "1"}}, "relation", "is not valid"),
        ({"relation": {"kind": "lt", "bound": "abc"}}, "relation.bound", "not a number"),
        # what a certificate may record of a claim, read from its schema (adv51 L3: these were read,
        # computed, then refused by the writer as a bug, exit 4)
        ({"relation": {"kind": "le", "bound": "+1"}}, "relation.bound", "'+1' is not a number as a certificate"),
        ({"relation": {"kind": "in", "lo": " 1 ", "hi": "2"}}, "relation.lo", "not a number as a certificate"),
        ({"id": "a" * 5000}, "id", "5000 characters, more than the 200 a certificate records"),
        ({"printed": "1" * 2001}, "printed", "more than the 2000"),
        # a count of 5,000 digits: int() raised Python's own limit, exit 4 (adv51 L4)
        ({"inputs": {"mu": "6", "eps": "100", "digits": "1" * 5000}}, "inputs.digits", "is not an integer"),
        ({"printed": 3}, "printed", "3 is not a string (the number as the source prints it)"),
    ],
)
def test_bad_records_are_refused_naming_record_and_field(tmp_path, change, field, text):
    bad = {**GOOD, **change}
    with pytest.raises(InvalidRecord) as e:
        load_claims([_write(tmp_path, dict(GOOD, id="ok"), bad)])
    assert "record 2 (line 3)" in str(e.value) or "record 2" in str(e.value)
    assert e.value.field == field and text in str(e.value), str(e.value)


def test_duplicate_ids_and_missing_files_are_refused(tmp_path, capsys):
    with pytest.raises(InvalidRecord, match="duplicate claim id"):
        load_claims([_write(tmp_path, GOOD, GOOD)])
    assert main(["reproduce", "--claims", str(tmp_path / "missing")]) == 2
    assert "no such claims directory" in capsys.readouterr().err


@pytest.mark.parametrize("what, digits", [("eps", 100), ("delta", 300)])
def test_a_claim_asking_for_more_digits_gets_them_and_verifies(tmp_path, what, digits):
    """The refinement point was isolated to a fixed 25 digits whatever the record
    asked, so a claim at digits 100 wrote a certificate claiming 1e-100 around an
    enclosure 1e-25 wide, which verify refused as false. Independent route: the
    verifier's own root isolation (MPFR), which must confirm the enclosure."""
    rec = {"id": "refinement-deep", "source": "GDPT App B", "statement": "eps_i of icea-example", "printed": "1.1566",
           "relation": {"kind": "gt", "bound": "0"}, "quantity": "gdp.refinement_point",
           "inputs": {"example": "icea-example", "what": what, "digits": digits}}
    (c,) = load_claims([_write(tmp_path, rec)])
    from dpverify.certificate.build import claim_certificate
    from dpverify.recheck.verify import verify_certificate
    from dpverify.theorems import check

    enc, verdict = check(c)
    lo, hi = enc.lo_fraction, enc.hi_fraction
    assert verdict.outcome.value == "holds" and (hi - lo) <= lo * Fraction(10) ** -digits
    assert "confirmed" in verify_certificate(claim_certificate(c, enc, verdict))


def test_reproduce_runs_every_claim_past_an_undecided_or_invalid_one(tmp_path, capsys):
    """One claim that cannot be certified (the classic conversion to 1e-300) or whose
    record asks for more digits than its quantity allows used to end the run (exit 3
    or 2 with the first message); now each is a row, named after the table, and
    the claims after it are still certified and written."""
    base = {"source": "ABC eq. (23)", "statement": "s", "printed": "8.837135647",
            "relation": {"kind": "rounds_to", "printed": "8.837135647"}, "quantity": "rdp.epsilon",
            "inputs": {"mechanism": "gaussian", "noise_multiplier": "20", "compositions": "1000",
                       "delta": "1e-5", "conversion": "classic"}}
    # (digits past a kind's range are refused when the file is read: the next test; an invalid row is
    # what no range table states, here a worked example's name)
    undecided = {**base, "id": "deep", "inputs": {**base["inputs"], "digits": 30}}
    invalid = {**base, "id": "ref", "quantity": "gdp.refinement_point", "printed": "1",
               "relation": {"kind": "gt", "bound": "0"}, "inputs": {"example": "icea", "what": "eps"}}
    good = {**base, "id": "good", "inputs": {**base["inputs"], "digits": 12}}
    (tmp_path / "claims").mkdir()
    _write(tmp_path / "claims", undecided, invalid, good)
    assert main(["reproduce", "--claims", str(tmp_path / "claims"), "--out", str(tmp_path / "out")]) == 2
    out, err = capsys.readouterr()
    assert "3 claims: 1 hold, 0 fail, 1 undecided, 1 invalid" in out
    assert "deep: undecided" in err and "ref: inputs.example" in err and "sgd-example or icea-example" in err
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["good.json"]


def test_a_key_given_twice_in_a_record_is_refused(tmp_path):
    """adv37 D1: the JSONL reader took the last of a repeated key (a record's claimed eps 100
    then 0.1 was read as 0.1); like every other input file it now refuses the record."""
    import json as _json

    text = _json.dumps(GOOD)[:-1] + ', "quantity": "gdp.delta"}'
    p = tmp_path / "c.jsonl"
    p.write_text(text + "\n")
    with pytest.raises(InvalidRecord, match="appears twice"):
        load_claims([p])


_RDP = {"source": "ABC eq. (23)", "statement": "s", "printed": "8.837135647",
        "relation": {"kind": "rounds_to", "printed": "8.837135647"}, "quantity": "rdp.epsilon",
        "inputs": {"mechanism": "gaussian", "noise_multiplier": "20", "compositions": "1000", "delta": "1e-5",
                   "conversion": "classic", "digits": 11}}
_GAIN = {**_RDP, "quantity": "rdp.abc_gain", "inputs": {"noise_multiplier": "20", "compositions": "1000",
                                                         "delta": "1e-5", "digits": 6}}
_PROFILE = {**_RDP, "quantity": "dp.profile", "inputs": {"mechanism": "gaussian", "mu": "1", "eps": "1"}}
_COMPOSE = {**_RDP, "quantity": "composition.eps", "inputs": {"mechs": ["1,0"], "k": 10, "delta": "1e-5"}}


@pytest.mark.parametrize("rec, field, words", [
    # names: the producer's names, with the closest one (ranges.INPUT_NAMES)
    ({**_RDP, "inputs": {**_RDP["inputs"], "mechanism": "gausian"}}, "inputs.mechanism",
     ["did you mean gaussian?", "allowed: gaussian, laplace, pure, rr, subsampled-gaussian", "rdp epsilon --mechanism"]),
    ({**_RDP, "inputs": {**_RDP["inputs"], "conversion": "clasic"}}, "inputs.conversion",
     ["did you mean classic?", "allowed: classic, balle, optimal"]),
    ({**_PROFILE, "inputs": {**_PROFILE["inputs"], "mechanism": "subsampled-gaussian"}}, "inputs.mechanism",
     ["allowed: approx, expr, gaussian", "dp profile --mechanism"]),
    # counts and digits: the CLI options' declared ranges (ranges.INPUT_RANGES from vocabulary.py)
    ({**_RDP, "inputs": {**_RDP["inputs"], "compositions": "0"}}, "inputs.compositions",
     ["allowed an integer in [1, 1000000000000]", "rdp epsilon --steps"]),
    ({**_RDP, "inputs": {**_RDP["inputs"], "digits": 31}}, "inputs.digits", ["[1, 30]", "rdp epsilon --digits"]),
    ({**_GAIN, "inputs": {**_GAIN["inputs"], "digits": 299}}, "inputs.digits", ["[1, 298]"]),
    # abc_gain's compositions: rdp epsilon's cap (the quantity itself refused past 10^9 when it ran)
    ({**_GAIN, "inputs": {**_GAIN["inputs"], "compositions": "1000000000001"}}, "inputs.compositions",
     ["1000000000000"]),
    ({**_COMPOSE, "inputs": {**_COMPOSE["inputs"], "k": 0}}, "inputs.k", ["compose --steps"]),
    ({**_COMPOSE, "inputs": {**_COMPOSE["inputs"], "digits": 301}}, "inputs.digits", ["[1, 300]"]),
])
def test_a_claim_name_count_or_digits_outside_the_tables_is_refused_when_read(tmp_path, capsys, rec, field, words):
    """Issue 22: a misspelled mechanism or conversion, compositions 0 and digits past a kind's range
    were found only when the claim ran (a row 'invalid' named by claim id, after the claims before it
    had been computed); now the reader refuses the file, naming the file, the record, the path and
    the allowed values from the range tables verify applies to a certificate of the same kind."""
    bad = {**rec, "id": "bad"}
    path = _write(tmp_path, dict(GOOD, id="ok"), bad)
    with pytest.raises(InvalidRecord) as e:
        load_claims([path])
    assert e.value.field == field and "record 2 (line 3)" in str(e.value), str(e.value)
    assert all(w in str(e.value) for w in words), str(e.value)
    assert main(["reproduce", "--claims", str(tmp_path), "--out", str(tmp_path / "out")]) == 2
    out, err = capsys.readouterr()
    assert str(path) in err and field in err and "claims:" not in out, (out, err)  # nothing ran
    assert not (tmp_path / "out").exists()


def test_a_json_float_is_quoted_as_the_file_writes_it(tmp_path):
    """A JSON number where a number text is required was quoted in Python's spelling of the double
    (1e-05 where the record says 1e-5); the reader keeps the literal (numtext.JsonFloat) for messages
    only: the value is the same double."""
    from dpverify.numtext import JsonFloat, json_float

    text = json.dumps(GOOD).replace('"eps": "100"', '"eps": 1e-5')
    p = tmp_path / "c.jsonl"
    p.write_text(text + "\n")
    with pytest.raises(InvalidRecord) as e:
        load_claims([p])
    assert "1e-5 is not a string" in str(e.value) and "1e-05" not in str(e.value), str(e.value)
    for lit in ("1e-5", "0.10", "2E+3", "-0.0"):
        x = json_float(lit)
        assert isinstance(x, JsonFloat) and x == float(lit) and repr(x) == lit and str(x) == repr(float(lit))
        assert json.dumps(x) == json.dumps(float(lit))
        import pickle

        assert repr(pickle.loads(pickle.dumps(x))) == lit


def test_a_certificate_float_is_quoted_as_the_file_writes_it(tmp_path):
    """verify's reader (parse_json) shares json_float: a certificate's delta written 1e-5 (a JSON
    number, refused as not a string) is quoted so, not as 1e-05."""
    from dpverify.recheck.verify import verify_file

    c = json.loads((CERTS / "abc-eq23-sigma20-t1000.json").read_text())
    c["inputs"]["delta"] = 1e-5
    p = tmp_path / "c.json"
    p.write_text(json.dumps(c).replace("1e-05", "1e-5"))
    code, msg = verify_file(p)
    assert code == 2 and "1e-5" in msg and "1e-05" not in msg, msg


def test_a_number_text_with_surrounding_spaces_is_read_as_the_cli_reads_it(tmp_path, capsys):
    """" 1e-5 " in a claim is accepted, and that is right: the one number grammar (numtext
    .read_exact_text) strips surrounding whitespace for every reader, the CLI's too (rdp epsilon
    --delta " 1e-5 " is 1e-5), and the certificate records the schema's spelling, so the claim
    and its certificate state the same exact number as "1e-5" (issue 22 asked; the CLI refuses no
    such text)."""
    from dpverify.certificate.build import claim_certificate
    from dpverify.recheck.verify import verify_certificate
    from dpverify.theorems import check

    spaced = {**_RDP, "id": "spaced", "inputs": {**_RDP["inputs"], "delta": " 1e-5 "}}
    plain = {**_RDP, "id": "plain"}
    (a,) = load_claims([_write(tmp_path, spaced)])
    (b,) = load_claims([_write(tmp_path, plain)])
    certs = [claim_certificate(c, *check(c)) for c in (a, b)]
    assert certs[0]["inputs"] == certs[1]["inputs"] and certs[0]["inputs"]["delta"] == "1e-5"
    # (result.quantity restates the text as given, "epsilon(delta= 1e-5 )", on the CLI's certificates
    # too: the writers' prose, left as found; verify reads it as the same exact value)
    assert certs[0]["result"]["enclosure"] == certs[1]["result"]["enclosure"]
    assert "confirmed" in verify_certificate(certs[0])
    argv = ["rdp", "epsilon", "--mechanism", "gaussian", "--noise-multiplier", "20", "--steps", "1000",
            "--digits", "4", "--delta"]
    assert main([*argv, " 1e-5 "]) == 0 and main([*argv, "1e-5"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == out[1], out
