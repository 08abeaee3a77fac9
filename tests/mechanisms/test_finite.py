"""Finite mechanisms: likelihood-ratio route = exhaustive 2^n route, exact and in balls."""

from fractions import Fraction as F

import pytest
from hypothesis import given, strategies as st

from dpverify.ball import ball, working_precision
from dpverify.errors import InvalidParameter
from dpverify.mechanisms.finite import FiniteMechanism


@st.composite
def pmf_pairs(draw, max_n=8):
    n = draw(st.integers(1, max_n))
    def pmf():
        w = draw(st.lists(st.integers(0, 20), min_size=n, max_size=n).filter(lambda w: sum(w) > 0))
        return [F(x, sum(w)) for x in w]
    return FiniteMechanism.of(pmf(), pmf())


@given(m=pmf_pairs(), r=st.fractions(min_value=F(1, 10), max_value=10, max_denominator=12))
def test_routes_agree_exactly_both_directions(m, r):
    for mm in (m, m.reversed()):
        a = mm.delta_exact(r)
        assert a == mm.delta_enumerated_exact(r)
        # the sup over events, by definition, directly (independent third route)
        best = max(
            sum((mm.P[i] - r * mm.Q[i] for i in range(mm.n) if s >> i & 1), F(0))
            for s in range(1 << mm.n)
        )
        assert a == best


@given(m=pmf_pairs(6), t=st.fractions(min_value=-3, max_value=3, max_denominator=10))
def test_ball_routes_agree(m, t):
    with working_precision(128):
        a = m.delta(ball(t))
        b = m.delta_enumerated(ball(t))
        assert a.overlaps(b) and a.rad() < 1e-30 and b.rad() < 1e-30


def test_twenty_outcomes():
    P = [F(1, 20)] * 20
    Q = [F(i + 1, 210) for i in range(20)]
    m = FiniteMechanism.of(P, Q)
    assert m.delta_enumerated_exact(F(1)) == m.delta_exact(F(1))


def test_invalid():
    with pytest.raises(InvalidParameter):
        FiniteMechanism.of([F(1, 2)], [F(1)])
    with pytest.raises(InvalidParameter):
        FiniteMechanism.of([F(3, 2), F(-1, 2)], [F(1, 2), F(1, 2)])
    with pytest.raises(InvalidParameter):
        FiniteMechanism.of([F(1, 21)] * 21, [F(1, 21)] * 21).delta_enumerated_exact(F(1))
