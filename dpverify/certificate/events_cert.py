"""Certificates of event-tree answers (``events.epsilon``, ``events.delta``,
``events.claim``), built with :mod:`.build`. The inputs record the canonical
JSON event tree (``inputs.event``), the relation and the sensitivity
convention, so the certificate states what the noise multipliers mean."""

from __future__ import annotations

from typing import Any, Optional

from ..ball import exact_str, parse_exact
from ..events.api import CLOSED_METHOD, CLOSED_POISSON_METHOD, EventAnswer
from ..events.json_format import event_to_json
from ..events.model import SENSITIVITY_CONVENTION
from ..verdict import Verdict
from .build import CLOSED_GAUSSIAN_ALGORITHM, CLOSED_POISSON_ALGORITHM, quantity_certificate, verdict_certificate

__all__ = ["answer_certificate", "claim_certificate"]



def _algorithm(ans: EventAnswer) -> str:
    """The certificate's ``method.algorithm``: the closed form of a tree of rate-1 Gaussian steps
    (events.api._closed), else the grid route's words."""
    if ans.method == CLOSED_METHOD:
        return CLOSED_GAUSSIAN_ALGORITHM
    if ans.method == CLOSED_POISSON_METHOD:
        return CLOSED_POISSON_ALGORITHM
    return f"{ans.method}: certified discretisation per pair, exact convolution, suffix-sum queries"


def _inputs(tree: Any, ans: EventAnswer, digits: Optional[int]) -> dict[str, Any]:
    out = {"event": event_to_json(tree), "neighboring": ans.relation.value,
           "sensitivity_convention": SENSITIVITY_CONVENTION}
    # the accuracy is the dominating pair's; a non-tight pair reports [0, hi] or [realised lower end, hi]
    if digits is not None and not ans.details.get("upper_bound_only") and "realised_lower_end" not in ans.details:
        out["digits"] = digits
    return out


def answer_certificate(tree: Any, ans: EventAnswer, *, delta: Any = None, eps: Any = None,
                       digits: Optional[int] = None) -> dict[str, Any]:
    """``events.epsilon`` / ``events.delta``; a group-privacy bracket (Poisson sampling under
    replace-one, ``ans.is_bracket``) is written as the kind that states it, ``replace.*``."""
    if ans.is_bracket:
        from . import replace_cert as RC

        return RC.bracket_certificate(RC.tree_inputs(tree), ans.details["bracket"], delta=delta, eps=eps)
    inputs = _inputs(tree, ans, digits)
    if delta is not None:
        quantity = "events.epsilon"
        inputs["delta"] = exact_str(parse_exact(delta, "delta"))
    else:
        quantity = "events.delta"
        inputs["eps"] = exact_str(parse_exact(eps, "eps"))
    return quantity_certificate(
        quantity=quantity,
        inputs=inputs, enclosure=ans.enclosure,
        algorithm=_algorithm(ans),
        extra_result={k: v for k, v in ans.to_json().items() if k != "enclosure"},
    )


def claim_certificate(tree: Any, verdict: Verdict, ans: Optional[EventAnswer], relation: str, *,
                      claimed_eps: str, delta: str) -> dict[str, Any]:
    """``events.claim``; a claim decided on a group-privacy bracket as ``replace.claim``."""
    if ans is not None and ans.is_bracket:
        from . import replace_cert as RC

        return RC.claim_certificate(RC.tree_inputs(tree), ans.details["bracket"], verdict.outcome.value,
                                    verdict.reason, claimed_eps=claimed_eps, delta=delta)
    inputs = {"event": event_to_json(tree), "neighboring": relation,
              "sensitivity_convention": SENSITIVITY_CONVENTION,
              "claimed_eps": claimed_eps, "delta": delta}
    return verdict_certificate(
        quantity="events.claim",
        inputs=inputs, verdict=verdict,
        enclosure=ans.enclosure if ans is not None else None,
        algorithm=(_algorithm(ans) if ans is not None and ans.method in (CLOSED_METHOD, CLOSED_POISSON_METHOD)
                   else "PLD accountant on the event tree, refined until the verdict is decided"),
        extra_result=({k: v for k, v in ans.to_json().items() if k != "enclosure"} if ans else None),
    )
