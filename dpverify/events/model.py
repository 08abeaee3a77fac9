"""The event model: frozen value objects mirroring dp_accounting's DpEvent tree
(``dp_event.py``), with exact (Fraction / int) parameters.

Each event documents the mechanism it stands for. Sensitivity convention
(stated in every certificate): a *noise multiplier* z is sigma / C where C is
the per-record bound (the norm bound of one record's contribution), which is
the sensitivity of a sum under add/remove (and replace-special). Under
replace-one a clipped sum moves by up to 2C, so the Gaussian pair is
N(0, 1) vs N(2/z, 1) (sensitivity 2C = the replace-one factor 2, applied by
dpverify, as dp_accounting's PLD accountant does; google/differential-privacy
#378). The same rule applies to Laplace (scale b = s/C), discrete Laplace and
discrete Gaussian (``sensitivity`` = the per-record bound, doubled under
replace-one).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Union

__all__ = [
    "BallsInBins",
    "Composed",
    "DiscreteGaussian",
    "DiscreteLaplace",
    "EpsilonDelta",
    "Event",
    "Gaussian",
    "Laplace",
    "MixtureOfGaussians",
    "NoOp",
    "NonPrivate",
    "PoissonSampled",
    "RandomizedResponse",
    "SampledWithoutReplacement",
    "SelfComposed",
    "ZCDp",
    "SENSITIVITY_CONVENTION",
]

from ..certificate.format import SENSITIVITY_CONVENTION  # noqa: E402  (one text, read by verify too)


@dataclass(frozen=True)
class Gaussian:
    """Gaussian mechanism, noise N(0, (z C)^2) added to a sum of records of
    norm <= C (dp_accounting GaussianDpEvent)."""

    noise_multiplier: Fraction


@dataclass(frozen=True)
class Laplace:
    """Laplace mechanism, noise Lap(0, b C) on a sum of records of L1 norm
    <= C, b = noise_multiplier (dp_accounting LaplaceDpEvent)."""

    noise_multiplier: Fraction


@dataclass(frozen=True)
class DiscreteLaplace:
    """Discrete Laplace noise, pmf tanh(a/2) e^{-a|x|}, a = noise_parameter,
    on an integer sum whose records have L1 norm <= sensitivity."""

    noise_parameter: Fraction
    sensitivity: int


@dataclass(frozen=True)
class DiscreteGaussian:
    """Discrete Gaussian noise N_Z(0, sigma^2) (pmf proportional to
    e^{-x^2/(2 sigma^2)} on the integers; Canonne, Kamath, Steinke 2020) on an
    integer sum whose records have norm <= sensitivity (JSON only;
    dp_accounting 0.6 has no such event)."""

    sigma: Fraction
    sensitivity: int


@dataclass(frozen=True)
class RandomizedResponse:
    """k-ary randomized response: keep the input bucket with probability
    1 - p, else output a uniform bucket (dp_accounting
    RandomizedResponseDpEvent)."""

    noise_parameter: Fraction
    num_buckets: int


@dataclass(frozen=True)
class EpsilonDelta:
    """Any mechanism that is (epsilon, delta)-DP under the chosen relation
    (JSON only; worst case by LT Thm 4.5)."""

    epsilon: Fraction
    delta: Fraction


@dataclass(frozen=True)
class MixtureOfGaussians:
    """Given D outputs N(0, s^2), given the neighbour D' outputs
    sum_i p_i N(c_i, s^2) (dp_accounting MixtureOfGaussiansDpEvent,
    Choquette-Choo et al. 2023, arXiv 2310.15526)."""

    standard_deviation: Fraction
    sensitivities: tuple
    sampling_probs: tuple


@dataclass(frozen=True)
class ZCDp:
    """A mechanism satisfying (xi, rho)-zCDP: RDP of order alpha at most
    xi + rho alpha for all alpha > 1 (dp_accounting ZCDpEvent)."""

    rho: Fraction
    xi: Fraction


@dataclass(frozen=True)
class NonPrivate:
    """A mechanism without any privacy guarantee (eps = inf)."""


@dataclass(frozen=True)
class NoOp:
    """Nothing happens (no privacy cost)."""


@dataclass(frozen=True)
class PoissonSampled:
    """Each record enters the batch independently with probability
    ``sampling_probability``; then ``event`` runs on the batch."""

    sampling_probability: Fraction
    event: "Event"


@dataclass(frozen=True)
class SampledWithoutReplacement:
    """A uniformly random subset of exactly ``sample_size`` records out of
    ``source_dataset_size`` (fixed batch size); then ``event`` runs on it.
    Under add/remove, ``source_dataset_size`` is the size n of the larger of
    the two neighbouring datasets (AFA Sec 3.3: the sampler takes n or n - 1
    records); using the actual dataset size is conservative (a smaller rate
    is dominated)."""

    source_dataset_size: int
    sample_size: int
    event: "Event"


@dataclass(frozen=True)
class BallsInBins:
    """DP-SGD with balls-in-bins batches: in each of ``epochs`` epochs every one of
    the ``dataset_size`` records is put, independently, in one of T = dataset_size /
    batch_size batches chosen uniformly at random (a new allocation per epoch), and
    ``event`` (a Gaussian) runs on each batch in turn. Its dominating pair (Chua et
    al., AISTATS 2025) is proved for one epoch as a whole, E epochs by AFA Thm 10
    (:mod:`dpverify.sampling.balls`, :mod:`dpverify.sampling.balls_epochs`), so the
    event is answered only as the whole tree of a document."""

    dataset_size: int
    batch_size: int
    epochs: int
    event: "Event"


@dataclass(frozen=True)
class SelfComposed:
    """``count`` adaptive repetitions of ``event``."""

    event: "Event"
    count: int


@dataclass(frozen=True)
class Composed:
    """Adaptive composition of ``events`` in order."""

    events: tuple


Event = Union[
    Gaussian, Laplace, DiscreteLaplace, DiscreteGaussian, RandomizedResponse, EpsilonDelta,
    MixtureOfGaussians, ZCDp, NonPrivate, NoOp, PoissonSampled, SampledWithoutReplacement,
    BallsInBins, SelfComposed, Composed,
]
