"""`dpverify check rr64`: the exhaustive 64-row check of GDPT's 4-output mechanism."""

from __future__ import annotations

import argparse

from .. import _validate as V
from ..certificate import quantity_certificate
from ..dp import rr64_check
from ..errors import ValueOutOfRange
from ..verdict import Enclosure
from ..limits import MAX_EPS0
from ._common import add_digits_option, add_output_options, emit

ORDER = 30


def add_parser(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    p = sub.add_parser("check", help="exhaustive checks of finite mechanisms from the papers",
                       description="Exhaustive checks of finite mechanisms.")
    csub = p.add_subparsers(dest="check_command", metavar="COMMAND", required=True)
    r = csub.add_parser(
        "rr64",
        help="GDPT's 4-output mechanism: all 64 (event, s, s') rows",
        description="Enumerate the 64 combinations of GDPT's necessity proof (16 events x 4 "
        "ordered pairs (s, s'); the 32 with s' = 1 - s are the DP condition), show the table, "
        "and prove that the supremum equals delta0 + (1-delta0)(e^eps0 - e^eps)_+/(1+e^eps0) "
        "(exit 0), or that it does not (exit 1; happens for eps < -eps0, outside GDPT's eps >= 0). "
        "Example: dpverify check rr64 --eps0 1 --delta0 0.1 --eps 0.5",
    )
    r.add_argument("--eps0", required=True, help=f"eps0 in [0, {MAX_EPS0}] (beyond it the rows' values "
                   "e^-eps0 leave the printable range)")
    r.add_argument("--delta0", required=True, help="delta0 in [0, 1]")
    r.add_argument("--eps", required=True, help="eps, any real (GDPT: eps >= 0)")
    add_digits_option(r)
    add_output_options(r)
    r.set_defaults(func=_rr64)


def _row_text(value: Enclosure) -> str:
    """A row's enclosure for the table. At |eps| near 1e300 a row whose event has P(E|s) = 0 is
    -e^eps P(E|s_ref), beyond the printable range 10^(+-10^17); the certified results (the supremum
    over the neighbouring rows, GDPT's formula) stay inside it, so the table says so for that row
    instead of refusing the whole check (exit 2 before, for an --eps the certificate states)."""
    try:
        return value.short(10)
    except ValueOutOfRange:
        sign = "< 0" if value.hi < 0 else "> 0" if value.lo > 0 else "sign undecided"
        return f"{sign}, magnitude outside 10^(+-10^17)"


def _rr64(args: argparse.Namespace) -> int:
    digits = V.digits(args.digits)
    res = rr64_check(args.eps0, args.delta0, args.eps, digits)
    lines = [f"{'event':<12} {'s':>1} {'s_ref':>5}  {'P(E|s) - e^eps P(E|s_ref)':<40} note"]
    for row in res.rows:
        ev = "{" + ",".join(map(str, row.event)) + "}"
        note = "= sup" if row.attains_sup else ("" if row.neighbouring else "same input")
        lines.append(f"{ev:<12} {row.s:>1} {row.s_ref:>5}  {_row_text(row.value):<40} {note}")
    lines.append(f"{len(res.rows)} rows; {res.verdict.outcome.value}: {res.verdict.reason}")
    cert = quantity_certificate(
        quantity="dp.rr64",
        inputs={"eps0": args.eps0, "delta0": args.delta0, "eps": args.eps, "digits": digits},
        enclosure=res.supremum,
        algorithm="enumeration of 16 events x 4 ordered input pairs; equality with the worst-case "
        "profile proved by exact signs of exponential sums (Lindemann-Weierstrass)",
        extra_result={"verdict": res.verdict.outcome.value, "rows": len(res.rows),
                      "gdpt_formula": res.gdpt_formula.to_json()},
    )
    emit(args, cert, "\n".join(lines))
    return res.verdict.exit_code()
