"""eps_mu(delta) whose root is positive but within 10^-digits of zero meets the relative width
(adv48 L2: sigma 1e20, rate 1, one step, delta 1e-21 printed eps in [0, 7.6e-6], relative width 1,
against a truth of 9.02e-21). The root finder (ball.isolate_increasing_root) proves f(0) < 0, then a
positive lower end (:func:`dpverify.ball._positive_lower_end`), and refines on; a root at zero, a
negative one, one too near zero for the probes, or an f(0) it cannot decide keeps the absolute width,
without a hang. References: mpmath at 150 digits (its own Phi and a bisection of its own)."""

from __future__ import annotations

from fractions import Fraction

import mpmath
import pytest
from flint import arb

from dpverify import ball as B
from dpverify.gdp.eps_for_delta import eps_for_delta


def _ref_eps(mu: Fraction, delta: Fraction) -> mpmath.mpf:
    """The root of delta_mu(eps) = delta by bisection on [0, 10 mu + 50] at 150 digits."""
    with mpmath.workdps(150):
        m = mpmath.mpf(mu.numerator) / mu.denominator
        D = mpmath.mpf(delta.numerator) / delta.denominator
        a, b = mpmath.mpf(0), 10 * m + 50
        for _ in range(600):
            c = (a + b) / 2
            f = mpmath.ncdf(-c / m + m / 2) - mpmath.exp(c) * mpmath.ncdf(-c / m - m / 2)
            a, b = (c, b) if f > D else (a, c)
        return a


def _frac(x: arb) -> Fraction:
    return B.arb_to_fraction(x)


@pytest.mark.parametrize("mu,delta", [
    (Fraction(1, 10**20), Fraction(1, 10**21)),  # adv48 L2: eps about 9.02e-21
    (Fraction(1, 10**40), Fraction(1, 10**45)),
    (Fraction(1, 1000), Fraction(3, 10**4)),  # eps about 1.7e-3, above 10^-digits: unchanged path
])
@pytest.mark.parametrize("digits", [4, 12])
def test_a_positive_root_near_zero_meets_the_relative_width(mu, delta, digits) -> None:
    enc = eps_for_delta(mu, delta, digits=digits)
    lo, hi = _frac(enc.lo), _frac(enc.hi)
    ref = _ref_eps(mu, delta)
    with mpmath.workdps(150):
        assert mpmath.mpf(lo.numerator) / lo.denominator <= ref <= mpmath.mpf(hi.numerator) / hi.denominator
    assert 0 < lo <= hi and hi - lo <= Fraction(1, 10**digits) * lo


def test_the_cli_prints_the_relative_width(capsys) -> None:
    from dpverify.cli import main

    main(["audit", "dpsgd", "--noise-multiplier", "1e20", "--sampling-rate", "1", "--steps", "1",
          "--delta", "1e-21"])
    out = capsys.readouterr().out
    assert "epsilon(delta) in [9.02346" in out, out


def test_roots_at_below_and_too_near_zero_keep_the_absolute_width() -> None:
    """f(0) = 0 exactly: the root 0 as [0, 0]. A negative root: the absolute width, as before. A
    positive root below the probes (2^-(2^21) here) or an f(0) whose sign no precision decides
    (a ball that never narrows): the absolute width, after a bounded number of evaluations."""
    a, b, _ = B.isolate_increasing_root(lambda x: x, arb(-1), arb(1), digits=5)
    assert a == 0 and b == 0
    a, b, _ = B.isolate_increasing_root(lambda x: x + arb(10) ** -30, arb(-1), arb(1), digits=5)
    assert a < 0 < b and b - a <= arb(10) ** -5
    tiny = arb(2) ** -(2**22)
    calls = []

    def f(x: arb) -> arb:
        calls.append(x)
        return x - tiny

    a, b, _ = B.isolate_increasing_root(f, arb(-1), arb(1), digits=5, max_bits=512)
    assert a <= 0 < b and b - a <= arb(10) ** -5 and len(calls) < 200
    fuzzy = arb(0, 1e-300)  # sign undecided at every precision
    a, b, _ = B.isolate_increasing_root(lambda x: x - fuzzy if x.is_zero() else x - arb(10) ** -30,
                                        arb(-1), arb(1), digits=5, max_bits=512)
    assert a <= 0 < b and b - a <= arb(10) ** -5


@pytest.mark.parametrize("c", [Fraction(1, 10**30), Fraction(3, 2**200), Fraction(7, 10**9)])
def test_a_tiny_positive_root_of_a_line_is_enclosed_to_relative_width(c) -> None:
    a, b, _ = B.isolate_increasing_root(lambda x: x - B.ball(c), arb(-1), arb(1), digits=20)
    lo, hi = _frac(a), _frac(b)
    assert 0 < lo <= c <= hi and hi - lo <= Fraction(1, 10**20) * lo


def test_a_root_far_below_the_probe_scale_converges_geometrically() -> None:
    """f(x) = x - 2^-(2^18): after the probe near zero the bracket spans a factor 2^(2^18); regula falsi
    shrank its exponent about one bit every two steps and ran out of its 100,000 iterations (ref48).
    Geometric bisection meets the relative width in tens of evaluations; the bracket holds the root."""
    from flint import arb

    from dpverify.ball import isolate_increasing_root

    calls = [0]
    root = arb(2) ** -(2**18)

    def f(x):
        calls[0] += 1
        return x - root

    a, b, _ = isolate_increasing_root(f, arb(-1), arb(1), digits=6, max_bits=4096)
    assert a <= root <= b and calls[0] < 1000
