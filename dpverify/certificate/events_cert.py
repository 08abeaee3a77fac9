"""Certificates of event-tree answers (``events.epsilon``, ``events.delta``,
``events.claim``), built with :mod:`.build`. The inputs record the canonical
JSON event tree (``inputs.event``), the relation and the sensitivity
convention, so the certificate states what the noise multipliers mean."""

from __future__ import annotations

from typing import Any, Optional

from ..ball import exact_str, parse_exact
from ..events.api import EventAnswer
from ..events.json_format import event_to_json
from ..events.model import SENSITIVITY_CONVENTION
from ..verdict import Verdict
from .build import quantity_certificate, verdict_certificate

__all__ = ["answer_certificate", "claim_certificate"]

SOURCE = ("AFA Def 7, Thm 10, Thm 11, Prop 30, Cor 32; LT Thm 4.5; Doroshenko et al. 2022 "
          "(connect-the-dots); per-pair theorems in result.theorems")


def _inputs(tree: Any, ans: EventAnswer, digits: Optional[int]) -> dict[str, Any]:
    out = {"event": event_to_json(tree), "neighboring": ans.relation.value,
           "sensitivity_convention": SENSITIVITY_CONVENTION}
    # the accuracy is the dominating pair's; a non-tight pair reports [0, hi] or [realised lower end, hi]
    if digits is not None and not ans.details.get("upper_bound_only") and "realised_lower_end" not in ans.details:
        out["digits"] = digits
    return out


def answer_certificate(tree: Any, ans: EventAnswer, *, delta: Any = None, eps: Any = None,
                       digits: Optional[int] = None) -> dict[str, Any]:
    inputs = _inputs(tree, ans, digits)
    if delta is not None:
        quantity, name = "events.epsilon", "epsilon(delta)"
        inputs["delta"] = exact_str(parse_exact(delta, "delta"))
    else:
        quantity, name = "events.delta", "delta(eps)"
        inputs["eps"] = exact_str(parse_exact(eps, "eps"))
    return quantity_certificate(
        quantity=quantity,
        statement=f"{name} of the composed dominating pairs of the event tree under the {ans.relation.value} "
                  "relation lies in [lo, hi] (an upper bound for the mechanism; equal to it where the pairs are tight)",
        source=SOURCE, inputs=inputs, enclosure=ans.enclosure,
        algorithm=f"{ans.method}: certified discretisation per pair, exact convolution, suffix-sum queries",
        extra_result={k: v for k, v in ans.to_json().items() if k != "enclosure"},
    )


def claim_certificate(tree: Any, verdict: Verdict, ans: Optional[EventAnswer], relation: str, *,
                      claimed_eps: str, delta: str) -> dict[str, Any]:
    inputs = {"event": event_to_json(tree), "neighboring": relation,
              "sensitivity_convention": SENSITIVITY_CONVENTION,
              "claimed_eps": claimed_eps, "delta": delta}
    return verdict_certificate(
        quantity="events.claim",
        statement=f"the event tree is (claimed_eps, delta)-DP under {relation}: certified delta(claimed_eps) <= delta",
        source=SOURCE, inputs=inputs, verdict=verdict,
        enclosure=ans.enclosure if ans is not None else None,
        algorithm="PLD accountant on the event tree, refined until the verdict is decided",
        extra_result=({k: v for k, v in ans.to_json().items() if k != "enclosure"} if ans else None),
    )
