"""Certificates of shuffle-and-iterate DP-SGD brackets (``shuffle.epsilon``,
``shuffle.delta``, ``shuffle.claim``). The enclosure is the bracket: its lower
end is a certified lower bound of the mechanism's epsilon (or delta), realised
by a concrete dataset pair, and its upper end a certified upper bound; the
theorem behind each end is named in ``result.theorems``. Re-checked by
:mod:`dpverify.recheck.shuffle`."""

from __future__ import annotations

from typing import Any

from ..ball import exact_str, parse_exact
from ..sampling import shuffle as S
from .comments import bracket_reason
from .prose import shuffle_theorems
from .build import encloses
from .writer import make_certificate

__all__ = ["bracket_certificate", "claim_certificate", "theorems"]


def theorems(r: "S.ShuffleRun") -> list[str]:
    """``result.theorems``: the one list verify rebuilds from the inputs (:mod:`.prose`)."""
    return shuffle_theorems(r.relation.value, r.persistent, r.batches)


def _result(r: "S.ShuffleRun", b: dict[str, Any], name: str) -> dict[str, Any]:
    return {"quantity": name, "enclosure": {"lo": b["lo"], "hi": b["hi"]}, "neighboring": r.relation.value,
            "theorems": theorems(r), "shuffle_lower": b["hints"].to_json(),
            "mu": {"lo": "0", "hi": exact_str(b["mu"]) if b["mu"].denominator != 1 else str(b["mu"])}}


def query(inputs: dict[str, Any], prefix: str, delta: Any, eps: Any) -> tuple[str, str]:
    """Record the query (--delta or --eps) exactly in ``inputs``; the kind and the quantity's name."""
    if delta is not None:
        inputs["delta"] = exact_str(parse_exact(delta, "delta"))
        kind = f"{prefix}.epsilon"
    else:
        inputs["eps"] = exact_str(parse_exact(eps, "eps"))
        kind = f"{prefix}.delta"
    # the kind's template filled from the recorded number, as every writer does: the text as typed
    # kept its spaces ("epsilon(delta= 1e-05)" next to inputs.delta "0.00001")
    return kind, encloses(kind, inputs)


def claim_inputs(inputs: dict[str, Any], claimed_eps: Any, delta: Any) -> dict[str, Any]:
    """``inputs`` with the claim (claimed_eps, delta) recorded exactly."""
    inputs.update({"claimed_eps": exact_str(parse_exact(claimed_eps, "claimed_eps")),
                   "delta": exact_str(parse_exact(delta, "delta"))})
    return inputs


def bracket_certificate(r: "S.ShuffleRun", b: dict[str, Any], *, delta: Any = None, eps: Any = None) -> dict[str, Any]:
    inputs = r.inputs()
    quantity, name = query(inputs, "shuffle", delta, eps)
    return make_certificate(
        claim={"quantity": quantity},
        inputs=inputs, result=_result(r, b, name), precision_bits=S._PREC,
        algorithm="lower: exact integer composition of the binned max statistic (flint fmpz_poly), "
                  "prefix scan of classes; upper: certified Gaussian eps/delta (arb)")


def claim_certificate(r: "S.ShuffleRun", b: dict[str, Any], verdict: str, reason: str, *, claimed_eps: str,
                      delta: str) -> dict[str, Any]:
    inputs = claim_inputs(r.inputs(), claimed_eps, delta)
    res = _result(r, b, f"epsilon(delta={delta})")
    res.update({"verdict": verdict, "reason": reason})
    return make_certificate(
        claim={"quantity": "shuffle.claim",
               "relation": {"kind": "le", "bound": inputs["claimed_eps"]}},
        inputs=inputs, result=res, precision_bits=S._PREC,
        algorithm="the epsilon bracket of shuffle.epsilon, compared with the claimed epsilon")


def decide(b: dict[str, Any], claimed_eps: Any) -> tuple[str, str]:
    """holds iff the bracket's upper end <= claimed; fails iff its lower end > claimed."""
    from fractions import Fraction

    c = parse_exact(claimed_eps, "claimed_eps")
    lo, hi = Fraction(b["lo"]), Fraction(b["hi"])
    outcome = "holds" if hi <= c else "fails" if lo > c else "undecided"
    return outcome, bracket_reason(outcome, b["lo"], b["hi"], claimed_eps, 0)
