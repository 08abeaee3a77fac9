"""What dpverify.testing adds to an accountant maintainer's suite: the
documented example's derandomized draws (docs/guide/ecosystem.md), each timed
twice, the accountant's own call (dp_accounting's PLDAccountant) and the
certified check that assert_sound adds (dpverify.testing.deciding_answer).
Prints one row per draw and the ratio of the totals.

Usage: python scripts/bench_plugin.py [--examples N]
"""

from __future__ import annotations

import argparse
import statistics
import time

from dp_accounting.pld import PLDAccountant
from hypothesis import given, settings

from dpverify.testing import deciding_answer, judge
from dpverify.testing.strategies import dpsgd_configs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--examples", type=int, default=20)
    n = ap.parse_args().examples
    rows = []

    @settings(max_examples=n, deadline=None, derandomize=True, database=None)
    @given(dpsgd_configs())
    def draw(cfg):
        t0 = time.perf_counter()
        reported = PLDAccountant().compose(cfg.event()).get_epsilon(cfg.delta)
        t1 = time.perf_counter()
        ans = deciding_answer(reported, cfg.event(), cfg.delta)
        t2 = time.perf_counter()
        judge(reported, ans, cfg.event(), cfg.delta)
        rows.append((cfg, t1 - t0, t2 - t1))

    draw()
    print(f"{'region':>11} {'sigma':>6} {'q':>6} {'steps':>7} {'delta':>7} | {'accountant s':>12} {'check s':>8}")
    for cfg, a, c in rows:
        print(f"{cfg.region:>11} {cfg.noise_multiplier:>6} {cfg.sampling_rate:>6} {cfg.steps:>7} {cfg.delta:>7.0e} | "
              f"{a:>12.2f} {c:>8.2f}")
    acc, chk = sum(r[1] for r in rows), sum(r[2] for r in rows)
    print(f"{len(rows)} draws: accountant {acc:.1f} s, certified checks {chk:.1f} s "
          f"(median {statistics.median(r[2] for r in rows):.2f} s); check / accountant = {chk / acc:.2f}")


if __name__ == "__main__":
    main()
