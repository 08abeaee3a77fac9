"""dpverify for an accountant maintainer's pytest suite.

* :func:`assert_sound` -- fails, naming the certified lower end, when an
  accountant reports an epsilon below it;
* the ``dpverify_certificates`` fixture (:mod:`.plugin`, registered as the
  pytest plugin ``dpverify`` through the ``pytest11`` entry point) -- the same
  check, recording each checked configuration as a certificate that
  ``dpverify verify`` accepts;
* :mod:`.strategies` -- hypothesis strategies for DP-SGD configurations and
  DpEvent trees in the regions where accountants are known to go wrong.

Example (docs/guide/ecosystem.md)::

    from dpverify.testing import assert_sound
    from dpverify.testing.strategies import dpsgd_configs
    from hypothesis import given

    @given(dpsgd_configs())
    def test_my_accountant_is_sound(cfg):
        assert_sound(my_eps, cfg.event(), cfg.delta)
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Callable

__all__ = ["UnsoundEpsilon", "assert_sound", "certified_epsilon", "deciding_answer", "judge"]


class UnsoundEpsilon(AssertionError):
    """A reported epsilon lies below the certified lower end of the true epsilon."""


def certified_epsilon(event: Any, delta: Any, *, neighboring: Any = "add-remove", rel_width: float = 1e-3,
                      time_budget: float = 120.0):
    """The certified :class:`~dpverify.events.EventAnswer` of epsilon(delta) for
    ``event`` (a dp_accounting DpEvent, a dpverify event or a JSON event)."""
    from ..events import api

    return api.epsilon(event, delta, neighboring=neighboring, rel_width=rel_width, time_budget=time_budget)


def assert_sound(eps_fn: Callable[[Any, Any], float], event: Any, delta: Any, *,
                 neighboring: Any = "add-remove", rel_width: float = 1e-3, time_budget: float = 120.0):
    """Call ``eps_fn(event, delta)`` and fail (:class:`UnsoundEpsilon`, an
    AssertionError) when the reported epsilon is below the certified lower end
    of the true epsilon(delta) of ``event`` under ``neighboring``: a proof that
    the reported guarantee is false for the exact inputs. A reported value at
    or above the lower end passes (it may still be optimistic by less than the
    enclosure's width, ``rel_width``). For events whose pair bounds the
    mechanism from above only the lower end is 0 and nothing can fail.
    Returns the certified answer."""
    reported = eps_fn(event, delta)
    ans = deciding_answer(reported, event, delta, neighboring=neighboring, rel_width=rel_width,
                          time_budget=time_budget)
    judge(reported, ans, event, delta)
    return ans


def deciding_answer(reported: Any, event: Any, delta: Any, *, neighboring: Any = "add-remove",
                    rel_width: float = 1e-3, time_budget: float = 120.0):
    """A certified answer fine enough for the verdict on ``reported``: a
    coarse enclosure (relative width 0.1) first, which settles a report below
    its lower end or at or above its upper end; the requested ``rel_width``
    only when the report falls inside it (a maintainer's suite, and
    hypothesis' shrinking, then pay for the fine grid only where it matters)."""
    from ..ball import working_precision

    if rel_width < 0.1 and reported == reported:
        coarse = certified_epsilon(event, delta, neighboring=neighboring, rel_width=0.1, time_budget=time_budget)
        with working_precision(256):
            r = _point(reported)
            if r < coarse.enclosure.lo or r >= coarse.enclosure.hi:
                return coarse
    return certified_epsilon(event, delta, neighboring=neighboring, rel_width=rel_width, time_budget=time_budget)


def _point(reported: Any) -> Any:
    """The reported number as an exact arb point (+-inf kept; numpy scalars at
    their exact binary value)."""
    from flint import arb

    from ..ball import ball

    if isinstance(reported, (int, Fraction)):
        return ball(reported)
    x = float(reported)  # exact for binary64 and narrower floats
    if math.isinf(x):
        return arb("inf") if x > 0 else -arb("inf")
    return ball(x)


def judge(reported: Any, ans: Any, event: Any, delta: Any) -> None:
    """Raise :class:`UnsoundEpsilon` when ``reported`` is below the lower end
    of the certified answer ``ans`` (a NaN is never sound)."""
    from ..ball import working_precision

    with working_precision(256):
        below = reported != reported or _point(reported) < ans.enclosure.lo
    if below:
        raise UnsoundEpsilon(
            f"reported epsilon {reported!r} is below the certified lower end {ans.enclosure.lo_str()} "
            f"of epsilon(delta={delta!r}) (certified enclosure {ans.enclosure.short(10)}, "
            f"{ans.relation.value}) for {event!r}")
