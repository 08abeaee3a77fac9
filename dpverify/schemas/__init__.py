"""Strict reading of the files the CLI is handed: JSON Schemas shipped in this
package, and errors that name the file, the place inside it and what is allowed.

Every input file kind has a schema ``<kind>.schema.json`` next to this module
(Draft 2020-12, ``additionalProperties: false`` at every level, every key that
matters ``required``: nothing silently defaults). :func:`load_json` and
:func:`load_csv` read a file, refuse what is not UTF-8, too large, too deeply
nested, or not valid against the schema, and raise
:class:`~dpverify.errors.InvalidParameter` with messages such as::

    rows.json: rows[3].delta: missing required key
    events.json: events[0].steps: unknown key; did you mean count? (allowed: count, ...)

Numbers stay exact. A JSON number is kept as its text (:class:`JsonNumber`, a
``str``), so ``0.1`` means 1/10 and a 5,000-digit integer is refused by the
number caps instead of overflowing Python's int/str limit; the schema type
``number`` accepts a JSON number and ``integer`` one written without a
fraction or exponent. Ranges are not checked here (schemas must not use
``minimum``/``maximum`` on numbers): :mod:`dpverify._validate` checks them
exactly, with the same path in the message (see :func:`at`).
"""

from __future__ import annotations

import csv
import io
import json
import re
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, Iterator, Mapping, Optional

import jsonschema
from jsonschema import Draft202012Validator

from ..certificate.format import ecma_pattern
from ..files import NotARegularFile, NotText, TooLarge, json_loads, read_text as read_file_text
from ..errors import InvalidParameter, did_you_mean
from ..limits import MAX_INPUT_FILE_BYTES, MAX_JSON_NESTING
from ..numtext import not_ascii

__all__ = [
    "JsonNumber",
    "MAX_INPUT_FILE_BYTES",
    "schema",
    "read_text",
    "load_json",
    "load_csv",
    "validate",
    "at",
    "path_text",
]

#: Largest input file read (bytes); a larger one is refused before it is read.
#: Deepest JSON nesting accepted (no dpverify input needs more than a few levels).

_INTEGER = re.compile(r"-?(?:0|[1-9]\d*)", re.ASCII)
_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?", re.ASCII)


class JsonNumber(str):
    """A JSON number, kept as the exact text that was written (``"0.1"``)."""

    __slots__ = ()

    def is_integer(self) -> bool:
        return _INTEGER.fullmatch(self) is not None


def _is_number(checker: Any, x: Any) -> bool:
    return isinstance(x, JsonNumber) or (
        isinstance(x, (int, float)) and not isinstance(x, bool)
    )


def _is_integer(checker: Any, x: Any) -> bool:
    if isinstance(x, JsonNumber):
        return x.is_integer()
    return isinstance(x, int) and not isinstance(x, bool)


def _is_string(checker: Any, x: Any) -> bool:
    return isinstance(x, str) and not isinstance(x, JsonNumber)


_Validator = jsonschema.validators.extend(
    Draft202012Validator,
    validators={"pattern": ecma_pattern},
    type_checker=Draft202012Validator.TYPE_CHECKER.redefine_many(
        {"number": _is_number, "integer": _is_integer, "string": _is_string}
    ),
)


@lru_cache(maxsize=None)
def schema(kind: str) -> Mapping[str, Any]:
    """The shipped schema of an input kind (``oracle_rows``, ...), itself checked."""
    text = resources.files(__package__).joinpath(f"{kind}.schema.json").read_text(encoding="utf-8")
    s = json.loads(text)
    Draft202012Validator.check_schema(s)
    return s


# --------------------------------------------------------------------------- reading


def read_text(path: "str | Path", option: str) -> tuple[str, str]:
    """(text, display name) of an input file: UTF-8 (a leading byte-order mark
    is allowed), at most :data:`MAX_INPUT_FILE_BYTES`. Errors name ``option``."""
    name = str(path)
    try:
        return read_file_text(path, MAX_INPUT_FILE_BYTES), name
    except (NotARegularFile, TooLarge, NotText) as exc:
        raise InvalidParameter(option, f"{name}: {exc.strerror}") from None
    except OSError as exc:
        raise InvalidParameter(option, f"{name}: cannot read ({exc.strerror or exc})") from None


def _depth(x: Any, limit: int) -> int:
    """Nesting depth of parsed JSON, stopping once past ``limit``."""
    stack = [(x, 1)]
    deepest = 0
    while stack:
        node, d = stack.pop()
        deepest = max(deepest, d)
        if deepest > limit:
            return deepest
        if isinstance(node, dict):
            stack.extend((v, d + 1) for v in node.values())
        elif isinstance(node, list):
            stack.extend((v, d + 1) for v in node)
    return deepest


def load_json(text: str, kind: str, *, file: str, option: str, root: str) -> Any:
    """Parse JSON text exactly and validate it against the schema ``kind``.

    ``root`` names the top level in messages (``rows`` gives ``rows[3].delta``).
    Refused (InvalidParameter naming ``option``): invalid JSON, NaN/Infinity,
    a key twice in one object, nesting deeper than :data:`MAX_JSON_NESTING`, and
    anything the schema does not allow.
    """
    try:
        data = json_loads(text, parse_float=JsonNumber, parse_int=JsonNumber)
    except json.JSONDecodeError as exc:
        raise InvalidParameter(
            option, f"{file}: not JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})"
        ) from None
    except RecursionError:
        raise InvalidParameter(option, f"{file}: nested too deeply (at most {MAX_JSON_NESTING} levels)") from None
    except ValueError as exc:
        raise InvalidParameter(option, f"{file}: not accepted JSON ({exc})") from None
    if _depth(data, MAX_JSON_NESTING) > MAX_JSON_NESTING:
        raise InvalidParameter(option, f"{file}: nested too deeply (at most {MAX_JSON_NESTING} levels)")
    validate(data, kind, file=file, option=option, root=root)
    return data


def load_csv(text: str, kind: str, *, file: str, option: str, root: str) -> list[dict[str, Any]]:
    """Rows of a CSV file (a header line, then one record per line) validated
    against the schema ``kind``, whose top level is an array of objects.

    Header names and cells are stripped of surrounding blanks. A cell in a
    column whose schema allows a number becomes a :class:`JsonNumber` when it
    is written as one (``1e-5``); other cells stay text (``1/3``). Refused:
    unknown or repeated columns (with a suggestion), missing columns, a row
    with more or fewer cells than the header, NUL bytes.
    """
    item = schema(kind)["items"]
    props: Mapping[str, Any] = item.get("properties", {})
    defs = schema(kind).get("$defs", {})

    def resolved(v: Mapping[str, Any]) -> Mapping[str, Any]:
        ref = v.get("$ref", "")
        return defs[ref.rsplit("/", 1)[1]] if ref.startswith("#/$defs/") else v

    numeric = {k for k, v in props.items() if {"number", "integer"} & set(_types(resolved(v)))}
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        header = next(reader, None)
        if header is None:
            raise InvalidParameter(option, f"{file}: empty file (expected a header line: "
                                   f"{', '.join(props)})")
        names = [h.strip() for h in header]
        for i, h in enumerate(names):
            if h in names[:i]:
                raise InvalidParameter(option, f"{file}: header: column {h!r} appears twice")
            if h not in props:
                raise InvalidParameter(
                    option, f"{file}: header: unknown column {_show(h)}{did_you_mean(h, list(props))} "
                    f"(allowed: {', '.join(props)})"
                )
        missing = [k for k in item.get("required", []) if k not in names]
        if missing:
            raise InvalidParameter(
                option, f"{file}: header: missing required column(s) {', '.join(missing)}"
            )
        records: list[dict[str, Any]] = []
        for cells in reader:
            if not cells or all(not c.strip() for c in cells) and len(cells) <= 1:
                continue  # a blank line
            where = f"{file} line {reader.line_num}: {root}[{len(records)}]"
            if len(cells) != len(names):
                raise InvalidParameter(
                    option, f"{where}: {len(cells)} cells, but the header has {len(names)} columns"
                )
            rec: dict[str, Any] = {}
            for h, c in zip(names, cells):
                c = c.strip()
                rec[h] = JsonNumber(c) if h in numeric and _NUMBER.fullmatch(c) else c
            records.append(rec)
    except csv.Error as exc:
        raise InvalidParameter(option, f"{file} line {reader.line_num}: not CSV ({exc})") from None
    validate(records, kind, file=file, option=option, root=root)
    return records


# --------------------------------------------------------------------------- validation


def _types(s: Mapping[str, Any]) -> list[str]:
    t = s.get("type", [])
    return [t] if isinstance(t, str) else list(t)


def path_text(root: str, path: "tuple | list") -> str:
    """``rows[3].delta`` from ("rows", [3, "delta"])."""
    out = root
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out


def at(file: str, root: str, path: "tuple | list", option: str, exc: InvalidParameter) -> InvalidParameter:
    """An InvalidParameter from a value check, re-addressed to its place in a file."""
    return InvalidParameter(option, f"{file}: {path_text(root, path)}: {exc.message}")


def _show(x: Any, n: int = 40) -> str:
    if isinstance(x, dict):
        return "an object"
    if isinstance(x, list):
        return "a list"
    text = str(x) if isinstance(x, JsonNumber) else repr(x)
    return text if len(text) <= n else text[: n - 3] + "..."


_JSON_TYPE = {"number": "a number", "integer": "an integer", "string": "a string",
              "object": "an object", "array": "a list", "boolean": "true or false", "null": "null"}


def _kind(x: Any) -> str:
    if isinstance(x, JsonNumber):
        return f"the number {_show(x)}"
    if isinstance(x, bool):
        return str(x).lower()
    if x is None:
        return "null"
    if isinstance(x, str):
        return f"the string {_show(x)}"
    if isinstance(x, dict):
        return "an object"
    if isinstance(x, list):
        return "a list"
    return _show(x)


def _message(err: jsonschema.ValidationError) -> tuple[list, str]:
    """(path, message) of one schema error, in dpverify's words."""
    path = list(err.absolute_path)
    s, v, x = err.schema, err.validator, err.instance
    if v in ("oneOf", "anyOf") and err.context:
        # the branch meant for this kind of value says what is wrong with it;
        # if no branch takes this kind of value, say which kinds are allowed
        meant = [e for e in err.context if not (e.validator == "type" and list(e.absolute_path) == path)]
        if meant:
            best = min(meant, key=lambda e: (len(e.absolute_path), _PRIORITY.get(e.validator, 3)))
            return _message(best)
        return path, f"must be {s.get('description', 'one of the allowed forms')}, not {_kind(x)}"
    if v == "additionalProperties":
        allowed = list(s.get("properties", {}))
        extra = [k for k in x if k not in allowed]
        return path + [extra[0]], f"unknown key{did_you_mean(extra[0], allowed)} (allowed: {', '.join(allowed)})"
    if v == "required":
        missing = [k for k in err.validator_value if k not in x]
        return path + [missing[0]], "missing required key"
    if v in ("type", "pattern") and isinstance(x, str) and not_ascii(x) is not None:
        return path, f"{_kind(x)} is {not_ascii(x)}"  # looks like a number: say why it is none
    if v == "type":
        want = " or ".join(_JSON_TYPE.get(t, t) for t in _types(s))
        return path, f"must be {want}, not {_kind(x)}" + _described(s)
    if v == "enum":
        opts = [str(o) for o in err.validator_value]
        return path, f"{_kind(x)} is not allowed{did_you_mean(str(x), opts)} (allowed: {', '.join(opts)})"
    if v == "const":
        return path, f"must be {err.validator_value!r}, not {_kind(x)}"
    if v in ("minItems", "maxItems"):
        word = "at least" if v == "minItems" else "at most"
        return path, f"must have {word} {err.validator_value} entries (it has {len(x)})"
    if v in ("minLength", "maxLength"):
        if v == "minLength" and err.validator_value == 1:
            return path, "must not be empty"
        word = "at least" if v == "minLength" else "at most"
        return path, f"must have {word} {err.validator_value} characters"
    if v == "pattern":
        return path, f"{_kind(x)} is not of the expected form" + (_described(s) or f" ({s['pattern']})")
    return path, err.message[:200]


def _described(s: Mapping[str, Any]) -> str:
    return f" ({s['description']})" if "description" in s else ""


# an unknown key explains a missing one (a misspelling), so it is reported first
_PRIORITY = {"additionalProperties": 0, "type": 1, "enum": 1, "required": 2}


def _errors(data: Any, kind: str) -> Iterator[jsonschema.ValidationError]:
    yield from _Validator(schema(kind)).iter_errors(data)


def validate(data: Any, kind: str, *, file: str, option: str, root: str) -> None:
    """Validate parsed data against the schema ``kind``; the first error (in
    file order; an unknown key before the missing key it misspells) becomes an
    InvalidParameter ``file: path: message`` naming ``option``."""
    first: Optional[tuple] = None
    count = 0
    for err in _errors(data, kind):
        count += 1
        key = (_order(list(err.absolute_path)), _PRIORITY.get(err.validator, 3))
        if first is None or key < first[0]:
            first = (key, err)
        if count >= 100:
            break
    if first is None:
        return
    path, msg = _message(first[1])
    more = f" (and {count - 1} more problem{'s' if count > 2 else ''})" if count > 1 else ""
    raise InvalidParameter(option, f"{file}: {path_text(root, path) or '(top level)'}: {msg}{more}")


def _order(path: list) -> tuple:
    """Sort key of a JSON path: by index, then by key; shorter paths first."""
    return tuple((0, p, "") if isinstance(p, int) else (1, 0, str(p)) for p in path[:1])
