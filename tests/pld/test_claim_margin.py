"""A claim's recorded delta enclosure keeps 2^-16 of its width outside the computed ends
(pld.refine.claim_margin), so that the second route, priced at 10^-7 of the width, re-proves an
end the producer computed to the 18th digit (issue 22: 100 steps of a discrete Laplace, exit 3).
The truth is the exact binomial law of the +-a losses, at 60 digits (mpmath), not either route."""

from __future__ import annotations

import copy
import json
from fractions import Fraction

import mpmath
import pytest
from flint import arb
from mpmath import mpf

from dpverify.ball import arb_to_fraction
from dpverify.cli import main
from dpverify.pld.refine import CLAIM_END_MARGIN, claim_margin
from dpverify.verdict import Enclosure
from tests.certs import outcome, reseal

A, STEPS, EPS, DELTA = "0.3", 100, "0.5", "1e-5"
DOC = {"neighboring": "add-remove", "event": {"type": "self_composed", "count": 10, "event": {
    "type": "self_composed", "count": 10, "event": {
        "type": "discrete_laplace", "noise_parameter": A, "sensitivity": 1}}}}


def _exact_delta() -> mpf:
    """delta(eps) of STEPS discrete Laplace steps (pmf proportional to e^(-a|k|)) against their
    shift by 1: each step's loss is +a where k <= 0 (P-mass 1 / (1 + e^-a)) and -a where k >= 1,
    so the composed loss is a (2j - STEPS) with j binomial, and delta(eps) = E_P[(1 - e^(eps - L))_+]
    (AFA Lemma 37); the add direction is the same pair mirrored."""
    with mpmath.workdps(60):
        a, eps = mpf(3) / 10, mpf(1) / 2
        p = 1 / (1 + mpmath.exp(-a))
        total = mpf(0)
        for j in range(STEPS + 1):
            loss = a * (2 * j - STEPS)
            if loss > eps:
                total += mpmath.binomial(STEPS, j) * p**j * (1 - p) ** (STEPS - j) * (1 - mpmath.exp(eps - loss))
        return total


def _cert(tmp_path) -> dict:
    path = tmp_path / "events.json"
    path.write_text(json.dumps(DOC))
    out = tmp_path / "cert.json"
    code = main(["audit", "dpsgd", "--events", str(path), "--delta", DELTA, "--claimed-eps", EPS,
                 "--certificate", str(out)])
    assert code == 1  # fails: delta(0.5) is about 0.83
    return json.loads(out.read_text())


@pytest.mark.parametrize("lo,hi", [("0.25", "0.75"), ("0", "0.125"), ("0.96875", "1"), ("0.5", "0.5"),
                                   ("-1", "2"), ("1e-30", "3e-30")])
def test_the_margin_is_outward_by_the_fraction_and_stays_in_the_unit_interval(lo, hi):
    enc = Enclosure.from_bounds(arb(lo), arb(hi), 15, 128)
    a, b = arb_to_fraction(enc.lo), arb_to_fraction(enc.hi)
    wide = claim_margin(enc)
    c, d = arb_to_fraction(wide.lo), arb_to_fraction(wide.hi)
    m = (b - a) * CLAIM_END_MARGIN  # exact (dyadic ends: the arb ends are these rationals)
    # moved out by exactly m, or clamped at 0 / 1 where the computed end was inside [0, 1]
    assert c == (Fraction(0) if 0 <= a < m else a - m)
    assert d == (Fraction(1) if b <= 1 < b + m else b + m)


def test_the_discrete_laplace_claim_is_recorded_reprovably(tmp_path):
    truth = _exact_delta()
    with mpmath.workdps(60):
        assert abs(truth - mpf("0.8292116582559108224703")) < mpf("1e-21")  # the value the issue names
    cert = _cert(tmp_path)
    enc = cert["result"]["enclosure"]
    lo, hi = Fraction(enc["lo"]), Fraction(enc["hi"])
    exact = Fraction(mpmath.nstr(truth, 50))
    # the producer's lower end was 2.5e-18 below the truth; now a 2^-16 of the width below it at least
    assert lo <= exact - (hi - lo) * CLAIM_END_MARGIN / 2 and exact < hi
    assert outcome(cert) == 0


def test_a_claim_end_moved_past_the_truth_is_refused(tmp_path):
    truth = _exact_delta()
    cert = _cert(tmp_path)
    # the lower end raised past the truth (and the reason that quotes it), or the upper end lowered
    # below it (the lower end with it, so that the enclosure stays an interval)
    for lo, hi in ((truth + mpf("1e-4"), None), (truth - mpf("1e-5"), truth - mpf("1e-6"))):
        bad = copy.deepcopy(cert)
        enc = bad["result"]["enclosure"]
        enc["lo"] = mpmath.nstr(lo, 17)
        if hi is not None:
            enc["hi"] = mpmath.nstr(hi, 17)
        bad["result"]["reason"] = f"certified delta(0.5) >= {enc['lo']} > 0.00001"
        assert outcome(reseal(bad)) == 1, enc
