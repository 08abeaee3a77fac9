"""Calibration: dpverify's certified bracket against dp_accounting's
``calibrate_dp_mechanism`` (PLD accountant) and Opacus' ``get_noise_multiplier``
(PRV accountant), in one run, in-process, for five targets of DP-SGD on
(q, T, delta) = (256/60000, 14063, 1e-5).

For each target: the three answers, their times, and whether dp_accounting's
or Opacus' sigma is UNSAFE (below dpverify's proved sigma_lo: the target is
then provably violated at their sigma) or merely not proved (inside the
bracket). ``--verify`` also times ``dpverify verify`` of each bracket
certificate (the independent mpmath re-proof of both ends). ``--wor`` adds
one fixed-batch (sampling without replacement, replace-one) calibration at
eps = 3 against dp_accounting's RDP accountant (its only WOR route).
Usage: python scripts/bench_calibrate.py [--targets 1,2,3,4,8] [--verify] [--wor]
"""

from __future__ import annotations

import argparse
import time
import warnings
from fractions import Fraction

from dpverify import calibrate

Q, T, DELTA = "256/60000", 14063, "1e-5"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--targets", default="1,2,3,4,8")
    ap.add_argument("--rel-width", default="1e-3")
    ap.add_argument("--verify", action="store_true", help="also time verify of each certificate")
    ap.add_argument("--wor", action="store_true", help="also a fixed-batch calibration at eps = 3")
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
        ver = ""
        if args.verify:
            from dpverify.certificate import verify_certificate
            from dpverify.cli.calibrate import certificate

            t0 = time.perf_counter()
            verify_certificate(certificate(c))
            t_v = time.perf_counter() - t0
            ver = f" | verify {t_v:5.1f} s ({t_v / t_dv:.1f}x calibrate)"
        print(f"{e:>4} [{lo:.6f}, {hi:.6f}] {t_dv:6.1f} | {fmt(s_dpa, '.6f'):>13} {fmt(t_dpa, '6.1f'):>6} "
              f"{judge(s_dpa):>9} | {fmt(s_op, '.6f'):>11} {fmt(t_op, '6.1f'):>6} {judge(s_op):>9}{ver}", flush=True)
    tot = [sum(r[i] for r in rows if r[i] is not None) for i in range(3)]
    print(f"total time: dpverify {tot[0]:.1f} s, dp_accounting {tot[1]:.1f} s, opacus {tot[2]:.1f} s")
    if tot[1]:
        print(f"ratio dpverify / dp_accounting = {tot[0] / tot[1]:.2f} (goal <= 3)")
    if tot[2]:
        print(f"ratio dpverify / opacus(prv) = {tot[0] / tot[2]:.2f}")
    if args.wor:
        _wor(dpa, args.rel_width)


def _wor(dpa, rel_width: str) -> None:
    B, N = 256, 60000
    t0 = time.perf_counter()
    c = calibrate(3, DELTA, sampling="without-replacement", batch_size=B, dataset_size=N, steps=T,
                  rel_width=rel_width)
    t_dv = time.perf_counter() - t0
    mu = c.mechanism_unsafe
    print(f"fixed batches B={B} of N={N}, T={T}, replace-one, eps=3: safe sigma {float(c.safe.value):.6f} "
          f"(AFA Cor 32 pair; pair limit {float(c.unsafe.value):.6f}), mechanism proved to fail at "
          f"{'-' if mu is None else f'{float(mu.value):.6f}'}; {t_dv:.1f} s")
    if dpa is None:
        return
    from dp_accounting import rdp

    t0 = time.perf_counter()
    s = dpa.calibrate_dp_mechanism(
        lambda: rdp.RdpAccountant(neighboring_relation=dpa.NeighboringRelation.REPLACE_ONE),
        lambda z: dpa.SelfComposedDpEvent(dpa.SampledWithoutReplacementDpEvent(N, B, dpa.GaussianDpEvent(z)), T),
        3.0, float(Fraction(DELTA)),
        bracket_interval=dpa.ExplicitBracketInterval(0.5, 20.0))  # its default lower end 0 divides by 0
    t_rdp = time.perf_counter() - t0
    # dp_accounting's noise multiplier is std / (replace-one sensitivity 2C); dpverify's is std / C
    x = 2 * Fraction(s)
    verdict = ("UNSAFE (mechanism proved to fail)" if mu is not None and x <= mu.value else
               "safe (proved)" if x >= c.safe.value else "not proved by the Cor 32 pair")
    print(f"  dp_accounting RDP (replace-one): z = {s:.6f} (std / 2C), i.e. sigma = std / C = {float(x):.6f}, "
          f"in {t_rdp:.1f} s: {verdict}")


if __name__ == "__main__":
    main()
