"""Noise multipliers up to the producer's cap: the PLD re-check's tails stay narrow far in a tail.

At sigma 1e18 the point x = (log(a / q) + mu^2 / 2) / mu of :func:`gauss_tails` is about 1e17 and
carries the log's rounding times 1 / mu = 1e18, so Phi's argument is an interval some 1e-15 wide;
the mean value bound alone (width x 0.4) kept P(L > e) near 1e-14 at every knot, and the loss range
ran to its knot cap (exit 3 on a genuine certificate). These tests check the tails against mpmath
at 400 bits (an independent route: no directed rounding, no interval), that they are narrow, and that
the composition proves eps(1e-5) = 0 (derivation in the test).
"""

from __future__ import annotations

from fractions import Fraction

import mpmath
import pytest

from dpverify.recheck import pld as P
from dpverify.recheck.core import arith, mpfr_to_mpf

from .test_pld_rigorous import _mp, _ref_gauss_tails

HP = 400


@pytest.mark.parametrize("sig", [Fraction(10**18), Fraction(10**12), Fraction(7, 3) * 10**15])
@pytest.mark.parametrize("direction", ["remove", "add"])
def test_far_tails_at_a_huge_noise_multiplier_enclose_mpmath_and_are_narrow(sig: Fraction, direction: str) -> None:
    """Every knot's enclosure (the one-loop route and the per-point route) contains the mpmath
    value and, where that value is below 2^-200 (every knot but the ones at loss 0 and just
    below), is at most 2^-62 wide (2^-(prec - 48), where the monotone end takes over): the
    widening alone gave 1e-15 .. 1e-13 there at sigma 1e18."""
    A, m, q = arith(110), 8, Fraction(1, 100)
    tails = P.gauss_tails(sig, q, direction)
    lo, hi = -40, 600
    got = tails.at_knots(A, lo, hi, m)
    pointwise = [tails(A, A.dyadic(i, m)) for i in range(lo, hi + 1)]
    with mpmath.workprec(HP):
        for i in range(lo, hi + 1, 3):
            ref = _ref_gauss_tails(_mp(sig), _mp(q), direction, mpmath.mpf(i) / 2 ** m)
            for route in (got, pointwise):
                for g, r in zip(route[i - lo], ref):
                    a, b = mpfr_to_mpf(g[0]), mpfr_to_mpf(g[1])
                    assert a <= r <= b, (i, a, r, b)
                    if r < mpmath.mpf(2) ** -200:
                        assert b - a <= mpmath.mpf(2) ** -62, (i, a, b)


def test_eps_of_a_huge_noise_multiplier_is_proved_zero() -> None:
    """sigma 1e18, q 0.01, 100 steps, delta 1e-5: eps(delta) = 0, since delta(0) is the total
    variation of the composed pair, at most 100 times one step's (a union bound over the steps:
    TV of products <= sum of TVs), and one step's is at most q TV(N(0, 1), N(1e-18, 1)) <=
    q 1e-18 / sqrt(2 pi) < 1e-20; so delta(0) < 1e-17 < 1e-5 in each direction. The re-check must
    prove the upper end 0 (it reached its knot cap before the tails were narrowed)."""
    inputs = {"noise_multiplier": "1e18", "sampling_rate": "0.01", "steps": 100, "neighboring": "add-remove"}
    with mpmath.workdps(40):
        D = mpmath.mpf("1e-5")
        lo, hi = P._bounds(inputs, "eps", D, D, mpmath.mpf(0), 8)
    assert lo <= 0 <= hi
    assert hi == 0


@pytest.mark.parametrize("prec", [60, 110, 200])
@pytest.mark.parametrize("a, b", [(-1, 0), (-40, 3), (2, 2 + 2.0**-40), (-3, -2), (0.5, 9)])
def test_phi_upper_end_on_a_wide_interval_bounds_phi_at_its_top(prec: int, a: float, b: float) -> None:
    """ref43 T-A: the upper end of Phi on [a, b] must bound Phi(b) (Phi increases), so the monotone
    end is Phi(b)'s upper end; taken from Phi(a) (a one-character mutant) it was on the wrong side
    and no test failed. Checked against mpmath's Phi(b) at 400 bits, with t1 = Phi(a)'s own upper
    end as the route hands it."""
    A = arith(prec)
    # exact grid points (a dyadic with at most 56 bits: both ends of A.dyadic coincide)
    xa, xb = A.dyadic(round(a * 2**50), 50)[0], A.dyadic(round(b * 2**50), 50)[0]
    t1 = A._ncdf_abs_point(xa)[1]
    hi = P._phi_hi(A, t1, xa, xb)
    with mpmath.workprec(HP):
        ref = mpmath.ncdf(mpfr_to_mpf(xb))
        assert mpfr_to_mpf(hi) >= ref, (a, b, prec)
        lo, top = P._phi_iv(A, (xa, xb))
        assert mpfr_to_mpf(lo) <= mpmath.ncdf(mpfr_to_mpf(xa)) and mpfr_to_mpf(top) >= ref


@pytest.mark.parametrize("z", [Fraction(1, 2), Fraction(1), Fraction(10), Fraction(10**6)])
def test_the_total_variation_bound_lies_above_mpmath(z: Fraction) -> None:
    """recheck.events._tv_upper: delta(0) of one Poisson-subsampled Gaussian step is
    q (2 Phi(1 / (2 z)) - 1), by mpmath's erf at 60 digits; the bound (2/5) q / z is above it, and
    T steps are charged T times (subadditivity, the derivation in its docstring)."""
    from dpverify.recheck.events import _tv_upper

    q = Fraction(1, 100)
    with mpmath.workdps(60):
        tv = mpmath.mpf(q.numerator) / q.denominator * mpmath.erf(1 / (2 * mpmath.sqrt(2) * _mp(z)))
    for rel in ("add-remove", "add", "remove"):
        got = _tv_upper([("gaussian", z, q, 7)], rel)
        ref = 7 * Fraction(mpmath.nstr(tv, 40))
        assert got is not None and ref < got < ref * Fraction(6, 5)  # tight as z grows (1.17 at z = 1/2)
    assert _tv_upper([("gaussian", z, q, 7)], "replace-one") is None
    assert _tv_upper([("laplace", z, Fraction(1), 7)], "add-remove") is None


@pytest.mark.parametrize("sigma", ["1e100", "1e50"])
def test_a_zero_epsilon_at_a_huge_noise_multiplier_verifies(sigma: str, tmp_path) -> None:
    """adv44 G1: the producer proves eps(1e-5) = 0 at sigma 1e50..1e100 (its own table's range), and
    verify answered exit 3: its grid proves an upper end of one cell. delta(0) <= 10 x 0.01 x 0.4 /
    sigma < 1e-5 settles it. A [0, 0] forged at sigma 1 (eps(1e-5) is about 2.9 there) is refused."""
    import json

    from dpverify.cli import main
    from dpverify.recheck.verify import verify_file

    from ..certs import reseal, reword

    out = tmp_path / "c.json"
    assert main(["audit", "dpsgd", "--noise-multiplier", sigma, "--sampling-rate", "0.01", "--steps", "10",
                 "--delta", "1e-5", "--certificate", str(out)]) == 0
    cert = json.loads(out.read_text())
    assert cert["result"]["enclosure"] == {"lo": "0", "hi": "0"}
    assert verify_file(out)[0] == 0
    cert["inputs"]["noise_multiplier"] = "1"
    cert["result"]["grid"] = "2^-12"
    out.write_text(json.dumps(reseal(reword(cert))))
    assert verify_file(out)[0] == 1
