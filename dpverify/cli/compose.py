"""`dpverify compose`: tight composition of (eps_i, delta_i)-DP guarantees (LT Thm 4.6)."""

from __future__ import annotations

import argparse
from typing import Any

from .. import _validate as V
from ..ball import exact_str, parse_exact
from ..certificate import quantity_certificate
from ..composition import (
    compose_delta_auto,
    compose_delta_grid,
    compose_eps_auto,
    compose_eps_grid,
    parse_mech,
)
from ..errors import InvalidParameter
from ..limits import MAX_COMPOSED_MECHANISMS, MAX_LATTICE_SUPPORT
from ..schemas import JsonNumber, at, load_json, read_text
from ..vocabulary import STEPS_COMPOSE
from ._common import add_concept, add_digits_option, add_output_options, emit

ORDER = 40


def add_parser(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    p = sub.add_parser(
        "compose",
        help="tight composition of (eps_i, delta_i)-DP guarantees (LT Thm 4.6)",
        description="Certified delta(eps) or smallest eps meeting a delta budget of the adaptive "
        "composition of (eps_i, delta_i)-DP mechanisms (LT Thm 4.6 / Cor 4.7: exactly tight). "
        "eps is 'inf' when no finite eps meets the budget (delta < 1 - prod(1 - delta_i)). "
        f"When the exact lattice of shifts would exceed {MAX_LATTICE_SUPPORT} points (many distinct eps_i), "
        "the eps_i are rounded down / up onto an automatic grid and the certified bounds and their "
        "gap are printed (--exact refuses instead). "
        "Example: dpverify compose --mech 0.1,1e-5 --mech 0.123456789,0 --eps 1",
    )
    p.add_argument("--mech", action="append", default=[], metavar="E,D",
                   help="one (eps, delta)-DP guarantee, E >= 0, D in [0, 1]; repeatable")
    p.add_argument("--mechs-file", metavar="FILE",
                   help='JSON list of mechanisms: "E,D" strings, [E, D] pairs or {"eps": E, "delta": D}')
    add_concept(p, STEPS_COMPOSE, dest="k", old=("--k",))
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--delta", help="delta budget in (0, 1]: report the smallest eps >= 0 meeting it")
    g.add_argument("--eps", help="epsilon (any real): report the composed delta(eps)")
    how = p.add_mutually_exclusive_group()
    how.add_argument("--grid", metavar="H",
                     help="round every eps_i down / up onto multiples of H > 0: certified lower and "
                     "upper bounds and their gap (for many distinct eps_i)")
    how.add_argument("--exact", action="store_true",
                     help=f"insist on the exact lattice of shifts: exit 2 when it would exceed {MAX_LATTICE_SUPPORT} "
                     "points (default: fall back to an automatic grid, with its gap, and say so)")
    add_digits_option(p)
    add_output_options(p)
    p.set_defaults(func=_run)


def _load_file(path: str) -> list[str]:
    """The guarantees of a --mechs-file as "E,D" texts, validated against the
    shipped schema ``compose_mechs`` and then range-checked, every error naming
    the file and the entry (``mechs[2].delta: ...``)."""
    text, name = read_text(path, "mechs_file")
    data = load_json(text, "compose_mechs", file=name, option="mechs_file", root="mechs")
    out = []
    for i, item in enumerate(data):
        if isinstance(item, str) and not isinstance(item, JsonNumber):
            t = item
        elif isinstance(item, list):
            t = f"{item[0]},{item[1]}"
        else:
            t = f"{item['eps']},{item['delta']}"
        try:
            parse_mech(t, "mechs_file")
        except InvalidParameter as exc:
            raise at(name, "mechs", [i], "mechs_file", exc) from None
        out.append(t)
    return out


def _run(args: argparse.Namespace) -> int:
    digits = V.digits(args.digits)
    k = V.integer("steps", args.k, lo=1, hi=MAX_COMPOSED_MECHANISMS)
    texts = list(args.mech)
    for t in texts:
        parse_mech(t, "mech")
    if args.mechs_file:
        texts.extend(_load_file(args.mechs_file))
    if not texts:
        raise InvalidParameter("mech", "give at least one --mech E,D (or --mechs-file)")
    mechs = [",".join(x.strip() for x in t.split(",")) for t in texts]  # the exact strings given
    inputs: dict[str, Any] = {"mechs": mechs, "k": k}
    if args.delta is not None:
        # delta > 0, as every command that takes a delta budget (audit, gdp mu, rdp): a budget of 0 is no
        # (eps, delta) query (pure DP is eps alone); the library compose_eps still answers it
        quantity, target = "composition.eps", V.half_open_unit("delta", args.delta)
        inputs["delta"] = args.delta
        what = f"smallest eps >= 0 with composed delta(eps) <= {args.delta}"
    else:
        quantity, target = "composition.delta", parse_exact(args.eps, "eps")
        inputs["eps"] = args.eps
        what = f"composed delta(eps={args.eps})"
    extra = None
    is_eps = quantity == "composition.eps"
    grid = None
    if args.grid is not None:
        grid = V.positive("grid", args.grid)
        fn = compose_eps_grid if is_eps else compose_delta_grid
        gb = fn(mechs, target, grid, k=k, digits=digits)
        enc, lower, upper, note = gb.enclosure, gb.lower, gb.upper, f"grid {exact_str(grid)}"
    else:
        fn2 = compose_eps_auto if is_eps else compose_delta_auto
        res = fn2(mechs, target, k=k, digits=digits, exact=args.exact)
        enc, lower, upper = res.enclosure, res.lower, res.upper
        if res.grid is not None:
            grid = res.grid
            note = (f"the exact lattice would have about {res.lattice_estimate} shifts (budget "
                    f"{MAX_LATTICE_SUPPORT}), so the eps_i were rounded onto the automatic grid "
                    f"{float(grid):.6g}; --exact insists on the lattice")
    if grid is not None:
        inputs["grid"] = exact_str(grid)
        inputs["accuracy_digits"] = digits
        gap = enc.to_json()["hi"] if enc.is_infinite else _gap(enc)
        extra = {"lower": lower.to_json(), "upper": upper.to_json(), "gap": gap}
        line = (f"{what} in {enc.short(digits + 2)} ({note}: rounded down "
                f"{lower.short(8)}, up {upper.short(8)}, gap <= {gap})")
    else:
        inputs["digits"] = digits
        line = f"{what} in {enc.short(digits + 2)}"
    cert = quantity_certificate(
        quantity=quantity,
        inputs=inputs,
        enclosure=enc,
        algorithm="LT Thm 4.6 recursion unrolled on the exact lattice of reachable shifts in arb; "
        + ("certified monotone root isolation" if quantity == "composition.eps" else "precision escalation")
        + ("; eps_i rounded down/up onto the grid (monotonicity, LT Thm 4.5)"
           + ("" if args.grid is not None else ", grid chosen automatically (exact lattice over budget)")
           if grid is not None else ""),
        extra_result=extra,
    )
    emit(args, cert, line)
    return 0


def _gap(enc: Any) -> str:
    from ..ball import upper_decimal

    return upper_decimal(enc.width(), 6)
