"""Certificates of Poisson sampling under replace-one (``replace.epsilon``,
``replace.delta``, ``replace.claim``): the enclosure is a bracket of epsilon(delta)
or delta(eps), the upper end by group privacy over the add/remove curves, the
lower end by a zero-contribution replacement (the remove direction). The mechanism
is a DP-SGD schedule (its inputs as ``pld.*`` records them) or an event tree
(``inputs.event``, canonical JSON, with ``inputs.sensitivity_convention``);
:mod:`dpverify.sampling.replace` states the theorems, :mod:`dpverify.recheck.replace`
re-proves both ends of either form."""

from __future__ import annotations

from typing import Any, Optional

from ..ball import exact_str, parse_exact
from ..sampling import replace as R
from .build import encloses
from .writer import make_certificate

__all__ = ["bracket_certificate", "claim_certificate", "decide", "tree_inputs"]

#: the verdict rule lives with the theorems (one copy, also used by :func:`dpverify.check_claim`)
decide = R.decide


def tree_inputs(tree: Any) -> dict[str, Any]:
    """The inputs that define the mechanism of an event tree (as ``events.*`` records them)."""
    from ..events.json_format import event_to_json
    from ..events.model import SENSITIVITY_CONVENTION

    return {"event": event_to_json(tree), "sensitivity_convention": SENSITIVITY_CONVENTION}


def _result(b: dict[str, Any], quantity: str) -> dict[str, Any]:
    out = {"quantity": quantity, "enclosure": {"lo": b["lo"], "hi": b["hi"]},
           "neighboring": "replace-one", "theorems": list(R.THEOREMS), "upper": b["upper"]}
    if "lower" in b:
        out["lower"] = b["lower"]
    return out


#: the given input -> (kind, algorithm); what the enclosure encloses and the statement are the
#: kind's template (:mod:`.prose`)
_QUERIES = {
    "delta": ("replace.epsilon", "PLD accountant (remove direction: epsilon; add/remove: delta at eps* = hi/2)"),
    "eps": ("replace.delta", "PLD accountant (remove direction: delta at eps; add/remove: delta at eps/2)"),
}


def bracket_certificate(inputs: dict[str, Any], b: dict[str, Any], delta: Optional[str] = None, *,
                        eps: Optional[str] = None) -> dict[str, Any]:
    """``replace.epsilon`` (``delta`` given, ``b`` from group_privacy_epsilon) or
    ``replace.delta`` (``eps`` given, ``b`` from group_privacy_delta)."""
    if (delta is None) == (eps is None):
        raise ValueError("give exactly one of delta or eps")
    key, value = ("delta", delta) if delta is not None else ("eps", eps)
    ins = dict(inputs, neighboring="replace-one", **{key: exact_str(parse_exact(value, key))})
    kind, algorithm = _QUERIES[key]
    return make_certificate(claim={"quantity": kind},
                            inputs=ins, result=_result(b, encloses(kind, ins)), precision_bits=256,
                            algorithm=algorithm)


def claim_certificate(inputs: dict[str, Any], b: dict[str, Any], verdict: str, reason: str, *,
                      claimed_eps: str, delta: str) -> dict[str, Any]:
    ins = dict(inputs, neighboring="replace-one", delta=exact_str(parse_exact(delta, "delta")),
               claimed_eps=exact_str(parse_exact(claimed_eps, "claimed_eps")))
    res = _result(b, encloses("replace.claim", ins))
    res.update({"verdict": verdict, "reason": reason})
    return make_certificate(
        claim={"quantity": "replace.claim", "relation": {"kind": "le", "bound": ins["claimed_eps"]}},
        inputs=ins, result=res, precision_bits=256,
        algorithm="the epsilon bracket of replace.epsilon, compared with the claimed epsilon")
