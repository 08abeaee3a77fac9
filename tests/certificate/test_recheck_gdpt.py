"""Independent re-checks of the GDPT quantities: genuine ones confirm, forged ones are rejected."""

import copy
import json

import pytest

from dpverify.certificate import claim_certificate, compute_digest, verify_certificate
from dpverify.cli import main
from dpverify.errors import CertificateRejected
from dpverify.theorems import check, claims

IDS = ["gdpt-sec3-eps3", "gdpt-sec4-limit-sgd", "gdpt-sec5.2-sigma", "gdpt-thm5.1-eps1", "gdpt-sec3-delta2"]


def _forge(cert, lo, hi):
    forged = copy.deepcopy(cert)
    forged["result"]["enclosure"] = {"lo": lo, "hi": hi}
    forged["digest"] = compute_digest(forged)
    return forged


@pytest.mark.parametrize("claim_id", IDS)
def test_claim_certificates_confirm_and_forgeries_fail(claim_id):
    claim = next(c for c in claims() if c.id == claim_id)
    enc, verdict = check(claim)
    cert = claim_certificate(claim, enc, verdict)
    assert "confirmed" in verify_certificate(cert)
    with pytest.raises(CertificateRejected):
        verify_certificate(_forge(cert, "1.5", "1.5000000001"))


def test_paper_findings_fail():
    by_id = {c.id: c for c in claims()}
    for cid in ("gdpt-sec3-eps2", "gdpt-sec3-eps3"):
        _, verdict = check(by_id[cid])
        assert verdict.fails


@pytest.mark.parametrize(
    "argv",
    [["--mechanism", "laplace", "--scale", "0.5", "--eps", "0.3"],
     ["--mechanism", "sgd-example", "--refined", "--eps", "0.5"],
     ["--mechanism", "icea-example", "--refined", "--eps", "0.5"],
     ["--mechanism", "subsampled", "--sampling-rate", "0.1", "--eps0", "1", "--delta0", "0.01", "--eps", "0.05"],
     ["--mechanism", "expr", "--profile", "0.5*exp(-eps**2)", "--eps", "1"]],
)
def test_profile_certificates_confirm_and_forgeries_fail(argv, capsys):
    assert main(["dp", "profile", *argv, "--json"]) == 0
    cert = json.loads(capsys.readouterr().out)
    assert "confirmed" in verify_certificate(cert)
    with pytest.raises(CertificateRejected):
        verify_certificate(_forge(cert, "0.12345", "0.12345000000000001"))
