"""Grid files: a task name and parameter axes, validated strictly.

A grid is TOML (stdlib ``tomllib``) or JSON. Numbers are read as the text
written (``parse_float=str``), so ``0.1`` in a grid means exactly 1/10, as on
the command line. The structure is checked against ``grid.schema.json``
(``additionalProperties: false`` everywhere); parameter names are checked
against the task's declared parameters (``tasks.json``). Every error names the
file, the path inside it and the allowed values, with a did-you-mean hint.

Configurations are the Cartesian product of the ``product`` axes (in the
order written; the last varies fastest) and the ``zip`` groups (each group is
one axis whose lists advance together), each merged with ``fixed``.
"""

from __future__ import annotations

import itertools
import json
import math
from dataclasses import dataclass, field
from fractions import Fraction
from importlib import resources
from pathlib import Path
from typing import Any, Iterator, Mapping, Optional, Sequence

from ..ball import exact_str, parse_exact
from ..files import NotARegularFile, NotText, TooLarge, json_loads, read_text
from ..errors import InvalidParameter, did_you_mean
from ..limits import MAX_DECIMAL_EXPONENT, MAX_NUMBER_CHARS, MAX_SWEEP_CONFIGURATIONS
from ..numtext import bad_json_number, json_int

__all__ = ["Axis", "Grid", "load_grid", "parse_grid", "task_table", "MAX_SWEEP_CONFIGURATIONS"]

#: a bound on the work one grid file may ask for (ranges can be huge by accident)

Scalar = Any  # str | int | bool, as read from the file


@dataclass(frozen=True)
class Axis:
    """One axis of the product: one parameter, or several advancing together (a zip)."""

    names: tuple[str, ...]
    values: tuple[tuple[Scalar, ...], ...]


@dataclass(frozen=True)
class Grid:
    source: str  # the file name, for messages
    task: str
    description: str
    fixed: Mapping[str, Scalar]
    axes: tuple[Axis, ...]
    heatmap: Optional[Mapping[str, str]] = None
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False)

    @property
    def size(self) -> int:
        return math.prod(len(a.values) for a in self.axes)

    @property
    def axis_names(self) -> list[str]:
        return [n for a in self.axes for n in a.names]

    def configurations(self) -> list[dict[str, Scalar]]:
        """Every configuration (a dict: fixed parameters, then axis parameters)."""
        out = []
        for combo in itertools.product(*(a.values for a in self.axes)):
            params = dict(self.fixed)
            for axis, values in zip(self.axes, combo):
                params.update(zip(axis.names, values))
            out.append(params)
        return out


def _load_json_resource(name: str) -> Any:
    return json.loads(resources.files(__package__).joinpath(name).read_text(encoding="utf-8"))


def task_table() -> dict[str, Any]:
    """The task registry (``tasks.json``): name -> entry point, description, parameters.

    A parameter described as ``null`` (or ``"required"``) there is a concept of
    :mod:`dpverify.vocabulary` (noise multiplier, sampling rate, steps, digits, time
    budget): its description is the vocabulary's, for the command the task runs
    (``command``), declared once."""
    from ..vocabulary import describe

    table = _load_json_resource("tasks.json")
    for task in table.values():
        for key, text in task["parameters"].items():
            if text is None or text == "required":
                text = describe(key, task["command"], required=text == "required")
                if text is None:  # a null that names no concept is a packaging bug
                    raise RuntimeError(f"tasks.json: {key} has no description and is no vocabulary concept")
                task["parameters"][key] = text
    return table


def _err(source: str, where: str, message: str) -> InvalidParameter:
    return InvalidParameter("grid", f"{source}: {where}: {message}" if where else f"{source}: {message}")


def _path(parts: Sequence[Any]) -> str:
    s = ""
    for p in parts:
        s += f"[{p}]" if isinstance(p, int) else (f".{p}" if s else str(p))
    return s or "(top level)"


def _schema_errors(data: Any, source: str) -> None:
    from ..certificate.format import schema_validator, type_message

    schema = _load_json_resource("grid.schema.json")
    validator = schema_validator(schema)
    errors = sorted(validator.iter_errors(data), key=lambda e: (len(e.absolute_path), list(map(str, e.absolute_path))))
    if not errors:
        return
    e = errors[0]
    if e.validator == "oneOf":  # an unknown key inside a range says more than "matches no form"
        inner = [c for c in e.context or () if c.validator == "additionalProperties" and isinstance(c.instance, dict)]
        if inner:
            e = inner[0]
    where = list(e.absolute_path)
    if e.validator == "additionalProperties" and isinstance(e.instance, dict):
        allowed = sorted(e.schema.get("properties", {}))
        unknown = [k for k in e.instance if k not in allowed]
        k = unknown[0]
        raise _err(source, _path(where + [k]), f"unknown key{did_you_mean(k, allowed)} (allowed: {', '.join(allowed)})")
    if e.validator == "required":
        raise _err(source, _path(where), f"{e.message}")
    if e.validator == "oneOf" and where and isinstance(e.instance, dict):
        raise _err(source, _path(where), "a range needs start, stop and exactly one of step, num, factor")
    if e.validator == "oneOf":
        raise _err(source, _path(where), "an axis is a non-empty list of values or a range "
                   "{start, stop, step | num | factor}")
    if e.validator == "type":
        raise _err(source, _path(where), type_message(e.instance, e.schema))
    raise _err(source, _path(where), e.message)


def _range(spec: Mapping[str, Any], source: str, where: str) -> list[Scalar]:
    """Exact values of a range; ints when every given bound is an int. The work is bounded
    before it is done: at most MAX_SWEEP_CONFIGURATIONS values, each a number an input may be
    (at most MAX_NUMBER_CHARS characters), so a 200-byte grid cannot ask for 10^6000 values or
    for a geometric range whose exact values grow by the factor's digits at every step."""
    try:
        start = parse_exact(spec["start"], "start")
        stop = parse_exact(spec["stop"], "stop")
    except InvalidParameter as exc:
        raise _err(source, where, exc.message) from None
    if stop < start:
        raise _err(source, where, f"stop={exact_str(stop)} must be >= start={exact_str(start)}")
    values: Iterator[Fraction]
    if "step" in spec:
        try:
            step = parse_exact(spec["step"], "step")
        except InvalidParameter as exc:
            raise _err(source, where, exc.message) from None
        if step <= 0:
            raise _err(source, where + ".step", f"step={exact_str(step)} must be > 0")
        n = (stop - start) // step + 1  # exact; not shown, it may have thousands of digits
        if n > MAX_SWEEP_CONFIGURATIONS:
            raise _err(source, where, f"the range has more than {MAX_SWEEP_CONFIGURATIONS} values (at most {MAX_SWEEP_CONFIGURATIONS} a range)")
        values = (start + i * step for i in range(n))
    elif "num" in spec:
        n = spec["num"]
        if n > MAX_SWEEP_CONFIGURATIONS:
            raise _err(source, where + ".num", f"num={n} must be <= {MAX_SWEEP_CONFIGURATIONS}")
        values = iter([start]) if n == 1 else (start + i * (stop - start) / (n - 1) for i in range(n))
    else:
        try:
            factor = parse_exact(spec["factor"], "factor")
        except InvalidParameter as exc:
            raise _err(source, where, exc.message) from None
        if factor <= 1 or start <= 0:
            raise _err(source, where, "a geometric range needs factor > 1 and start > 0")
        values = _geometric(start, stop, factor)
    kept: list[Fraction] = []
    for v in values:
        if len(kept) >= MAX_SWEEP_CONFIGURATIONS:
            raise _err(source, where, f"the range has more than {MAX_SWEEP_CONFIGURATIONS} values (at most {MAX_SWEEP_CONFIGURATIONS} a range)")
        if max(v.numerator.bit_length(), v.denominator.bit_length()) > _MAX_VALUE_BITS or \
                len(exact_str(v)) > MAX_NUMBER_CHARS:
            raise _err(source, where, f"its value #{len(kept) + 1} needs more than {MAX_NUMBER_CHARS} "
                                      "characters (a grid value is an input: at most that many)")
        kept.append(v)
    ints = all(isinstance(spec.get(k), int) for k in ("start", "stop", "step", "factor") if k in spec)
    if ints and all(v.denominator == 1 for v in kept):
        return [int(v) for v in kept]
    return [exact_str(v) for v in kept]


#: no number the input reader accepts has a numerator or denominator of more bits: a mantissa of
#: at most MAX_NUMBER_CHARS digits (3322 bits) times 10^+-MAX_DECIMAL_EXPONENT (9966 bits)
_MAX_VALUE_BITS = math.ceil((MAX_NUMBER_CHARS + MAX_DECIMAL_EXPONENT) * math.log2(10))


def _geometric(start: Fraction, stop: Fraction, factor: Fraction) -> Iterator[Fraction]:
    """start, start * factor, ... up to stop. Each product is checked by the caller before the
    next is formed, so the exact values (which gain the factor's digits at every step) stay
    within _MAX_VALUE_BITS; as the factor's numerator is >= 2 they gain >= 1 bit a step."""
    v = start
    while v <= stop:
        yield v
        v *= factor


def _axis_values(spec: Any, source: str, where: str) -> list[Scalar]:
    return list(spec) if isinstance(spec, list) else _range(spec, source, where)


def parse_grid(data: Any, source: str) -> Grid:
    """Validate parsed grid data (a dict) and build the Grid; InvalidParameter on any problem."""
    _schema_errors(data, source)
    tasks = task_table()
    task = data["task"]
    if task not in tasks:
        raise _err(source, "task", f"unknown task {task!r}{did_you_mean(task, tasks)} (allowed: {', '.join(tasks)})")
    allowed = list(tasks[task]["parameters"])
    seen: dict[str, str] = {}

    def claim(name: str, where: str) -> None:
        if name not in allowed:
            raise _err(source, where, f"unknown parameter of task {task!r}{did_you_mean(name, allowed)} "
                       f"(allowed: {', '.join(allowed)})")
        if name in seen:
            raise _err(source, where, f"parameter given twice (also at {seen[name]})")
        seen[name] = where

    fixed = dict(data.get("fixed", {}))
    for k in fixed:
        claim(k, f"fixed.{k}")
    axes: list[Axis] = []
    for k, spec in data.get("product", {}).items():
        claim(k, f"product.{k}")
        axes.append(Axis((k,), tuple((v,) for v in _axis_values(spec, source, f"product.{k}"))))
    for i, group in enumerate(data.get("zip", [])):
        cols = []
        for k, spec in group.items():
            claim(k, f"zip[{i}].{k}")
            cols.append(_axis_values(spec, source, f"zip[{i}].{k}"))
        lengths = {len(c) for c in cols}
        if len(lengths) != 1:
            raise _err(source, f"zip[{i}]", f"the lists of a zip group must have equal lengths "
                       f"(got {', '.join(f'{k}: {len(c)}' for k, c in zip(group, cols))})")
        axes.append(Axis(tuple(group), tuple(zip(*cols))))
    size = math.prod(len(a.values) for a in axes)
    if size > MAX_SWEEP_CONFIGURATIONS:
        raise _err(source, "", f"the grid has {size} configurations; at most {MAX_SWEEP_CONFIGURATIONS}")
    heatmap = data.get("heatmap")
    if heatmap is not None:
        names = [n for a in axes for n in a.names]
        for role in ("x", "y", "facet"):
            if role in heatmap and heatmap[role] not in names:
                raise _err(source, f"heatmap.{role}", f"{heatmap[role]!r} is not an axis"
                           f"{did_you_mean(heatmap[role], names)} (axes: {', '.join(names) or '(none)'})")
        roles = [heatmap[r] for r in ("x", "y", "facet") if r in heatmap]
        if len(set(roles)) != len(roles):
            raise _err(source, "heatmap", "x, y and facet must be different axes")
        # a zip group is one axis: naming one of its parameters places all of them
        others = [a.names[0] for a in axes if len(a.values) > 1 and not set(a.names) & set(roles)]
        if others:
            raise _err(source, "heatmap", f"the axes {', '.join(others)} vary but are not x, y or facet: "
                       "one picture would mix several configurations per cell")
    return Grid(source, task, data.get("description", ""), fixed, tuple(axes), heatmap, data)


def load_grid(path: "str | Path") -> Grid:
    """Read and validate a grid file (.toml or .json)."""
    p = Path(path)
    source = p.name
    try:
        text = read_text(p, 10_000_000)
    except (NotARegularFile, TooLarge, NotText) as exc:
        raise InvalidParameter("grid", f"{path}: {exc.strerror}") from None
    except OSError as exc:
        raise InvalidParameter("grid", f"{path}: cannot read ({exc.strerror})") from None
    suffix = p.suffix.lower()
    if suffix == ".toml":
        try:
            import tomllib
        except ImportError:  # Python 3.10
            raise InvalidParameter("grid", f"{source}: TOML grids need Python >= 3.11; use JSON") from None
        try:
            data = tomllib.loads(text, parse_float=str)
        except tomllib.TOMLDecodeError as exc:
            raise InvalidParameter("grid", f"{source}: not TOML ({exc})") from None
        except ValueError:  # tomllib has no parse_int: int() of a 5,000-digit literal (an internal error, issue 22)
            raise InvalidParameter("grid", f"{source}: an integer of more than 4300 digits is too long (a number "
                                   f"has at most {MAX_NUMBER_CHARS} characters)") from None
    elif suffix == ".json":
        try:
            # a key given twice is refused, as in every other input file (last-wins let a
            # repeated "task" pick the task: adv37 D1)
            data = json_loads(text, parse_float=str, parse_int=json_int)
        except json.JSONDecodeError as exc:
            raise InvalidParameter("grid", f"{source}: not JSON ({exc.msg} at line {exc.lineno})") from None
        except ValueError as exc:
            raise InvalidParameter("grid", f"{source}: not a grid ({exc})") from None
    else:
        raise InvalidParameter("grid", f"{path}: a grid file must end in .toml or .json")
    found = bad_json_number(data)
    if found is not None:  # a 5,000-digit integer leaked Python's int/str advice (issue 22)
        raise _err(source, found[0], found[1])
    return parse_grid(data, source)
