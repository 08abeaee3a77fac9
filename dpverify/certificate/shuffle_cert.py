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
from .writer import make_certificate

__all__ = ["bracket_certificate", "claim_certificate", "theorems"]


def _cdf(k: int) -> str:
    return "Phi(x)" if k == 0 else f"Phi(x-{'' if k == 1 else k}m)"


def theorems(r: "S.ShuffleRun") -> list[str]:
    a, b = S.pair_shifts(r.relation)
    x_other = ("-1" if r.relation is S.Relation.REPLACE_ONE else "0 (the special record)"
               if r.relation is S.Relation.REPLACE_SPECIAL else "absent (its slot empty, gradient 0)")
    released = "" if r.relation is S.Relation.REPLACE_ONE else "; the pair of their released ShuffleAccountant"
    scheme = ("persistent shuffling: the epoch sums Z_t = sum_e Y_(e,t)/sqrt(E) of one epoch with m sqrt(E)"
              if r.persistent else "dynamic shuffling: independent epochs, the binned statistic composed E times")
    return [
        f"upper end: Gaussian pair with mu = {S.sensitivity(r.relation)} sqrt(E)/sigma (no amplification: "
        "each record in exactly one batch per epoch; AFA Thm 10 per permutation, joint convexity over "
        "permutations; valid for dynamic and persistent shuffling)",
        f"lower end: concrete dataset pair (Chua et al. ICML 2024 Sec 4{released}): every other record's gradient -1, x* +1 in D and {x_other} in D'; max of each "
        "epoch's batch sums less their known values, over sigma, with m = 1/sigma: "
        f"P(M<=x) = {_cdf(a)}Phi(x)^(T-1), Q(M<=x) = {_cdf(b)}Phi(x)^(T-1), T = {r.batches}; {scheme}; "
        "binned and grouped (post-processing), P rounded down and Q up",
        S.relation_note(r.relation),
    ]


def _result(r: "S.ShuffleRun", b: dict[str, Any], name: str) -> dict[str, Any]:
    return {"quantity": name, "enclosure": {"lo": b["lo"], "hi": b["hi"]}, "neighboring": r.relation.value,
            "theorems": theorems(r), "shuffle_lower": b["hints"].to_json(),
            "mu": {"lo": "0", "hi": exact_str(b["mu"]) if b["mu"].denominator != 1 else str(b["mu"])}}


def query(inputs: dict[str, Any], prefix: str, delta: Any, eps: Any) -> tuple[str, str]:
    """Record the query (--delta or --eps) exactly in ``inputs``; the kind and the quantity's name."""
    if delta is not None:
        inputs["delta"] = exact_str(parse_exact(delta, "delta"))
        return f"{prefix}.epsilon", f"epsilon(delta={delta})"
    inputs["eps"] = exact_str(parse_exact(eps, "eps"))
    return f"{prefix}.delta", f"delta(eps={eps})"


def claim_inputs(inputs: dict[str, Any], claimed_eps: Any, delta: Any) -> dict[str, Any]:
    """``inputs`` with the claim (claimed_eps, delta) recorded exactly."""
    inputs.update({"claimed_eps": exact_str(parse_exact(claimed_eps, "claimed_eps")),
                   "delta": exact_str(parse_exact(delta, "delta"))})
    return inputs


def bracket_certificate(r: "S.ShuffleRun", b: dict[str, Any], *, delta: Any = None, eps: Any = None) -> dict[str, Any]:
    inputs = r.inputs()
    quantity, name = query(inputs, "shuffle", delta, eps)
    return make_certificate(
        claim={"quantity": quantity,
               "statement": f"{name} of DP-SGD with {r.sampling} batches ({r.relation.value}) lies in [lo, hi]: "
                            "lo is attained by a concrete dataset pair, hi bounds every pair",
               "source": S.SOURCE},
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
               "statement": f"DP-SGD with {r.sampling} batches is (claimed_eps, delta)-DP under "
                            f"{r.relation.value}: certified epsilon(delta) <= claimed_eps",
               "source": S.SOURCE,
               "relation": {"kind": "le", "bound": inputs["claimed_eps"]}},
        inputs=inputs, result=res, precision_bits=S._PREC,
        algorithm="the epsilon bracket of shuffle.epsilon, compared with the claimed epsilon")


def decide(b: dict[str, Any], claimed_eps: Any) -> tuple[str, str]:
    """holds iff the bracket's upper end <= claimed; fails iff its lower end > claimed."""
    from fractions import Fraction

    c = parse_exact(claimed_eps, "claimed_eps")
    lo, hi = Fraction(b["lo"]), Fraction(b["hi"])
    if hi <= c:
        return "holds", f"certified upper end {b['hi']} <= claimed {claimed_eps}"
    if lo > c:
        return "fails", (f"certified lower end {b['lo']} > claimed {claimed_eps}: a concrete dataset pair "
                         "violates the claim")
    return "undecided", f"claimed {claimed_eps} lies in the certified bracket [{b['lo']}, {b['hi']}]"
