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

from fractions import Fraction
from typing import Any, Optional

from ..certificate.format import BINS_ENCLOSURE_RANGE, BINS_MAX_EPS
from ..errors import InvalidParameter
from . import balls as B
from . import balls_epochs as BE
from .balls import BinsRun, run

__all__ = ["BinsRun", "run", "enclose_eps", "enclose_delta"]


def enclose_eps(r: BinsRun, delta: Any, digits: int = 6, time_budget: Optional[float] = None) -> dict[str, Any]:
    """Certified [lo, hi] of epsilon(delta) of the run: {lo, hi (decimal strings), grid}
    for one epoch, {lo, hi, grids, loss} for E > 1 (at most 4 digits: the loss grid's).
    ``time_budget`` (seconds, None: none) may only stop the run (PrecisionExhausted,
    :func:`dpverify.progress.budget_tick`), never change its answer. InvalidParameter (exit 2)
    for a run whose certified upper end passes BINS_MAX_EPS: verify refuses such an enclosure with
    the same words (certificate.format.BINS_MAX_EPS; adv47 M3: 1000 epochs of N = 100, B = 10,
    sigma 1.1 wrote [96.27, 113.8] after 33 CPU s and verify refused it)."""
    if r.epochs > 1:
        b = BE.enclose_eps(r, delta, digits=min(digits, 4), time_budget=time_budget)
    else:
        b = B.enclose_eps(r, delta, digits=digits, time_budget=time_budget)
    if Fraction(b["hi"]) > BINS_MAX_EPS:
        raise InvalidParameter("delta", f"epsilon(delta) of this balls-in-bins run is certified only up to "
                                        f"{b['hi']} > {BINS_MAX_EPS}, beyond the range of a bins certificate "
                                        f"({BINS_ENCLOSURE_RANGE}; verify refuses more): no guarantee to "
                                        "certify here; fewer epochs, a larger noise multiplier or a larger "
                                        "delta give a smaller eps")
    return b


def enclose_delta(r: BinsRun, eps: Any, time_budget: Optional[float] = None) -> dict[str, Any]:
    """Certified [lo, hi] of delta(eps) of the run (keys and ``time_budget`` as :func:`enclose_eps`)."""
    if r.epochs > 1:
        return BE.enclose_delta(r, eps, time_budget=time_budget)
    return B.enclose_delta(r, eps, time_budget=time_budget)
