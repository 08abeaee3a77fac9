#!/usr/bin/env python3
"""Regenerate the committed corpus report from corpus/dpsgd.jsonl.

    python scripts/corpus_report.py            # audit, then write docs/corpus-results.json,
                                               # docs/corpus-report.md and docs/corpus-report.png
    python scripts/corpus_report.py --from-json   # rewrite the report and plot from the committed JSON

The Markdown report is a pure function of the JSON results (see
dpverify/corpus/report.py); tests/corpus/test_report.py checks the committed
report against the committed JSON, and (marked slow) the JSON against a re-run.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dpverify.corpus import audit, load_corpus  # noqa: E402
from dpverify.corpus import report as R  # noqa: E402

CORPUS = ROOT / "corpus" / "dpsgd.jsonl"
RESULTS = ROOT / "docs" / "corpus-results.json"
REPORT = ROOT / "docs" / "corpus-report.md"
PLOT = ROOT / "docs" / "corpus-report.png"
TITLE = "dpverify audit corpus: published DP-SGD claims (corpus/dpsgd.jsonl)"


def results() -> dict:
    """Audit the corpus (about two minutes on one core) and return the JSON document."""
    rows, stats = audit(load_corpus(CORPUS), progress=sys.stderr.isatty())
    stats = {k: v for k, v in stats.items() if k != "seconds"}  # keep the committed file stable
    return R.document("corpus/dpsgd.jsonl", [r.to_json() for r in rows], stats)


def render(doc: dict) -> str:
    return R.markdown(doc, TITLE, PLOT.name)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--from-json", action="store_true", help="do not re-audit; render the committed JSON")
    args = ap.parse_args()
    doc = json.loads(RESULTS.read_text()) if args.from_json else results()
    if not args.from_json:
        RESULTS.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
    REPORT.write_text(render(doc))
    R.plot(doc, PLOT)
    c = doc["counts"]
    print(f"{doc['stats']['claims']} claims: {c['holds']} hold, {c['fails']} fail, {c['undecided']} undecided")


if __name__ == "__main__":
    main()
