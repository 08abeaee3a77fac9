"""Event templates: an accounting event with one free parameter.

A :class:`Template` maps a value x of its free parameter to the list of
steps the PLD accountant composes (:mod:`dpverify.pld.dpsgd`), and says how
epsilon moves with x and why. Any template whose ``build`` returns steps the
accountant accepts (``GaussianSteps``, ``PairSteps`` or another step kind with
``step()`` and ``to_json()``) can be calibrated: a without-replacement
DP-SGD template plugs in by giving its own ``build``, ``monotonicity`` text
and float ``guess`` (none is needed: the solver then searches geometrically).

Monotonicity (what the solver may rely on; ``monotone=True`` only with a proof):

* noise multiplier: for s' > s the Gaussian pair at s' is the pair at s
  followed by adding independent N(0, s'^2 - s^2) noise, a post-processing of
  both distributions (a mixture of shifted Gaussians convolved with a Gaussian
  is the mixture at the larger variance); the hockey-stick divergence cannot
  grow under post-processing (data processing), in both directions, and the
  T-fold product of post-processed pairs is a post-processing of the product.
  So delta(eps) is nonincreasing in s for every eps, and eps(delta) too.
* steps: the T-fold product is the marginal of the (T+1)-fold one (drop the
  last coordinate, a post-processing), so delta(eps) is nondecreasing in T.
* Poisson sampling rate: for q' < q, P_q' = (q'/q) P_q + (1 - q'/q) Q. The
  hockey-stick divergence H_a is jointly convex and H_a(Q || Q) = (1 - a)_+ <=
  H_a(P_q || Q) for every a = e^eps >= 0, so H_a(P_q' || Q) <= H_a(P_q || Q)
  for all a >= 0, and likewise H_a(Q || P_q') <= H_a(Q || P_q) (convexity in
  the second argument): the pair at q dominates the (tight) pair at q' in the
  sense of AFA Def 7, for both directions, and by AFA Thm 10 the T-fold
  product at q dominates the T-fold composition at q'. So delta(eps) is
  nondecreasing in q. (Batch size B with q = B / N is the same statement.)
* epochs: the solver works on whole steps; with N and B known, T steps are
  T B / N epochs (T = ceil(epochs N / B) is nondecreasing in the epochs).

The add-remove value is the maximum over the two directions (AFA Sec 4.1) of
functions that are each monotone in the same sense, hence monotone.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable, Mapping, Optional

from .. import _validate as V
from ..ball import exact_str
from ..errors import InvalidParameter
from ..pld import dpsgd as S
from ..limits import MAX_DATASET_SIZE, MAX_NOISE_MULTIPLIER, MAX_STEPS
from ..vocabulary import SAMPLING_CALIBRATE
from ..certificate.prose import CALIBRATE_MONOTONICITY, CALIBRATE_PAIRS

__all__ = ["Template", "dpsgd_template", "wor_template", "PARAMETERS", "MONOTONICITY", "SAMPLINGS"]

#: free parameters of the DP-SGD template and their CLI options
PARAMETERS = ("noise_multiplier", "steps", "sampling_rate", "batch_size")

MONOTONICITY = CALIBRATE_MONOTONICITY["dpsgd"]


@dataclass(frozen=True)
class Template:
    """An event with one free parameter.

    ``build(x)`` gives the accountant's steps at the exact value x;
    ``eps_increasing`` says whether eps grows with x; ``monotone`` is True only
    when ``monotonicity`` states a proof (else the solver checks both ends and
    claims nothing in between); ``integer`` parameters take integer values in
    [``lower``, ``upper``] (``upper`` None: unbounded); real ones lie in
    (``lower``, ``upper``]. ``fixed`` holds the exact input strings of the
    other parameters (for certificates and statements); ``inputs(x)`` the
    schedule an ``audit`` of the value x would take.

    When ``build`` gives a dominating pair that is not known to be tight
    (fixed batches), ``mechanism_lower`` is a template whose certified
    *lower* bound is a lower bound on the mechanism's delta (a realised
    pair); its value y stands for this template's value
    y * ``mechanism_lower_scale``. The solver proves the mechanism's failure
    with it, and the end where ``build``'s pair exceeds the target is only
    the accountant's limit.
    """

    name: str
    parameter: str
    build: Callable[[Fraction], list]
    eps_increasing: bool
    monotone: bool
    monotonicity: str
    integer: bool
    lower: Fraction
    upper: Optional[Fraction]
    fixed: Mapping[str, Any] = field(default_factory=dict)
    neighboring: str = "add-remove"
    guess: Optional[Callable[[Fraction, Fraction], Optional[float]]] = None
    to_steps: Optional[Callable[[Fraction], Mapping[str, Any]]] = None
    mechanism_lower: Optional["Template"] = None
    mechanism_lower_scale: Fraction = Fraction(1)

    def inputs(self, x: Fraction) -> dict[str, Any]:
        """The full schedule at x (exact strings), as an audit would record it."""
        out = dict(self.fixed)
        out[self.parameter] = exact_str(x) if not self.integer else int(x)
        if self.to_steps is not None:
            out.update(self.to_steps(x))
        return out

    def check_value(self, x: Fraction) -> Fraction:
        if self.integer and x.denominator != 1:
            raise InvalidParameter(self.parameter, f"{self.parameter}={x} must be an integer")
        if x < self.lower or (not self.integer and x == self.lower) or (self.upper is not None and x > self.upper):
            hi = "inf" if self.upper is None else exact_str(self.upper)
            raise InvalidParameter(self.parameter, f"{self.parameter}={exact_str(x)} is outside "
                                   f"{'[' if self.integer else '('}{exact_str(self.lower)}, {hi}]")
        return x


# --------------------------------------------------------------------------- float model


def _delta_mu(eps: float, mu: float) -> float:
    """delta of mu-GDP at eps, in floats (GDPT eq. (2)); a proposal only."""
    ncdf = lambda x: 0.5 * math.erfc(-x / math.sqrt(2))  # noqa: E731
    return ncdf(-eps / mu + mu / 2) - math.exp(eps) * ncdf(-eps / mu - mu / 2)


def _mu_for(eps: float, delta: float) -> float:
    lo, hi = 1e-6, 1e3
    for _ in range(200):
        mid = math.sqrt(lo * hi)
        if _delta_mu(eps, mid) > delta:
            hi = mid
        else:
            lo = mid
    return lo


def _clt_guess(parameter: str, known: Mapping[str, float]) -> Callable[[Fraction, Fraction], Optional[float]]:
    """A float starting point from the Gaussian CLT of Poisson-subsampled
    Gaussian steps: mu = q sqrt(T (e^{1/s^2} - 1)) (Bu, Dong, Long, Su 2020).
    Only a proposal: every end of the bracket is then proved."""

    def guess(eps: Fraction, delta: Fraction) -> Optional[float]:
        try:
            mu = _mu_for(float(eps), float(delta))
            s, q, T = known.get("s"), known.get("q"), known.get("T")
            if parameter == "noise_multiplier":
                return 1 / math.sqrt(math.log1p(mu * mu / (q * q * T)))
            g = math.expm1(1 / (s * s))
            if parameter in ("steps", "epochs"):
                return (mu / q) ** 2 / g
            return mu / math.sqrt(T * g)
        except (ArithmeticError, TypeError, ValueError):
            return None

    return guess


# --------------------------------------------------------------------------- DP-SGD


def dpsgd_template(
    *,
    noise_multiplier: Any = None,
    sampling_rate: Any = None,
    steps: Any = None,
    epochs: Any = None,
    batch_size: Any = None,
    dataset_size: Any = None,
    neighboring: str = "add-remove",
) -> Template:
    """DP-SGD (Poisson sampling, Gaussian noise) with exactly one free
    parameter: the one of noise_multiplier / steps-or-epochs /
    sampling_rate-or-batch_size that is not given. Epochs and batch size use
    TF Privacy's convention (q = B / N, T = ceil(epochs N / B)) and need
    ``dataset_size``."""
    from ..relation import SCHEDULE_RELATIONS, relation

    rel = relation(neighboring, allowed=SCHEDULE_RELATIONS).value
    if rel == "replace-one":
        raise InvalidParameter("neighboring", "calibrate: neighboring='replace-one' is refused "
                               "(it is certified only at sampling rate 1); use add-remove, add or remove")
    if steps is not None and epochs is not None:
        raise InvalidParameter("epochs", "give --steps or --epochs, not both")
    if sampling_rate is not None and batch_size is not None:
        raise InvalidParameter("batch_size", "give --sampling-rate or --batch-size, not both")
    N = None
    if dataset_size is not None:
        N = V.integer("dataset_size", dataset_size, lo=1, hi=MAX_DATASET_SIZE)
    elif epochs is not None or batch_size is not None:
        raise InvalidParameter("dataset_size", "--dataset-size N is required with --epochs or --batch-size")
    roles = {"noise": noise_multiplier is not None, "length": steps is not None or epochs is not None,
             "rate": sampling_rate is not None or batch_size is not None}
    missing = [r for r, given in roles.items() if not given]
    if len(missing) != 1:
        raise InvalidParameter("noise_multiplier", "calibrate dpsgd: give all but exactly one of "
                               "noise multiplier, steps (or epochs), sampling rate (or batch size); "
                               f"the one left out is the free parameter (missing now: {', '.join(missing) or 'none'})")
    free_role = missing[0]
    if epochs is not None and batch_size is None:
        raise InvalidParameter("epochs", "--epochs needs --batch-size and --dataset-size "
                               "(steps = ceil(epochs N / B)); with the batch size free give --steps")
    if free_role == "length":
        free = "steps"  # with N and B known the answer is also shown in epochs (T B / N)
    elif free_role == "rate":
        free = "batch_size" if N is not None else "sampling_rate"
    else:
        free = "noise_multiplier"
    if N is not None and free != "batch_size" and batch_size is None:
        raise InvalidParameter("dataset_size", "--dataset-size applies only with --batch-size or "
                               "--epochs, or to calibrate the batch size")

    fixed: dict[str, Any] = {"neighboring": rel}
    s = q = None
    T: Optional[int] = None
    if noise_multiplier is not None:
        s = V.noise_multiplier("noise_multiplier", noise_multiplier)
        fixed["noise_multiplier"] = exact_str(s)
    if sampling_rate is not None:
        q = V.half_open_unit("sampling_rate", sampling_rate)
        fixed["sampling_rate"] = exact_str(q)
    if batch_size is not None:
        assert N is not None
        B = V.integer("batch_size", batch_size, lo=1, hi=N)
        q = Fraction(B, N)
        fixed.update({"batch_size": B, "dataset_size": N, "sampling_rate": exact_str(q)})
    if steps is not None:
        T = V.integer("steps", steps, lo=1, hi=MAX_STEPS)
        fixed["steps"] = T
    if epochs is not None:
        assert N is not None and q is not None
        ep = V.positive("epochs", epochs)
        _, T = S.tf_privacy_schedule(N, batch_size, ep)  # the one steps rule
        fixed.update({"epochs": exact_str(ep), "steps": T})
    if N is not None:
        fixed["dataset_size"] = N

    known = {"s": float(s) if s else None, "q": float(q) if q else None, "T": float(T) if T else None}
    common = dict(name="dpsgd", parameter=free, monotone=True, monotonicity=MONOTONICITY[free],
                  fixed=fixed, neighboring=rel, guess=_clt_guess(free, known))
    if free == "noise_multiplier":
        # the accountant's range (limits.MAX_NOISE_MULTIPLIER): a value past it is refused, so the
        # domain ends there, and a target no sigma up to it meets is proved so at the end
        return Template(build=lambda x: [S.GaussianSteps.of(x, q, T)], eps_increasing=False,
                        integer=False, lower=Fraction(0), upper=Fraction(MAX_NOISE_MULTIPLIER), **common)
    if free == "steps":
        return Template(build=lambda x: [S.GaussianSteps.of(s, q, int(x))], eps_increasing=True,
                        integer=True, lower=Fraction(1), upper=Fraction(MAX_STEPS), **common)
    if free == "sampling_rate":
        return Template(build=lambda x: [S.GaussianSteps.of(s, x, T)], eps_increasing=True,
                        integer=False, lower=Fraction(0), upper=Fraction(1), **common)
    assert N is not None
    return Template(build=lambda x: [S.GaussianSteps.of(s, Fraction(int(x), N), T)], eps_increasing=True,
                    integer=True, lower=Fraction(1), upper=Fraction(N),
                    to_steps=lambda x: {"sampling_rate": exact_str(Fraction(int(x), N))}, **common)


# --------------------------------------------------------------------------- DP-SGD, fixed batches

#: the one sampling vocabulary of ``calibrate``, declared in dpverify.vocabulary (events
#: JSON: "poisson_sampled", "sampled_without_replacement")
SAMPLINGS = SAMPLING_CALIBRATE.choices

WOR_PAIRS = CALIBRATE_PAIRS["dpsgd-wor"]

def _wor_monotonicity(free: str) -> str:
    return CALIBRATE_MONOTONICITY["dpsgd-wor"][free]


def wor_template(
    *,
    noise_multiplier: Any = None,
    steps: Any = None,
    epochs: Any = None,
    batch_size: Any = None,
    dataset_size: Any = None,
    neighboring: str = "replace-one",
) -> Template:
    """DP-SGD on fixed-size batches: every step draws an independent uniformly
    random subset of exactly B of the N examples (sampling without
    replacement, dp_accounting's ``SampledWithoutReplacement``; NOT one
    shuffle per epoch into disjoint batches), clips per example to norm C and
    adds N(0, sigma^2 C^2 I). Neighbouring: replace-one (same N; sensitivity
    2C). Exactly one of noise multiplier / steps-or-epochs / batch size is free.

    Two certified bounds enclose the mechanism's epsilon:

    * upper: the AFA Cor 32 pair per step (curve max(H_remove, H_add) of the
      Poisson-subsampled Gaussian pairs at rate g = B/N with shift 2/sigma,
      AFA Prop 30), composed by AFA Thm 10. It dominates the mechanism; it is
      tight for one step but not known to be for T steps, so its lower
      enclosure does NOT prove the mechanism fails: the value where it exceeds
      the target is recorded as the accountant's *limit* (nothing below it can
      be certified with this pair), not as an unsafe value.
    * lower (a realised pair, hence a proof of failure): a linear loss whose
      clipped gradient is -C e1 for every example but x, with +C e1 for x and
      -C e1 for its replacement x'. Under x' every step releases
      N(-BC e1, sigma^2 C^2 I); under x it adds 2C e1 exactly when x is in
      the batch (probability g). In units of sigma C / 2 that is
      ((1-g) N(0,1) + g N(2/sigma, 1), N(0,1)), the Poisson "remove" pair at
      noise sigma/2, and the swapped datasets give the "add" pair; gradients
      are constant, so the T steps are independent and delta_M(eps) >= the
      larger of the two T-fold products' curves = Poisson add-remove DP-SGD at
      (sigma/2, B/N, T). Add/remove neighbours change N and are refused here
      (no proved lower pair for fixed batches).

    ``mechanism_lower`` is the Poisson template of the lower bound, its free
    value scaled by ``mechanism_lower_scale`` (sigma: its noise is sigma/2).
    """
    from ..events.pairs import MaxCurvePair
    from ..pld.pairs import SubsampledGaussianPair
    from ..relation import SCHEDULE_RELATIONS, relation

    rel = relation(neighboring, allowed=SCHEDULE_RELATIONS).value
    if rel != "replace-one":
        raise InvalidParameter("neighboring", f"calibrate --sampling without-replacement: neighboring={rel!r} "
                               "is refused; allowed: replace-one (fixed batches of B out of the same N; "
                               "add/remove changes N and has no proved lower pair here)")
    if steps is not None and epochs is not None:
        raise InvalidParameter("epochs", "give --steps or --epochs, not both")
    if dataset_size is None:
        raise InvalidParameter("dataset_size", "--sampling without-replacement needs --dataset-size N")
    N = V.integer("dataset_size", dataset_size, lo=2, hi=MAX_DATASET_SIZE)
    roles = {"noise": noise_multiplier is not None, "length": steps is not None or epochs is not None,
             "batch": batch_size is not None}
    missing = [r for r, given in roles.items() if not given]
    if len(missing) != 1:
        raise InvalidParameter("noise_multiplier", "calibrate --sampling without-replacement: give all but "
                               "exactly one of noise multiplier, steps (or epochs), batch size; the one "
                               f"left out is the free parameter (missing now: {', '.join(missing) or 'none'})")
    if epochs is not None and batch_size is None:
        raise InvalidParameter("epochs", "--epochs needs --batch-size (steps = ceil(epochs N / B)); "
                               "with the batch size free give --steps")
    free = {"noise": "noise_multiplier", "length": "steps", "batch": "batch_size"}[missing[0]]
    fixed: dict[str, Any] = {"neighboring": rel, "sampling": "without-replacement", "dataset_size": N}
    s: Optional[Fraction] = None
    B: Optional[int] = None
    T: Optional[int] = None
    if noise_multiplier is not None:
        s = V.noise_multiplier("noise_multiplier", noise_multiplier)
        fixed["noise_multiplier"] = exact_str(s)
    if batch_size is not None:
        B = V.integer("batch_size", batch_size, lo=1, hi=N)
        fixed["batch_size"] = B
    if steps is not None:
        T = V.integer("steps", steps, lo=1, hi=MAX_STEPS)
        fixed["steps"] = T
    if epochs is not None:
        assert B is not None
        ep = V.positive("epochs", epochs)
        _, T = S.tf_privacy_schedule(N, B, ep)  # the one steps rule
        fixed.update({"epochs": exact_str(ep), "steps": T})

    def upper(sig: Fraction, b: int, t: int) -> list:
        g, half = Fraction(b, N), sig / 2
        if b == N:
            # the whole dataset every step: the base mechanism under replace-one, as an event tree reads it
            # (events.dispatch._wor). At g = 1 AFA Cor 32's two curves are the same Gaussian curve, and
            # MaxCurvePair could not order two equal balls at eps = 0 (exit 3 "tie at eps = 0", adv47 L1b)
            pair = lambda d: SubsampledGaussianPair(half, Fraction(1), "remove")  # noqa: E731
        else:
            pair = lambda d: MaxCurvePair(SubsampledGaussianPair(half, g, "remove"),  # noqa: E731
                                          SubsampledGaussianPair(half, g, "add"), tie_at_zero=True)
        return [S.PairSteps(pair, t, "wor-gaussian", {"mechanism": "wor-gaussian", "noise_multiplier": exact_str(sig),
                                                      "batch_size": b, "dataset_size": N})]

    # the lower bound is Poisson DP-SGD at (sigma/2, B/N, T), add-remove
    half = {"noise_multiplier": None if s is None else s / 2, "steps": T,
            "batch_size": B, "dataset_size": N}
    lower = dpsgd_template(**{k: v for k, v in half.items() if v is not None})
    # the CLT guess of the Poisson pair at sigma/2 and twice the shift: mu(sigma) for the upper
    # pair is larger; start from the lower template's guess (only a proposal)
    known = {"s": float(s) / 2 if s else None, "q": float(Fraction(B, N)) if B else None,
             "T": float(T) if T else None}
    base_guess = _clt_guess(free, known)
    guess = (lambda e, d: (lambda v: None if v is None else 2 * v)(base_guess(e, d))) \
        if free == "noise_multiplier" else base_guess
    common = dict(name="dpsgd-wor", parameter=free, monotone=True, monotonicity=_wor_monotonicity(free),
                  fixed=fixed, neighboring=rel, guess=guess, mechanism_lower=lower,
                  mechanism_lower_scale=Fraction(2) if free == "noise_multiplier" else Fraction(1))
    if free == "noise_multiplier":
        assert B is not None and T is not None
        return Template(build=lambda x: upper(x, B, T), eps_increasing=False, integer=False,
                        lower=Fraction(0), upper=Fraction(MAX_NOISE_MULTIPLIER), **common)
    if free == "steps":
        assert s is not None and B is not None
        return Template(build=lambda x: upper(s, B, int(x)), eps_increasing=True, integer=True,
                        lower=Fraction(1), upper=Fraction(MAX_STEPS), **common)
    assert s is not None and T is not None
    return Template(build=lambda x: upper(s, int(x), T), eps_increasing=True, integer=True,
                    lower=Fraction(1), upper=Fraction(N), **common)
