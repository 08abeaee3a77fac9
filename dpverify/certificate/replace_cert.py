"""Certificates of Poisson-sampled DP-SGD under replace-one (``replace.epsilon``,
``replace.claim``): the enclosure is a bracket of epsilon(delta), the upper end by
group privacy over the add/remove curves, the lower end by a zero-gradient
replacement (the remove direction); :mod:`dpverify.sampling.replace` states the
theorems, :mod:`dpverify.recheck.replace` re-proves both ends."""

from __future__ import annotations

from typing import Any

from ..ball import exact_str, parse_exact
from ..sampling import replace as R
from .writer import make_certificate

__all__ = ["bracket_certificate", "claim_certificate", "decide"]


def _result(b: dict[str, Any], delta: str) -> dict[str, Any]:
    return {"quantity": f"epsilon(delta={delta})", "enclosure": {"lo": b["lo"], "hi": b["hi"]},
            "neighboring": "replace-one", "theorems": list(R.THEOREMS), "lower": b["lower"], "upper": b["upper"]}


def bracket_certificate(inputs: dict[str, Any], b: dict[str, Any], delta: str) -> dict[str, Any]:
    ins = dict(inputs, neighboring="replace-one", delta=exact_str(parse_exact(delta, "delta")))
    return make_certificate(
        claim={"quantity": "replace.epsilon",
               "statement": "epsilon(delta) of Poisson-sampled DP-SGD under replace-one lies in [lo, hi]: lo is "
                            "attained by a zero-gradient replacement, hi = 2 eps* with (1 + e^eps*) "
                            "delta_add-remove(eps*) <= delta (group privacy); result.lower is the remove "
                            "direction's epsilon, result.upper delta_add-remove(eps*)",
               "source": R.SOURCE},
        inputs=ins, result=_result(b, delta), precision_bits=256,
        algorithm="PLD accountant (remove direction: epsilon; add/remove: delta at eps* = hi/2)")


def decide(b: dict[str, Any], claimed_eps: Any) -> tuple[str, str]:
    from fractions import Fraction

    c = parse_exact(claimed_eps, "claimed_eps")
    if Fraction(b["hi"]) <= c:
        return "holds", f"certified upper end {b['hi']} <= claimed {claimed_eps} (group privacy)"
    if Fraction(b["lo"]) > c:
        return "fails", f"certified lower end {b['lo']} > claimed {claimed_eps} (zero-gradient replacement)"
    return "undecided", f"claimed {claimed_eps} lies in the certified bracket [{b['lo']}, {b['hi']}]"


def claim_certificate(inputs: dict[str, Any], b: dict[str, Any], verdict: str, reason: str, *,
                      claimed_eps: str, delta: str) -> dict[str, Any]:
    ins = dict(inputs, neighboring="replace-one", delta=exact_str(parse_exact(delta, "delta")),
               claimed_eps=exact_str(parse_exact(claimed_eps, "claimed_eps")))
    res = _result(b, delta)
    res.update({"verdict": verdict, "reason": reason})
    return make_certificate(
        claim={"quantity": "replace.claim",
               "statement": "Poisson-sampled DP-SGD is (claimed_eps, delta)-DP under replace-one: certified "
                            "epsilon(delta) <= claimed_eps",
               "source": R.SOURCE, "relation": {"kind": "le", "bound": ins["claimed_eps"]}},
        inputs=ins, result=res, precision_bits=256,
        algorithm="the epsilon bracket of replace.epsilon, compared with the claimed epsilon")
