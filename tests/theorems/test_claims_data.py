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
    from dpverify.certificate.writer import _typed_inputs

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
        assert cert["inputs"] == _typed_inputs(dict(c.inputs)), c.id


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
        ({"relation": {"kind": "lt", "bound": "abc"}}, "relation", "not a number"),
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
    undecided = {**base, "id": "deep", "inputs": {**base["inputs"], "digits": 300}}
    invalid = {**base, "id": "gain", "quantity": "rdp.abc_gain", "printed": "0.75",
               "relation": {"kind": "rounds_to", "printed": "0.75"},
               "inputs": {"noise_multiplier": "20", "compositions": "1000", "delta": "1e-5", "digits": 300}}
    good = {**base, "id": "good", "inputs": {**base["inputs"], "digits": 12}}
    (tmp_path / "claims").mkdir()
    _write(tmp_path / "claims", undecided, invalid, good)
    assert main(["reproduce", "--claims", str(tmp_path / "claims"), "--out", str(tmp_path / "out")]) == 2
    out, err = capsys.readouterr()
    assert "3 claims: 1 hold, 0 fail, 1 undecided, 1 invalid" in out
    assert "deep: undecided" in err and "gain: inputs.digits: digits=300 must be an integer in [1, 298]" in err
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
