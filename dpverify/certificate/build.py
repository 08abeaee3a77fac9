"""Turn results into certificates: one builder for quantities, one for claims."""

from __future__ import annotations

from typing import Any, Mapping

from ..ball import exact_str, parse_exact
from ..theorems.registry import Claim
from ..verdict import Enclosure, Verdict
from .prose import ENCLOSES, PLD_SOURCE, encloses_template
from .writer import make_certificate, typed_inputs

__all__ = ["quantity_certificate", "claim_certificate", "verdict_certificate", "pld_answer_certificate",
           "pld_claim_certificate", "pld_algorithm", "PLD_SOURCE", "ENCLOSES", "encloses"]


def encloses(quantity: str, inputs: Mapping[str, Any], result: "Mapping[str, Any] | None" = None) -> str:
    """The ``result.quantity`` text of a kind (the kind's name when it has no entry; gdp.certify's
    by ``result.status``), which verify re-derives (:func:`.prose.check_quantity`). Its numbers are
    spelled as ``inputs`` records them (:func:`.writer.typed_inputs`): a claim eps typed " 1" was
    quoted "delta(eps= 1)" next to ``inputs.claimed_eps`` "1"."""
    template = encloses_template(quantity, result or {})
    if template is None:
        raise ValueError(f"{quantity}: no result.quantity for result.status={(result or {}).get('status')!r}")
    try:
        return template.format(**{k: v for k, v in typed_inputs(inputs).items() if isinstance(v, (str, int))})
    except (KeyError, IndexError, ValueError):
        return template.split("(")[0].strip() or quantity


def quantity_certificate(
    *,
    quantity: str,
    source: "str | None" = None,
    inputs: Mapping[str, Any],
    enclosure: Enclosure,
    algorithm: str,
    extra_result: "Mapping[str, Any] | None" = None,
    statement: "str | None" = None,
) -> dict[str, Any]:
    result: dict[str, Any] = {"quantity": encloses(quantity, inputs), "enclosure": enclosure.to_json()}
    return _seal(quantity, source, inputs, result, extra_result, enclosure.precision_bits, algorithm, statement)


def verdict_certificate(
    *,
    quantity: str,
    source: "str | None" = None,
    inputs: Mapping[str, Any],
    verdict: Verdict,
    enclosure: "Enclosure | None",
    algorithm: str,
    extra_result: "Mapping[str, Any] | None" = None,
    statement: "str | None" = None,
) -> dict[str, Any]:
    """Certificate of a check: ``result.verdict`` plus the deciding enclosure."""
    result: dict[str, Any] = {"verdict": verdict.outcome.value, "reason": verdict.reason}
    if enclosure is not None:
        result["quantity"] = encloses(quantity, inputs)
        result["enclosure"] = enclosure.to_json()
    bits = enclosure.precision_bits if enclosure is not None else 0
    return _seal(quantity, source, inputs, result, extra_result, bits, algorithm, statement)


def _seal(quantity: str, source: "str | None", inputs: Mapping[str, Any], result: dict[str, Any],
          extra_result: "Mapping[str, Any] | None", precision_bits: int, algorithm: str,
          statement: "str | None") -> dict[str, Any]:
    """The claim block and the kind-specific extra result fields, sealed by the writer
    (one place, so a quantity and a verdict certificate of a kind cannot differ in it); the
    writer words the statement and the source from the kind's (:mod:`.prose`); a ``statement``
    or ``source`` given here must be that text (anything else is a writer's bug, exit 4)."""
    if extra_result:
        result.update(extra_result)
    return make_certificate(
        claim={"quantity": quantity, **({"statement": statement} if statement else {}),
               **({"source": source} if source else {})},
        inputs=inputs,
        result=result,
        precision_bits=precision_bits,
        algorithm=algorithm,
    )


def claim_certificate(claim: Claim, enclosure: Enclosure, verdict: Verdict) -> dict[str, Any]:
    """Certificate of one registry claim: the certified value and the verdict
    on the printed number."""
    body: dict[str, Any] = {
        "id": claim.id,
        "quantity": claim.quantity,
        "statement": claim.statement,
        "source": claim.source,
        "printed": claim.printed,
        "relation": dict(claim.relation),
    }
    if claim.domain:
        body["domain"] = claim.domain
    if claim.note:
        body["note"] = claim.note
    return make_certificate(
        claim=body,
        inputs=dict(claim.inputs),
        result={
            "quantity": encloses(claim.quantity, claim.inputs),
            "enclosure": enclosure.to_json(),
            "verdict": verdict.outcome.value,
            "reason": verdict.reason,
        },
        precision_bits=enclosure.precision_bits,
        algorithm=f"registry claim {claim.id}",
    )


#: the algorithm of an answer whose every step is a Gaussian at sampling rate 1 (pld.* and events.*)
CLOSED_GAUSSIAN_ALGORITHM = (
    "every step a Gaussian at sampling rate 1: the composition is one Gaussian pair with mu^2 the sum of "
    "the steps' mu_i^2 (AFA Thm 10, a rotation of N(0, I)), delta_mu(eps) in closed form (GDPT eq. 2), "
    "no grid")

#: the algorithm of an answer whose schedule is one Poisson-subsampled Gaussian step at 0 < q < 1
CLOSED_POISSON_ALGORITHM = (
    "one Poisson-subsampled Gaussian step: delta(eps) is the Gaussian curve delta_mu (GDPT eq. 2) at a "
    "transformed eps (remove q delta_mu(log1p(expm1(eps)/q)), add (1 - (1-q) e^eps) delta_mu(-log(1 + "
    "expm1(-eps)/q)), 0 from eps = -log(1-q) on; AFA Thm 11 (1)) in closed form, no grid")


def pld_algorithm(answer: Any, *, decided: bool = False) -> str:
    """The ``method.algorithm`` of a DP-SGD PLD answer (``pld.*``): the grid and mass unit it was
    computed on, the Renyi tail bound or the composed loss bound when no grid was needed, or the
    closed form of rate-1 Gaussian steps. ``decided``: a claim's, whose grid was refined until the
    verdict was decided (:func:`dpverify.pld.dpsgd.check_claim`)."""
    if answer.grid_exponent:
        return ("pessimistic connect-the-dots and optimistic quantised pairs on the grid "
                f"2^-{answer.grid_exponent}, exact fmpz_poly convolution in units of 2^-{answer.unit_bits}, "
                "square-and-multiply, certified suffix-sum queries"
                + (", the grid refined until the verdict is decided" if decided else ""))
    if getattr(answer, "tail", False):
        return ("a Renyi tail bound (the steps' Renyi cumulants summed, Mironov 2017 Prop 1; Balle et al. 2020 "
                "Thm 21), no grid: delta lies in [0, hi]")
    if getattr(answer, "closed", False) == "poisson":
        return CLOSED_POISSON_ALGORITHM
    if getattr(answer, "closed", False):
        return CLOSED_GAUSSIAN_ALGORITHM
    return ("the composed privacy-loss bound (the sum over the steps of each pair's proved loss bound): "
            "delta(eps) = 0 exactly at or past it (AFA Lemma 37), no grid")


def pld_answer_certificate(*, quantity: str, inputs: Mapping[str, Any], answer: Any) -> dict[str, Any]:
    """Certificate of a DP-SGD PLD enclosure (``pld.epsilon`` or ``pld.delta``): the one
    builder behind ``audit dpsgd`` and the sweep's audit task, so both write the same bytes."""
    return quantity_certificate(
        quantity=quantity,
        inputs=inputs,
        enclosure=answer.enclosure,
        algorithm=pld_algorithm(answer),
        extra_result=answer.details(),
    )


#: the algorithm of a DP-SGD claim left undecided before any answer (a static cap stopped the grid)
PLD_CLAIM_UNDECIDED_ALGORITHM = "PLD accountant, grid refined until a static cap stopped it, undecided"


def pld_claim_certificate(*, inputs: Mapping[str, Any], verdict: Verdict, answer: Any) -> dict[str, Any]:
    """Certificate of a DP-SGD ``(claimed_eps, delta)`` claim (``pld.claim``): the verdict, and,
    when an enclosure of delta(claimed_eps) decided it, the enclosure with ``result.quantity``
    beside it (``delta(eps=claimed_eps)``, the kind's text, :func:`encloses`; the schema requires
    the two together) and the algorithm that computed it (:func:`pld_algorithm`). The one builder
    behind ``audit dpsgd --claimed-eps`` and the sweep's audit task, so both write the same bytes
    (docs/guide/sweep.md); ``inputs`` carries ``claimed_eps`` and ``delta``, already validated."""
    result: dict[str, Any] = {"verdict": verdict.outcome.value, "reason": verdict.reason}
    if answer is not None:
        result["quantity"] = encloses("pld.claim", inputs)
        result["enclosure"] = answer.enclosure.to_json()
        result.update(answer.details())
    return make_certificate(
        claim={"quantity": "pld.claim",
               "relation": {"kind": "le", "bound": exact_str(parse_exact(inputs["delta"], "delta"))}},
        inputs=inputs,
        result=result,
        precision_bits=answer.unit_bits if answer is not None else 0,
        algorithm=pld_algorithm(answer, decided=True) if answer is not None else PLD_CLAIM_UNDECIDED_ALGORITHM,
    )
