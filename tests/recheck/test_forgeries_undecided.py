"""A decided verdict relabelled "undecided" (issue 22): the recorded verdict of ``dp.implies``,
``dp.rr64`` and ``gdp.certify`` must be the one the certificate's own confirmed numbers decide.

Before this file each forgery below was accepted (exit 0): ``accept_verdict`` took a recorded
'undecided' as asserting nothing, so a 'fails' (or 'holds') relabelled 'undecided' -- with the
status, the tail status and the statement rewritten to match -- was confirmed. Every forgery
recomputes the digest and rewrites ``claim.statement`` to this release's template for the
relabelled result (prose.statement), so only the verdict rule can refuse it. Each expected answer
follows from the fixture's recorded numbers and its producer's deciding rule, written beside it.
The 0.1.0 certificates that wrote "head only" (their recorded tail status "unknown": 0.1.0 had no
tail model for randomized response or expressions) decide nothing and must stay accepted."""

import copy
import json
from pathlib import Path

import pytest

from dpverify.certificate.format import compute_digest
from dpverify.certificate.prose import statement
from dpverify.recheck.verify import verify_file

F1 = Path(__file__).resolve().parents[1] / "certificate" / "format1"
F2 = Path(__file__).resolve().parents[1] / "certificate" / "format2"


def _verify(tmp_path: Path, cert: dict, **edits) -> tuple[int, str]:
    c = copy.deepcopy(cert)
    r = c["result"]
    for key, value in edits.items():
        if key.startswith("tail_"):
            r["tail"][key[5:]] = value
        else:
            r[key] = value
    if c["claim"]["quantity"] == "gdp.certify":  # its words follow the relabelled status (prose.py's template)
        c["claim"]["statement"] = statement(c["claim"]["quantity"], c["inputs"], r)
    c["digest"] = compute_digest(c)
    p = tmp_path / "f.json"
    p.write_text(json.dumps(c))
    return verify_file(p)


def _load(path: Path) -> dict:
    return json.loads(path.read_text())


HEAD_ONLY = {"verdict": "undecided", "status": "head only"}


@pytest.mark.parametrize("src,edits", [
    # dp.implies: the producer decides delta >= W(eps) exactly (GDPT Thm 3.1, an exponential sum's sign,
    # never undecided for rational inputs). holds: eps = 1 >= eps0 = 0.5, W = delta0 = 0.1 <= delta = 0.1
    (F2 / "dp-implies-holds.json", {"verdict": "undecided"}),
    # fails: W(0.5) in [0.35888, 0.35889] (recorded) > delta = 0.1
    (F2 / "dp-implies-fails.json", {"verdict": "undecided"}),
    (F1 / "cli-dp-implies-fails.json", {"implies": "undecided"}),  # format 1 names the verdict `implies`
    # dp.rr64: sup = GDPT's formula iff delta0 = 1 or eps >= -eps0 (GDPT Cor 3.2), exact: 0.5 >= -1
    (F2 / "dp-rr64.json", {"verdict": "undecided"}),
    # gdp.certify: status = not GDP if head.unbounded or tail.status = not GDP, GDP if tail.status =
    # certified, else head only (gdp/certify.py). Laplace, recorded tail certified:
    (F2 / "gdp-certify-laplace.json", {"verdict": "undecided"}),
    (F2 / "gdp-certify-laplace.json", HEAD_ONLY),
    # ... and the tail relabelled too: its recorded kind "zero" (f = 0 from D/b = 1, exact) with eps_h = 5
    # >= 1 is certified by the producer whatever mu (gdp/tail.py certify_tail)
    (F2 / "gdp-certify-laplace.json", {**HEAD_ONLY, "tail_status": "unknown"}),
    (F1 / "cli-gdp-certify-laplace.json", {"status": "head only", "tail_status": "unknown"}),
    # approx DP with delta0 = 0.1: tail kind "constant", which the producer always calls not GDP
    (F2 / "gdp-certify-approx.json", {**HEAD_ONLY, "tail_status": "unknown"}),
    # ICEA: head.unbounded (f(0) = 1), not GDP whatever the tail
    (F2 / "gdp-certify-icea.json", HEAD_ONLY),
    # Gaussian mu0 = 1: tail kind "gaussian", certified since head.mu_hi_exact = 1 + 7.9e-31 >= mu0
    (F2 / "gdp-certify-gaussian.json", {**HEAD_ONLY, "tail_status": "unknown"}),
], ids=lambda x: x.name if isinstance(x, Path) else ",".join(f"{k}={v}" for k, v in x.items()))
def test_a_decided_verdict_relabelled_undecided_is_refused(tmp_path, src, edits):
    code, msg = _verify(tmp_path, _load(src), **edits)
    assert code == 1, msg
    assert "undecided" in msg or "head only" in msg or "unknown" in msg, msg


@pytest.mark.parametrize("name", [
    # the residual of the rational pmfs is exactly 0: decided in exact rationals, never 'undecided'
    "finite-identity.json",
    # the recorded slope enclosure [0.2440960051131106, 0.2440960051131107] lies inside [0, sqrt(2 pi)/2 =
    # 1.2533141373155...]: the writer (gdp/mu_gdp.py check_thm45) decides on it and wrote 'holds'
    "gdp-thm45.json",
])
def test_an_exactly_decided_check_relabelled_undecided_without_its_reason_is_refused(tmp_path, name):
    """adv39 V1c: with the reason dropped (so the comment check has nothing to read) the relabel
    was confirmed; the verdict itself is bound now."""
    c = _load(F2 / name)
    c["result"].pop("reason")
    code, msg = _verify(tmp_path, c, verdict="undecided")
    assert code == 1, msg
    assert "undecided" in msg, msg


def test_a_rr64_fails_relabelled_undecided_is_refused(tmp_path):
    # eps = -1 < -eps0 = -0.5 and delta0 = 0.1 < 1: GDPT's formula misses (1-delta0)(1-e^(eps+eps0))_+/(1+e^eps0)
    # > 0, so the producer writes "fails" (GDPT Cor 3.2)
    from dpverify.cli import main

    out = tmp_path / "rr.json"
    assert main(["check", "rr64", "--eps0", "0.5", "--delta0", "0.1", "--eps", "-1", "--certificate", str(out)]) == 1
    cert = _load(out)
    assert cert["result"]["verdict"] == "fails"
    assert verify_file(out)[0] == 0
    code, msg = _verify(tmp_path, cert, verdict="undecided")
    assert code == 1, msg


@pytest.mark.parametrize("name", ["v010-gdp-certify-rr-shuffled.json", "v010-gdp-certify-expr-naive.json"])
def test_a_head_only_certificate_whose_recorded_tail_decides_nothing_is_accepted(name):
    # recorded tail kind and status "unknown": the 0.1.0 producer's own numbers decide "head only",
    # although this release's tail model of randomized response (f = 0 past log(p/(1-p))) decides GDP
    code, msg = verify_file(F1 / name)
    assert code == 0, msg


def test_a_head_only_relabelled_gdp_is_refused_when_its_tail_says_unknown(tmp_path):
    # the converse: the verdict must be the one the recorded tail decides, not a stronger one
    # (v010 rr-shuffled records tail status "unknown": head only)
    code, msg = _verify(tmp_path, _load(F1 / "v010-gdp-certify-rr-shuffled.json"), status="GDP")
    assert code == 1, msg


@pytest.mark.parametrize("name", ["calibrate-bracket.json", "calibrate-steps.json", "calibrate-sampling-rate.json",
                                  "calibrate-bins-sigma.json", "calibrate-shuffle-sigma.json"])
def test_a_calibration_bracket_relabelled_undecided_is_refused(tmp_path, name):
    """adv41 V1: a bracket is written only with both ends decided (safe holds, unsafe fails, each
    re-proved against the exact delta), and its writers record 'holds' only (cli/calibrate.py); a
    relabelled 'undecided' contradicted the certificate's own statement and was confirmed."""
    code, msg = _verify(tmp_path, _load(F2 / name), verdict="undecided")
    assert code == 1, msg
    assert "undecided" in msg, msg
