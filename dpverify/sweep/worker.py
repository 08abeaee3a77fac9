"""What runs on a worker: one job in, one outcome out (pure, picklable).

With a task timeout the job runs in a forked child process that is killed
(SIGKILL) when the deadline passes: Python cannot interrupt a long C call
(an arb convolution) from outside, and Dask runs tasks in threads where
signals do not reach. The worker itself survives a timeout, and a crash of
the child (segfault, out of memory) is reported as such instead of taking the
worker down. Without a timeout the job runs in the worker directly.
"""

from __future__ import annotations

import os
import pickle
import select
import signal
import time
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

from ..certificate.writer import unverifiable
from ..errors import DpverifyError, InvalidParameter, PrecisionExhausted, Undecided
from .tasks import Plan, load_task

__all__ = ["Job", "Outcome", "execute", "RETRYABLE"]

#: outcomes caused by the infrastructure, not by the configuration: retried
RETRYABLE = ("timeout", "died")


@dataclass(frozen=True)
class Job:
    task: str
    params: Mapping[str, Any]
    plan: Plan
    cached: Optional[Mapping[str, Any]] = None  # the certificate, when known (cache or earlier job)
    timeout: Optional[float] = None
    post: bool = False  # run the task's post step (e.g. the accountant under test) on the certificate
    #: re-check ``cached`` (an entry the cache cannot vouch for) by the independent verifier
    recheck: bool = False


@dataclass(frozen=True)
class Outcome:
    """``status``: ok | undecided | error (the configuration's own result) or
    timeout | died (the infrastructure's; retried)."""

    status: str
    cert: Optional[Mapping[str, Any]] = None
    extra: Optional[Mapping[str, Any]] = None
    message: str = ""
    seconds: float = 0.0
    meta: Mapping[str, Any] = field(default_factory=dict)


def _recheck(job: Job) -> Outcome:
    """"ok" with the certificate if the independent verifier confirms all of it, else
    "error" with its reason (undecided included: only an accept serves an entry). An entry
    confirmed only in part (a field verify names as not confirmed: free text, an oracle
    row's reported numbers) is recomputed: served, such a field would pass into the sweep's
    own output as if this run had written it (adv39 C2)."""
    from ..recheck.verify import confirm

    t0 = time.monotonic()
    assert job.cached is not None
    try:
        done = confirm(dict(job.cached))
    except DpverifyError as exc:
        return Outcome("error", message=f"the independent verifier refused it ({exc})", seconds=time.monotonic() - t0)
    if done.unconfirmed:
        return Outcome("error", message=f"the independent verifier confirmed it only in part ({done.line[:300]})",
                       seconds=time.monotonic() - t0)
    return Outcome("ok", dict(job.cached), seconds=time.monotonic() - t0)


def _run(job: Job) -> Outcome:
    if job.recheck:
        return _recheck(job)
    t0 = time.monotonic()
    try:
        task = load_task(job.task)
        cert = job.cached if job.cached is not None else task.compute(job.params, job.plan)
        why = unverifiable(cert) if job.cached is None else None
        if why is not None:  # what a sweep writes, verify accepts (a row at 7 digits: exit 3 at its cap, adv50 M2)
            raise Undecided(f"no certificate written: it needs {why}")
        extra = task.post(job.params, cert) if job.post and task.post is not None else None
    except (PrecisionExhausted, Undecided) as exc:
        return Outcome("undecided", message=str(exc), seconds=time.monotonic() - t0)
    except InvalidParameter as exc:
        return Outcome("error", message=f"invalid: {exc.message}", seconds=time.monotonic() - t0)
    except DpverifyError as exc:
        return Outcome("error", message=f"{type(exc).__name__}: {exc}", seconds=time.monotonic() - t0)
    except Exception as exc:  # a bug or a library failure is this configuration's error row
        return Outcome("error", message=f"crashed: {type(exc).__name__}: {exc}", seconds=time.monotonic() - t0)
    return Outcome("ok", dict(cert), extra, seconds=time.monotonic() - t0)


def _run_forked(job: Job) -> Outcome:
    """Run ``job`` in a forked child; kill it at the deadline."""
    load_task(job.task)  # import in the parent: the child must not import under a fork
    t0 = time.monotonic()
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: compute, send the pickled outcome, leave without cleanup
        try:
            os.close(r)
            data = pickle.dumps(_run(job))
            with os.fdopen(w, "wb") as f:
                f.write(data)
        finally:
            os._exit(0)
    os.close(w)
    chunks: list[bytes] = []
    deadline = t0 + float(job.timeout or 0)
    timed_out = False
    with os.fdopen(r, "rb") as f:
        fd = f.fileno()
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                timed_out = True
                break
            ready, _, _ = select.select([fd], [], [], min(left, 1.0))
            if ready:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    break
                chunks.append(chunk)
    if timed_out:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    _, status = os.waitpid(pid, 0)
    elapsed = time.monotonic() - t0
    if timed_out:
        return Outcome("timeout", message=f"timed out after {job.timeout:g} s", seconds=elapsed)
    try:
        out: Outcome = pickle.loads(b"".join(chunks))
    except Exception:
        sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
        why = f"killed by signal {sig}" if sig else f"exit status {os.WEXITSTATUS(status)}"
        return Outcome("died", message=f"the task's process died ({why})", seconds=elapsed)
    return out


def execute(job: Job) -> Outcome:
    """Run one job (on whatever process the executor chose) and report how it went."""
    t0 = time.monotonic()
    out = _run_forked(job) if job.timeout else _run(job)
    meta = {"pid": os.getpid()}
    return Outcome(out.status, out.cert, out.extra, out.message, time.monotonic() - t0, meta)
