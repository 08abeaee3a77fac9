"""`dpverify sweep GRID`: run a task over a grid of configurations, cached, on many cores or Dask."""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

from .. import _validate as V
from ..errors import InvalidParameter
from ..files import NotARegularFile, check_writable, read_regular
from ..limits import MAX_SWEEP_CONFIGURATIONS
from ..progress import Progress
from ..sweep import Cache, load_grid, make_executor, run_sweep
from ..sweep.engine import row_progress
from ..sweep.report import require_matplotlib, summary_lines, write_heatmap, write_results
from ..vocabulary import TIME_BUDGET
from ._common import add_concept

ORDER = 70

_ADDRESS = re.compile(r"(tcp|tls)://[A-Za-z0-9_.\-\[\]:]+:\d{1,5}")


def add_parser(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    p = sub.add_parser(
        "sweep",
        help="run a task (audit, oracle) over a grid of configurations, cached, in parallel",
        description="Run a grid file's task over every configuration (docs/guide/sweep.md). Writes "
        "OUT/results.csv, OUT/results.json, OUT/certificates/KEY.json and, when the grid has a "
        "[heatmap] table, OUT/heatmap.png. Certified results are cached by content (folder or "
        "fsspec URL) and re-checked before reuse; a re-run computes only what is missing. Each entry "
        "carries an HMAC tag under a per-user secret key file, created once (mode 0600) at "
        "$DPVERIFY_CACHE_KEY or else $XDG_CONFIG_HOME/dpverify/cache-key (~/.config/dpverify/cache-key); "
        "an entry without a valid tag (forged, or from another machine or user) is never served: it is "
        "recomputed (only the tag vouches for its method block, which no verifier re-proves). "
        "Exit 0 all certified, 1 some verdict fails (or an oracle row is unsafe), 3 some "
        "configuration undecided or failed, 2 bad input. "
        "Example: dpverify sweep examples/grid-mnist.toml --workers 2",
    )
    p.add_argument("grid", metavar="GRID", help="grid file (.toml or .json)")
    p.add_argument("--workers", metavar="N", help="local process pool of N workers, an integer in 1..4096 (default: the number "
                   "of CPUs; 1 runs in this process); with --dask, the LocalCluster's worker count (default 2)")
    p.add_argument("--dask", action="store_true", help="start a dask.distributed LocalCluster")
    p.add_argument("--scheduler", metavar="ADDR", help="use an existing Dask scheduler, e.g. tcp://10.0.0.5:8786")
    p.add_argument("--out", metavar="DIR", help="output folder (default: ./sweep-<grid name>)")
    p.add_argument("--cache", metavar="DIR|URL", help="cache folder or fsspec URL (default: OUT/cache)")
    p.add_argument("--no-cache", action="store_true", help="compute everything, store nothing")
    p.add_argument("--recheck-cache", action="store_true",
                   help="re-derive every cache hit with the independent verifier before serving it "
                   "(slower; entries without a valid tag are never served: they are recomputed)")
    add_concept(p, TIME_BUDGET.where("sweep", default=None), dest="task_timeout", old=("--task-timeout",),
                help=f"kill a configuration's computation after SEC seconds (then retry), {TIME_BUDGET.range}; "
                "default: no limit beyond each task's own time_budget in the grid")
    p.add_argument("--retries", default="2", metavar="N",
                   help="retries after a timeout or a dead worker (an integer in 0..100, default 2)")
    p.add_argument("--json", action="store_true", help="print results.json to stdout")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    """The library names the grid file ``grid``; on the command line it is the
    positional GRID, not an option ``--grid``, so its errors say ``GRID FILE``."""
    try:
        return _sweep(args)
    except InvalidParameter as exc:
        if exc.name != "grid":
            raise
        raise InvalidParameter("GRID FILE", exc.message) from None


def _sweep(args: argparse.Namespace) -> int:
    grid = load_grid(args.grid)
    workers = None
    if args.workers is not None:
        workers = V.integer("workers", args.workers, lo=1, hi=4096)
    if args.dask and args.scheduler:
        raise InvalidParameter("scheduler", "give --dask (start a LocalCluster) or --scheduler ADDR, not both")
    if args.scheduler:
        if workers is not None:
            raise InvalidParameter("workers", "--workers does not apply with --scheduler (the cluster has its workers)")
        if not _ADDRESS.fullmatch(args.scheduler):
            raise InvalidParameter("scheduler", f"scheduler={args.scheduler!r} must look like tcp://HOST:PORT")
    if args.no_cache and (args.cache is not None or args.recheck_cache):
        raise InvalidParameter("no_cache", "--no-cache does not go with --cache or --recheck-cache")
    retries = V.integer("retries", args.retries, lo=0, hi=100)
    timeout = None
    if args.task_timeout is not None:
        timeout = V.seconds("time_budget", args.task_timeout)
        if not hasattr(os, "fork"):
            raise InvalidParameter("time_budget", "--time-budget needs os.fork (Linux, macOS)")
    if grid.heatmap:
        require_matplotlib()
    out = Path(args.out) if args.out else Path(f"sweep-{Path(args.grid).stem}")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InvalidParameter("out", f"out={str(out)!r}: cannot create the folder ({exc.strerror})") from None
    for name in ("results.csv", "results.json") + ((grid.heatmap.get("file", "heatmap.png"),) if grid.heatmap else ()):
        try:
            check_writable(out / name)  # a FIFO with no reader would block the write, after the sweep
        except NotARegularFile as exc:
            raise InvalidParameter("out", f"--out {str(out)!r}: {str(out / name)!r} {exc.strerror}") from None
    cache = None if args.no_cache else Cache(str(out / "cache") if args.cache is None else args.cache, recheck=args.recheck_cache)
    if workers is None and not args.dask and not args.scheduler:
        workers = os.cpu_count() or 1
    with Progress("sweep", total=grid.size, unit="cfg") as bar, \
            make_executor(workers=workers, dask=args.dask, scheduler=args.scheduler) as executor:
        res = run_sweep(grid, executor, out, cache=cache, retries=retries, timeout=timeout,
                        on_row=row_progress(bar))
    csv_path, json_path = write_results(res, out)
    heat = write_heatmap(res, out) if grid.heatmap else None
    if args.json:
        # read back as a regular file (a FIFO there had a reader, which took the text)
        sys.stdout.write(read_regular(json_path, MAX_SWEEP_CONFIGURATIONS << 16).decode("utf-8"))
    else:
        lines = summary_lines(res)
        lines.append(f"results: {csv_path}, {json_path}" + (f"; heatmap: {heat}" if heat else ""))
        print("\n".join(lines))
    verdicts = {r.verdict for r in res.rows}
    if verdicts & {"fails", "unsafe"}:
        return 1
    if any(r.status != "ok" for r in res.rows) or "undecided" in verdicts:
        return 3
    return 0
