"""The words of a certificate are pinned (issue 22; adv34 F2 and M3).

Each forgery starts from a genuine certificate (a frozen format-2 fixture or a committed
registry claim), rewrites prose or a label and recomputes the digest, so only the check of the
words can catch it. Ground truth: the statement is the kind's template filled from the
certificate's own inputs (dpverify/certificate/prose.py), a registry claim's words are its
record in dpverify/theorems/claims, and gdp.certify's tail label is the tail model of the
mechanism (gdp/tail.py tail_model, read off the inputs).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from dpverify.certificate.format import FORMAT_1
from dpverify.certificate.prose import UNBOUND, check_statement, registry_record, statement
from dpverify.errors import CertificateRejected, InternalError
from dpverify.recheck.verify import verify_certificate

from ..certs import outcome, reseal

ROOT = Path(__file__).resolve().parents[2]
F1 = ROOT / "tests" / "certificate" / "format1"
F2 = ROOT / "tests" / "certificate" / "format2"
CLAIMS = ROOT / "certificates"


def load(path: Path) -> dict:
    return json.loads(path.read_text())


def forged(cert: dict, edit) -> dict:
    c = copy.deepcopy(cert)
    edit(c)
    return reseal(c)


def _set(path: str, value):
    def edit(c: dict) -> None:
        *head, last = path.split(".")
        cur = c
        for p in head:
            cur = cur[p]
        cur[last] = value
    return edit


# --------------------------------------------------------------------------- statements of product kinds

#: (fixture, a false statement a forger would like to quote). Each refusal happens before
#: the second route runs, so the cases are cheap.
FALSE_STATEMENTS = [
    # adv34 F2: re-proved epsilon 0.798, statement rewritten to a far smaller guarantee
    ("pld-epsilon", "the composed mechanism is (0.01, 1e-9)-DP"),
    # the template with another relation than inputs.neighboring (add-remove)
    ("pld-epsilon", "epsilon(delta) of the composed (Poisson-subsampled) mechanisms under the remove relation "
                    "lies in [lo, hi]"),
    # a number of the template changed: delta = 1e-5 recorded, 1e-6 stated
    ("bins-epsilon", "epsilon(delta=1e-6) of one epoch of DP-SGD with balls-in-bins batches (add-remove) lies in "
                     "[lo, hi]"),
    ("shuffle-claim", "DP-SGD with shuffle batches is (0.5, delta)-DP under add-remove: certified epsilon(delta) "
                      "<= claimed_eps"),
    ("calibrate-bracket", "(0.1, 0.00001)-DP holds at noise_multiplier = result.ends.safe.value and fails at "
                          "result.ends.unsafe.value"),
    ("gdp-certify-icea", "the mechanism is mu-GDP exactly for mu >= mu*, and the optimal mu* lies in [lo, hi]"),
    ("replace-claim", "Poisson-sampled DP-SGD is (claimed_eps, delta)-DP under add-remove: certified "
                      "epsilon(delta) <= claimed_eps"),
    ("rdp-epsilon", "inf over real alpha > 1 of the optimal conversion of the RDP curve of gaussian composed 10 "
                    "times, at delta, lies in [lo, hi]"),
]


@pytest.mark.parametrize("name,text", FALSE_STATEMENTS, ids=lambda v: v if len(v) < 30 else None)
def test_a_rewritten_statement_is_refused(name, text):
    cert = load(F2 / f"{name}.json")
    assert cert["claim"]["statement"] != text
    bad = forged(cert, _set("claim.statement", text))
    with pytest.raises(CertificateRejected, match="claim.statement"):
        verify_certificate(bad)
    assert outcome(bad) == 1


def test_the_same_number_spelled_otherwise_is_the_same_statement():
    # bins-epsilon states "epsilon(delta=1e-5)" (the number as the user typed it, as the
    # released writer did); 0.00001 and 1/100000 are the same exact value (ground truth: the
    # rationals are equal), so the statement says the same thing and is not refused here
    cert = load(F2 / "bins-epsilon.json")
    assert "epsilon(delta=1e-5)" in cert["claim"]["statement"]
    for spelling in ("0.00001", "1/100000"):
        c = copy.deepcopy(cert)
        c["claim"]["statement"] = c["claim"]["statement"].replace("1e-5", spelling)
        assert check_statement(c["format"], c["claim"], c["inputs"], c["result"]) == []


def test_a_statement_of_an_end_that_is_not_recorded_is_refused():
    # the calibrate template names exactly the recorded ends: with "unsafe" deleted from the
    # statement but kept in result.ends the words say less than the certificate holds, and the
    # writer never writes that; refused as not the template
    cert = load(F2 / "calibrate-bracket.json")
    bad = forged(cert, _set("claim.statement", cert["claim"]["statement"].split(" and fails at")[0]))
    assert outcome(bad) == 1


def test_legacy_words_are_accepted_only_in_their_own_format():
    # format 1 wrote "result.implies says whether ..." (its verdict field's name); a format-2
    # certificate stating the format-1 words is refused
    f1 = load(F1 / "cli-dp-implies-fails.json")
    assert "result.implies" in f1["claim"]["statement"]
    assert check_statement(f1["format"], f1["claim"], f1["inputs"], f1["result"]) == []
    f2 = load(F2 / "dp-implies-fails.json")
    bad = forged(f2, _set("claim.statement", f1["claim"]["statement"]))
    with pytest.raises(CertificateRejected, match="claim.statement"):
        check_statement(bad["format"], bad["claim"], bad["inputs"], bad["result"])


@pytest.mark.parametrize("folder", [F1, F2, CLAIMS], ids=["format1", "format2", "certificates"])
def test_every_genuine_certificate_states_its_template(folder):
    # the frozen fixtures and the committed claims: their words pass the check unchanged
    # (the full re-verification of these sets is the CI's `verify` run)
    for path in sorted(folder.glob("*.json")):
        c = load(path)
        unbound = check_statement(c["format"], c["claim"], c["inputs"], c["result"])
        if unbound:
            assert c["format"] == FORMAT_1 and registry_record(c["claim"]["id"]) is None, path.name


def test_the_writer_words_the_statement_and_refuses_other_words():
    from dpverify.certificate import make_certificate

    inputs = {"mu": "1", "eps": "1", "digits": 15}
    result = {"quantity": "delta_mu(eps=1)", "enclosure": {"lo": "0.12", "hi": "0.13"}}
    cert = make_certificate(claim={"quantity": "gdp.delta"}, inputs=inputs, result=result, precision_bits=64,
                            algorithm="a")
    assert cert["claim"]["statement"] == statement("gdp.delta", inputs, result) == "delta_mu(eps) lies in [lo, hi]"
    assert list(cert["claim"]) == ["quantity", "statement", "source"]
    with pytest.raises(InternalError, match="statement"):
        make_certificate(claim={"quantity": "gdp.delta", "statement": "delta_mu(eps) = 0", "source": "s"},
                         inputs=inputs, result=result, precision_bits=64, algorithm="a")


# --------------------------------------------------------------------------- registry claims


def test_a_registry_claim_keeps_its_records_words():
    cert = load(CLAIMS / "gdpt-sec4.2-delta6-100.json")
    rec = registry_record(cert["claim"]["id"])
    assert rec is not None and rec["statement"] == cert["claim"]["statement"]
    for field, text in (("statement", "with mu = 6 and eps_h = 100 the gap is 0"),
                        ("source", "GDPT Thm 9.9"),
                        ("domain", "mu = 6, eps = 1")):
        bad = forged(cert, _set(f"claim.{field}", text))
        with pytest.raises(CertificateRejected, match=f"claim.{field}"):
            verify_certificate(bad)
    # the same words over other inputs would quote the record about another point
    bad = forged(cert, _set("inputs.eps", "50"))
    with pytest.raises(CertificateRejected, match="inputs differ from the shipped claim"):
        verify_certificate(bad)


def test_a_claim_of_another_claim_file_is_named_as_unbound():
    # an id the package does not ship: its words are that file's; the line says they are not
    # part of what is confirmed (the relation is, and is decided as before)
    cert = load(F1 / "gdp-issue-float-underflow.json")
    assert registry_record(cert["claim"]["id"]) is None
    line = verify_certificate(cert)
    assert "confirmed" in line and UNBOUND in line


# --------------------------------------------------------------------------- labels


@pytest.mark.parametrize("name,label", [
    ("gdp-certify-gaussian", "constant"),  # adv34 M3: a Gaussian tail relabelled
    ("gdp-certify-laplace", "gaussian"),   # the Laplace profile is 0 past D/b: "zero"
    ("gdp-certify-icea", "zero"),          # not GDP by its head (f = 1 at the argmax): "head"
])
def test_a_relabelled_tail_is_refused(name, label):
    cert = load(F2 / f"{name}.json")
    assert cert["result"]["tail"]["kind"] != label
    bad = forged(cert, _set("result.tail.kind", label))
    with pytest.raises(CertificateRejected, match="tail.kind"):
        verify_certificate(bad)


def _swap(text: str, old: str, new: str):
    def edit(c: dict) -> None:
        th = c["result"]["theorems"]
        hits = [i for i, t in enumerate(th) if old in t]
        assert hits, (old, th)
        th[hits[0]] = th[hits[0]].replace(old, new)
    return edit


@pytest.mark.parametrize("name,edit", [
    # T = n / B = 600 / 100 = 6 batches per epoch: a list citing another T cites another pair
    ("bins-epsilon", _swap("", "T = 6;", "T = 60;")),
    # add-remove: batch-sum sensitivity C, so mu = 1 sqrt(E)/sigma; 2 is replace-one's
    ("shuffle-epsilon", _swap("", "mu = 1 sqrt(E)/sigma", "mu = 2 sqrt(E)/sigma")),
    # the group-privacy upper end cited as if it were tight
    ("replace-claim", _swap("", "(group privacy through D minus x;", "(tight;")),
    ("replace-epsilon", lambda c: c["result"]["theorems"].pop()),
    ("bins-claim", lambda c: c["result"]["theorems"].append("AFA Thm 99: the bracket is exact")),
], ids=["bins-T", "shuffle-mu", "replace-tight", "replace-dropped", "bins-added"])
def test_a_rewritten_theorem_list_is_refused(name, edit):
    cert = load(F2 / f"{name}.json")
    bad = forged(cert, edit)
    assert bad["result"]["theorems"] != cert["result"]["theorems"]
    with pytest.raises(CertificateRejected, match="result.theorems"):
        verify_certificate(bad)


def test_the_writers_theorem_lists_are_the_rebuilt_ones():
    # the writer's lists come from the same functions verify rebuilds from the inputs (one
    # copy); checked here against the fixtures' first-entry numbers: T = 600 / 100 = 6 and
    # T = ceil(1000 / 100) = 10, E = 2 epochs for the 4-record, batch-1 bins fixture
    from dpverify.certificate.prose import bins_theorems, shuffle_theorems, theorems

    assert theorems("bins.epsilon", load(F2 / "bins-epsilon.json")["inputs"]) == [bins_theorems(6, 1)]
    assert "E = 2 epochs" in theorems("bins.epsilon", load(F2 / "bins-epsilon-epochs.json")["inputs"])[0][1]
    assert theorems("shuffle.delta", load(F2 / "shuffle-delta.json")["inputs"])[0] == shuffle_theorems(
        "replace-one", True, 10)


@pytest.mark.parametrize("name,text", [
    ("pld-epsilon", "NIST SP 800-226, certified"),
    # the classic conversion certificate citing Balle et al.'s conversion
    ("rdp-epsilon", "Balle et al. 2020 Thm 21; Canonne, Kamath, Steinke 2020 Prop 12"),
    # one epoch citing the E-epoch composition
    ("bins-epsilon", "adaptive composition (AFA Thm 10) of E balls-and-bins epochs"),
], ids=["pld", "rdp-conversion", "bins-epochs"])
def test_a_rewritten_source_is_refused(name, text):
    cert = load(F2 / f"{name}.json")
    bad = forged(cert, _set("claim.source", text))
    with pytest.raises(CertificateRejected, match="claim.source"):
        verify_certificate(bad)


def test_the_writer_cites_the_kinds_source_and_refuses_another():
    from dpverify.certificate import make_certificate
    from dpverify.certificate.prose import source

    inputs = {"mu": "1", "eps": "1", "digits": 15}
    result = {"quantity": "delta_mu(eps=1)", "enclosure": {"lo": "0.12", "hi": "0.13"}}
    cert = make_certificate(claim={"quantity": "gdp.delta"}, inputs=inputs, result=result, precision_bits=64,
                            algorithm="a")
    assert cert["claim"]["source"] == source("gdp.delta", inputs) == "GDPT eq. (2), Thm 3.2"
    with pytest.raises(InternalError, match="source"):
        make_certificate(claim={"quantity": "gdp.delta", "source": "GDPT eq. (2)"}, inputs=inputs, result=result,
                         precision_bits=64, algorithm="a")


@pytest.mark.parametrize("field", ["note", "domain", "printed"])
def test_a_product_certificate_carries_no_words_of_its_own(field):
    # no writer puts a note, domain or printed number beside a product statement: one added
    # ("note": "(0.01, 1e-9)-DP") would be quoted as part of the claim, so it is refused (exit 2)
    from dpverify.errors import MalformedCertificate

    bad = forged(load(F2 / "pld-epsilon.json"), _set(f"claim.{field}", "(0.01, 1e-9)-DP"))
    with pytest.raises(MalformedCertificate, match=f"claim.{field}"):
        verify_certificate(bad)
    assert outcome(bad) == 2
