"""Composition of discretised steps: chooses, per power, between the two
kernels - exact integer products (:mod:`.convolve`) and the certified Fourier
power (:mod:`.fourier`) - which return the same kind of rigorous bound, so
the choice affects speed only. It is made by the static cost model of
:mod:`.plan` (operation counts), never by a timing, so the same inputs take
the same path on every machine and under any load."""

from __future__ import annotations

import math
from typing import Callable, Optional, Sequence, Union

from .convolve import mul, trim_lower, trim_upper
from .convolve import power as exact_power
from .discretise import LowerDist, UpperDist
from .fourier import FourierDeclined, fourier_power
from .plan import FOURIER_MIN_STEPS, cheaper_than_exact

__all__ = ["compose", "power"]

Dist = Union[UpperDist, LowerDist]


def _power_fourier(D: Dist, T: int, budget: int, allowance: int,
                   tick: Optional[Callable[[], None]], steps_before: int,
                   read_above: Optional[float] = None) -> Dist:
    """D^{*T} as (D^{*2^j})^{*a} * D^{*(T mod 2^j)}, a = T >> j: j exact
    squarings, one certified Fourier power (:mod:`.fourier`), one exact product
    with the remainder. The Fourier error bound grows about linearly in a, so
    when it exceeds ``allowance`` j is raised by the reported factor (a
    proven bound, not a timing: deterministic).
    Truncation budgets follow :func:`.convolve.power` (each product covering
    k steps truncates at most budget * k; a power of a leaves its input's
    +inf mass multiplied by at most a, as T / k squarings would).

    A retry whose reported factor fell by less than :data:`RETRY_GAIN` from the last one is not
    followed by another: the bound does not shrink with a there, and the exact products take over.
    A lattice-like step (a Poisson-subsampled (eps, delta) guarantee: three atoms) kept a factor of
    1.084 from a = 10^4 down to a = 2, thirteen transforms (19 s) before the exact products (1.5 s).

    ``read_above``: handed to :func:`.fourier.fourier_power` where its power is the result itself
    (no remainder product follows, which would read the classes it drops)."""
    base, b_steps = D, 1
    last = math.inf
    while True:
        a = T // b_steps
        if a < 2:
            raise FourierDeclined("too few steps left for a power")
        try:
            F = fourier_power(base, a, allowance, tick, read_above if a * b_steps == T else None)
            break
        except FourierDeclined as e:
            if e.factor is None or e.factor * RETRY_GAIN > last:  # (a non-finite ratio is reported as None)
                raise
            last = e.factor
            for _ in range(max(1, math.ceil(math.log2(max(e.factor, 1.0))))):
                b_steps *= 2
                if T // b_steps < 2:
                    raise
                base = mul(base, base, budget * b_steps)
                if tick:
                    tick()
    F = trim_upper(F, budget * a * b_steps) if isinstance(F, UpperDist) else \
        trim_lower(F, budget * a * b_steps)  # type: ignore[arg-type]
    rem = T - a * b_steps
    if rem:
        R = exact_power(D, rem, budget, tick, steps_before + a * b_steps)
        F = mul(F, R, budget * (steps_before + T))
    if tick:
        tick()
    return F


#: the least fall of the Fourier power's reported factor (error / allowance) from one retry to the
#: next that earns another (:func:`_power_fourier`): a squaring halves a, and where the float error
#: follows a the factor about halves too; a fall under a fifth says it does not
RETRY_GAIN = 1.25


def power(D: Dist, T: int, budget: int, tick: Optional[Callable[[], None]] = None,
          steps_before: int = 0, allowance: Optional[int] = None, read_above: Optional[float] = None) -> Dist:
    """D^{*T} (T >= 1). With an ``allowance`` (units of 2^-K of proven float
    error the caller accepts), T >= FOURIER_MIN_STEPS and the static cost
    model preferring it, by the Fourier power; otherwise, or when it
    declines, by exact square-and-multiply (``budget`` per step, as
    :func:`.convolve.power`). ``read_above``: :func:`.fourier.fourier_power`'s."""
    if allowance is not None and T >= FOURIER_MIN_STEPS and cheaper_than_exact(D, T):
        try:
            return _power_fourier(D, T, budget, allowance, tick, steps_before, read_above)
        except FourierDeclined:
            pass
    return exact_power(D, T, budget, tick, steps_before)


def compose(parts: Sequence[tuple[Dist, int]], budget: int,
            tick: Optional[Callable[[], None]] = None, allowance: Optional[int] = None,
            read_above: Optional[float] = None) -> Dist:
    """Heterogeneous composition: the product of D_j^{T_j} over the parts
    (all on the same grid and unit 2^-K); ``budget`` per step, ``allowance``
    per power (:func:`power`). ``read_above`` (a float loss in nats; a lower pair whose queries
    read its suffixes only near or above it): :func:`.fourier.fourier_power` may drop the classes
    well below it, only where one power is the whole composition (a product would read them)."""
    out: Optional[Dist] = None
    done = 0
    for D, T in parts:
        P = power(D, T, budget, tick, allowance=allowance, read_above=read_above if len(parts) == 1 else None)
        done += T
        out = P if out is None else mul(out, P, budget * done)
    assert out is not None
    return out
