#!/usr/bin/env python3
"""Regenerate the README claims table from the registry (one row per claim).

    python scripts/claims_table.py            # print the table
    python scripts/claims_table.py --write    # replace it in README.md between the markers

A claim whose verdict is "fails" gets its note printed under the table: the
README must say, for every printed number that did not survive exact
arithmetic, why.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dpverify.theorems import check, claims  # noqa: E402

BEGIN = "<!-- claims-table:begin -->"
END = "<!-- claims-table:end -->"


def table() -> str:
    rows = ["| id | source | printed | certified | verdict |", "|---|---|---|---|---|"]
    findings = []
    for c in claims():
        enc, verdict = check(c)
        v = verdict.outcome.value
        rows.append(f"| `{c.id}` | {c.source} | {c.printed} | {enc.short(6)} | **{v}** |" if v != "holds"
                    else f"| `{c.id}` | {c.source} | {c.printed} | {enc.short(6)} | {v} |")
        if v != "holds":
            findings.append(f"- `{c.id}` ({v}): {c.note or verdict.reason}")
    out = "\n".join(rows)
    if findings:
        out += "\n\nClaims that did not check out:\n\n" + "\n".join(findings)
    return out + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args()
    text = table()
    if not args.write:
        sys.stdout.write(text)
        return
    readme = ROOT / "README.md"
    src = readme.read_text()
    head, rest = src.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    readme.write_text(head + BEGIN + "\n" + text + END + tail)


if __name__ == "__main__":
    main()
