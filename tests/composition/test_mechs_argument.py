"""adv43 L1 / F5: the public ``mechs`` argument of the composition functions.

A float, None or True raised a bare TypeError deep inside the grouping; a text "E,D" was read
character by character; an endless iterable was consumed before the count cap was looked at (it never
returned); and a generator handed to the grid route was read twice, once per rounding. Each is now an
InvalidParameter naming ``mechs`` before any work, and a generator gives the list's answer."""

import itertools
from fractions import Fraction

import pytest

import dpverify
from dpverify.errors import InvalidParameter
from dpverify.limits import MAX_COMPOSED_MECHANISMS

CALLS = {
    "compose_delta": lambda m: dpverify.compose_delta(m, "2", k=2),
    "compose_eps": lambda m: dpverify.compose_eps(m, "1e-4"),
    "compose_eps_grid": lambda m: dpverify.compose_eps_grid(m, "1e-4", "1/64"),
}


class _NotCallable:
    __iter__ = 3  # adv44 L1: hasattr(x, "__iter__") holds, and iter(x) raises a bare TypeError


@pytest.mark.parametrize("name", sorted(CALLS))
@pytest.mark.parametrize("bad", [float("nan"), None, True, float("inf"), 3, "1,1e-5", b"1,1e-5",
                                 {("1", "1e-5"): 1}, _NotCallable()])  # a dict was read as its keys (adv44 L1)
def test_a_non_list_is_refused_by_name(name, bad):
    with pytest.raises(InvalidParameter) as exc:
        CALLS[name](bad)
    assert exc.value.name == "mechs" and "must be a list of guarantees" in str(exc.value)


@pytest.mark.parametrize("name", sorted(CALLS))
def test_an_endless_iterable_is_refused_at_the_cap(name):
    with pytest.raises(InvalidParameter, match=f"at most {MAX_COMPOSED_MECHANISMS:,} mechanisms") as exc:
        CALLS[name](itertools.repeat(("1", "1e-5")))
    assert exc.value.name == "mechs"


def test_a_generator_gives_the_lists_answer():
    # two mechanisms, (1, 1e-5) and (1/2, 0): the grid route rounds the eps_i down and up; before, the
    # second rounding read an exhausted generator. Independent check of the value: both guarantees lie
    # on the grid 1/64, so the grid bounds coincide with the exact composition, which for two pure-ish
    # mechanisms at delta 1e-4 >= 1 - (1 - 1e-5) is at most eps_1 + eps_2 = 3/2 (basic composition)
    pairs = [("1", "1e-5"), ("1/2", "0")]
    a = dpverify.compose_eps_grid(iter(pairs), "1e-4", "1/64")
    b = dpverify.compose_eps_grid(pairs, "1e-4", "1/64")
    assert repr(a) == repr(b) and repr(a.lower) == repr(a.upper)
    assert Fraction(a.enclosure.hi_str()) <= Fraction(3, 2)


@pytest.mark.parametrize("bad", [float("nan"), 1.0, "1", None])
def test_an_enclosure_of_non_balls_is_refused_by_name(bad):
    # adv43 (nit of L1): Enclosure.from_bounds(nan, 1) raised AttributeError 'float' has no 'is_finite'
    from flint import arb

    from dpverify import Enclosure

    for call, name in ((lambda: Enclosure.from_bounds(bad, arb(1)), "lo"),
                       (lambda: Enclosure.from_bounds(arb(0), bad), "hi"),
                       (lambda: Enclosure(bad, arb(1)), "lo")):
        with pytest.raises(InvalidParameter) as exc:
            call()
        assert exc.value.name == name
