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
        c["claim"]["statement"] = c["claim"]["statement"].split(" and fails at")[0]

    assert outcome(_edit(cert, drop)) == 0
