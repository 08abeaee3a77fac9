"""Certificates of balls-in-bins DP-SGD enclosures (``bins.epsilon``,
``bins.delta``, ``bins.claim``). Both ends come from the dominating pair of
Chua et al. (AISTATS 2025) of one epoch, enclosed on the recorded grid (a hint,
``result.bins_grid``); E >= 2 epochs, each re-allocated independently, by its
E-fold adaptive composition (AFA Thm 10) on the recorded grids
(``result.bins_epochs``). The theorems are named in ``result.theorems``.
Re-checked by :mod:`dpverify.recheck.bins`."""

from __future__ import annotations

from typing import Any

from ..sampling import balls as S
from .shuffle_cert import claim_inputs, decide, query  # decide: holds iff hi <= claimed, fails iff lo > claimed
from .prose import bins_theorems
from .writer import make_certificate

__all__ = ["bracket_certificate", "claim_certificate", "theorems", "decide"]

_ALGORITHM = ("cell masses of the log-normal Y (arb), rounded up / down to units 2^-128; T-fold exact integer "
              "powers (flint fmpz_poly) rounded the same way, cut at degree T c / h; hinge sums read off as exact "
              "integers")


def theorems(r: "S.BinsRun") -> list[str]:
    """``result.theorems``: the one list verify rebuilds from the inputs (:mod:`.prose`)."""
    return bins_theorems(r.batches, r.epochs)


def _result(r: "S.BinsRun", b: dict[str, Any], name: str) -> dict[str, Any]:
    out = {"quantity": name, "enclosure": {"lo": b["lo"], "hi": b["hi"]}, "neighboring": r.relation.value,
           "theorems": theorems(r)}
    if r.epochs > 1:
        out["bins_epochs"] = {"grids": {d: g.to_json() for d, g in b["grids"].items()}, "loss": b["loss"].to_json()}
    else:
        out["bins_grid"] = b["grid"].to_json()
    return out


def bracket_certificate(r: "S.BinsRun", b: dict[str, Any], *, delta: Any = None,
                          eps: Any = None) -> dict[str, Any]:
    inputs = r.inputs()
    quantity, name = query(inputs, "bins", delta, eps)
    return make_certificate(
        claim={"quantity": quantity},
        inputs=inputs, result=_result(r, b, name), precision_bits=S._PREC, algorithm=_ALGORITHM)


def claim_certificate(r: "S.BinsRun", b: dict[str, Any], verdict: str, reason: str, *, claimed_eps: str,
                      delta: str) -> dict[str, Any]:
    inputs = claim_inputs(r.inputs(), claimed_eps, delta)
    res = _result(r, b, f"epsilon(delta={delta})")
    res.update({"verdict": verdict, "reason": reason})
    return make_certificate(
        claim={"quantity": "bins.claim",
               "relation": {"kind": "le", "bound": inputs["claimed_eps"]}},
        inputs=inputs, result=res, precision_bits=S._PREC,
        algorithm="the epsilon enclosure of bins.epsilon, compared with the claimed epsilon")
