"""Certified privacy-loss-distribution accountant (DP-SGD and heterogeneous
compositions): dominating pairs (:mod:`.pairs`), certified discretisation
(:mod:`.discretise`), two composition kernels (exact integer products,
:mod:`.convolve`; the certified Fourier power, :mod:`.fourier`) chosen by
:mod:`.compose`, certified queries (:mod:`.queries`), float planning and the
static cost model (:mod:`.plan`), grid refinement (:mod:`.refine`), DP-SGD
front end (:mod:`.dpsgd`)."""

from .dpsgd import (
    GaussianSteps,
    PairSteps,
    PldAnswer,
    approx_dp_steps,
    check_claim,
    delta,
    dpsgd_delta,
    dpsgd_epsilon,
    epsilon,
    from_dp_event,
    laplace_steps,
    parse_events,
    tf_privacy_schedule,
)
from ..relation import Relation
from .pairs import SubsampledGaussianPair

__all__ = [
    "GaussianSteps",
    "Relation",
    "PairSteps",
    "PldAnswer",
    "SubsampledGaussianPair",
    "approx_dp_steps",
    "check_claim",
    "delta",
    "dpsgd_delta",
    "dpsgd_epsilon",
    "epsilon",
    "from_dp_event",
    "laplace_steps",
    "parse_events",
    "tf_privacy_schedule",
]
