"""Issue 22 item 3: the per-step ``theorems`` and the ``why_upper_only`` of events.* certificates were
the writer's free text (f-strings in dpverify/events/dispatch.py), named by verify as not confirmed; a
certificate citing a theorem for a step its tree does not have passed. They are now one table
(certificate.prose.event_theorem, ZCDP_THEOREMS, WOR_UPPER_ONLY, REALISED_LOWER) that the writer fills
and verify re-derives from inputs.event (recheck/events.py): anything else is exit 1.

Independent route: the expected lists are written out here from the trees by hand (which step is
which theorem: AFA Thm 11 (1) for a Poisson-sampled Gaussian, LT Thm 4.5 for an (eps, delta) step,
AFA Prop 30 + Cor 32 for sampling without replacement under replace-one, named once in why_upper_only
however many such steps; writers before adv47 named it once per step, which verify still accepts),
not read from the table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dpverify.cli import main
from dpverify.recheck.verify import confirm

from ..certs import outcome, reseal

ROOT = Path(__file__).resolve().parents[2]
F2 = ROOT / "tests" / "certificate" / "format2"

WOR = {"type": "composed", "events": [
    {"type": "self_composed", "count": 3, "event": {"type": "sampled_without_replacement", "source_dataset_size": 100,
                                                     "sample_size": 10,
                                                     "event": {"type": "gaussian", "noise_multiplier": "2"}}},
    {"type": "sampled_without_replacement", "source_dataset_size": 100, "sample_size": 20,
     "event": {"type": "laplace", "noise_multiplier": "3"}}]}
CORS = ("sampling without replacement under replace-one (AFA Cor 32 pair: tight for one step only)")

CASES = [
    ("add-remove", {"type": "composed", "events": [
        {"type": "poisson_sampled", "sampling_probability": "0.1",
         "event": {"type": "epsilon_delta", "epsilon": "1", "delta": "1e-7"}},
        {"type": "poisson_sampled", "sampling_probability": "1",
         "event": {"type": "epsilon_delta", "epsilon": "0.5", "delta": "0"}},
        {"type": "epsilon_delta", "epsilon": "0.5", "delta": "0"},
        {"type": "discrete_gaussian", "sigma": "3", "sensitivity": 1}]}, "--eps", "2",
     ["Poisson-subsampled (eps0, delta0)-DP: LT Thm 4.5 pair, AFA Thm 11 (1)",
      "(eps0, delta0)-DP: the randomized-response pair dominates (LT Thm 4.5)",
      "discrete Gaussian: (N_Z(0,s^2), N_Z(Delta,s^2)) dominates (AFA Prop 8 remark)"], None),
    ("replace-one", {"type": "composed", "events": [
        {"type": "discrete_laplace", "noise_parameter": "0.5", "sensitivity": 1},
        {"type": "randomized_response", "noise_parameter": "0.5", "num_buckets": 4}]}, "--delta", "1e-5",
     ["discrete Laplace: (DLap(a), DLap(a) + Delta) dominates (AFA Prop 8 remark, log-concave pmf); replace-one "
      "sensitivity 2 Delta",
      "randomized response, replace-one: exact output laws R(x), R(x') (finite pair)"], None),
    ("add-remove", {"type": "composed", "events": [{"type": "zcdp", "rho": "0.1", "xi": "0"},
                                                   {"type": "gaussian", "noise_multiplier": "5"}]}, "--eps", "1",
     ["zCDP: D_alpha <= xi + rho alpha (Bun, Steinke 2016 Def 1.1); composition adds rho and xi (BS16 Lemma "
      "2.3); delta = inf over alpha of the RDP -> DP bound of Canonne, Kamath, Steinke 2020 Prop 12 (convex in "
      "alpha); an upper bound, not tight"],
     "zCDP fixes the Renyi curve, not the privacy profile; the conversion bounds it from above"),
    ("add-remove", {"type": "no_op"}, "--delta", "1e-5", [], None),
    ("replace-one", WOR, "--delta", "1e-5",
     ["sampling without replacement, replace-one: AFA Prop 30 + Cor 32 (pair with curve max(H_remove, H_add) of "
      "the subsampled Gaussian base pair with sensitivity 2C)",
      "sampling without replacement, replace-one: AFA Prop 30 + Cor 32 (pair with curve max(H_remove, H_add) of "
      "the subsampled Laplace base pair with sensitivity 2C)"],
     # steps sampled without replacement (the sentence once, adv47 L1), then the realised pair's clause
     # (one dataset size, 100)
     f"{CORS}; the lower end is attained by a concrete dataset pair (+-1 gradients: Poisson pairs at "
     "noise z/2, rate m/n, remove and add)"),
]


def _write(tmp_path: Path, rel: str, event: dict, flag: str, value: str) -> dict:
    f = tmp_path / "e.json"
    f.write_text(json.dumps({"neighboring": rel, "event": event}))
    out = tmp_path / "c.json"
    assert main(["audit", "dpsgd", "--events", str(f), flag, value, "--certificate", str(out)]) == 0
    return json.loads(out.read_text())


@pytest.mark.parametrize("rel,event,flag,value,theorems,why", CASES)
def test_the_writer_cites_each_step_and_verify_rebuilds_it(tmp_path, rel, event, flag, value, theorems, why):
    cert = _write(tmp_path, rel, event, flag, value)
    assert cert["result"]["theorems"] == theorems
    assert cert["result"].get("why_upper_only") == why
    done = confirm(cert)
    assert not any("theorems" in u or "why_upper_only" in u for u in done.unconfirmed), done.line
    if theorems:
        # another step's theorem in place of one of these, and a dropped entry: exit 1
        forged = json.loads(json.dumps(cert))
        forged["result"]["theorems"][0] = "mixture of Gaussians: the event's own pair N(0,s^2) vs sum p_i " \
                                          "N(c_i,s^2) per direction (Choquette-Choo et al. 2023, arXiv 2310.15526)"
        assert outcome(reseal(forged)) == 1
        forged["result"]["theorems"] = theorems[1:]
        assert outcome(reseal(forged)) == 1
    if why:
        forged = json.loads(json.dumps(cert))
        forged["result"]["why_upper_only"] = why.split("; ")[0]
        assert outcome(reseal(forged)) == 1


def test_many_steps_without_replacement_name_the_reason_once_and_an_older_wording_still_verifies(tmp_path):
    """adv47 L1: 21 distinct steps sampled without replacement under replace-one wrote the sentence 21
    times, past the schema's 2000 characters: exit 4 and no certificate. The sentence is now named
    once; a certificate an older writer worded once per step (here two steps) still verifies."""
    steps = [{"type": "sampled_without_replacement", "source_dataset_size": 1000, "sample_size": 10,
              "event": {"type": "gaussian", "noise_multiplier": f"{k}/10"}} for k in range(11, 32)]
    cert = _write(tmp_path, "replace-one", {"type": "composed", "events": steps}, "--delta", "1e-5")
    assert cert["result"]["why_upper_only"].split("; ")[0] == CORS
    assert cert["result"]["why_upper_only"].count(CORS) == 1
    assert outcome(cert) == 0
    old = _write(tmp_path, "replace-one", {"type": "composed", "events": steps[:2]}, "--delta", "1e-5")
    why = old["result"]["why_upper_only"]
    old["result"]["why_upper_only"] = f"{CORS}; {why}"  # the older writer's words for two such steps
    assert outcome(reseal(old)) == 0
    old["result"]["why_upper_only"] = f"{CORS}; {CORS}; {why}"  # three: not what any writer stated
    assert outcome(reseal(old)) == 1


def test_a_released_certificate_keeps_its_words():
    """The format-2 fixture of sampling without replacement predates the realised lower end: it
    reports [0, hi] with upper_bound_only and no realised clause, which is what its writer stated."""
    cert = json.loads((F2 / "events-epsilon-wor.json").read_text())
    assert cert["result"]["upper_bound_only"] is True and cert["result"]["why_upper_only"] == CORS
    done = confirm(cert)
    assert not any("why_upper_only" in u or "theorems" in u for u in done.unconfirmed), done.line
    cert["result"]["theorems"] = [*cert["result"]["theorems"], cert["result"]["theorems"][0]]  # an entry twice
    assert outcome(reseal(cert)) == 1


@pytest.mark.parametrize("name", ["events-epsilon.json", "events-delta.json", "events-claim.json",
                                  "events-epsilon-mog.json", "events-epsilon-wor.json"])
def test_an_answer_without_its_theorems_is_refused(name):
    """adv43 F1: a certificate with the list deleted was confirmed without a word. Every writer (the
    0.1.0 fixtures in format1 carry it too) records it beside the enclosure, so a missing list is a
    missing key: exit 2. The list's order is not bound: it is the writer's walk of the tree and states
    nothing (a reversed list is the same citation)."""
    cert = json.loads((F2 / name).read_text())
    assert outcome(cert) == 0
    rev = json.loads(json.dumps(cert))
    rev["result"]["theorems"] = rev["result"]["theorems"][::-1]
    assert outcome(reseal(rev)) == 0
    del cert["result"]["theorems"]
    assert outcome(reseal(cert)) == 2
