"""`dpverify compose`: acceptance, 'inf', files, grid, bad input, certificates and tampering."""

import copy
import json

import mpmath
import pytest

from dpverify.certificate import compute_digest, verify_certificate
from dpverify.cli import main
from dpverify.errors import CertificateRejected


def _cert(capsys, *argv):
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_acceptance_k100(capsys):
    cert = _cert(capsys, "compose", "--mech", "0.1,1e-8", "--steps", "100", "--delta", "1e-6")
    enc = cert["result"]["enclosure"]
    with mpmath.workdps(40):
        lo, hi = mpmath.mpf(enc["lo"]), mpmath.mpf(enc["hi"])
        assert (hi - lo) / lo <= mpmath.mpf("1e-12")
    assert "confirmed" in verify_certificate(cert)


def test_inf_and_its_verification(capsys):
    cert = _cert(capsys, "compose", "--mech", "0.1,1e-8", "--steps", "1000", "--delta", "1e-6")
    assert cert["result"]["enclosure"] == {"lo": "inf", "hi": "inf"}
    assert "confirmed" in verify_certificate(cert)
    forged = copy.deepcopy(cert)
    forged["inputs"]["k"] = 10
    forged["digest"] = compute_digest(forged)
    with pytest.raises(CertificateRejected):
        verify_certificate(forged)


def test_heterogeneous_delta_and_tamper(capsys):
    cert = _cert(capsys, "compose", "--mech", "0.1,1e-8", "--mech", "0.3,0", "--steps", "5", "--eps", "1")
    assert "confirmed" in verify_certificate(cert)
    forged = copy.deepcopy(cert)
    lo = forged["result"]["enclosure"]["lo"]
    forged["result"]["enclosure"] = {"lo": lo[:-3] + "9" + lo[-2:], "hi": lo[:-3] + "9" + lo[-2:]}
    forged["result"]["enclosure"]["lo"] = str(mpmath.mpf(lo) * 1.001)
    forged["result"]["enclosure"]["hi"] = str(mpmath.mpf(lo) * 1.001)
    forged["digest"] = compute_digest(forged)
    with pytest.raises(CertificateRejected, match="disjoint"):
        verify_certificate(forged)


def test_eps_tamper(capsys):
    cert = _cert(capsys, "compose", "--mech", "0.2,1e-7", "--steps", "20", "--delta", "1e-5")
    assert "confirmed" in verify_certificate(cert)
    forged = copy.deepcopy(cert)
    forged["result"]["enclosure"] = {"lo": "2.5", "hi": "2.500000000000001"}
    forged["digest"] = compute_digest(forged)
    with pytest.raises(CertificateRejected):
        verify_certificate(forged)


def test_file_and_grid(tmp_path, capsys):
    f = tmp_path / "m.json"
    f.write_text(json.dumps(["0.11,1e-7", [0.137, 0], {"eps": "0.2", "delta": "1e-8"}]))
    cert = _cert(capsys, "compose", "--mechs-file", str(f), "--steps", "3", "--delta", "1e-5", "--grid", "0.05")
    assert set(cert["result"]) >= {"enclosure", "lower", "upper", "gap"}
    assert "confirmed" in verify_certificate(cert)
    forged = copy.deepcopy(cert)
    forged["result"]["enclosure"]["hi"] = cert["result"]["lower"]["hi"]
    forged["digest"] = compute_digest(forged)
    with pytest.raises(CertificateRejected):
        verify_certificate(forged)


BAD = [
    (["compose", "--mech", "0.1,1.5", "--delta", "1e-6"], "--mech"),
    (["compose", "--mech=-0.1,0", "--delta", "1e-6"], "--mech"),
    (["compose", "--mech", "0.1", "--delta", "1e-6"], "--mech"),
    (["compose", "--mech", "a,b", "--delta", "1e-6"], "--mech"),
    (["compose", "--mech", "0.1,0", "--steps", "0", "--delta", "1e-6"], "--steps"),
    (["compose", "--mech", "0.1,0", "--steps", "1e9", "--delta", "1e-6"], "--steps"),
    (["compose", "--mech", "0.1,0", "--delta", "2"], "--delta"),
    (["compose", "--mech", "0.1,0", "--delta", "-1"], "--delta"),
    (["compose", "--mech", "0.1,0", "--eps", "inf"], "--eps"),
    (["compose", "--mech", "0.1,0", "--delta", "0.1", "--grid", "0"], "--grid"),
    (["compose", "--delta", "0.1"], "--mech"),
    (["compose", "--mechs-file", "/nonexistent", "--delta", "0.1"], "--mechs-file"),
]


@pytest.mark.parametrize("argv,option", BAD)
def test_bad_input_exits_2_naming_option(argv, option, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert option in err and "Traceback" not in err


def test_exact_lattice_over_budget_is_exit_2(capsys):
    argv = ["compose", "--mech", "0.1,1e-5", "--mech", "0.123456789,0", "--mech", "0.2222223,0",
            "--steps", "200", "--delta", "1e-2"]
    assert main([*argv, "--exact"]) == 2
    assert "--exact" in capsys.readouterr().err
    cert = _cert(capsys, *argv)
    assert set(cert["result"]) >= {"enclosure", "lower", "upper", "gap"} and "grid" in cert["inputs"]
    lo, hi = float(cert["result"]["enclosure"]["lo"]), float(cert["result"]["enclosure"]["hi"])
    assert 0 < hi - lo < 0.2  # the gap is reported and small


def test_exact_and_grid_are_exclusive(capsys):
    with pytest.raises(SystemExit) as e:
        main(["compose", "--mech", "0.1,0", "--eps", "1", "--exact", "--grid", "0.1"])
    assert e.value.code == 2
