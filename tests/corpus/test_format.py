"""The corpus claim format: strict records, exact parameters, written-out step rules."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

from dpverify.cli import main
from dpverify.corpus import load_corpus
from dpverify.theorems.records import InvalidRecord

BASE = {"id": "c1", "source": "a tutorial", "location": "https://example.org/t#L3", "quote": "eps = 3.01",
        "mechanism": "dpsgd-poisson", "noise_multiplier": "1.1", "batch_size": 256, "dataset_size": 60000,
        "epochs": "60", "steps_rule": "ceil", "delta": "1e-5", "claimed_eps": "3.01", "accountant": "rdp"}


def write(tmp_path: Path, *recs: dict) -> Path:
    p = tmp_path / "c.jsonl"
    p.write_text("// header comment\n\n" + "".join(json.dumps(r) + "\n" for r in recs))
    return p


@pytest.mark.parametrize("rule, steps", [
    # 60 * 60000 / 256 = 14062.5 exactly
    ("ceil", 14063), ("floor", 14062),
    # 60000 // 256 = 234 full batches (+ one partial): 60 * 234 and 60 * 235
    ("per-epoch-floor", 14040), ("per-epoch-ceil", 14100),
])
def test_steps_rules_are_exact(tmp_path, rule, steps):
    (c,) = load_corpus(write(tmp_path, dict(BASE, steps_rule=rule)))
    assert c.steps == steps and c.sampling_rate == Fraction(256, 60000)
    assert f"gives {steps} steps by {rule}" in c.derivation
    assert {t for _, t in c.alternatives} == {14063, 14062, 14040, 14100} - {steps}


def test_default_relation_is_recorded_and_x_fields_pass(tmp_path):
    (c,) = load_corpus(write(tmp_path, dict(BASE, x_reviewer="me", x_page=3)))
    assert c.neighboring == "add-remove" and c.neighboring_defaulted
    (c,) = load_corpus(write(tmp_path, dict(BASE, neighboring="remove")))
    assert c.neighboring == "remove" and not c.neighboring_defaulted


def test_exact_rate_and_interval_claims(tmp_path):
    rec = {k: v for k, v in BASE.items() if k not in ("batch_size", "dataset_size", "epochs", "steps_rule")}
    (c,) = load_corpus(write(tmp_path, dict(rec, sampling_rate="0.04", steps=2249, claimed_eps="(6.59, 6.6)")))
    assert c.sampling_rate == Fraction(1, 25) and c.steps == 2249
    assert (c.claimed_lo, c.claimed) == (Fraction("6.59"), Fraction("6.6"))
    # epochs with an exact rate: N/B = 1/q; 90 epochs at q = 1/25 is 2250 steps by every rule
    (c,) = load_corpus(write(tmp_path, dict(rec, sampling_rate="1/25", epochs="90", steps_rule="floor")))
    assert c.steps == 2250 and c.alternatives == ()


STEPLESS = {k: v for k, v in BASE.items() if k not in ("epochs", "steps_rule")}


@pytest.mark.parametrize("record, field, text", [
    (dict(BASE, epoch="60"), "epoch", "unknown field; did you mean epochs?"),
    (dict(BASE, sampling_rate=0.004266666666666667), "sampling_rate",
     "0.004266666666666667 is not a string (an exact decimal or fraction as a string (a JSON number would be a "
     "binary float))"),
    (dict({k: v for k, v in BASE.items() if k not in ("batch_size", "dataset_size")},
          sampling_rate="0.004266666666666667"), "sampling_rate", "looks like a printed binary float"),
    (dict(BASE, sampling_rate="256/60000"), "sampling_rate", "not both"),
    ({k: v for k, v in BASE.items() if k != "delta"}, "delta", "missing"),
    ({k: v for k, v in BASE.items() if k not in ("batch_size", "dataset_size")}, "sampling_rate", "missing"),
    (STEPLESS, "steps", "missing"),
    (dict(BASE, steps_rule="round"), "steps_rule", "must be one of ceil, floor"),
    (dict(BASE, steps=10), "epochs", "not both"),
    (dict(BASE, delta="0"), "delta", "must be in (0, 1)"),
    (dict(BASE, delta="1"), "delta", "must be in (0, 1)"),
    (dict(BASE, noise_multiplier="-1"), "noise_multiplier", "must be > 0"),
    (dict(BASE, noise_multiplier="abc"), "noise_multiplier", "is not a number"),
    (dict(BASE, claimed_eps="inf"), "claimed_eps", "finite"),
    (dict(BASE, claimed_eps="(6.6, 6.59)"), "claimed_eps", "lo > hi"),
    (dict(BASE, batch_size=70000), "batch_size", "<= dataset_size"),
    (dict(BASE, epochs="1e9"), "epochs", "steps; allowed"),
    (dict(BASE, neighboring="add_remove"), "neighboring", "is not one of"),
    (dict(BASE, mechanism="dpsgd"), "mechanism", "is not one of"),
    # exactly one of claimed_eps (with delta) / claimed_delta (with eps)
    (dict(BASE, claimed_delta="1e-6"), "claimed_delta", "not both"),
    ({k: v for k, v in BASE.items() if k != "claimed_eps"}, "claimed_eps", "missing"),
    (dict({k: v for k, v in BASE.items() if k not in ("claimed_eps", "delta")}, claimed_delta="1e-6"),
     "eps", "missing"),
    (dict({k: v for k, v in BASE.items() if k != "claimed_eps"}, claimed_delta="1e-6", eps="1"), "delta",
     "takes eps, not delta"),
    (dict(BASE, eps="1"), "eps", "takes delta, not eps"),
    (dict({k: v for k, v in BASE.items() if k not in ("claimed_eps", "delta")}, claimed_delta="1", eps="1"),
     "claimed_delta", "must be in (0, 1)"),
    (dict({k: v for k, v in BASE.items() if k not in ("claimed_eps", "delta")}, claimed_delta="1e-6", eps="-1"),
     "eps", ">= 0"),
    # other_version: location + quote + at least one changed parameter, each checked like the record's
    (dict(BASE, other_version={"location": "u", "quote": "q"}), "other_version", "change at least one"),
    (dict(BASE, other_version={"location": "u", "epochs": "15"}), "other_version.quote", "missing"),
    (dict(BASE, other_version={"location": "u", "quote": "q", "epoch": "15"}), "other_version.epoch",
     "unknown field; did you mean epochs?"),
    (dict(BASE, other_version={"location": "u", "quote": "q", "epochs": "-15"}), "other_version.epochs",
     "must be > 0"),
])
def test_bad_records_name_record_and_field(tmp_path, record, field, text):
    path = write(tmp_path, dict(BASE, id="ok"), dict(record, id="bad"))
    with pytest.raises(InvalidRecord) as e:
        load_corpus(path)
    assert "record 2 (line 4)" in str(e.value), str(e.value)
    assert e.value.field == field and text in str(e.value), str(e.value)


def test_delta_claims_and_other_versions_resolve_exactly(tmp_path):
    rec = {k: v for k, v in BASE.items() if k not in ("claimed_eps", "delta")}
    rec.update(claimed_delta="4.243484012034273e-06", eps="1.0", neighboring="remove",
               other_version={"location": "https://example.org/old", "quote": "epochs = 15", "epochs": "15"})
    (c,) = load_corpus(write(tmp_path, rec))
    assert (c.target, c.given, c.claimed) == ("delta", Fraction(1), Fraction("4.243484012034273e-06"))
    assert c.quantity == "delta(eps=1)" and c.claimed_text == "4.243484012034273e-06"
    # the other version keeps everything but the changed epochs: ceil(15 * 60000 / 256) = 3516
    assert c.steps == 14063 and c.other is not None and c.other.steps == 3516
    assert c.other.target == "delta" and c.other.neighboring == "remove" and c.other_changes == "epochs = 15"
    # a changed rate replaces batch_size + dataset_size (and the steps rule then uses N / B = 1 / q)
    (c,) = load_corpus(write(tmp_path, dict(BASE, other_version={"location": "u", "quote": "q",
                                                                 "sampling_rate": "1/250"})))
    assert c.other.sampling_rate == Fraction(1, 250) and c.other.steps == 15000


def test_cli_refuses_bad_files_with_exit_2(tmp_path, capsys):
    path = write(tmp_path, dict(BASE, epoch="60"))
    assert main(["audit", "corpus", str(path)]) == 2
    err = capsys.readouterr().err
    assert "record 1" in err and "epoch: unknown field" in err
    assert main(["audit", "corpus", str(tmp_path / "none.jsonl")]) == 2
    (tmp_path / "junk.jsonl").write_text("{not json\n")
    assert main(["audit", "corpus", str(tmp_path / "junk.jsonl")]) == 2
    assert "not valid JSON" in capsys.readouterr().err
    ok = write(tmp_path, BASE)
    assert main(["audit", "corpus", str(ok), "--report", str(tmp_path / "r.txt")]) == 2
    assert main(["audit", "corpus", str(ok), "--plot", str(tmp_path / "missing" / "p.png")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_committed_corpus_is_valid_and_sourced():
    claims = load_corpus(Path(__file__).resolve().parents[2] / "corpus" / "dpsgd.jsonl")
    assert len(claims) >= 20
    for c in claims:
        assert c.record["location"].startswith("https://") and c.record["quote"]
