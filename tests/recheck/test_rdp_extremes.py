"""RDP re-checks at extreme inputs that answered exit 3 where a proof exists.

* The optimal conversion (ABC Thm 3, eq. 16) at delta = 1e-300: the minimiser over p sits
  at p - delta of the order of delta, below where the halving from p = 1 stopped, so the
  re-check answered "not bracketed". Reference: the rdp tests' mpmath evaluation of eq. (16)
  (golden section in log(p - d), the root in eps by bisection), at 30 digits.
* A Poisson-subsampled Gaussian at q = 1 - 1e-30 with few digits: log1p(-q) rounded -q to
  -1 at a precision below 100 bits. Reference: the q -> 1 limit, the Gaussian of noise s,
  D_alpha = alpha / (2 s^2) (Mironov 2017 Prop 7), so the classic conversion is
  min over alpha of alpha / (2 s^2) + log(1/delta) / (alpha - 1), at alpha - 1 =
  s sqrt(2 log(1/delta)); q differs from 1 by 1e-30, far below the enclosures' widths.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import mpmath
import pytest
from mpmath import mpf

from ..certs import outcome, reseal, reword
from ..rdp.test_to_dp import _abc_thm3_eps

ROOT = Path(__file__).resolve().parents[2]
F2 = ROOT / "tests" / "certificate" / "format2"


def _to_dp(a: str, rdp: str, t: mpf, rel: float) -> dict:
    c = copy.deepcopy(json.loads((F2 / "rdp-to-dp-optimal.json").read_text()))
    c["inputs"].update(alpha=a, rdp=rdp, delta="1e-50", digits=8)
    c["result"]["quantity"] = "epsilon(delta=1e-50)"
    c["result"]["enclosure"] = {"lo": mpmath.nstr(t * (1 + rel - mpf("1e-10")), 25),
                                "hi": mpmath.nstr(t * (1 + rel + mpf("1e-10")), 25)}
    return reseal(reword(c))


@pytest.mark.parametrize("a,rdp", [("2", "0.1"), ("32", "1")])
def test_optimal_conversion_at_the_smallest_delta_is_proved(a, rdp):
    """At delta = 1e-50, the smallest the optimal conversion takes (below: exit 2 on both sides), a
    2e-10-wide enclosure around the mpmath root is accepted; moved by 1e-6 it is refused."""
    with mpmath.workdps(30):
        t = _abc_thm3_eps(mpf(a), mpf(rdp), mpf(10) ** -50)
        assert outcome(_to_dp(a, rdp, t, 0)) == 0
        assert outcome(_to_dp(a, rdp, t, 1e-6)) == 1
        assert outcome(_to_dp(a, rdp, t, -1e-6)) == 1


Q = "0.999999999999999999999999999999"


@pytest.mark.parametrize("conversion", ["classic", "balle"])
def test_subsampled_gaussian_at_q_near_one_is_proved(conversion, tmp_path):
    """The producer's 2-digit certificate at q = 1 - 1e-30 verifies (it answered exit 3); it
    contains the q -> 1 reference (classic); moved off it by 1e-2 it is refused."""
    from dpverify.cli import main

    out = tmp_path / "c.json"
    assert main(["rdp", "epsilon", "--mechanism", "subsampled-gaussian", "--noise-multiplier", "2",
                 "--sampling-rate", Q, "--delta", "1e-5", "--digits", "2", "--conversion", conversion,
                 "--certificate", str(out)]) == 0
    c = json.loads(out.read_text())
    assert outcome(c) == 0
    lo, hi = mpf(c["result"]["enclosure"]["lo"]), mpf(c["result"]["enclosure"]["hi"])
    if conversion == "classic":
        with mpmath.workdps(30):
            L = mpmath.log(mpf(10) ** 5)
            am1 = 2 * mpmath.sqrt(2 * L)
            ref = (1 + am1) / 8 + L / am1
        assert lo <= ref <= hi
    moved = copy.deepcopy(c)
    moved["result"]["enclosure"] = {"lo": mpmath.nstr(lo * mpf("1.01"), 20), "hi": mpmath.nstr(hi * mpf("1.01"), 20)}
    assert outcome(reseal(moved)) == 1


def test_log_one_minus_q_at_low_precision():
    """The subsampled Gaussian's log A_3 at q = 1 - 1e-30 and 64 bits encloses the Gaussian's
    (3^2 - 3) / (2 * 4) = 0.75 up to 1e-29 (it raised before), and q = 1 is the Gaussian exactly."""
    from fractions import Fraction

    from dpverify.recheck import rdp as R
    from dpverify.recheck.core import arith

    q = 1 - Fraction(1, 10**30)
    lo, hi = R._ssg_integer(arith(64), 3, Fraction(2), q)
    assert lo <= mpf("0.75") + mpf("1e-29") and hi >= mpf("0.75") - mpf("1e-29") and hi - lo < mpf("1e-15")
    assert R._ssg_integer(arith(64), 3, Fraction(2), Fraction(1)) == (0.75, 0.75)
    lo, hi = R._ssg_series(arith(64), Fraction(5, 2), Fraction(2), Fraction(1), None)
    with mpmath.workdps(30):
        ref = mpmath.exp(mpf("3.75") / 8)  # e^((a^2 - a) / (2 s^2)) at a = 5/2, s = 2
    assert lo <= ref <= hi


@pytest.mark.parametrize("n, s, q", [(200, "1e-3", "0.99"), (300, "0.1", "0.01"), (40, "0.05", "0.5")])
def test_integer_order_sum_in_log_space_encloses_mpmath(n, s, q):
    """Beyond an exponent (k^2 - k) / (2 s^2) of 10^4 the terms of A_n are summed in log
    space: e^x left MPFR's exponent range (sigma 1e-3, alpha 20000: a 904-byte certificate kept
    verify busy for its whole budget). Independent route: mpmath, whose exponents are unbounded,
    at 60 digits over the same finite sum."""
    from fractions import Fraction

    from dpverify.recheck import rdp as R
    from dpverify.recheck.core import arith

    S, Q = Fraction(s), Fraction(q)
    assert Fraction(n * n - n) / (2 * S * S) > R._LOG_SPACE_EXPONENT  # the log-space route is taken
    with mpmath.workdps(60):
        ms, mq = mpmath.mpf(S.numerator) / S.denominator, mpmath.mpf(Q.numerator) / Q.denominator
        total = mpmath.fsum(mpmath.binomial(n, k) * mq**k * (1 - mq) ** (n - k) * mpmath.exp((k * k - k) / (2 * ms**2))
                            for k in range(n + 1))
        ref = mpmath.log(total)
        lo, hi = R._ssg_integer(arith(200), n, S, Q)
        assert mpf(lo) <= ref <= mpf(hi) and mpf(hi) - mpf(lo) <= abs(ref) * mpf(10) ** -40


@pytest.mark.parametrize("alpha", ["0.5", "3"])
def test_randomized_response_at_one_half_is_exactly_zero(alpha, capsys):
    """At p = 1/2 the two output laws are equal, so every Renyi divergence is exactly 0 (the
    producer records [0, 0]); the directed-rounding route gave [-1.7e-4932, 1.7e-4932], never
    inside [0, 0] (exit 3). Now it is decided exactly."""
    from dpverify.certificate import verify_certificate
    from dpverify.cli import main

    assert main(["rdp", "divergence", "--mechanism", "rr", "--p", "0.5", "--alpha", alpha, "--json"]) == 0
    cert = json.loads(capsys.readouterr().out)
    assert cert["result"]["enclosure"] == {"lo": "0", "hi": "0"}
    assert "independent enclosure [0.0, 0.0]" in verify_certificate(cert)
