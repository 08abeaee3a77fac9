"""Certificates: digest, independent re-verification, tamper rejection."""

import copy
import json

import pytest

from dpverify.certificate import verify_certificate, verify_file, write
from dpverify.cli import main
from dpverify.errors import CertificateRejected, CouldNotReprove, MalformedCertificate

from ..certs import reseal


def _cert(capsys, *argv):
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.fixture
def delta_cert(capsys):
    return _cert(capsys, "gdp", "delta", "--mu", "6", "--eps", "100")


@pytest.fixture
def mu_cert(capsys):
    return _cert(capsys, "gdp", "mu", "--eps", "1", "--delta", "1e-5")


def test_digest_is_sha256_of_canonical_json(delta_cert):
    import hashlib

    body = {k: v for k, v in delta_cert.items() if k != "digest"}
    raw = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    assert delta_cert["digest"] == hashlib.sha256(raw).hexdigest()


def test_genuine_certificates_verify(delta_cert, mu_cert):
    assert "confirmed" in verify_certificate(delta_cert)
    assert "confirmed" in verify_certificate(mu_cert)


@pytest.mark.parametrize("which", ["lo", "hi"])
def test_false_delta_with_consistent_digest_is_rejected(delta_cert, which):
    forged = copy.deepcopy(delta_cert)
    # move the enclosure off the truth (2.434e-43) while keeping its width
    forged["result"]["enclosure"] = {"lo": "2.5e-43", "hi": "2.5000000000000001e-43"}
    with pytest.raises(CertificateRejected, match="disjoint"):
        verify_certificate(reseal(forged))


def test_false_mu_with_consistent_digest_is_rejected(mu_cert):
    forged = copy.deepcopy(mu_cert)
    forged["result"]["enclosure"] = {"lo": "0.2680511232112943", "hi": "0.2680511232112944"}
    with pytest.raises(CertificateRejected, match="root is"):
        verify_certificate(reseal(forged))


def test_changed_input_is_rejected(delta_cert):
    forged = copy.deepcopy(delta_cert)
    forged["inputs"]["eps"] = "101"
    with pytest.raises(CertificateRejected):
        verify_certificate(reseal(forged))


def test_widened_enclosure_breaks_its_accuracy_promise(delta_cert):
    forged = copy.deepcopy(delta_cert)
    forged["result"]["enclosure"] = {"lo": "1e-43", "hi": "1e-42"}
    with pytest.raises(CertificateRejected, match="wider"):
        verify_certificate(reseal(forged))


def test_stale_digest_is_rejected(delta_cert):
    forged = copy.deepcopy(delta_cert)
    forged["claim"]["source"] = "somewhere else"
    with pytest.raises(CertificateRejected, match="digest"):
        verify_certificate(forged)


@pytest.mark.parametrize(
    "mutate",
    [
        lambda c: c.pop("result"),
        lambda c: c.update(format="other/1"),
        lambda c: c["claim"].update(quantity="no.such.quantity"),
        lambda c: c["result"]["enclosure"].update(lo="abc"),
        lambda c: c["inputs"].update(mu="pi"),
    ],
)
def test_malformed(delta_cert, mutate):
    bad = copy.deepcopy(delta_cert)
    mutate(bad)
    with pytest.raises((MalformedCertificate, CertificateRejected)) as info:
        verify_certificate(reseal(bad))
    assert info.type is MalformedCertificate


def test_verify_file_exit_codes(tmp_path, delta_cert):
    good = write(delta_cert, tmp_path / "good.json")
    bad = copy.deepcopy(delta_cert)
    bad["result"]["enclosure"]["lo"] = "2.5e-43"
    bad["result"]["enclosure"]["hi"] = "2.6e-43"
    forged = write(reseal(bad), tmp_path / "forged.json")
    junk = tmp_path / "junk.json"
    junk.write_text("{not json")
    assert verify_file(good)[0] == 0
    assert verify_file(forged)[0] == 1
    assert verify_file(junk)[0] == 2
    assert verify_file(tmp_path / "missing.json")[0] == 2
    assert main(["verify", str(good)]) == 0
    assert main(["verify", str(good), str(forged)]) == 1
    assert main(["verify", str(good), str(junk)]) == 2


def test_claim_verdict_tamper(tmp_path, capsys):
    assert main(["reproduce", "--only", "gdpt-sec4.2-delta6-200", "--out", str(tmp_path)]) == 0
    cert = json.loads((tmp_path / "gdpt-sec4.2-delta6-200.json").read_text())
    assert cert["result"]["verdict"] == "holds"
    assert "confirmed" in verify_certificate(cert)
    flipped = copy.deepcopy(cert)
    flipped["result"]["verdict"] = "fails"
    with pytest.raises(CertificateRejected, match="verdict"):
        verify_certificate(reseal(flipped))
    moved = copy.deepcopy(cert)
    moved["claim"]["relation"]["bound"] = "1e-203"  # now the claim would fail
    with pytest.raises(CertificateRejected, match="not the shipped claim"):
        verify_certificate(reseal(moved))  # the shipped record's relation is 1e-202
    moved["claim"]["id"] = "a-claim-file-of-its-own"  # not bound to the registry: the verdict decides
    with pytest.raises(CertificateRejected, match="verdict"):
        verify_certificate(reseal(moved))


@pytest.mark.parametrize(
    "claim_id, forged_enclosure",
    [
        # the LT q < 1 finding: pretend the partial transform is positive
        ("lt-thm3.3-roc-below-one", {"lo": "0.5", "hi": "0.6"}),
        # an identity residual moved away from zero
        ("lt-thm3.2-eq22-gaussian", {"lo": "1e-3", "hi": "2e-3"}),
    ],
)
def test_transform_claims_tamper(tmp_path, claim_id, forged_enclosure):
    assert main(["reproduce", "--only", claim_id, "--out", str(tmp_path)]) == 0
    cert = json.loads((tmp_path / f"{claim_id}.json").read_text())
    assert "confirmed" in verify_certificate(cert)
    forged = copy.deepcopy(cert)
    forged["result"]["enclosure"] = forged_enclosure
    with pytest.raises(CertificateRejected):
        verify_certificate(reseal(forged))


def test_thm45_verdict_tamper():
    from dpverify.certificate import verdict_certificate
    from dpverify.gdp.mu_gdp import check_thm45

    verdict, slope = check_thm45("1", "1e-5")
    cert = verdict_certificate(
        quantity="gdp.thm4.5", source="GDPT Thm 4.5",
        inputs={"eps": "1", "delta": "1e-5"}, verdict=verdict, enclosure=slope, algorithm="a",
    )
    assert "confirmed" in verify_certificate(cert)
    flipped = copy.deepcopy(cert)
    flipped["result"]["verdict"] = "fails"
    with pytest.raises(CertificateRejected, match="verdict"):
        verify_certificate(reseal(flipped))
    moved = copy.deepcopy(cert)
    moved["result"]["enclosure"] = {"lo": "1.3", "hi": "1.4"}  # above sqrt(2 pi)/2: false
    with pytest.raises(CertificateRejected):
        verify_certificate(reseal(moved))


def test_recheck_crash_fails_closed(delta_cert, monkeypatch):
    from dpverify.recheck import verify as V

    def boom(inputs, result):
        raise ZeroDivisionError("boom")

    monkeypatch.setitem(V.RECHECKERS, "gdp.delta", boom)
    with pytest.raises(CouldNotReprove, match="re-derivation failed"):
        verify_certificate(delta_cert)


def test_could_not_reprove_is_exit_3_and_loses_to_a_refusal(tmp_path, capsys):
    # an events certificate of epsilon for a (xi, 0)-zCDP event: the mpmath route does not
    # cover rho = 0 (its order search starts from the classic optimum, at infinity here), so
    # verify must say "not confirmed" (exit 3), never "confirmed" and never "rejected" (the
    # certificate is not shown false); a forged file next to it still wins
    import json

    from dpverify.cli import main

    tree = {"type": "zcdp", "rho": "0", "xi": "1"}
    events = tmp_path / "zcdp-events.json"
    events.write_text(json.dumps({"neighboring": "add-remove", "events": [tree]}))
    good = tmp_path / "mog.json"
    assert main(["audit", "dpsgd", "--events", str(events), "--delta", "1e-5", "--digits", "2",
                 "--certificate", str(good)]) == 0
    cert = json.loads(good.read_text())
    assert main(["verify", str(good)]) == 3
    bad = dict(cert, result=dict(cert["result"], enclosure={"lo": "0", "hi": "0.001"}))
    forged = tmp_path / "forged.json"  # digest left stale: refused outright
    forged.write_text(json.dumps(bad))
    assert main(["verify", str(good), str(forged)]) == 1
    assert main(["verify", str(forged), str(good)]) == 1


def test_an_upper_only_answers_relative_width_is_not_written_and_never_confirmed(tmp_path, capsys):
    """An upper-only answer ([0, hi], zCDP here) used to record the upper end's own accuracy
    as relative_width, which the recorded bracket does not show: a forged 1e-99 was
    accepted as if confirmed. It is no longer written, and one in a certificate is named as
    not confirmed (the frozen format-2 events-epsilon-wor.json carries one)."""
    from pathlib import Path

    events = tmp_path / "zc.json"
    events.write_text('{"neighboring": "add-remove", "event": {"type": "zcdp", "rho": "0.1", "xi": "0.01"}}')
    assert main(["audit", "dpsgd", "--events", str(events), "--eps", "2", "--json"]) == 0
    cert = json.loads(capsys.readouterr().out)
    assert "why_upper_only" in cert["result"] and "relative_width" not in cert["result"]
    forged = copy.deepcopy(cert)
    forged["result"]["relative_width"] = "1e-99"
    said = verify_certificate(reseal(forged))
    assert "not part of what is confirmed: result.relative_width" in said
    frozen = Path(__file__).parent / "format2" / "events-epsilon-wor.json"
    code, said = verify_file(str(frozen))
    assert code == 0 and "not part of what is confirmed: result.relative_width" in said


@pytest.mark.parametrize("value,shown", [(10**4000, "an integer of about 4000 digits"),
                                         ("x" * 5000, "'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx... (5002 characters)")],
                         ids=["int4000", "str5000"])
def test_a_huge_value_outside_every_allowed_form_is_named_with_the_forms(value, shown):
    # adv47 L4: a 4000-digit integer as result.ends.safe.value was shown whole, cut at 200 characters in
    # the middle of its digits, and the message never said what is allowed (jsonschema's "is not valid
    # under any of the given schemas" came after the cut). Now: its size, then the schema's forms
    from pathlib import Path

    cert = json.loads((Path(__file__).parent / "format2" / "calibrate-steps.json").read_text())
    cert["result"]["ends"]["safe"]["value"] = value
    with pytest.raises(MalformedCertificate) as e:
        verify_certificate(reseal(cert))
    msg = str(e.value)
    assert msg == (f"result.ends.safe.value: {shown} is not allowed (allowed: a decimal or fraction as a string or "
                   "an integer in [0, 1,000,000,000,000])"), msg
