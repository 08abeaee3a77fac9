"""Poisson-sampled DP-SGD under replace-one: a certified bracket for epsilon(delta).

No dominating pair of the Poisson-subsampled Gaussian under replace-one is proved
in the papers dpverify is built on (AFA Thm 11 covers add and remove neighbours;
Prop 30 / Cor 32 pair Poisson sampling with add/remove and subset sampling with
replace), and dp_accounting has none either: its PLD and RDP accountants refuse a
PoissonSampledDpEvent under REPLACE_ONE (they accept ADD_OR_REMOVE_ONE and
REPLACE_SPECIAL, the latter with the add/remove pairs). So the answer here is a
bracket from two theorems about the whole T-step mechanism M:

* upper end, group privacy (Dwork and Roth 2014, Thm 2.2 in its (eps, delta)
  form): replace-one neighbours D, D' are two add/remove steps apart through
  D'' = D minus x (remove x, then add x'), so for every event S
  P(M(D) in S) <= e^eps1 P(M(D'') in S) + delta_remove(eps1)
               <= e^(eps1 + eps2) P(M(D') in S) + e^eps1 delta_add(eps2) + delta_remove(eps1),
  i.e. delta_replace(2 eps) <= delta_remove(eps) + e^eps delta_add(eps)
  <= (1 + e^eps) delta_add-remove(eps), with
  delta_remove / delta_add the composed curves of AFA Thm 11 (1) + Thm 10 that
  the PLD accountant bounds from above. No adaptivity assumption is added: the
  inequality is about M itself.
* lower end, a concrete pair: replacing x by a record whose clipped gradient is
  0 at every model gives M(D') the law of M(D minus x) (a Poisson-sampled sum
  does not see a zero summand), so replace-one is at least the remove direction
  of add/remove, whose pair is tight (AFA Thm 11, "Remark (Exact optimality)":
  realised by [0,...,0,1] vs [0,...,0]); the accountant's lower end of that
  composed curve is a lower bound.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Optional

from flint import arb

from .. import _validate as V
from ..ball import ball, exact_str, lower_decimal, round_decimal_text, working_precision
from ..errors import PrecisionExhausted
from ..relation import Relation

__all__ = ["poisson_replace_one_epsilon", "THEOREMS", "SOURCE"]

SOURCE = ("group privacy (Dwork and Roth 2014, Thm 2.2) over the add/remove curves of AFA Thm 11 (1) + Thm 10 "
          "(upper end); the remove direction realised by a zero-gradient replacement (lower end, AFA Thm 11 "
          "Remark: tight)")
THEOREMS = [
    "upper end: delta_replace(2 eps) <= delta_remove(eps) + e^eps delta_add(eps) (group privacy through "
    "D minus x; Dwork and Roth 2014 Thm 2.2), curves bounded by the certified PLD accountant (AFA Thm 10, "
    "Thm 11 (1))",
    "lower end: replacing x by a record of zero clipped gradient has the law of removing x under Poisson "
    "sampling, so the remove-direction curve (tight, AFA Thm 11 Remark) is a lower bound",
    "dp_accounting has no pair for PoissonSampledDpEvent under REPLACE_ONE (its accountants refuse it)",
]


def poisson_replace_one_epsilon(events: list, delta: Any, *, time_budget: float = 600.0,
                                digits: int = 3) -> dict[str, Any]:
    """Certified bracket of epsilon(delta) under replace-one for Poisson-sampled
    Gaussian steps: {lo, hi, eps_star = hi / 2, lower (the remove curve's eps
    enclosure), upper (the add/remove curve's delta enclosure at eps_star)}."""
    from ..pld import dpsgd as S

    D = V.open_unit("delta", delta)
    low = S.epsilon(events, D, neighboring=Relation.REMOVE, digits=digits, time_budget=time_budget)
    # float-guided fixed point for eps with delta_AR(eps) (1 + e^eps) <= delta; then certified
    import math

    guess = float(low.enclosure.hi.mid())
    for _ in range(2):
        target = D / (1 + Fraction(math.exp(min(guess, 700.0))))
        guess = float(S.epsilon(events, target, neighboring=Relation.ADD_REMOVE, digits=2,
                                time_budget=time_budget).enclosure.hi.mid())
    for attempt in range(6):
        eps_star = Fraction(round_decimal_text(repr(guess * (1 + 1e-3 * 2**attempt)), 6, upward=True))
        # delta_remove + e^eps delta_add <= (1 + e^eps) max(delta_remove, delta_add): one query of the
        # add/remove curve (its relative width is that of the larger direction, so it is cheap)
        dar = S.delta(events, eps_star, neighboring=Relation.ADD_REMOVE, digits=2, time_budget=time_budget)
        with working_precision(256):
            total = (1 + ball(eps_star).exp()) * dar.enclosure.hi
            if total <= ball(D):
                break
    else:
        raise PrecisionExhausted("replace-one upper end: no eps found with (1 + e^eps) delta_add-remove(eps) "
                                 f"<= {D}")
    with working_precision(256):
        lo_text = lower_decimal(low.enclosure.lo, 8)
    return {"lo": lo_text, "hi": exact_str(2 * eps_star), "eps_star": eps_star,
            "lower": low.enclosure.to_json(), "upper": dar.enclosure.to_json(),
            "seconds": low.seconds + dar.seconds}
