"""Every certificate kind rejects a false number (or verdict) even when the
forger recomputes the digest. Sources: every committed claim certificate, plus
one CLI certificate for each quantity that no claim uses; the test fails if a
registered re-checker is left without a forged case."""

import copy
import json
from pathlib import Path

import pytest

from dpverify.certificate import compute_digest, verify_certificate
from dpverify.recheck.verify import RECHECKERS, _load_recheckers
from dpverify.cli import main
from dpverify.errors import CertificateRejected

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = sorted((ROOT / "certificates").glob("*.json"))

CLI = {
    "gdp.delta": ["gdp", "delta", "--mu", "2", "--eps", "1"],
    "gdp.mu": ["gdp", "mu", "--eps", "1", "--delta", "1e-3"],
    "gdp.certify": ["gdp", "certify", "--mechanism", "pure", "--eps0", "1", "--eps-h", "5", "--margin", "1e-3"],
    "dp.profile": ["dp", "profile", "--mechanism", "laplace", "--scale", "1", "--eps", "0.5"],
    "dp.implies": ["dp", "implies", "--from", "1,0.1", "--to", "0.5,0.5"],
    "dp.rr64": ["check", "rr64", "--eps0", "1", "--delta0", "0.1", "--eps", "0.5"],
    "composition.delta": ["compose", "--mech", "0.1,1e-8", "--steps", "10", "--eps", "0.5"],
    "composition.eps": ["compose", "--mech", "0.1,1e-8", "--steps", "10", "--delta", "1e-6"],
    "pld.epsilon": ["audit", "dpsgd", "--noise-multiplier", "2", "--sampling-rate", "0.1", "--steps", "10", "--delta", "1e-5"],
    "pld.delta": ["audit", "dpsgd", "--noise-multiplier", "2", "--sampling-rate", "0.1", "--steps", "10", "--eps", "1"],
    "pld.claim": ["audit", "dpsgd", "--noise-multiplier", "2", "--sampling-rate", "0.1", "--steps", "10", "--delta", "1e-5", "--claimed-eps", "2"],
    "rdp.divergence": ["rdp", "divergence", "--mechanism", "gaussian", "--noise-multiplier", "2", "--alpha", "3"],
    "rdp.epsilon": ["rdp", "epsilon", "--mechanism", "gaussian", "--noise-multiplier", "2", "--steps", "10", "--delta", "1e-5"],
    "rdp.to_dp_eps": ["rdp", "to-dp", "--alpha", "2", "--rdp", "0.1", "--delta", "0.3"],
    "rdp.to_dp_delta": ["rdp", "to-dp", "--alpha", "2", "--rdp", "0.1", "--eps", "0.5"],
}
# covered by dedicated tests with their own generators
ELSEWHERE = {
    "gdp.eps": "tests/gdp/test_mu_gdp.py::test_eps_for_delta_tamper",
    "gdp.thm4.5": "tests/certificate/test_verify.py::test_thm45_verdict_tamper",
    "finite.identity": "tests/theorems/test_identities.py::test_identity_certificates_verify_and_reject_forgeries",
    "oracle.rows": "tests/oracle/test_oracle_cli.py::test_certificate_verifies_and_tamper_is_rejected",
    "gdp.clip_rectify": "tests/gdp/test_gdpt.py::test_clip_and_rectify_certificate",
    "events.epsilon": "tests/events/test_cli_events.py::test_tree_certificates_verify_and_forgeries_are_refused",
    "events.delta": "tests/events/test_cli_events.py::test_tree_certificates_verify_and_forgeries_are_refused",
    "events.claim": "tests/events/test_cli_events.py::test_tree_certificates_verify_and_forgeries_are_refused",
    "calibrate.bracket": "tests/calibrate/test_calibrate.py::test_certificate_verifies_and_forgeries_are_rejected",
    "shuffle.epsilon": "tests/sampling/test_shuffle.py::test_forged_ends_are_not_accepted",
    "shuffle.delta": "tests/sampling/test_shuffle.py::test_forged_ends_are_not_accepted",
    "shuffle.claim": "tests/sampling/test_shuffle.py::test_forged_ends_are_not_accepted",
    "bins.epsilon": "tests/sampling/test_balls.py::test_forged_ends_are_not_accepted",
    "bins.delta": "tests/sampling/test_balls.py::test_forged_ends_are_not_accepted",
    "bins.claim": "tests/sampling/test_balls.py::test_forged_ends_are_not_accepted",
    "replace.epsilon": "tests/sampling/test_replace.py::test_bracket_verifies_and_is_ordered",
    "replace.claim": "tests/sampling/test_replace.py::test_claim_verdicts",
    "replace.delta": "tests/sampling/test_replace_events.py::test_forged_ends_are_refused",
}


def _forge(cert):
    """Move every finite enclosure endpoint far off (x -> 3x + 1) or, for a
    verdict-only certificate, flip the verdict; then reseal the digest."""
    bad = copy.deepcopy(cert)
    enc = bad["result"].get("enclosure")
    moved = False
    if isinstance(enc, dict) and enc.get("hi") == "inf" and enc.get("lo") != "inf":
        # [x, inf] (e.g. "not GDP": the optimal mu is +inf): claim a finite value
        enc.update(lo="1", hi="2")
        moved = True
    elif isinstance(enc, dict):
        for k in ("lo", "hi"):
            if enc[k] not in ("inf", "-inf"):
                enc[k] = repr(3 * float(enc[k]) + 1) if abs(float(enc[k])) < 1e300 else enc[k]
                moved = True
    if not moved:
        v = bad["result"].get("verdict")
        bad["result"]["verdict"] = {"holds": "fails", "fails": "holds"}.get(v, "holds")
    bad["digest"] = compute_digest(bad)
    return bad


def _kind(cert):
    return cert["claim"]["quantity"]


def test_every_kind_has_a_forgery_case():
    _load_recheckers()
    claim_kinds = {_kind(json.loads(p.read_text())) for p in COMMITTED}
    missing = set(RECHECKERS) - claim_kinds - set(CLI) - set(ELSEWHERE)
    assert not missing, f"no tamper case for {sorted(missing)}"


@pytest.mark.parametrize("path", COMMITTED, ids=lambda p: p.stem)
def test_forged_claim_certificate_is_rejected(path):
    cert = json.loads(path.read_text())
    with pytest.raises(CertificateRejected):
        verify_certificate(_forge(cert))


@pytest.mark.parametrize("quantity", sorted(CLI))
def test_forged_cli_certificate_is_rejected(quantity, capsys):
    code = main([*CLI[quantity], "--json"])
    cert = json.loads(capsys.readouterr().out)
    assert code in (0, 1) and cert["claim"]["quantity"] == quantity
    assert "confirmed" in verify_certificate(cert)
    with pytest.raises(CertificateRejected):
        verify_certificate(_forge(cert))
