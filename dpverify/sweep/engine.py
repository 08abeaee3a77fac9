"""Run a grid: plan every configuration, serve what the cache holds, compute the
rest on an executor with retries, and keep every finished result.

Order of events per configuration: ``plan`` (in this process; an invalid
configuration stops the sweep before anything runs, exit 2) -> cache lookup
(re-checked, :mod:`.cache`) -> job on the executor -> outcome. A finished
certificate is written to the cache and to ``OUT/certificates`` as soon as it
arrives, so an interrupted sweep loses only the jobs in flight and the next
run computes only what is missing. Infrastructure failures (a timeout, a dead
worker) are retried up to ``retries`` times and then recorded as an error
row with the reason; a configuration's own failure (undecided within its
budget, an exception) is recorded at once. Identical configurations (same
cache key) are computed once.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional

from ..ball import exact_str
from ..certificate import dumps
from ..errors import InvalidParameter
from ..files import open_output
from ..numtext import clip
from .cache import Cache, Lookup
from .executors import Executor
from .grid import Grid
from .tasks import Plan, load_task
from .worker import RETRYABLE, Job, Outcome

__all__ = ["Row", "SweepResult", "row_progress", "run_sweep", "plan_grid"]


@dataclass
class Row:
    index: int
    params: dict
    key: str
    status: str = "missing"  # ok | undecided | error
    quantity: str = ""
    lo: str = ""
    hi: str = ""
    verdict: str = ""
    seconds: float = 0.0
    cached: bool = False
    attempts: int = 0
    certificate: str = ""
    error: str = ""
    extra: dict = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        d = {"index": self.index, "params": self.params, "key": self.key, "status": self.status,
             "quantity": self.quantity, "lo": self.lo, "hi": self.hi, "verdict": self.verdict,
             "seconds": round(self.seconds, 4), "cached": self.cached, "attempts": self.attempts,
             "certificate": self.certificate, "error": self.error}
        d.update(self.extra)
        return d


@dataclass
class SweepResult:
    grid: Grid
    executor: str
    rows: list[Row]
    seconds: float
    cache_hits: int = 0
    cache_refused: list[str] = field(default_factory=list)
    cache_rechecked: list[str] = field(default_factory=list)  # served after the independent verifier, and why
    cache_unstored: list[str] = field(default_factory=list)  # results the cache could not store, and why
    computed: int = 0
    retried: int = 0

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for r in self.rows:
            out[r.status] = out.get(r.status, 0) + 1
        return out

    def verdicts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for r in self.rows:
            if r.verdict:
                out[r.verdict] = out.get(r.verdict, 0) + 1
        return out


def _show(v: Any) -> str:
    """A grid value as the label of its configuration shows it, shortened as every message shortens a
    user's text (a 5000-digit value was printed whole, a 5.2 kB message: mend49 3)."""
    return clip(v if isinstance(v, str) else (exact_str(v) if not isinstance(v, (int, bool)) else str(v)))


def plan_grid(grid: Grid) -> list[tuple[dict, Plan]]:
    """Every configuration with its plan; InvalidParameter naming the first bad one."""
    task = load_task(grid.task)
    out, bad = [], []
    for i, params in enumerate(grid.configurations()):
        try:
            out.append((params, task.plan(params)))
        except InvalidParameter as exc:
            axes = ", ".join(f"{k}={_show(params[k])}" for k in grid.axis_names if k in params)
            bad.append(f"configuration {i} ({axes or 'fixed parameters'}): {exc.message}")
    if bad:
        more = f" (and {len(bad) - 1} more invalid configurations)" if len(bad) > 1 else ""
        raise InvalidParameter("grid", f"{grid.source}: {bad[0]}{more}")
    return out


def row_progress(progress: Any) -> Callable[[Row, int, int], None]:
    """An ``on_row`` callback driving a counted :class:`dpverify.progress.Progress`
    (one display for every long command): one step per finished row, cached
    or computed, so the count only grows and tqdm's estimate of the time left
    follows; the note counts cache hits and failures."""
    seen = {"cached": 0, "failed": 0}

    def on_row(row: Row, done: int, total: int) -> None:
        seen["cached"] += bool(row.cached)
        seen["failed"] += row.status != "ok"
        progress.update(1, note=f"{seen['cached']} cached, {seen['failed']} not certified")

    return on_row


def run_sweep(
    grid: Grid,
    executor: Executor,
    out_dir: "Path | str",
    *,
    cache: Optional[Cache],
    retries: int = 2,
    timeout: Optional[float] = None,
    on_row: Optional[Callable[[Row, int, int], None]] = None,
) -> SweepResult:
    """Run every configuration of ``grid``; rows in grid order."""
    t0 = time.monotonic()
    task = load_task(grid.task)
    planned = plan_grid(grid)
    out = Path(out_dir)
    (out / "certificates").mkdir(parents=True, exist_ok=True)
    shown = grid.axis_names or list(grid.fixed)
    rows = [Row(i, {k: _show(p[k]) for k in shown if k in p}, plan.key) for i, (p, plan) in enumerate(planned)]
    by_key: dict[str, list[int]] = {}
    for r in rows:
        by_key.setdefault(r.key, []).append(r.index)
    result = SweepResult(grid, executor.name, rows, 0.0)
    total, done = len(rows), 0

    def finish_row(i: int, outcome: Outcome, attempts: int, cached: bool, cert_path: str) -> None:
        nonlocal done
        r = rows[i]
        params = planned[i][0]
        fields: dict[str, Any] = {}
        if outcome.status == "ok" and outcome.cert is not None:
            fields = task.summarize(params, outcome.cert, outcome.extra)
        r.status = outcome.status if outcome.status in ("ok", "undecided") else "error"
        r.seconds, r.cached, r.attempts, r.certificate = outcome.seconds, cached, attempts, cert_path
        r.error = outcome.message
        r.quantity = fields.get("quantity", "")
        r.lo, r.hi = fields.get("lo", ""), fields.get("hi", "")
        r.verdict = fields.get("verdict", "undecided" if outcome.status == "undecided" else
                               ("" if outcome.status == "ok" else "error"))
        r.extra = {k: v for k, v in fields.items() if k not in ("quantity", "lo", "hi", "verdict") and k not in r.params}
        done += 1
        if on_row:
            on_row(r, done, total)

    queue: list[tuple[Any, Job]] = []  # (tag, job); popped from the end

    def certificate_known(key: str, outcome: Outcome, attempts: int, cached: bool) -> None:
        """A configuration key is settled: store its certificate, then finish
        its rows (or queue their post steps)."""
        params, plan = planned[by_key[key][0]]
        cert_path = ""
        if outcome.cert is not None:
            cert = outcome.cert
            if not cached and cache is not None and cert.get("result", {}).get("verdict") != "undecided":
                try:
                    cache.put(plan, cert)  # as soon as it exists: an interrupted sweep keeps it
                except OSError as exc:
                    # the cache is an optimisation: a path it cannot write (a directory where an
                    # entry goes, a full disk) costs the next run a recomputation, not this run its
                    # results (adv34 M2)
                    result.cache_unstored.append(f"{key[:12]}: {exc.strerror or type(exc).__name__}")
            with open_output(out / "certificates" / f"{key}.json", encoding="utf-8") as fh:
                fh.write(dumps(cert))
            cert_path = f"certificates/{key}.json"
        for i in by_key[key]:
            if task.post is not None and outcome.status == "ok":
                queue.insert(0, (("post", i, cached, cert_path),
                                 Job(grid.task, planned[i][0], plan, outcome.cert, timeout, post=True)))
            else:
                finish_row(i, outcome, attempts, cached, cert_path)

    pending: dict[str, Lookup] = {}  # entries the cache cannot vouch for, re-checked as jobs

    def compute(key: str) -> None:
        params, plan = planned[by_key[key][0]]
        queue.insert(0, (("cert", key), Job(grid.task, params, plan, None, timeout)))

    for key, idxs in by_key.items():
        params, plan = planned[idxs[0]]
        if cache is not None:
            t = time.monotonic()
            look = cache.get(plan)
            if look.refused:
                result.cache_refused.append(f"{key[:12]}: {look.refused}")
            if look.cert is not None and look.rechecked:
                # the independent verifier runs on the executor, in parallel like a computation
                pending[key] = look
                queue.insert(0, (("recheck", key), Job(grid.task, params, plan, look.cert, timeout, recheck=True)))
                continue
            if look.cert is not None:
                result.cache_hits += 1
                certificate_known(key, Outcome("ok", look.cert, seconds=time.monotonic() - t), 0, True)
                continue
        compute(key)

    attempts: dict[Any, int] = {}
    inflight = 0
    while queue or inflight:
        while queue and inflight < executor.slots:
            tag, job = queue.pop()
            attempts[tag] = attempts.get(tag, 0) + 1
            executor.submit(job, (tag, job))
            inflight += 1
        (tag, job), outcome = executor.next_done()
        inflight -= 1
        if outcome.status in RETRYABLE and attempts[tag] <= retries:
            result.retried += 1
            queue.append((tag, job))
            continue
        if tag[0] == "recheck":
            key = tag[1]
            look = pending.pop(key)
            if outcome.status == "ok":  # served (tagged already: Cache.check serves no other)
                result.cache_hits += 1
                result.cache_rechecked.append(f"{key[:12]}: {look.rechecked}")
                certificate_known(key, Outcome("ok", look.cert, seconds=outcome.seconds), 0, True)
            else:  # refused, or the re-check itself timed out or died: compute afresh
                result.cache_refused.append(f"{key[:12]}: {outcome.message or outcome.status}")
                compute(key)
        elif tag[0] == "cert":
            result.computed += 1
            certificate_known(tag[1], outcome, attempts[tag], False)
        else:
            _, i, cached, cert_path = tag
            finish_row(i, outcome, attempts[tag], cached, cert_path)
    result.seconds = time.monotonic() - t0
    return result
