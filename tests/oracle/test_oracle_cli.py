"""`dpverify oracle` end to end: the issue's acceptance rows, bad input, tamper."""

import copy
import json

import pytest

from dpverify.certificate import compute_digest, verify_certificate
from dpverify.cli import main
from dpverify.errors import CertificateRejected, MalformedCertificate

HEADER = "accountant,mechanism,noise_multiplier,sampling_rate,steps,delta,reported_eps\n"
# sigma=1, q=0.01, T=1000, delta=1e-5: four accountants' published answers (Opacus
# GDP 1.6177, dp_accounting PLD 1.82824, PRV estimate 1.82824, RDP 2.10)
ROWS = [
    ("opacus-gdp", "1.6177", "unsafe"),
    ("dp_accounting-pld", "1.82824", "consistent"),
    ("prv_accountant", "1.82824", "consistent"),
    ("dp_accounting-rdp", "2.10", "loose"),
]


@pytest.fixture(scope="module")
def acceptance(tmp_path_factory):
    d = tmp_path_factory.mktemp("oracle")
    f = d / "rows.csv"
    f.write_text(HEADER + "".join(f"{a},subsampled-gaussian,1,0.01,1000,1e-5,{r}\n" for a, r, _ in ROWS))
    cert_path = d / "o.json"
    code = main(["oracle", "--input", str(f), "--certificate", str(cert_path), "--report", str(d / "r.md")])
    return code, json.loads(cert_path.read_text()), (d / "r.md").read_text()


def test_acceptance_verdicts(acceptance):
    code, cert, report = acceptance
    assert code == 1  # a row is unsafe
    assert [r["verdict"] for r in cert["result"]["rows"]] == [v for _, _, v in ROWS]
    assert len(cert["result"]["configs"]) == 1  # one certified computation per configuration
    assert cert["result"]["verdict"] == "fails"
    assert "**unsafe**" in report and "opacus-gdp" in report


def test_certificate_verifies_and_tamper_is_rejected(acceptance):
    _, cert, _ = acceptance
    assert "confirmed" in verify_certificate(cert)
    # hide the unsafe row: relabel it consistent and the overall verdict holds
    forged = copy.deepcopy(cert)
    forged["result"]["rows"][0]["verdict"] = "consistent"
    forged["result"]["verdict"] = "holds"
    forged["digest"] = compute_digest(forged)
    with pytest.raises(CertificateRejected):
        verify_certificate(forged)
    # move the certified band so that Opacus' 1.6177 would look safe
    moved = copy.deepcopy(cert)
    band = {"lo": "1.6", "hi": "1.61"}
    moved["result"]["configs"][0]["certified"] = band
    for r in moved["result"]["rows"]:
        r["certified"] = band
    moved["digest"] = compute_digest(moved)
    with pytest.raises(CertificateRejected):
        verify_certificate(moved)


def test_battery_smoke_without_accountants_installed_or_with(capsys):
    code = main(["oracle", "--battery", "smoke", "--accountants", "opacus-gdp,dp_accounting-rdp", "--json"])
    cert = json.loads(capsys.readouterr().out)
    assert code in (0, 1)
    rows, notes = cert["result"]["rows"], cert["result"]["notes"]
    assert len(rows) + len(notes) == 2  # each accountant either ran or was skipped with a note
    for r in rows:
        assert r["verdict"] in ("consistent", "unsafe", "loose", "crashed")
    assert "confirmed" in verify_certificate(cert)


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["oracle", "--battery", "nope"], "--battery"),
        (["oracle", "--battery", "smoke", "--accountants", "foo"], "--accountants"),
        (["oracle", "--input", "/nonexistent.csv"], "--input"),
        (["oracle", "--battery", "smoke", "--tolerance", "-1"], "--tolerance"),
        (["oracle", "--battery", "smoke", "--digits", "0"], "--digits"),
    ],
)
def test_bad_input(argv, needle, capsys):
    assert main(argv) == 2
    assert needle in capsys.readouterr().err


def test_malformed_row_names_the_row(tmp_path, capsys):
    f = tmp_path / "rows.csv"
    f.write_text(HEADER + "a,subsampled-gaussian,1,0.01,1000,1e-5,1.9\nb,subsampled-gaussian,-1,0.01,1000,1e-5,1\n")
    assert main(["oracle", "--input", str(f)]) == 2
    # the file, the row (from 0) and the key, then the value check
    assert "rows.csv: rows[1].noise_multiplier: noise_multiplier='-1' must be > 0" in capsys.readouterr().err


def test_input_row_reporting_inf_is_classified_returned_inf(tmp_path, capsys):
    # the help: "+inf is 'returned-inf'": an input row saying inf gets that verdict
    # (a true, vacuous guarantee: not unsafe), and the certificate re-checks
    f = tmp_path / "rows.csv"
    f.write_text(HEADER + "a,subsampled-gaussian,1,0.01,100,1e-5,inf\n")
    cert_path = tmp_path / "o.json"
    assert main(["oracle", "--input", str(f), "--digits", "2", "--certificate", str(cert_path)]) == 0
    cert = json.loads(cert_path.read_text())
    (row,) = cert["result"]["rows"]
    assert row["verdict"] == "returned-inf" and row["reported"] == "inf"
    assert "confirmed" in verify_certificate(cert)


def test_a_plain_gaussian_row_verifies(tmp_path):
    """`oracle --help` offers mechanism 'gaussian'; its certificate was refused by verify
    (only the subsampled mechanism was allowed there). Independent route: the Gaussian
    with sigma 5 composed 3 times is mu-GDP with mu = sqrt(3)/5 (GDPT Cor 3.3), whose
    eps(1e-5) solves delta_mu(eps) = 1e-5 (GDPT eq. 2), here by mpmath at 40 digits."""
    import mpmath

    f = tmp_path / "rows.csv"
    f.write_text(HEADER + "mine,gaussian,5,1,3,1e-5,2\n")
    cert_path = tmp_path / "o.json"
    assert main(["oracle", "--input", str(f), "--digits", "3", "--certificate", str(cert_path)]) == 0
    cert = json.loads(cert_path.read_text())
    assert "confirmed" in verify_certificate(cert)
    with mpmath.workdps(40):
        mu = mpmath.sqrt(3) / 5
        dmu = lambda e: mpmath.ncdf(-e / mu + mu / 2) - mpmath.exp(e) * mpmath.ncdf(-e / mu - mu / 2)  # noqa: E731
        eps = mpmath.findroot(lambda e: dmu(e) - mpmath.mpf("1e-5"), 1.3)
        enc = cert["result"]["configs"][0]["certified"]
        assert mpmath.mpf(enc["lo"]) <= eps <= mpmath.mpf(enc["hi"])
    # the plain Gaussian is the subsampled one at rate 1 only
    forged = copy.deepcopy(cert)
    forged["result"]["configs"][0]["sampling_rate"] = "1/2"
    forged["digest"] = compute_digest(forged)
    with pytest.raises(MalformedCertificate):  # no configuration the producer writes: exit 2
        verify_certificate(forged)
