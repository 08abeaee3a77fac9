"""A (claimed_eps, delta) claim's reason names the claim in the numbers the user gave: "delta(1.23)",
"<= 0.00001", not the Fraction texts "123/100", "1/100000" (pld.refine.claim_verdict, the one writer
of audit dpsgd --claimed-eps, --events claims and the events zCDP branch). The reason is read back by
verify against inputs.claimed_eps and inputs.delta (certificate.comments._check_reason), so the
certificates must still verify; the numbers are checked against exact rationals."""

from __future__ import annotations

import re
from fractions import Fraction

import pytest

from dpverify.certificate.events_cert import claim_certificate
from dpverify.certificate.prose import _value
from dpverify.events import api
from dpverify.pld import dpsgd as S
from dpverify.recheck.verify import verify_certificate

_FORM = re.compile(r"certified delta\((?P<eps>[^)]*)\) (?:<=|>=) \S+ (?:<=|>) (?P<delta>\S+)")

ZC = {"neighboring": "add-remove", "events": [
    {"type": "self_composed", "count": 10, "event": {"type": "zcdp", "rho": "0.01", "xi": "0"}},
    {"type": "gaussian", "noise_multiplier": "3"}]}
GAUSS = {"neighboring": "add-remove", "events": [
    {"type": "self_composed", "count": 10, "event": {"type": "gaussian", "noise_multiplier": "30"}}]}


def _names(reason: str, eps: str, delta: str) -> None:
    m = _FORM.fullmatch(reason)
    assert m is not None, reason
    assert "/" not in m.group("eps") + m.group("delta"), reason  # 1.23 and 1e-5 have decimals
    assert _value(m.group("eps")) == Fraction(eps) and _value(m.group("delta")) == Fraction(delta)


@pytest.mark.parametrize("claimed, verdict", [("1.23", "holds"), ("0.25", "fails")])
def test_dpsgd_claim_reason_prints_decimals(claimed, verdict):
    v, _ = S.check_claim([S.GaussianSteps.of(30, 1, 10)], claimed, "1e-5")
    assert v.outcome.value == verdict
    _names(v.reason, claimed, "1e-5")
    assert v.reason.startswith(f"certified delta({claimed}) ")


@pytest.mark.parametrize("tree, claimed, verdict", [(GAUSS, "1.23", "holds"), (GAUSS, "0.25", "fails"),
                                                    (ZC, "3.5", "holds")])
def test_events_claim_reason_prints_decimals_and_verifies(tree, claimed, verdict):
    v, ans = api.check_claim(tree, claimed, "1e-5")
    assert v.outcome.value == verdict
    _names(v.reason, claimed, "1e-5")
    cert = claim_certificate(api.as_event(tree)[0], v, ans, "add-remove", claimed_eps=claimed, delta="1e-5")
    assert "confirmed" in verify_certificate(cert)


def test_a_claim_without_a_terminating_decimal_keeps_its_fraction():
    v, _ = S.check_claim([S.GaussianSteps.of(1, 1, 1)], "1/3", "1/3")
    m = _FORM.fullmatch(v.reason)
    assert m is not None and m.group("eps") == "1/3" and m.group("delta") == "1/3"
