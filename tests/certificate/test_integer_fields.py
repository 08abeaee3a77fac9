"""Issue 22: counts are JSON integers, and a number too long for Python's int is refused by name.

A count written as a float (``"dataset_size": 60000.0``) passed the certificate schema (Draft 2020-12
counts 60000.0 as an integer) and was refused later by a check that did not say why, or, in a corpus
record, ended in an internal error; a 5,000-digit JSON integer leaked Python's "use
sys.set_int_max_str_digits()" advice (verify, corpus records, sweep grids) or crashed (a TOML grid).
Each is now exit 2 naming the file, the path inside it and what is required. The writer, the schema
and verify agree: the writer's counts (``certificate.format.COUNT_KEYS``) are the schema's integers,
and no certificate a released version wrote holds a float (rule 9)."""

import glob
import json
from pathlib import Path

import pytest

from dpverify.certificate.format import COUNT_KEYS, load_schema, schema_errors, FORMAT
from dpverify.cli import main
from dpverify.recheck.verify import verify_file

from ..certs import reseal

ROOT = Path(__file__).resolve().parents[2]
F2 = Path(__file__).parent / "format2"
LONG = "7" * 5000


def _floats(obj, path=""):
    if isinstance(obj, float):
        yield path
    elif isinstance(obj, dict):
        for k, v in obj.items():
            yield from _floats(v, f"{path}.{k}")
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _floats(v, f"{path}[{i}]")


def _released():
    names = [*glob.glob(str(ROOT / "certificates" / "**" / "*.json"), recursive=True),
             *glob.glob(str(ROOT / "tests" / "certificate" / "format1" / "*.json")),
             *glob.glob(str(F2 / "*.json")), str(ROOT / "docs" / "reports" / "oracle-battery.json")]
    return sorted(set(names))


def test_released_certificates_hold_no_float_count_and_meet_the_strict_schema():
    """Rule 9: the stricter reading of "integer" refuses nothing a released version wrote."""
    names = _released()
    assert len(names) > 250
    for name in names:
        cert = json.loads(Path(name).read_text())
        assert schema_errors(cert) == [], name
        ins = cert.get("inputs", {})
        assert not [k for k in COUNT_KEYS if isinstance(ins.get(k), float)], name


def test_the_writers_counts_are_the_schemas_integers():
    inputs = load_schema(FORMAT)["properties"]["inputs"]["properties"]
    defs = load_schema(FORMAT)["$defs"]

    def is_int(spec):
        spec = defs[spec["$ref"].rsplit("/", 1)[1]] if "$ref" in spec else spec
        return spec.get("type") == "integer"

    assert {k for k, v in inputs.items() if is_int(v)} == set(COUNT_KEYS)


@pytest.mark.parametrize("fixture,edit,where", [
    ("pld-epsilon-epochs.json", lambda c: c["inputs"].__setitem__("dataset_size", 1000.0), "inputs.dataset_size"),
    ("pld-epsilon-epochs.json", lambda c: c["inputs"].__setitem__("batch_size", 100.0), "inputs.batch_size"),
    ("pld-epsilon-epochs.json", lambda c: c["inputs"].__setitem__("steps", 10.0), "inputs.steps"),
    ("pld-epsilon-epochs.json", lambda c: c["inputs"].__setitem__("digits", 3.0), "inputs.digits"),
    ("pld-epsilon-legacy-events.json", lambda c: c["inputs"]["events"][1].__setitem__("count", 50.0),
     "inputs.events[1].count"),
    ("events-epsilon-wor.json", lambda c: c["inputs"]["event"].__setitem__("count", 100.0), "inputs.event.count"),
    ("events-epsilon-wor.json", lambda c: c["inputs"]["event"]["event"].__setitem__("source_dataset_size", 6e4),
     "inputs.event.event.source_dataset_size"),
])
def test_a_count_written_as_a_float_is_refused_by_the_schema_naming_its_path(fixture, edit, where, tmp_path):
    """Before: dataset_size 1000.0 was refused as "inputs.dataset_size and batch_size must be counts
    with 1 <= batch_size <= dataset_size <= 1e12", and an event tree's count 100.0 as "inputs.event:
    count must be an integer" (no path inside the tree)."""
    cert = json.loads((F2 / fixture).read_text())
    edit(cert)
    p = tmp_path / "c.json"
    p.write_text(json.dumps(reseal(cert)))
    code, msg = verify_file(p)
    assert code == 2, msg
    assert where in msg and "an integer is required" in msg, msg


def test_a_5000_digit_integer_in_a_certificate_is_named_not_pythons_advice(tmp_path):
    text = (F2 / "pld-epsilon-epochs.json").read_text().replace('"digits": 3', f'"digits": {LONG}')
    p = tmp_path / "c.json"
    p.write_text(text)
    code, msg = verify_file(p)
    assert code == 2
    assert "inputs.digits: an integer of 5000 digits is too long" in msg and "sys." not in msg, msg


def test_a_5000_digit_integer_or_a_float_count_in_a_corpus_record(tmp_path, capsys):
    """`audit corpus`: the 5,000-digit integer leaked Python's advice; batch_size 256.0 ended in an
    internal error (TypeError, exit 4)."""
    line = next(s for s in (ROOT / "corpus" / "dpsgd.jsonl").read_text().splitlines() if s.startswith("{"))
    rec = json.loads(line)
    assert isinstance(rec["batch_size"], int)
    for value, want in ((LONG, "batch_size: an integer of 5000 digits is too long"),
                        (f"{rec['batch_size']}.0", "batch_size: 256.0 is not an integer: an integer is required")):
        p = tmp_path / "c.jsonl"
        p.write_text(line.replace(f'"batch_size": {rec["batch_size"]}', f'"batch_size": {value}'))
        assert main(["audit", "corpus", str(p)]) == 2
        err = capsys.readouterr().err
        assert want in err and "sys." not in err and "internal error" not in err, err


@pytest.mark.parametrize("suffix,text,want", [
    (".toml", f'task = "audit"\n[fixed]\nsteps = {LONG}\n', "an integer of more than 4300 digits is too long"),
    (".json", f'{{"task": "audit", "fixed": {{"steps": {LONG}}}}}', "fixed.steps: an integer of 5000 digits"),
])
def test_a_5000_digit_integer_in_a_sweep_grid(suffix, text, want, tmp_path, capsys):
    """Before: the TOML grid was an internal error (tomllib's int() raised ValueError, exit 4), the
    JSON grid "not a grid (Exceeds the limit (4300 digits) ... use sys.set_int_max_str_digits() ...)"."""
    grid = tmp_path / f"g{suffix}"
    grid.write_text(text)
    assert main(["sweep", str(grid), "--workers", "1", "--no-cache", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert want in err and "sys." not in err and "internal error" not in err, err


def test_a_5000_digit_count_or_a_float_count_in_an_events_file(tmp_path, capsys):
    """The producer's --events reader already kept long literals unconverted and refused 10.0 by path;
    kept so."""
    for value, want in ((LONG, "events[0].count"), ("10.0", "events[0].count: '10.0' must be an integer")):
        p = tmp_path / "e.json"
        p.write_text('{"events": [{"type": "self_composed", "count": %s, "event": {"type": "gaussian", '
                     '"noise_multiplier": "1"}}]}' % value)
        assert main(["audit", "dpsgd", "--events", str(p), "--delta", "1e-5"]) == 2
        err = capsys.readouterr().err
        assert want in err and "sys." not in err, err
