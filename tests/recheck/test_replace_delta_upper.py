"""replace.delta's upper end is the group-privacy product (1 + e^(eps/2)) delta_add-remove(eps/2),
rounded up (recheck/replace.py recheck_delta): an enclosure moved wholly above it is refused (exit 1),
not left undecided (exit 3, before: only the recorded upper end was returned, which a forged
enclosure always contains). The product is checked against mpmath at 50 digits on the recorded
add/remove detail, whose ends enclose the curve (the route's enclosure lies inside it)."""

from __future__ import annotations

import copy
import json
from fractions import Fraction
from pathlib import Path

import mpmath
import pytest
from mpmath import mpf

from dpverify.recheck import replace as RR
from dpverify.recheck.core import mpf_to_fraction

from ..certs import outcome, reseal

FIX = Path(__file__).parents[1] / "certificate" / "format2" / "replace-delta.json"


def _cert() -> dict:
    return json.loads(FIX.read_text())


def test_the_upper_end_is_the_group_privacy_product():
    cert = _cert()
    re = RR.recheck_delta(cert["inputs"], cert["result"])
    up = cert["result"]["upper"]
    with mpmath.workdps(50):
        factor = 1 + mpmath.exp(mpf(cert["inputs"]["eps"]) / 2)
        lo, hi = factor * mpf(up["lo"]), factor * mpf(up["hi"])
    got = mpf_to_fraction(re.hi)
    # the curve's enclosure lies inside the recorded detail: the product lies between the factor times
    # its ends (mpmath's 50 digits are far inside the slack), and below the recorded upper end
    assert Fraction(str(lo)) * (1 - Fraction(1, 10**40)) <= got <= Fraction(str(hi)) * (1 + Fraction(1, 10**40))
    assert got < Fraction(cert["result"]["enclosure"]["hi"])
    assert outcome(cert) == 0


@pytest.mark.parametrize("side", ["above", "below"])
@pytest.mark.parametrize("rel", ["1e-12", "1e-6", "1e-3"])
def test_an_enclosure_moved_past_an_end_is_refused(rel, side):
    # above the upper end: the group-privacy product, a proved upper end, refutes it. Below the lower
    # end: the product then exceeds the recorded hi (no proof of the upper end), but the remove curve's
    # lower end, above the recorded one, shows the enclosures disjoint: exit 1 (exit 3 before, the
    # upper end's failure raised before the lower end was read)
    cert = _cert()
    end = Fraction(cert["result"]["enclosure"]["hi" if side == "above" else "lo"])
    r = Fraction(rel) if side == "above" else -Fraction(rel)
    bad = copy.deepcopy(cert)
    moved = sorted([end * (1 + r), end * (1 + 2 * r)])
    bad["result"]["enclosure"] = {"lo": str(float(moved[0])), "hi": str(float(moved[1]))}
    if side == "above":
        assert Fraction(bad["result"]["enclosure"]["lo"]) > end
    else:
        assert Fraction(bad["result"]["enclosure"]["hi"]) < end
    assert outcome(reseal(bad)) == 1
