"""Calibration: dpverify's certified bracket against dp_accounting's
``calibrate_dp_mechanism`` (PLD accountant) and Opacus' ``get_noise_multiplier``
(PRV accountant), in one run, in-process, for five targets of DP-SGD on
(q, T, delta) = (256/60000, 14063, 1e-5).

For each target: the three answers, their times, and whether dp_accounting's
or Opacus' sigma is UNSAFE (below dpverify's proved sigma_lo: the target is
then provably violated at their sigma) or merely not proved (inside the
bracket). Usage: python scripts/bench_calibrate.py [--targets 1,2,3,4,8]
"""

from __future__ import annotations

import argparse
import time
import warnings
from fractions import Fraction

from dpverify.calibrate import calibrate

Q, T, DELTA = "256/60000", 14063, "1e-5"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--targets", default="1,2,3,4,8")
    ap.add_argument("--rel-width", default="1e-3")
    args = ap.parse_args()
    warnings.filterwarnings("ignore")
    try:
        import dp_accounting as dpa
        from dp_accounting import pld
    except ImportError:
        dpa = None
    try:
        from opacus.accountants.utils import get_noise_multiplier
    except ImportError:
        get_noise_multiplier = None
    q = float(Fraction(Q))
    rows = []
    print(f"DP-SGD (q, T, delta) = ({Q}, {T}, {DELTA}), add-remove, Poisson; bracket width {args.rel_width}")
    print(f"{'eps':>4} {'dpverify [lo, hi]':>24} {'s':>6} | {'dp_accounting':>13} {'s':>6} {'verdict':>9} | "
          f"{'opacus(prv)':>11} {'s':>6} {'verdict':>9}")
    for e in args.targets.split(","):
        t0 = time.perf_counter()
        c = calibrate(e, DELTA, sampling_rate=Q, steps=T, rel_width=args.rel_width)
        t_dv = time.perf_counter() - t0
        lo, hi = float(c.lo), float(c.hi)

        def judge(s):
            if s is None:
                return "-"
            x = Fraction(s)
            return "UNSAFE" if x < c.lo else ("safe" if x >= c.hi else "unproved")

        s_dpa = t_dpa = None
        if dpa is not None:
            t0 = time.perf_counter()
            s_dpa = dpa.calibrate_dp_mechanism(
                lambda: pld.PLDAccountant(),
                lambda s: dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(s)), T),
                float(e), float(Fraction(DELTA)))
            t_dpa = time.perf_counter() - t0
        s_op = t_op = None
        if get_noise_multiplier is not None:
            t0 = time.perf_counter()
            s_op = get_noise_multiplier(target_epsilon=float(e), target_delta=float(Fraction(DELTA)),
                                        sample_rate=q, steps=T, accountant="prv")
            t_op = time.perf_counter() - t0
        rows.append((t_dv, t_dpa, t_op))
        fmt = lambda v, f: "-" if v is None else format(v, f)  # noqa: E731
        print(f"{e:>4} [{lo:.6f}, {hi:.6f}] {t_dv:6.1f} | {fmt(s_dpa, '.6f'):>13} {fmt(t_dpa, '6.1f'):>6} "
              f"{judge(s_dpa):>9} | {fmt(s_op, '.6f'):>11} {fmt(t_op, '6.1f'):>6} {judge(s_op):>9}", flush=True)
    tot = [sum(r[i] for r in rows if r[i] is not None) for i in range(3)]
    print(f"total time: dpverify {tot[0]:.1f} s, dp_accounting {tot[1]:.1f} s, opacus {tot[2]:.1f} s")
    if tot[1]:
        print(f"ratio dpverify / dp_accounting = {tot[0] / tot[1]:.2f} (goal <= 3)")
    if tot[2]:
        print(f"ratio dpverify / opacus(prv) = {tot[0] / tot[2]:.2f}")


if __name__ == "__main__":
    main()
