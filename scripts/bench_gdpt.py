#!/usr/bin/env python3
"""Benchmark of the three staircase algorithms (GDPT Alg 2, Alg 3, adaptive).

Profile evaluations and wall time at margins 1e-3 and 1e-6 with eps_h = 100
on Laplace (D/b = 2), pure 1-DP and the refined sgd-example; then the full
certificate (head + tail) of Gaussian, Laplace, pure and randomized response at
margin 1e-9.

The grid algorithms evaluate the profile at every grid point: exactly
n + 1 evaluations with n = ceil(2 sqrt(2 pi) eps_h / margin) (5.0e5 cells at
1e-3, 5.0e8 at 1e-6). When n exceeds --max-cells they are run on the first
--max-cells cells of the *same* grid (same D, [0, max_cells D]) and the wall
time is extrapolated linearly (marked "~"); the evaluation count is exact.
Use --max-cells 0 to run every grid in full (hours in pure Python at 1e-6).

    python3 scripts/bench_gdpt.py [--eps-h 100] [--margins 1e-3 1e-6] [--max-cells 20000] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from fractions import Fraction
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dpverify.gdp.staircase import SQRT_2PI_UPPER, grid_size, head_bound  # noqa: E402
from dpverify.mechanisms import MechanismSpec, build_profile  # noqa: E402

MECHANISMS = [
    ("laplace", {"scale": "0.5"}),
    ("pure", {"eps0": "1"}),
    ("sgd-example", {"refined": "true"}),
]


def run(name, opts, eh, margin, alg, max_cells):
    profile = build_profile(MechanismSpec(name, opts))
    n = grid_size(Fraction(eh), Fraction(margin))
    if alg != "adaptive" and max_cells and n > max_cells:
        step = Fraction(eh) / n
        sub_eh = step * max_cells
        # same grid step D: a margin giving exactly max_cells cells on [0, sub_eh]
        sub_margin = 2 * SQRT_2PI_UPPER * sub_eh / max_cells
        t = time.perf_counter()
        h = head_bound(profile, sub_eh, sub_margin, alg, max_cells=max_cells + 1)
        dt = (time.perf_counter() - t) * n / max_cells
        return {"evaluations": n + 1, "time_s": dt, "extrapolated": True, "enclosure": None,
                "root_isolations_subgrid": h.root_isolations}
    t = time.perf_counter()
    h = head_bound(profile, eh, margin, alg, max_cells=10**9)
    dt = time.perf_counter() - t
    return {"evaluations": h.profile_evaluations, "time_s": dt, "extrapolated": False,
            "enclosure": h.enclosure.short(10), "root_isolations": h.root_isolations}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--eps-h", default="100")
    ap.add_argument("--margins", nargs="+", default=["1e-3", "1e-6"])
    ap.add_argument("--max-cells", type=int, default=20000)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    rows = []
    for name, opts in MECHANISMS:
        for margin in args.margins:
            res = {alg: run(name, opts, args.eps_h, margin, alg, args.max_cells)
                   for alg in ("adaptive", "shuffled", "naive")}
            ratio = res["shuffled"]["evaluations"] / res["adaptive"]["evaluations"]
            rows.append({"mechanism": name, "margin": margin, "eps_h": args.eps_h, **res,
                         "alg3_over_adaptive_evaluations": ratio})
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    print(f"{'mechanism':12} {'margin':7} {'algorithm':9} {'profile evals':>14} {'time [s]':>11}  enclosure")
    for r in rows:
        for alg in ("adaptive", "shuffled", "naive"):
            x = r[alg]
            t = ("~" if x["extrapolated"] else "") + f"{x['time_s']:.3g}"
            print(f"{r['mechanism']:12} {r['margin']:7} {alg:9} {x['evaluations']:>14,} {t:>11}  {x['enclosure'] or ''}")
        print(f"{'':12} {'':7} Alg 3 / adaptive profile evaluations = {r['alg3_over_adaptive_evaluations']:,.0f}")
    full_certify_rows()
    return 0


def full_certify_rows() -> None:
    """The full certificate (head + tail, adaptive + Taylor cells) at
    margin 1e-9, the input users type; before the Taylor cells the first two
    were undecided (more than 15000 splits) and the Gaussian took 58 s at eps_h 10."""
    from dpverify.gdp.certify import certify_gdp

    print(f"\n{'gdp certify (margin 1e-9)':34} {'time [s]':>9} {'cells':>6} {'taylor':>6}  result")
    for name, opts, eh in [("gaussian", {"mu": "1"}, "10"), ("gaussian", {"mu": "1"}, "10000"),
                           ("laplace", {"scale": "0.5"}, "10"), ("pure", {"eps0": "1"}, "10"),
                           ("rr", {"p": "0.75"}, "2")]:
        profile = build_profile(MechanismSpec(name, opts))
        t = time.perf_counter()
        c = certify_gdp(profile, eh, "1e-9")
        dt = time.perf_counter() - t
        label = f"{name} {opts} eps_h={eh}"
        print(f"{label:34} {dt:9.3f} {c.head.cells:>6} {c.head.taylor_cells:>6}  {c.short()}")


if __name__ == "__main__":
    sys.exit(main())
