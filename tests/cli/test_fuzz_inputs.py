"""Fuzzing the input boundary (issue #11): random oracle input files and random
command-line values must end with exit 0, 1, 2 or 3 and a message, never a
traceback, an "internal error" (the last-resort handler) or a hang.

Each example runs ``main`` in-process under an alarm (a hang fails the test).
Few examples per run (the "ci" profile's count, capped): the table tests in
test_inputs.py pin the known cases; these look for unknown ones.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpverify.cli import main

FIELDS = ["accountant", "mechanism", "noise_multiplier", "sampling_rate", "steps", "delta", "reported_eps"]
VALID = {"accountant": "a", "mechanism": "subsampled-gaussian", "noise_multiplier": "1",
         "sampling_rate": "0.01", "steps": 10, "delta": "1e-5", "reported_eps": "0.5"}
#: seconds one example may take before it counts as a hang (generous: 2 shared cores)
BOUND = 60

#: examples per fuzz test; DPVERIFY_FUZZ_EXAMPLES=500 for a longer hunt
FUZZ = settings(max_examples=int(os.environ.get("DPVERIFY_FUZZ_EXAMPLES", "25")), deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


class Hang(BaseException):
    pass


def _alarm(*_):
    raise Hang()


def run(argv: list[str]) -> tuple[int, str]:
    """Exit code and stderr of main(argv) (argparse's SystemExit included),
    failing the test on a hang or an escaped exception."""
    err = io.StringIO()
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(BOUND)
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            try:
                code = main(argv)
            except SystemExit as exc:
                code = exc.code
    except Hang:
        raise AssertionError(f"no answer within {BOUND} s: {argv}") from None
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    return code, err.getvalue()


def _check(code, err, argv):
    assert code in (0, 1, 2, 3), (code, argv, err)
    assert "Traceback" not in err and "internal error" not in err, (argv, err)
    if code == 2:
        assert "error" in err, (argv, err)  # a message, not a silent exit


# --------------------------------------------------------------------------- values

#: number-like texts: signs, long digit strings, huge exponents, fractions, words
numberish = st.one_of(
    st.builds(lambda s, d, f, e: f"{s}{d}{f}{e}",
              st.sampled_from(["", "-", "+"]),
              st.sampled_from(["0", "1", "3", "0.5", "1e-5", "9" * 5000, "1" * 1001, ".5", "1."]),
              st.sampled_from(["", "/3", "/0", "/1e3"]),
              st.sampled_from(["", "e-4301", "e3001", "e-3000", "e999999999999", "E+2", "e"])),
    st.sampled_from(["inf", "-Infinity", "nan", "", " ", "0x10", "1,5", "1_000", "\uff11", "\u0661",
                     "1e-5\n", "True", "None", "[]", "{}"]),
    st.decimals(allow_nan=False, allow_infinity=False).map(str),
    st.integers(min_value=-(10**12), max_value=10**12).map(str),
)
anytext = st.text(max_size=40)
value = st.one_of(numberish, anytext)

# small expressions in eps, and some that are not expressions
atom = st.sampled_from(["eps", "1", "0.5", "2", "e", "pi", "1e-40", "1e3000", "-1", "x", "eps eps"])
expression = st.recursive(
    atom,
    lambda inner: st.one_of(
        st.builds(lambda a, op, b: f"({a}){op}({b})", inner, st.sampled_from(["+", "-", "*", "/", "**"]), inner),
        st.builds(lambda f, a: f"{f}({a})", st.sampled_from(
            ["exp", "expm1", "log", "log1p", "sqrt", "erfc", "Phi", "abs", "min", "max", "eval", "__import__"]),
            inner),
    ),
    max_leaves=6,
)

TEMPLATES = [
    ["gdp", "delta", "--mu", "X", "--eps", "1"],
    ["gdp", "delta", "--mu", "1", "--eps", "X"],
    ["gdp", "delta", "--mu", "1", "--eps", "1", "--digits", "X"],
    ["gdp", "mu", "--eps", "1", "--delta", "X"],
    ["dp", "implies", "--from", "X", "--to", "1,0.1"],
    ["dp", "implies", "--from", "1,0.1", "--to", "X,0.5"],
    ["dp", "profile", "--mechanism", "rr", "--p", "X", "--eps", "1"],
    ["dp", "profile", "--mechanism", "X", "--eps", "1"],
    ["check", "rr64", "--eps0", "X", "--delta0", "0.1", "--eps", "1"],
    ["compose", "--mech", "X,0", "--eps", "1"],
    ["compose", "--mech", "1,X", "--delta", "0.5"],
    ["rdp", "to-dp", "--alpha", "X", "--rdp", "1", "--delta", "0.1"],
    ["rdp", "to-dp", "--alpha", "2", "--rdp", "X", "--eps", "1"],
    ["audit", "dpsgd", "--noise-multiplier", "1", "--sampling-rate", "X", "--steps", "10", "--delta", "1e-5",
     "--digits", "1", "--time-budget", "5"],
    ["audit", "dpsgd", "--noise-multiplier", "2", "--sampling-rate", "0.01", "--steps", "X", "--delta", "1e-5",
     "--digits", "1", "--time-budget", "5"],
    ["oracle", "--battery", "X"],
]


@FUZZ
@given(template=st.sampled_from(TEMPLATES), x=value, extra=st.one_of(st.none(), anytext, numberish))
def test_fuzz_command_line_values(template, x, extra):
    argv = [a.replace("X", x) if "X" in a and not a.startswith("--") else a for a in template]
    if extra is not None:  # an extra token: a stray value or an unknown option
        argv.append(extra if extra.startswith("-") else "--" + extra)
    code, err = run(argv)
    _check(code, err, argv)


@FUZZ
@given(expr=st.one_of(expression, anytext), eps=st.sampled_from(["-1", "0", "0.5", "1", "40", "1e-30"]))
def test_fuzz_expr_profiles(expr, eps):
    argv = ["dp", "profile", "--mechanism", "expr", "--profile", expr, "--eps", eps, "--digits", "10"]
    code, err = run(argv)
    _check(code, err, argv)
    assert code != 1  # an enclosure is never "fails"


# --------------------------------------------------------------------------- oracle input files

json_scalar = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(10**30), max_value=10**30),
                        st.floats(allow_nan=False, allow_infinity=False), numberish, anytext)
json_value = st.recursive(json_scalar, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.one_of(st.sampled_from(FIELDS), anytext), inner, max_size=4)),
    max_leaves=12)
key = st.one_of(st.sampled_from(FIELDS + ["step", "count", "q", "sigma", "Delta", "noise-multiplier"]), anytext)


@st.composite
def mutated_row(draw):
    """A valid row with one key renamed, dropped, added or given another value."""
    row = dict(VALID)
    how = draw(st.sampled_from(["rename", "drop", "add", "value", "none"]))
    k = draw(st.sampled_from(FIELDS))
    if how == "rename":
        row[draw(key)] = row.pop(k)
    elif how == "drop":
        row.pop(k)
    elif how == "add":
        row[draw(key)] = draw(json_scalar)
    elif how == "value":
        row[k] = draw(json_value)
    return row


def _csv_text(rows: list[dict], header: list[str]) -> str:
    lines = [",".join(header)]
    for r in rows:
        lines.append(",".join(str(r.get(h, "")).replace("\n", " ") for h in header))
    return "\n".join(lines) + "\n"


oracle_file = st.one_of(
    # JSON: mutated rows, arbitrary JSON, deep nesting
    st.lists(mutated_row(), min_size=0, max_size=3).map(lambda rows: ("json", json.dumps(rows).encode())),
    json_value.map(lambda v: ("json", json.dumps(v).encode())),
    st.integers(min_value=30, max_value=3000).map(lambda n: ("json", ("[" * n + "]" * n).encode())),
    # CSV: mutated headers and rows, odd cell counts, raw text
    st.builds(lambda rows, hdr: ("csv", _csv_text(rows, hdr).encode()),
              st.lists(mutated_row(), min_size=1, max_size=3),
              st.one_of(st.just(FIELDS), st.lists(key, min_size=1, max_size=9))),
    st.text(max_size=300).map(lambda t: ("csv", t.encode("utf-8", "surrogatepass"))),
    # bytes that need not be UTF-8, with either suffix
    st.tuples(st.sampled_from(["csv", "json"]), st.binary(max_size=200)),
)


@FUZZ
@given(f=oracle_file)
def test_fuzz_oracle_input_files(f):
    suffix, data = f
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / f"rows.{suffix}"
        path.write_bytes(data)
        argv = ["oracle", "--input", str(path), "--digits", "2", "--time-budget", "5"]
        code, err = run(argv)
    _check(code, err, argv)
    if code == 2:
        assert "--input" in err  # the option and the file are named


# --------------------------------------------------------------------------- known hangs, pinned


def test_optimal_conversion_at_rdp_zero_answers():
    # before: the search for a delta bracket tried every 2^-k, k = 1..3999, each with a
    # bisection inside, and ran for hours: at gamma = 0 the optimal delta is 0 and no
    # 2^-k is ever "not enough". Now a gallop + bisection over k: an answer (here
    # "undecided", exit 3) after a few dozen evaluations; for gamma = 1e-3000 likewise
    for rdp in ("0", "1e-3000"):
        argv = ["rdp", "to-dp", "--alpha", "2", "--rdp", rdp, "--eps", "0", "--conversion", "optimal"]
        code, err = run(argv)
        _check(code, err, argv)
        assert code == 3, err
