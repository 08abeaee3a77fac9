"""The details the shuffle and replace-one kinds present as certified (the Gaussian's mu,
the two one-sided enclosures of the replace-one bracket) are re-proved by verify: a forged
one, sealed with a recomputed digest, is never accepted."""

from __future__ import annotations

import json

from dpverify.certificate.format import compute_digest
from dpverify.cli import main
from dpverify.recheck.verify import verify_file


def _write(tmp_path, argv, name):
    out = tmp_path / name
    assert main([*argv, "--certificate", str(out)]) == 0
    return json.loads(out.read_text())


def _forge(tmp_path, cert, name):
    cert = dict(cert)
    cert["digest"] = compute_digest(cert)
    p = tmp_path / name
    p.write_text(json.dumps(cert))
    return verify_file(p)[0]


def test_forged_shuffle_mu_is_refused(tmp_path):
    cert = _write(tmp_path, ["audit", "dpsgd", "--sampling", "shuffle", "--noise-multiplier", "1.1",
                             "--dataset-size", "600", "--batch-size", "60", "--epochs", "2",
                             "--delta", "1e-5"], "s.json")
    assert verify_file(tmp_path / "s.json")[0] == 0
    # mu = sqrt(2) / 1.1 = 1.2856...: [1.0, 1.1] does not enclose it (decided exactly)
    cert["result"] = {**cert["result"], "mu": {"lo": "1.0", "hi": "1.1"}}
    assert _forge(tmp_path, cert, "forged.json") == 1


def test_forged_replace_one_detail_is_not_accepted(tmp_path):
    cert = _write(tmp_path, ["audit", "dpsgd", "--noise-multiplier", "1", "--sampling-rate", "0.01",
                             "--steps", "100", "--neighboring", "replace-one", "--delta", "1e-5"], "r.json")
    assert verify_file(tmp_path / "r.json")[0] == 0
    up = cert["result"]["upper"]
    cert["result"] = {**cert["result"], "upper": {"lo": str(float(up["lo"]) * 0.4), "hi": str(float(up["lo"]) * 0.5)}}
    assert _forge(tmp_path, cert, "forged.json") in (1, 3)
