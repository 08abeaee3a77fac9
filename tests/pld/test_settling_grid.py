"""The coarse try that settles a direction below the top one (refine._settling_grid) may lie below
the schedule's coarsest useful grid (plan.coarsest_grid): the try composes the pessimistic side only,
and what collapses on coarse grids is the optimistic one. Checked against the route that keeps the
old floor (the same query with the try at or above coarsest_grid) and the settling condition itself
(the settled direction's certified upper end at or below the top direction's certified lower end,
AFA Sec 4.1)."""

from __future__ import annotations

from fractions import Fraction as F

import dpverify.pld.refine as R
from dpverify.ball import arb_to_fraction
from dpverify.events import epsilon, model as E
from dpverify.pld.plan import coarsest_grid

T = 10_000
#: the mixture's add direction (eps about 31) lies far below its remove direction (about 52)
MOG3 = E.SelfComposed(E.MixtureOfGaussians(F(1), (F(0), F(1), F(2)), (F(98, 100), F(1, 100), F(1, 100))), T)


def _run(monkeypatch, floor: bool):
    calls: list = []
    orig_dir, orig_grid = R._direction, R._settling_grid

    def spy(steps, d, kind, target, m, *a, **k):
        got = orig_dir(steps, d, kind, target, m, *a, **k)
        calls.append((d.name, m, got))
        return got

    def old(plan, kind, top, name, m):  # the floor this change removed
        return max(coarsest_grid(plan.steps), orig_grid(plan, kind, top, name, m))

    monkeypatch.setattr(R, "_direction", spy)
    if floor:
        monkeypatch.setattr(R, "_settling_grid", old)
    ans = epsilon(MOG3, "1e-5", neighboring="add-remove", rel_width=1e-3)
    monkeypatch.undo()
    return ans, calls


def test_the_add_direction_settles_on_a_try_below_the_coarsest_useful_grid(monkeypatch):
    ans, calls = _run(monkeypatch, floor=False)
    assert [(name, m) for name, m, _ in calls] == [("remove", 8), ("add", 5)] and 5 < coarsest_grid(T)
    (_, _, (lo_top, _)), (_, _, (lo_add, hi_add)) = calls
    assert lo_add is None and hi_add is not None and hi_add <= lo_top  # settled by its upper end alone
    old, old_calls = _run(monkeypatch, floor=True)
    assert [(name, m) for name, m, _ in old_calls] == [("remove", 8), ("add", coarsest_grid(T))]
    assert [arb_to_fraction(x) for x in (ans.enclosure.lo, ans.enclosure.hi)] == \
        [arb_to_fraction(x) for x in (old.enclosure.lo, old.enclosure.hi)]
    # the coarser try's upper end is the wider bound of the same direction (2^-5 against 2^-6)
    assert old_calls[1][2][1] <= hi_add


def test_the_fallback_try_is_never_finer_than_the_grid_it_stands_in_for():
    """Without the width model's numbers for the two directions, the try is two halvings below m or the
    coarsest useful grid; where that grid is finer than m itself (m = 5 at T = 10^4, coarsest 2^-6) the try
    would cost more than the full level it precedes, so it is m (ref54 LOW). Brute force over m."""
    from dpverify.pld.plan import Plan

    for steps in (1, 100, T, 10**7):
        plan = Plan(eps=1.0, log_delta=-11.5, slope=-1.0, range_nats=3.0, steps=steps)  # per_direction empty
        for m in range(4, 24):
            got = R._settling_grid(plan, "eps", "remove", "add", m)
            assert got <= m
            c = coarsest_grid(steps)
            assert got == (m if c > m else max(m - 2, c))
