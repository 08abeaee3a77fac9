"""Oracle input rows: parsing (CSV / JSON) with errors that name the row.

A row is one accountant's reported epsilon for one configuration. Numbers are
kept exact (the reported epsilon too: "1.82824" is 182824/100000, a float
from an accountant is taken at its binary value), so that the classification
compares exact numbers with certified bounds.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Iterable, Mapping

from .. import _validate as V
from ..ball import exact_str
from ..errors import InvalidParameter

__all__ = ["Config", "Row", "parse_rows", "FIELDS", "MAX_STEPS"]

FIELDS = ("accountant", "mechanism", "noise_multiplier", "sampling_rate", "steps", "delta", "reported_eps")
MECHANISMS = ("subsampled-gaussian", "gaussian")
#: a bound on the work one row may ask for (the certified accountant refuses more too)
MAX_STEPS = 10**7


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


def _row_error(number: int, exc: InvalidParameter) -> InvalidParameter:
    return InvalidParameter(exc.name, f"row {number}: {exc.message}")


def make_row(number: int, record: Mapping[str, Any]) -> Row:
    """Validate one record (a dict with FIELDS); errors name the row."""
    missing = [f for f in FIELDS if f not in record or record[f] in (None, "")]
    if missing:
        raise InvalidParameter("input", f"row {number}: missing column(s) {', '.join(missing)}")
    try:
        mech = str(record["mechanism"]).strip()
        if mech not in MECHANISMS:
            raise InvalidParameter(
                "mechanism", f"mechanism={mech!r} must be one of {', '.join(MECHANISMS)}"
            )
        sigma = V.positive("noise_multiplier", _text(record["noise_multiplier"]))
        q = V.half_open_unit("sampling_rate", _text(record["sampling_rate"]))
        if mech == "gaussian" and q != 1:
            raise InvalidParameter("sampling_rate", "sampling_rate must be 1 for mechanism 'gaussian'")
        steps = V.integer("steps", _int_text(record["steps"]), lo=1, hi=MAX_STEPS)
        delta = V.open_unit("delta", _text(record["delta"]))
        reported = V.nonnegative("reported_eps", _text(record["reported_eps"]))
    except InvalidParameter as exc:
        raise _row_error(number, exc) from None
    return Row(
        number,
        str(record["accountant"]).strip(),
        Config(mech, sigma, q, steps, delta),
        reported,
        _text(record["reported_eps"]),
    )


def _text(v: Any) -> Any:
    # floats from JSON stay floats (exact binary value); strings stay strings
    return v.strip() if isinstance(v, str) else v


def _int_text(v: Any) -> Any:
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return v.strip() if isinstance(v, str) else v


def parse_rows(text: str, fmt: str) -> list[Row]:
    """Rows from CSV (header FIELDS, any order, extra columns ignored) or JSON
    (a list of objects with FIELDS). Row numbers count data rows from 1."""
    records: Iterable[Mapping[str, Any]]
    if fmt == "csv":
        reader = csv.DictReader(io.StringIO(text))
        if reader.fieldnames is None:
            raise InvalidParameter("input", "empty CSV file")
        absent = [f for f in FIELDS if f not in [h.strip() for h in reader.fieldnames]]
        if absent:
            raise InvalidParameter("input", f"CSV header lacks column(s) {', '.join(absent)}")
        records = [{(k or "").strip(): v for k, v in r.items()} for r in reader]
    elif fmt == "json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InvalidParameter("input", f"not JSON ({exc.msg} at line {exc.lineno})") from None
        if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
            raise InvalidParameter("input", "JSON input must be a list of objects")
        records = data
    else:
        raise InvalidParameter("input", f"unknown input format {fmt!r}")
    rows = [make_row(i, r) for i, r in enumerate(records, start=1)]
    if not rows:
        raise InvalidParameter("input", "no rows in the input")
    return rows
