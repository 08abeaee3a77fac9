"""Every certificate the CLI writes is format 2, valid against schema-2.json, and accepted
by the independent verifier (a genuine certificate is never refused). Found by this sweep:
a head-only gdp.certify (tail.gap_delta_mu_at_eps_h) and a --grid composition (result.gap
against the printed endpoints) that verify refused."""

import contextlib
import io
import json
from pathlib import Path

import pytest

from dpverify.recheck.verify import check_schema, verify_certificate
from dpverify.cli import main

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples"

COMMANDS = [
    "gdp delta --mu 2 --eps 1",
    "gdp mu --eps 0 --delta 0.5",
    "gdp certify --mechanism laplace --scale 0.5 --eps-h 3 --margin 1e-2 --algorithm naive",
    "gdp certify --mechanism laplace --scale 0.5 --eps-h 5 --margin 1e-2 --algorithm shuffled",
    "gdp certify --mechanism expr --profile 0.5*exp(-eps) --eps-h 2 --margin 1e-3",
    "gdp certify --mechanism approx --eps0 1 --delta0 0.1 --eps-h 3",
    "gdp certify --mechanism gaussian --noise-multiplier 2 --sensitivity 3 --eps-h 3",
    "gdp certify --mechanism rr --p 0.75 --eps-h 2",
    "dp profile --mechanism subsampled --sampling-rate 0.1 --eps0 1 --delta0 1e-5 --eps 0.05",
    "dp profile --mechanism expr --profile 0.5*exp(-eps) --eps 1",
    "dp implies --from 1,0.1 --to 0.5,0.5",
    "check rr64 --eps0 1 --delta0 0.1 --eps 0.5",
    "compose --mech 0.1,1e-8 --mech 0.3,0 --steps 5 --eps 1",
    "compose --mech 0.1,1e-8 --steps 10 --delta 1e-6 --grid 0.01",
    "compose --mech 0.1,1e-5 --mech 0.123456789,0 --eps 1",
    "rdp divergence --mechanism rr --p 0.75 --alpha 3",
    "rdp to-dp --alpha 2 --rdp 0.1 --eps 0.5 --conversion optimal",
    "audit dpsgd --noise-multiplier 2 --sampling-rate 1 --steps 10 --delta 1e-5 --neighboring replace-one --digits 3",
    f"audit dpsgd --events {EXAMPLES}/zcdp-events.json --eps 1",
    f"audit dpsgd --events {EXAMPLES}/zcdp-events.json --delta 1e-5 --claimed-eps 3",
]


@pytest.mark.parametrize("command", COMMANDS)
def test_cli_certificate_is_format2_valid_and_accepted(command):
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        try:
            code = main([*command.split(), "--json"])
        except SystemExit as exc:
            code = exc.code
    assert code in (0, 1, 3), (command, code)
    cert = json.loads(out.getvalue())
    assert cert["format"] == "dpverify-certificate/2"
    check_schema(cert)
    assert "confirmed" in verify_certificate(cert, budget_seconds=120)


@pytest.mark.parametrize("delta0", ["0.25", "0.13", "1"])
def test_rr64_past_eps0_is_delta0_exactly_and_verifies(delta0, tmp_path):
    """For eps >= eps0 the sup over the 4-output mechanism's rows is delta0 exactly (every
    term of a row is <= 0 except P_0[0] = delta0). The writer records an exact "0.25"; the
    second route once charged an mpmath error around it and answered exit 3 (found by the
    round trip's random draws). Independent route: the exact value delta0, compared as a
    rational; a forged value one part in 10^12 above is refused."""
    from fractions import Fraction

    from dpverify.errors import CertificateRejected

    from ..certs import reseal

    path = tmp_path / "rr.json"
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["check", "rr64", "--eps0", "1.18", "--delta0", delta0, "--eps", "2.74",
                     "--certificate", str(path)]) == 0
    cert = json.loads(path.read_text())
    enc = cert["result"]["enclosure"]
    assert Fraction(enc["lo"]) <= Fraction(delta0) <= Fraction(enc["hi"])
    assert "confirmed" in verify_certificate(cert)
    cert["result"]["enclosure"] = {"lo": str(float(Fraction(delta0) * (1 + Fraction(1, 10**12)))),
                                   "hi": str(float(Fraction(delta0) * (1 + Fraction(2, 10**12))))}
    with pytest.raises(CertificateRejected):
        verify_certificate(reseal(cert))
