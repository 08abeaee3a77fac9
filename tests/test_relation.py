"""The one neighbouring-relation type: parsing (our names, dp_accounting's enum),
restriction to a subset, and the direction table (AFA Sec 4.1)."""

from __future__ import annotations

import dp_accounting as dpa
import pytest

from dpverify.errors import InvalidParameter
from dpverify.relation import DIRECTIONS, SCHEDULE_RELATIONS, Direction, Relation, directions, relation


def test_every_relation_has_directions():
    assert set(DIRECTIONS) == set(Relation)
    # add-remove's curve is the max of its two one-directional curves; replace-special
    # (one record swapped for a fixed special one) has the same dominating pairs
    assert directions(Relation.ADD_REMOVE) == (Direction.REMOVE, Direction.ADD)
    assert directions(Relation.REPLACE_SPECIAL) == directions(Relation.ADD_REMOVE)
    assert directions(Relation.REPLACE_ONE) == ("replace",)  # str-valued: bare names compare equal


@pytest.mark.parametrize("given, want", [
    ("add-remove", Relation.ADD_REMOVE), (" Replace-One ", Relation.REPLACE_ONE),
    (dpa.NeighboringRelation.ADD_OR_REMOVE_ONE, Relation.ADD_REMOVE),
    (dpa.NeighboringRelation.REPLACE_ONE, Relation.REPLACE_ONE),
    (dpa.NeighboringRelation.REPLACE_SPECIAL, Relation.REPLACE_SPECIAL),
    (Relation.ADD, Relation.ADD),
])
def test_parse(given, want):
    assert relation(given) is want


@pytest.mark.parametrize("bad", ["swap", "", None, 3, "add_remove"])
def test_unknown_relation_names_the_allowed_ones(bad):
    with pytest.raises(InvalidParameter) as err:
        relation(bad)
    assert err.value.name == "neighboring" and "replace-special" in err.value.message


def test_schedule_relations_refuse_replace_special():
    with pytest.raises(InvalidParameter) as err:
        relation("replace-special", allowed=SCHEDULE_RELATIONS)
    assert "replace-special" not in err.value.message.split("allowed:")[1]
