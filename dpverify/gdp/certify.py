"""Full mu-GDP certificate of a mechanism: head (staircase) + tail (closed form).

GDPT Cor 4.1: the mechanism is mu-GDP iff mu >= sup_{eps >= 0} G_f(eps). The
head bound encloses sup_{[0, eps_h]} G_f in [mu_lo, mu_hi]
(:mod:`dpverify.gdp.staircase`); the tail (:mod:`dpverify.gdp.tail`) proves
G_f <= mu_hi on (eps_h, inf) or that no mu works. Then:

* tail certified: the optimal mu lies in [mu_lo, mu_hi] (full GDP);
* tail "not GDP" (or f >= 1 somewhere): the optimal mu is +inf;
* tail unknown: only the head guarantee [mu_lo, mu_hi] for [0, eps_h] is
  certified, with GDPT Sec 4.2's gap delta_{mu_hi}(eps_h) quantified.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .._validate import ExactInput
from ..ball import arb_to_fraction, exact_str
from ..mechanisms.base import Profile
from .staircase import HeadBound, head_bound, is_nonincreasing
from .tail import TailResult, certify_tail

__all__ = ["GdpCertificate", "certify_gdp"]


@dataclass(frozen=True)
class GdpCertificate:
    """Head, tail and the resulting status of a mu-GDP certification."""

    head: HeadBound
    tail: TailResult

    @property
    def status(self) -> str:
        """``GDP`` (full certificate), ``not GDP`` or ``head only``."""
        if self.head.unbounded or self.tail.status == "not GDP":
            return "not GDP"
        return "GDP" if self.tail.status == "certified" else "head only"

    def enclosure_json(self) -> dict[str, str]:
        if self.status == "not GDP":
            return {"lo": "inf", "hi": "inf"}
        return self.head.enclosure.to_json()

    def head_json(self) -> dict[str, Any]:
        h = self.head
        out: dict[str, Any] = {
            "enclosure": {"lo": "inf", "hi": "inf"} if h.unbounded else h.enclosure.to_json(),
            "eps_h": exact_str(h.eps_h),
            "margin": exact_str(h.margin),
            "algorithm": h.algorithm,
            "argmax": exact_str(h.argmax),
            "unbounded": h.unbounded,
            "profile_evaluations": h.profile_evaluations,
            "delta_mu_evaluations": h.delta_mu_evaluations,
            "root_isolations": h.root_isolations,
            "cells": h.cells,
            "taylor_cells": h.taylor_cells,
            "closed_form": h.closed_form,
        }
        if not h.unbounded:
            out["mu_hi_exact"] = exact_str(arb_to_fraction(h.enclosure.hi))
        if h.grid_step is not None:
            out["grid_step"] = exact_str(h.grid_step)
            out["gap_bound_sqrt2pi_D"] = exact_str(h.gap_bound)
        if h.breakpoints is not None:
            out["breakpoints"] = [exact_str(x) for x in h.breakpoints]
        return out

    def short(self) -> str:
        if self.status == "not GDP":
            return f"not GDP ({self.tail.reason})"
        what = "mu-GDP with optimal mu" if self.status == "GDP" else "head-only: sup over [0, eps_h] of G_f"
        return f"{what} in {self.head.enclosure.short(10)} (tail: {self.tail.status})"


def certify_gdp(
    profile: Profile,
    eps_h: ExactInput,
    margin: ExactInput,
    algorithm: str = "adaptive",
    **kwargs: Any,
) -> GdpCertificate:
    """Certify mu-GDP of ``profile`` (GDPT Cor 4.1, Thm 4.6, Sec 4.2)."""
    head = head_bound(profile, eps_h, margin, algorithm, **kwargs)
    if head.unbounded:
        tail = TailResult("not GDP", "head", f"the profile is >= 1 at eps = {exact_str(head.argmax)}: "
                          "no mu-GDP bound holds there (delta_mu < 1)")
        return GdpCertificate(head, tail)
    mu_hi = arb_to_fraction(head.enclosure.hi)
    tail = certify_tail(profile, head.eps_h, mu_hi)
    return GdpCertificate(head, tail)


def profile_is_monotone(profile: Profile) -> bool:
    return is_nonincreasing(profile)
