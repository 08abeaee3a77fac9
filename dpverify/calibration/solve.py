"""Certified calibration: a bracket [lo, hi] for the free parameter of a
template such that (target_eps, delta)-DP is *proved* at the safe end and
*refuted* at the other end.

What is proved at an end x: the PLD accountant's certified enclosure of
delta(target_eps) at x (upper curve of the pessimistic connect-the-dots
discretisation, lower curve of the optimistic quantisation; AFA Thm 10/11,
see :mod:`dpverify.pld.accountant`) lies entirely at or below delta (safe:
epsilon(delta) <= target_eps, since epsilon(delta) = inf{eps : delta(eps) <=
delta}) or entirely above delta (unsafe: delta(eps) >= delta(target_eps) >
delta for every eps <= target_eps, so epsilon(delta) >= target_eps and the
claim (target_eps, delta)-DP is false). With the template's monotonicity proof
(:mod:`.template`) every value beyond the safe end is safe too and every value
beyond the unsafe end is unsafe; the optimal parameter lies in the bracket.

How (no blind bisection of certified runs):

1. Float proposal. Secant steps in log x on the midpoint of one coarse PLD
   level (loss grid 2^-10), started from the template's float guess (the
   Gaussian CLT for DP-SGD); one evaluation on the next grid (2^-11) and
   Richardson extrapolation (the discretisation error is O(h^2)) remove most
   of the grid's bias. Floats only choose where to look.
2. Certified sign checks at two exact rational points 0.4 w (relative) on
   either side of the proposal, rounded outward to short decimals, each on the
   coarsest grid whose predicted enclosure width (measured on the two coarse
   grids, shrinking about 4x per halving of the grid) is below the expected
   gap. A check that proves the *other* sign still narrows the bracket; an
   undecided one is repeated one grid finer, then moved outward.

Work bounded before work (issue 22): a Poisson calibration is priced by what ``dpverify verify``
would charge to re-prove its ends (:mod:`.price`, the re-check's own meter), before every certified
evaluation and once before step 2 for the two ends and the grid the width asks there; past the
re-check's budget it is refused (exit 2 naming --digits or --delta), and, with a certificate asked
for (``for_certificate``), so are ends the width model puts on verify's finest grid.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable, Optional, Union

from .. import _validate as V
from ..ball import brief_str, exact_str, rational_decimal
from ..errors import InvalidParameter, PrecisionExhausted, Undecided, shown
from ..limits import DEFAULT_TIME_BUDGET_SECONDS
from ..numtext import log_fraction
from ..pld.accountant import refine_query
from ..pld.refine import gaussian_closed_ends, max_ends
from ..relation import SCHEDULE_RELATIONS, directions, relation
from ..verdict import Outcome
from .template import Template

__all__ = ["Calibration", "End", "calibrate_template"]

#: the float proposals' range of a real parameter: a value is proposed in [FLOAT_FLOOR, FLOAT_CEIL]
#: (within the template's domain), where x, log x and e^(log x) are normal binary64 numbers. Past it
#: a proposal underflowed to 0.0 (log10 of it: --sampling-rate 1 --steps 1 --target-eps 1e59) or
#: e^v overflowed (--steps 10000000 --target-eps 1e-300 --delta 1e-300), exit 4 (adv49 #2). Only
#: where to look is chosen here: every end is certified, and a target no value in the range meets
#: is answered by the certified checks at the range's end (exit 3, the proof in the message)
FLOAT_FLOOR = 1e-300
FLOAT_CEIL = 1e300
M_MODEL = 10  # coarse grid of the float model
M_MAX = 16  # finest grid tried for one end (about 2^6 = 64x the model's cost)
#: digits of the closed form of an end at sampling rate 1: its delta_at_target is recorded to 17
#: digits, rounded outward, and the re-check's closed form is narrower than 2^-100 relative
_CLOSED_DIGITS = 30


@dataclass(frozen=True)
class End:
    """One proved end: the exact value, the verdict of (target_eps, delta)-DP
    there (HOLDS or FAILS) and the certified enclosure [delta_lo, delta_hi] of
    delta(target_eps) that decided it, on the loss grid 2^-grid_exponent (None: in closed form,
    every step a Gaussian at sampling rate 1; no grid is recorded)."""

    value: Fraction
    outcome: Outcome
    delta_lo: Fraction
    delta_hi: Fraction
    grid_exponent: Optional[int]

    def to_json(self, integer: bool, delta: Optional[Fraction] = None) -> dict[str, Any]:
        from ..ball import ball, lower_decimal, upper_decimal, working_precision

        with working_precision(256):
            lo, hi = lower_decimal(ball(self.delta_lo), 17), upper_decimal(ball(self.delta_hi), 17)
        # only the side that decided the end is recorded as a bound (the safe end: delta <= hi;
        # a failing end: delta >= lo); the other side is the trivial 0 or 1, so that verify is
        # never asked to re-prove a bound that decided nothing at a width it cannot reach
        if self.outcome is Outcome.HOLDS:
            lo = "0"
        elif self.outcome is Outcome.FAILS:
            hi = "1"
            if delta is not None:
                # a failing end is proved as delta(target) > delta: recorded as that bound, which
                # verify re-proves by the same comparison as the end (a tighter recorded lower
                # end asked it for a width its grid could not reach: exit 3 on a genuine bracket)
                lo = exact_str(delta)
        out = {
            "value": int(self.value) if integer else exact_str(self.value),
            "verdict": self.outcome.value,
            "delta_at_target": {"lo": lo, "hi": hi},
        }
        if self.grid_exponent is not None:
            out["grid"] = f"2^-{self.grid_exponent}"
        return out


class BracketEnds:
    """The bracket's two values in increasing order and its relative width, for any
    calibration with a ``safe`` end and an optional ``unsafe`` one (each with a ``value``)."""

    safe: Any
    unsafe: Any

    @property
    def lo(self) -> Fraction:
        return self.safe.value if self.unsafe is None else min(self.safe.value, self.unsafe.value)

    @property
    def hi(self) -> Fraction:
        return self.safe.value if self.unsafe is None else max(self.safe.value, self.unsafe.value)

    @property
    def rel_width(self) -> Optional[float]:
        if self.unsafe is None:
            return None
        return float((self.hi - self.lo) / self.lo)


@dataclass(frozen=True)
class Calibration(BracketEnds):
    """A certified bracket for the template's free parameter (module docstring).

    ``safe`` is the end where (target_eps, delta)-DP is proved; ``unsafe`` the
    end where it is refuted (None when every value up to the domain's limit is
    safe, e.g. sampling rate 1). ``lo`` <= ``hi`` are the two values in
    increasing order.

    For a template whose pair is not known to be tight (``template.mechanism_lower``,
    fixed batches), ``unsafe`` is only the accountant's *limit* (its pair
    certifies eps > target there; nothing beyond can be certified with it)
    and ``mechanism_unsafe`` is the value where the mechanism itself is
    proved to fail (a realised pair), or None.
    """

    template: Template
    target_eps: Fraction
    delta: Fraction
    safe: End
    unsafe: Optional[End]
    requested_rel_width: float
    proposal: Optional[float]
    seconds: float
    evaluations: int
    log: list = field(default_factory=list, repr=False)
    mechanism_unsafe: Optional[End] = None

    @property
    def tight(self) -> bool:
        """True when ``unsafe`` proves the mechanism fails (a tight pair)."""
        return self.template.mechanism_lower is None

    @property
    def parameter(self) -> str:
        return self.template.parameter

    def __repr__(self) -> str:
        show = (lambda x: str(int(x))) if self.template.integer else (lambda x: f"{float(x):.7g}")
        if self.unsafe is None:
            return (f"Calibration({self.parameter}: safe {show(self.safe.value)}, every value up to the "
                    f"domain limit meets ({exact_str(self.target_eps)}, {exact_str(self.delta)})-DP)")
        extra = ""
        if not self.tight:
            extra = (", below it the pair certifies nothing; the mechanism is proved to fail at "
                     + (show(self.mechanism_unsafe.value) if self.mechanism_unsafe is not None else "no value"))
        return (f"Calibration({self.parameter} in [{show(self.lo)}, {show(self.hi)}], safe end "
                f"{show(self.safe.value)}, relative width {self.rel_width:.3g}{extra})")


class _Model:
    """Float view of the certified accountant at one grid level."""

    def __init__(self, t: Template, eps: Fraction, D: Fraction, deadline: float,
                 tick: Callable[[], None]) -> None:
        self.t, self.eps, self.D = t, eps, D
        self.dirs = directions(relation(t.neighboring, allowed=SCHEDULE_RELATIONS))
        self.deadline = deadline
        self.tick = tick
        self.count = 0
        self.log: list = []
        self.closed: set[Fraction] = set()  # the values answered in closed form
        #: asked before every evaluation on a grid, with (x, m): raises to refuse it before its work
        #: (calibrate_template's verify price, :mod:`.price`), else returns
        self.guard: Optional[Callable[[Fraction, int], None]] = None

    def bounds(self, x: Fraction, m: int) -> tuple[Fraction, Fraction]:
        """Certified [lo, hi] of delta(target_eps) at the exact x on the grid 2^-m."""
        if time.monotonic() > self.deadline:
            raise PrecisionExhausted("calibrate: the time budget was spent before the bracket was proved")
        steps = [e.step() for e in self.t.build(x)]
        closed = gaussian_closed_ends(steps, self.dirs, "delta", self.eps, _CLOSED_DIGITS, floor=True)
        if closed is not None:
            # every step a Gaussian at sampling rate 1: one Gaussian pair, in closed form on any grid, as
            # the re-check proves it (recheck.calibrate._Route.side); a grid took 274 CPU s for
            # --sampling-rate 1 --steps 100000 --digits 6 and only approached it
            lo, hi = max_ends(closed)
            self.closed.add(x)
            return self._note(x, m, lo, hi)
        if self.guard is not None:
            self.guard(x, m)
        try:
            res = refine_query(steps, self.dirs, kind="delta", target=self.eps, rel_width=1e-6,
                               m_start=m, decide=lambda lo, hi: True, delta_scale=self.D,
                               time_budget=max(1.0, self.deadline - time.monotonic()),
                               # the re-check (recheck/calibrate.py) proves each end and its
                               # delta_at_target on grids only: an exact [0, 0] would not be re-proved
                               exact_zero=False)
        except (PrecisionExhausted, Undecided) as exc:
            # the value the grid could not serve, named: a far proposal (noise 2e-30 at target eps
            # 1e59) said only "one step's privacy loss spans 5.2e5 nats", as if of the user's input
            named = type(exc)(f"calibrate: at {self.t.parameter}={brief_str(x)}: {exc}")
            named.__dict__.update(exc.__dict__)
            raise named from exc
        return self._note(x, m, res.lo, res.hi if res.hi is not None else Fraction(1))

    def _note(self, x: Fraction, m: int, lo: Fraction, hi: Fraction) -> tuple[Fraction, Fraction]:
        self.count += 1
        self.tick()
        self.log.append({"value": float(x), "grid": m, "delta_lo": float(lo), "delta_hi": float(hi)})
        return lo, hi

    def g(self, x: Fraction, m: int) -> tuple[float, float]:
        """(log of the enclosure's midpoint - log delta, relative width)."""
        lo, hi = self.bounds(x, m)
        mid = (lo + hi) / 2
        if mid <= 0:
            return -700.0, math.inf
        return log_fraction(mid) - log_fraction(self.D), float((hi - lo) / mid)


def _float_domain(t: Template) -> tuple[float, float]:
    """The template's domain as the float proposals see it: [lower, upper] cut to
    [FLOAT_FLOOR, FLOAT_CEIL] (an integer parameter's lower end is at least 1)."""
    lo = max(float(t.lower), FLOAT_FLOOR)
    hi = min(float(t.upper), FLOAT_CEIL) if t.upper is not None else FLOAT_CEIL
    return lo, max(lo, hi)


def _snap(t: Template, x: float, toward_up: bool, w: float) -> Fraction:
    """An exact short value near x, rounded up (``toward_up``) or down, within the template's domain.
    A float x outside the proposals' range (0.0, inf or nan from a model step) is first brought back
    into it (:func:`_float_domain`): it only chooses where to look."""
    lo, hi = _float_domain(t)
    x = min(max(x, lo), hi) if not math.isnan(x) else lo
    if t.integer:
        v = Fraction(math.ceil(x) if toward_up else math.floor(x))
        v = max(v, t.lower)
    else:
        digits = max(3, math.ceil(-math.log10(w)) + 2)
        e = math.floor(math.log10(abs(x))) - digits + 1
        unit = Fraction(10) ** e
        k = Fraction(x) / unit
        v = (math.ceil(k) if toward_up else math.floor(k)) * unit
        if v <= t.lower:
            v = t.lower + unit
    if t.upper is not None and v > t.upper:
        v = t.upper
    return v


class _DomainSafe(Exception):
    """Raised by the proposal's probe: the domain's unsafe end is proved safe, so is every value."""

    def __init__(self, end: End) -> None:
        super().__init__("the whole domain is safe")
        self.end = end


def _propose(t: Template, E: Fraction, D: Fraction, s: int, w: float, vmin: float, vmax: float,
             at: Callable[..., Fraction], probe: Callable[[Fraction, int], tuple[float, float]],
             show: Callable[[Optional[float], str], None]) -> tuple:
    """Step 1 of :func:`calibrate_template` (module docstring), floats only: secant steps in
    v = s log x on the model grid 2^-M_MODEL from the template's guess, one evaluation on the next
    grid and Richardson's extrapolation. Returns (v, slope, rw1, widths, v_est, proposal)."""
    x0 = t.guess(E, D) if t.guess is not None else None
    if x0 is None or not math.isfinite(x0) or x0 <= 0:
        x0 = {"noise_multiplier": 1.0, "steps": 1000.0, "sampling_rate": 0.01}.get(t.parameter, 1.0)
        if t.upper is not None:
            x0 = min(x0, float(t.upper))
    v = s * math.log(x0)
    show(None, "proposal")
    pts: list[tuple[float, float]] = []  # (v, g) on the model grid
    slope: Optional[float] = None
    widths: dict[int, float] = {}
    seen: set = set()
    for _ in range(40):
        x = at(v, True, fine=True)
        if x in seen:
            break  # the model cannot resolve a finer step
        seen.add(x)
        v = s * math.log(float(x))
        g, rw = probe(x, M_MODEL)
        widths[M_MODEL] = rw
        pts.append((v, g))
        if len(pts) >= 2:
            (va, ga), (vb, gb) = pts[-2], pts[-1]
            if vb != va and (gb - ga) / (vb - va) > 0:
                slope = (gb - ga) / (vb - va)
        if slope is None:
            # a 1% probe gives the local slope (Newton from then on); a wrong
            # sign (model noise) falls back to a fixed step downhill
            step = -0.01 * math.copysign(1.0, g) if len(pts) == 1 else -math.copysign(0.5, g)
        else:
            step = -g / slope
        step = max(-2.0, min(2.0, step))
        nxt = min(max(v + step, vmin), vmax)
        if abs(nxt - v) < w / 50 or (nxt == v):
            break
        v = nxt
    if slope is None:
        slope = 1.0
    # bias correction: one evaluation one grid finer, then Richardson (error O(h^2))
    x = at(v, True, fine=True)
    g1, rw1 = probe(x, M_MODEL + 1)
    widths[M_MODEL + 1] = rw1
    v_fine = s * math.log(float(x)) - g1 / slope
    v_est = v_fine + (v_fine - v) / 3
    # the extrapolation is a float guess: kept inside the domain (a target met everywhere sent it past
    # e^709, math.exp overflowed: calibrate dpsgd --target-eps 20 --dataset-size 100 --noise-multiplier 2
    # --steps 10 ended in an internal error, adv47 L1b); the certified ends below decide
    v_est = min(max(v_est if math.isfinite(v_est) else v, vmin), vmax)
    proposal = math.exp(s * v_est)
    return v, slope, rw1, widths, v_est, proposal


class _PastBudget(InvalidParameter):
    """A refusal by the verify price (:func:`_refusal`): exit 2, as any InvalidParameter; the proposal
    reads it as the accountant's own refusal of a value (the domain's end is then checked)."""


def _refusal(t: Template, E: Fraction, D: Fraction, w: float, ends: "list[tuple[str, Fraction, int]]", done: str,
             about: str) -> Optional[_PastBudget]:
    """The refusal of a calibration whose ``ends`` (name, value, grid exponent) ``dpverify verify``
    could not re-prove within its budget, or None: their price (:func:`.price.verify_price`, the
    re-check's own charge for their curves, at most what verify charges a certificate with these
    ends on these grids) past :data:`dpverify.recheck.limits.CALIBRATE_MAX_WORK`, or a step whose
    loss spans more knots than the re-check discretises. Naming ``digits`` (``rel_width`` where the
    width is not a power of ten) where an end's grid is finer than the proposal's (the width asked
    set it), else ``delta`` (the grid is the coarsest verify uses: the unit 2^-K, about
    log2(1/delta) + 1.45 target_eps bits, and the step's loss range set the price). A count of
    knots and bits, no clock."""
    from ..recheck.limits import CALIBRATE_MAX_WORK
    from .price import verify_price

    price, K, why = verify_price(t, E, D, ends)
    if not why and (price is None or price <= CALIBRATE_MAX_WORK):
        return None
    m = max(max(e[2] for e in ends), 10)
    where = (f"the grid 2^-{m}, where {why}" if why else
             f"the grid 2^-{m}, whose re-proof `dpverify verify` prices at {price:.2e} > {CALIBRATE_MAX_WORK:.1e} "
             f"knots x bits x log2 steps x sides (its budget for one calibrate.bracket; masses of {K} bits)")
    what = f"{about} on {where}"
    if m > M_MODEL + 1:
        return _refusal_text(w, what, done)
    return _PastBudget("delta", f"{brief_str(D)} at target eps {brief_str(E)} needs {what}, the coarsest "
                                     f"grid verify re-proves on: {done} (no certified answer can be re-proved)")


def _refusal_text(w: float, what: str, done: str) -> _PastBudget:
    """The refusal of the width ``w`` asked for, which needs ``what``: naming --digits (the
    writers' one wording, :func:`dpverify.certificate.writer.fewer_digits`), or the deprecated
    --rel-width where ``w`` is not a power of ten."""
    k = round(-math.log10(w))
    if k >= 1 and abs(w * 10.0 ** k - 1) < 1e-9:
        from ..certificate.writer import fewer_digits

        return _PastBudget("digits", fewer_digits(k, what, done))
    return _PastBudget("rel_width", f"{w:g} needs {what}: {done}; ask for a wider one")


def calibrate_template(
    t: Template,
    target_eps: Any,
    delta: Any,
    *,
    rel_width: Union[float, str, int, Fraction] = 1e-3,
    time_budget: float = DEFAULT_TIME_BUDGET_SECONDS,
    progress: Optional[Any] = None,
    priced: bool = True,
    for_certificate: bool = False,
) -> Calibration:
    """Certified bracket for ``t``'s free parameter (module docstring).

    Raises InvalidParameter for bad targets, :class:`~dpverify.errors.Undecided`
    when no value of the domain meets the target (with the proof in the
    message), PrecisionExhausted when the budget ends first.

    ``priced`` (the default): a bracket whose ends ``dpverify verify`` could not re-prove within its
    budget is refused before the work (InvalidParameter naming ``digits`` or ``delta``, exit 2):
    every evaluation on a grid is priced first, and the two ends once the proposal is known, at
    the grid the width needs there (:func:`_refusal`; issue 22). False: the realised pair of a
    fixed-batch calibration, one end of the certificate of another template.

    ``for_certificate``: the bracket is to be written as a certificate, which the writer re-proves as
    ``dpverify verify`` does (:func:`dpverify.certificate.writer.unverifiable`): ends the width model
    puts on verify's finest grid, where its looser bounds have no finer grid left, are refused before
    the search (InvalidParameter naming ``digits``).
    """
    t0 = time.monotonic()
    E = V.positive("target_eps", target_eps)
    D = V.open_unit("delta", delta)
    w = V.relative_width(rel_width, "1e-6", "0.5")
    time_budget = V.seconds("time_budget", time_budget)
    if progress is not None and not callable(getattr(progress, "width", None)):
        raise InvalidParameter("progress", f"progress={shown(progress)} must be a dpverify.progress.Progress "
                                           "(a display with a width method) or None")
    if not t.monotone:
        # Without a proof of monotonicity a bracket says nothing about the
        # values in between or beyond; refuse rather than over-claim.
        raise InvalidParameter("template", f"{t.name}: eps is not known to be monotone in "
                               f"{t.parameter}; calibration needs a monotone template")
    s = 1 if t.eps_increasing else -1  # v = s log x: delta(target) increases with v
    model = _Model(t, E, D, t0 + time_budget, lambda: None)
    # what the evaluation in progress may become (the guard's ends): "proposal" (an end of a
    # bracket about x), "limit" (the domain's end, a safe end alone), "safe" / "unsafe" (that end,
    # beside the other end as proved so far)
    stage = ["proposal"]

    def show(width: Optional[float], note: str) -> None:
        if progress is not None:
            progress.width(width, w, note)

    # ---- 1. float proposal: secant in v on the coarse model ------------------
    # finite: v stays where e^(s v) is a normal float (FLOAT_FLOOR, FLOAT_CEIL)
    vmin, vmax = sorted(s * math.log(b) for b in _float_domain(t))

    def at(v: float, up: bool, fine: bool = False) -> Fraction:
        x = math.exp(s * min(max(v, vmin), vmax))
        return _snap(t, x, up if s > 0 else not up, w / 100 if fine else w)

    def limit_safe() -> Optional[End]:
        """The domain's end where delta(target) is largest (``t.upper`` of a parameter eps grows
        with), as a proved safe end, or None (not such a parameter, undecided there, or it fails).
        Safe there, every value of the domain is safe (the template's monotonicity)."""
        if s < 0 or t.upper is None:
            return None
        stage[0] = "limit"
        try:
            lo, hi = model.bounds(t.upper, M_MODEL + 1)
        except (PrecisionExhausted, Undecided, _PastBudget):
            return None
        finally:
            stage[0] = "proposal"
        return End(t.upper, Outcome.HOLDS, lo, hi, None if t.upper in model.closed else M_MODEL + 1) \
            if hi <= D else None

    def probe(x: Fraction, m: int) -> tuple[float, float]:
        """The model at x, or, where the accountant cannot serve the float proposal (a grid past its
        memory cap, a target past the loss support: target eps 1e59 at rate 0.01), the decline of
        the proposal: the domain's unsafe end is checked, and a target met there is met everywhere
        (_DomainSafe); otherwise the accountant's refusal stands (exit 3)."""
        try:
            return model.g(x, m)
        except (PrecisionExhausted, Undecided, _PastBudget) as exc:
            # a value priced past verify's budget is declined as the accountant declines one
            if getattr(exc, "timed", False):
                raise
            end = limit_safe()
            if end is None:
                raise
            raise _DomainSafe(end) from exc

    def guard(x: Fraction, m: int) -> None:
        """Refuse the evaluation of x on the grid 2^-m before its work where the ends it may become
        are priced past verify's budget (:func:`_refusal`): in the proposal, a bracket about x (its
        safe end on 2^-m, its failing end on the coarsest grid); in the search, the candidate end
        beside the other end as proved (or about x on the coarsest grid)."""
        want = stage[0]
        if want == "limit":
            ends = [("safe", x, m)]
        elif want == "proposal":
            ends = [("safe", x, m), ("unsafe", x, M_MODEL)]
        else:
            other = unsafe if want == "safe" else safe
            name = "unsafe" if want == "safe" else "safe"
            ends = [(want, x, m)] + ([(name, x, M_MODEL)] if other is None else
                                     [] if other.grid_exponent is None else
                                     [(name, other.value, other.grid_exponent)])
        about = (f"a bracket about {t.parameter}={brief_str(x)} (a float proposal)" if want == "proposal" else
                 f"the domain's end {t.parameter}={brief_str(x)}" if want == "limit" else
                 f"the {want} end {t.parameter}={brief_str(x)}")
        why = _refusal(t, E, D, w, ends, "refused before computing it", about)
        if why is not None:
            raise why

    if priced:
        model.guard = guard
    safe: Optional[End] = None
    unsafe: Optional[End] = None
    try:
        v, slope, rw1, widths, v_est, proposal = _propose(t, E, D, s, w, vmin, vmax, at, probe, show)
    except _DomainSafe as found:
        show(None, "done")
        return Calibration(t, E, D, found.end, None, w, None, time.monotonic() - t0, model.count, model.log)
    ratio = max(2.0, min(8.0, widths[M_MODEL] / rw1)) if rw1 > 0 else 4.0

    def grid_for(gap: float) -> int:
        m = M_MODEL + 1
        pred = rw1
        while pred > gap and m < M_MAX:
            m += 1
            pred /= ratio
        return max(m, M_MODEL)

    # ---- 2. certified ends ------------------------------------------------------
    if priced:
        # the two ends the search will prove first, on the grids it will choose for them (the width
        # model's grid for their distance from the root, as in the loop below), priced before the
        # search: where verify could not re-prove such a bracket, the digits asked for are refused
        # now, not after minutes of search (issue 22: sigma 0.8, T = 10^4, eps 2 at 1e-6, digits 5
        # searched 2^-16 and 2^-15 for 50 CPU s, and the writer's re-proof refused it after 149)
        planned = []
        for name, sign in (("safe", -1), ("unsafe", 1)):
            x = at(v_est + sign * 0.4 * w, up=(name == "unsafe"))
            planned.append((name, x, grid_for(abs(slope * (s * math.log(float(x)) - v_est)))))
        why = _refusal(t, E, D, w, planned, "refused before the search",
                       f"its ends near {t.parameter}={brief_str(planned[0][1])}")
        if why is not None:
            raise why
        from ..certificate.writer import printed_without_certificate
        from ..recheck.calibrate import FINEST_GRID as VERIFY_FINEST

        from .price import verify_price

        finest = max(m for _, _, m in planned)
        # (verify re-proves an end in closed form or by the Renyi tail without a grid: price 0)
        # (a root estimate at the domain's end: every value may be safe, no failing end to decide there)
        if (for_certificate and finest >= VERIFY_FINEST and vmin < v_est < vmax
                and (verify_price(t, E, D, [e for e in planned if e[2] >= VERIFY_FINEST])[0] or 0) > 0):
            # an end decided on verify's finest grid leaves it no finer one, and its bounds there are
            # looser than the search's: the writer re-proves such an end and refused the ones met (the
            # `calibrate dpsgd --help` example at digits 6: 102 CPU s of search, then 56 of re-proof,
            # exit 2; sigma 0.8, T = 10^4, digits 5: 149 CPU s in all). The width model's grid for the
            # ends, from the proposal's two grids: a float that only chooses to decline
            raise _refusal_text(w, f"its ends near {t.parameter}={brief_str(planned[0][1])} on the grid "
                                   f"2^-{finest} (the width model of 2^-{M_MODEL} and 2^-{M_MODEL + 1}), the "
                                   "finest `dpverify verify` tries: it would have no finer grid where its bounds, "
                                   "looser than the search's, could re-prove them",
                                "refused before the search" + printed_without_certificate("bracket"))
    tries: dict[Fraction, int] = {}

    def width_now() -> Optional[float]:
        if safe is None or unsafe is None:
            return None
        a, b = sorted((safe.value, unsafe.value))
        return float((b - a) / a)

    offset = {"safe": 0.4 * w, "unsafe": 0.4 * w}
    for _ in range(60):
        cur = width_now()
        show(cur, "proving the ends")
        if cur is not None and cur <= w:
            break
        if safe is not None and unsafe is None and t.upper is not None and safe.value == (t.upper if s > 0 else t.lower):
            break  # the whole domain is safe
        want = "safe" if safe is None or (unsafe is not None and
                                           abs(s * math.log(float(safe.value)) - v_est) >=
                                           abs(s * math.log(float(unsafe.value)) - v_est)) else "unsafe"
        sign = -1 if want == "safe" else 1
        target_v = v_est + sign * offset[want]
        x = at(target_v, up=(want == "unsafe"))
        if safe is not None and unsafe is not None:
            # stay strictly inside the current bracket
            a, b = sorted((safe.value, unsafe.value))
            if not a < x < b:
                if t.integer and b - a <= 1:
                    break
                x = (a + b) / 2 if not t.integer else Fraction((a + b) // 2)
        if t.integer and unsafe is not None and want == "safe" and x == unsafe.value:
            x = unsafe.value - s
        if t.integer and safe is not None and want == "unsafe" and x == safe.value:
            x = safe.value + s
        vx = s * math.log(float(x))
        gap = abs(slope * (vx - v_est))
        m = grid_for(gap) + tries.get(x, 0)
        stage[0] = want
        lo, hi = model.bounds(x, m)
        limit = t.lower if s > 0 else t.upper
        if lo > D and want == "safe" and limit is not None and x == limit:
            # brief_str: the exact 1e-300 is a 300-digit decimal, unreadable in one line
            raise Undecided(f"calibrate: proved that no {t.parameter} meets ({brief_str(E)}, "
                            f"{brief_str(D)})-DP: even {t.parameter}={brief_str(x)} fails "
                            f"(delta({brief_str(E)}) >= {rational_decimal(lo, 6, upward=False)} > {brief_str(D)}), and "
                            f"{t.monotonicity}")
        if hi <= D:
            end = End(x, Outcome.HOLDS, lo, hi, None if x in model.closed else m)
            if safe is None or s * (x - safe.value) > 0:
                safe = end
        elif lo > D:
            end = End(x, Outcome.FAILS, lo, hi, None if x in model.closed else m)
            if unsafe is None or s * (x - unsafe.value) < 0:
                unsafe = end
        else:
            tries[x] = tries.get(x, 0) + 1
            if m + 1 > M_MAX or tries[x] > 2:
                offset[want] *= 1.5  # cheaper to step outward than to refine further
        mid = (lo + hi) / 2
        if mid > 0 and (lo > D or hi <= D or hi - lo < mid / 4):
            # a finer grid's midpoint improves the estimate of the root (Newton step)
            v_est_new = vx - (log_fraction(mid) - log_fraction(D)) / slope
            if safe is not None:
                v_est_new = max(v_est_new, s * math.log(float(safe.value)))
            if unsafe is not None:
                v_est_new = min(v_est_new, s * math.log(float(unsafe.value)))
            v_est = min(max(v_est_new, vmin), vmax) if math.isfinite(v_est_new) else v_est
        if (safe is None and want == "safe" and lo > D) or (unsafe is None and want == "unsafe" and hi <= D):
            offset[want] *= 2  # the proposal was off: look further out
    else:
        # what was proved, and the last check, so that an undecidable region says where it is (at
        # target eps 1e59 the Gaussian's closed form steps aside past eps / mu = 1e8 and a grid
        # cannot hold the loss: only "no bracket after 60 checks" was said)
        got = "; ".join(f"{k} end {t.parameter}={brief_str(e.value)}" for k, e in (("safe", safe), ("failing", unsafe))
                        if e is not None) or "no end proved"
        raise PrecisionExhausted(f"calibrate: no bracket of relative width {w:g} after 60 certified checks ({got}; "
                                 f"the last, at {t.parameter}={brief_str(x)}, enclosed delta({brief_str(E)}) in "
                                 f"[{rational_decimal(lo, 3, upward=False)}, {rational_decimal(min(hi, Fraction(1)), 3, upward=True)}] "
                                 f"against delta = {brief_str(D)})")
    if safe is None:
        raise Undecided(f"calibrate: no value of {t.parameter} in its domain was proved to meet "
                        f"({brief_str(E)}, {brief_str(D)})-DP")
    cur = width_now()
    if unsafe is not None and cur is not None and cur > w and not t.integer:
        raise PrecisionExhausted(f"calibrate: bracket of relative width {cur:.3g} > {w:g}")
    mech: Optional[End] = None
    count = model.count
    if t.mechanism_lower is not None:
        # the pair is not known to be tight: prove the mechanism's failure with
        # the realised lower pair (its own certified calibration; only its
        # unsafe end is kept, the value scaled back to this template's)
        show(cur, "proving the mechanism's failure (lower pair)")
        remaining = max(1.0, t0 + time_budget - time.monotonic())
        try:
            low = calibrate_template(t.mechanism_lower, E, D, rel_width=w, time_budget=remaining, priced=False)
        except Undecided:
            low = None
        if low is not None and low.unsafe is not None:
            u = low.unsafe
            mech = End(u.value * t.mechanism_lower_scale, u.outcome, u.delta_lo, u.delta_hi, u.grid_exponent)
            count += low.evaluations
    show(cur if cur is not None else w, "done")
    return Calibration(t, E, D, safe, unsafe, w, proposal, time.monotonic() - t0, count, model.log, mech)
