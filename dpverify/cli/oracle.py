"""`dpverify oracle`: classify other accountants' epsilons as consistent, unsafe or loose."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, Mapping

from .. import _validate as V
from ..ball import round_decimal_text
from ..certificate import make_certificate
from ..errors import InvalidParameter
from ..files import open_output
from ..oracle import accountants as A
from ..oracle.rows import MAX_ORACLE_CONFIGURATIONS, parse_rows
from ..oracle.run import BATTERIES, VERDICTS, markdown_report, run_battery, run_rows
from ..schemas import read_text
from ..vocabulary import DIGITS_PLD, TIME_BUDGET
from ._common import add_concept, add_output_options, emit, grid_check, output_file, refuse_inapplicable

ORDER = 60


def add_parser(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    p = sub.add_parser(
        "oracle",
        help="classify other accountants' epsilons against certified bounds",
        description="Regression oracle. Each reported epsilon is 'unsafe' when it is below the "
        "certified lower bound of epsilon(delta) (the claimed guarantee is false), 'loose' when "
        "it exceeds the certified upper bound by more than the tolerance, 'consistent' otherwise; "
        "accountants that raise or return NaN are 'crashed' rows, +inf is 'returned-inf'. One certified computation per distinct "
        "configuration (PLD accountant, add-remove). Exit 1 when any row is unsafe, else 0.",
    )
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument(
        "--input",
        metavar="FILE",
        help="CSV with header accountant,mechanism,noise_multiplier,sampling_rate,steps,delta,"
        "reported_eps (mechanism: subsampled-gaussian | gaussian), or a JSON list of such objects; "
        f"at most {MAX_ORACLE_CONFIGURATIONS} distinct configurations (each one certified computation "
        "of up to --time-budget seconds)",
    )
    src.add_argument("--battery", metavar="NAME", help=f"run the installed accountants on a named "
                     f"battery ({', '.join(BATTERIES)})")
    p.add_argument("--accountants", metavar="LIST",
                   help=f"comma-separated subset for --battery ({', '.join(A.RUNNERS)}; default all)")
    p.add_argument("--accountant", action="append", metavar="MODULE:FUNCTION",
                   help="with --battery: also classify your own accountant, a function (event, delta) -> eps "
                   "taking a dp_accounting DpEvent (repeatable; without --accountants only these run). "
                   "Example: dpverify oracle --battery smoke --accountant mypkg.acct:epsilon")
    p.add_argument("--tolerance", default="0.01", metavar="REL",
                   help="relative excess above the certified upper bound still called consistent, "
                   "a number >= 0 (default 0.01)")
    add_concept(p, DIGITS_PLD)
    add_concept(p, TIME_BUDGET, help=f"time budget per certified configuration ({TIME_BUDGET.range}, "
                f"default {TIME_BUDGET.default})")
    p.add_argument("--report", metavar="FILE.md", type=output_file,
                   help="also write a Markdown report (its folder must exist)")
    add_output_options(p)
    p.set_defaults(func=_run)


def _progress(msg: str) -> None:
    """One item of the shared progress display per message of the oracle loop."""
    global _BAR
    from ..progress import Progress

    if _BAR is None:
        _BAR = Progress("oracle", counted=True, unit="step")
    _BAR.update(1, msg)


_BAR = None


def _run(args: argparse.Namespace) -> int:
    refuse_inapplicable(args, {"accountants": {"battery"}, "accountant": {"battery"}},
                        {"source": {"input": "--input FILE", "battery": "--battery NAME"}},
                        {"source": "input" if args.input else "battery"})
    tol = V.nonnegative("tolerance", args.tolerance)
    digits = V.integer("digits", args.digits, lo=1, hi=DIGITS_PLD.hi)
    budget = V.seconds("time_budget", args.time_budget)
    # with a certificate asked for, each configuration's grid levels are priced first, as the writer
    # prices them after the run (emit, with result.grids()): issue 22, work bounded before it starts
    def priced(inputs: Mapping[str, Any]) -> Any:
        return grid_check(args, "pld.epsilon", inputs, digits)

    if args.input:
        path = Path(args.input)
        text, name = read_text(path, "input")
        suffix = path.suffix.lower()
        fmt = "json" if suffix == ".json" or (suffix != ".csv" and text.lstrip().startswith("[")) else "csv"
        rows = parse_rows(text, fmt, file=name, option="input")
        result = run_rows(rows, tolerance=tol, digits=digits, time_budget=budget, progress=_progress,
                          check_grid=priced)
        import hashlib

        # the file's text travels with the rows: verify re-reads every row from it, so a row cannot
        # say the file reported what it did not (the sha256 alone only names the file)
        inputs = {"input": path.name, "input_sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
                  "input_text": text, "tolerance": args.tolerance, "digits": digits}
        title = f"dpverify oracle: {path.name}"
    else:
        if args.battery not in BATTERIES:
            raise InvalidParameter("battery", f"battery={args.battery!r} is unknown; known: {', '.join(BATTERIES)}")
        names = None
        if args.accountants:
            names = [n.strip() for n in args.accountants.split(",") if n.strip()]
            unknown = [n for n in names if n not in A.RUNNERS]
            if unknown or not names:
                raise InvalidParameter("accountants", f"accountants={args.accountants!r}: unknown "
                                       f"{', '.join(unknown) or '(empty)'}; known: {', '.join(A.RUNNERS)}")
        plugins = [A.load_plugin(spec) for spec in (args.accountant or [])]
        result = run_battery(args.battery, accountants=names, plugins=plugins, tolerance=tol, digits=digits,
                             time_budget=budget, progress=_progress, check_grid=priced)
        inputs = {"battery": args.battery, "tolerance": args.tolerance, "digits": digits}
        if plugins:
            inputs["accountant"] = [p.spec for p in plugins]
        title = f"dpverify oracle: battery '{args.battery}'"
    global _BAR
    if _BAR is not None:
        _BAR.close()
        _BAR = None
    # format 2: the row count is part of the claim (no row can be dropped silently);
    # battery rows carry accountant_version / accountant_settings (oracle.run)
    inputs["row_count"] = len(result.rows)
    cert = make_certificate(
        claim={
            "quantity": "oracle.rows",
        },
        inputs=inputs,
        result={
            "verdict": "fails" if result.any_unsafe else "holds",
            "configs": result.configs_json(),
            "rows": result.rows,
            "notes": result.notes,
        },
        precision_bits=0,
        algorithm="pld.epsilon per configuration; exact comparison of each reported epsilon",
    )
    if args.report:
        with open_output(args.report, encoding="utf-8") as fh:
            fh.write(markdown_report(result, title))
    counts = {v: sum(r["verdict"] == v for r in result.rows) for v in VERDICTS}
    width = max([20] + [len(r["accountant"]) for r in result.rows])
    lines = [_line(r, width) for r in result.rows]
    summary = ", ".join(f"{n} {v}" for v, n in counts.items() if n)
    emit(args, cert, "\n".join(lines + [f"{len(result.rows)} rows: {summary}"] + result.notes), result.grids())
    if result.any_unsafe:
        unsafe = [f"{r['accountant']} at {_describe(r['configuration'])} reported {r['reported']} < certified "
                  f"lower bound {r['certified']['lo']}" for r in result.rows if r["verdict"] == "unsafe"]
        print(f"dpverify: {len(unsafe)} unsafe row(s):\n  " + "\n  ".join(unsafe), file=sys.stderr)
        return 1
    return 0


def _describe(c: dict) -> str:
    return (f"sigma={c['noise_multiplier']}, q={c['sampling_rate']}, T={c['steps']}, delta={c['delta']}")


def _line(r: dict, width: int = 20) -> str:
    """One row for people: the reported value as given, the certified band rounded
    outward to 7 digits (never cut: a cut upper end is not an upper bound)."""
    c = r["configuration"]
    lo = round_decimal_text(r["certified"]["lo"], 7, upward=False)
    hi = round_decimal_text(r["certified"]["hi"], 7, upward=True)
    return (f"{r['accountant']:<{width}} {c['noise_multiplier']:>5} {c['sampling_rate']:>12} {c['steps']:>6} "
            f"{r['reported'] or '-':>12}  in [{lo}, {hi}]  {r['verdict']}")
