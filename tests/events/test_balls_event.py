"""The balls_in_bins event of the JSON format: answered whole by the bins.* kinds,
refused inside any composition, read strictly.

Independent routes: the bins.* certificate is re-proved by ``verify`` (MPFR / GMP, nothing
from the arb side), and the same run given as ``--sampling balls-in-bins`` options must give
the same enclosure (one computation, two front ends)."""

import copy
import json

import pytest

from dpverify.certificate import compute_digest, verify_certificate
from dpverify.cli import main
from dpverify.errors import CertificateRejected, CouldNotReprove
from dpverify.events import load_schema, parse_document
from dpverify.events import model as E
from dpverify.events.json_format import event_to_json

jsonschema = pytest.importorskip("jsonschema")

BINS = {"type": "balls_in_bins", "dataset_size": 600, "batch_size": 100, "epochs": 1,
        "event": {"type": "gaussian", "noise_multiplier": "1.1"}}


def _run(tmp_path, capsys, doc, *query):
    path = tmp_path / "events.json"
    path.write_text(json.dumps(doc))
    capsys.readouterr()
    code = main(["audit", "dpsgd", "--events", str(path), *query, "--json"])
    out = capsys.readouterr()
    return code, (json.loads(out.out) if code in (0, 1, 3) else None), out.err


@pytest.mark.parametrize("query, kind", [(["--delta", "1e-5"], "bins.epsilon"), (["--eps", "2"], "bins.delta"),
                                         (["--delta", "1e-5", "--claimed-eps", "2.5"], "bins.claim")])
def test_the_event_is_the_options_run(tmp_path, capsys, query, kind):
    code, cert, err = _run(tmp_path, capsys, {"neighboring": "remove", "event": BINS}, *query)
    assert code == 0, err
    assert cert["claim"]["quantity"] == kind
    capsys.readouterr()
    assert main(["audit", "dpsgd", "--sampling", "balls-in-bins", "--noise-multiplier", "1.1", "--dataset-size",
                 "600", "--batch-size", "100", "--epochs", "1", "--neighboring", "remove", *query, "--json"]) == 0
    same = json.loads(capsys.readouterr().out)
    assert cert["result"]["enclosure"] == same["result"]["enclosure"] and cert["inputs"] == same["inputs"]
    assert "confirmed" in verify_certificate(cert)
    bad = copy.deepcopy(cert)
    bad["result"]["enclosure"]["lo"] = bad["result"]["enclosure"]["hi"] = str(float(cert["result"]["enclosure"]["hi"]) * 2)
    bad["digest"] = compute_digest(bad)
    with pytest.raises((CertificateRejected, CouldNotReprove)):
        verify_certificate(bad)


@pytest.mark.parametrize("doc", [
    {"event": {"type": "composed", "events": [BINS, {"type": "gaussian", "noise_multiplier": "3"}]}},
    {"events": [BINS, BINS]},
    {"event": {"type": "self_composed", "count": 2, "event": BINS}},
    {"event": {"type": "poisson_sampled", "sampling_probability": "0.5", "event": BINS}},
])
def test_composed_with_other_events_it_is_refused_with_the_reason(tmp_path, capsys, doc):
    code, _, err = _run(tmp_path, capsys, doc, "--delta", "1e-5")
    assert code == 2 and "whole epoch structure" in err and "AFA Thm 10" in err, err


@pytest.mark.parametrize("edit, needle", [
    (lambda n: n.pop("epochs"), "missing key 'epochs'"),
    (lambda n: n.__setitem__("epoch", 1), "event.epoch: unknown key; did you mean epochs? (allowed keys: type, "
                                          "dataset_size, batch_size, epochs, event)"),
    (lambda n: n.__setitem__("event", {"type": "laplace", "noise_multiplier": "1"}),
     "event.event.type: balls_in_bins wraps a Gaussian step only (allowed types: gaussian"),
    (lambda n: n.__setitem__("epochs", 0), "event.epochs: 0 must be an integer in [1,"),
    (lambda n: n.__setitem__("batch_size", 700), "event.batch_size: must be <= dataset_size"),
    (lambda n: n.__setitem__("batch_size", 7), "balls_in_bins.batch_size: balls-in-bins needs the number of bins"),
    (lambda n: n["event"].__setitem__("noise_multiplier", "0"), "event.event.noise_multiplier: 0 must be in (0, 1e100]"),
])
def test_strict_reading(tmp_path, capsys, edit, needle):
    node = copy.deepcopy(BINS)
    edit(node)
    code, _, err = _run(tmp_path, capsys, {"event": node}, "--delta", "1e-5")
    assert code == 2 and needle in err and "Traceback" not in err, err
    # the shipped schema refuses what the reader refuses (except the divisibility rule, a run check)
    if "balls_in_bins.batch_size" not in needle and "must be <=" not in needle and "> 0" not in needle \
            and "in (0, " not in needle:
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate({"event": node}, load_schema())


def test_relation_outside_the_pair_is_refused(tmp_path, capsys):
    code, _, err = _run(tmp_path, capsys, {"neighboring": "replace-one", "event": BINS}, "--delta", "1e-5")
    assert code == 2 and "neighboring: replace-one: the balls-in-bins pair is proved for add/remove" in err, err


def test_json_round_trip_and_schema():
    tree, rel = parse_document({"event": BINS})
    assert tree == E.BallsInBins(600, 100, 1, E.Gaussian(parse_document(
        {"event": {"type": "gaussian", "noise_multiplier": "1.1"}})[0].noise_multiplier)) and rel is None
    assert event_to_json(tree) == BINS
    jsonschema.validate({"neighboring": "add-remove", "event": BINS}, load_schema())


def test_the_library_answers_the_document_the_cli_answers(tmp_path, capsys):
    """``dpverify.epsilon/delta/check_claim`` read the one event format as the CLI does: a
    balls_in_bins document is answered whole, with the CLI's enclosure (whose certificate
    ``verify`` re-proves above), and decided on it."""
    import dpverify
    from dpverify.events.api import BINS_SUPPORT, supports

    doc = {"neighboring": "remove", "event": BINS}
    code, cert, err = _run(tmp_path, capsys, doc, "--delta", "1e-5")
    assert code == 0, err
    ans = dpverify.epsilon(doc, "1e-5")
    assert ans.details["bracket"] == cert["result"]["enclosure"]
    lo, hi = (float(cert["result"]["enclosure"][k]) for k in ("lo", "hi"))
    assert ans.enclosure.lo <= lo and hi <= ans.enclosure.hi
    assert dpverify.check_claim(doc, str(lo * 0.99), "1e-5")[0].outcome.value == "fails"
    assert dpverify.check_claim(doc, str(hi * 1.01), "1e-5")[0].outcome.value == "holds"
    code, dcert, err = _run(tmp_path, capsys, doc, "--eps", "2")
    assert dpverify.delta(doc, "2").details["bracket"] == dcert["result"]["enclosure"]
    assert supports(doc) == (True, BINS_SUPPORT)
    with pytest.raises(dpverify.InvalidParameter) as exc:
        dpverify.epsilon(doc, "1e-5", rel_width=1e-3)
    assert exc.value.name == "rel_width"
    ok, why = supports({"events": [BINS, BINS]})
    assert not ok and "whole epoch structure" in why
