"""audit corpus per record: a record no certified route covers is an undecided row with
its reason, and the rest of the file is still audited (exit 2 only for malformed files).
A Poisson replace-one epsilon claim is decided by the group-privacy bracket."""

import json

from dpverify.cli import main

BASE = {"source": "test", "location": "here", "quote": "q", "mechanism": "dpsgd-poisson", "noise_multiplier": "1",
        "sampling_rate": "0.01", "steps": 100, "delta": "1e-5", "accountant": "rdp"}


def test_unsupported_record_is_an_undecided_row_and_the_rest_is_audited(tmp_path, capsys):
    recs = [dict(BASE, id="poisson-ar-holds", claimed_eps="1"),
            dict(BASE, id="replace-one-eps-fails", neighboring="replace-one", claimed_eps="0.5"),
            dict(BASE, id="replace-one-delta", neighboring="replace-one", eps="1", claimed_delta="1e-5",
                 delta=None)]
    recs[2].pop("delta")
    f = tmp_path / "c.jsonl"
    f.write_text("\n".join(json.dumps(r) for r in recs) + "\n")
    code = main(["audit", "corpus", str(f), "--json"])
    out = json.loads(capsys.readouterr().out)
    rows = {r["id"]: r for r in out["result"]["rows"]} if "result" in out else {r["id"]: r for r in out["rows"]}
    assert rows["poisson-ar-holds"]["verdict"] == "holds"  # eps(1e-5) ~ 0.72 at these settings
    # the zero-gradient replacement's eps (~0.718) exceeds 0.5: fails for replace-one
    assert rows["replace-one-eps-fails"]["verdict"] == "fails"
    assert rows["replace-one-delta"]["verdict"] == "undecided"
    assert "no certified answer" in rows["replace-one-delta"]["reason"]
    assert code == 1  # one claim fails; nothing refused the file


def test_a_poisson_number_below_the_shuffled_lower_end_fails_for_what_was_run(tmp_path, capsys):
    # MNIST tutorial settings (TF Privacy prints 3.01 for Poisson sampling); a persistent shuffle's
    # certified lower end (a concrete dataset pair, about 48) is far above it
    rec = {"id": "mnist-shuffled", "source": "test", "location": "here", "quote": "q", "mechanism": "dpsgd-poisson",
           "noise_multiplier": "1.1", "batch_size": 256, "dataset_size": 60000, "epochs": "60",
           "steps_rule": "per-epoch-floor", "delta": "1e-5", "claimed_eps": "3.01", "accountant": "rdp"}
    f = tmp_path / "s.jsonl"
    f.write_text("\n".join(json.dumps(dict(rec, id=f"m-{k}", implementation_sampling=k))
                           for k in ("poisson", "shuffle-persistent", "shuffle")) + "\n")
    assert main(["audit", "corpus", str(f), "--json"]) == 1
    rows = {r["id"]: r for r in json.loads(capsys.readouterr().out)["rows"]}
    assert rows["m-poisson"]["verdict"] == "holds"
    assert rows["m-shuffle-persistent"]["verdict"] == "fails" and "for what was run" in rows["m-shuffle-persistent"]["reason"]
    assert rows["m-shuffle"]["verdict"] == "undecided"  # 3.01 lies inside the dynamic bracket [1.13, 54.05]
