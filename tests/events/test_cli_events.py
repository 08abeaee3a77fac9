"""`dpverify audit dpsgd --events FILE` with DpEvent-style trees: certificates
that verify, forgeries that are refused, strict input errors (exit 2)."""

import copy
import json

import pytest

from dpverify.recheck.verify import verify_certificate
from dpverify.certificate.writer import compute_digest
from dpverify.cli import main
from dpverify.errors import CertificateRejected

TREE = {"neighboring": "add-remove", "events": [
    {"type": "self_composed", "count": 10, "event": {"type": "poisson_sampled", "sampling_probability": "0.1",
                                                      "event": {"type": "gaussian", "noise_multiplier": "2"}}},
    {"type": "self_composed", "count": 10, "event": {"type": "sampled_without_replacement",
                                                      "source_dataset_size": 100, "sample_size": 10,
                                                      "event": {"type": "laplace", "noise_multiplier": "8"}}},
    {"type": "epsilon_delta", "epsilon": "0.1", "delta": "1e-8"}]}


def _run(capsys, tmp_path, doc, *extra):
    f = tmp_path / "ev.json"
    f.write_text(json.dumps(doc))
    try:
        code = main(["audit", "dpsgd", "--events", str(f), *extra])
    except SystemExit as exc:
        code = exc.code
    return code, capsys.readouterr()


def _forge(cert):
    bad = copy.deepcopy(cert)
    enc = bad["result"].get("enclosure")
    if enc and enc["hi"] != "inf":
        enc.update(lo=repr(3 * float(enc["lo"]) + 1), hi=repr(3 * float(enc["hi"]) + 1))
    else:
        bad["result"]["verdict"] = {"holds": "fails", "fails": "holds"}.get(bad["result"]["verdict"], "holds")
    bad["digest"] = compute_digest(bad)
    return bad


@pytest.mark.parametrize("query, kind", [(["--delta", "1e-5"], "events.epsilon"),
                                          (["--eps", "1"], "events.delta"),
                                          (["--delta", "1e-5", "--claimed-eps", "3"], "events.claim")])
def test_tree_certificates_verify_and_forgeries_are_refused(query, kind, capsys, tmp_path):
    # --digits sets an enclosure's width; a --claimed-eps verdict refuses it (docs/reference/inputs.md)
    digits = [] if "--claimed-eps" in query else ["--digits", "3"]
    code, out = _run(capsys, tmp_path, TREE, *query, *digits, "--json")
    assert code in (0, 1), out.err
    cert = json.loads(out.out)
    assert cert["claim"]["quantity"] == kind
    assert "2C" in cert["inputs"]["sensitivity_convention"]
    assert "confirmed" in verify_certificate(cert)
    with pytest.raises(CertificateRejected):
        verify_certificate(_forge(cert))


@pytest.mark.parametrize("doc, needle", [
    ({"events": [{"steps": 1000, "noise_multiplier": "1", "sampling_rate": "0.01"}]},
     "events[0].steps: unknown key; did you mean count?"),
    ({"events": [{"noise_multiplier": "1", "sampling_rate": "0.01"}]}, "missing key 'count'"),
    # Poisson sampling under replace-one is bracketed by group privacy, which needs add/remove
    # curves: a randomized-response step has none, so neither route covers the tree
    ({"neighboring": "replace-one", "event": {"type": "composed", "events": [
        {"type": "poisson_sampled", "sampling_probability": "0.1", "event": {"type": "gaussian",
                                                                             "noise_multiplier": "1"}},
        {"type": "randomized_response", "noise_parameter": "0.5", "num_buckets": 2}]}},
     "no add/remove pair"),
])
def test_bad_event_files_exit_2(doc, needle, capsys, tmp_path):
    code, out = _run(capsys, tmp_path, doc, "--delta", "1e-5")
    assert code == 2 and needle in out.err and "Traceback" not in out.err


def test_help_states_the_sensitivity_convention(capsys):
    with pytest.raises(SystemExit):
        main(["audit", "dpsgd", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "2C" in text and "replace-special" in text


def test_equal_events_of_a_composition_are_one_leaf_on_both_sides(tmp_path, capsys):
    """dp_accounting's usual loop composes one event per training step; with a cap on
    mechanism leaves (each discretised and composed on its own) 100 such steps were refused.
    Equal events are one leaf repeated (composition commutes), in the producer and in verify.
    Independent route: the same steps written as one self_composed count give the same
    certified enclosure, and verify re-derives the certificate of the list."""
    import dp_accounting

    from dpverify.accountants import CertifiedPLDAccountant
    from dpverify.certificate import verify_certificate
    from dpverify.cli import main

    ev = dp_accounting.PoissonSampledDpEvent(0.01, dp_accounting.GaussianDpEvent(1.0))
    per_step, at_once = CertifiedPLDAccountant(), CertifiedPLDAccountant()
    for _ in range(100):
        per_step.compose(ev)
    at_once.compose(ev, 100)
    assert per_step.get_epsilon(1e-5) == at_once.get_epsilon(1e-5)

    step = {"type": "poisson_sampled", "sampling_probability": "0.01",
            "event": {"type": "gaussian", "noise_multiplier": "1"}}
    other = {"type": "gaussian", "noise_multiplier": "40"}
    doc = tmp_path / "e.json"
    doc.write_text(json.dumps({"neighboring": "add-remove",
                               "event": {"type": "composed", "events": [step] * 40 + [other] * 3}}))
    assert main(["audit", "dpsgd", "--events", str(doc), "--delta", "1e-5", "--json"]) == 0
    assert "confirmed" in verify_certificate(json.loads(capsys.readouterr().out))
