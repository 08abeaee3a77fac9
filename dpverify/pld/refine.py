"""The refinement loop of the PLD accountant: grid levels until the certified
enclosure is narrow enough, within the memory and time budgets.

Grid choice: ONE level, the one the width model of :mod:`.plan` predicts
meets the requested width (:func:`.plan.planned_grid`: the enclosure is about
GAMMA T h^2 dX/dV wide, or as wide as the float law of the discretisation says
where the plan computes it); when the model misses, the measured h^2 law of that
level picks the next (:func:`_inc_for`). Every choice is a function of the
inputs only - the plan, static operation counts, the widths reached - never of
a clock, the load or the core count, so a completed answer is the same bytes
on every run. The time budget can only stop a run: the deadline is checked
between products and discretisation chunks inside a level, and a further
level whose time (the last level's, scaled) would overrun the budget is not
started; a run the clock stopped raises PrecisionExhausted with the best
enclosure reached (never a certificate, whose bytes would follow the load).
When the memory cap stops a run (a static count), an enclosure within
NARROW_FACTOR of the requested width is returned with a note, else
PrecisionExhausted states the width reached. Bounds from every level are valid, so each direction keeps the best
lower / upper bound seen so far; a direction whose upper bound is already
below the other's lower bound is not refined further (add-remove is the
pointwise maximum of add and remove, AFA Sec 4.1).

Before any grid: a direction whose composed privacy loss is bounded
(:func:`.dominating.composed_loss_bound`, B = sum of T_i times each step's bound)
has delta(eps) = 0 exactly for eps >= B (delta(eps) = E_P[(1 - e^{eps - L})_+]
and L <= B P-almost surely, AFA Lemma 37): such a direction is answered [0, 0]
without a grid, and a query whose every direction is answered so returns [0, 0]
at once. For eps(delta), B is an upper end of every direction's answer (delta(B)
= 0 <= delta); no grid reaches either (the top knot lies up to one cell per step
above the end).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable, Mapping, NamedTuple, Optional, Sequence

from ..ball import arb_to_fraction, ball, endpoints, exact_str, rational_decimal, upper_decimal, working_precision
from ..errors import PrecisionExhausted
from ..certificate.comments import claim_reason, narrow_note
from ..limits import DEFAULT_TIME_BUDGET_SECONDS, NARROW_FACTOR
from .compose import compose
from .convolve import mul_count
from .discretise import discretise, grid_range
from .dominating import composed_loss_bound
from .pairs import swapped_pairs
from .plan import FOURIER_SHARE, coarsest_grid, estimate_length, first_grid, model_grid, plan_query, planned_grid
from .queries import ComposedBounds
from .tail import TAIL_BITS, tail_answer

__all__ = ["PldResult", "Step", "compose_direction", "decided_against", "loss_bounds", "refine_query", "answer_note", "support_note",
           "tightened_width", "total_muls"]


@dataclass(frozen=True)
class Step:
    """One kind of step of a heterogeneous sequence: a dominating-pair factory
    per direction and a repetition count."""

    make_pair: Callable[[str], Any]
    count: int


def compose_direction(
    steps: Sequence[Step],
    direction: str,
    m: int,
    K: int,
    tau: float,
    budget: int,
    tick: Optional[Callable[[], None]] = None,
) -> ComposedBounds:
    """Discretise every step's pair for ``direction`` on the grid 2^-m and
    compose (pessimistic and optimistic), exact products only."""
    ups, lows = [], []
    for st in steps:
        pair = st.make_pair(direction)
        u, l = discretise(pair, m, K, tau)
        ups.append((u, st.count))
        lows.append((l, st.count))
        if tick:
            tick()
    with working_precision(K + 64):
        U = compose(ups, budget, tick)
        L = compose(lows, budget, tick)
    return ComposedBounds(U, L)  # type: ignore[arg-type]


def loss_bounds(steps: Sequence[Step], directions: Sequence[str]) -> dict:
    """Per direction, the composed privacy-loss bound B_d = sum_i T_i B_i of the steps'
    pairs (an exact dyadic rational, or math.inf where a step's loss is unbounded):
    delta_d(eps) = 0 for eps >= B_d (:mod:`.dominating`)."""
    return {d: composed_loss_bound((st.make_pair(d), st.count) for st in steps) for d in directions}


def _floors(steps: Sequence[Step], direction: str, end: Fraction, eps: Fraction) -> list:
    """Per step, the loss F_i = B_i - (B - eps) at or below which one step cannot take part in
    delta(eps) below the end B: with that step at L <= F_i and every other at most its bound B_j,
    the composed loss is <= F_i + B - B_i = eps, where (1 - e^(eps - L))_+ = 0. The grid of each
    step then starts near F_i (:func:`_discretise_all`: a raised first knot is sound, see there),
    so near the end only the top of each step's law is discretised."""
    return [composed_loss_bound([(st.make_pair(direction), 1)]) - (end - eps) for st in steps]


def total_muls(steps: Sequence[Step]) -> int:
    return sum(mul_count(s.count) for s in steps) + len(steps) - 1


@dataclass
class _Dir:
    name: str
    lo: Optional[Fraction] = None  # best certified lower bound so far
    hi: Optional[Fraction] = None  # best certified upper bound so far (None: +inf)
    active: bool = True
    length: int = 0
    floors: Optional[list] = None  # per step, the loss below which it cannot reach delta(eps) (_floors)


@dataclass(frozen=True)
class PldResult:
    """A certified enclosure [lo, hi] (``hi`` None means +inf) of epsilon(delta)
    or delta(eps), with the grid that produced it and per-direction bounds.
    ``note`` says when the requested width was narrowly missed within the
    budget (the enclosure is certified all the same)."""

    lo: Fraction
    hi: Optional[Fraction]
    m: int
    K: int
    seconds: float
    rel_width: Optional[float]
    directions: dict = field(default_factory=dict)
    levels: list = field(default_factory=list)
    note: Optional[str] = None
    #: per direction, the composed loss bound used (delta = 0 at or past it); only the
    #: finite ones. An answer with ``m == 0`` was decided by them alone, without a grid
    loss_bounds: dict = field(default_factory=dict)
    #: True for a delta answer [0, U] from the Renyi tail bound (:mod:`.tail`), also without a grid
    tail: bool = False


def decided_against(bound: Fraction) -> Callable[[Fraction, Optional[Fraction]], bool]:
    """The ``decide`` of :func:`refine_query` for a claim "value <= bound": the enclosure
    [lo, hi] settles it once hi <= bound or lo > bound (hi None: no finite upper end yet)."""

    def decided(lo: Fraction, hi: Optional[Fraction]) -> bool:
        return (hi is not None and hi <= bound) or lo > bound

    return decided


#: a claim's recorded delta enclosure lies this fraction of its width outside the computed one at each
#: end (:func:`claim_margin`): 2^-16 = 1.5e-5, about 50 times the unit and truncation error that the
#: second route allows itself for a claim (recheck/pld.py ``_delta_scale``: 10^-10 of min(recorded hi,
#: claimed delta) times min(1, 10^3 w), at most 10^-7 of the width w, docs/design/pld-speed.md)
CLAIM_END_MARGIN = Fraction(1, 2**16)


def claim_margin(enc: Any) -> Any:
    """``enc`` with each end moved outward by :data:`CLAIM_END_MARGIN` of its width, kept in [0, 1]
    where it was (delta(eps) is in [0, 1]): an enclosure of the same value, so sound. Exact binary
    arithmetic (arb; the ends are exact points): each new end is the outer end of its ball.

    Why: a claim is refined only until its verdict is decided, so one end may be far tighter than
    the width (100 steps of a discrete Laplace of parameter 0.3, delta(0.5): the lower end
    0.82921165825591082 lies 2.5e-18 below the exact 0.82921165825591082247 at a width of 1.9e-3),
    and the second route, whose unit a claim's delta sizes (10^-15 here), proves only
    0.82921165825591081 there: exit 3 on a genuine certificate (issue 22, rt50). The one rule: no
    recorded end of a claim is closer to its computed end than the width's 2^-16, which the route,
    priced at 10^-7 of the width, re-proves."""
    if enc.is_infinite or not enc.hi > enc.lo:
        return enc  # an exact point (width 0) or an unbounded end: nothing to move
    from ..verdict import Enclosure

    with working_precision(max(256, enc.precision_bits + 64)):  # any precision is sound: the outer ends
        w = (enc.hi - enc.lo) * ball(CLAIM_END_MARGIN)
        lo, hi = endpoints(enc.lo - w)[0], endpoints(enc.hi + w)[1]
        if enc.lo >= 0 and lo < 0:
            lo = ball(0)
        if enc.hi <= 1 and hi > 1:
            hi = ball(1)
        return Enclosure(lo, hi, enc.digits, enc.precision_bits)


def claim_verdict(enc: Any, outcome: Any, claimed_eps: Any, bound: Fraction) -> tuple[Any, Any]:
    """The verdict on "(claimed_eps, bound)-DP" decided on delta(claimed_eps): ``outcome`` as the exact
    ends of ``enc`` decide "delta <= bound", and ``enc`` widened by :func:`claim_margin` (the ends
    :func:`claim_margin` moves out where that still decides, else as computed) and printed with the
    digits that carry it (:func:`dpverify.verdict.printed_to_decide`: verify decides on the recorded
    decimals). (enclosure, Verdict) for HOLDS / FAILS, (enclosure, None) where undecided, whose reason the
    caller words. The one decision of ``audit dpsgd`` (pld.dpsgd.check_claim) and ``--events``
    (events.api.check_claim).

    The reason names ``claimed_eps`` and ``bound`` by :func:`dpverify.ball.exact_str`: the exact
    decimal of the number the user gave ("1.23", not the Fraction's "123/100"; a fraction only where
    no terminating decimal exists, "1/3"), which verify reads back exactly against inputs.claimed_eps
    and inputs.delta (certificate.comments._check_reason)."""
    from ..verdict import Outcome, Verdict, printed_to_decide

    wide, decided = printed_to_decide(claim_margin(enc), outcome, bound)
    enc, outcome = (wide, decided) if decided is outcome else printed_to_decide(enc, outcome, bound)
    eps_text, bound_text = exact_str(Fraction(claimed_eps)), exact_str(Fraction(bound))
    if outcome is Outcome.HOLDS:
        return enc, Verdict(Outcome.HOLDS, claim_reason("holds", eps_text, enc.hi_str(), bound_text), {"delta": enc})
    if outcome is Outcome.FAILS:
        return enc, Verdict(Outcome.FAILS, claim_reason("fails", eps_text, enc.lo_str(), bound_text), {"delta": enc})
    return enc, None


def answer_note(res: PldResult) -> Optional[str]:
    """The one sentence an answer carries, if any: a grid answer's narrow-miss note (``res.note``,
    :func:`.certificate.comments.narrow_note`), or the support of an answer without a grid
    (:func:`support_note`). The two never meet: a narrow miss needs a grid level."""
    return res.note or support_note(res)


def support_note(res: PldResult) -> Optional[str]:
    """The sentence an answer decided by the loss bounds alone (``res.m == 0``) carries
    instead of a grid, or None for a grid answer."""
    if res.m != 0:
        return None
    if res.tail:
        with working_precision(128):
            shown = upper_decimal(ball(res.hi), 4)
        return (f"delta(eps) <= {shown}, without a grid: a Renyi tail bound delta_d(eps) <= zeta_a "
                f"e^(K_d(a) - (a - 1) eps), K_d the sum of the steps' Renyi cumulants (Mironov 2017 Prop 1, 7; "
                f"Mironov, Talwar, Zhang 2019; Balle et al. 2020 Thm 21); a delta below 2^-{TAIL_BITS} is not "
                "resolved further, so the lower end is 0 and the relative width is unbounded")
    with working_precision(128):
        shown = ", ".join(f"{d} {upper_decimal(ball(b), 12)}" for d, b in sorted(res.loss_bounds.items()))
    return (f"delta(eps) = 0 exactly, without a grid: the composed privacy loss is at most the sum over "
            f"the steps of each pair's proved loss bound ({shown}), which eps reaches, and "
            "delta(eps) = E_P[(1 - e^(eps - L))_+] (AFA Lemma 37)")


def _rel(lo: Fraction, hi: Optional[Fraction]) -> Optional[float]:
    if hi is None:
        return None
    if hi == lo:
        return 0.0
    if lo <= 0:
        return None
    return float((hi - lo) / lo)


def _budget_fail(what: str, lo: Fraction, hi: Optional[Fraction], m: Optional[int], why: str,
                 timed: bool = False) -> PrecisionExhausted:
    rel = _rel(lo, hi)
    # printed for people: outward (a rounded-to-nearest end would not be a bound)
    shown = "inf" if hi is None else rational_decimal(hi, 10, upward=True)
    shown_lo = rational_decimal(lo, 10, upward=False)
    width = "unbounded" if rel is None else f"{rel:.3g}"
    grid = "no grid finished" if m is None else f"on the grid h = 2^-{m}"
    exc = PrecisionExhausted(
        f"{what}: {why}; best certified enclosure [{shown_lo}, {shown}] "
        f"(relative width {width}) {grid}"
    )
    # the ends themselves, for callers whose contract is a sound one-sided answer
    # (the adapters return the upper end); None: no finite upper end was certified
    exc.best_enclosure = (lo, hi)  # type: ignore[attr-defined]
    # True when the clock (not a static cap) stopped the run: what it reached follows the load
    exc.timed = timed  # type: ignore[attr-defined]
    return exc


class _Deadline(Exception):
    """Raised inside a grid level when the time budget is spent."""


class _Coarser(Exception):
    """The first grid's composed length would exceed the memory budget."""

    def __init__(self, m: int) -> None:
        self.m = m


#: a delta query whose plan puts log delta below this (about 1e-260), or that has no plan, first tries
#: the Renyi tail bound (:mod:`.tail`): it answers when the bound is below 2^-TAIL_BITS
_TAIL_LOG_DELTA = -600.0

#: the finest unit (bits) a delta query's first level takes from a plan no float law
#: confirmed: the unplanned unit's 160 bits and a margin
UNCHECKED_UNIT_BITS = 200


#: a first level (plan no float law confirmed) is replaced by one this many halvings coarser where
#: the grid the width model asks for, less :data:`PROBE_MARGIN` halvings, is priced past verify's caps
#: by the query's check_grid (:func:`refine_query`): a choice of grid only
PROBE_HALVINGS = 4
#: halvings the unconfirmed width model is given before its grid is believed past the cap: it
#: overestimated the grid by 2 (sigma 1.1, q 0.01, T = 10^4, eps(1e-300), digits 5: model 2^-14,
#: 2^-12 needed) to 5 (T = 100: 2^-14 against 2^-9)
PROBE_MARGIN = 2


#: After a level, the next one follows the model "relative width ~ c h^2"
#: (the connect-the-dots and bucket errors are second order in h per step;
#: measured ratios 3.9-4.1 per halving on A-D, MNIST, T = 1e5) with this
#: safety margin.
_MARGIN = 0.7


#: halvings per level while a ``decide`` query refines: 16x narrower each
#: level at 4x the cost, so the levels before the deciding one cost at most a
#: third of it
_DECIDE_STEP = 2


#: the margin of a delta query's step from a level already in the h^2 regime (relative width
#: at most _DELTA_H2_REL): there its width narrows 4.01-4.1x per halving (measured, one
#: direction, 2 to 4 halvings from widths 0.1 down to 1e-3 on A, B, D, MNIST, T = 1e4), so
#: 4^-k of the width meets the target; the eps query's narrows only 2.9-3.9x near 1e-4 (the
#: suffix lower end and the units take part) and keeps _MARGIN. At T = 1e6, delta(139.031):
#: 0.0548 at 2^-10, and _MARGIN asked for 2^-14 (0.000211) where 2^-13 gives 0.00085, at
#: twice the cost
_DELTA_MARGIN = 0.95
_DELTA_H2_REL = 0.1


def _inc_for(rel: Optional[float], rel_width: float, kind: str = "eps") -> int:
    """Grid halvings from a level of relative width ``rel`` to the target (a choice only:
    a level that misses costs one more)."""
    if rel is None:
        return 2
    if rel <= 0:
        return 1
    margin = _DELTA_MARGIN if kind == "delta" and rel <= _DELTA_H2_REL else _MARGIN
    return max(1, min(6, math.ceil(math.log(rel / (rel_width * margin)) / math.log(4))))


def _unit(scale: Optional[Fraction], rel_width: float, total_steps: int, nm: int,
          length_est: int) -> tuple[int, Fraction, int, Optional[int]]:
    """(K, tau, budget, allowance) for a level: the unit 2^-K. Rounding adds
    at most one unit per coefficient per product (<= nm * length units in
    all, 2^-8 small) and truncation moves at most budget * T units per end
    per product into the final result (convolve.power); both are kept ~1% of
    'small' = scale * rel_width."""
    margin = max(1, nm + 2).bit_length() + max(1, length_est).bit_length() + 8 \
        + total_steps.bit_length()
    if scale is None:
        return 160, Fraction(1, (1 << 100) * total_steps), 1 << 20, None
    small = scale * Fraction(1) / max(1, int(1 / rel_width))
    K = max(48, (1 / small).__ceil__().bit_length() + margin)
    tau = small / (1000 * total_steps)
    # per step (convolve.power): at most small / 100 reaches +inf in all
    budget = int(small * (1 << K) / (100 * total_steps * (2 * nm + 2)))
    # proven float error the Fourier route may add per polynomial
    # (fourier.py): 1/FOURIER_SHARE of the target width each
    allowance = int(small * (1 << K) / FOURIER_SHARE)
    return K, tau, budget, allowance


def refine_query(
    steps: Sequence[Step],
    directions: Sequence[str],
    *,
    kind: str,
    target: Fraction,
    rel_width: float = 1e-4,
    time_budget: float = DEFAULT_TIME_BUDGET_SECONDS,
    max_length: int = 1 << 23,
    m_start: Optional[int] = None,
    decide: Optional[Callable[[Fraction, Optional[Fraction]], bool]] = None,
    delta_scale: Optional[Fraction] = None,
    progress: Optional[Callable[[float, str], None]] = None,
    strict_width: bool = False,
    exact_zero: bool = True,
    afford_length: Optional[int] = None,
    max_work: Optional[int] = None,
    check_grid: Optional[Callable[[int, Optional[Fraction], Optional[Fraction]], Optional[int]]] = None,
) -> PldResult:
    """Certified enclosure of epsilon(target) (kind "eps") or delta(target)
    (kind "delta"), the maximum over ``directions``, with relative width
    <= ``rel_width`` (or ``decide(lo, hi)`` says it is enough).

    Grid choice (module docstring): one level from the plan's width model,
    further levels only if the model missed, memory-capped; nothing depends
    on time but the decision to stop (which is never an answer). When the
    memory cap leaves no further level: if the
    best enclosure's width is within NARROW_FACTOR of ``rel_width`` (and not
    ``strict_width``) it is returned with a ``note``; otherwise
    PrecisionExhausted states the best certified enclosure reached. Bounds
    from every level are valid, so each direction keeps its best lower /
    upper bound; a direction certified below the other's lower bound is not
    refined further (AFA Sec 4.1: add-remove is the maximum of the two).

    ``exact_zero``: decide delta = 0 past a bounded direction's composed loss bound, and
    cap eps(delta) by it (module docstring); False keeps every answer on the grids (the
    calibration, whose re-check re-derives its ends on grids only).

    ``afford_length``: the answer may be narrower than asked at a bounded cost. The target
    becomes the narrowest of ``rel_width`` / 10, / 100, / 1000 whose planned grid holds at
    most ``afford_length`` points (``plan.range_nats`` 2^m, a static count: the same inputs
    choose the same target on every machine); the refinement stops once ``rel_width`` is met
    and the next grid would hold more points than that (:func:`tightened_width`).

    ``max_work``: a static cap on one level's work, its planned points times (2K + 32) for the
    unit 2^-K (the cost model the time estimate below scales by); a level beyond it is not
    started and the run stops as at the memory cap (deterministic: no clock decides it). The
    first level is exempt: its points are the plan's estimate, which can be far above the grid
    the level then holds (sigma 1e6, delta 1e-1700: planned beyond the cap, 201 points held); it
    is bounded by ``max_length`` as every level is.

    ``check_grid(m, lo, hi)``: asked before every level on the grid 2^-m is computed, with the best
    certified enclosure so far (the first level: a range about the plan's estimate, where a float
    law confirmed it, else None, None); it raises to refuse the level (the CLI's price of the certificate the
    run would write, :func:`dpverify.cli._common.grid_check`: a refusal before the work, issue 22),
    or returns a coarser m' (still finer than the last level) to compute instead, else None.
    A static count, never the clock: the same inputs refuse on every machine. Where it also has
    ``past_cap(m)`` (:class:`dpverify.certificate.writer.LevelCheck`) and the plan is one no float law
    confirmed, a width-model grid (less :data:`PROBE_MARGIN`) priced past verify's caps makes the
    first level a probe :data:`PROBE_HALVINGS` coarser: a choice of grid, no refusal of its own."""
    t0 = time.monotonic()
    deadline = t0 + time_budget
    total_steps = sum(s.count for s in steps)
    nm = total_muls(steps)
    dirs = [_Dir(d) for d in directions]
    ends = {d: b for d, b in loss_bounds(steps, directions).items() if b != math.inf} if exact_zero else {}
    if kind == "delta":
        for d in dirs:
            if d.name in ends and target >= ends[d.name]:
                d.lo, d.hi, d.active = Fraction(0), Fraction(0), False
            elif d.name in ends:
                d.floors = _floors(steps, d.name, ends[d.name], target)
        if not any(d.active for d in dirs):
            return PldResult(Fraction(0), Fraction(0), 0, 0, time.monotonic() - t0, 0.0,
                             {d.name: (d.lo, d.hi) for d in dirs}, [], None, ends)
    plan = plan_query(steps, directions, kind, target) if m_start is None else None
    if kind == "delta" and exact_zero and m_start is None and (plan is None or plan.log_delta < _TAIL_LOG_DELTA):
        # a delta far below any unit (sigma 1e6: about e^-(10^11)): the grid's lower end would stay 0 on
        # every level until the budget ran out; a proved Renyi bound below 2^-TAIL_BITS answers [0, U]
        active = [d.name for d in dirs if d.active]
        U = tail_answer(steps, active, target)
        if U is not None:
            for d in dirs:
                if d.active:
                    d.lo, d.hi = Fraction(0), U
            return PldResult(Fraction(0), U, 0, 0, time.monotonic() - t0, None,
                             {d.name: (d.lo, d.hi) for d in dirs}, [], None, ends, tail=True)
    floor_scale = _product_scale(steps, dirs, ends, target) if kind == "delta" else None
    gauss = _gaussian_scale(steps, [d.name for d in dirs if d.active], target) \
        if kind == "delta" and delta_scale is None else None
    if floor_scale is None:
        floor_scale = gauss
    if floor_scale is None and kind == "delta" and (plan is None or not plan.checked):
        # no end and no closed form, and a plan no float law confirmed: the split event's bound
        # sizes the unit once the first level's lower end is 0 (not the upper end, level by level)
        floor_scale = _split_scale(steps, [d.name for d in dirs if d.active], target)
    if m_start is not None:
        m = m_start
    elif plan is not None:
        # with ``decide`` the width that settles the question is unknown (it
        # depends on how far the claim is from the truth): start at the grid
        # of a 1e-3 enclosure and refine from there (_DECIDE_STEP halvings)
        m = planned_grid(plan, kind, rel_width if decide is None else max(rel_width, 1e-3))
    else:
        m = first_grid(total_steps, rel_width)
    asked = rel_width
    if afford_length is not None and plan is not None and m_start is None and decide is None:
        rel_width = tightened_width(plan, kind, rel_width, afford_length)
        m = planned_grid(plan, kind, rel_width)
    levels: list = []
    what = "epsilon(delta)" if kind == "eps" else "delta(eps)"
    scale = target if kind == "eps" else delta_scale  # delta scale for K, tau, budget
    if scale is None and plan is not None:
        # the unit must resolve delta: a power of two 2^2 below the model's
        # estimate (measured within a factor 5 on the benchmark rows), none below
        # a float-law estimate (within 1%: the hedge only cost bits and a longer
        # Fourier window); a wrong estimate costs bits or a rescaled level, never
        # soundness (the rescale below still applies). Much smaller would also
        # push the Fourier power's allowance below its binary64 floor.
        bits = plan.delta_hedge + max(0, math.ceil(-plan.log_delta / math.log(2)))
        # an estimate no float law confirmed (Plan.checked) may be hundreds of decades low
        # (e^-1460 for a true 1.8e-13 at sigma 1.1, q 0.01, T 10, eps 2: a 2^-2150 unit, 21 s on
        # the first level instead of 0.4 s): no finer than the unit of an unplanned query; the
        # rescale after the first level then follows the certified ends
        scale = Fraction(1, 1 << (bits if plan.checked else min(bits, UNCHECKED_UNIT_BITS)))
    if gauss is not None and (plan is None or not plan.checked):
        # every step a Gaussian (q = 1): delta has a closed form (_gaussian_scale), so the unit
        # resolves it on the first level. Without it an unplanned tiny delta (sigma 1, eps 37:
        # 1.5e-293) was found by rescaling on the upper end, about 28 bits a level: 28 levels,
        # 66 CPU s, for the one level at 2^-1003 that answered it (2.6 s a direction)
        scale = gauss
    if plan is not None:
        # the first level's length from the plan, before it is discretised:
        # a level that would outgrow memory is coarsened up front
        while m > 4 and int(plan.range_nats * (1 << m)) > max_length // 2:
            m -= 1
    past_cap = getattr(check_grid, "past_cap", None)
    probe = False  # the first level is a probe (below)
    if past_cap is not None and plan is not None and not plan.checked and m_start is None and decide is None:
        # a plan no float law confirmed starts coarse (plan.planned_grid) and the h^2 law of the
        # levels picks the next grid, which check_grid prices before its work. Where the grid the
        # width model asks for, PROBE_MARGIN halvings coarser, is already priced past verify's caps,
        # that first level is the dearest work before the refusal (sigma 1.1, q 0.01, T = 10^4,
        # eps(1e-300), digits 5: 2^-10 took 40 CPU s and 2^-13 was then refused): a probe
        # PROBE_HALVINGS coarser (about 4^-PROBE_HALVINGS ... 2^-PROBE_HALVINGS of its cost) measures
        # the width first. A choice of the first grid only, from the plan and static prices (no
        # clock); what is refused is still refused by check_grid's price of the level that follows
        model = model_grid(plan, kind, rel_width)
        if model is not None and past_cap(model - PROBE_MARGIN):
            first = min(m, max(4, coarsest_grid(plan.steps), m - PROBE_HALVINGS))
            probe, m = first < m, first
    prev: Optional[dict] = None
    lo_all: Fraction = Fraction(0)
    hi_all: Optional[Fraction] = None

    def tick() -> None:
        if time.monotonic() > deadline:
            raise _Deadline

    def finish(note: Optional[str] = None) -> PldResult:
        return PldResult(lo_all, hi_all, prev["m"] if prev else m, prev["K"] if prev else 0,
                         time.monotonic() - t0, _rel(lo_all, hi_all),
                         {d.name: (d.lo, d.hi) for d in dirs}, levels, note, ends)

    def merge(results: list) -> tuple[Fraction, Optional[Fraction]]:
        """Each direction keeps its best certified ends; the maximum's enclosure."""
        for d, lo, hi in results:
            if kind == "eps" and d.name in ends and (hi is None or hi > ends[d.name]):
                hi = ends[d.name]  # delta(B) = 0 <= delta: eps(delta) <= B
            if lo is not None and (d.lo is None or lo > d.lo):
                d.lo = lo
            if hi is not None and (d.hi is None or hi < d.hi):
                d.hi = hi
        lo = max((d.lo for d in dirs if d.lo is not None), default=Fraction(0))
        his = [d.hi for d in dirs]
        return lo, None if any(h is None for h in his) else max(his)  # type: ignore[type-var]

    def stop(why: str, timed: bool = False) -> PldResult:
        rel = _rel(lo_all, hi_all)
        # a clock may end a run but never shape a completed answer: an enclosure
        # the time budget cut short would differ with the load (issue 22, item 5)
        if not timed and rel is not None and asked > rel_width and rel <= asked:
            return finish()  # the width asked was met; only the cheap tightening stopped short
        if (not timed and prev is not None and rel is not None and rel <= NARROW_FACTOR * rel_width
                and not strict_width and decide is None):
            return finish(narrow_note(rel_width, why, rel))
        raise _budget_fail(what, lo_all, hi_all, prev["m"] if prev else None, why, timed)

    while True:
        length_est = prev["length"] << (m - prev["m"]) if prev else (
            int(plan.range_nats * (1 << m)) + 1 if plan is not None else 1 << 20)
        K, tau, budget, allowance = _unit(scale, rel_width, total_steps, nm, length_est)
        if check_grid is not None:
            if prev is not None:
                instead = check_grid(m, lo_all, hi_all)
                if instead is not None and prev["m"] < instead < m:
                    m = instead
                    continue  # priced again, with its own length and unit
            elif plan is not None and plan.checked:
                # a range about the float estimate (within about 1 %, up to 5x for a central-limit
                # delta), so that a price read off it is not above the final one
                est = Fraction(plan.eps) if kind == "eps" else Fraction(math.exp(plan.log_delta))
                check_grid(m, est * Fraction(19, 20), est * 8)
            else:
                check_grid(m, None, None)
        if max_work is not None and prev is not None and length_est * (2 * K + 32) > max_work:
            return stop(f"the next grid (2^-{m}) would exceed the work cap of {max_work:,} "
                        "(points x (2K + 32) for the unit 2^-K)")
        t_level = time.monotonic()
        active = [d for d in dirs if d.active]
        if prev is not None:
            # a stop, never a choice: the level is not started if its time
            # (the last level's, scaled by length and unit) overruns the budget
            est = prev["seconds"] * (1 << (m - prev["m"])) * (2 * K + 32) / (2 * prev["K"] + 32) \
                * len(active) / max(1, prev["dirs"])
            if t_level + est > deadline:
                return stop(f"the next grid (2^-{m}) would exceed the time budget of "
                            f"{time_budget:g} s (estimated {est:.3g} s more)", timed=True)
        results: list = []
        try:
            tick()
            order = active
            settle = prev is None and plan is not None and bool(plan.per_direction) and m_start is None
            key: dict = {}
            if settle:
                # the plan's largest answer first: the others are only needed
                # below its certified lower end (the maximum, AFA Sec 4.1)
                key = {name: x for name, x, _ in plan.per_direction}
                order = sorted(active, key=lambda d: -key.get(d.name, math.inf))
            kept: dict = {}  # the first direction's composed upper curve (ComposedBounds)
            for di, d in enumerate(order):
                if progress:
                    progress(di / max(1, len(order)), f"grid 2^-{m}, {d.name}")
                lo_top = max((r[1] for r in results if r[1] is not None), default=None)
                # a coarse try can only settle below a positive lower end
                md = _settling_grid(plan, kind, order[0].name, d.name, m) \
                    if settle and di > 0 and lo_top is not None and lo_top > 0 else m
                # below the top's certified lower end a direction is settled by its upper end
                # alone: its optimistic side is composed only when that does not settle it,
                # and never on the coarse try (the full grid then composes both)
                below = lo_top if settle and di > 0 and lo_top is not None and lo_top > 0 else None
                if below is not None and "upper" in kept and swapped_pairs(steps, order[0].name, d.name):
                    # the swapped pairs' curve from the top's composed upper curve at -eps
                    # (queries.ComposedBounds.eps_upper_swapped): settled without composing them.
                    # K + 48 bits: its sums are about 2^K units and meet 2^K delta after one
                    # cancellation, so they err by about 2^-46 units (two limbs at B's K = 70
                    # instead of three: 1.2 -> 0.9 ms at width 1e-3, 2.4 -> 1.75 at 1e-4)
                    with working_precision(K + 48):
                        hi_sw = kept["upper"].eps_upper_swapped(target, key.get(d.name)) if kind == "eps" \
                            else kept["upper"].delta_upper_swapped(target)
                    if hi_sw is not None and hi_sw <= below:
                        results.append((d, None, hi_sw))
                        continue
                lo, hi = _direction(steps, d, kind, target, md, K, tau, budget, allowance, tick,
                                    max_length if (prev is None and di == 0 and m_start is None and m > 4)
                                    else None, below, md < m, kept if di == 0 else None,
                                    _upper_hint(plan, kind, d.name, md))
                lo_first = max((r[1] for r in results if r[1] is not None), default=None)
                if md < m and not (hi is not None and lo_first is not None and hi <= lo_first):
                    # the coarse grid did not settle it below the maximum: the full grid
                    lo2, hi2 = _direction(steps, d, kind, target, m, K, tau, budget, allowance, tick, None,
                                          below, hint=_upper_hint(plan, kind, d.name, m))
                    lo = lo2 if lo is None or (lo2 is not None and lo2 > lo) else lo
                    hi = hi2 if hi is None or (hi2 is not None and hi2 < hi) else hi
                results.append((d, lo, hi))
        except _Deadline:
            # the directions this level finished are certified all the same: the best enclosure
            # reported keeps them (the message only: a run the clock stopped is never an answer)
            lo_all, hi_all = merge(results)
            return stop(f"the time budget of {time_budget:g} s ran out during grid 2^-{m}", timed=True)
        except _Coarser as c:
            m = c.m
            continue
        except PrecisionExhausted as exc:
            if prev is None and m > 4 and m_start is None:  # the level outgrew memory: coarser
                m = max(4, m - 3)
                continue
            if prev is not None:  # a finer grid outgrew memory: report the best so far
                return stop(f"grid 2^-{m} outgrew the memory budget ({exc})")
            raise
        lo_all, hi_all = merge(results)
        cost = time.monotonic() - t_level
        prev = {"m": m, "K": K, "seconds": cost, "dirs": len(active),
                "length": max(d.length for d in dirs)}
        levels.append({"m": m, "K": K, "lo": lo_all, "hi": hi_all, "seconds": cost,
                       "length": prev["length"]})
        for d in dirs:
            if d.hi is not None and d.hi <= lo_all:
                d.active = False  # certified at or below the maximum's lower bound: settled
        rescaled = False
        if kind == "delta":
            # the unit 2^-K must resolve delta itself: adapt it to the magnitude
            # seen (lower end, else the upper end when the lower end is still 0)
            # (near a bounded loss's end the lower end can stay 0 grid after grid while the upper
            # end falls by hundreds of decades: a proved lower bound of the truth sizes it there)
            new_scale = lo_all if lo_all > 0 else (floor_scale if floor_scale is not None else hi_all)
            if new_scale is not None and new_scale > 0 and (scale is None or new_scale < scale / 1024):
                rescaled = True
            if new_scale is not None and new_scale > 0:
                scale = new_scale
        rel = _rel(lo_all, hi_all)
        done = (rel is not None and rel <= rel_width) or (decide is not None and decide(lo_all, hi_all))
        if done:
            return finish()
        if probe and len(levels) == 1 and any(d.hi is not None and d.hi == hi_all and not (d.lo and d.lo > 0)
                                              for d in dirs):
            # the probe's maximum has no lower end of its own there (its optimistic side collapsed on a
            # grid that coarse), so the width is another direction's lower end against it: no h^2 regime
            # to extrapolate (sigma 1.1, q 0.01, T = 1000, eps(1e-300), digits 5: 0.93 on 2^-6 asked
            # for 2^-12 where 2^-11 met the width); two halvings, as without a lower end
            rel = None
        inc = 0 if (rescaled and lo_all == 0) else _inc_for(rel, rel_width, kind)
        if decide is not None:
            inc = min(inc, _DECIDE_STEP)
        # largest affordable step in memory (the length doubles per halving)
        while inc > 0 and prev["length"] << inc > max_length:
            inc -= 1
        if (afford_length is not None and asked > rel_width and rel is not None and rel <= asked
                and prev["length"] << max(1, inc) > afford_length):
            return finish()  # the width asked is met and a narrower one is no longer cheap
        if inc == 0 and not rescaled:
            return stop(f"the next grid would hold more than {max_length} points (memory budget)")
        m += inc


def tightened_width(plan: Any, kind: str, rel_width: float, afford_length: int) -> float:
    """The narrowest of ``rel_width`` and rel_width / 10, / 100, / 1000 whose planned grid
    (:func:`.plan.planned_grid`) holds at most ``afford_length`` points over the plan's
    loss range: a width the caller did not ask for but gets at a bounded, static cost
    (a float answer, such as the dp_accounting drop-in's, is then as close to the truth
    as that grid makes it). A function of the plan only, never of a clock."""
    best = rel_width
    if not plan.checked:
        # the planned grid of an unchecked plan is a coarse start (plan.UNCHECKED_DELTA_GRID, UNCHECKED_EPS_HALVINGS), not a cost:
        # no tightening. An eps one was tightened toward width/1000 once its start was capped: the
        # dp_accounting drop-in ran sigma 0.5, q 1e-6, T 1000 into its time budget at 2^-18 (ref51)
        return best
    for k in (1, 2, 3):
        w = rel_width / 10 ** k
        if plan.range_nats * (1 << planned_grid(plan, kind, w)) > afford_length:
            break
        best = w
    return best


def _upper_hint(plan: Any, kind: str, name: str, m: int) -> Optional[float]:
    """The plan's float estimate of a direction's certified eps upper end on the grid 2^-m: its
    estimate (the middle of the enclosure) plus half the modelled width width_h2 4^-m. Only
    where eps_upper's knot search starts (:meth:`.queries.ComposedBounds.eps_upper`: the same
    knot whatever the hint); None for a delta query or without a plan."""
    if kind != "eps" or plan is None:
        return None
    for n, x, w in plan.per_direction:
        if n == name and math.isfinite(x) and math.isfinite(w):
            return x + 0.5 * w * 4.0 ** -m
    return None


def _settling_grid(plan: Any, kind: str, top: str, name: str, m: int) -> int:
    """A grid for a direction whose planned answer lies below the top one's:
    coarse enough to be cheap, fine enough (by the width model) that its
    certified upper end should fall below the top direction's lower end,
    which settles it (a guess: if it does not settle, the full grid runs).
    Never finer than ``m`` itself, nor than two halvings below it where the model says nothing."""
    # without the model, two halvings below m, or the schedule's coarsest useful grid where that is
    # finer; never past m, where a try would cost more than the full grid it stands in for (ref54 LOW)
    fallback = min(m, max(m - 2, coarsest_grid(plan.steps)))
    per = {n: (x, w) for n, x, w in plan.per_direction}
    if top not in per or name not in per:
        return fallback
    gap = per[top][0] - per[name][0]  # nats (eps) or log delta (delta)
    w = per[name][1]
    if not (gap > 0 and w > 0):
        return fallback
    # at most 2 halvings below the top's grid: a quarter of its cost, so a
    # guess that does not settle adds at most a quarter (the model's gap is
    # a float estimate of a difference, often off by more than itself). It may be coarser
    # than the schedule's coarsest useful grid (:func:`.plan.coarsest_grid`): what collapses
    # there is the optimistic side (its lower end, and the tilted Q's mass that took the
    # Fourier power past its allowance at T = 1e6, 2^-9), and the try composes the
    # pessimistic side only (_direction's upper_only). Measured: the 3-component mixture
    # (0, 1, 2 at .98, .01, .01, sd 1) at T = 1e4 settles add at 2^-5 (coarsest 2^-6: 29 ->
    # 14 ms of its discretisation), T = 1e5 / 1e6 / 3e6 / 1e7 at 2^-6 / 9 / 8 / 8 (before: no
    # try, or 2^-10), every answer's enclosure the same on A-D, MNIST, T = 1e4..1e7 and the
    # events rows (WOR, Laplace, three kinds)
    return max(4, min(m - 2, math.ceil(0.5 * math.log2(4 * w / gap))))


def _direction(steps: Sequence[Step], d: _Dir, kind: str, target: Fraction, m: int, K: int, tau,
               budget: int, allowance: Optional[int], tick: Callable[[], None],
               max_length: Optional[int], settle_below: Optional[Fraction] = None,
               upper_only: bool = False, keep: Optional[dict] = None,
               hint: Optional[float] = None) -> tuple[Optional[Fraction], Optional[Fraction]]:
    """Certified (lo, hi) of one direction on the grid 2^-m; with
    ``max_length``, _Coarser when the composed length would exceed half of it
    (memory model only).

    The upper end comes from the pessimistic side alone (:mod:`.queries`). When it is at or
    below ``settle_below`` (another direction's certified lower end) the direction cannot be
    the maximum (AFA Sec 4.1), so its lower end is not needed: the optimistic side is not
    composed and lo is None (no lower end claimed; 0 is one). ``upper_only``: never compose
    it (a coarse try, which the full grid replaces if it does not settle). ``keep``: receives
    the composed upper curve as ``keep["upper"]`` (a :class:`.queries.ComposedBounds` of U).
    ``hint``: a float estimate of the eps upper end (:func:`_upper_hint`), only where the
    search starts (:meth:`.queries.ComposedBounds.eps_upper`)."""
    ups, lows = _discretise_all(steps, d.name, m, K, tau, tick, d.floors)
    if max_length is not None:
        n_est = estimate_length(ups)
        if n_est > max_length // 2:
            # the plan's range was too short (or there was no plan): coarser
            raise _Coarser(max(4, m - math.ceil(math.log2(2 * n_est / max_length))))
    with working_precision(K + 64):
        U = compose(ups, budget, tick, allowance)
    d.length = max(d.length, U.poly.length())
    with working_precision(K + 96):
        cu = ComposedBounds(U, None)  # type: ignore[arg-type]
        if keep is not None:
            keep["upper"] = cu
        hi = cu.eps_upper(target, hint) if kind == "eps" else arb_to_fraction(endpoints(cu.delta_upper_ball(target))[1])
    if upper_only or (settle_below is not None and hi is not None and hi <= settle_below):
        return None, hi
    # the lower pair's queries read its suffixes near the first class whose effective loss passes
    # the upper end (eps) or the eps asked (delta): the Fourier power may drop the classes well
    # below (fourier_power's read_above; none without an upper end, where eps_lower scans them all)
    read = (None if hi is None else float(hi)) if kind == "eps" else float(target)
    with working_precision(K + 64):
        L = compose(lows, budget, tick, allowance, read)
    cb = ComposedBounds(U, L)  # type: ignore[arg-type]
    with working_precision(K + 96):
        if kind == "eps":
            lo = cb.eps_lower(target, None if hi is None else float(hi))
        else:
            lo = arb_to_fraction(endpoints(cb.delta_lower_ball(target))[0])
    return lo, hi


def _event_floor(steps: Sequence[Step], direction: str, margin: Fraction, cuts: Sequence[Fraction]) -> Optional[Fraction]:
    """A rational at or below (1 - e^-margin) prod_i P(L_i > cuts[i])^(T_i) for one direction, the
    lower bound of delta(eps) of an event {every step i's loss > cuts[i]} whose composed loss
    exceeds eps + margin: on it (1 - e^(eps - L))_+ > 1 - e^-margin, and delta(eps) =
    E_P[(1 - e^(eps - L))_+] (independent steps; the tails exclude loss +inf, which only adds).
    None where it is not positive or below 2^-4096: there it sizes nothing a level could use,
    and as an exact rational it can be a number of 10^11 bits (sigma 1e6: the conversion alone
    outlasted any budget)."""
    with working_precision(128):
        acc = -(ball(-margin).expm1())
        for st, c in zip(steps, cuts):
            p, _ = st.make_pair(direction).tails(ball(c))
            acc *= p ** st.count
        lo = acc.lower()
        if lo > 0 and lo.mid().man_exp()[1] > -(1 << 12) - 256:
            return arb_to_fraction(lo)
    return None


def _product_scale(steps: Sequence[Step], dirs: list, ends: dict, eps: Fraction) -> Optional[Fraction]:
    """A proved lower bound of delta(eps) below a bounded direction's end B, used only to size
    the unit (never reported): with g = B - eps, N steps and c_i = B_i - g/(2N), the event
    {every step's loss > c_i} has composed loss > B - g/2 > eps, so delta(eps) >=
    (1 - e^(-g/2)) prod_i P(L_i > c_i)^(T_i) (:func:`_event_floor`). The largest over the
    directions that have one, or None."""
    n = sum(st.count for st in steps)
    got = []
    for d in dirs:
        if d.floors is None:
            continue
        g = ends[d.name] - eps
        got.append(_event_floor(steps, d.name, g / 2, [f + g - g / (2 * n) for f in d.floors]))
    return max((v for v in got if v is not None), default=None)


#: the margin g (nats) of :func:`_split_scale`'s event: a larger one lowers every step's tail
#: more than it raises the factor 1 - e^-g once g is past a fraction of a nat
_SPLIT_MARGIN = Fraction(1, 8)


def _split_scale(steps: Sequence[Step], directions: Sequence[str], eps: Fraction) -> Optional[Fraction]:
    """A proved lower bound of delta(eps), the largest over ``directions``, used only to size the
    unit (never reported), or None: with N steps in all, g = _SPLIT_MARGIN and c = (eps + g) / N,
    the event {every step's loss > c} has composed loss > eps + g, so delta(eps) >=
    (1 - e^-g) prod_i P(L_i > c)^(T_i) (:func:`_event_floor`). The construction of
    :func:`_product_scale` without an end: it sizes the unit of a delta far in an unbounded
    direction's tail, where no float law confirmed the plan and the upper end alone climbed
    about 20 bits of unit a level (sigma 5, q 0.1, T 10, eps 4, delta 3.4e-170: 20 levels at
    2^-8)."""
    c = (eps + _SPLIT_MARGIN) / sum(st.count for st in steps)
    got = [_event_floor(steps, d, _SPLIT_MARGIN, [c] * len(steps)) for d in directions]
    return max((v for v in got if v is not None), default=None)


def gaussian_mu2(steps: Sequence[Step], direction: str) -> Optional[Fraction]:
    """mu^2 = sum_i T_i mu_i^2 of a schedule whose every step is the Gaussian mechanism (a
    :class:`.pairs.SubsampledGaussianPair` with q = 1, shift mu_i = 1/sigma, or 2/sigma under
    replace-one) in ``direction``, or None: the composed pair is then the Gaussian pair of shift mu
    (AFA Thm 10, the product of the steps' pairs, made one pair by a rotation of N(0, I): GDPT Sec 1)."""
    from .pairs import SubsampledGaussianPair

    mu2 = Fraction(0)
    for st in steps:
        pair = st.make_pair(direction)
        if not (isinstance(pair, SubsampledGaussianPair) and pair.q == 1):
            return None
        mu2 += st.count * pair.mu * pair.mu
    return mu2


def max_ends(ends: Mapping[str, tuple[Fraction, Fraction]]) -> tuple[Fraction, Fraction]:
    """[lo, hi] of the maximum over directions of per-direction enclosures (add-remove is the
    pointwise maximum of add and remove, AFA Sec 4.1)."""
    return max(v[0] for v in ends.values()), max(v[1] for v in ends.values())


def gaussian_closed_ends(steps: Sequence[Step], directions: Sequence[str], kind: str, target: Fraction,
                         digits: int, *, floor: bool = False) -> Optional[dict[str, tuple[Fraction, Fraction]]]:
    """Per direction, [lo, hi] of delta(target) (``kind`` "delta") or eps(target) ("eps") to
    10^-``digits``, for a schedule whose every step is the Gaussian mechanism at sampling rate 1:
    the composition is one Gaussian pair of shift mu, mu^2 = :func:`gaussian_mu2`, and delta_mu(eps)
    (GDPT eq. 2) or its root in eps (clamped at 0: eps(delta) is the least eps >= 0 with
    delta(eps) <= delta) is evaluated in arb. None for any other schedule, or where the closed form
    steps aside: a delta below 2^-TAIL_FLOOR_BITS (as exact rationals such ends have denominators of
    2^(7e11) bits at eps 10^6, a hang; the Renyi tail or the grid serves them), eps / mu past
    MAX_GDP_EPS_OVER_MU (gdp delta's range), or the precision cap. With ``floor`` such a delta is
    answered [0, 2^-TAIL_FLOOR_BITS] instead (a calibration's float model and its ends): below the
    floor by arb, or, past eps / mu = 10^8 with mu^2 <= eps, because t = eps / mu - mu / 2 >=
    eps / (2 mu) > 5 10^7 and delta_mu(eps) <= Phi(-t) <= e^(-t^2 / 2) (GDPT eq. 2, Chernoff)."""
    from flint import arb

    from ..ball import arb_to_fraction, ball, refine, working_precision
    from ..errors import PrecisionExhausted, shown
    from ..gdp.eps_for_delta import eps_root, mu_curve
    from ..limits import MAX_GDP_EPS_OVER_MU
    from ..mechanisms.gaussian import delta_mu_ball
    from .tail import TAIL_FLOOR_BITS

    ends: dict[str, tuple[Fraction, Fraction]] = {}
    try:
        for name in directions:
            mu2 = gaussian_mu2(steps, name)
            if mu2 is None:
                return None
            if kind == "delta":
                below = (Fraction(0), Fraction(1, 2 ** TAIL_FLOOR_BITS)) if floor else None
                if target * target > MAX_GDP_EPS_OVER_MU ** 2 * mu2:
                    if below is None or mu2 > target:
                        return None
                    ends[name] = below
                    continue
                x, bits = refine(lambda: delta_mu_ball(ball(mu2).sqrt(), ball(target)), digits=digits + 1,
                              what=f"delta_mu(eps) for mu^2={shown(mu2)}, eps={shown(target)}")
                if x.upper() < arb(2) ** -TAIL_FLOOR_BITS:
                    if below is None:
                        return None
                    ends[name] = below
                    continue
                with working_precision(bits):  # ends at the ball's precision (at 53 bits a 30-digit
                    # claim was decided at 16: adv48 L3)
                    ends[name] = (arb_to_fraction(x.lower()), arb_to_fraction(x.upper()))
            else:
                # shown: str() of a Fraction past 4300 digits raises (sigma 1e-2150, adv48 L1: exit 4)
                root = eps_root(mu_curve(lambda: ball(mu2).sqrt()), target, digits, f"mu^2={shown(mu2)}",
                                from_zero=False)
                ends[name] = (max(Fraction(0), arb_to_fraction(root.lo)), max(Fraction(0), arb_to_fraction(root.hi)))
    except PrecisionExhausted:
        return None
    return ends


#: the precision cap (bits) of :func:`poisson_closed_ends`: below the re-check's finest closed-form
#: precision (5120 bits, ``recheck.pld._CLOSED_BITS``), so that what this form resolves the re-check's
#: closed form resolves too (its margin, 1024 bits, is past the 70 bits between 10^-30 and its 2^-100)
_POISSON_MAX_BITS = 4096


def poisson_step(steps: Sequence[Step], directions: Sequence[str]) -> Optional[tuple[Fraction, Fraction]]:
    """(mu, q) where the schedule is exactly one Poisson-subsampled Gaussian step (a
    :class:`.pairs.SubsampledGaussianPair`, shift mu = 1/sigma, count 1) at a rate 0 < q < 1, read in
    directions among add and remove; None otherwise (rate 1: :func:`gaussian_closed_ends`)."""
    from .pairs import SubsampledGaussianPair

    if len(steps) != 1 or steps[0].count != 1 or not directions:
        return None
    pairs = [steps[0].make_pair(d) for d in directions]
    if not all(isinstance(p, SubsampledGaussianPair) and p.direction == d and d in ("add", "remove")
               for p, d in zip(pairs, directions)):
        return None
    if len({(p.sigma, p.q) for p in pairs}) != 1 or not 0 < pairs[0].q < 1:
        return None
    return pairs[0].mu, pairs[0].q


def poisson_step_delta_ball(mu: Any, q: Any, direction: str, eps: Any) -> Any:
    """Ball of delta(eps), eps >= 0, of one Poisson-subsampled Gaussian step (shift mu, rate
    0 < q < 1; AFA Thm 11 (1): remove P = (1 - q) N(0, 1) + q N(mu, 1) against Q = N(0, 1), add the
    two swapped), at the working precision; nan where the add direction's w straddles 0.

    The loss is monotone in x, so {L > eps} is a half line and delta(eps) = sup_S (P - e^eps Q)(S)
    is a sum of normal tails; with sup_S (a A - b B)(S) = a sup_S (A - (b/a) B)(S) for a > 0 it is
    the Gaussian curve delta_mu (GDPT eq. 2) at a transformed eps. Remove: P - e^eps Q =
    q N(mu, 1) - (e^eps - 1 + q) N(0, 1), so delta(eps) = q delta_mu(v), v = log1p(expm1(eps) / q).
    Add: P - e^eps Q = (1 - (1 - q) e^eps) N(0, 1) - q e^eps N(mu, 1), <= 0 where
    w = 1 + expm1(-eps) / q <= 0 (eps >= -log(1 - q), the add loss's bound: delta = 0), else
    delta(eps) = c delta_mu(v), c = 1 - (1 - q) e^eps = q e^eps w, v = -log w (delta_mu is symmetric
    in its pair). The re-check derives the same formulas in MPFR (``recheck.poisson_step``)."""
    from flint import arb

    from ..mechanisms.gaussian import delta_mu_ball

    if direction == "remove":
        return q * delta_mu_ball(mu, (eps.expm1() / q).log1p())
    w = poisson_add_w(q, eps)
    if w <= 0:
        return arb(0)
    if not w > 0:
        return arb("nan")
    return q * eps.exp() * w * delta_mu_ball(mu, -w.log())


def poisson_add_w(q: Any, eps: Any) -> Any:
    """w = 1 + expm1(-eps) / q of :func:`poisson_step_delta_ball`'s add direction (0 at its loss bound)."""
    return 1 + (-eps).expm1() / q


def poisson_closed_ends(steps: Sequence[Step], directions: Sequence[str], kind: str, target: Fraction,
                        digits: int) -> Optional[dict[str, tuple[Fraction, Fraction]]]:
    """Per direction, [lo, hi] of delta(target) or eps(target) (clamped at 0) to 10^-``digits`` of a
    schedule that is one Poisson-subsampled Gaussian step at 0 < q < 1 (:func:`poisson_step`), from
    the closed form of :func:`poisson_step_delta_ball` (eps(delta): :func:`.gdp.eps_for_delta.eps_root`
    on that curve). No grid: the step's curve needs no discretisation.

    None for any other schedule, and wherever the re-check's closed form (``recheck.pld.
    poisson_step_bounds``) might step aside, since a certificate from this form records no grid and
    verify must answer it from its own closed form: eps / mu past MAX_GDP_EPS_OVER_MU (its 10^8), a
    delta below 2^-TAIL_FLOOR_BITS (an underflowing delta, which the re-check finds wider than its
    2^-100), an add direction whose w lies within 2^-:data:`_POISSON_MAX_BITS` of 0 (the re-check's w
    cancels to nothing at 5120 bits), and anything not resolved within :data:`_POISSON_MAX_BITS` bits."""
    from flint import arb

    from ..ball import refine
    from ..errors import shown
    from ..gdp.eps_for_delta import eps_root
    from ..limits import MAX_GDP_EPS_OVER_MU
    from .tail import TAIL_FLOOR_BITS

    step = poisson_step(steps, directions)
    if step is None:
        return None
    mu, q = step
    if kind == "delta" and target > MAX_GDP_EPS_OVER_MU * mu:
        return None
    what = f"one Poisson-subsampled Gaussian step, mu={shown(mu)}, q={shown(q)}"

    def near_bound(eps: Fraction) -> bool:  # the add direction's w within 2^-_POISSON_MAX_BITS of 0
        with working_precision(_POISSON_MAX_BITS + 64):
            w = poisson_add_w(ball(q), ball(eps))
            return not (w > arb(2) ** -_POISSON_MAX_BITS or w < -arb(2) ** -_POISSON_MAX_BITS)

    ends: dict[str, tuple[Fraction, Fraction]] = {}
    try:
        for name in directions:
            def curve(eps: arb, name: str = name) -> arb:
                return poisson_step_delta_ball(ball(mu), ball(q), name, eps)

            if kind == "delta":
                if name == "add" and near_bound(target):
                    return None
                x, bits = refine(lambda: curve(ball(target)), digits=digits + 1, max_bits=_POISSON_MAX_BITS,
                                 what=f"delta({shown(target)}) of {what}")
                if x.is_zero():
                    ends[name] = (Fraction(0), Fraction(0))  # add at or past its loss bound: exactly 0
                    continue
                if x.upper() < arb(2) ** -TAIL_FLOOR_BITS:
                    return None
                with working_precision(bits):
                    ends[name] = (arb_to_fraction(x.lower()), arb_to_fraction(x.upper()))
            else:
                root = eps_root(curve, target, digits, what, from_zero=True, max_bits=_POISSON_MAX_BITS)
                lo, hi = max(Fraction(0), arb_to_fraction(root.lo)), max(Fraction(0), arb_to_fraction(root.hi))
                if name == "add" and near_bound(hi):
                    return None
                ends[name] = (lo, hi)
    except PrecisionExhausted:
        return None
    return ends


class ClosedEnds(NamedTuple):
    """Per-direction [lo, hi] from a closed form, and which form answered: ``"gaussian"``
    (:func:`gaussian_closed_ends`) or ``"poisson"`` (:func:`poisson_closed_ends`). The form is
    recorded (``PldAnswer.closed``, the events method) since verify answers each from its own copy."""
    form: str
    ends: dict[str, tuple[Fraction, Fraction]]


def closed_ends(steps: Sequence[Step], directions: Sequence[str], kind: str, target: Fraction, digits: int,
                *, poisson: bool = True) -> Optional[ClosedEnds]:
    """:func:`gaussian_closed_ends` (every step a Gaussian at rate 1), else, with ``poisson``,
    :func:`poisson_closed_ends` (one Poisson-subsampled Gaussian step), else None (the grid answers)."""
    got = gaussian_closed_ends(steps, directions, kind, target, digits)
    if got is not None:
        return ClosedEnds("gaussian", got)
    got = poisson_closed_ends(steps, directions, kind, target, digits) if poisson else None
    return None if got is None else ClosedEnds("poisson", got)


def _gaussian_scale(steps: Sequence[Step], directions: Sequence[str], eps: Fraction) -> Optional[Fraction]:
    """A proved lower bound of delta(eps), the maximum over ``directions``, when every step is
    the Gaussian mechanism (a :class:`.pairs.SubsampledGaussianPair` with q = 1), used only to
    size the unit (never reported), or None. Such a step's loss is N(mu_i^2/2, mu_i^2) under P in
    each direction (pairs.py; mu_i = 2/sigma under replace-one), so the composition's is
    N(mu^2/2, mu^2) with mu^2 = sum_i T_i mu_i^2 (AFA Thm 10: the composed pair's loss is the sum
    of independent losses), the loss of the Gaussian pair with shift mu, whose curve is
    delta_mu(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2) (Balle & Wang 2018 Thm 8;
    GDPT eq. 2, Cor 3.3). The lower end of that ball at 128 bits, the largest over the
    directions; None where it is not positive or below 2^-4096 (as :func:`_product_scale`)."""
    from ..mechanisms.gaussian import delta_mu_ball

    best: Optional[Fraction] = None
    for d in directions:
        mu2 = gaussian_mu2(steps, d)
        if mu2 is None:
            return None
        with working_precision(128):
            lo = delta_mu_ball(ball(mu2).sqrt(), ball(eps)).lower()
            if lo > 0 and lo.mid().man_exp()[1] > -(1 << 12) - 256:
                v = arb_to_fraction(lo)
                best = v if best is None or v > best else best
    return best


def _discretise_all(steps: Sequence[Step], direction: str, m: int, K: int, tau,
                    tick: Callable[[], None], floors: Optional[list] = None) -> tuple[list, list]:
    """Every step's pair discretised on the grid 2^-m. With ``floors`` (:func:`_floors`), a step's
    first knot is raised to about F_i, less 4 knots per step of the schedule: the upper pair's top
    knot lies up to about 3 knots above a step's bound, so with step i at or below the raised
    knot the composed upper loss stays below eps and nothing the query reads moves. A raised
    first knot is sound for any value (discretise.py): the upper pair's chord from (0, 1) to
    the first knot carries all the mass below it at that knot (a larger loss), and the lower
    pair drops the classes below it (each dropped term (P_k - e^eps Q_k)_+ >= 0 is only lost)."""
    ups, lows = [], []
    margin = 4 * sum(st.count for st in steps) + 1
    for k, st in enumerate(steps):
        pair = st.make_pair(direction)
        bounds = None
        if floors is not None:
            i0, n = grid_range(pair, m, tau)
            first = math.floor(floors[k] * (1 << m)) - margin
            bounds = (max(i0, first), n) if first < n else (i0, n)
        u, l = discretise(pair, m, K, tau, bounds=bounds, progress=lambda _f: tick())
        ups.append((u, st.count))
        lows.append((l, st.count))
        tick()
    return ups, lows
