"""`dpverify verify FILE...`: independent re-check of certificates."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..errors import InvalidParameter
from ..limits import TIME_BUDGET_RANGE
from ..numtext import read_seconds
from ..recheck import limits as L
from ..recheck import verify as V
from ..vocabulary import TIME_BUDGET
from ._common import add_concept

ORDER = 95
#: worst outcome first: a refused certificate outranks a malformed one, which
#: outranks one that could not be re-proved
_SEVERITY = {1: 3, 2: 2, 3: 1, 0: 0}


def add_parser(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    p = sub.add_parser(
        "verify",
        help="re-check certificates by an independent route",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Re-derive each certificate's result with a second implementation (MPFR with "
        "directed rounding and exact rationals, not python-flint; its own precision chosen from "
        "the recorded enclosure's width) after checking its JSON Schema (format 1 or 2) and "
        "digest. Accepted only if the independent enclosure, a proof for every kind (--explain), "
        "lies inside the recorded one (checks: the same verdict).\n\n"
        "Exit codes: 0 every file accepted; 1 a certificate refused (false number or verdict, "
        "bad digest); 2 a file malformed (not JSON, not UTF-8, schema violation, unknown "
        "field or kind); 3 a certificate could not be re-proved within the budget (never an "
        "accept). Every file is checked; the exit code is the worst outcome (1 > 2 > 3 > 0). "
        "A directory stands for the *.json files in it.\n\n"
        f"Caps: {V.BUDGET_SECONDS:g} s per certificate (--time-budget), {V.MAX_DIGITS} significant "
        f"digits, decimal exponents up to 1e{V.MAX_EXPONENT}, files up to "
        f"{V.MAX_FILE_BYTES // 2**20} MiB; {L.CAPS_TEXT}. These bounds are checked before any "
        "work starts: beyond a cap the producer also enforces, exit 2; beyond the second route's "
        "work caps, exit 3.\n\n"
        "Example: dpverify verify certificates/",
    )
    p.add_argument("files", nargs="*", metavar="FILE")
    p.add_argument("--quiet", "-q", action="store_true", help="print only files that are not accepted")
    p.add_argument("--explain", action="store_true",
                   help="state what each certificate kind re-proves and by which route, then exit")
    add_concept(p, TIME_BUDGET.where("verify", default=None), dest="budget", old=("--budget",),
                help=f"time budget per certificate in seconds, in {TIME_BUDGET_RANGE} (default {V.BUDGET_SECONDS:g}; "
                "beyond it: exit 3)")
    p.set_defaults(func=_run)


def _expand(names: list[str]) -> list[Path]:
    out: list[Path] = []
    for name in names:
        path = Path(name)
        out.extend(sorted(path.glob("*.json")) if path.is_dir() else [path])
    return out


def _seconds(text: str) -> float:
    """--time-budget read as every other command reads it (:func:`dpverify.numtext.read_seconds`:
    the one grammar and range; stdlib, so verify still loads no python-flint). InvalidParameter
    naming the option and the range otherwise."""
    return read_seconds(text, "--time-budget")


def _run(args: argparse.Namespace) -> int:
    if args.explain:
        if args.files:
            print("dpverify: error: --explain takes no files", file=sys.stderr)
            return 2
        print(V.explain_text())
        return 0
    budget = None
    if args.budget is not None:
        try:
            budget = _seconds(args.budget)
        except InvalidParameter as exc:
            print(f"dpverify: error: {exc}", file=sys.stderr)
            return 2
    files = _expand(args.files)
    if not files:
        # a folder without *.json files was "no certificate files given", as if none had been named
        empty = [n for n in args.files if Path(n).is_dir()]
        print(f"dpverify: error: {empty[0]}: a folder with no *.json certificate files" if empty
              else "dpverify: error: no certificate files given", file=sys.stderr)
        return 2
    from ..progress import Progress

    worst = 0
    bar = Progress("verify", total=len(files), unit="file")
    for path in files:
        bar.note(path.name)
        code, message = V.verify_file(path, budget_seconds=budget)
        # a certificate's text may hold anything (lone surrogates, control characters)
        message = message.encode("utf-8", "backslashreplace").decode("utf-8")
        bar.update(1)
        if _SEVERITY[code] > _SEVERITY[worst]:
            worst = code
        if code or not args.quiet:
            bar.write(message, file=sys.stderr if code else sys.stdout)
    bar.close()
    return worst
