"""The mixture-of-Gaussians blocks (:func:`dpverify.recheck.events._mog`'s ``block_roots``: one
proposed polynomial Z(t) in z = e^(g x) per block of knots, proved by an exact residual bound; and on
blocks of 2^(_MOG_TM_RHO + 1) knots or more ``block_tails``: the tails as Taylor models in t) against
mpmath's 50-digit tails (the root found by bisection on S(x) itself, no polynomial, no Newton), against
the knot-by-knot route (the same tails, each root proved by its own bracket), and with proposals
gone astray (refused: the knots fall back to the knot loop, and every enclosure still holds)."""

from __future__ import annotations

import random
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


def _counting(monkeypatch, wrap=None):
    """Count the blocks proposed (and let ``wrap`` edit each proposal)."""
    calls = {"n": 0}
    orig = R._mog_u_series

    def counted(*args):
        calls["n"] += 1
        u = orig(*args)
        return wrap(u) if wrap is not None and u is not None else u

    monkeypatch.setattr(R, "_mog_u_series", counted)
    return calls


def _counting_models(monkeypatch):
    """Count the Taylor-model tails taken (one :func:`_tm_combine` of Q's tails per block that gets so far)."""
    calls = {"n": 0}
    orig = R._tm_combine

    def counted(*args, **kw):
        calls["n"] += 1
        return orig(*args, **kw)

    monkeypatch.setattr(R, "_tm_combine", counted)
    return calls


def _check_truth(s, cs, ps, direction, prec, m, lo, hi, every, got):
    # the truth at prec + 100 bits, so a miss of the enclosure by more than 2^-(prec + 90) is seen
    with mpmath.workprec(prec + 100):
        tol = mpmath.mpf(2) ** -(prec + 90)
        p0 = sum((p for c, p in zip(cs, ps) if c == 0), F(0))
        for i in range(lo, hi + 1, every):
            y = mpmath.mpf(i) / 2 ** m * (1 if direction == "remove" else -1)
            if p0 > 0 and y <= mpmath.log(mpmath.mpf(p0.numerator) / p0.denominator):
                want = [1, 1] if direction == "remove" else [0, 0]
            else:
                _, (tp, tq) = _mog_truth(s, cs, ps, y)
                want = [tp, tq] if direction == "remove" else [1 - tq, 1 - tp]
            for (u, v), w in zip(got[i - lo], want):
                u, v = mpfr_to_mpf(u), mpfr_to_mpf(v)
                assert u - tol <= w <= v + tol, (i, direction)
                if (u, v) != (0, 1):
                    assert v - u <= mpmath.mpf(2) ** -(prec - 40), i


@pytest.mark.parametrize("s, cs, ps", CASES)
@pytest.mark.parametrize("direction", ["remove", "add"])
def test_block_roots_hold_the_50_digit_tails(monkeypatch, s, cs, ps, direction):
    # knots from below log p_0 (blocks refused there: outside the support, or too near its end) to 6 nats
    m, lo, hi = 8, -700, 1536
    lo, hi = (lo, hi) if direction == "remove" else (-hi, -lo)
    calls = _counting(monkeypatch)
    tails = R._mog(s, cs, ps, direction)
    got = tails.at_knots(arith(152), lo, hi, m)
    assert len(got) == hi - lo + 1
    assert calls["n"] >= 10
    _check_truth(s, cs, ps, direction, 152, m, lo, hi, 37, got)


@pytest.mark.parametrize("prec, m", [(128, 6), (191, 10), (300, 12)])
def test_block_roots_at_several_precisions_and_grids(monkeypatch, prec, m):
    s, cs, ps = CASES[0]
    calls = _counting(monkeypatch)
    got = R._mog(s, cs, ps, "remove").at_knots(arith(prec), -40, 6 << m, m)
    assert calls["n"] >= 5
    _check_truth(s, cs, ps, "remove", prec, m, -40, 6 << m, 97 << (m - 6), got)


@pytest.mark.parametrize("s, cs, ps", CASES)
@pytest.mark.parametrize("direction", ["remove", "add"])
def test_taylor_model_tails_hold_the_50_digit_tails(monkeypatch, s, cs, ps, direction):
    # 2^-10: blocks of 512 knots (rho = 8), whose tails are Taylor models in t where their error allows
    m, prec = 10, 191
    lo, hi = (-100, 6 << m) if direction == "remove" else (-(6 << m), 100)
    models = _counting_models(monkeypatch)
    got = R._mog(s, cs, ps, direction).at_knots(arith(prec), lo, hi, m)
    assert models["n"] >= 6
    _check_truth(s, cs, ps, direction, prec, m, lo, hi, 53, got)
    # and at every knot of one block whose tails are models (the middle of the range)
    mid = (lo + hi) // 2
    _check_truth(s, cs, ps, direction, prec, m, mid, mid + 40, 1, got[mid - lo:])


@pytest.mark.parametrize("direction", ["remove", "add"])
def test_block_roots_agree_with_the_knot_loop(monkeypatch, direction):
    # the two routes prove the same roots: their enclosures overlap at every knot, and are both narrow
    s, cs, ps = CASES[1]
    m, prec = 10, 191
    lo, hi = (-100, 5000) if direction == "remove" else (-5000, 100)
    A = arith(prec)
    blocks = R._mog(s, cs, ps, direction).at_knots(A, lo, hi, m)
    monkeypatch.setattr(R, "_MOG_MIN_RHO", 99)  # every knot by the knot loop
    knots = R._mog(s, cs, ps, direction).at_knots(A, lo, hi, m)
    for g, k in zip(blocks, knots):
        for a, b in zip(g, k):
            assert a[0] <= b[1] and b[0] <= a[1]
            assert a[1] - a[0] <= 2 * (b[1] - b[0]) + mpmath.mpf(2) ** -(prec - 8)


@pytest.mark.parametrize("how", ["scaled", "high", "sign"])
def test_a_proposal_gone_astray_is_refused_or_still_proved(monkeypatch, how):
    # the proposal is untrusted: u_1 off by 1e-6, a high coefficient off by 2^-100 of the unit, or every
    # odd coefficient's sign flipped; a block whose residual bound is too wide goes knot by knot, and a
    # block still accepted is proved by its own residual, so every enclosure holds the truth either way
    def astray(u):
        u = list(u)
        if how == "scaled":
            u[1] += u[1] // 10**6
        elif how == "high":
            u[len(u) // 2] += 1 << 90
        else:
            u = [x if j % 2 == 0 else -x for j, x in enumerate(u)]
        return u

    s, cs, ps = CASES[0]
    calls = _counting(monkeypatch, astray)
    for m, lo, hi, every in ((8, -100, 1800, 11), (10, 1000, 6000, 41)):  # roots only; and the tails' models
        got = R._mog(s, cs, ps, "remove").at_knots(arith(160), lo, hi, m)
        _check_truth(s, cs, ps, "remove", 160, m, lo, hi, every, got)
    assert calls["n"] >= 15


def test_kronecker_product_is_the_convolution():
    rng = random.Random(57)
    for _ in range(200):
        a = [rng.randint(-(1 << 300), 1 << 300) for _ in range(rng.randint(1, 40))]
        b = [rng.choice([0, rng.randint(-(1 << 200), 1 << 200)]) for _ in range(rng.randint(1, 40))]
        want = [sum(a[i] * b[j - i] for i in range(len(a)) if 0 <= j - i < len(b)) for j in range(len(a) + len(b) - 1)]
        assert R._ipoly_mul(a, b) == want
        assert R._ipoly_mul(b, a) == want


def test_a_power_of_w_floored_to_zeros_multiplies_to_zeros():
    # ref57: a power of W whose model floors to all-zero coefficients made the slot width 1 bit and
    # gmpy2.pack raised; the block (-40 .. 2007 on 2^-12, 128 bits) must answer, and hold the truth
    assert R._ipoly_mul([0, 0], [3, 5]) == [0, 0, 0]
    s, cs, ps = F(3), [F(0), F(1), F(2)], [F(3, 5), F(3, 10), F(1, 10)]
    got = R._mog(s, cs, ps, "remove").at_knots(arith(128), -40, 4096, 12)
    _check_truth(s, cs, ps, "remove", 128, 12, -40, 4096, 97, got)
