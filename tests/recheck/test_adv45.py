"""Genuine certificates that verify refused or held (adv45), each against its exact value.

H2: ``compose`` composes a guarantee of eps 0 up to its total cap (composition/tight.py moves no
lattice for it), while verify refused one guarantee composed 400,000 times or more as a count the
producer refuses (exit 2), and past 1.2M steps its binomial-weight cap answered exit 3: there are no
weights at eps 0. S1: a replace-one schedule far in the tail went to the bare grid route, which
held verify for its whole budget, where the registered pld.delta route settles the upper end by
its Renyi tail bound (as the event-tree form of the same query did)."""

from __future__ import annotations

import json
from fractions import Fraction

import mpmath

from dpverify.cli import main

from ..certs import outcome, reseal


def test_a_million_steps_of_one_eps_zero_guarantee_verify(tmp_path):
    out = tmp_path / "c.json"
    assert main(["compose", "--mech", "0,1e-9", "--steps", "1000000", "--eps", "0.5", "--digits", "6",
                 "--certificate", str(out)]) == 0
    cert = json.loads(out.read_text())
    assert outcome(cert) == 0
    # a (0, d) pair has losses 0 or +-inf only, so the composition's delta(eps) = 1 - (1 - d)^k for every
    # eps >= 0 (LT Thm 4.6 with every eps_i = 0); the certificate's enclosure must hold it
    with mpmath.workdps(40):
        truth = 1 - mpmath.power(1 - mpmath.mpf("1e-9"), 10**6)
        enc = cert["result"]["enclosure"]
        assert mpmath.mpf(enc["lo"]) <= truth <= mpmath.mpf(enc["hi"])
        # moved wholly above the truth (by 1e-6 relative): refused
        cert["result"]["enclosure"] = {"lo": mpmath.nstr(truth * (1 + mpmath.mpf("1e-6")), 20),
                                       "hi": mpmath.nstr(truth * (1 + mpmath.mpf("2e-6")), 20)}
    assert outcome(reseal(cert)) == 1


def test_ten_million_steps_need_no_binomial_weights(tmp_path):
    out = tmp_path / "c.json"
    assert main(["compose", "--mech", "0,1e-3000", "--steps", "10000000", "--eps", "0", "--digits", "5",
                 "--certificate", str(out)]) == 0
    assert outcome(json.loads(out.read_text())) == 0


def test_a_replace_one_schedule_far_in_the_tail_verifies(tmp_path):
    """delta(200) of one step at sigma 100, q 1/2 under replace-one: the producer's upper end is group
    privacy (1 + e^100) delta_add-remove(100), about 1.2e-3569, and its lower end 0. verify settled it
    only after its whole budget (exit 3, 60 CPU s at a 120 s budget); the event-tree form of the same
    query was confirmed in 10 s. Now both are (exit 0). The enclosure's soundness is the routes' own
    (tests/pld, tests/events); the check here is that the schedule form is decided."""
    out = tmp_path / "c.json"
    assert main(["audit", "dpsgd", "--noise-multiplier", "100", "--sampling-rate", "0.5", "--steps", "1",
                 "--eps", "200", "--neighboring", "replace-one", "--certificate", str(out)]) == 0
    cert = json.loads(out.read_text())
    assert outcome(cert, budget=120) == 0
    hi = Fraction(cert["result"]["enclosure"]["hi"])
    assert 0 < hi < Fraction(1, 10**3000)


def test_a_replace_one_epsilon_at_a_tiny_delta_verifies(tmp_path):
    """eps(1e-300) under replace-one: group privacy's add/remove curve is recorded near 1e-348, and the
    re-check walked the PLD grid's rungs down to it without the Renyi tail bound that tells it where to
    look: exit 3 at its work cap after 128 CPU s (adv45 S1). The bound now settles the curve or starts
    the walk at its scale. The enclosure's soundness is the routes' own; the check is that it is decided
    (exit 0)."""
    out = tmp_path / "c.json"
    assert main(["audit", "dpsgd", "--noise-multiplier", "1", "--sampling-rate", "0.1", "--steps", "10",
                 "--delta", "1e-300", "--neighboring", "replace-one", "--certificate", str(out)]) == 0
    cert = json.loads(out.read_text())
    assert outcome(cert, budget=300) == 0


def test_a_zero_epsilon_of_an_event_tree_at_a_huge_sigma_verifies(tmp_path):
    """adv44 G1 as an event tree (adv45 G2's last line): the producer answers eps(1e-5) = [0, 0] at
    sigma 1e60, as pld.epsilon does, and events.epsilon had no [0, 0] settling: exit 3. The same
    total-variation bound now settles it: delta(0) <= 5 x 0.001 x (2/5) / 1e60 = 2e-63 <= 1e-5 (exact
    rationals). At sigma 0.1 one step alone has delta(0) = TV = q (2 Phi(5) - 1) > 0.00099 > 1e-5 (and
    delta(0) of the composition is at least that of one step), so eps(1e-5) > 0 there, and a [0, 0]
    forged there is not accepted."""
    from ..certs import reword

    tree = {"neighboring": "add-remove", "event": {"type": "self_composed", "count": 5, "event": {
        "type": "poisson_sampled", "sampling_probability": "0.001",
        "event": {"type": "gaussian", "noise_multiplier": "1e60"}}}}
    (tmp_path / "t.json").write_text(json.dumps(tree))
    out = tmp_path / "c.json"
    assert main(["audit", "dpsgd", "--events", str(tmp_path / "t.json"), "--delta", "1e-5", "--digits", "2",
                 "--certificate", str(out)]) == 0
    cert = json.loads(out.read_text())
    assert cert["result"]["enclosure"] == {"lo": "0", "hi": "0"}
    assert 5 * Fraction(1, 1000) * Fraction(2, 5) / 10**60 <= Fraction(1, 10**5)
    assert outcome(cert) == 0
    cert["inputs"]["event"]["event"]["event"]["noise_multiplier"] = "0.1"
    assert outcome(reseal(reword(cert))) != 0
