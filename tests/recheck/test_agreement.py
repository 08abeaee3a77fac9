"""A certificate's parts must state one thing (an adversarial review got these past verify):

* a claim decided on an epsilon bracket (replace, bins, shuffle) whose ``inputs.claimed_eps``
  or relation kind was rewritten while the relation's bound kept the verdict true;
* a schedule key the sampled-batch kinds do not read (``steps``, ``sampling_rate``) beside
  their dataset size, batch size and epochs;
* a ``result.neighboring`` that names another relation than the inputs.

Each forgery is a genuine format-2 fixture with one edit and the digest recomputed. The
reference is the edit itself: each makes the certificate state something its numbers do
not prove (a claimed 0.001, below every bracket's re-derived lower end; a
relation "ge"; a schedule of 100 steps for a run of 2), so refusal is the only right answer.
"""

from __future__ import annotations

import copy
from fractions import Fraction
import json
from pathlib import Path

import pytest

from tests.certs import outcome, reseal

FIXTURES = Path(__file__).parents[1] / "certificate" / "format2"


def _load(name: str) -> dict:
    return json.loads((FIXTURES / f"{name}.json").read_text())


def _edit(cert: dict, fn) -> dict:
    bad = copy.deepcopy(cert)
    fn(bad)
    return reseal(bad)


@pytest.mark.parametrize("name", ["replace-claim", "bins-claim", "shuffle-claim"])
def test_a_rewritten_claim_is_refused(name):
    cert = _load(name)
    bound = cert["claim"]["relation"]["bound"]
    assert cert["inputs"]["claimed_eps"] == bound  # what the writer states

    def lower_claim(c):  # the claim says eps <= a smaller number; the relation still says bound
        c["inputs"]["claimed_eps"] = "0.001"

    def flip_kind(c):  # "eps >= bound" with the verdict of "eps <= bound"
        c["claim"]["relation"]["kind"] = "ge"

    def drop_claim(c):
        del c["inputs"]["claimed_eps"]

    for forge in (lower_claim, flip_kind, drop_claim):
        assert outcome(_edit(cert, forge)) in (1, 2), forge.__name__


@pytest.mark.parametrize("name", ["bins-epsilon", "bins-delta", "shuffle-epsilon", "shuffle-delta", "shuffle-claim"])
@pytest.mark.parametrize("key, value", [("steps", 100), ("sampling_rate", "0.01")])
def test_a_schedule_key_the_kind_does_not_read_is_refused(name, key, value):
    cert = _load(name)
    assert outcome(_edit(cert, lambda c: c["inputs"].__setitem__(key, value))) == 2


@pytest.mark.parametrize("name", ["replace-epsilon", "bins-epsilon", "shuffle-epsilon", "replace-epsilon-events"])
def test_a_result_relation_other_than_the_inputs_is_refused(name):
    cert = _load(name)
    other = "add-remove" if cert["inputs"]["neighboring"] == "replace-one" else "replace-one"
    assert outcome(_edit(cert, lambda c: c["result"].__setitem__("neighboring", other))) == 1


@pytest.mark.parametrize("name", ["replace-claim", "bins-claim", "shuffle-claim", "bins-epsilon", "shuffle-delta"])
def test_the_genuine_fixtures_still_verify(name):
    assert outcome(_load(name)) == 0


# A field of another kind beside a genuine result (an adversarial review had these confirmed:
# the schema's result section is the union of every kind's fields, and no re-checker reads a
# field its kind does not have). Each value is false for the certificate's inputs (gdp.delta
# at mu = 1 has no mu of 5, and its delta is not below 1e-99), so refusal is the only answer.
@pytest.mark.parametrize("name, field, value", [
    ("gdp-delta", "mu", {"lo": "5", "hi": "6"}),
    ("gdp-delta", "upper", {"lo": "0", "hi": "1e-99"}),
    ("bins-epsilon", "lower", {"lo": "5", "hi": "6"}),
    ("bins-epsilon", "head", {"enclosure": {"lo": "5", "hi": "6"}}),
    ("shuffle-epsilon", "upper", {"lo": "0", "hi": "0.001"}),
    ("replace-epsilon", "rho", {"lo": "5", "hi": "6"}),
    ("pld-epsilon", "mu", {"lo": "5", "hi": "6"}),
    ("calibrate-bracket", "rows", []),
    ("gdp-certify-laplace", "lower", {"lo": "3", "hi": "4"}),
])
def test_a_field_of_another_kind_is_refused(name, field, value):
    cert = _load(name)
    assert field not in cert["result"]
    assert outcome(_edit(cert, lambda c: c["result"].__setitem__(field, value))) == 2


def test_a_field_inside_a_declared_one_is_refused():
    # gdp.certify declares head.enclosure, head.argmax, ...; head.upper is none of them
    cert = _load("gdp-certify-laplace")
    assert outcome(_edit(cert, lambda c: c["result"]["head"].__setitem__("upper", {"lo": "0", "hi": "1"}))) == 2


def test_a_format1_label_does_not_admit_fields_the_kind_never_had():
    # replace.epsilon never carried per-direction enclosures (format 1 or 2); relabelled as a
    # 0.1.0 certificate with a made-up directions.add, it must not be confirmed
    cert = _load("replace-epsilon")

    def relabel(c):
        c["format"] = "dpverify-certificate/1"
        c["result"]["directions"] = {"add": {"lo": "0", "hi": "0.001"}}
    assert outcome(_edit(cert, relabel)) in (1, 2)


@pytest.mark.parametrize("name", ["replace-claim", "shuffle-claim", "bins-claim", "pld-claim", "events-claim"])
def test_a_claim_without_its_verdict_is_malformed(name):
    cert = _load(name)
    assert outcome(_edit(cert, lambda c: c["result"].pop("verdict"))) == 2


def test_an_unverifiable_nested_field_is_refused_in_format_2():
    # a head-only answer's gap delta_mu(eps_h) - f(eps_h) is re-proved by no route: the writer
    # leaves it out and format 2 refuses it (format 1 names it as not confirmed)
    cert = _load("gdp-certify-laplace")
    forged = _edit(cert, lambda c: c["result"]["tail"].__setitem__("gap_delta_mu_at_eps_h", {"lo": "1", "hi": "2"}))
    assert outcome(forged) == 1


@pytest.mark.parametrize("name, end", [("calibrate-bracket", "unsafe"), ("calibrate-shuffle-sigma", "unsafe"),
                                       ("calibrate-shuffle-sigma", "pair_limit"), ("calibrate-bins-sigma", "unsafe")])
def test_a_calibrate_end_the_statement_names_cannot_be_deleted(name, end, tmp_path, capsys):
    # the statement says "... fails at result.ends.unsafe.value" (or "exceeds the target at
    # result.ends.pair_limit.value"); with that end deleted nothing re-proves the failure it
    # states, so verify must refuse it (exit 2, naming the end) before any re-derivation
    from dpverify.cli import main

    cert = _load(name)
    assert f"result.ends.{end}.value" in cert["claim"]["statement"]
    path = tmp_path / "c.json"
    path.write_text(json.dumps(_edit(cert, lambda c: c["result"]["ends"].pop(end))))
    assert main(["verify", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"result.ends.{end} is missing" in err and "claim.statement names it" in err


def test_a_calibrate_statement_without_the_end_states_less_and_verifies():
    # the control: the same deletion with the statement's clause removed too states only what
    # the remaining ends prove (the Poisson fixture's safe end), and is accepted
    cert = _load("calibrate-bracket")

    def drop(c):
        c["result"]["ends"].pop("unsafe")
        c["result"].pop("relative_width")  # the writer states no width without a failing end
        c["claim"]["statement"] = c["claim"]["statement"].split(" and fails at")[0]

    assert outcome(_edit(cert, drop)) == 0


def test_a_fixed_batch_calibration_s_width_is_recomputed_from_its_ends(tmp_path):
    """`mechanism_relative_width` (|safe - unsafe| / min, to 3 digits) was a number no
    route read; it is recomputed exactly from the re-proved ends (reference: the same
    arithmetic on the recorded decimals, written out here)."""
    from fractions import Fraction

    from dpverify.cli import main

    out = tmp_path / "c.json"
    assert main(["calibrate", "dpsgd", "--target-eps", "3", "--delta", "1e-5", "--digits", "2",
                 "--dataset-size", "100", "--batch-size", "50", "--epochs", "1",
                 "--sampling", "without-replacement", "--certificate", str(out)]) == 0
    cert = json.loads(out.read_text())
    ends = cert["result"]["ends"]
    s, u = Fraction(ends["safe"]["value"]), Fraction(ends["unsafe"]["value"])
    assert cert["result"]["mechanism_relative_width"] == f"{float(abs(s - u) / min(s, u)):.3g}"
    assert outcome(cert) == 0
    assert outcome(_edit(cert, lambda c: c["result"].__setitem__("mechanism_relative_width", "0.0001"))) == 1
    assert outcome(_edit(cert, lambda c: c["result"]["ends"].pop("unsafe"))) in (1, 2)


@pytest.mark.parametrize("name", ["pld-epsilon", "pld-delta", "pld-claim", "events-epsilon", "events-delta"])
def test_a_relative_width_the_enclosure_does_not_have_is_refused(name):
    """``relative_width`` states (hi - lo) / lo of the exact enclosure, whose printed ends
    are its outward roundings: 1e-30 beside a width printed at 1e-5..1e-3 (17 digits each
    end) is false, and so is 10 times the printed width."""
    cert = _load(name)
    assert outcome(cert) == 0
    lo, hi = (Fraction(cert["result"]["enclosure"][k]) for k in ("lo", "hi"))
    assert float(Fraction(cert["result"]["relative_width"])) <= float((hi - lo) / lo) * 1.01
    for forged in ("1e-30", f"{float(10 * (hi - lo) / lo):.3g}"):
        assert outcome(_edit(cert, lambda c: c["result"].__setitem__("relative_width", forged))) == 1, forged


@pytest.mark.parametrize("name", ["calibrate-bracket", "calibrate-steps", "calibrate-shuffle-persistent-epochs"])
def test_a_calibration_s_relative_width_is_recomputed_from_its_ends(name):
    cert = _load(name)
    assert outcome(_edit(cert, lambda c: c["result"].__setitem__("relative_width", "0.001"))) == 1


def test_every_kind_declares_its_inputs():
    """One list of input keys per kind (certificate/format.py KIND_INPUTS), read by the writer's
    contract and by verify: a kind of the verifier's table without one would take any key the
    schema-wide union allows."""
    from dpverify.certificate.format import KIND_INPUTS
    from dpverify.recheck import kinds

    assert set(KIND_INPUTS) == set(kinds.KINDS)


@pytest.mark.parametrize("name, key, value", [
    # a Poisson certificate relabelled as shuffled or balls-in-bins: the number is the Poisson
    # one (eps ~ 0.55 where the shuffled run's certified lower end is 3.40)
    ("pld-epsilon", "sampling", "shuffle"),
    ("pld-epsilon", "mu", "3"),
    ("pld-epsilon", "claimed_eps", "0.1"),
    ("replace-epsilon", "sensitivity", "2"),  # sensitivity 2 is sigma 0.55: eps >= 4.9 > the recorded 1.24
    ("replace-epsilon", "sampling", "shuffle"),
    ("events-epsilon", "noise_multiplier", "0.5"),
    ("gdp-delta", "noise_multiplier", "0.5"),
    ("dp-profile-gaussian", "neighboring", "replace-one"),
    ("compose-eps", "sampling_rate", "0.5"),
])
def test_an_input_key_the_kind_does_not_read_is_refused(name, key, value):
    """An input the kind's re-checker never reads defines nothing, and several of them would
    change what the certificate states (a shuffled run, a second sensitivity, another relation)."""
    cert = _load(name)
    assert key not in cert["inputs"]
    assert outcome(_edit(cert, lambda c: c["inputs"].__setitem__(key, value))) == 2


def test_the_writer_refuses_an_input_its_kind_does_not_take():
    """The write-time contract holds the writer to the same list (a bug, never a file)."""
    from dpverify.certificate.writer import make_certificate
    from dpverify.errors import InternalError

    with pytest.raises(InternalError, match="sampling is not an input of its kind"):
        make_certificate(claim={"quantity": "gdp.delta"},
                         inputs={"mu": "1", "eps": "1", "digits": 6, "sampling": "shuffle"},
                         result={"enclosure": {"lo": "0.1", "hi": "0.2"}}, precision_bits=64, algorithm="a")
