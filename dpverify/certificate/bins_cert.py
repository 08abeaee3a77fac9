"""Certificates of balls-in-bins DP-SGD enclosures, one epoch (``bins.epsilon``,
``bins.delta``, ``bins.claim``). Both ends come from the dominating pair of
Chua et al. (AISTATS 2025), enclosed on the recorded grid (a hint); the
theorems are named in ``result.theorems``. Re-checked by
:mod:`dpverify.recheck.bins`."""

from __future__ import annotations

from typing import Any

from ..sampling import balls as S
from .shuffle_cert import claim_inputs, decide, query  # decide: holds iff hi <= claimed, fails iff lo > claimed
from .writer import make_certificate

__all__ = ["bracket_certificate", "claim_certificate", "theorems", "decide"]

_ALGORITHM = ("cell masses of the log-normal Y (arb), rounded up / down to units 2^-128; T-fold exact integer "
              "powers (flint fmpz_poly) rounded the same way, cut at degree T c / h; hinge sums read off as exact "
              "integers")


def theorems(r: "S.BinsRun") -> list[str]:
    return [
        f"dominating pair of one balls-and-bins epoch (Chua et al., AISTATS 2025): P = (1/T) sum_t N(e_t, sigma^2 I), "
        f"Q = N(0, sigma^2 I), T = {r.batches}; add/remove and zeroing-out (replace-special); remove is (P, Q), "
        "add is (Q, P)",
        "under Q, dP/dQ = (1/T) sum_t Y_t, Y_t i.i.d. log-normal: delta_remove = E[L] - c + E[(c - L)_+] with "
        "E[L] = 1, delta_add = E[(1 - cL)_+]; Y rounded to the edges of its cell (couplings), masses and "
        "products rounded outward",
        "one epoch only (the E-fold composition, AFA Thm 10 over independently re-allocated epochs, is not "
        "used)",
    ]


def _result(r: "S.BinsRun", b: dict[str, Any], name: str) -> dict[str, Any]:
    return {"quantity": name, "enclosure": {"lo": b["lo"], "hi": b["hi"]}, "neighboring": r.relation.value,
            "theorems": theorems(r), "bins_grid": b["grid"].to_json()}


def bracket_certificate(r: "S.BinsRun", b: dict[str, Any], *, delta: Any = None,
                          eps: Any = None) -> dict[str, Any]:
    inputs = r.inputs()
    quantity, name = query(inputs, "bins", delta, eps)
    return make_certificate(
        claim={"quantity": quantity,
               "statement": f"{name} of one epoch of DP-SGD with balls-in-bins batches ({r.relation.value}) lies "
                            "in [lo, hi]",
               "source": S.SOURCE},
        inputs=inputs, result=_result(r, b, name), precision_bits=S._PREC, algorithm=_ALGORITHM)


def claim_certificate(r: "S.BinsRun", b: dict[str, Any], verdict: str, reason: str, *, claimed_eps: str,
                      delta: str) -> dict[str, Any]:
    inputs = claim_inputs(r.inputs(), claimed_eps, delta)
    res = _result(r, b, f"epsilon(delta={delta})")
    res.update({"verdict": verdict, "reason": reason})
    return make_certificate(
        claim={"quantity": "bins.claim",
               "statement": "one epoch of DP-SGD with balls-in-bins batches is (claimed_eps, delta)-DP under "
                            f"{r.relation.value}: certified epsilon(delta) <= claimed_eps",
               "source": S.SOURCE,
               "relation": {"kind": "le", "bound": inputs["claimed_eps"]}},
        inputs=inputs, result=res, precision_bits=S._PREC,
        algorithm="the epsilon enclosure of bins.epsilon, compared with the claimed epsilon")
