"""The claims registry: verdict semantics on exact endpoints."""

from fractions import Fraction

import pytest
from flint import arb

from dpverify.theorems import claims, decide
from dpverify.verdict import Enclosure, Outcome


def enc(lo, hi):
    return Enclosure(arb(lo), arb(hi))


@pytest.mark.parametrize(
    "lo, hi, relation, outcome",
    [
        # 1.187 printed: truth is [1.1865, 1.1875]
        ("1.1866", "1.1867", {"kind": "rounds_to", "printed": "1.187"}, Outcome.HOLDS),
        ("1.1876", "1.1877", {"kind": "rounds_to", "printed": "1.187"}, Outcome.FAILS),
        ("1.1874", "1.1876", {"kind": "rounds_to", "printed": "1.187"}, Outcome.UNDECIDED),
        ("0.25", "0.25", {"kind": "rounds_to", "printed": "2.5e-1"}, Outcome.HOLDS),
        ("2.4e-43", "2.5e-43", {"kind": "order_of_magnitude", "printed": "1e-43"}, Outcome.HOLDS),
        ("1.01e-42", "2e-42", {"kind": "order_of_magnitude", "printed": "1e-43"}, Outcome.FAILS),
        ("3e-203", "4e-203", {"kind": "lt", "bound": "1e-202"}, Outcome.HOLDS),
        ("1.01e-202", "2e-202", {"kind": "lt", "bound": "1e-202"}, Outcome.FAILS),
        ("1.01e-202", "2e-202", {"kind": "ge", "bound": "1e-202"}, Outcome.HOLDS),
        ("0.5", "0.7", {"kind": "in", "lo": "0.6", "hi": "1"}, Outcome.UNDECIDED),
    ],
)
def test_decide(lo, hi, relation, outcome):
    with_bits = __import__("dpverify.ball", fromlist=["working_precision"]).working_precision
    with with_bits(200):
        a = arb(Fraction(lo).numerator) / Fraction(lo).denominator
        b = arb(Fraction(hi).numerator) / Fraction(hi).denominator
        e = Enclosure.from_bounds(a, b)
    assert decide(e, relation) is outcome


def test_registry_ids_unique_and_sourced():
    cs = claims()
    assert len({c.id for c in cs}) == len(cs) >= 2
    for c in cs:
        assert c.source and c.statement and c.printed


def test_every_claim_has_a_committed_certificate():
    # certificates/ is the curated claim set: regenerate with
    # `dpverify reproduce --out certificates` when claims are added
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "certificates"
    committed = {p.stem for p in root.glob("*.json")}
    assert committed == {c.id for c in claims()}
