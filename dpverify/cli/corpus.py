"""`dpverify audit corpus FILE`: verdicts with reasons on published claims.

Registered under the ``audit`` group by cli/audit.py (``add_corpus_parser``);
this module has no ``add_parser`` of its own, so it is not a group.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..errors import InvalidParameter
from ..files import NotARegularFile, check_writable, open_output
from ..vocabulary import TIME_BUDGET
from ._common import add_concept

__all__ = ["add_corpus_parser"]


def add_corpus_parser(asub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    c = asub.add_parser(
        "corpus",
        help="verdicts on a file of published DP-SGD claims (JSON Lines)",
        description="Audit every claim of a corpus file (JSON Lines, schema dpverify/corpus/schema.json, "
        "documented in docs/guide/corpus.md): holds (certified eps <= claimed), fails (certified lower end > "
        "claimed) or undecided, with the certified enclosure, the tightness claimed / certified, a reason "
        "and a sensitivity check (other plausible step counts, add / remove relation). Identical "
        "configurations are computed once. Exit 0 when no claim fails, 1 when any fails, 2 on a bad file, "
        "3 when none fails but the time budget stopped a computation (the row says so: it follows the load). "
        "Example: dpverify audit corpus corpus/dpsgd.jsonl --report report.md --plot claims.png",
    )
    c.add_argument("file", metavar="FILE", help="corpus file (JSON Lines)")
    c.add_argument("--report", metavar="FILE", help="write a report: FILE.md (Markdown) or FILE.html")
    c.add_argument("--plot", metavar="FILE", help="write the dot plot (PNG; needs matplotlib)")
    c.add_argument("--json", action="store_true", help="print the rows as JSON")
    add_concept(c, TIME_BUDGET, help=f"time budget per certified computation ({TIME_BUDGET.range}, default "
                f"{TIME_BUDGET.default}); a row whose computation it stopped says so, and the exit is 3")
    c.set_defaults(func=_corpus)


def _corpus(args: argparse.Namespace) -> int:
    from ..corpus import audit, load_corpus
    from ..corpus import report as R

    if args.report and Path(args.report).suffix.lower() not in (".md", ".html", ".htm"):
        raise InvalidParameter("report", f"--report {args.report!r}: the file name must end in .md or .html")
    for opt in ("report", "plot"):
        target = getattr(args, opt)
        if target and not Path(target).resolve().parent.is_dir():
            raise InvalidParameter(opt, f"--{opt} {target!r}: folder {str(Path(target).parent)!r} does not exist")
        try:
            if target:
                check_writable(target)  # a FIFO with no reader would block the write, after the audit
        except NotARegularFile as exc:
            raise InvalidParameter(opt, f"--{opt} {target!r}: it {exc.strerror}") from None
    if args.plot:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            raise R.MissingPlotting("--plot needs matplotlib: pip install 'dpverify[plot]' "
                                    "(or pip install matplotlib)") from None
    claims = load_corpus(args.file)
    rows, stats = audit(claims, progress=sys.stderr.isatty(), time_budget=args.time_budget)
    doc = R.document(str(args.file), [r.to_json() for r in rows], stats)
    if args.plot:
        R.plot(doc, args.plot)
    if args.report:
        title = f"dpverify audit corpus {Path(args.file).name}"
        plot_ref = None
        if args.plot:
            plot_path, report_dir = Path(args.plot).resolve(), Path(args.report).resolve().parent
            plot_ref = str(plot_path.relative_to(report_dir)) if plot_path.is_relative_to(report_dir) else str(plot_path)
        text = (R.html_report if args.report.lower().endswith((".html", ".htm")) else R.markdown)(doc, title, plot_ref)
        with open_output(args.report, encoding="utf-8") as fh:
            fh.write(text)
    if args.json:
        sys.stdout.write(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    else:
        for r in rows:
            print(f"{r.verdict:9s} {r.claim.id}: {r.reason}")
            for s in r.sensitivity:
                print(f"          sensitivity: {s}")
        c = doc["counts"]
        print(f"{stats['claims']} claims: {c['holds']} hold, {c['fails']} fail, {c['undecided']} undecided "
              f"({stats['configurations_computed']} certified computations, {stats['seconds']} s)")
    if any(r.verdict == "fails" for r in rows):
        return 1
    return 3 if any(r.stopped_by_clock for r in rows) else 0
