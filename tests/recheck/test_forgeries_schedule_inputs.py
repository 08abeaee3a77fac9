"""Forgeries of how a pld.* / replace.* certificate gives its schedule, one test per class.

Each starts from a frozen genuine format-2 certificate, changes the inputs and recomputes
the digest, so only the verifier's reading of the inputs can catch it. The ground truth is
what the producer does with the same inputs: it refuses them (the strict event reader, the
audit command line), so no genuine certificate can carry them, and the certificate claims a
mechanism nobody computed with.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

from dpverify.certificate.format import LEGACY_EVENT_FIELDS, SENSITIVITY_CONVENTION

from ..certs import outcome, reseal

F2 = Path(__file__).resolve().parents[2] / "tests" / "certificate" / "format2"


def fixture(name: str) -> dict:
    return json.loads((F2 / f"{name}.json").read_text())


def forged(name: str, change) -> dict:
    cert = copy.deepcopy(fixture(name))
    change(cert["inputs"])
    return reseal(cert)


def audit(argv: list, tmp_path: Path, doc: "dict | None" = None) -> int:
    from dpverify.cli import main

    args = list(argv)
    if doc is not None:
        path = tmp_path / "events.json"
        path.write_text(json.dumps(doc))
        args = ["--events", str(path), *args]
    return main(["audit", "dpsgd", *args, "--certificate", str(tmp_path / "c.json")])


def test_a_schedule_beside_a_list_of_steps_is_refused(tmp_path):
    """pld.* computed with ``inputs.events``; a top-level schedule beside it was recorded but
    not read (sigma 0.3, q 0.5, 1000 steps accepted as 'confirmed' under the list's epsilon).
    The producer refuses --events beside the schedule options, so no certificate has both."""
    items = [{"mechanism": "subsampled-gaussian", "noise_multiplier": "1.1", "sampling_rate": "0.01", "count": 100}]
    assert audit(["--noise-multiplier", "0.3", "--delta", "1e-5"], tmp_path,
                 {"neighboring": "add-remove", "events": items}) == 2

    def both(i):
        i.update(events=items, noise_multiplier="0.3", sampling_rate="0.5", steps=1000)
    assert outcome(forged("pld-epsilon", both)) == 2
    # the genuine list with an epochs-form schedule added: refused alike
    assert outcome(forged("pld-epsilon-legacy-events", lambda i: i.update(
        noise_multiplier="2", dataset_size=1000, batch_size=100, epochs="1", sampling_rate="0.1", steps=10,
        steps_rule="steps = ceil(epochs * dataset_size / batch_size), q = batch_size / dataset_size"))) == 2


def test_replace_one_takes_no_list_of_steps(tmp_path):
    """replace.* listed ``events`` as allowed but never read it (a list of 1000 steps at
    sigma 0.3, q 0.5 rode along a 100-step sigma-1.1 bracket). The producer never records one:
    under replace-one it refuses a list of steps (a tree goes in ``inputs.event``)."""
    items = [{"mechanism": "subsampled-gaussian", "noise_multiplier": "1.1", "sampling_rate": "0.01", "count": 100}]
    assert audit(["--neighboring", "replace-one", "--delta", "1e-5"], tmp_path,
                 {"neighboring": "replace-one", "events": items}) == 2
    heavy = [{"mechanism": "subsampled-gaussian", "noise_multiplier": "0.3", "sampling_rate": "0.5", "count": 1000}]
    assert outcome(forged("replace-epsilon", lambda i: i.update(events=heavy))) == 2


def test_each_step_item_takes_its_own_mechanisms_keys():
    """An item of ``inputs.events`` with another mechanism's keys (a Laplace item with a noise
    multiplier, a Gaussian one with exp_eps0 / delta0) reads naturally as another mechanism; the
    producer's strict reader refuses it, and its table is the one verify reads."""
    from dpverify.events import json_format as J

    from dpverify.certificate.format import FORMAT, load_schema

    assert J.LEGACY is LEGACY_EVENT_FIELDS  # one table on both sides
    item = load_schema(FORMAT)["properties"]["inputs"]["properties"]["events"]["items"]
    assert item["properties"]["mechanism"]["enum"] == list(LEGACY_EVENT_FIELDS)  # and in the schema
    assert set(item["properties"]) == {"mechanism"}.union(*LEGACY_EVENT_FIELDS.values())

    def foreign(i):
        i["events"][0]["noise_multiplier"] = "0.01"
    assert outcome(forged("pld-epsilon-legacy-events", foreign)) == 2

    def approx_keys(i):
        i["events"][1].update(scale="0.001", exp_eps0="1000", delta0="0.5")
    assert outcome(forged("pld-epsilon-legacy-events", approx_keys)) == 2


def test_a_gaussian_item_is_the_unsampled_gaussian():
    """``gaussian`` is the unsampled Gaussian (no rate), as the producer reads it: relabelling
    the sigma-1.1, q-0.01 item ``gaussian`` claimed the subsampled epsilon (0.593) for 50
    unsampled steps, whose mu = sqrt(50) / 1.1 = 6.4 puts eps(1e-5) above 20
    (delta_mu(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2), GDPT eq. 6)."""
    def relabel(i):
        i["events"][1]["mechanism"] = "gaussian"
    assert outcome(forged("pld-epsilon-legacy-events", relabel)) == 2

    # the writer records an unsampled step as a subsampled one at rate 1: the same step written
    # as a ``gaussian`` item (no rate) means the same pair, so it re-proves the same enclosure
    def unsampled(i):
        item = i["events"][2]
        assert item["sampling_rate"] == "1"
        i["events"][2] = {"mechanism": "gaussian", "noise_multiplier": item["noise_multiplier"],
                          "count": item["count"]}
    assert outcome(forged("pld-epsilon-legacy-events", unsampled)) == 0


def test_replace_one_schedule_takes_no_sensitivity_convention():
    """The convention defines what a noise multiplier means; the writer records it with an
    event tree only (replace_cert.tree_inputs), never beside a schedule, so there it is refused,
    whatever its text (even the tree's own convention)."""
    assert "sensitivity_convention" not in fixture("replace-epsilon")["inputs"]
    assert "sensitivity_convention" in fixture("replace-epsilon-events")["inputs"]
    for text in ("noise_multiplier z = sigma / (4C): under replace-one the Gaussian pair is N(0,1) vs N(8/z,1)",
                 SENSITIVITY_CONVENTION):
        assert outcome(forged("replace-epsilon", lambda i: i.update(sensitivity_convention=text))) == 2


def test_a_relation_that_is_not_one_is_refused_naming_the_allowed_ones():
    """adv56 LOW: a certificate whose inputs.neighboring was rewritten (with its words) to a name
    that is no relation was refused without the allowed values; pld.* and events.* name them, and
    a non-string (unhashable) relation is refused the same way, not with a TypeError."""
    import pytest

    from dpverify.errors import MalformedCertificate
    from dpverify.recheck import events as E
    from dpverify.recheck import pld as P

    for directions, allowed in ((P._directions, "add-remove, add, remove, replace-one"),
                                (E._directions, "add-remove, add, remove, replace-one, replace-special")):
        for rel in ("add-remov", ["add"], 1):
            with pytest.raises(MalformedCertificate, match=f"is not a relation \\(allowed: {allowed}\\)"):
                directions({"neighboring": rel})
    assert E._directions({"neighboring": "replace-special"}) == ["remove", "add"]
    assert P._directions({"neighboring": "add-remove"}) == ["remove", "add"]


def test_a_relation_of_another_json_type_is_refused_naming_the_relations():
    """adv57 LOW: inputs.neighboring rewritten to a number, list, object, null or true was refused by
    the schema as "5 is not a string", without the relations a string may name."""
    import pytest

    from dpverify.errors import MalformedCertificate
    from dpverify.recheck.verify import verify_certificate

    for rel in (5, ["add"], {"a": 1}, None, True):
        cert = forged("events-epsilon", lambda i: i.update(neighboring=rel))
        with pytest.raises(MalformedCertificate, match="neighboring.*add-remove, add, remove, replace-one or replace-special"):
            verify_certificate(cert)
