"""verify refuses what no theorem covers: a Poisson-sampled (eps, delta)-DP event under
replace-one or replace-special (the producer refuses both; AFA Thm 11 (1) needs add/remove
neighbours), even when the forger recomputes the digest. Ground truth: the same certificate
under add-remove, written by the producer, is accepted first."""

import copy
import json

import pytest

from dpverify.certificate import compute_digest, verify_certificate
from dpverify.cli import main
from dpverify.errors import CertificateRejected

from ..certs import reword

TREE = {"neighboring": "add-remove", "event": {"type": "self_composed", "count": 3, "event": {
    "type": "poisson_sampled", "sampling_probability": "0.1",
    "event": {"type": "epsilon_delta", "epsilon": "1", "delta": "1e-6"}}}}


@pytest.mark.parametrize("rel", ["replace-one", "replace-special"])
def test_poisson_eps_delta_leaf_under_replace_relations_is_refused(tmp_path, capsys, rel):
    f = tmp_path / "tree.json"
    f.write_text(json.dumps(TREE))
    assert main(["audit", "dpsgd", "--events", str(f), "--delta", "1e-3", "--digits", "2", "--json"]) == 0
    cert = json.loads(capsys.readouterr().out)
    assert "confirmed" in verify_certificate(cert)
    tree = copy.deepcopy(TREE)
    tree["neighboring"] = rel
    f.write_text(json.dumps(tree))
    assert main(["audit", "dpsgd", "--events", str(f), "--delta", "1e-3", "--digits", "2"]) == 2
    capsys.readouterr()
    bad = copy.deepcopy(cert)
    bad["inputs"]["neighboring"] = rel
    bad["digest"] = compute_digest(bad)
    with pytest.raises(CertificateRejected, match="differs from inputs.neighboring"):
        verify_certificate(bad)  # the result still states add-remove
    bad["result"]["neighboring"] = rel  # a consistent forgery reaches the re-derivation
    reword(bad)
    bad["digest"] = compute_digest(bad)
    with pytest.raises(CertificateRejected, match="no theorem"):
        verify_certificate(bad)
