"""Inputs outside the producer's range. First, a delta(eps) certificate whose eps is negative (revfast S0, a soundness bug found while
refereeing vfast). The producer refuses eps < 0; the PLD route read |eps|, since mpmath's
``man_exp`` of a negative number is the unsigned mantissa, so a consistent forgery of delta(-1)
carrying the enclosure of delta(1) was confirmed (pld.delta, events.delta on main at 5049186).
The truth is delta(-e) >= 1 - e^-e (take the whole space in sup_S P(S) - e^eps Q(S)): 0.632 at
e = 1, far above the recorded enclosures. Each forgery rewrites every word that names eps (the
quantity, the relation's bound, the statement by this release's template) and the digest."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import mpmath
import pytest

from dpverify.certificate import prose
from dpverify.certificate.format import compute_digest
from dpverify.recheck.core import arith
from dpverify.recheck.pld import _target
from dpverify.recheck.verify import verify_file

F2 = Path(__file__).resolve().parents[1] / "certificate" / "format2"


def _negated(name: str, key: str, new: "str | None" = None) -> dict:
    c = json.loads((F2 / name).read_text())
    d = copy.deepcopy(c)
    kind, value = d["claim"]["quantity"], d["inputs"][key]
    d["inputs"][key] = "-" + value if new is None else new
    r = d["result"]
    if "quantity" in r:
        r["quantity"] = prose._fill(prose.encloses_template(kind, r), d["inputs"])
    rel = d["claim"].get("relation")
    if isinstance(rel, dict) and rel.get("bound") == value:
        rel["bound"] = d["inputs"][key]
    d["claim"]["statement"] = prose.statement(kind, d["inputs"], r)
    d["digest"] = compute_digest(d)
    return d


@pytest.mark.parametrize("name,key", [("pld-delta.json", "eps"), ("pld-delta-remove.json", "eps"),
                                      ("pld-claim.json", "claimed_eps"), ("events-delta.json", "eps"),
                                      ("events-claim.json", "claimed_eps")])
def test_a_negative_eps_is_refused_as_the_producer_refuses_it(name, key, tmp_path):
    p = tmp_path / "f.json"
    p.write_text(json.dumps(_negated(name, key)))
    code, msg = verify_file(p)
    assert code == 2, msg
    assert f"inputs.{key}" in msg, msg


@pytest.mark.parametrize("t", ["-0.875", "-1e-30", "0.875", "-3"])
def test_the_target_enclosure_keeps_the_sign(t):
    A = arith(80)
    with mpmath.workdps(40):
        x = mpmath.mpf(t)
        lo, hi = _target(A, x)
        assert mpmath.mpf(str(lo)) <= x <= mpmath.mpf(str(hi))
        assert (lo < 0) == (x < 0)


def _restated_verify(c: dict, tmp_path: Path) -> tuple[int, str]:
    """verify's answer on ``c`` with its statement reworded for the edited inputs and the digest
    recomputed, as a consistent forger leaves it."""
    c["claim"]["statement"] = prose.statement(c["claim"]["quantity"], c["inputs"], c["result"])
    c["digest"] = compute_digest(c)
    p = tmp_path / "f.json"
    p.write_text(json.dumps(c))
    return verify_file(p)


# adv42, the same class one level down: inputs outside the producer's range that the re-check read
# without a range check. Each is exit 2 now, as the producer refuses it.
@pytest.mark.parametrize("field,value", [("epsilon", "-0.1"), ("delta", "-0.00000001"), ("delta", "2")])
def test_an_epsilon_delta_leaf_outside_the_producers_range_is_refused(field, value, tmp_path):
    """F2: epsilon = -0.1 built the +0.1 pair with its middle atoms swapped, so the +0.1 tree's
    enclosure was confirmed for a tree no mechanism satisfies; delta < 0 gave a pair with a negative
    atom (events/pairs.py refuses both)."""
    c = json.loads((F2 / "events-delta.json").read_text())
    leaf = c["inputs"]["event"]["events"][1]
    assert leaf["type"] == "epsilon_delta"
    leaf[field] = value
    code, msg = _restated_verify(c, tmp_path)
    assert code == 2 and "epsilon_delta" in msg, msg


def test_an_oracle_tolerance_below_zero_is_refused(tmp_path):
    """F1: with tolerance -0.5 a reported eps inside the certified enclosure (possibly the exact
    value) was re-derived "loose", a valid but wasteful guarantee; the producer needs >= 0."""
    c = json.loads((F2 / "oracle-battery-smoke.json").read_text())
    c["inputs"]["tolerance"] = "-0.5"
    code, msg = _restated_verify(c, tmp_path)
    assert code == 2 and "tolerance" in msg, msg


def test_a_pld_claim_at_delta_zero_is_refused_before_any_work(tmp_path):
    """S1: delta = 0 (the producer needs (0, 1)) ran to the 300 s budget, 160 CPU s and 465 MB."""
    p = tmp_path / "f.json"
    p.write_text(json.dumps(_negated("pld-claim.json", "delta", "0")))
    code, msg = verify_file(p)
    assert code == 2 and "inputs.delta" in msg, msg


@pytest.mark.parametrize("steps", [0, -5, "0", 10**7 + 1])
def test_pld_steps_outside_the_producers_range_are_malformed(steps, tmp_path):
    """adv42: steps <= 0 (the producer's range is 1..10^7) answered exit 1, 'false', not exit 2."""
    c = json.loads((F2 / "pld-delta.json").read_text())
    c["inputs"]["steps"] = steps
    code, msg = _restated_verify(c, tmp_path)
    assert code == 2, msg


@pytest.mark.parametrize("name,option", [("oracle-input.json", "oracle --digits"), ("pld-epsilon.json", "audit dpsgd --digits"),
                                         ("events-delta.json", "audit dpsgd --digits")])
@pytest.mark.parametrize("digits", [9, 10**4])
def test_digits_past_the_pld_producers_range_are_refused_in_its_words(name, option, digits, tmp_path):
    """The PLD kinds and oracle take --digits in 1..8 (vocabulary.DIGITS_PLD; 0.1.0 the same): a
    certificate past it is exit 2 with the producer's range and option, one statement (mend49 3(b):
    verify said "[1, 10000]", the schema "minimum of 0" and nothing at 9..10000)."""
    from dpverify.limits import MAX_PLD_DIGITS
    from dpverify.vocabulary import DIGITS_PLD

    assert DIGITS_PLD.hi == MAX_PLD_DIGITS == 8
    c = json.loads((F2 / name).read_text())
    c["inputs"]["digits"] = digits
    c["digest"] = compute_digest(c)
    p = tmp_path / "f.json"
    p.write_text(json.dumps(c))
    code, msg = verify_file(p)
    assert code == 2, msg
    assert f"inputs.digits={digits} is outside the producer's range: allowed an integer in [1, 8] ({option})" in msg, msg
