"""The committed classic-conversion certificate (ABC eq. 23: Gaussian, sigma 20,
T = 1000, delta 1e-5) against the infimum in closed form at 60 digits.

Derivation: the Gaussian's RDP is alpha c with c = T / (2 sigma^2); the classic
conversion is eps(alpha) = alpha c + L / (alpha - 1), L = log(1/delta). With
a = alpha - 1 this is c + c a + L / a, convex in a > 0, minimal at a = sqrt(L / c):
inf = c + 2 sqrt(c L) (ABC eq. 23, computed in arb by dpverify/rdp/abc.py). The
recorded upper end sits only 5.5e-16 above it, so a re-check at about 16 digits
cannot place the value inside (an earlier verifier draft reported it "3e-16
above": that was the re-checker's own rounding, not a low upper end); at 60
digits it is inside."""

import json
from fractions import Fraction
from pathlib import Path

import mpmath

CERT = Path(__file__).resolve().parents[2] / "certificates" / "abc-eq23-sigma20-t1000.json"


def test_closed_form_infimum_lies_inside_the_committed_enclosure():
    cert = json.loads(CERT.read_text())
    inputs, enc = cert["inputs"], cert["result"]["enclosure"]
    assert (inputs["mechanism"], inputs["conversion"]) == ("gaussian", "classic")
    T, sigma, delta = Fraction(inputs["compositions"]), Fraction(inputs["noise_multiplier"]), Fraction(inputs["delta"])
    with mpmath.workdps(60):
        c = mpmath.mpf(T.numerator * sigma.denominator ** 2) / (2 * T.denominator * sigma.numerator ** 2)
        L = -mpmath.log(mpmath.mpf(delta.numerator) / delta.denominator)
        inf = c + 2 * mpmath.sqrt(c * L)
        lo, hi = mpmath.mpf(enc["lo"]), mpmath.mpf(enc["hi"])
        assert lo <= inf <= hi
        assert hi - inf < mpmath.mpf("1e-14")  # and the upper end is essentially the infimum
