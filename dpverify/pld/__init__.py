"""Certified privacy-loss-distribution accountant (DP-SGD and heterogeneous
compositions): dominating pairs (:mod:`.pairs`), certified discretisation
(:mod:`.discretise`), exact integer convolution (:mod:`.convolve`), queries and
grid refinement (:mod:`.accountant`), DP-SGD front end (:mod:`.dpsgd`)."""

from .dpsgd import (
    GaussianSteps,
    PldAnswer,
    check_claim,
    delta,
    dpsgd_delta,
    dpsgd_epsilon,
    epsilon,
    from_dp_event,
    parse_events,
    tf_privacy_schedule,
)
from .pairs import Neighboring, SubsampledGaussianPair

__all__ = [
    "GaussianSteps",
    "Neighboring",
    "PldAnswer",
    "SubsampledGaussianPair",
    "check_claim",
    "delta",
    "dpsgd_delta",
    "dpsgd_epsilon",
    "epsilon",
    "from_dp_event",
    "parse_events",
    "tf_privacy_schedule",
]
