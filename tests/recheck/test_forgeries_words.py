"""adv36 L1, M2, M3: the words check keeps each format's wording to that format, and names the
real cause of a refusal. Each test fails on the code before the fix (L1: exit 0; M2: the wrong
index; M3: "no statement of this kind is written without a claim id")."""

import copy
import json
from pathlib import Path

import pytest

from dpverify.certificate import prose
from dpverify.certificate.format import compute_digest
from dpverify.recheck.verify import verify_file

CERTS = Path(__file__).resolve().parents[1] / "certificate"


def _verify(tmp_path, src: Path, change) -> tuple[int, str]:
    c = copy.deepcopy(json.loads(src.read_text()))
    change(c)
    c["digest"] = compute_digest(c)
    p = tmp_path / "f.json"
    p.write_text(json.dumps(c))
    return verify_file(p)


@pytest.mark.parametrize("name", ["cli-dp-implies-holds", "cli-dp-implies-fails", "cli-rr64", "api-gdp-thm45"])
def test_a_format1_certificate_in_this_releases_words_is_refused(tmp_path, name):
    # L1: format 1 words these kinds otherwise (result.implies, result.equals_gdpt_formula, the slope
    # sentence); this release's statement names result.verdict, which a format-1 dp.implies lacks
    src = CERTS / "format1" / f"{name}.json"
    assert verify_file(src)[0] == 0

    def now(c):
        kind = c["claim"]["quantity"]
        c["claim"]["statement"] = prose._fill(prose.TEMPLATES[kind], prose._fields(c["inputs"], c["result"]))

    code, msg = _verify(tmp_path, src, now)
    assert code == 1 and "claim.statement" in msg, msg


def test_a_theorem_list_missing_its_last_entry_names_that_entry(tmp_path):
    # M2: bins-epsilon cites 3 entries (T = N/B, one epoch); the first two kept, the third dropped
    src = CERTS / "format2" / "bins-epsilon.json"
    code, msg = _verify(tmp_path, src, lambda c: c["result"].__setitem__("theorems", c["result"]["theorems"][:2]))
    assert code == 1 and "stops after 2 entries" in msg and "cites 3" in msg, msg


def test_a_gdp_certify_without_its_status_names_the_status(tmp_path):
    # M3: the statement is worded from result.status; without it the cause is the missing field (exit 2)
    src = CERTS / "format2" / "gdp-certify-gaussian.json"
    code, msg = _verify(tmp_path, src, lambda c: c["result"].pop("status"))
    assert code == 2 and "result.status" in msg and "without a claim id" not in msg, msg
