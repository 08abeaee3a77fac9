"""The neighbouring relation of a guarantee, and the one-directional pairs that
make up its privacy curve: one type for every module (PLD, events, calibrate,
sweeps, adapters), declared once.

A relation's curve is the pointwise maximum of the curves of its directions
(AFA Sec 4.1: compose "add" and "remove" separately, take the max at the end).
Replace-special is dp_accounting's relation in which one record is replaced by
a fixed special record; it has the directions of add-remove (each of its
dominating pairs is one of theirs).
"""

from __future__ import annotations

import enum
from typing import Any, Iterable, Optional

from .errors import InvalidParameter, shown

__all__ = ["Relation", "Direction", "DIRECTIONS", "SCHEDULE_RELATIONS", "relation", "directions"]


class Relation(str, enum.Enum):
    """The neighbouring relation; its value is the name used in the CLI, in JSON
    inputs and in every certificate."""

    ADD_REMOVE = "add-remove"
    ADD = "add"
    REMOVE = "remove"
    REPLACE_ONE = "replace-one"
    REPLACE_SPECIAL = "replace-special"

    def __str__(self) -> str:
        return self.value


class Direction(str, enum.Enum):
    """One direction of a dominating pair: remove (P = D, Q = D minus one),
    add (the reverse), or replace (one record swapped)."""

    REMOVE = "remove"
    ADD = "add"
    REPLACE = "replace"

    def __str__(self) -> str:
        return self.value


#: relation -> the directions whose pointwise maximum is its privacy curve
DIRECTIONS: dict[Relation, tuple[Direction, ...]] = {
    Relation.ADD_REMOVE: (Direction.REMOVE, Direction.ADD),
    Relation.ADD: (Direction.ADD,),
    Relation.REMOVE: (Direction.REMOVE,),
    Relation.REPLACE_ONE: (Direction.REPLACE,),
    Relation.REPLACE_SPECIAL: (Direction.REMOVE, Direction.ADD),
}

#: the relations of a DP-SGD schedule (``audit dpsgd`` without --events, calibrate,
#: sweeps): replace-special is an event-tree relation only
SCHEDULE_RELATIONS = (Relation.ADD_REMOVE, Relation.ADD, Relation.REMOVE, Relation.REPLACE_ONE)

#: dp_accounting's NeighboringRelation member names -> ours
_HOST_NAMES = {"ADD_OR_REMOVE_ONE": Relation.ADD_REMOVE, "REPLACE_ONE": Relation.REPLACE_ONE,
               "REPLACE_SPECIAL": Relation.REPLACE_SPECIAL}


def relation(value: Any, *, allowed: Optional[Iterable[Relation]] = None) -> Relation:
    """Parse a relation: one of our names ("add-remove", ...), a :class:`Relation`,
    or dp_accounting's ``NeighboringRelation`` enum. ``allowed`` restricts the
    result (a relation outside it is refused naming the allowed ones).

    Raises :class:`InvalidParameter` ("neighboring") for anything else."""
    pool = tuple(allowed) if allowed is not None else tuple(Relation)
    names = ", ".join(r.value for r in pool)
    if isinstance(value, Relation):
        r: Optional[Relation] = value
    elif not isinstance(value, str) and getattr(value, "name", None) in _HOST_NAMES:
        r = _HOST_NAMES[value.name]
    else:
        text = getattr(value, "value", value)
        try:
            r = Relation(str(text).strip().lower())
        except ValueError:
            r = None
    if r is None or r not in pool:
        raise InvalidParameter("neighboring", f"neighboring={shown(value)} is not a relation here (allowed: {names})")
    return r


def directions(rel: Relation) -> tuple[Direction, ...]:
    """The directions whose pointwise maximum is ``rel``'s privacy curve."""
    return DIRECTIONS[rel]
