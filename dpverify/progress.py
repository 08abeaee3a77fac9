"""One progress display for every long command (audit, calibrate, reproduce,
verify, oracle), built on tqdm.

Promises (so that a long run can be trusted at a glance): the bar never moves backwards; it shows either a count
done ("12/55 claims") or the current certified width against the requested
one; tqdm estimates the time left; and nothing at all is written when the
stream (stderr by default) is not a terminal, so logs and pipes stay clean.

Three ways to drive it:

* :meth:`Progress.update` - one more item done (counted work);
* :meth:`Progress.width` - the current certified relative width and the
  requested one: the fraction shown is log(w0 / w) / log(w0 / target), the
  share of the orders of magnitude already gained (kept monotone);
* calling the object as ``progress(fraction, message)`` - the callback of the
  PLD refinement loop, whose fraction restarts at every grid level: each new
  level is taken to cover half of what remains, so the bar still only grows.
"""

from __future__ import annotations

import math
import re
import sys
import time
from contextlib import contextmanager
from contextvars import ContextVar
from typing import IO, Any, Callable, Iterator, Optional

__all__ = ["Progress", "Tick", "budget_tick", "ambient_tick", "running_clock"]

_STEPS = 1000  # resolution of the fraction bars

#: the clock a long loop calls between pieces of work (None: no clock)
Tick = Optional[Callable[[], None]]


def budget_tick(time_budget: Optional[float], what: str) -> Tick:
    """The clock of a run given ``time_budget`` seconds (None: no clock): a callable that raises
    PrecisionExhausted (exit 3) once the budget has passed since this call, naming ``what`` was
    being computed. A route calls it between its pieces of work (polynomial products, a few
    thousand grid points or knots), so a run stops within one piece of its budget. It only stops
    a run: nothing is chosen by it, so a completed answer is the same bytes under any load
    (issue 22, item 5; architecture, numerics rule 7)."""
    if time_budget is None:
        return None
    from .errors import PrecisionExhausted

    deadline = time.monotonic() + time_budget

    def tick() -> None:
        if time.monotonic() > deadline:
            raise PrecisionExhausted(f"the time budget of {time_budget:g} s ran out before {what} was complete "
                                     "(no certificate: give a larger --time-budget)")

    return tick


#: the clock of the run in progress, for kernels whose callers cannot hand it down (a curve's
#: cgf is a pure function of the order; one certified quadrature of it can take seconds)
_AMBIENT: ContextVar[Tick] = ContextVar("dpverify_ambient_tick", default=None)


@contextmanager
def running_clock(tick: Tick) -> Iterator[None]:
    """Make ``tick`` the clock :func:`ambient_tick` calls inside this block."""
    token = _AMBIENT.set(tick)
    try:
        yield
    finally:
        _AMBIENT.reset(token)


def ambient_tick() -> None:
    """Call the clock of the run in progress, if any (it raises PrecisionExhausted once the
    budget has passed; it only stops a run, never chooses anything)."""
    tick = _AMBIENT.get()
    if tick is not None:
        tick()


def _plain(message: str) -> str:
    """People's words for the PLD loop's messages: "grid 2^-13, add" becomes
    "loss grid 1/8192, add direction"."""

    def grid(m: "re.Match[str]") -> str:
        return f"loss grid 1/{2 ** int(m.group(1))}"

    out = re.sub(r"grid 2\^-(\d+)", grid, message)
    return re.sub(r", (add|remove|replace)$", r", \1 direction", out)


class Progress:
    """A monotone tqdm bar on ``stream`` (stderr), silent unless it is a terminal.

    ``total`` counts items (``update``; ``counted=True`` with no total: a count
    and a rate, no estimate); otherwise the bar shows a fraction
    (``width`` or the PLD callback). Use as a context manager or call
    :meth:`close`.
    """

    def __init__(self, desc: str, total: Optional[int] = None, unit: str = "item",
                 stream: Optional[IO[str]] = None, enabled: Optional[bool] = None,
                 counted: bool = False) -> None:
        self.stream = stream if stream is not None else sys.stderr
        if enabled is None:
            isatty = getattr(self.stream, "isatty", None)
            enabled = bool(isatty and isatty())
        self.enabled = enabled
        self.counted = total is not None or counted
        self._frac = 0.0
        self._level = 0
        self._last_inner = -1.0
        self._w0: Optional[float] = None
        self._bar: Any = None
        if not enabled:
            return
        from tqdm import tqdm

        if self.counted:
            self._bar = tqdm(total=total, desc=desc, unit=unit, file=self.stream, leave=False,
                             dynamic_ncols=True)
        else:
            self._bar = tqdm(total=_STEPS, desc=desc, file=self.stream, leave=False,
                             dynamic_ncols=True,
                             bar_format="{desc}: {percentage:3.0f}%|{bar}| {elapsed}<{remaining} {postfix}")

    # -- counted work
    def note(self, text: str) -> None:
        """A message for the item now under way (a callback for message-only loops)."""
        if self._bar is not None:
            self._bar.set_postfix_str(text)

    def update(self, n: int = 1, note: Optional[str] = None) -> None:
        if self._bar is None:
            return
        if note is not None:
            self._bar.set_postfix_str(note, refresh=False)
        self._bar.update(n)

    # -- fractions
    def fraction(self, frac: float, note: Optional[str] = None) -> None:
        """Show ``frac`` in [0, 1] unless it is below what was already shown."""
        if self._bar is None:
            return
        frac = min(max(frac, 0.0), 1.0)
        if note is not None:
            self._bar.set_postfix_str(note, refresh=False)
        if frac > self._frac:
            step = int(frac * _STEPS) - int(self._frac * _STEPS)
            self._frac = frac
            if step > 0:
                self._bar.update(step)
                return
        self._bar.refresh()

    def width(self, current: Optional[float], target: float, note: str = "") -> None:
        """The current certified relative width against the requested one."""
        if current is None or not math.isfinite(current) or current <= 0:
            self.fraction(self._frac, f"width: not yet bounded {note}".rstrip())
            return
        if self._w0 is None or current > self._w0:
            self._w0 = max(current, target * 1.0000001)
        done = 1.0 if current <= target else math.log(self._w0 / current) / math.log(self._w0 / target)
        self.fraction(done, f"width {current:.2g} -> {target:.2g} {note}".rstrip())

    def __call__(self, frac: float, message: str) -> None:
        """The PLD loop's callback (fraction within the current grid level)."""
        if frac < self._last_inner or (frac == 0 and self._last_inner >= 0):
            self._level += 1
        self._last_inner = frac
        done = 1 - 0.5 ** self._level * (1 - 0.5 * frac)
        self.fraction(done, f"level {self._level + 1}: {_plain(message)}")

    def write(self, text: str, file: Optional[IO[str]] = None) -> None:
        """Print a line without tearing the bar (tqdm clears and redraws it)."""
        out = file if file is not None else sys.stdout
        if self._bar is None:
            print(text, file=out)
        else:
            from tqdm import tqdm

            tqdm.write(text, file=out)

    # -- lifetime
    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
