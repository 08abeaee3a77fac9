"""What dpverify writes, verify accepts (issue 22, the write-time contract's second half): a certificate
whose recorded PLD grid the re-check cannot reach within its work cap is not written by any writer
(`emit` of every CLI command: exit 3 with the answer in the message; a sweep row: undecided). adv50 M2:
a claim at claimed_eps 2.381689 on sigma 1.1, q 256/60000, T = 14063 (delta(eps) a hair from 1e-5)
was refined to 2^-18 to decide 'fails' (260 s) and written; verify answered exit 3 at its cap. The
certificate is kept as data (it takes minutes to produce); its price is the verifier's own meter
(recheck.pld.recorded_grid_price, tested against the meter in tests/recheck/test_pld_recorded_grid_price.py)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from dpverify.certificate.writer import unverifiable
from dpverify.cli._common import emit
from dpverify.errors import Undecided

ROOT = Path(__file__).parents[2]
NEAR = ROOT / "tests" / "recheck" / "data" / "pld-claim-near-boundary-2-18-unverifiable.json"


def test_a_claim_refined_past_verify_cap_is_not_written(tmp_path, capsys) -> None:
    cert = json.loads(NEAR.read_text())
    assert cert["result"]["grid"] == "2^-18" and "2^-18" in unverifiable(cert)
    out = tmp_path / "c.json"
    for args in (argparse.Namespace(certificate=str(out), json=False), argparse.Namespace(certificate=None, json=True)):
        with pytest.raises(Undecided, match="fails.*no certificate written: it needs the grid 2\\^-18"):
            emit(args, cert, "(2.381689, 1e-5)-DP: fails")
    assert not out.exists() and capsys.readouterr().out == ""
    # without a certificate asked for, the answer is printed as before
    emit(argparse.Namespace(certificate=None, json=False), cert, "(2.381689, 1e-5)-DP: fails")
    assert capsys.readouterr().out == "(2.381689, 1e-5)-DP: fails\n"


@pytest.mark.parametrize("name", ["pld-claim", "pld-epsilon", "pld-delta", "events-epsilon", "gdp-delta"])
def test_certificates_verify_re_proves_are_written(name) -> None:
    cert = json.loads((ROOT / "tests" / "certificate" / "format2" / f"{name}.json").read_text())
    assert unverifiable(cert) is None
