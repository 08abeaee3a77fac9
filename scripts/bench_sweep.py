"""Sweep executors on one grid, in-process: sequential vs a 2-worker process
pool vs a 2-worker Dask LocalCluster, then a re-run served from the cache.

Grid: 200 small DP-SGD configurations (sigma x steps 1..20, q = 0.05, delta = 1e-5,
relative width 1e-1), each 0.05-0.3 s, i.e. the worst case for overhead.
Prints wall times, speed-ups against sequential, the cache-hit re-run time as
a fraction of the first run, and the overhead per task:
(wall time x workers - sum of the tasks' own compute times) / tasks.

    PYTHONPATH=. python scripts/bench_sweep.py [--sigmas 10] [--steps 20] [--workers 2]
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

from dpverify.sweep import Cache, DaskExecutor, PoolExecutor, SequentialExecutor, parse_grid, run_sweep


def grid(n_sigma: int, n_steps: int):
    sigmas = [f"{1 + k / 10:.1f}" for k in range(n_sigma)]
    return parse_grid({
        "task": "audit",
        "fixed": {"delta": "1e-5", "digits": 1, "sampling_rate": "0.05"},
        "product": {"noise_multiplier": sigmas, "steps": {"start": 1, "stop": n_steps, "step": 1}},
    }, "bench")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sigmas", type=int, default=10)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--recheck", action="store_true", help="also time a re-run with --recheck-cache (slow)")
    a = ap.parse_args()
    g = grid(a.sigmas, a.steps)
    tmp = Path(tempfile.mkdtemp(prefix="bench-sweep-"))
    n, w = g.size, a.workers
    print(f"{n} configurations, {w} workers")
    runs = {}
    try:
        for name, make, workers in (("sequential", SequentialExecutor, 1),
                                    (f"pool({w})", lambda: PoolExecutor(w), w),
                                    (f"LocalCluster({w})", lambda: DaskExecutor(workers=w), w)):
            t = time.monotonic()
            with make() as ex:  # startup and teardown included: what a user waits for
                res = run_sweep(g, ex, tmp / name, cache=Cache(str(tmp / f"cache-{name}")) if name == "sequential" else None)
            wall = time.monotonic() - t
            assert all(r.status == "ok" for r in res.rows), name
            compute = sum(r.seconds for r in res.rows)
            runs[name] = wall
            base = runs["sequential"]
            print(f"{name:<18} wall {wall:7.2f} s   speed-up {base / wall:5.2f}x   "
                  f"task seconds {compute:7.2f}   overhead/task {(wall * workers - compute) / n * 1000:7.1f} ms")
        t = time.monotonic()
        res = run_sweep(g, SequentialExecutor(), tmp / "rerun", cache=Cache(str(tmp / "cache-sequential")))
        rerun = time.monotonic() - t
        assert res.cache_hits == n and res.computed == 0
        print(f"cache-hit re-run    wall {rerun:7.2f} s   = {rerun / runs['sequential']:.1%} of the sequential run "
              f"({rerun / n * 1000:.1f} ms per configuration, digest + schema + key checks)")
        if not a.recheck:
            return
        t = time.monotonic()
        run_sweep(g, SequentialExecutor(), tmp / "rerun2", cache=Cache(str(tmp / "cache-sequential"), recheck=True))
        rc = time.monotonic() - t
        print(f"re-run, --recheck-cache wall {rc:7.2f} s   = {rc / runs['sequential']:.1%} (independent verifier on every hit)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
