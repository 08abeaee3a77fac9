"""`dpverify reproduce`: re-derive every paper claim of the claims data
(``dpverify/theorems/claims/*.jsonl``, or ``--claims DIR``) through the quantity registry."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..certificate import claim_certificate, write
from ..certificate.writer import fewer_digits, unverifiable
from ..errors import InvalidParameter, PrecisionExhausted, Undecided
from ..theorems import check, claims
from ._common import output_dir

ORDER = 90


def add_parser(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    p = sub.add_parser(
        "reproduce",
        help="re-derive the papers' claims and write their certificates",
        description="Run every claim of the claims data (dpverify/theorems/claims/*.jsonl, shipped with the package; one JSON record per claim: "
        "quantity + inputs + printed + relation + source + statement), print id / source / printed / "
        "certified / verdict, and write one certificate per claim. Exit 0 when it ran, whatever "
        "the verdicts: a claim that fails is a finding about the paper; a claim that cannot be "
        "certified is an undecided row (no certificate) and the others still run; exit 2 when a "
        "record is malformed or its inputs are invalid: the files are read whole first, so no claim "
        "runs and the message names the file, the record and the key. "
        "Example: dpverify reproduce --only gdpt-sec3-eps2 --out certs/",
    )
    p.add_argument("--claims", metavar="DIR", help="directory of *.jsonl claim files (default: the "
                   "package's theorems/claims/)")
    p.add_argument("--out", metavar="DIR", type=output_dir,
                   help="write one certificate per claim into DIR (created if missing)")
    p.add_argument("--only", nargs="+", metavar="ID", help="run only these claim ids")
    p.add_argument("--json", action="store_true", help="print the JSON array of certificates")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    selected = claims(args.claims)
    if args.only:
        known = {c.id for c in selected}
        unknown = [i for i in args.only if i not in known]
        if unknown:
            print(
                f"dpverify: error: --only: unknown claim id(s) {', '.join(unknown)}; "
                f"known: {', '.join(sorted(known))}",
                file=sys.stderr,
            )
            return 2
        selected = [c for c in selected if c.id in set(args.only)]
    certs = []
    rows = []
    from ..progress import Progress

    bar = Progress("reproduce", total=len(selected), unit="claim")
    problems: list[str] = []  # one line per claim that was not certified, printed after the table
    invalid = False
    for claim in selected:
        bar.update(0, claim.id)
        try:
            enclosure, verdict = check(claim)
        except (PrecisionExhausted, Undecided) as exc:
            # one claim that cannot be certified is that claim's row, not the end of the run
            bar.update(1)
            rows.append((claim.id, claim.source, claim.printed, "not certified", "undecided"))
            problems.append(f"{claim.id}: undecided: {exc}")
            continue
        except InvalidParameter as exc:
            bar.update(1)
            invalid = True
            where = f"inputs.{exc.name}" if exc.name in claim.inputs else exc.name
            rows.append((claim.id, claim.source, claim.printed, "not computed", "invalid"))
            problems.append(f"{claim.id}: {where}: {exc.message}")
            continue
        bar.update(1)
        cert = claim_certificate(claim, enclosure, verdict)
        if args.out or args.json:
            why = unverifiable(cert)  # what dpverify writes, verify accepts (a PLD claim is re-proved)
            if why is not None:
                invalid = True
                rows.append((claim.id, claim.source, claim.printed, enclosure.short(6), "invalid"))
                problems.append(f"{claim.id}: inputs.digits: {fewer_digits(claim.inputs.get('digits', 'its default'), why)}")
                continue
        certs.append(cert)
        rows.append((claim.id, claim.source, claim.printed, enclosure.short(6), verdict.outcome.value))
        if args.out:
            write(cert, Path(args.out) / f"{claim.id}.json")
    bar.close()
    if args.json:
        sys.stdout.write(json.dumps(certs, indent=2, ensure_ascii=False) + "\n")
    else:
        _table(rows)
    for line in problems:
        print(f"dpverify: {line}", file=sys.stderr)
    return 2 if invalid else 0


def _table(rows: list[tuple[str, ...]]) -> None:
    header = ("id", "source", "printed", "certified", "verdict")
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    for r in [header, tuple("-" * w for w in widths), *rows]:
        print("  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip())
    counts = {v: sum(1 for r in rows if r[4] == v) for v in ("holds", "fails", "undecided", "invalid")}
    print(f"{len(rows)} claims: {counts['holds']} hold, {counts['fails']} fail, "
          f"{counts['undecided']} undecided" + (f", {counts['invalid']} invalid" if counts["invalid"] else ""))
