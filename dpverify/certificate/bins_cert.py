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
from ..sampling.bins import source as bins_source
from .shuffle_cert import claim_inputs, decide, query  # decide: holds iff hi <= claimed, fails iff lo > claimed
from .writer import make_certificate

__all__ = ["bracket_certificate", "claim_certificate", "theorems", "decide"]

_ALGORITHM = ("cell masses of the log-normal Y (arb), rounded up / down to units 2^-128; T-fold exact integer "
              "powers (flint fmpz_poly) rounded the same way, cut at degree T c / h; hinge sums read off as exact "
              "integers")


def theorems(r: "S.BinsRun") -> list[str]:
    if r.epochs > 1:
        return [
            f"dominating pair of one balls-and-bins epoch (Chua et al., AISTATS 2025): P = (1/T) sum_t "
            f"N(e_t, sigma^2 I), Q = N(0, sigma^2 I), T = {r.batches}; add/remove and zeroing-out "
            "(replace-special); remove is (P, Q), add is (Q, P)",
            f"adaptive composition of dominating pairs (AFA Thm 10): E = {r.epochs} epochs, each re-allocating "
            "every record to a uniformly random batch independently of the earlier epochs, the same T, sigma "
            "and relation in every epoch, so (P^E, Q^E) dominates the run (per direction)",
            "delta = E[(1 - e^{eps - X})_+] over the sum X of E i.i.d. losses (AFA Lemma 37): upper end from a "
            "super-measure of a loss >= X (cells at upper edges, loss grid rounded up, unrepresented mass at "
            "+inf or the window's end), lower end from a sub-measure of a loss <= X; E-fold integer products "
            "rounded outward",
        ]
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
    out = {"quantity": name, "enclosure": {"lo": b["lo"], "hi": b["hi"]}, "neighboring": r.relation.value,
           "theorems": theorems(r)}
    if r.epochs > 1:
        out["bins_epochs"] = {"grids": {d: g.to_json() for d, g in b["grids"].items()}, "loss": b["loss"].to_json()}
    else:
        out["bins_grid"] = b["grid"].to_json()
    return out


def _span(r: "S.BinsRun") -> str:
    return "one epoch" if r.epochs == 1 else f"{r.epochs} independently re-allocated epochs"


def bracket_certificate(r: "S.BinsRun", b: dict[str, Any], *, delta: Any = None,
                          eps: Any = None) -> dict[str, Any]:
    inputs = r.inputs()
    quantity, name = query(inputs, "bins", delta, eps)
    return make_certificate(
        claim={"quantity": quantity,
               "statement": f"{name} of {_span(r)} of DP-SGD with balls-in-bins batches ({r.relation.value}) "
                            "lies in [lo, hi]",
               "source": bins_source(r)},
        inputs=inputs, result=_result(r, b, name), precision_bits=S._PREC, algorithm=_ALGORITHM)


def claim_certificate(r: "S.BinsRun", b: dict[str, Any], verdict: str, reason: str, *, claimed_eps: str,
                      delta: str) -> dict[str, Any]:
    inputs = claim_inputs(r.inputs(), claimed_eps, delta)
    res = _result(r, b, f"epsilon(delta={delta})")
    res.update({"verdict": verdict, "reason": reason})
    return make_certificate(
        claim={"quantity": "bins.claim",
               "statement": f"DP-SGD with balls-in-bins batches, {_span(r)}, is (claimed_eps, delta)-DP "
                            f"under {r.relation.value}: certified epsilon(delta) <= claimed_eps",
               "source": bins_source(r),
               "relation": {"kind": "le", "bound": inputs["claimed_eps"]}},
        inputs=inputs, result=res, precision_bits=S._PREC,
        algorithm="the epsilon enclosure of bins.epsilon, compared with the claimed epsilon")
