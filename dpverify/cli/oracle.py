"""`dpverify oracle`: classify other accountants' epsilons as consistent, unsafe or loose."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .. import _validate as V
from ..certificate import make_certificate
from ..errors import InvalidParameter
from ..oracle import accountants as A
from ..oracle.rows import parse_rows
from ..oracle.run import BATTERIES, markdown_report, run_battery, run_rows
from ._common import emit

ORDER = 60


def add_parser(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    p = sub.add_parser(
        "oracle",
        help="classify other accountants' epsilons against certified bounds",
        description="Regression oracle. Each reported epsilon is 'unsafe' when it is below the "
        "certified lower bound of epsilon(delta) (the claimed guarantee is false), 'loose' when "
        "it exceeds the certified upper bound by more than the tolerance, 'consistent' otherwise; "
        "accountants that raise are 'crashed' rows. One certified computation per distinct "
        "configuration (PLD accountant, add-remove). Exit 1 when any row is unsafe, else 0.",
    )
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument(
        "--input",
        metavar="FILE",
        help="CSV with header accountant,mechanism,noise_multiplier,sampling_rate,steps,delta,"
        "reported_eps (mechanism: subsampled-gaussian | gaussian), or a JSON list of such objects",
    )
    src.add_argument("--battery", metavar="NAME", help=f"run the installed accountants on a named "
                     f"battery ({', '.join(BATTERIES)})")
    p.add_argument("--accountants", metavar="LIST",
                   help=f"comma-separated subset for --battery ({', '.join(A.RUNNERS)}; default all)")
    p.add_argument("--tolerance", default="0.01", metavar="REL",
                   help="relative excess above the certified upper bound still called consistent "
                   "(default 0.01)")
    p.add_argument("--digits", default="4", metavar="N",
                   help="relative width 10^-N of the certified enclosures (1..8, default 4)")
    p.add_argument("--time-budget", default="600", metavar="SECONDS",
                   help="time budget per certified configuration (default 600)")
    p.add_argument("--report", metavar="FILE.md", help="also write a Markdown report")
    p.add_argument("--json", action="store_true", help="print the certificate (JSON) to stdout")
    p.add_argument("--certificate", metavar="FILE", help="write the certificate to FILE")
    p.set_defaults(func=_run)


def _progress(msg: str) -> None:
    if sys.stderr.isatty():
        print(f"\r\033[K{msg}", end="", file=sys.stderr, flush=True)


def _run(args: argparse.Namespace) -> int:
    tol = V.nonnegative("tolerance", args.tolerance)
    digits = V.integer("digits", args.digits, lo=1, hi=8)
    budget = float(V.positive("time_budget", args.time_budget))
    if args.input:
        path = Path(args.input)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise InvalidParameter("input", f"input={args.input!r}: cannot read ({exc.strerror})") from None
        fmt = "json" if path.suffix.lower() == ".json" or text.lstrip().startswith("[") else "csv"
        rows = parse_rows(text, fmt)
        result = run_rows(rows, tolerance=tol, digits=digits, time_budget=budget, progress=_progress)
        import hashlib

        inputs = {"input": path.name, "input_sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
                  "tolerance": args.tolerance, "digits": digits}
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
        result = run_battery(args.battery, accountants=names, tolerance=tol, digits=digits,
                             time_budget=budget, progress=_progress)
        inputs = {"battery": args.battery, "tolerance": args.tolerance, "digits": digits}
        title = f"dpverify oracle: battery '{args.battery}'"
    if sys.stderr.isatty():
        print("\r\033[K", end="", file=sys.stderr)
    # format 2: the row count is part of the claim, and every row names the software
    # that produced its reported number (rows read from a file: the file did)
    inputs["row_count"] = len(result.rows)
    for r in result.rows:
        r["software"] = (A.software(r["accountant"]) if not args.input else
                         {"name": r["accountant"], "version": "not recorded (read from the input file)",
                          "settings": {}})
    cert = make_certificate(
        claim={
            "quantity": "oracle.rows",
            "statement": "no reported epsilon is below the certified lower bound of epsilon(delta) "
            "(verdict fails if one is: that accountant's guarantee is false)",
            "source": "AFA Thm 10, 11 (dominating pairs) via dpverify's PLD accountant",
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
        Path(args.report).write_text(markdown_report(result, title), encoding="utf-8")
    counts = {v: sum(r["verdict"] == v for r in result.rows) for v in ("consistent", "unsafe", "loose", "crashed")}
    lines = [f"{r['accountant']:<20} {r['configuration']['noise_multiplier']:>5} "
             f"{r['configuration']['sampling_rate']:>12} {r['configuration']['steps']:>6} "
             f"{r['reported'][:12] or '-':>12}  in {r['certified']['lo'][:9]}..{r['certified']['hi'][:9]}  "
             f"{r['verdict']}" for r in result.rows]
    summary = ", ".join(f"{n} {v}" for v, n in counts.items() if n)
    emit(args, cert, "\n".join(lines + [f"{len(result.rows)} rows: {summary}"] + result.notes))
    return 1 if result.any_unsafe else 0
