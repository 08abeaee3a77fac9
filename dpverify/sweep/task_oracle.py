"""Sweep task ``oracle``: one accountant's epsilon on one DP-SGD configuration,
classified against the certified enclosure (dpverify.oracle).

The certified part is exactly the ``audit`` task's ``pld.epsilon``
certificate under add-remove (same cache key: an oracle sweep reuses audit
results and vice versa). The accountant runs on the worker after the
certificate is known (fresh or cached) and is never cached: its answer may
change with its version. Verdicts: consistent | unsafe (reported below the
certified lower bound: the claimed guarantee is false) | loose |
returned-inf | crashed.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Mapping, Optional

from .. import _validate as V
from flint import arb

from ..ball import ball, parse_exact, working_precision
from ..errors import InvalidParameter
from ..oracle import accountants as A
from ..oracle.rows import Config
from ..oracle.run import report_row
from ..verdict import Enclosure
from .task_audit import TASK as AUDIT
from .tasks import Plan

__all__ = ["TASK", "OracleTask", "MECHANISMS"]

#: mechanism names; "dpsgd" is an alias of the Poisson-subsampled Gaussian
MECHANISMS = {"subsampled-gaussian": "subsampled-gaussian", "dpsgd": "subsampled-gaussian", "gaussian": "gaussian"}
_REQUIRED = ("accountant", "mechanism", "noise_multiplier", "sampling_rate", "steps", "delta", "digits", "tolerance")


def _builtin_names() -> list[str]:
    names = []
    for n, r in A.RUNNERS.items():
        names += [f"{n}-{v}" for v in r.variants] if r.variants else [n]
    return names


def _audit_params(params: Mapping[str, Any]) -> dict[str, Any]:
    for k in _REQUIRED:
        if k not in params:
            raise InvalidParameter(k, f"{k} is required by the oracle task")
    mech = params["mechanism"]
    if mech not in MECHANISMS:
        raise InvalidParameter("mechanism", f"mechanism={mech!r} must be one of {', '.join(MECHANISMS)}")
    if MECHANISMS[mech] == "gaussian" and parse_exact(params["sampling_rate"], "sampling_rate") != 1:
        raise InvalidParameter("sampling_rate", "sampling_rate must be 1 for mechanism 'gaussian'")
    acc = params["accountant"]
    if not isinstance(acc, str) or (":" not in acc and acc not in _builtin_names()):
        raise InvalidParameter("accountant", f"accountant={acc!r} must be module:function or one of "
                               f"{', '.join(_builtin_names())}")
    if ":" in acc:
        A.load_plugin(acc)  # fail before anything runs when it cannot be imported
    V.nonnegative("tolerance", str(params["tolerance"]))
    keys = ("noise_multiplier", "sampling_rate", "steps", "delta", "digits", "time_budget")
    return {k: params[k] for k in keys if k in params}


def _enclosure(cert: Mapping[str, Any]) -> Enclosure:
    """The recorded enclosure as exact arb endpoints, rounded outward."""
    enc = cert["result"]["enclosure"]
    with working_precision(256):
        lo = ball(parse_exact(enc["lo"], "lo"))
        hi = ball(parse_exact(enc["hi"], "hi")) if enc["hi"] != "inf" else arb("inf")
        return Enclosure.from_bounds(lo, hi)


class OracleTask:
    name = "oracle"
    settings = ("time_budget",)

    def plan(self, params: Mapping[str, Any]) -> Plan:
        return AUDIT.plan(_audit_params(params))

    def compute(self, params: Mapping[str, Any], plan: Plan) -> dict:
        return AUDIT.compute(_audit_params(params), plan)

    @staticmethod
    def post(params: Mapping[str, Any], cert: Mapping[str, Any]) -> dict:
        """Run the accountant and classify its epsilon (on the worker; not cached)."""
        inputs = cert["inputs"]
        mech = MECHANISMS[params["mechanism"]]
        cfg = Config(mech, Fraction(parse_exact(inputs["noise_multiplier"])),
                     Fraction(parse_exact(inputs["sampling_rate"])), int(inputs["steps"]),
                     Fraction(parse_exact(inputs["delta"])))
        acc = params["accountant"]
        if ":" in acc:
            report = A.load_plugin(acc).run(cfg)
        else:
            base = next(n for n, r in A.RUNNERS.items() if acc == n or acc.startswith(n + "-") and
                        acc[len(n) + 1:] in r.variants)
            if not A.available(base):
                report = A.Report(acc, "not installed", {}, None, "", f"{A.RUNNERS[base].module} is not installed")
            else:
                report = next(r for r in A.run(base, cfg) if r.accountant == acc)
        tol = parse_exact(str(params["tolerance"]), "tolerance")
        row = report_row(report, cfg, _enclosure(cert), tol)
        return {k: v for k, v in row.items() if k not in ("configuration", "certified")}

    def summarize(self, params: Mapping[str, Any], cert: Mapping[str, Any],
                  extra: Optional[Mapping[str, Any]]) -> dict:
        enc = cert["result"]["enclosure"]
        out = {"quantity": "epsilon(delta)", "lo": enc["lo"], "hi": enc["hi"]}
        extra = dict(extra or {})
        out["verdict"] = extra.pop("verdict", "")
        if "error" in extra:
            extra["accountant_error"] = extra.pop("error")
        out.update(extra)
        return out


TASK = OracleTask()
