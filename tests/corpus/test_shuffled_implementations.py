"""corpus/shuffled-implementations.jsonl: Poisson epsilons printed for code that shuffles.

Every record is audited by ``audit corpus``; its verdict for what was run is then
checked against an independent route: the record's run is certified separately
(``audit dpsgd --sampling shuffle``), the certificate's ends are re-derived by
``verify`` (the MPFR re-check, no python-flint), and the claim is compared with
those ends in exact rationals (holds iff hi <= claim, fails iff lo > claim).
The 15-epoch record with the implementation switched to persistent shuffling
takes the failing path: one reused permutation makes the certified lower end (a
concrete dataset pair) exceed the printed number.
"""

import json
from fractions import Fraction
from pathlib import Path

from dpverify.certificate import verify_certificate
from dpverify.cli import main

FILE = Path(__file__).resolve().parents[2] / "corpus" / "shuffled-implementations.jsonl"


def _records():
    lines = FILE.read_text().splitlines()
    return [json.loads(s) for s in lines if s.strip() and not s.lstrip().startswith("//")]


def _audit(path, capsys):
    code = main(["audit", "corpus", str(path), "--json"])
    return code, {r["id"]: r for r in json.loads(capsys.readouterr().out)["rows"]}


def _certified_bracket(rec, sampling, capsys):
    """The run's bracket from its own certificate, accepted by the independent re-check."""
    args = ["audit", "dpsgd", "--sampling", sampling, "--noise-multiplier", rec["noise_multiplier"],
            "--dataset-size", str(rec["dataset_size"]), "--batch-size", str(rec["batch_size"]),
            "--epochs", rec["epochs"], "--delta", rec["delta"], "--json"]
    assert main(args) == 0
    cert = json.loads(capsys.readouterr().out)
    assert "confirmed" in verify_certificate(cert)
    enc = cert["result"]["enclosure"]
    return Fraction(enc["lo"]), Fraction(enc["hi"])


def _expected(lo, hi, claimed):
    return "holds" if hi <= claimed else "fails" if lo > claimed else "undecided"


def test_each_verdict_for_what_was_run_matches_the_verified_bracket(capsys):
    recs = _records()
    assert recs and all(r["implementation_sampling"] in ("shuffle", "shuffle-persistent") for r in recs)
    code, rows = _audit(FILE, capsys)
    for rec in recs:
        lo, hi = _certified_bracket(rec, rec["implementation_sampling"], capsys)
        want = _expected(lo, hi, Fraction(rec["claimed_eps"]))
        row = rows[rec["id"]]
        assert row["verdict"] == want, (rec["id"], lo, hi)
        assert f"so for what was run the claim: {want}" in row["reason"]
        # the row reports the verified bracket (its decimal ends, outward)
        assert Fraction(row["certified"]["lo"]) <= lo and hi <= Fraction(row["certified"]["hi"])
    assert code == (1 if any(r["verdict"] == "fails" for r in rows.values()) else 0)
    # the TF tutorial's dynamic shuffles: the pair "others -1, x* against an empty slot" gives lower
    # ends of about 3.2 (15 epochs) and 2.13 (3 epochs), both above the printed 1.18
    tf = [r for r in recs if r["id"].startswith("tf-classification") and r["implementation_sampling"] == "shuffle"]
    assert tf and all(rows[r["id"]]["verdict"] == "fails" for r in tf)


def test_the_15_epoch_claim_fails_for_a_persistent_shuffle(tmp_path, capsys):
    # 15 epochs of one reused permutation: the summed batch positions are one epoch with
    # mu sqrt(15), and the concrete pair's certified lower end (about 11) is far above 1.18
    rec = next(r for r in _records() if r["epochs"] == "15")
    rec = dict(rec, id=rec["id"] + "-persistent", implementation_sampling="shuffle-persistent")
    f = tmp_path / "persistent.jsonl"
    f.write_text(json.dumps(rec) + "\n")
    code, rows = _audit(f, capsys)
    lo, hi = _certified_bracket(rec, "shuffle-persistent", capsys)
    assert lo > Fraction(rec["claimed_eps"])  # the verified lower end exceeds the printed Poisson number
    assert rows[rec["id"]]["verdict"] == "fails" and code == 1
    assert "for what was run the claim: fails" in rows[rec["id"]]["reason"]
