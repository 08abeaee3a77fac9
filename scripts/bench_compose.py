"""Benchmark: certified eps(delta) of tight (eps, delta) composition (LT Thm 4.6)
for k in {10, 100, 1000, 10000} homogeneous, 200 and 1000 distinct (eps_i, delta_i)
(the latter on the automatic grid), the pair (0.1, 0.123456789) whose lattice once ran away,
next to dp_accounting's PLD accountant when installed (optional), with the
float accountant's error against the certified enclosure.

    python3 scripts/bench_compose.py [--digits 15] [--no-pld] [--exact-distinct]

Timings are wall-clock on this machine; the certified value is an enclosure,
the PLD value a float (pessimistic discretisation), its error is reported
relative to the enclosure's midpoint, with 'unsafe' when it falls below the
certified lower end.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dpverify.composition import compose_eps, compose_eps_auto, compose_eps_grid  # noqa: E402


def pld_eps(mechs: list[tuple[str, str]], k: int, delta: float, interval: float = 1e-4):
    try:
        from dp_accounting.pld import privacy_loss_distribution as pld
        from dp_accounting.pld.common import DifferentialPrivacyParameters
    except ImportError:
        return None, None
    t = time.perf_counter()
    acc = None
    for e, d in mechs:
        one = pld.from_privacy_parameters(DifferentialPrivacyParameters(float(e), float(d)),
                                          value_discretization_interval=interval)
        acc = one if acc is None else acc.compose(one)
    if k > 1:
        acc = acc.self_compose(k)
    return acc.get_epsilon_for_delta(delta), time.perf_counter() - t


def row(label: str, mechs: list[tuple[str, str]], k: int, delta: str, digits: int, use_pld: bool,
        grid: "str | None" = None) -> None:
    texts = [f"{e},{d}" for e, d in mechs]
    t = time.perf_counter()
    if grid == "auto":
        res = compose_eps_auto(texts, delta, k=k, digits=digits)
        enc = res.enclosure
        extra = "" if res.exact else f" auto grid {float(res.grid):.3g}: gap {float(enc.width()):.3g}"
    elif grid:
        gb = compose_eps_grid(texts, delta, grid, k=k, digits=digits)
        enc = gb.enclosure
        extra = f" grid {grid}: gap {float(gb.gap()):.3g}"
    else:
        enc = compose_eps(texts, delta, k=k, digits=digits)
        extra = ""
    dt = time.perf_counter() - t
    line = f"{label:<28} certified {enc.short(12):<36} {dt:8.3f} s{extra}"
    if use_pld:
        v, pt = pld_eps(mechs, k, float(delta))
        if v is None:
            line += "   PLD: dp_accounting not installed"
        elif not enc.hi.is_finite():
            line += f"   PLD {v:.10g} ({pt:.2f} s) vs certified inf"
        else:
            mid = (float(enc.lo) + float(enc.hi)) / 2
            tag = "unsafe" if v < float(enc.lo) else "ok"
            line += f"   PLD {v:.10g} ({pt:.2f} s) rel.err {abs(v - mid) / mid:.2e} {tag}"
    print(line, flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--digits", type=int, default=15)
    ap.add_argument("--no-pld", action="store_true")
    ap.add_argument("--exact-distinct", action="store_true", help="also the exact 200-distinct lattice (slow)")
    a = ap.parse_args()
    use_pld = not a.no_pld
    for k in (10, 100, 1000, 10000):
        row(f"k={k} x (0.1, 1e-10)", [("0.1", "1e-10")], k, "1e-5", a.digits, use_pld)
    distinct = [(f"{0.05 + i / 1000:.3f}", "1e-10") for i in range(200)]
    row("200 distinct, grid 0.01", distinct, 1, "1e-5", a.digits, use_pld, grid="0.01")
    row("200 distinct, grid 0.002", distinct, 1, "1e-5", a.digits, use_pld, grid="0.002")
    thousand = [(f"{0.01 + i / 100000:.5f}", "1e-10") for i in range(1000)]
    row("1000 distinct, automatic", thousand, 1, "1e-5", a.digits, use_pld, grid="auto")
    row("0.1 + 0.123456789 (span 2.2e8)", [("0.1", "1e-5"), ("0.123456789", "0")], 1, "1e-5", a.digits,
        use_pld, grid="auto")
    if a.exact_distinct:
        row("200 distinct, exact", distinct, 1, "1e-5", a.digits, use_pld)


if __name__ == "__main__":
    main()
