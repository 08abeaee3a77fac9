"""Sweeps: a task over a grid of configurations, on a process pool or Dask,
with a content-addressed, distrusted result cache (docs/guide/sweep.md)."""

from .cache import Cache
from .engine import Row, SweepResult, plan_grid, run_sweep
from .executors import DaskExecutor, Executor, PoolExecutor, SequentialExecutor, make_executor
from .grid import Grid, load_grid, parse_grid
from .tasks import Plan, cache_key, load_task

__all__ = [
    "Cache",
    "DaskExecutor",
    "Executor",
    "Grid",
    "Plan",
    "PoolExecutor",
    "Row",
    "SequentialExecutor",
    "SweepResult",
    "cache_key",
    "load_grid",
    "load_task",
    "make_executor",
    "parse_grid",
    "plan_grid",
    "run_sweep",
]
