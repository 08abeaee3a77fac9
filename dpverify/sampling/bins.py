"""Balls-in-bins DP-SGD, the front end: a run of any number of epochs.

One epoch is enclosed by the dominating pair of Chua et al. (AISTATS 2025)
(:mod:`dpverify.sampling.balls`). E > 1 epochs, each re-allocating the records
independently, are an adaptive composition dominated by the E-fold product of
that pair (AFA Thm 10), composed on a loss grid by
:mod:`dpverify.sampling.balls_epochs`. Callers (CLI, events, corpus, sweeps,
calibration) ask here, so the choice between the two is made in one place and
the two modules below import each other in one direction only.
"""

from __future__ import annotations

from typing import Any, Optional

from . import balls as B
from . import balls_epochs as BE
from .balls import BinsRun, run

__all__ = ["BinsRun", "run", "enclose_eps", "enclose_delta"]


def enclose_eps(r: BinsRun, delta: Any, digits: int = 6, time_budget: Optional[float] = None) -> dict[str, Any]:
    """Certified [lo, hi] of epsilon(delta) of the run: {lo, hi (decimal strings), grid}
    for one epoch, {lo, hi, grids, loss} for E > 1 (at most 4 digits: the loss grid's).
    ``time_budget`` (seconds, None: none) may only stop the run (PrecisionExhausted,
    :func:`dpverify.progress.budget_tick`), never change its answer."""
    if r.epochs > 1:
        return BE.enclose_eps(r, delta, digits=min(digits, 4), time_budget=time_budget)
    return B.enclose_eps(r, delta, digits=digits, time_budget=time_budget)


def enclose_delta(r: BinsRun, eps: Any, time_budget: Optional[float] = None) -> dict[str, Any]:
    """Certified [lo, hi] of delta(eps) of the run (keys and ``time_budget`` as :func:`enclose_eps`)."""
    if r.epochs > 1:
        return BE.enclose_delta(r, eps, time_budget=time_budget)
    return B.enclose_delta(r, eps, time_budget=time_budget)
