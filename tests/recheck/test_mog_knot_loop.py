"""The mixture-of-Gaussians knot loop (:func:`dpverify.recheck.events._mog`'s ``many``: a proposal
extrapolated from the previous knots' roots, Halley's iteration, then the same proved bracket and
tails as the per-point route) against the per-point route and against mpmath's 50-digit tails, found
by bisection on S(x) = sum p_i e^(mu_i x - mu_i^2/2) itself (no polynomial in z, no Newton): every
enclosure holds the truth, is as narrow as the bracket allows, and equals the per-point route's
enclosure where the two proposals agree; a proposal gone astray is not trusted (the knot falls back
to the per-point route, and the proof is the same)."""

from __future__ import annotations

from fractions import Fraction as F

import mpmath
import pytest

from dpverify.recheck import events as R
from dpverify.recheck.core import arith, mpfr_to_mpf

from tests.events.test_recheck_events import _mog_truth

CASES = [
    # the bench's BandMF-style mixture: mu 0, 1, 2 (degree 2 in z = e^x)
    (F(1), [F(0), F(1), F(2)], [F(98, 100), F(1, 100), F(1, 100)]),
    # mu_i = 0, 2/3, 5/3: z = e^(x/3), powers 0, 2, 5 (not dyadic)
    (F(3, 2), [F(0), F(1), F(5, 2)], [F(1, 2), F(1, 4), F(1, 4)]),
    # no component at 0: every y has a root
    (F(1), [F(1), F(3)], [F(1, 2), F(1, 2)]),
]


@pytest.fixture(autouse=True)
def _knot_loop_only(monkeypatch):
    # the knot loop itself: no block roots (tests/recheck/test_mog_blocks.py)
    monkeypatch.setattr(R, "_MOG_MIN_RHO", 99)


def _check(s, cs, ps, direction, prec, m, lo, hi, every):
    tails = R._mog(s, cs, ps, direction)
    assert tails.many is not None
    A = arith(prec)
    got = tails.at_knots(A, lo, hi, m)
    assert len(got) == hi - lo + 1
    with mpmath.workdps(50):
        tol = mpmath.mpf(10) ** -45
        p0 = sum((p for c, p in zip(cs, ps) if c == 0), F(0))
        for i in range(lo, hi + 1, every):
            (a0, a1), (b0, b1) = got[i - lo]
            y = mpmath.mpf(i) / 2 ** m * (1 if direction == "remove" else -1)
            if p0 > 0 and y <= mpmath.log(mpmath.mpf(p0.numerator) / p0.denominator):
                want = [1, 1] if direction == "remove" else [0, 0]  # below the loss support
            else:
                _, (tp, tq) = _mog_truth(s, cs, ps, y)
                want = [tp, tq] if direction == "remove" else [1 - tq, 1 - tp]
            for (u, v), w in zip(((a0, a1), (b0, b1)), want):
                u, v = mpfr_to_mpf(u), mpfr_to_mpf(v)
                assert u - tol <= w <= v + tol, (i, direction)
                if (u, v) != (0, 1):
                    assert v - u <= mpmath.mpf(2) ** -(prec - 40), i
    return tails, A, got


@pytest.mark.parametrize("s, cs, ps", CASES)
@pytest.mark.parametrize("direction", ["remove", "add"])
def test_knot_loop_holds_the_50_digit_tails_and_equals_the_per_point_route(s, cs, ps, direction):
    # knots from below log p_0 (the full-mass and undecided knots reset the history) to eps = 6
    m, lo, hi = 8, -700, 1536
    lo, hi = (lo, hi) if direction == "remove" else (-hi, -lo)
    tails, A, got = _check(s, cs, ps, direction, 128 + 24, m, lo, hi, 37)
    same = sum(g == tails(A, A.dyadic(i, m)) for i, g in zip(range(lo, hi + 1), got))
    # both routes converge to the root at the working precision + 16 bits: the same bracket
    # almost everywhere (a proposal one ulp apart moves the bracket's last bits, still an enclosure)
    assert same >= 0.95 * len(got)


@pytest.mark.parametrize("prec, m", [(128, 6), (191, 10), (300, 12)])
def test_knot_loop_at_several_precisions_and_grids(prec, m):
    s, cs, ps = CASES[0]
    _check(s, cs, ps, "remove", prec, m, -40, 6 << m, 97 << (m - 6))


def test_a_proposal_gone_astray_falls_back_and_is_still_proved(monkeypatch):
    # every extrapolated proposal is off by a factor 3 (or negative): Halley from there may still
    # find the root, may stall, or the bracket fails; either way each knot's enclosure is proved
    s, cs, ps = CASES[1]
    calls = {"n": 0}

    def astray(c, hist):
        calls["n"] += 1
        return c.mul(hist[0], 3) if calls["n"] % 2 else c.minus(hist[0])

    monkeypatch.setattr(R, "_extrapolate", astray)
    _check(s, cs, ps, "remove", 160, 7, -100, 700, 13)
    assert calls["n"] > 700
