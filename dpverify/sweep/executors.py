"""Executors: one interface, three engines (no scheduler, queue or RPC of our own).

* :class:`SequentialExecutor`: in this process, one job after the other.
* :class:`PoolExecutor`: ``concurrent.futures.ProcessPoolExecutor`` (spawned
  processes). At most ``workers`` jobs are in flight, so when a worker dies
  (``BrokenProcessPool``) exactly the jobs that were running are charged one
  attempt; the pool is replaced and the engine resubmits them.
* :class:`DaskExecutor`: a ``dask.distributed.Client`` on a LocalCluster it
  starts (``--dask``) or on an existing scheduler (``--scheduler``). Every job
  is submitted at once (``pure=False``, ``retries=0``: retrying is the engine's
  job, so that the count is the same on every executor); Dask itself moves
  the tasks of a worker that dies to the others, and reports ``KilledWorker``
  only after its own limit, which becomes a "died" outcome here.

``submit(job, tag)`` hands a job over; ``next_done()`` blocks until some job
finished and returns ``(tag, Outcome)``; an infrastructure failure is an
Outcome with status "died", never an exception.
"""

from __future__ import annotations

import uuid
from abc import ABC, abstractmethod
from collections import deque
from typing import Any, Optional

from ..errors import InvalidParameter
from .worker import Job, Outcome, execute

__all__ = ["Executor", "SequentialExecutor", "PoolExecutor", "DaskExecutor", "make_executor"]


class Executor(ABC):
    name: str = ""
    #: how many jobs the engine keeps in flight
    slots: int = 1

    @abstractmethod
    def submit(self, job: Job, tag: Any) -> None: ...

    @abstractmethod
    def next_done(self) -> tuple[Any, Outcome]: ...

    def close(self) -> None:
        pass

    def __enter__(self) -> "Executor":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class SequentialExecutor(Executor):
    name = "sequential"
    slots = 1

    def __init__(self) -> None:
        self._queue: deque = deque()

    def submit(self, job: Job, tag: Any) -> None:
        self._queue.append((job, tag))

    def next_done(self) -> tuple[Any, Outcome]:
        job, tag = self._queue.popleft()
        return tag, execute(job)


class PoolExecutor(Executor):
    def __init__(self, workers: int) -> None:
        self.workers = workers
        self.slots = workers
        self.name = f"process pool ({workers} workers)"
        self._pool: Any = None
        self._futures: dict = {}
        self._ready: deque = deque()

    def _get_pool(self) -> Any:
        if self._pool is None:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor

            # spawn: the workers do not inherit the driver's threads (progress bar, Dask client)
            self._pool = ProcessPoolExecutor(self.workers, mp_context=multiprocessing.get_context("spawn"))
        return self._pool

    def submit(self, job: Job, tag: Any) -> None:
        try:
            fut = self._get_pool().submit(execute, job)
        except Exception as exc:  # BrokenProcessPool found at submit: report like a death
            self._ready.append((tag, Outcome("died", message=f"worker pool broken ({type(exc).__name__})")))
            self._replace()
            return
        self._futures[fut] = tag

    def _replace(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None

    def next_done(self) -> tuple[Any, Outcome]:
        from concurrent.futures import FIRST_COMPLETED, wait
        from concurrent.futures.process import BrokenProcessPool

        if self._ready:
            return self._ready.popleft()
        done, _ = wait(list(self._futures), return_when=FIRST_COMPLETED)
        broken = False
        for fut in done:
            tag = self._futures.pop(fut)
            exc = fut.exception()
            if exc is None:
                self._ready.append((tag, fut.result()))
            else:
                broken |= isinstance(exc, BrokenProcessPool)
                self._ready.append((tag, Outcome("died", message=f"a worker process died ({type(exc).__name__})")))
        if broken:
            # every job in flight on the broken pool is lost: report each, start a new pool
            for fut, tag in list(self._futures.items()):
                self._ready.append((tag, Outcome("died", message="a worker process died (BrokenProcessPool)")))
            self._futures.clear()
            self._replace()
        return self._ready.popleft()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None


class DaskExecutor(Executor):
    def __init__(self, *, workers: Optional[int] = None, scheduler: Optional[str] = None,
                 connect_timeout: float = 10.0) -> None:
        try:
            import distributed
        except ImportError:
            raise InvalidParameter("dask", "Dask is not installed: pip install 'dpverify[dask]'") from None
        self._cluster = None
        if scheduler is not None:
            try:
                self._client = distributed.Client(scheduler, timeout=connect_timeout)
            except (OSError, TimeoutError) as exc:
                raise InvalidParameter("scheduler", f"scheduler={scheduler!r}: cannot connect ({exc})") from None
            except ValueError as exc:  # the address parser's ("tcp://[::1"): exit 4 before
                raise InvalidParameter("scheduler", f"scheduler={scheduler!r} is not an address ({exc})") from None
            self.name = f"Dask scheduler {scheduler}"
        else:
            import logging

            self._cluster = distributed.LocalCluster(
                n_workers=workers or 2, threads_per_worker=1, processes=True,
                host="127.0.0.1", dashboard_address=None, silence_logs=logging.ERROR,
            )
            self._client = distributed.Client(self._cluster)
            self.name = f"Dask LocalCluster ({workers or 2} workers)"
        self.slots = 1 << 30  # Dask schedules: hand over everything
        self._ac = distributed.as_completed()
        self._tags: dict = {}

    @property
    def client(self) -> Any:
        return self._client

    def submit(self, job: Job, tag: Any) -> None:
        key = f"dpverify-{job.task}-{job.plan.key[:12]}-{uuid.uuid4().hex[:8]}"
        fut = self._client.submit(execute, job, key=key, pure=False, retries=0)
        self._tags[fut.key] = tag
        self._ac.add(fut)

    def next_done(self) -> tuple[Any, Outcome]:
        fut = next(self._ac)
        tag = self._tags.pop(fut.key)
        try:
            if fut.status == "finished":
                return tag, fut.result()
            exc = fut.exception()
            return tag, Outcome("died", message=f"Dask: {type(exc).__name__}: {exc}")
        except Exception as exc:  # cancelled, lost connection: an infrastructure failure
            return tag, Outcome("died", message=f"Dask: {type(exc).__name__}: {exc}")
        finally:
            fut.release()

    def close(self) -> None:
        try:
            self._client.close()
        finally:
            if self._cluster is not None:
                self._cluster.close()


def make_executor(*, workers: Optional[int], dask: bool, scheduler: Optional[str]) -> Executor:
    """The executor for the CLI options (validated there)."""
    if scheduler is not None:
        return DaskExecutor(scheduler=scheduler)
    if dask:
        return DaskExecutor(workers=workers)
    if not workers or workers <= 1:
        return SequentialExecutor()
    return PoolExecutor(workers)
