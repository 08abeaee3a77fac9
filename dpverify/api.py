"""The headline functions of the public API: DP-SGD accounting and calibration.

Positional arguments are the quantities of the question; every option is
keyword-only and typed, with the names of :mod:`dpverify.vocabulary`
(``digits``, ``time_budget``, ``neighboring``, ...). Numbers are taken exactly:
``"0.1"`` is 1/10, ``"1/3"`` one third, a float its exact binary value.

Errors: :class:`~dpverify.errors.InvalidParameter` names the parameter
(``exc.name == "sampling_rate"``) and states the allowed range;
:class:`~dpverify.errors.PrecisionExhausted` when the requested accuracy could
not be certified within the budget (the message states the width reached).

This module imports the accountants on first call, so that ``import dpverify``
does not load python-flint.
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING, Optional, Union

from .errors import InvalidParameter, shown
from .limits import DEFAULT_TIME_BUDGET_SECONDS

if TYPE_CHECKING:  # pragma: no cover - types only
    from .calibration import Calibration, Template
    from .calibration.sampled import SampledCalibration
    from .pld import PldAnswer
    from .progress import Progress

__all__ = ["ExactInput", "calibrate", "dpsgd_delta", "dpsgd_epsilon"]

#: an exact number: a decimal or fraction string, an int, a Fraction, or a float (its exact value)
ExactInput = Union[str, int, Fraction, float]

#: the PLD accountant's default accuracy: relative width 10^-4
_PLD_DIGITS = 4


def dpsgd_epsilon(
    noise_multiplier: ExactInput,
    sampling_rate: ExactInput,
    steps: int,
    delta: ExactInput,
    *,
    neighboring: str = "add-remove",
    digits: int = _PLD_DIGITS,
    time_budget: float = DEFAULT_TIME_BUDGET_SECONDS,
) -> PldAnswer:
    """Certified epsilon(delta) of DP-SGD: ``steps`` Poisson-subsampled Gaussian steps.

    The enclosure contains the exact epsilon of the composed dominating pair
    (AFA Thm 10/11): the smallest eps >= 0 with delta(eps) <= ``delta``.

    Args:
        noise_multiplier: the noise standard deviation over the sensitivity, > 0.
        sampling_rate: the Poisson sampling rate q, in (0, 1].
        steps: the number of steps T, an integer in 1..10^7.
        delta: the delta budget, in (0, 1).
        neighboring: ``"add-remove"`` (the maximum over both directions),
            ``"add"``, ``"remove"``, or ``"replace-one"`` (sampling rate 1 only).
        digits: requested relative width 10^-digits of the enclosure, 1..8.
        time_budget: seconds after which the refinement stops; a width within
            10x of the request is then returned with ``note`` set, a wider one
            raises PrecisionExhausted.

    Returns:
        A :class:`PldAnswer`: ``enclosure`` (an :class:`Enclosure` of epsilon) and how it
        was obtained (grid, mass unit, seconds).

    Raises:
        InvalidParameter: an argument out of range; ``name`` is the parameter.
        PrecisionExhausted: the requested width was not certified in the budget.
    """
    from . import _validate as V
    from .pld import dpsgd as _pld

    # an int, as the signature says: None would mean the pld module's own default, silently
    digits = V.integer("digits", digits, lo=1, hi=_pld.PLD_DIGITS_HI)
    return _pld.dpsgd_epsilon(noise_multiplier, sampling_rate, steps, delta, neighboring=neighboring,
                              digits=digits, time_budget=time_budget)


def dpsgd_delta(
    noise_multiplier: ExactInput,
    sampling_rate: ExactInput,
    steps: int,
    eps: ExactInput,
    *,
    neighboring: str = "add-remove",
    digits: int = _PLD_DIGITS,
    time_budget: float = DEFAULT_TIME_BUDGET_SECONDS,
) -> PldAnswer:
    """Certified delta(eps) of DP-SGD (the maximum over the relation's directions).

    Args:
        noise_multiplier: the noise standard deviation over the sensitivity, > 0.
        sampling_rate: the Poisson sampling rate q, in (0, 1].
        steps: the number of steps T, an integer in 1..10^7.
        eps: the epsilon at which delta is wanted, >= 0.
        neighboring: as in :func:`dpsgd_epsilon`.
        digits: requested relative width 10^-digits of the enclosure, 1..8.
        time_budget: as in :func:`dpsgd_epsilon`.

    Returns:
        A :class:`PldAnswer` whose ``enclosure`` contains delta(eps).

    Raises:
        InvalidParameter: an argument out of range; ``name`` is the parameter.
        PrecisionExhausted: the requested width was not certified in the budget.
    """
    from . import _validate as V
    from .pld import dpsgd as _pld

    # an int, as the signature says: None would mean the pld module's own default, silently
    digits = V.integer("digits", digits, lo=1, hi=_pld.PLD_DIGITS_HI)
    return _pld.dpsgd_delta(noise_multiplier, sampling_rate, steps, eps, neighboring=neighboring,
                            digits=digits, time_budget=time_budget)


def calibrate(
    target_eps: ExactInput,
    delta: ExactInput,
    *,
    noise_multiplier: Optional[ExactInput] = None,
    sampling_rate: Optional[ExactInput] = None,
    steps: Optional[int] = None,
    epochs: Optional[ExactInput] = None,
    batch_size: Optional[int] = None,
    dataset_size: Optional[int] = None,
    neighboring: Optional[str] = None,
    sampling: str = "poisson",
    digits: Optional[int] = None,
    rel_width: Optional[ExactInput] = None,
    time_budget: float = DEFAULT_TIME_BUDGET_SECONDS,
    template: Optional[Template] = None,
    progress: Optional[Progress] = None,
    for_certificate: bool = False,
) -> "Union[Calibration, SampledCalibration]":
    """Certified bracket for the one DP-SGD parameter left out meeting (target_eps, delta)-DP.

    The safe end provably gives epsilon(delta) <= target_eps, the other end
    provably does not, and the template's monotonicity proof
    (:mod:`dpverify.calibration.template`) makes every value beyond the safe end
    safe as well. Give all but one of noise_multiplier, the sampling rate
    (``sampling_rate``, or ``batch_size`` with ``dataset_size``) and the number of
    steps (``steps``, or ``epochs``); or give ``template`` for another family.

    >>> c = calibrate(3, "1e-5", sampling_rate="256/60000", steps=14063)  # doctest: +SKIP
    >>> c.safe.value   # a noise multiplier proved to give eps <= 3  # doctest: +SKIP

    Args:
        target_eps: the epsilon to meet, > 0.
        delta: the delta budget, in (0, 1).
        noise_multiplier: sigma over the sensitivity, > 0 (leave out to calibrate it).
        sampling_rate: the Poisson rate q in (0, 1] (leave out to calibrate it).
        steps: the number of steps, 1..10^7 (leave out to calibrate it).
        epochs: instead of steps: steps = ceil(epochs * dataset_size / batch_size).
        batch_size: the (expected) batch size B; q = B / dataset_size.
        dataset_size: the dataset size N.
        neighboring: ``"add-remove"`` (Poisson default), ``"add"``, ``"remove"``;
            ``"replace-one"`` (the only choice without replacement).
        sampling: ``"poisson"`` or ``"without-replacement"`` (fixed batches of
            ``batch_size`` out of ``dataset_size``; AFA Cor 32 pair); ``"shuffle"``,
            ``"shuffle-persistent"`` or ``"balls-in-bins"`` (give ``batch_size``,
            ``dataset_size`` and leave out ``noise_multiplier`` or ``epochs``; returns a
            :class:`~dpverify.calibration.sampled.SampledCalibration`).
        digits: relative width 10^-digits of the bracket, 1..6 (default 3).
        rel_width: instead of digits, the relative width itself, in [1e-6, 0.5].
        time_budget: seconds after which the search stops (PrecisionExhausted).
        template: a :class:`Template` with one free parameter, instead of the
            DP-SGD parameters above.
        progress: a :class:`dpverify.progress.Progress` display, or None.
        for_certificate: the bracket will be written as a certificate (``make_certificate``):
            Poisson ends that ``dpverify verify`` could only try on its finest grid are
            refused before the search (InvalidParameter naming ``digits``).

    Returns:
        A :class:`Calibration` (a ``SampledCalibration`` for shuffled and balls-in-bins
        batches): ``safe`` and ``unsafe`` ends, ``lo``, ``hi``, ``rel_width``.

    Raises:
        InvalidParameter: an argument out of range or a contradictory set of
            arguments; ``name`` is the parameter.
        Undecided: no value of the parameter's domain meets the target (the proof
            is in the message).
        PrecisionExhausted: the budget ended first.
    """
    from .calibration import SAMPLINGS, calibrate_template, dpsgd_template, wor_template
    from .calibration.sampled import SAMPLED, calibrate_sampled

    if digits is not None and rel_width is not None:
        raise InvalidParameter("digits", "give digits or rel_width, not both")
    # rel_width is read exactly where it is used (_validate.relative_width): no str() here, which
    # had turned a Decimal into an accepted text and 10**5000 into a ValueError
    width: ExactInput = f"1e-{3 if digits is None else _digits(digits)}" if rel_width is None else rel_width
    if sampling not in SAMPLINGS:
        raise InvalidParameter("sampling", f"sampling={shown(sampling)}; allowed: {', '.join(SAMPLINGS)}")
    if template is not None:
        given = {"noise_multiplier": noise_multiplier, "sampling_rate": sampling_rate, "steps": steps,
                 "epochs": epochs, "batch_size": batch_size, "dataset_size": dataset_size,
                 "neighboring": neighboring}
        extra = sorted(k for k, v in given.items() if v is not None)
        if extra:
            raise InvalidParameter(extra[0], f"{extra[0]}: the template fixes its own parameters; "
                                   "give either a template or the DP-SGD parameters")
    elif sampling in SAMPLED:
        # shuffled or balls-in-bins batches: the safe end from the certified upper bound, the
        # failing end from a concrete dataset pair (dpverify.calibration.sampled)
        return calibrate_sampled(target_eps, delta, sampling=sampling, noise_multiplier=noise_multiplier,
                                 epochs=epochs, batch_size=batch_size, dataset_size=dataset_size,
                                 neighboring=neighboring, steps=steps, sampling_rate=sampling_rate,
                                 rel_width=width, time_budget=time_budget)
    elif sampling == "without-replacement":
        if sampling_rate is not None:
            raise InvalidParameter("sampling_rate", "--sampling-rate is Poisson's rate; with --sampling "
                                   "without-replacement give --batch-size and --dataset-size")
        template = wor_template(noise_multiplier=noise_multiplier, steps=steps, epochs=epochs,
                                batch_size=batch_size, dataset_size=dataset_size,
                                neighboring="replace-one" if neighboring is None else neighboring)
    else:
        template = dpsgd_template(noise_multiplier=noise_multiplier, sampling_rate=sampling_rate,
                                  steps=steps, epochs=epochs, batch_size=batch_size,
                                  dataset_size=dataset_size, neighboring="add-remove" if neighboring is None else neighboring)
    return calibrate_template(template, target_eps, delta, rel_width=width,
                              time_budget=time_budget, progress=progress, for_certificate=for_certificate)


def _digits(digits: int) -> int:
    """The calibration accuracy 1..6 (a bracket narrower than 1e-6 asks the PLD
    accountant for more than it certifies within a budget)."""
    from .vocabulary import DIGITS_CALIBRATE

    if isinstance(digits, bool) or not isinstance(digits, int) or not 1 <= digits <= (DIGITS_CALIBRATE.hi or 6):
        raise InvalidParameter("digits", f"digits={shown(digits)} must be {DIGITS_CALIBRATE.range}")
    return digits
