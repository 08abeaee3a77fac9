"""Opacus' ``get_noise_multiplier(..., accountant="dpverify")``: Opacus' own
bisection over the dpverify accountant (the route before the float-model
proposals) against the routed calibration (dpverify.accountants.opacus_adapter.
get_noise_multiplier), on draws of Opacus' overshoot property test. Prints, per
draw, both times, the certified get_epsilon calls each made, both multipliers
and the ratio of the times. Both multipliers are certified (each route returns
a z whose get_epsilon, a certified upper end, is below the target).

With ``--vs-prv`` the reference is Opacus' own PRV accountant instead
(``get_noise_multiplier(..., accountant="prv")``, an estimate without a
certificate), the ratio being PRV's time over the routed calibration's.

Usage: python scripts/bench_opacus_noise.py [--draws EPS,EPOCHS,Q,DELTA;...] [--after-only | --vs-prv]
(the default draws run in a few minutes; 10^6 steps, e.g. "1,100,1e-4,1e-6",
takes about six minutes before and ten seconds after on a loaded 2-core machine)
"""

from __future__ import annotations

import argparse
import time

import opacus.accountants.utils as opacus_utils

import dpverify.accountants  # noqa: F401  (registers "dpverify" and routes get_noise_multiplier)
from dpverify.accountants import opacus_adapter as OA

DEFAULT = "10,100,1e-2,1e-6;1.9,10,1e-3,1e-4;4.4,72,5e-3,1e-5"


def _run(fn, eps: float, epochs: int, q: float, delta: float) -> tuple[float, float, int]:
    calls = [0]
    orig = OA.DpverifyOpacusAccountant.get_epsilon

    def counted(self, *a, **k):
        calls[0] += 1
        return orig(self, *a, **k)

    OA._poisson_enclosure.cache_clear()  # each route pays for its own evaluations
    OA.DpverifyOpacusAccountant.get_epsilon = counted
    try:
        t = time.perf_counter()
        z = fn(target_epsilon=eps, target_delta=delta, sample_rate=q, epochs=epochs, accountant="dpverify")
        return z, time.perf_counter() - t, calls[0]
    finally:
        OA.DpverifyOpacusAccountant.get_epsilon = orig


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--draws", default=DEFAULT)
    ap.add_argument("--after-only", action="store_true")
    ap.add_argument("--vs-prv", action="store_true", help="compare with Opacus' PRV accountant")
    a = ap.parse_args()
    opacus_own = opacus_utils.get_noise_multiplier.__wrapped__  # Opacus' bisection itself
    if a.vs_prv:
        print(f"{'eps':>6} {'epochs':>6} {'q':>7} {'delta':>6} {'steps':>8} | {'prv s':>7} {'z prv':>10} | "
              f"{'dpverify s':>10} {'z dpverify':>10} | prv / dpverify")
        for d in a.draws.split(";"):
            e, ep, q, de = d.split(",")
            eps, epochs, q_, delta = float(e), int(ep), float(q), float(de)
            t = time.perf_counter()
            zp = opacus_own(target_epsilon=eps, target_delta=delta, sample_rate=q_, epochs=epochs, accountant="prv")
            tp = time.perf_counter() - t
            zd, td, _ = _run(opacus_utils.get_noise_multiplier, eps, epochs, q_, delta)
            print(f"{eps:>6g} {epochs:>6} {q_:>7g} {delta:>6g} {int(epochs / q_):>8} | {tp:>7.1f} {zp:>10.6g} | "
                  f"{td:>10.1f} {zd:>10.6g} | {tp / td:.1f}x", flush=True)
        return
    print(f"{'eps':>6} {'epochs':>6} {'q':>7} {'delta':>6} {'steps':>8} | {'before s':>9} {'calls':>5} "
          f"{'z before':>12} | {'after s':>8} {'calls':>5} {'z after':>12} | ratio")
    for d in a.draws.split(";"):
        e, ep, q, de = d.split(",")
        eps, epochs, q_, delta = float(e), int(ep), float(q), float(de)
        za, ta, ca = _run(opacus_utils.get_noise_multiplier, eps, epochs, q_, delta)
        if a.after_only:
            zb, tb, cb = float("nan"), float("nan"), 0
        else:
            zb, tb, cb = _run(opacus_own, eps, epochs, q_, delta)
        print(f"{eps:>6g} {epochs:>6} {q_:>7g} {delta:>6g} {int(epochs / q_):>8} | {tb:>9.1f} {cb:>5} "
              f"{zb:>12.6g} | {ta:>8.1f} {ca:>5} {za:>12.6g} | {tb / ta:.1f}x", flush=True)


if __name__ == "__main__":
    main()
