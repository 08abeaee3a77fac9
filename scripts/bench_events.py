"""Time of the certified event accountant on the new events at T steps versus
the Poisson-subsampled Gaussian at the same T and accuracy (goal:
ratio <= 2), plus a tree of mixed events at relative width 1e-4.

    PYTHONPATH=. python scripts/bench_events.py [--steps 10000] [--rel-width 1e-4] [--quick]

Prints one row per event: enclosure, relative width, seconds, ratio to the
Poisson Gaussian. In-process, one run each (no timing asserts anywhere)."""

from __future__ import annotations

import argparse
import sys
import time
from fractions import Fraction as F
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dpverify.events import epsilon, model as E  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=10_000)
    ap.add_argument("--rel-width", type=float, default=1e-4)
    ap.add_argument("--quick", action="store_true", help="T = 1000, fewer rows")
    a = ap.parse_args()
    T = 1000 if a.quick else a.steps
    q, n, m = F(1, 100), 60000, 600
    rows = [
        ("poisson gaussian (baseline)", E.PoissonSampled(q, E.Gaussian(F(1))), "add-remove"),
        ("WOR gaussian, add-remove", E.SampledWithoutReplacement(n, m, E.Gaussian(F(2))), "add-remove"),
        ("WOR gaussian, replace-one", E.SampledWithoutReplacement(n, m, E.Gaussian(F(2))), "replace-one"),
        # the same mechanism as the baseline, written as a mixture: the like-for-like MoG ratio
        ("MoG = the baseline (0/1, 0.99/0.01)", E.MixtureOfGaussians(F(1), (F(0), F(1)), (F(99, 100), F(1, 100))),
         "add-remove"),
        ("MoG 3 components (BandMF-style)", E.MixtureOfGaussians(F(1), (F(0), F(1), F(2)),
                                                                 (F(98, 100), F(1, 100), F(1, 100))), "add-remove"),
        ("poisson laplace", E.PoissonSampled(q, E.Laplace(F(2))), "add-remove"),
        ("poisson (eps,delta)", E.PoissonSampled(q, E.EpsilonDelta(F(1, 2), F(1, 10**9))), "add-remove"),
    ]
    if a.quick:
        rows = rows[:5]
    base = None
    print(f"T = {T}, delta = 1e-5, requested relative width {a.rel_width:g}")
    for name, ev, rel in rows:
        t0 = time.perf_counter()
        ans = epsilon(E.SelfComposed(ev, T), "1e-5", neighboring=rel, rel_width=a.rel_width)
        dt = time.perf_counter() - t0
        base = base or dt
        print(f"{name:34s} {ans.enclosure.short(8):28s} width {ans.rel_width:.2e}  {dt:7.2f} s  ratio {dt / base:5.2f}")
    tree = E.Composed((
        E.SelfComposed(E.PoissonSampled(q, E.Gaussian(F(1))), T // 2),
        E.SelfComposed(E.SampledWithoutReplacement(n, m, E.Gaussian(F(2))), T // 2),
        E.SelfComposed(E.Laplace(F(50)), 10),
        E.SelfComposed(E.MixtureOfGaussians(F(2), (F(0), F(1), F(2)), (F(98, 100), F(1, 100), F(1, 100))), 100),
    ))
    t0 = time.perf_counter()
    ans = epsilon(tree, "1e-5", rel_width=1e-4)
    print(f"{'done-when mixed tree':34s} {ans.enclosure.short(8):28s} width {ans.rel_width:.2e}  "
          f"{time.perf_counter() - t0:7.2f} s")


if __name__ == "__main__":
    main()
