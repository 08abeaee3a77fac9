"""The add direction's eps plan read off the remove direction's windowed float law by the swap
identity (plan._swapped_eps, plan_query): checked against the add direction's own windowed law
(plan._fine_eps on the add pairs, the route it replaces), and the plan's choices (grids at 1e-3
and 1e-4, loss range, width, the top direction) against plan_query with the swap switched off."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest

from dpverify.pld import plan as P
from dpverify.pld.dpsgd import GaussianSteps

_ROWS = [("1", "0.01", 1000), ("4", "0.01", 10000), ("0.8", "0.004", 20000), ("3", "4096/50000", 2500),
         ("1.1", "256/60000", 14063), ("1", "0.01", 10000), ("2", "0.05", 3000)]


def _steps(sigma: str, q: str, T: int) -> list:
    return [GaussianSteps(Fraction(sigma), Fraction(q), T).step()]


@pytest.mark.parametrize("sigma,q,T", _ROWS)
def test_swapped_plan_chooses_what_the_add_directions_own_law_chose(monkeypatch, sigma, q, T):
    steps = _steps(sigma, q, T)
    delta = Fraction(1, 10 ** 5)
    new = P.plan_query(steps, ["remove", "add"], "eps", delta)
    used: list = []
    orig = P._swapped_eps

    def spy(fine, d):
        r = orig(fine, d)
        used.append(r)
        return r

    monkeypatch.setattr(P, "_swapped_eps", spy)
    P.plan_query(steps, ["remove", "add"], "eps", delta)
    assert used and used[0] is not None  # the swapped read stood in on every one of these rows
    monkeypatch.setattr(P, "_swapped_eps", lambda fine, d: None)  # the add direction's own law
    old = P.plan_query(steps, ["remove", "add"], "eps", delta)
    assert new is not None and old is not None
    for w in (1e-3, 1e-4):
        assert P.planned_grid(new, "eps", w) == P.planned_grid(old, "eps", w)
    assert (new.eps, new.range_nats, new.width_h2, new.checked) == (old.eps, old.range_nats, old.width_h2, old.checked)
    top_new = max(new.per_direction, key=lambda t: t[1])[0]
    top_old = max(old.per_direction, key=lambda t: t[1])[0]
    assert top_new == top_old == "remove"
    # the estimate itself, against the add pairs' own windowed law
    e_new = dict((n, x) for n, x, _ in new.per_direction)["add"]
    e_old = dict((n, x) for n, x, _ in old.per_direction)["add"]
    assert abs(e_new - e_old) <= 2e-2 * max(1.0, e_old), (e_new, e_old)


def test_swapped_plan_steps_aside_where_the_floats_cannot_carry_it(monkeypatch):
    # T = 1e5 (eps' 25.5): e^eps times the window's round-off reaches delta (the swapped read
    # gives 19.4) and the remove direction's fine read fails: the add direction keeps its own plan
    steps = _steps("1", "0.01", 10 ** 5)
    got: list = []
    orig = P._swapped_eps
    monkeypatch.setattr(P, "_swapped_eps", lambda fine, d: got.append(orig(fine, d)) or got[-1])
    plan = P.plan_query(steps, ["remove", "add"], "eps", Fraction(1, 10 ** 5))
    assert all(g is None for g in got)
    e_add = dict((n, x) for n, x, _ in plan.per_direction)["add"]
    assert math.isclose(e_add, 25.52, abs_tol=0.05), e_add


def test_swapped_eps_declines_where_e_to_the_eps_meets_the_round_off():
    # the guard itself, on the T = 1e5 remove law's window read at 2^-7 (plan._window_at)
    steps = _steps("1", "0.01", 10 ** 5)
    pair = steps[0].make_pair("remove")
    i0, n = P.grid_range(pair, 6, 1e-15)
    w = P._window_at([(pair, 10 ** 5, i0, n)], 7, 33.0)
    assert w is not None
    up, lo = w.eps_at(w.upper, 1e-5, 1e-7), w.eps_at(w.lower, 1e-5, 1e-7)
    assert P._swapped_eps((w, up, lo), 1e-5) is None
