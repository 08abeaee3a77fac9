"""RDP claims: verdicts and independent re-verification of their certificates."""

import pytest

from dpverify.certificate import claim_certificate, verify_certificate
from dpverify.theorems import check, claims

EXPECTED = {
    "abc-eq23-sigma20-t1000": "holds",
    "abc-fig2-gain-0.75": "fails",  # certified gap 0.7588 at T = 1000
    "afa-fig1-gaussian-0.277-0.3": "holds",
    "afa-fig1-rr-needs-0.471": "holds",
    "abc-thm4-eq17-alpha-delta-ge-1": "holds",
    "abc-remark1-zero-eps": "holds",
}


@pytest.mark.parametrize("cid", sorted(EXPECTED))
def test_claim_verdicts_and_certificates(cid):
    claim = {c.id: c for c in claims()}[cid]
    enc, verdict = check(claim)
    assert verdict.outcome.value == EXPECTED[cid]
    assert "confirmed" in verify_certificate(claim_certificate(claim, enc, verdict))


@pytest.mark.slow
def test_extra_iterations_claim():
    claim = {c.id: c for c in claims()}["abc-fig2-100-more-iterations"]
    enc, verdict = check(claim)
    assert verdict.holds and enc.contains(102)
