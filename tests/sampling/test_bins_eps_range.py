"""adv47 M3: one range of eps for balls-in-bins certificates on both sides. Verify has always refused
an eps enclosure whose upper end passes 50 (exit 2); the producer wrote one (1000 epochs of N = 100,
B = 10, sigma 1.1: [96.27, 113.8] after 33 CPU s), so a genuine certificate was refused. The producer
now refuses such a run (exit 2) with verify's words (certificate.format.BINS_MAX_EPS). The real run is
too slow for a test: the route's answer is replaced by that run's recorded enclosure, and the real
refusal is that of the front end (sampling.bins), which every caller goes through."""

import json
import re
from pathlib import Path

import pytest

from dpverify.certificate.format import BINS_ENCLOSURE_RANGE, BINS_MAX_EPS
from dpverify.cli import main
from dpverify.errors import InvalidParameter
from dpverify.sampling import balls as B
from dpverify.sampling import balls_epochs as BE
from dpverify.sampling import bins as BB

from ..certs import outcome, reseal

F2 = Path(__file__).resolve().parents[1] / "certificate" / "format2"


def _recorded(hi: str):
    def enclose(r, delta, **kw):
        return {"lo": "96.27", "hi": hi, "grids": {}, "loss": None}
    return enclose


def test_the_producer_refuses_an_upper_end_past_the_range_with_verifys_words(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(BE, "enclose_eps", _recorded("113.8"))
    r = B.run("1.1", 100, 10, 1000, "add-remove")
    with pytest.raises(InvalidParameter, match="113.8 > 50") as e:
        BB.enclose_eps(r, "1e-5")
    assert BINS_ENCLOSURE_RANGE in str(e.value)
    out = tmp_path / "c.json"
    code = main(["audit", "dpsgd", "--sampling", "balls-in-bins", "--noise-multiplier", "1.1", "--dataset-size", "100",
                 "--batch-size", "10", "--epochs", "1000", "--delta", "1e-5", "--certificate", str(out)])
    assert code == 2 and not out.exists()
    assert BINS_ENCLOSURE_RANGE in capsys.readouterr().err


def test_an_upper_end_at_the_range_is_written(monkeypatch):
    monkeypatch.setattr(BE, "enclose_eps", _recorded(str(BINS_MAX_EPS)))
    assert BB.enclose_eps(B.run("1.1", 100, 10, 1000, "add-remove"), "1e-5")["hi"] == "50"


def test_verify_refuses_the_same_enclosure_with_the_same_words(tmp_path):
    from dpverify.errors import MalformedCertificate
    from dpverify.recheck.verify import verify_certificate

    cert = json.loads((F2 / "bins-epsilon-epochs.json").read_text())
    cert["result"]["enclosure"] = {"lo": "96.27", "hi": "113.8"}
    assert outcome(reseal(cert)) == 2
    with pytest.raises(MalformedCertificate, match=re.escape(BINS_ENCLOSURE_RANGE)):
        verify_certificate(cert)
