#!/usr/bin/env python3
"""DP-SGD benchmark: dpverify's certified PLD accountant next to the float
accountants (dp_accounting PLD, prv_accountant), one run, side by side.

Usage: python3 scripts/bench_dpsgd.py [--cases N ...] [--no-float] [--digits 4]

For each (sigma, q, T) at delta = 1e-5 it prints dpverify's certified
[lo, hi] of epsilon, its relative width and wall time; dp_accounting's PLD
estimate (default settings and value_discretization_interval = 1e-5) with its
time; prv_accountant's [lower, upper] bracket for eps_error = 1e-2 and 1e-3
with times; and the time ratio dpverify / PRV(1e-3). Comparison libraries are
imported lazily (pip install dp-accounting prv-accountant); missing ones are
reported, not fatal. Floats appear here only for printing.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from dpverify.pld import dpsgd as S  # noqa: E402

CASES = [
    ("1", "0.01", 1000),
    ("4", "0.01", 10000),
    ("0.8", "0.004", 20000),
    ("3", "4096/50000", 2500),
]
DELTA = "1e-5"


def _q(text: str) -> float:
    if "/" in text:
        a, b = text.split("/")
        return int(a) / int(b)
    return float(text)


def run_dpa(sigma: str, q: str, T: int, vdi):
    try:
        import dp_accounting as dpa
    except ImportError:
        return None, None, "dp_accounting not installed"
    ev = dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(_q(q), dpa.GaussianDpEvent(float(sigma))), T)
    t = time.perf_counter()
    acc = dpa.pld.PLDAccountant(value_discretization_interval=vdi) if vdi else dpa.pld.PLDAccountant()
    acc.compose(ev)
    eps = acc.get_epsilon(float(DELTA))
    return eps, time.perf_counter() - t, ""


def run_prv(sigma: str, q: str, T: int, eps_error: float):
    try:
        from prv_accountant import PRVAccountant
        from prv_accountant.privacy_random_variables import PoissonSubsampledGaussianMechanism
    except ImportError:
        return None, None, "prv_accountant not installed"
    t = time.perf_counter()
    try:
        prv = PoissonSubsampledGaussianMechanism(noise_multiplier=float(sigma), sampling_probability=_q(q))
        acc = PRVAccountant(prvs=[prv], max_self_compositions=[T], eps_error=eps_error, delta_error=1e-10)
        lo, _, hi = acc.compute_epsilon(delta=float(DELTA), num_self_compositions=[T])
    except Exception as exc:  # PRV raises on some inputs (prv_accountant #36)
        return None, time.perf_counter() - t, f"error: {exc}"
    return (lo, hi), time.perf_counter() - t, ""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", nargs="+", type=int, help="case numbers 1..4 (default all)")
    ap.add_argument("--no-float", action="store_true", help="skip dp_accounting and PRV")
    ap.add_argument("--digits", type=int, default=4, help="relative width 10^-digits (default 4)")
    args = ap.parse_args()
    warnings.filterwarnings("ignore")
    chosen = [CASES[i - 1] for i in (args.cases or range(1, 5))]
    rows = []
    for sigma, q, T in chosen:
        t = time.perf_counter()
        try:
            ans = S.dpsgd_epsilon(sigma, q, T, DELTA, digits=args.digits)
            enc, rel = ans.enclosure, ans.rel_width
            ours = f"[{enc.lo_str()[:10]}, {enc.hi_str()[:10]}]"
            width = f"{rel:.2e}" if rel is not None else "-"
            lo_f, hi_f = float(enc.lo_str()), float(enc.hi_str())
        except Exception as exc:
            ours, width, lo_f, hi_f = f"FAILED: {exc}", "-", None, None
        t_ours = time.perf_counter() - t
        print(f"\n(sigma, q, T) = ({sigma}, {q}, {T}), delta = {DELTA}")
        print(f"  dpverify certified     eps in {ours}  rel width {width}  time {t_ours:7.2f} s")
        prv3_time = None
        if not args.no_float:
            for vdi in (None, 1e-5):
                eps, tt, note = run_dpa(sigma, q, T, vdi)
                label = "default" if vdi is None else "vdi=1e-5"
                if eps is None and note:
                    print(f"  dp_accounting PLD {label:8s} {note}")
                    continue
                inside = "" if lo_f is None else ("  (>= certified lo)" if eps >= lo_f else "  (BELOW certified lo: unsafe)")
                print(f"  dp_accounting PLD {label:8s} eps = {eps:.6f}{inside}  time {tt:7.2f} s")
            for ee in (1e-2, 1e-3):
                br, tt, note = run_prv(sigma, q, T, ee)
                if br is None:
                    print(f"  prv_accountant {ee:g}     {note}")
                    continue
                ok = "" if lo_f is None else (
                    "  (contains certified)" if br[0] <= lo_f and hi_f <= br[1] else "  (does NOT contain certified)")
                print(f"  prv_accountant {ee:g}  [{br[0]:.6f}, {br[1]:.6f}]{ok}  time {tt:7.2f} s")
                if ee == 1e-3:
                    prv3_time = tt
        ratio = f"{t_ours / prv3_time:.2f}" if prv3_time else "-"
        print(f"  time ratio dpverify / PRV(eps_error=1e-3) = {ratio}")
        rows.append((sigma, q, T, ours, width, f"{t_ours:.2f}", ratio))
    print("\nsummary: sigma, q, T, certified eps, rel width, time (s), time / PRV(1e-3)")
    for r in rows:
        print("  " + " | ".join(str(x) for x in r))
    return 0


if __name__ == "__main__":
    sys.exit(main())
