"""`dpverify verify FILE...`: independent re-check of certificates."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..certificate import verify_file

ORDER = 95
#: which outcome wins when files disagree: a refusal, then a malformed file, then undecided
_SEVERITY = {0: 0, 3: 1, 2: 2, 1: 3}


def add_parser(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    p = sub.add_parser(
        "verify",
        help="re-check certificates by an independent route",
        description="Re-derive each certificate's result with a second implementation "
        "(mpmath, different precision) and check its digest. Exit 0 when every file is "
        "confirmed, 1 when any is rejected (false number, wrong verdict, bad digest), "
        "2 when any is malformed, 3 when the independent route could not re-prove one "
        "(never an accept); the worst outcome wins (1 > 2 > 3 > 0). A directory stands "
        "for the *.json files in it. Example: dpverify verify certificates/",
    )
    p.add_argument("files", nargs="+", metavar="FILE")
    p.add_argument("--quiet", "-q", action="store_true", help="print only rejections")
    p.set_defaults(func=_run)


def _expand(names: list[str]) -> list[Path]:
    out: list[Path] = []
    for name in names:
        path = Path(name)
        out.extend(sorted(path.glob("*.json")) if path.is_dir() else [path])
    return out


def _run(args: argparse.Namespace) -> int:
    worst = 0
    files = _expand(args.files)
    if not files:
        print("dpverify: error: no certificate files given", file=sys.stderr)
        return 2
    from ..progress import Progress

    bar = Progress("verify", total=len(files), unit="file")
    for path in files:
        bar.update(0, path.name)
        code, message = verify_file(path)
        bar.update(1)
        worst = max(worst, code, key=_SEVERITY.__getitem__)
        if code or not args.quiet:
            print(message, file=sys.stderr if code else sys.stdout)
    bar.close()
    return worst
