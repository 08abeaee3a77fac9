"""`dpverify audit dpsgd`: outputs, verdict exit codes, certificates, bad input."""

import copy
import json

import mpmath
import pytest

from dpverify.certificate import compute_digest, verify_certificate
from dpverify.cli import main
from dpverify.errors import CertificateRejected

from ..reference import nested_events_file

BASE = ["audit", "dpsgd", "--noise-multiplier", "1", "--sampling-rate", "0.05", "--steps", "50"]


def _run(capsys, *argv):
    code = main(list(argv))
    return code, capsys.readouterr()


def test_epsilon_human_line(capsys):
    code, out = _run(capsys, *BASE, "--delta", "1e-5", "--digits", "3")
    assert code == 0
    assert out.out.startswith("epsilon(delta) in [") and "add-remove" in out.out


def test_epsilon_certificate_verifies_and_forgery_is_rejected(capsys):
    code, out = _run(capsys, *BASE, "--delta", "1e-5", "--digits", "3", "--json")
    assert code == 0
    cert = json.loads(out.out)
    assert cert["claim"]["quantity"] == "pld.epsilon"
    assert cert["inputs"]["neighboring"] == "add-remove"
    assert cert["result"]["neighboring"] == "add-remove"
    assert "confirmed" in verify_certificate(cert)
    forged = copy.deepcopy(cert)
    with mpmath.workdps(30):
        lo = mpmath.mpf(cert["result"]["enclosure"]["lo"])
        forged["result"]["enclosure"] = {"lo": mpmath.nstr(lo * 0.8, 20), "hi": mpmath.nstr(lo * 0.80001, 20)}
    forged["digest"] = compute_digest(forged)
    with pytest.raises(CertificateRejected):
        verify_certificate(forged)


def test_delta_certificate(capsys):
    code, out = _run(capsys, *BASE, "--eps", "1", "--digits", "2", "--json")
    assert code == 0
    cert = json.loads(out.out)
    assert cert["claim"]["quantity"] == "pld.delta"
    assert "confirmed" in verify_certificate(cert)
    forged = copy.deepcopy(cert)
    forged["result"]["enclosure"] = {"lo": "1e-9", "hi": "1.001e-9"}
    forged["digest"] = compute_digest(forged)
    with pytest.raises(CertificateRejected):
        verify_certificate(forged)


def _claim(capsys, claimed, code):
    got, out = _run(capsys, *BASE, "--delta", "1e-5", "--claimed-eps", claimed, "--json")
    assert got == code
    return json.loads(out.out)


def test_claim_verdicts_and_exit_codes(capsys):
    assert _claim(capsys, "3", 0)["result"]["verdict"] == "holds"
    assert _claim(capsys, "0.1", 1)["result"]["verdict"] == "fails"


@pytest.mark.slow  # each re-check contains the recorded width 5e-7 of delta: ~1 minute
def test_claim_certificates_verify_and_a_forged_verdict_is_refused(capsys):
    assert "confirmed" in verify_certificate(_claim(capsys, "3", 0))
    cert = _claim(capsys, "0.1", 1)
    assert "confirmed" in verify_certificate(cert)
    # a forged "holds" on a false claim is rejected by the independent route
    forged = copy.deepcopy(cert)
    forged["result"]["verdict"] = "holds"
    forged["digest"] = compute_digest(forged)
    with pytest.raises(CertificateRejected):
        verify_certificate(forged)


def test_tf_privacy_style_and_events_file(tmp_path, capsys):
    code, out = _run(capsys, "audit", "dpsgd", "--noise-multiplier", "1", "--dataset-size", "1000",
                     "--batch-size", "50", "--epochs", "2.5", "--delta", "1e-5", "--digits", "2", "--json")
    assert code == 0
    cert = json.loads(out.out)
    assert cert["inputs"]["steps"] == 50 and cert["inputs"]["sampling_rate"] == "0.05"
    ev = tmp_path / "ev.json"
    ev.write_text(json.dumps({"neighboring": "remove", "events": [
        {"noise_multiplier": "1", "sampling_rate": "1/20", "count": 20},
        {"noise_multiplier": "1", "sampling_rate": "1/20", "count": 30}]}))
    code, out = _run(capsys, "audit", "dpsgd", "--events", str(ev), "--delta", "1e-5", "--digits", "2", "--json")
    assert code == 0
    c2 = json.loads(out.out)
    assert c2["inputs"]["neighboring"] == "remove" and len(c2["inputs"]["events"]) == 2
    assert "confirmed" in verify_certificate(c2)
    # heterogeneous: Gaussian, Laplace and an (eps0, delta0)-DP mechanism, all re-checked
    ev.write_text(json.dumps({"events": [
        {"noise_multiplier": "2", "sampling_rate": "0.1", "count": 10},
        {"mechanism": "laplace", "scale": "4", "sampling_rate": "0.1", "count": 10},
        {"mechanism": "approx", "exp_eps0": "2", "delta0": "1e-8", "sampling_rate": "0.5", "count": 3}]}))
    code, out = _run(capsys, "audit", "dpsgd", "--events", str(ev), "--delta", "1e-5", "--digits", "2", "--json")
    assert code == 0, out.err
    c3 = json.loads(out.out)
    assert [e["mechanism"] for e in c3["inputs"]["events"]] == ["subsampled-gaussian", "laplace", "approx"]
    assert "confirmed" in verify_certificate(c3)
    forged = copy.deepcopy(c3)
    forged["result"]["enclosure"] = {"lo": "0.1", "hi": "0.1001"}
    forged["digest"] = compute_digest(forged)
    with pytest.raises(CertificateRejected):
        verify_certificate(forged)


def test_undecided_when_budget_is_tiny(capsys):
    code, out = _run(capsys, "audit", "dpsgd", "--noise-multiplier", "1", "--sampling-rate", "0.01",
                     "--steps", "1000", "--delta", "1e-5", "--digits", "8", "--time-budget", "0.3")
    assert code == 3
    assert "relative width" in out.err


BAD = [
    (["--noise-multiplier", "0", "--sampling-rate", "0.1", "--steps", "10", "--delta", "1e-5"], "--noise-multiplier"),
    (["--noise-multiplier", "-1", "--sampling-rate", "0.1", "--steps", "10", "--delta", "1e-5"], "--noise-multiplier"),
    (["--noise-multiplier", "abc", "--sampling-rate", "0.1", "--steps", "10", "--delta", "1e-5"], "--noise-multiplier"),
    (["--noise-multiplier", "1", "--sampling-rate", "0", "--steps", "10", "--delta", "1e-5"], "--sampling-rate"),
    (["--noise-multiplier", "1", "--sampling-rate", "1.5", "--steps", "10", "--delta", "1e-5"], "--sampling-rate"),
    (["--noise-multiplier", "1", "--sampling-rate", "0.1", "--steps", "0", "--delta", "1e-5"], "--steps"),
    (["--noise-multiplier", "1", "--sampling-rate", "0.1", "--steps", "1000000000", "--delta", "1e-5"], "--steps"),
    (["--noise-multiplier", "1", "--sampling-rate", "0.1", "--steps", "2.5", "--delta", "1e-5"], "--steps"),
    (["--noise-multiplier", "1", "--sampling-rate", "0.1", "--steps", "10", "--delta", "0"], "--delta"),
    (["--noise-multiplier", "1", "--sampling-rate", "0.1", "--steps", "10", "--delta", "1"], "--delta"),
    (["--noise-multiplier", "1", "--sampling-rate", "0.1", "--steps", "10", "--eps", "inf"], "--eps"),
    (["--noise-multiplier", "1", "--sampling-rate", "0.1", "--steps", "10", "--eps", "-1"], "--eps"),
    (["--noise-multiplier", "1", "--sampling-rate", "0.1", "--steps", "10"], "--delta"),
    (["--noise-multiplier", "1", "--sampling-rate", "0.1", "--steps", "10", "--delta", "1e-5",
      "--neighboring", "swap"], "--neighboring"),
    # the replace-one bracket of Poisson sampling has no pictures (the curves are two, not one)
    (["--noise-multiplier", "1", "--sampling-rate", "0.1", "--steps", "10", "--eps", "1",
      "--neighboring", "replace-one", "--plot-profile", "x.png"], "--plot-profile"),
    (["--noise-multiplier", "1", "--sampling-rate", "0.1", "--steps", "10", "--delta", "1e-5",
      "--digits", "0"], "--digits"),
    (["--noise-multiplier", "1", "--sampling-rate", "0.1", "--steps", "10", "--eps", "1",
      "--claimed-eps", "1"], "--claimed-eps"),
    (["--noise-multiplier", "1", "--dataset-size", "100", "--batch-size", "200", "--epochs", "1",
      "--delta", "1e-5"], "--batch-size"),
    (["--noise-multiplier", "1", "--dataset-size", "100", "--batch-size", "10", "--delta", "1e-5"], "--epochs"),
    (["--events", "/nonexistent/ev.json", "--delta", "1e-5"], "--events"),
]


@pytest.mark.parametrize("argv, needle", BAD)
def test_bad_input_exits_2_naming_the_option(argv, needle, capsys):
    try:
        code = main(["audit", "dpsgd", *argv])
    except SystemExit as exc:
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2, err
    assert needle in err
    assert "Traceback" not in err


def test_without_replacement_with_events_says_to_drop_the_flag_as_the_help_does(tmp_path, capsys):
    # adv47 L3: the help said "without-replacement (fixed batches: give --events)", and a user who gave
    # --events was told to "give them as --events"; both now say: the events file, without --sampling
    f = tmp_path / "ev.json"
    f.write_text(json.dumps({"neighboring": "replace-one", "event": {
        "type": "sampled_without_replacement", "source_dataset_size": 100, "sample_size": 10,
        "event": {"type": "gaussian", "noise_multiplier": "2"}}}))
    argv = ["audit", "dpsgd", "--events", str(f), "--delta", "1e-5"]
    assert main([*argv, "--sampling", "without-replacement"]) == 2
    err = capsys.readouterr().err
    assert "drop --sampling without-replacement" in err and str(f) in err
    assert main(argv) == 0  # the advice works
    capsys.readouterr()
    with pytest.raises(SystemExit):
        main(["audit", "dpsgd", "--help"])
    assert "without --sampling" in " ".join(capsys.readouterr().out.split())


def test_a_refusal_of_the_event_trees_contents_names_the_file(tmp_path, capsys):
    # adv47 L4: 60 nested self_composed x 2 were refused without naming the --events file
    f = nested_events_file(tmp_path / "deep.json", "2", 60)
    assert main(["audit", "dpsgd", "--events", str(f), "--delta", "1e-5"]) == 2
    err = capsys.readouterr().err
    assert f"--events: {f}: the event tree repeats a mechanism" in err, err
