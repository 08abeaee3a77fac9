"""audit corpus per record: a record no certified route covers is an undecided row with
its reason, and the rest of the file is still audited (exit 2 only for malformed files).
A Poisson replace-one epsilon or delta claim is decided by the group-privacy bracket."""

import importlib
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
    # a delta claim under replace-one is bracketed too: [remove curve, group privacy] at eps = 1
    # straddles 1e-5 (below)
    assert rows["replace-one-delta"]["verdict"] == "undecided"
    assert "straddles the claimed 1e-5" in rows["replace-one-delta"]["reason"]
    assert code == 1  # one claim fails; nothing refused the file


def test_replace_one_delta_claims_are_decided_by_the_bracket(tmp_path, capsys):
    """delta(1) under replace-one, sigma 1, q 0.01, T 100. Independent route: dp_accounting's
    PLD accountant under REPLACE_ONE (its pair is realised by a dataset pair, so its delta is
    at most the truth, and the truth is at most the bracket's upper end): 1e-2 lies above
    both, 1e-12 below both."""
    import dp_accounting as dpa
    from dp_accounting import dp_event, pld

    acc = pld.PLDAccountant(dpa.NeighboringRelation.REPLACE_ONE, value_discretization_interval=1e-4)
    acc.compose(dp_event.PoissonSampledDpEvent(0.01, dp_event.GaussianDpEvent(1.0)), 100)
    peer = acc.get_delta(1.0)
    assert 1e-12 < peer < 1e-2
    recs = [dict(BASE, id=f"d-{x}", neighboring="replace-one", eps="1", claimed_delta=x) for x in ("1e-2", "1e-12")]
    for r in recs:
        r.pop("delta")
    f = tmp_path / "d.jsonl"
    f.write_text("\n".join(json.dumps(r) for r in recs) + "\n")
    assert main(["audit", "corpus", str(f), "--json"]) == 1
    rows = {r["id"]: r for r in json.loads(capsys.readouterr().out)["rows"]}
    assert rows["d-1e-2"]["verdict"] == "holds" and rows["d-1e-12"]["verdict"] == "fails"


def test_a_poisson_number_below_the_shuffled_lower_end_fails_for_what_was_run(tmp_path, capsys):
    # MNIST tutorial settings (TF Privacy prints 3.01 for Poisson sampling); a persistent shuffle's
    # certified lower end (a concrete dataset pair, about 52) is far above it
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
    # dynamic shuffling too: the lower end of the pair "others -1, x* against an empty slot" is about
    # 10.8 (the bracket [10.84, 54.05]); the earlier pair "others 0" gave 1.13 and left 3.01 undecided
    assert rows["m-shuffle"]["verdict"] == "fails" and "for what was run" in rows["m-shuffle"]["reason"]


def test_a_stopped_refinement_keeps_the_row_and_its_best_enclosure_decides(tmp_path, capsys, monkeypatch):
    """A claim within the 3-digit enclosure needs the 6-digit refinement. When that
    refinement is stopped (time or memory), the row stays: the best enclosure the stopped
    run reached decides the claim if it can (every level's bounds are certified), else
    the completed 3-digit answer stands as undecided. The stopped run is simulated around
    the real accountant: no enclosure at all, or the real 6-digit enclosure handed back as
    the stopped run's best. Independent route: exact comparison of the claim with that
    6-digit enclosure, computed without any stop."""
    from fractions import Fraction

    from dpverify.ball import arb_to_fraction, endpoints
    from dpverify.errors import PrecisionExhausted

    A = importlib.import_module("dpverify.corpus.audit")  # the module (the package exports a function)
    real = A.S.dpsgd_epsilon
    six = real(Fraction(1), Fraction(1, 100), 100, Fraction(1, 10**5), neighboring="add-remove", digits=6)
    lo, hi = arb_to_fraction(endpoints(six.enclosure.lo)[0]), arb_to_fraction(endpoints(six.enclosure.hi)[1])
    claimed = hi + (hi - lo)  # above the 6-digit enclosure, inside the 3-digit one (checked below)
    f = tmp_path / "n.jsonl"
    f.write_text(json.dumps(dict(BASE, id="near", claimed_eps=f"{claimed.numerator}/{claimed.denominator}")) + "\n")

    def stopped(best):
        def run(*args, digits, **kw):
            if digits == A.REFINE_DIGITS:
                exc = PrecisionExhausted("stopped by the test")
                exc.best_enclosure = best  # type: ignore[attr-defined]
                raise exc
            return real(*args, digits=digits, **kw)
        return run

    monkeypatch.setattr(A.S, "dpsgd_epsilon", stopped((Fraction(0), None)))
    main(["audit", "corpus", str(f), "--json"])
    row = json.loads(capsys.readouterr().out)["rows"][0]
    assert row["verdict"] == "undecided"  # the completed 3-digit enclosure straddles the claim

    monkeypatch.setattr(A.S, "dpsgd_epsilon", stopped((lo, hi)))
    assert main(["audit", "corpus", str(f), "--json"]) == 0
    row = json.loads(capsys.readouterr().out)["rows"][0]
    assert row["verdict"] == "holds" and Fraction(row["certified"]["hi"]) <= claimed


def test_a_row_the_clock_stopped_says_so_and_the_exit_is_3(tmp_path, capsys):
    """The time budget may stop a computation but never shape a completed row: a row whose
    computation it stopped is marked (``stopped_by_clock``, and the reason says the row follows
    the load) and the run answers exit 3; with the default budget the same file completes
    (eps(1e-5) ~ 0.72 <= 1 at these settings, as in the first test) with no mark, exit 0."""
    f = tmp_path / "c.jsonl"
    f.write_text(json.dumps(dict(BASE, id="poisson-ar-holds", claimed_eps="1")) + "\n")
    code = main(["audit", "corpus", str(f), "--json", "--time-budget", "0.001"])
    (row,) = json.loads(capsys.readouterr().out)["rows"]
    assert code == 3 and row["stopped_by_clock"] is True and row["verdict"] == "undecided"
    assert "stopped by its time budget" in row["reason"]
    code = main(["audit", "corpus", str(f), "--json"])
    (row,) = json.loads(capsys.readouterr().out)["rows"]
    assert code == 0 and "stopped_by_clock" not in row and row["verdict"] == "holds"
    assert main(["audit", "corpus", str(f), "--time-budget", "0"]) == 2
    assert "--time-budget" in capsys.readouterr().err
