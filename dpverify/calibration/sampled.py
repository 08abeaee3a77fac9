"""Certified calibration for DP-SGD whose batches are not Poisson samples:
shuffle-and-iterate (dynamic ``shuffle`` or ``shuffle-persistent``) and
balls-in-bins. One parameter is free: the noise multiplier or the (whole)
number of epochs; the dataset size and the batch size are given.

What is proved at an end x (target (eps, delta); the bounds are the ones
``audit dpsgd --sampling ...`` certifies, :mod:`dpverify.sampling`):

* ``safe``: the certified upper bound of the mechanism's delta(eps) is <= delta,
  so (eps, delta)-DP holds at x;
* ``unsafe``: the certified lower bound of delta(eps) of a concrete pair of
  datasets is > delta, so the mechanism is not (eps, delta)-DP at x (it fails
  for what was run);
* ``pair_limit`` (shuffling only): the no-amplification Gaussian itself has
  delta(eps) > delta at x, so the upper bound certifies nothing beyond x.

Beyond an end the same verdict holds because the quantity each end bounds is
monotone in the free parameter (the arguments, per scheme and parameter, are
:data:`SHUFFLE_MONOTONICITY` and :data:`BINS_MONOTONICITY`; every argument
is about the exact quantity, not about the computed bound, so the floats that
choose grids and cells never enter it). The mechanism's own epsilon lies
between the two bounds and its monotonicity is not assumed: every value
beyond the safe end is safe because the upper bound is monotone, every value
beyond the unsafe end fails because the lower bound is.

The batch size is refused as a free parameter: for shuffling the upper end
(no amplification) does not depend on it, so it would be safe for every B or
for none, and for both schemes no proof is at hand that the lower pair's
divergence is monotone in the number of batches T = N/B (for balls-in-bins B
must moreover divide N, so the domain is not an interval).

Search and cost (bounded before it starts):

* shuffling, noise multiplier: the safe end is the Gaussian's
  sigma = Delta sqrt(E) / mu*(eps, delta) rounded up to a short decimal and
  proved; the unsafe end a geometric bisection on the max-of-batch-sums bound
  (each step well under a second at MNIST size), at most
  :data:`MAX_SHUFFLE_STEPS` certified evaluations;
* shuffling, epochs: the safe end floor((mu* sigma / Delta)^2) proved, the
  unsafe end by doubling then integer bisection, same cap;
* balls-in-bins: each evaluation is one full certified enclosure of
  delta(eps) (both bounds at once; about 30 s for T = 240, 60 epochs); a
  float secant on the enclosure's midpoint proposes, ends are proved on
  either side of the enclosure's gap, at most :data:`MAX_BINS_EVALUATIONS`
  enclosures. The bracket cannot be narrower than the enclosure's own gap at
  its grid: the width reached is reported.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Optional

from .. import _validate as V
from ..ball import ball, brief_str, exact_str, working_precision
from ..errors import InvalidParameter, PrecisionExhausted, Undecided, shown
from ..limits import DEFAULT_TIME_BUDGET_SECONDS
from ..verdict import Outcome
from ..numtext import log_fraction
from .solve import BracketEnds
from .template import _mu_for
from ..certificate.prose import CALIBRATE_MONOTONICITY, CALIBRATE_PAIRS

__all__ = ["SampledCalibration", "SampledEnd", "calibrate_sampled", "SHUFFLE_MONOTONICITY",
           "BINS_MONOTONICITY", "SAMPLED", "MAX_SHUFFLE_STEPS", "MAX_BINS_EVALUATIONS"]

#: samplings calibrated here -> template name recorded in the certificate
SAMPLED = {"shuffle": "dpsgd-shuffle", "shuffle-persistent": "dpsgd-shuffle", "balls-in-bins": "dpsgd-bins"}
#: most certified evaluations of the shuffled lower bound per end
MAX_SHUFFLE_STEPS = 60
#: most full balls-in-bins enclosures per calibration
MAX_BINS_EVALUATIONS = 10

SHUFFLE_MONOTONICITY = CALIBRATE_MONOTONICITY["dpsgd-shuffle"]

BINS_MONOTONICITY = CALIBRATE_MONOTONICITY["dpsgd-bins"]

REFUSED = {
    "batch_size": "the batch size cannot be calibrated with shuffled or balls-in-bins batches: the shuffled "
    "upper end (no amplification) does not depend on it, and no proof is at hand that the lower pair's "
    "divergence is monotone in the number of batches T = N/B (balls-in-bins also needs B to divide N); "
    "give --batch-size and leave out --noise-multiplier or --epochs",
}

SHUFFLE_PAIRS = CALIBRATE_PAIRS["dpsgd-shuffle"]
BINS_PAIRS = CALIBRATE_PAIRS["dpsgd-bins"]


@dataclass(frozen=True)
class SampledEnd:
    """One proved end: the exact value, HOLDS (safe) or FAILS (unsafe, pair_limit), and
    the hints the second route needs to re-prove it (untrusted there)."""

    value: Fraction
    outcome: Outcome
    hints: dict = field(default_factory=dict)

    def to_json(self, integer: bool) -> dict[str, Any]:
        return {"value": int(self.value) if integer else exact_str(self.value), "verdict": self.outcome.value,
                **self.hints}


@dataclass(frozen=True)
class SampledCalibration(BracketEnds):
    """A certified bracket of the free parameter (module docstring). ``lo`` <= ``hi`` are the
    safe and unsafe values in increasing order; ``unsafe`` None: no failing value was proved
    within the domain searched."""

    template: str
    parameter: str
    integer: bool
    eps_increasing: bool
    fixed: dict
    monotonicity: str
    pairs: str
    target_eps: Fraction
    delta: Fraction
    safe: SampledEnd
    unsafe: Optional[SampledEnd]
    pair_limit: Optional[SampledEnd]
    requested_rel_width: float
    seconds: float
    evaluations: int

    @property
    def sampling(self) -> str:
        return self.fixed["sampling"]


# --------------------------------------------------------------------------- helpers


def _short(x: float, up: bool, w: float, lower: Fraction = Fraction(0)) -> Fraction:
    """A short decimal near x > 0 rounded up or down, about 2 digits finer than w."""
    digits = max(3, math.ceil(-math.log10(w)) + 2)
    unit = Fraction(10) ** (math.floor(math.log10(x)) - digits + 1)
    k = Fraction(x) / unit
    v = (math.ceil(k) if up else math.floor(k)) * unit
    return v if v > lower else lower + unit


def _between(a: Fraction, b: Fraction) -> Fraction:
    """The shortest decimal strictly between 0 < a < b near their geometric mean."""
    m = math.sqrt(float(a) * float(b))
    for digits in range(1, 40):
        unit = Fraction(10) ** (math.floor(math.log10(m)) - digits + 1)
        v = round(Fraction(m) / unit) * unit
        if a < v < b:
            return v
    return (a + b) / 2


def _fixed_inputs(sampling: str, rel: str, n: int, b: int, sigma: Optional[Fraction],
                  epochs: Optional[int]) -> dict[str, Any]:
    out: dict[str, Any] = {"sampling": sampling, "neighboring": rel, "dataset_size": n, "batch_size": b}
    if sigma is not None:
        out["noise_multiplier"] = exact_str(sigma)
    if epochs is not None:
        out["epochs"] = str(epochs)
    return out


# --------------------------------------------------------------------------- shuffling


def _shuffle(sampling: str, free: str, sigma: Optional[Fraction], n: int, b: int, epochs: Optional[int],
             rel_name: str, E: Fraction, D: Fraction, w: float, deadline: float) -> dict[str, Any]:
    from ..sampling import shuffle as SH

    # validate the fixed inputs once (the free one at a placeholder value)
    probe = SH.run(sigma or 1, n, b, epochs or 1, sampling, rel_name)
    Delta = SH.sensitivity(probe.relation)
    dl = ball(D)
    count = [0]

    def at(x: Fraction) -> "SH.ShuffleRun":
        if time.monotonic() > deadline:
            raise PrecisionExhausted("calibrate: the time budget was spent before the bracket was proved")
        count[0] += 1
        if free == "noise_multiplier":
            return SH.run(x, n, b, epochs, sampling, rel_name)
        return SH.run(sigma, n, b, int(x), sampling, rel_name)

    def gauss(x: Fraction) -> tuple[bool, bool]:
        with working_precision(256):
            lo, hi = SH.gaussian_delta(at(x), E)
            return bool(hi <= dl), bool(lo > dl)

    def fails(x: Fraction) -> Optional[dict]:
        r = at(x)
        with working_precision(256):
            lo, hints = SH.lower_delta(r, E)
            return {"shuffle_lower": hints.to_json()} if lo > dl else None

    mu_star = _mu_for(float(E), float(D))  # float: proposes where the Gaussian's root is
    if free == "noise_multiplier":
        assert epochs is not None
        xg = Delta * math.sqrt(epochs) / mu_star
        safe = pair = None
        off = w / 4
        for _ in range(40):
            if safe is None:
                x = _short(xg * (1 + off), True, w)
                if gauss(x)[0]:
                    safe = x
            if pair is None:
                x = _short(xg * (1 - off), False, w)
                if gauss(x)[1]:
                    pair = x
            if safe is not None and pair is not None:
                break
            off *= 2
        if safe is None or pair is None:
            raise PrecisionExhausted("calibrate: the Gaussian upper end was not decided near its root")
        # unsafe: the largest sigma (searched) where the concrete pair fails
        ok, hint = pair, fails(pair)
        bad = None
        if hint is None:
            bad, x = pair, pair
            for _ in range(40):
                x = _short(float(x) / 2, False, w)
                hint = fails(x)
                if hint is not None:
                    ok = x
                    break
                bad = x
            else:
                raise Undecided("calibrate: the concrete dataset pair fails at no noise multiplier searched")
        steps = 0
        while bad is not None and float(bad / ok) - 1 > w and steps < MAX_SHUFFLE_STEPS:
            x = _between(ok, bad)
            h = fails(x)
            if h is not None:
                ok, hint = x, h
            else:
                bad = x
            steps += 1
        return {"safe": SampledEnd(safe, Outcome.HOLDS), "pair_limit": SampledEnd(pair, Outcome.FAILS),
                "unsafe": SampledEnd(ok, Outcome.FAILS, hint), "count": count[0], "integer": False,
                "increasing": False}
    # epochs free (integers)
    from ..limits import MAX_SHUFFLE_EPOCHS

    assert sigma is not None
    eg = max(1, min(MAX_SHUFFLE_EPOCHS, math.floor((mu_star * float(sigma) / Delta) ** 2)))
    s_ok = gauss(Fraction(eg))[0]
    k = eg
    while s_ok and k < MAX_SHUFFLE_EPOCHS and gauss(Fraction(k + 1))[0]:
        k += 1
    while not s_ok and k > 1:
        k -= 1
        s_ok = gauss(Fraction(k))[0]
    if not s_ok:
        h = fails(Fraction(1))
        if h is not None:
            raise Undecided(f"calibrate: proved that no number of epochs meets ({brief_str(E)}, {brief_str(D)})-DP: "
                            "even one epoch fails for the concrete dataset pair (max of batch sums), and "
                            f"{SHUFFLE_MONOTONICITY['epochs']}")
        raise Undecided(f"calibrate: even one epoch is not proved to meet ({brief_str(E)}, {brief_str(D)})-DP by "
                        "the no-amplification bound, and its failure is not proved either")
    safe = Fraction(k)
    pair = None
    for j in range(k + 1, min(k + 4, MAX_SHUFFLE_EPOCHS) + 1):
        if gauss(Fraction(j))[1]:
            pair = Fraction(j)
            break
    # unsafe: the smallest E (searched) where the concrete pair fails; doubling, then bisection
    lo_nf, hi_f, hint = int(safe), None, None
    x = int(pair or safe + 1)
    while x <= MAX_SHUFFLE_EPOCHS:
        h = fails(Fraction(x))
        if h is not None:
            hi_f, hint = x, h
            break
        lo_nf = x
        if x == MAX_SHUFFLE_EPOCHS:
            break
        x = min(2 * x, MAX_SHUFFLE_EPOCHS)
    steps = 0
    while hi_f is not None and hi_f - lo_nf > 1 and (hi_f - lo_nf) / lo_nf > w and steps < MAX_SHUFFLE_STEPS:
        mid = (lo_nf + hi_f) // 2
        h = fails(Fraction(mid))
        if h is not None:
            hi_f, hint = mid, h
        else:
            lo_nf = mid
        steps += 1
    return {"safe": SampledEnd(safe, Outcome.HOLDS),
            "pair_limit": None if pair is None else SampledEnd(pair, Outcome.FAILS),
            "unsafe": None if hi_f is None else SampledEnd(Fraction(hi_f), Outcome.FAILS, hint),
            "count": count[0], "integer": True, "increasing": True}


# --------------------------------------------------------------------------- balls-in-bins


def _bins(free: str, sigma: Optional[Fraction], n: int, b: int, epochs: Optional[int], rel_name: str,
          E: Fraction, D: Fraction, w: float, deadline: float) -> dict[str, Any]:
    from ..sampling import bins as BB
    from ..limits import MAX_BINS_EPOCHS
    from .template import _clt_guess

    probe = BB.run(sigma or 1, n, b, epochs or 1, rel_name)
    T = probe.batches
    integer = free == "epochs"
    s = -1 if free == "noise_multiplier" else 1  # v = s log x: delta(target) increases with v
    lower, upper = (Fraction(1, 1000), Fraction(1000)) if not integer else (Fraction(1), Fraction(MAX_BINS_EPOCHS))
    count = [0]

    def enclose(x: Fraction) -> tuple[Fraction, Fraction, dict]:
        if count[0] >= MAX_BINS_EVALUATIONS:
            raise PrecisionExhausted(f"calibrate: {MAX_BINS_EVALUATIONS} balls-in-bins enclosures did not prove "
                                     "both ends (the work bound of this search)")
        if time.monotonic() > deadline:
            raise PrecisionExhausted("calibrate: the time budget was spent before the bracket was proved")
        count[0] += 1
        r = BB.run(x, n, b, epochs, rel_name) if not integer else BB.run(sigma, n, b, int(x), rel_name)
        out = BB.enclose_delta(r, E)
        if r.epochs > 1:
            hints = {"bins_epochs": {"grids": {d: g.to_json() for d, g in out["grids"].items()},
                                     "loss": out["loss"].to_json()}}
        else:
            hints = {"bins_grid": out["grid"].to_json()}
        # the decimals are rounded outward (lo down, hi up): comparing them with delta is sound
        return Fraction(out["lo"]), Fraction(out["hi"]), hints

    # float proposal: Poisson's CLT at q = B/N over E T steps (balls-in-bins is close to Poisson)
    q = b / n
    if free == "noise_multiplier":
        g = _clt_guess("noise_multiplier", {"q": q, "T": float(epochs) * T})(E, D)
        x0 = g if g and math.isfinite(g) else 1.0
    else:
        g = _clt_guess("steps", {"s": float(sigma), "q": q})(E, D)
        x0 = g / T if g and math.isfinite(g) else 1.0
    x0 = min(max(x0, float(lower)), float(upper))
    pts: list[tuple[float, float, float]] = []  # (v, log hi - log D, log lo - log D or -inf)
    safe: Optional[SampledEnd] = None
    unsafe: Optional[SampledEnd] = None

    def record(x: Fraction) -> None:
        nonlocal safe, unsafe
        lo, hi, hints = enclose(x)
        if hi <= D and (safe is None or s * (x - safe.value) > 0):
            safe = SampledEnd(x, Outcome.HOLDS, hints)
        if lo > D and (unsafe is None or s * (x - unsafe.value) < 0):
            unsafe = SampledEnd(x, Outcome.FAILS, hints)
        # logs of the exact rationals (log_fraction): float() of an enclosure end below 1e-308 is 0.0
        ld = log_fraction(D)
        if hi > 0:
            pts.append((s * log_fraction(x), log_fraction(hi) - ld, log_fraction(lo) - ld if lo > 0 else -math.inf))

    def roots() -> tuple[float, float]:
        """Float estimates (v_safe, v_unsafe) of where the upper and the lower enclosure cross
        delta: a secant on log hi, the same slope for log lo (a proposal only)."""
        slope = 10.0
        if len(pts) >= 2 and pts[-1][0] != pts[-2][0]:
            slope = (pts[-1][1] - pts[-2][1]) / (pts[-1][0] - pts[-2][0])
            slope = slope if slope > 0.1 else 10.0
        v, gh, _ = min(pts, key=lambda p: abs(p[1]))
        finite = [p for p in pts if p[2] > -math.inf]
        vs = v - gh / slope
        if finite:
            v2, _, gl = min(finite, key=lambda p: abs(p[2]))
            return vs, v2 - gl / slope
        return vs, vs + 1.0 / slope  # no lower bound above 0 yet: look one e-fold of delta further

    def snap(v: float, toward_safe: bool) -> Fraction:
        x = math.exp(s * min(max(v, s * math.log(float(lower)) if s > 0 else -math.log(float(upper))),
                             s * math.log(float(upper)) if s > 0 else -math.log(float(lower))))
        up = (s < 0) == toward_safe  # sigma: safe is up; epochs: safe is down
        k = Fraction(math.ceil(x) if up else math.floor(x)) if integer else _short(x, up, w)
        return min(max(k, lower), upper)

    record(snap(s * math.log(x0), True))
    if not pts:  # delta(target) is 0 at the guess: look toward the failing side
        record(snap(s * math.log(x0) + 1.0, False))
    if len(pts) == 1:  # a second point gives the slope
        record(snap(pts[0][0] + (0.05 if pts[0][1] < 0 else -0.05), pts[0][1] > 0))
    # per side the margin beyond the root estimate: shrunk by a proved try, grown by a failed one;
    # a side is done when its end lies within w of its estimate or a try at the smallest margin failed
    margin = {"safe": max(w / 2, 0.01), "unsafe": max(w / 2, 0.01)}
    done: set = set()
    while count[0] < MAX_BINS_EVALUATIONS:
        if not pts:
            raise Undecided("calibrate: the balls-in-bins enclosure of delta(target) is 0 everywhere searched")
        if safe is not None and unsafe is not None and float(abs(safe.value - unsafe.value) /
                                                             min(safe.value, unsafe.value)) <= w:
            break
        v_safe, v_unsafe = roots()
        gaps = {}
        if safe is not None:
            gaps["safe"] = v_safe - s * math.log(float(safe.value))
        if unsafe is not None:
            gaps["unsafe"] = s * math.log(float(unsafe.value)) - v_unsafe
        todo = [k for k in ("safe", "unsafe") if k not in gaps] or \
            [k for k in ("safe", "unsafe") if k not in done and gaps[k] > w]
        if not todo:
            break
        side = todo[0] if len(todo) == 1 or todo[0] not in gaps else max(todo, key=lambda k: gaps[k])
        target = v_safe - margin[side] if side == "safe" else v_unsafe + margin[side]
        x = snap(target, side == "safe")
        if safe is not None and unsafe is not None and not min(safe.value, unsafe.value) < x < max(
                safe.value, unsafe.value):
            done.add(side)
            continue
        before = (safe if side == "safe" else unsafe)
        record(x)
        after = (safe if side == "safe" else unsafe)
        if after is not before:
            margin[side] /= 3
        else:
            if before is not None and margin[side] <= max(w / 2, 0.01) / 3:
                done.add(side)  # the estimate is as close as this enclosure's grid resolves
            margin[side] *= 3
            if integer and safe is None and x == lower:
                lo1 = unsafe is not None and unsafe.value == lower
                raise Undecided(
                    f"calibrate: proved that no number of epochs meets ({brief_str(E)}, {brief_str(D)})-DP: one "
                    f"epoch already fails, and {BINS_MONOTONICITY['epochs']}" if lo1 else
                    "calibrate: one epoch is not proved to meet the target on the balls-in-bins grid")
            if integer and side == "unsafe" and x == upper:
                done.add("unsafe")  # no failing number of epochs up to the cap
    if safe is None:
        raise PrecisionExhausted(f"calibrate: {MAX_BINS_EVALUATIONS} balls-in-bins enclosures proved no safe "
                                 "value (the work bound of this search)")
    return {"safe": safe, "unsafe": unsafe, "pair_limit": None, "count": count[0], "integer": integer,
            "increasing": integer}


# --------------------------------------------------------------------------- entry point


def calibrate_sampled(
    target_eps: Any,
    delta: Any,
    *,
    sampling: str,
    noise_multiplier: Any = None,
    epochs: Any = None,
    batch_size: Any = None,
    dataset_size: Any = None,
    neighboring: Optional[str] = None,
    steps: Any = None,
    sampling_rate: Any = None,
    rel_width: Any = "1e-3",
    time_budget: float = DEFAULT_TIME_BUDGET_SECONDS,
) -> SampledCalibration:
    """Certified bracket of the noise multiplier or the epochs of shuffled or balls-in-bins
    DP-SGD (module docstring). Exactly one of ``noise_multiplier`` and ``epochs`` is left out;
    ``batch_size`` and ``dataset_size`` are required.

    Raises InvalidParameter (the argument named), Undecided (no value proved to meet the
    target, with the proof when there is one), PrecisionExhausted (budget or work bound)."""
    t0 = time.monotonic()
    if sampling not in SAMPLED:
        raise InvalidParameter("sampling", f"sampling={sampling!r}; allowed here: {', '.join(SAMPLED)}")
    if steps is not None or sampling_rate is not None:
        which = "steps" if steps is not None else "sampling_rate"
        raise InvalidParameter(which, f"--{which.replace('_', '-')} does not apply to --sampling {sampling}: "
                                      "every example is in one batch per epoch; give --dataset-size, --batch-size "
                                      "and whole --epochs (or leave --epochs out to calibrate it)")
    if batch_size is None:
        raise InvalidParameter("batch_size", REFUSED["batch_size"])
    if dataset_size is None:
        raise InvalidParameter("dataset_size", f"--sampling {sampling} needs --dataset-size N")
    missing = [k for k, v in (("noise_multiplier", noise_multiplier), ("epochs", epochs)) if v is None]
    if len(missing) != 1:
        raise InvalidParameter("noise_multiplier", f"calibrate --sampling {sampling}: give --batch-size and "
                               "--dataset-size and all but exactly one of --noise-multiplier, --epochs; the one "
                               f"left out is the free parameter (missing now: {', '.join(missing) or 'none'})")
    free = missing[0]
    E = V.positive("target_eps", target_eps)
    D = V.open_unit("delta", delta)
    w = V.relative_width(rel_width, "1e-6", "0.5")
    time_budget = V.seconds("time_budget", time_budget)
    if E > 50:
        raise InvalidParameter("target_eps", "target_eps > 50 is beyond these enclosures; give eps <= 50")
    sig = V.noise_multiplier("noise_multiplier", noise_multiplier) if noise_multiplier is not None else None
    ep = None
    if epochs is not None:
        try:
            ep = V.integer("epochs", epochs, lo=1, hi=10**5)
        except InvalidParameter:
            raise InvalidParameter("epochs", f"epochs={shown(epochs)}: --sampling {sampling} takes a whole number of "
                                             "epochs (every example once per epoch)") from None
    n = V.integer("dataset_size", dataset_size, lo=1, hi=10**12)
    b = V.integer("batch_size", batch_size, lo=1, hi=n)
    rel = neighboring or "add-remove"
    deadline = t0 + time_budget
    if sampling == "balls-in-bins":
        out = _bins(free, sig, n, b, ep, rel, E, D, w, deadline)
        mono, pairs = BINS_MONOTONICITY[free], BINS_PAIRS
    else:
        out = _shuffle(sampling, free, sig, n, b, ep, rel, E, D, w, deadline)
        mono, pairs = SHUFFLE_MONOTONICITY[free], SHUFFLE_PAIRS
    from ..relation import relation

    fixed = _fixed_inputs(sampling, relation(rel).value, n, b, sig, ep)
    return SampledCalibration(SAMPLED[sampling], free, out["integer"], out["increasing"], fixed, mono, pairs, E, D,
                              out["safe"], out["unsafe"], out["pair_limit"], w, time.monotonic() - t0, out["count"])
