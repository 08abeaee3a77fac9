"""adv36's findings on the words check and the shared expression grammar: each test fails on the
code before the fix (a look-alike digit accepted, a genuine certificate refused, a false relation
answered as malformed)."""

import json
from pathlib import Path

import pytest

from dpverify.certificate.format import compute_digest
from dpverify.cli import main
from dpverify.recheck.verify import verify_file

F2 = Path(__file__).resolve().parents[1] / "certificate" / "format2"


def _compose(tmp_path, eps: str) -> Path:
    p = tmp_path / "c.json"
    assert main(["compose", "--mech", "1,1e-6", "--eps", eps, "--certificate", str(p)]) == 0
    return p


def _resealed(tmp_path, cert: dict) -> Path:
    cert["digest"] = compute_digest(cert)
    p = tmp_path / "f.json"
    p.write_text(json.dumps(cert))
    return p


@pytest.mark.parametrize("digit", ["\u0660", "\uff10", "\u09e6"])  # Arabic-Indic, fullwidth, Bengali zero
def test_a_statement_or_quantity_number_in_other_scripts_digits_is_refused(tmp_path, digit):
    # F1: "1\u06605" looks like "1.5" and Python's \d, Fraction and Decimal read it as 105, so the forged
    # words of a genuine eps = 105 certificate passed. Numbers are ASCII decimals
    cert = json.loads(_compose(tmp_path, "105").read_text())
    assert verify_file(_resealed(tmp_path, dict(cert)))[0] == 0
    for where in ("statement", "quantity"):
        c = json.loads(json.dumps(cert))
        box = c["claim"] if where == "statement" else c["result"]
        assert "eps=105" in box[where]
        box[where] = box[where].replace("eps=105", f"eps=1{digit}5")
        code, msg = verify_file(_resealed(tmp_path, c))
        assert code in (1, 2), msg


def test_a_statement_with_a_long_number_the_writer_allows_verifies(tmp_path):
    # G1: the words matched numbers of at most 400 digits while the writer takes 1000 characters:
    # eps = 0.(400 zeros)1 was written (exit 0) and refused by verify (exit 1)
    eps = "0." + "0" * 400 + "1"
    code, msg = verify_file(_compose(tmp_path, eps))
    assert code == 0, msg


def test_the_producer_applies_verifys_expression_caps(tmp_path, capsys):
    # G2: 41 nested parentheses were certified by the producer (exit 0) and refused by verify (exit 2);
    # both now apply recheck.limits.check_expression. 20 levels: written and verified
    deep = "(" * 41 + "0.5*exp(-eps)" + ")" * 41
    assert main(["dp", "profile", "--mechanism", "expr", f"--profile={deep}", "--eps", "1"]) == 2
    assert "nested deeper" in capsys.readouterr().err
    ok, p = "(" * 20 + "0.5*exp(-eps)" + ")" * 20, tmp_path / "p.json"
    assert main(["dp", "profile", "--mechanism", "expr", f"--profile={ok}", "--eps", "1", "--certificate", str(p)]) == 0
    code, msg = verify_file(p)
    assert code == 0, msg


@pytest.mark.parametrize("relation", [{"kind": "le", "bound": "0.5"}, {"kind": "ge", "bound": None}])
def test_a_well_formed_relation_stating_another_claim_is_false(tmp_path, relation):
    # W1: bins-claim's relation rewritten to eps <= 0.5 (claimed 2.5) or to >= answered exit 2, as
    # if malformed; a relation of the right shape that states another claim is false: exit 1
    c = json.loads((F2 / "bins-claim.json").read_text())
    rel = dict(relation)
    if rel["bound"] is None:
        rel["bound"] = c["claim"]["relation"]["bound"]
    c["claim"]["relation"] = rel
    code, msg = verify_file(_resealed(tmp_path, c))
    assert code == 1, msg


@pytest.mark.parametrize("alpha", ["0.5", "1"])
def test_an_order_hint_outside_the_domain_is_malformed_on_every_route(tmp_path, alpha):
    # W3: on the exact Gaussian's classic route (a closed form that reads no hint) result.alpha 0.5 was
    # accepted while the other routes refused it (exit 2); the producer writes orders > 1 only
    c = json.loads((F2 / "rdp-epsilon.json").read_text())
    c["result"]["alpha"] = alpha
    code, msg = verify_file(_resealed(tmp_path, c))
    assert code == 2, msg
