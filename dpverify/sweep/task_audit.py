"""Sweep task ``audit``: certified DP-SGD accounting per configuration.

The certificate is the one ``dpverify audit dpsgd --json`` writes for the
same options (same inputs, same order, same fields; a test compares them
byte for byte), so a sweep's certificates are re-checked by the ``pld.*``
re-checkers and can be compared with single runs. What is proved: the
enclosure of epsilon(delta) or delta(eps) of T Poisson-subsampled Gaussian
steps under the neighbouring relation (AFA Thm 10, 11), or the verdict on
(claimed_eps, delta)-DP. With ``sampling: balls-in-bins`` the configuration is the
balls-in-bins run of ``audit dpsgd --sampling balls-in-bins`` (the one-epoch pair of
Chua et al. 2025, E epochs composed by AFA Thm 10) and the certificate its bins.* one.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional

from .. import _validate as V
from ..certificate.build import PLD_SOURCE, pld_answer_certificate, pld_claim_certificate
from ..certificate.writer import level_check, typed_inputs
from ..errors import InvalidParameter, Undecided
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


_SAMPLINGS = ("poisson", "balls-in-bins")


def _sampling(params: Mapping[str, Any]) -> str:
    s = params.get("sampling", "poisson")
    if s not in _SAMPLINGS:
        raise InvalidParameter("sampling", f"sampling={s!r}; allowed: {', '.join(_SAMPLINGS)}")
    return s


def _bins_run(params: Mapping[str, Any]) -> Any:
    """The balls-in-bins run of a configuration (the same validation as audit dpsgd)."""
    from ..sampling import bins as BB

    for k in ("noise_multiplier", *_TF):
        if k not in params:
            raise InvalidParameter(k, f"{k} is required with sampling balls-in-bins")
    for k in ("sampling_rate", "steps"):
        if k in params:
            raise InvalidParameter(k, f"{k} does not apply to sampling balls-in-bins (give dataset_size, "
                                      "batch_size and epochs)")
    return BB.run(_text(params, "noise_multiplier"), _text(params, "dataset_size"), _text(params, "batch_size"),
                  _text(params, "epochs"), params.get("neighboring", "add-remove"))


def _bins_plan(params: Mapping[str, Any]) -> Plan:
    """The bins.* certificate's kind and inputs, as bins_cert records them."""
    from ..certificate.shuffle_cert import claim_inputs, query

    r = _bins_run(params)
    has = [k for k in ("delta", "eps") if k in params]
    if len(has) != 1:
        raise InvalidParameter("delta", "give exactly one of delta (certify epsilon) and eps (certify delta)")
    if "digits" in params:
        raise InvalidParameter("digits", "digits does not apply to sampling balls-in-bins (its enclosure is "
                                         "certified to 4 significant digits for E > 1 epochs, 6 for one)")
    if "time_budget" in params:
        raise InvalidParameter("time_budget", "time_budget does not apply to sampling balls-in-bins (its work is "
                                              "bounded by its grid caps before it starts)")
    inputs = r.inputs()
    if "claimed_eps" in params:
        if "delta" not in params:
            raise InvalidParameter("claimed_eps", "claimed_eps needs delta")
        V.nonnegative("claimed_eps", _text(params, "claimed_eps"))
        V.open_unit("delta", _text(params, "delta"))
        return Plan("bins.claim", claim_inputs(inputs, _text(params, "claimed_eps"), _text(params, "delta")))
    if "delta" in params:
        V.open_unit("delta", _text(params, "delta"))
        kind, _ = query(inputs, "bins", _text(params, "delta"), None)
    else:
        V.nonnegative("eps", _text(params, "eps"))
        kind, _ = query(inputs, "bins", None, _text(params, "eps"))
    return Plan(kind, inputs)


def _bins_compute(params: Mapping[str, Any], plan: Plan) -> dict:
    from ..certificate import bins_cert as C
    from ..sampling import bins as BB

    r = _bins_run(params)
    if plan.quantity == "bins.claim":
        b = BB.enclose_eps(r, _text(params, "delta"))
        verdict, why = C.decide(b, _text(params, "claimed_eps"))
        return C.claim_certificate(r, b, verdict, why, claimed_eps=_text(params, "claimed_eps"),
                                   delta=_text(params, "delta"))
    if plan.quantity == "bins.epsilon":
        return C.bracket_certificate(r, BB.enclose_eps(r, _text(params, "delta")), delta=_text(params, "delta"))
    return C.bracket_certificate(r, BB.enclose_delta(r, _text(params, "eps")), eps=_text(params, "eps"))


def _refused(why: str, shown: str) -> Exception:
    """A row refused before a grid level its certificate could not be re-proved on
    (:func:`dpverify.certificate.writer.level_check`): undecided, as the worker answers the writer's
    refusal after the run (:func:`.worker._run`), only sooner."""
    return Undecided(f"no certificate written: it needs {why}; refused before that grid was computed{shown}")


class AuditTask:
    name = "audit"
    settings = ("time_budget",)
    post = None

    def plan(self, params: Mapping[str, Any]) -> Plan:
        if _sampling(params) == "balls-in-bins":
            return _bins_plan(params)
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
        if plan.quantity.startswith("bins."):
            return _bins_compute(params, plan)
        ev, _ = _schedule(params)
        inputs = dict(plan.inputs)
        rel = _relation(inputs["neighboring"], allowed=SCHEDULE_RELATIONS)
        budget = V.seconds("time_budget", _text(params, "time_budget")) if "time_budget" in params else DEFAULT_TIME_BUDGET_SECONDS
        if plan.quantity == "pld.claim":
            # not priced: the writer re-proves a claim past the cap rather than refusing it (verify may
            # decide it on a coarser grid), so a price before its levels could refuse a row it writes
            verdict, ans = S.check_claim([ev], inputs["claimed_eps"], inputs["delta"], neighboring=rel,
                                         time_budget=budget)
            return pld_claim_certificate(inputs=inputs, verdict=verdict, answer=ans)
        digits = inputs["digits"]
        # every row's certificate is written: each grid level of an enclosure is priced first, as the
        # writer refuses it after the run (issue 22: work is bounded before it starts)
        check = level_check(plan.quantity, typed_inputs(inputs), digits, _refused)
        if plan.quantity == "pld.epsilon":
            ans = S.epsilon([ev], inputs["delta"], neighboring=rel, digits=digits, time_budget=budget,
                            check_grid=check)
        else:
            ans = S.delta([ev], inputs["eps"], neighboring=rel, digits=digits, time_budget=budget,
                          check_grid=check)
        return pld_answer_certificate(quantity=plan.quantity, inputs=inputs, answer=ans)

    def summarize(self, params: Mapping[str, Any], cert: Mapping[str, Any],
                  extra: Optional[Mapping[str, Any]]) -> dict:
        result = cert["result"]
        enc = result.get("enclosure") or {}
        names = {"pld.epsilon": "epsilon(delta)", "pld.delta": "delta(eps)", "pld.claim": "delta(claimed_eps)",
                 "bins.epsilon": "epsilon(delta), balls-in-bins", "bins.delta": "delta(eps), balls-in-bins",
                 "bins.claim": "epsilon(delta) vs claimed, balls-in-bins"}
        return {
            "quantity": names.get(cert["claim"]["quantity"], cert["claim"]["quantity"]),
            "lo": enc.get("lo", ""),
            "hi": enc.get("hi", ""),
            "verdict": result.get("verdict", "enclosed"),
        }


TASK = AuditTask()
