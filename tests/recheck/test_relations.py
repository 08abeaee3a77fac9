"""The claim relations of recheck/relations.py decide on exact comparisons: a bound that
is not a binary number (0.1, 1/3, 0.277 +- 5e-4) is held as its two directed roundings,
so "holds" and "fails" are never the effect of a rounding to nearest.

Independent route: the relation's truth set in exact rationals (fractions.Fraction of
the decimal text) and the binary endpoints converted exactly; every decided verdict
must agree with it for every value of [lo, hi].
"""

from __future__ import annotations

from fractions import Fraction

import mpmath
import pytest

from dpverify.recheck.relations import decide


def _exact(x: mpmath.mpf) -> Fraction:
    man, exp = x.man_exp
    return Fraction(man) * Fraction(2) ** exp


def _around(text: str) -> list[mpmath.mpf]:
    """Binary numbers just below, at (rounded each way) and just above an exact decimal."""
    q = Fraction(text)
    out = []
    for prec in (53, 256, 400):
        for rnd in ("f", "c"):
            x = mpmath.fdiv(q.numerator, q.denominator, prec=prec, rounding=rnd)
            out += [x, mpmath.fsub(x, mpmath.ldexp(1, -prec - 60), prec=prec + 80, rounding="f"),
                    mpmath.fadd(x, mpmath.ldexp(1, -prec - 60), prec=prec + 80, rounding="c")]
    return out


def _truth(relation: dict, v: Fraction) -> bool:
    k = relation["kind"]
    if k == "rounds_to":
        p = Fraction(relation["printed"])
        mant, _, e = relation["printed"].lower().partition("e")
        h = Fraction(1, 2) * Fraction(10) ** ((int(e) if e else 0) - len(mant.partition(".")[2]))
        return p - h <= v <= p + h
    if k == "order_of_magnitude":
        p = Fraction(relation["printed"])
        return p <= v < 10 * p
    b = Fraction(relation.get("bound", "0"))
    return {"lt": v < b, "le": v <= b, "gt": v > b, "ge": v >= b}.get(k, Fraction(relation.get("lo", "0")) <= v
                                                                     <= Fraction(relation.get("hi", "0")))


RELATIONS = [
    ({"kind": "le", "bound": "0.1"}, "0.1"),
    ({"kind": "lt", "bound": "1/3"}, "1/3"),
    ({"kind": "ge", "bound": "0.3"}, "0.3"),
    ({"kind": "gt", "bound": "2.5e-7"}, "2.5e-7"),
    ({"kind": "rounds_to", "printed": "0.277"}, "0.2765"),
    ({"kind": "rounds_to", "printed": "0.277"}, "0.2775"),
    ({"kind": "order_of_magnitude", "printed": "1e-43"}, "1e-42"),
    ({"kind": "in", "lo": "0.1", "hi": "0.7"}, "0.7"),
]


@pytest.mark.parametrize("relation,edge", RELATIONS)
def test_a_decided_verdict_holds_for_every_value_of_the_enclosure(relation: dict, edge: str) -> None:
    points = _around(edge)
    decided = 0
    for lo in points:
        for hi in points:
            if hi < lo:
                continue
            verdict = decide(lo, hi, relation)
            ends = [_truth(relation, _exact(lo)), _truth(relation, _exact(hi))]
            if verdict == "holds":
                # the truth sets are intervals: both ends inside puts all of [lo, hi] inside
                assert all(ends), (relation, lo, hi)
                decided += 1
            elif verdict == "fails":
                assert not any(ends), (relation, lo, hi)
                # and no point between them satisfies it: the set is an interval with an end
                # outside [lo, hi] on the same side
                decided += 1
    assert decided  # the rule decides away from the edge, it is not always undecided


def test_a_rounding_to_nearest_no_longer_decides() -> None:
    """hi = 0.1 rounded up at 256 bits is above 0.1: eps <= 0.1 is not proved by it (a
    bound read to nearest could round to that same binary number and say holds)."""
    hi = mpmath.fdiv(1, 10, prec=256, rounding="c")
    assert _exact(hi) > Fraction(1, 10)
    assert decide(mpmath.mpf(0), hi, {"kind": "le", "bound": "0.1"}) == "undecided"
    below = mpmath.fdiv(1, 10, prec=256, rounding="f")
    assert decide(mpmath.mpf(0), below, {"kind": "le", "bound": "0.1"}) == "holds"


def test_a_claim_at_the_recorded_upper_end_is_the_verdict_the_decimals_decide() -> None:
    """adv47 M1: a claimed eps equal to the recorded upper end "6.123876676" holds (eps <= hi = claim),
    as the producer decided it on the same decimals; read in binary (hi up, the bound down) it was
    'undecided', and a genuine shuffle / bins / replace claim certificate was refused, exit 1."""
    from dpverify.recheck.decimals import enclosure_of
    from dpverify.recheck.relations import decide_decimals
    from dpverify.recheck.verify import Recheck, _claim_verdict

    rel = {"kind": "le", "bound": "6.123876676"}
    rec = enclosure_of({"lo": "2.13354", "hi": "6.123876676"}, "result.enclosure", 30)
    assert decide_decimals(rec.texts, rel) == "holds"
    re = Recheck(lo=mpmath.mpf("2.2"), hi=mpmath.mpf("6.12387667"))
    assert _claim_verdict({"relation": rel}, {}, re, rec, "holds") == "holds"
    # the mirror: a claim at the lower end, strictly below, is 'fails' only when strict
    assert decide_decimals(rec.texts, {"kind": "lt", "bound": "2.13354"}) == "fails"
    assert decide_decimals(rec.texts, {"kind": "le", "bound": "2.13354"}) == "undecided"
    assert decide_decimals(rec.texts, {"kind": "in", "lo": "2.13354", "hi": "6.123876676"}) == "holds"
    assert decide_decimals(rec.texts, {"kind": "rounds_to", "printed": "4"}) == "undecided"
    assert decide_decimals(("3.5", "4.4999"), {"kind": "rounds_to", "printed": "4"}) == "holds"
    assert decide_decimals(("1e-43", "9.99e-43"), {"kind": "order_of_magnitude", "printed": "1e-43"}) == "holds"
    assert decide_decimals(("1e-43", "1e-42"), {"kind": "order_of_magnitude", "printed": "1e-43"}) == "undecided"
    assert decide_decimals(("inf", "inf"), rel) is None
