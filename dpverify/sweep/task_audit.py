"""Sweep task ``audit``: certified DP-SGD accounting per configuration.

The certificate is the one ``dpverify audit dpsgd --json`` writes for the
same options (same inputs, same order, same fields; a test compares them
byte for byte), so a sweep's certificates are re-checked by the ``pld.*``
re-checkers and can be compared with single runs. What is proved: the
enclosure of epsilon(delta) or delta(eps) of T Poisson-subsampled Gaussian
steps under the neighbouring relation (AFA Thm 10, 11), or the verdict on
(claimed_eps, delta)-DP.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional

from .. import _validate as V
from ..ball import exact_str
from ..certificate import make_certificate
from ..certificate.build import PLD_SOURCE, pld_answer_certificate
from ..errors import InvalidParameter
from ..limits import DEFAULT_TIME_BUDGET_SECONDS
from ..pld import dpsgd as S
from ..relation import SCHEDULE_RELATIONS, relation as _relation
from .tasks import Plan

__all__ = ["TASK", "AuditTask"]

SOURCE = PLD_SOURCE
_TF = ("dataset_size", "batch_size", "epochs")


def _text(params: Mapping[str, Any], name: str) -> str:
    v = params[name]
    if isinstance(v, bool) or not isinstance(v, (str, int)):
        raise InvalidParameter(name, f"{name}={v!r} must be a number (string or integer)")
    return str(v)


def _schedule(params: Mapping[str, Any]) -> tuple[S.GaussianSteps, dict[str, Any]]:
    """The event and the schedule part of the certificate inputs (as `audit dpsgd` records them)."""
    if "noise_multiplier" not in params:
        raise InvalidParameter("noise_multiplier", "noise_multiplier is required (> 0)")
    sigma = _text(params, "noise_multiplier")
    tf = [k for k in _TF if k in params]
    if tf:
        if "sampling_rate" in params or "steps" in params:
            raise InvalidParameter("dataset_size", "give dataset_size/batch_size/epochs or "
                                   "sampling_rate/steps, not both")
        for k in _TF:
            if k not in params:
                raise InvalidParameter(k, f"{k} is required with the TF-Privacy style parameters")
        n, b, e = (_text(params, k) for k in _TF)
        return S.tf_privacy_inputs(sigma, n, b, e)
    for k in ("sampling_rate", "steps"):
        if k not in params:
            raise InvalidParameter(k, f"{k} is required (or dataset_size, batch_size and epochs)")
    ev = S.GaussianSteps.of(sigma, _text(params, "sampling_rate"), _text(params, "steps"))
    return ev, {"noise_multiplier": sigma, "sampling_rate": _text(params, "sampling_rate"), "steps": ev.count}


class AuditTask:
    name = "audit"
    settings = ("time_budget",)
    post = None

    def plan(self, params: Mapping[str, Any]) -> Plan:
        _, inputs = _schedule(params)
        rel = _relation(params.get("neighboring", "add-remove"), allowed=SCHEDULE_RELATIONS)
        inputs["neighboring"] = rel.value
        has = [k for k in ("delta", "eps") if k in params]
        if len(has) != 1:
            raise InvalidParameter("delta", "give exactly one of delta (certify epsilon) and eps (certify delta)")
        if "time_budget" in params:
            V.positive("time_budget", _text(params, "time_budget"))
        if "claimed_eps" in params:
            if "delta" not in params:
                raise InvalidParameter("claimed_eps", "claimed_eps needs delta")
            if "digits" in params:
                raise InvalidParameter("digits", "digits does not apply to a claimed_eps check")
            inputs["claimed_eps"] = _text(params, "claimed_eps")
            inputs["delta"] = _text(params, "delta")
            V.nonnegative("claimed_eps", inputs["claimed_eps"])
            V.open_unit("delta", inputs["delta"])
            return Plan("pld.claim", inputs)
        if "digits" not in params:
            raise InvalidParameter("digits", "digits is required (1..8: relative width 10^-digits)")
        digits = V.integer("digits", params["digits"], lo=1, hi=8)
        if "delta" in params:
            inputs["delta"] = _text(params, "delta")
            V.open_unit("delta", inputs["delta"])
            quantity = "pld.epsilon"
        else:
            inputs["eps"] = _text(params, "eps")
            V.nonnegative("eps", inputs["eps"])
            quantity = "pld.delta"
        inputs["digits"] = digits
        return Plan(quantity, inputs)

    def compute(self, params: Mapping[str, Any], plan: Plan) -> dict:
        ev, _ = _schedule(params)
        inputs = dict(plan.inputs)
        rel = _relation(inputs["neighboring"], allowed=SCHEDULE_RELATIONS)
        budget = V.seconds("time_budget", _text(params, "time_budget")) if "time_budget" in params else DEFAULT_TIME_BUDGET_SECONDS
        if plan.quantity == "pld.claim":
            verdict, ans = S.check_claim([ev], inputs["claimed_eps"], inputs["delta"], neighboring=rel,
                                         time_budget=budget)
            result: dict[str, Any] = {"verdict": verdict.outcome.value, "reason": verdict.reason}
            if ans is not None:
                result["enclosure"] = ans.enclosure.to_json()
                result.update(ans.details())
            return make_certificate(
                claim={"quantity": "pld.claim",
                       "statement": f"the composed mechanism is (claimed_eps, delta)-DP under {rel.value}: "
                                    "certified delta(claimed_eps) <= delta",
                       "source": SOURCE,
                       "relation": {"kind": "le", "bound": exact_str(V.open_unit("delta", inputs["delta"]))}},
                inputs=inputs,
                result=result,
                precision_bits=ans.unit_bits if ans is not None else 0,
                algorithm="PLD accountant, grid refined until the verdict is decided",
            )
        digits = inputs["digits"]
        if plan.quantity == "pld.epsilon":
            ans = S.epsilon([ev], inputs["delta"], neighboring=rel, digits=digits, time_budget=budget)
        else:
            ans = S.delta([ev], inputs["eps"], neighboring=rel, digits=digits, time_budget=budget)
        return pld_answer_certificate(quantity=plan.quantity, relation=rel.value, inputs=inputs, answer=ans)

    def summarize(self, params: Mapping[str, Any], cert: Mapping[str, Any],
                  extra: Optional[Mapping[str, Any]]) -> dict:
        result = cert["result"]
        enc = result.get("enclosure") or {}
        names = {"pld.epsilon": "epsilon(delta)", "pld.delta": "delta(eps)", "pld.claim": "delta(claimed_eps)"}
        return {
            "quantity": names.get(cert["claim"]["quantity"], cert["claim"]["quantity"]),
            "lo": enc.get("lo", ""),
            "hi": enc.get("hi", ""),
            "verdict": result.get("verdict", "enclosed"),
        }


TASK = AuditTask()
