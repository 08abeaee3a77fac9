"""The claims registry: every statement of the papers that dpverify re-derives.

The claims are data: one JSON Lines record per claim in
``dpverify/theorems/claims/*.jsonl`` (package data, so an installed dpverify
has them; schema ``dpverify/theorems/claim.schema.json``). A
record names its source (paper short name and theorem / section / page; the
short names are expanded in docs/reference/references.md), the statement, the number
*as printed*, a machine-checkable ``relation`` between the printed number and
the certified value, and the ``quantity`` + ``inputs`` that the quantity
registry (:mod:`dpverify.theorems.quantities`) turns into a certified
:class:`Enclosure`. Adding a claim is adding a record.

Verdict semantics for printed numbers (a printed number is a claim, never an input): holds when
the whole certified enclosure satisfies the relation (for ``rounds_to``: it
rounds to the printed digits), fails when the whole enclosure violates it,
undecided otherwise. A claim that fails is a finding, not an error.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

from flint import arb

from ..ball import ball, parse_exact, working_precision
from ..errors import InvalidParameter
from ..verdict import Enclosure, Outcome, Verdict
from . import quantities
from .records import InvalidRecord, load_schema, read_jsonl

__all__ = ["Claim", "claims", "load_claims", "decide", "check", "truth_interval", "CLAIMS_DIR"]

#: the paper claims shipped with the package (package data: theorems/claims/*.jsonl)
CLAIMS_DIR = Path(__file__).resolve().parent / "claims"
SCHEMA = Path(__file__).resolve().parent / "claim.schema.json"


@dataclass(frozen=True)
class Claim:
    """One checkable statement from a paper (a record of ``theorems/claims/*.jsonl``)."""

    id: str
    source: str
    statement: str
    printed: str
    relation: Mapping[str, str]
    quantity: str
    inputs: Mapping[str, Any]
    domain: str = ""
    note: str = ""

    def compute(self) -> Enclosure:
        """The certified value, through the quantity registry."""
        return quantities.compute(self.quantity, self.inputs)


def record_schema() -> dict[str, Any]:
    """``claim.schema.json`` held to what a certificate may record of a claim: the lengths of its
    words and the number spelling of its relation's ends, read from the certificate schema (one copy
    of each bound). A record past them was read, computed, then refused by the writer as a bug, exit 4
    (adv51 L3: a bound "+1" or " 1 ", an id of 5,000 characters)."""
    from ..certificate.format import FORMAT, load_schema as certificate_schema

    schema = copy.deepcopy(load_schema(SCHEMA))
    cert = certificate_schema(FORMAT)
    fields = cert["properties"]["claim"]["properties"]
    for key, spec in schema["properties"].items():
        if "maxLength" in fields.get(key, {}):
            spec["maxLength"] = fields[key]["maxLength"]
    for form in schema["properties"]["relation"]["oneOf"]:
        for key, spec in form["properties"].items():
            if key != "kind":
                spec.update({k: v for k, v in cert["$defs"]["number"].items() if k in ("pattern", "maxLength")})
    return schema


def load_claims(paths: Sequence["str | Path"]) -> list[Claim]:
    """The claims of the given JSON Lines files (in order), each record checked
    against the schema, its relation parsed and its inputs' keys and values checked
    against its quantity (:func:`quantities.check_inputs`, :func:`quantities.check_values`);
    ids must be unique across the files."""
    schema = record_schema()
    out: list[Claim] = []
    seen: dict[str, str] = {}
    for path in paths:
        for where, n, rec in read_jsonl(path, schema):
            if rec["id"] in seen:
                raise InvalidRecord(where, "id", f"duplicate claim id {rec['id']!r} (first in {seen[rec['id']]})")
            seen[rec["id"]] = where
            try:
                truth_interval(rec["relation"])
                quantities.check_inputs(rec["quantity"], rec["inputs"])
                quantities.check_values(rec["quantity"], rec["inputs"])
            except InvalidParameter as exc:
                field = exc.name if exc.name.startswith("inputs.") or exc.name == "quantity" else "relation"
                raise InvalidRecord(where, field, exc.message) from None
            out.append(Claim(**rec))
    return out


def claims(directory: "Optional[str | Path]" = None) -> list[Claim]:
    """Every claim of ``directory`` (default: the package's ``theorems/claims/``),
    files in name order, records in file order."""
    d = Path(directory) if directory is not None else CLAIMS_DIR
    if d.exists() and not d.is_dir():
        # a claims file given for the folder was "no such claims directory" (mend49 7)
        raise InvalidRecord(str(d), "", "is a file, not a folder: --claims takes the folder holding the "
                            "*.jsonl claim files (this file's folder, if it is one of them)")
    if not d.is_dir():
        raise InvalidRecord(str(d), "", "no such claims directory (give the directory holding the "
                            "*.jsonl claim files)")
    files = sorted(d.glob("*.jsonl"))
    if not files:
        raise InvalidRecord(str(d), "", "no *.jsonl claim files")
    return load_claims(files)


def _half_unit(printed: str) -> Fraction:
    mant, _, exp = printed.lower().partition("e")
    decimals = len(mant.split(".")[1]) if "." in mant else 0
    return Fraction(1, 2) * Fraction(10) ** ((int(exp) if exp else 0) - decimals)


def truth_interval(relation: Mapping[str, str]) -> tuple[Any, Any, bool, bool]:
    """(A, B, A closed, B closed): the values for which the relation holds;
    None stands for an infinite end."""
    kind = relation.get("kind")
    if kind == "rounds_to":
        p = parse_exact(relation["printed"], "printed")
        h = _half_unit(relation["printed"])
        return p - h, p + h, True, True
    if kind == "order_of_magnitude":
        p = parse_exact(relation["printed"], "printed")
        return p, 10 * p, True, False
    if kind in ("lt", "le"):
        return None, parse_exact(relation["bound"], "bound"), True, kind == "le"
    if kind in ("gt", "ge"):
        return parse_exact(relation["bound"], "bound"), None, kind == "ge", True
    if kind == "in":
        return parse_exact(relation["lo"], "lo"), parse_exact(relation["hi"], "hi"), True, True
    raise ValueError(f"unknown relation kind {kind!r}")


def decide(enclosure: Enclosure, relation: Mapping[str, str]) -> Outcome:
    """Verdict of ``relation`` over every value of ``enclosure`` (exact
    comparisons of exact endpoints; arb answers only when certain)."""
    a, b, a_closed, b_closed = truth_interval(relation)
    lo, hi = enclosure.lo, enclosure.hi
    with working_precision(max(256, enclosure.print_digits() * 4 + 64)):
        A = ball(a) if a is not None else None
        Bb = ball(b) if b is not None else None

        def ge_a(x: arb) -> bool:
            return A is None or bool(x >= A if a_closed else x > A)

        def le_b(x: arb) -> bool:
            return Bb is None or bool(x <= Bb if b_closed else x < Bb)

        if ge_a(lo) and le_b(hi):
            return Outcome.HOLDS
        below = A is not None and bool(hi < A if a_closed else hi <= A)
        above = Bb is not None and bool(lo > Bb if b_closed else lo >= Bb)
        if below or above:
            return Outcome.FAILS
    return Outcome.UNDECIDED


def check(claim: Claim) -> tuple[Enclosure, Verdict]:
    """Compute the claim's certified value and decide its relation."""
    enclosure = claim.compute()
    outcome = decide(enclosure, claim.relation)
    from ..certificate.comments import registry_reason

    return enclosure, Verdict(outcome, registry_reason(outcome.value, enclosure.short()), {"value": enclosure})
