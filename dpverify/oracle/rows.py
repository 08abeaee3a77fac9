"""Oracle input rows: parsing (CSV / JSON, against a shipped JSON Schema) with
errors that name the file and the row.

A row is one accountant's reported epsilon for one configuration. Numbers are
kept exact, from the text of the file (the reported epsilon too: "1.82824" is
182824/100000, in CSV and in JSON alike), so that the classification compares
exact numbers with certified bounds.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Mapping

from .. import _validate as V
from ..ball import exact_str
from ..errors import InvalidParameter
from ..schemas import at, load_csv, load_json
from ..certificate.format import ORACLE_ALIASES, ORACLE_FIELDS, ORACLE_INFINITY, ORACLE_MECHANISMS
from ..limits import MAX_ORACLE_CONFIGURATIONS, MAX_STEPS

__all__ = ["Config", "Row", "check_configurations", "parse_rows", "FIELDS", "MAX_ORACLE_CONFIGURATIONS",
           "MAX_STEPS"]

FIELDS = ORACLE_FIELDS
MECHANISMS = ORACLE_MECHANISMS
#: names that mean the same configuration (one vocabulary with `sweep` grids and the corpus)
ALIASES = ORACLE_ALIASES
#: spellings of a reported +inf (Python's str(float("inf")), and what JSON writers print);
#: the shipped schema oracle_rows lists the same
INFINITY = ORACLE_INFINITY


@dataclass(frozen=True)
class Config:
    """A DP-SGD configuration: T steps of the Poisson-subsampled Gaussian
    (sampling rate q; q = 1 is the plain Gaussian), target delta."""

    mechanism: str
    noise_multiplier: Fraction
    sampling_rate: Fraction
    steps: int
    delta: Fraction

    def key(self) -> tuple:
        return (self.mechanism, self.noise_multiplier, self.sampling_rate, self.steps, self.delta)

    def describe(self) -> str:
        return (
            f"sigma={exact_str(self.noise_multiplier)}, q={exact_str(self.sampling_rate)}, "
            f"T={self.steps}, delta={exact_str(self.delta)}"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "mechanism": self.mechanism,
            "noise_multiplier": exact_str(self.noise_multiplier),
            "sampling_rate": exact_str(self.sampling_rate),
            "steps": self.steps,
            "delta": exact_str(self.delta),
        }


@dataclass(frozen=True)
class Row:
    """One reported epsilon (``reported`` None when the accountant crashed;
    ``error`` then holds the exception text)."""

    number: int
    accountant: str
    config: Config
    reported: "Fraction | None"
    reported_text: str
    error: str = ""


def make_row(number: int, record: Mapping[str, Any], *, file: str = "input",
             option: str = "input") -> Row:
    """Validate one record (an object with FIELDS, already checked against the
    schema ``oracle_rows``); value errors name the file and ``rows[number]``."""
    try:
        mech = str(record["mechanism"]).strip()
        if mech not in MECHANISMS:
            raise InvalidParameter(
                "mechanism", f"mechanism={mech!r} must be one of {', '.join(MECHANISMS)}"
            )
        sigma = V.positive("noise_multiplier", record["noise_multiplier"])
        q = V.half_open_unit("sampling_rate", record["sampling_rate"])
        if mech == "gaussian" and q != 1:
            raise InvalidParameter("sampling_rate", "sampling_rate must be 1 for mechanism 'gaussian'")
        mech = ALIASES.get(mech, mech)
        steps = V.integer("steps", str(record["steps"]), lo=1, hi=MAX_STEPS)
        delta = V.open_unit("delta", record["delta"])
        text = str(record["reported_eps"]).strip()
        if text.lower() in INFINITY:
            # the accountant returned +inf: a true but vacuous guarantee, the
            # "returned-inf" verdict of the oracle (no number to compare)
            reported, text = None, "inf"
        else:
            reported = V.nonnegative("reported_eps", record["reported_eps"])
    except InvalidParameter as exc:
        raise at(file, "rows", [number, exc.name], option, exc) from None
    return Row(
        number,
        str(record["accountant"]).strip(),
        Config(mech, sigma, q, steps, delta),
        reported,
        text,
    )


def parse_rows(text: str, fmt: str, *, file: str = "input", option: str = "input") -> list[Row]:
    """Rows from CSV (a header line naming FIELDS, in any order) or JSON (a list
    of objects with FIELDS), validated against the shipped schema
    ``dpverify/schemas/oracle_rows.schema.json``: an unknown or missing column
    or key, a wrong type or an out-of-range value is refused with the file and
    ``rows[i].field`` (i counts data rows from 0). JSON numbers are exact from
    their text (``1.82824`` is 182824/100000), as CSV cells are."""
    if fmt == "csv":
        records = load_csv(text, "oracle_rows", file=file, option=option, root="rows")
    elif fmt == "json":
        records = load_json(text, "oracle_rows", file=file, option=option, root="rows")
    else:
        raise InvalidParameter(option, f"unknown input format {fmt!r} (csv or json)")
    rows = [make_row(i, r, file=file, option=option) for i, r in enumerate(records)]
    check_configurations(rows, file=file, option=option)
    return rows


def check_configurations(rows: "list[Row]", *, file: str = "input", option: str = "input") -> None:
    """Bound the work before it starts: every distinct configuration costs one
    certified computation (up to a time budget each), so at most
    MAX_ORACLE_CONFIGURATIONS of them; rows are cheap (100,000 allowed)."""
    keys = {r.config.key() for r in rows}
    if len(keys) > MAX_ORACLE_CONFIGURATIONS:
        raise InvalidParameter(
            option, f"{file}: {len(keys)} distinct configurations; at most {MAX_ORACLE_CONFIGURATIONS} "
            "in one run (each is one certified computation); split the file, or use `dpverify sweep` "
            "with the oracle task (cached, parallel)")
