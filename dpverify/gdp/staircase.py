"""Certified head bound: an enclosure [mu_lo, mu_hi] of sup_{eps in [0, eps_h]} G_f(eps).

One staircase core (GDPT Thm 4.6, App D Alg 2/3) and three algorithms.

The core (what is proved). On a cell [a, b] of [0, eps_h], for a
non-increasing profile f and eps in [a, b]:

    G_f(eps) = mu_GDP(eps, f(eps)) <= mu_GDP(b, f(a)),

because mu_GDP is non-decreasing in its first argument (GDPT Thm 4.5:
0 <= d mu_GDP / d eps <= sqrt(2 pi)/2) and increasing in its second (App A.5),
while f(eps) <= f(a). This is the upper staircase G^+ of Thm 4.6. To *prove*
mu_GDP(b, f(a)) <= T without isolating a root we test f(a) <= delta_T(b)
(delta_T is increasing in T), one ball comparison. For a profile not known
to be non-increasing (``expr``), f(a) is replaced by the enclosure of f over
the whole cell, which is sound for any function. Lower bounds are certified
point values G_f(x) >= mu_lo (root isolation at the lower end of f(x)); they
dominate the paper's lower staircase mu_GDP(x_i, f(x_{i+1})) <= G_f(x_i).

Gap. With point values, mu_GDP(b, f(a)) - G_f(a) =
mu_GDP(b, f(a)) - mu_GDP(a, f(a)) <= (sqrt(2 pi)/2)(b - a) by Thm 4.5, so
on a grid of step D the enclosure width is at most sqrt(2 pi) D / 2 plus the
root-isolation widths; in particular it is <= sqrt(2 pi) D, the bound (3) of
Thm 4.6.

Grid (corrected). The printed grid is garbled: x_i = iD + eps_h would start
at eps_h, and n = ceil(sqrt(8 c pi eps_h)) + 1 is not dimensionally right.
Derived here: x_i = i D for i = 0..n with D = eps_h / n covers [0, eps_h];
for a margin m (c = 1/m in the paper), spend m/2 on the staircase gap:
sqrt(2 pi) D <= m/2, i.e. n = ceil(2 sqrt(2 pi) eps_h / m) = ceil(sqrt(8 pi) c eps_h)
(the paper's sqrt(8 c pi eps_h) is this with c and eps_h pulled under the
root by extraction). Also note: the paper's Alg 2 assigns
mu_GDP^+(x^-, delta(x^+)) (the *lower* staircase value, iD vs (i+1)D) to its
"mu^+" and the upper staircase value to "mu^-"; here the upper bound is
always mu_GDP(x_{i+1}, f(x_i)).

Algorithms:

* ``naive`` (Alg 2): every cell: one root isolation for the upper staircase
  value and one for the point value. Each root is proved in a bracket of relative
  width below 2^-23 near a proposal from its neighbours' (:func:`dpverify.gdp.mu_gdp.mu_gdp_near`);
  the reported ends are isolated from scratch (:func:`dpverify.gdp.transform.mu_bracket`)
  only for the cells whose bracket does not prove them below another cell's end, so
  the result is the one isolating every root from scratch gives (:func:`_max_end`);
* ``shuffled`` (Alg 3): cells in a random (seeded) order; a root is isolated
  only when the cheap test shows the cell can beat the current bound, so
  O(log n) isolations in expectation, but still n + 1 profile evaluations;
* ``adaptive`` (branch and bound): start from 8 cells; a cell is closed once
  it is proved <= T = mu_lo + margin; open cells are halved, the midpoint's
  G_f is isolated only if it can raise mu_lo. mu_hi = T, mu_lo = the best
  certified point value, so the width is exactly the margin. Profile
  evaluations scale with the size of the near-optimal set, not with eps_h/m.

Profile evaluations (calls of ``profile.delta``) are counted in every result.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Optional

from flint import arb

from .. import _validate as V
from .._validate import ExactInput
from ..ball import arb_to_fraction, ball, endpoints, exact_str, point, working_precision
from ..errors import InvalidParameter, PrecisionExhausted
from ..mechanisms.base import Profile
from ..mechanisms.gaussian import delta_mu_ball
from ..verdict import Enclosure
from .mu_gdp import mu_gdp_near
from .transform import INF, mu_bracket
from ..certificate.ranges import EPS_H, MARGIN
from ..limits import MAX_STAIRCASE_CELLS, MAX_STAIRCASE_DEPTH, MAX_STAIRCASE_SPLITS

__all__ = ["HeadBound", "head_bound", "is_nonincreasing", "grid_size", "ALGORITHMS", "SQRT_2PI_UPPER"]

ALGORITHMS = ("adaptive", "naive", "shuffled")
#: a rational upper bound of sqrt(2 pi) = 2.50662827...
SQRT_2PI_UPPER = Fraction(250663, 100000)
#: cap on adaptive splits (a flat G_f, e.g. the Gaussian's, needs ~eps_h/margin cells)
_BITS = 128


@dataclass(frozen=True)
class HeadBound:
    """Certified enclosure of sup_{[0, eps_h]} G_f, and how it was found.

    ``argmax`` is a point x* with G_f(x*) >= mu_lo (certified); ``breakpoints``
    is the partition of [0, eps_h] whose every cell [a, b] was proved to have
    mu_GDP(b, f(a)) <= mu_hi (recorded when it is not too long), ``unbounded``
    is True when f(x) >= 1 somewhere (then sup = +inf).
    """

    enclosure: Enclosure
    eps_h: Fraction
    margin: Fraction
    algorithm: str
    argmax: Fraction
    profile_evaluations: int
    delta_mu_evaluations: int
    root_isolations: int
    cells: int
    grid_step: Optional[Fraction] = None
    unbounded: bool = False
    breakpoints: Optional[tuple[Fraction, ...]] = field(default=None, repr=False)
    #: cells closed by the Taylor model (:mod:`dpverify.gdp.taylor`) rather than the staircase
    taylor_cells: int = 0
    #: the head came from a closed form (the Gaussian: G_f = mu0), no cells
    closed_form: bool = False

    @property
    def gap_bound(self) -> Optional[Fraction]:
        """sqrt(2 pi) D (upper bound) for grid algorithms (GDPT Thm 4.6, eq. 3)."""
        return None if self.grid_step is None else SQRT_2PI_UPPER * self.grid_step


def grid_size(eps_h: Fraction, margin: Fraction) -> int:
    """n = ceil(2 sqrt(2 pi) eps_h / margin) (derived above), at least 1."""
    if eps_h == 0:
        return 1
    return max(1, math.ceil(2 * SQRT_2PI_UPPER * eps_h / margin))


def is_nonincreasing(profile: Profile) -> bool:
    """Is the profile known to be non-increasing on [0, inf)? Our profiles say
    so with ``nonincreasing``; the Gaussian (d delta_mu / d eps < 0, GDPT
    App A.5) and the worst cases of GDPT Thm 3.1 are by their formulas."""
    from ..mechanisms.approx_dp import ApproxDPProfile
    from ..mechanisms.gaussian import GaussianProfile

    from ..mechanisms.randomized_response import _RRProfile

    if isinstance(profile, (GaussianProfile, ApproxDPProfile, _RRProfile)):
        return True  # RR: LT Thm 3.4's pieces are non-increasing in t
    return bool(getattr(profile, "nonincreasing", False))


@dataclass
class _Root:
    """mu_GDP(eps, y) at an exact point y, proved in [lo, hi]. ``end`` is the end of
    :func:`dpverify.gdp.transform.mu_bracket` (the upper one if ``upper``) that the staircase
    reports, isolated from scratch on demand (:meth:`reference`); known from the start when the
    bracket is that isolation itself, or y is at a range end (0 or +inf, lo = hi = end)."""

    eps: Fraction
    y: arb
    upper: bool
    lo: arb
    hi: arb
    end: Optional[arb] = None

    @classmethod
    def exact(cls, eps: Fraction, value: arb) -> "_Root":
        return cls(eps, value, False, value, value, value)

    def reference(self, digits: int) -> arb:
        if self.end is None:
            self.end = mu_bracket(self.eps, self.y, digits)[self.upper]
            # the premise of _max_end, lo / g <= end <= hi g (g = 1 + 10^-digits), checked where it
            # is used: never seen to fail, fatal if it did
            grow = ball(1 + Fraction(1, 10**digits))
            if not (self.lo <= self.end * grow and self.end <= self.hi * grow):
                raise RuntimeError(f"mu_GDP end outside its proved bracket at eps={exact_str(self.eps)}")
        return self.end

    def mid(self) -> arb:
        return (self.lo + self.hi) / 2


def _proposal(roots: list[_Root]) -> Optional[arb]:
    """The next cell's root, proposed from the last three: the cells are equally spaced and G_f
    is smooth between kinks, so the parabola through them is close (error ~ D^3 G_f'''). Only a
    proposal (:func:`mu_gdp_near` proves or refuses it); None when there is nothing
    positive to start from, fewer points nearer the start or a range end."""
    mids: list[arb] = []
    for r in reversed(roots[-3:]):
        if not (r.lo > 0 and r.hi.is_finite()):
            break
        mids.append(r.mid())
    if not mids:
        return None
    if len(mids) == 1:
        return point(mids[0])
    if len(mids) == 2:
        return point(2 * mids[0] - mids[1])
    return point(3 * mids[0] - 3 * mids[1] + mids[2])


def _max_end(roots: list[_Root], digits: int) -> tuple[arb, Fraction]:
    """(max of the roots' ends, the eps of the first root attaining it), (0, 0) if none exceeds 0:
    what a scan ``if end > best: best, at = end, eps`` over every end isolated from scratch gives.

    mu_bracket's ends lie within a factor g = 1 + 10^-digits of the root (its relative width),
    so an end not yet isolated lies in [lo / g, hi g], a known one in [end, end]. Let F be the
    largest of these lower bounds, attained by root k. Only the roots whose upper bound reaches F
    are isolated (k among them): any other has end < F <= end(k), so it is neither the maximum
    nor tied with it. On exact points: hi < c, with c <= F / g, proves hi g < F."""
    if not roots:
        return arb(0), Fraction(0)
    grow = ball(1 + Fraction(1, 10**digits))
    top_lo = max((r.lo for r in roots if r.end is None), default=None)
    ends = [r.end for r in roots if r.end is not None]
    floor = endpoints(top_lo / grow)[0] if top_lo is not None else ends[0]
    for end in ends:
        if end > floor:
            floor = end
    cut = endpoints(floor / grow)[0]
    best, at = arb(0), Fraction(0)
    for r in roots:
        if (r.hi < cut) if r.end is None else (r.end < floor):
            continue
        end = r.reference(digits)
        if end > best:
            best, at = end, r.eps
    return best, at


class _Core:
    """Shared staircase machinery: cached, counted profile evaluations and
    the certified cell / point tests."""

    def __init__(self, profile: Profile, margin: Fraction) -> None:
        self.profile = profile
        self.margin = margin
        self.digits = max(8, math.ceil(-math.log10(float(margin))) + 4)
        self.cache: dict[Fraction, arb] = {}
        self.profile_evaluations = 0
        self.delta_mu_evaluations = 0
        self.root_isolations = 0
        self.monotone = is_nonincreasing(profile)
        from .taylor import profile_series

        self.series = profile_series(profile)
        self.taylor_cells = 0

    def f(self, x: Fraction, bits: int = _BITS) -> arb:
        if bits == _BITS and x in self.cache:
            return self.cache[x]
        with working_precision(bits):
            v = self.profile.delta(ball(x))
        self.profile_evaluations += 1
        if bits == _BITS:
            self.cache[x] = v
        return v

    def f_cell(self, a: Fraction, b: Fraction, bits: int = _BITS) -> arb:
        """A ball whose upper end bounds f on [a, b]."""
        if self.monotone:
            return self.f(a, bits)
        with working_precision(bits):
            cell = ball(a).union(ball(b))
            v = self.profile.delta(cell)
        self.profile_evaluations += 1
        return v

    def cell_le(self, a: Fraction, b: Fraction, t: Fraction, taylor: bool = True) -> bool:
        """True only if sup_{[a, b]} G_f <= t is proved: f_up <= delta_t(b)
        (GDPT Thm 4.6 staircase), else by the Taylor model of H = log delta_t - log f
        (:mod:`dpverify.gdp.taylor`)."""
        for bits in (_BITS, 4 * _BITS):
            fa = self.f_cell(a, b, bits)
            if not fa.is_finite():
                return False
            with working_precision(bits):
                if t == 0:
                    return bool(fa <= 0)
                self.delta_mu_evaluations += 1
                dt = delta_mu_ball(ball(t), ball(b))
                if fa <= dt:
                    return True
                if fa > dt:
                    break  # the staircase cannot close this cell; the Taylor model may
        return taylor and self._taylor_le(a, b, t)

    def _taylor_le(self, a: Fraction, b: Fraction, t: Fraction) -> bool:
        """The Taylor-model test (:mod:`dpverify.gdp.taylor`): proves cells of
        width ~ margin^(1/13) where G_f is flat, instead of ~ margin."""
        if self.series is None or t <= 0:
            return False
        from .taylor import cell_le_taylor

        with working_precision(2 * _BITS):
            self.delta_mu_evaluations += 2
            ok = cell_le_taylor(self.series, a, b, t)
        self.taylor_cells += ok
        return ok

    def may_exceed(self, x: Fraction, t: Fraction) -> bool:
        """False only if G_f(x) <= t is proved (cheap test before a root isolation)."""
        fx = self.f(x)
        if not fx.is_finite():
            return True
        with working_precision(_BITS):
            if t == 0:
                return not bool(fx <= 0)
            self.delta_mu_evaluations += 1
            return not bool(fx <= delta_mu_ball(ball(t), ball(x)))

    def g_lower(self, x: Fraction) -> arb:
        """Exact point <= G_f(x) (0 if f(x) may be 0, +inf if f(x) >= 1)."""
        return self.lower_root(x).reference(self.digits)

    def cell_upper(self, a: Fraction, b: Fraction) -> arb:
        """Exact point >= mu_GDP(b, f_up(a)) (+inf when f may reach 1)."""
        return self.upper_root(a, b).reference(self.digits)

    def lower_root(self, x: Fraction, guess: Optional[arb] = None) -> _Root:
        """The root whose lower end is :meth:`g_lower`; ``guess``: see :meth:`_root`."""
        fx = self.f(x)
        if not fx.is_finite():
            return _Root.exact(x, arb(0))
        return self._root(x, endpoints(fx)[0], False, guess)

    def upper_root(self, a: Fraction, b: Fraction, guess: Optional[arb] = None) -> _Root:
        """The root whose upper end is :meth:`cell_upper`; ``guess``: see :meth:`_root`."""
        fa = self.f_cell(a, b)
        if not fa.is_finite():
            return _Root.exact(b, INF)
        return self._root(b, endpoints(fa)[1], True, guess)

    def _root(self, eps: Fraction, y: arb, upper: bool, guess: Optional[arb]) -> _Root:
        """mu_GDP(eps, y), proved near ``guess`` when that succeeds (its end left to
        :meth:`_Root.reference`), else isolated from scratch."""
        if y > 0 and y < 1:
            self.root_isolations += 1
            near = None if guess is None else mu_gdp_near(eps, y, guess)
            if near is not None:
                return _Root(eps, y, upper, near[0], near[1])
        lo, hi = mu_bracket(eps, y, self.digits)
        return _Root(eps, y, upper, lo, hi, hi if upper else lo)


def _validate(eps_h: ExactInput, margin: ExactInput, algorithm: str) -> tuple[Fraction, Fraction]:
    # the ranges verify applies to a certificate's eps_h and margin too (one table: certificate.ranges)
    eh, m = V.real("eps_h", eps_h), V.real("margin", margin)
    if not EPS_H.contains(eh):
        raise InvalidParameter("eps_h", f"eps_h={eps_h} must be {EPS_H.requirement()}")
    if not MARGIN.contains(m):
        raise InvalidParameter("margin", f"margin={margin} must be {MARGIN.requirement()}")
    if algorithm not in ALGORITHMS:
        raise InvalidParameter("algorithm", f"algorithm={algorithm!r} must be one of {', '.join(ALGORITHMS)}")
    return eh, m


def head_bound(
    profile: Profile,
    eps_h: ExactInput,
    margin: ExactInput,
    algorithm: str = "adaptive",
    *,
    seed: int = 0,
    max_cells: int = MAX_STAIRCASE_CELLS,
    record_limit: int = 20_000,
) -> HeadBound:
    """Certified enclosure of sup_{eps in [0, eps_h]} G_f(eps) (GDPT Thm 4.1, 4.6).

    Returns mu_lo <= sup <= mu_hi with mu_hi - mu_lo <= margin (grid
    algorithms: <= sqrt(2 pi) D / 2 + root widths <= margin). If f(x) >= 1 at
    a point the supremum is +inf (``unbounded``). Raises InvalidParameter for
    a grid of more than ``max_cells`` cells (naive / shuffled), and
    PrecisionExhausted if a cell cannot be closed.
    """
    eh, m = _validate(eps_h, margin, algorithm)
    core = _Core(profile, m)
    from ..mechanisms.gaussian import GaussianProfile

    if isinstance(profile, GaussianProfile):
        # G_f is constant: f = delta_mu0 gives mu_GDP(eps, f(eps)) = mu0 for every
        # eps, since delta_mu(eps) is strictly increasing in mu (GDPT Def 4.1,
        # App A.5). The head is exactly [mu0, mu0] at every eps_h, no cells.
        with working_precision(_BITS):
            # exact points around mu0, widened by 2^-100 mu0 so that an independent
            # re-derivation with its own error bar lands inside
            lo0, hi0 = endpoints(ball(profile.mu) * (1 + arb(0, 2.0**-100)))
        return HeadBound(Enclosure(lo0, hi0, core.digits, _BITS), eh, m, algorithm, Fraction(0),
                         0, 0, 0, 0, None, False, None, closed_form=True)
    f0 = core.f(Fraction(0))
    if f0.is_finite() and f0 >= 1:
        return _unbounded(core, eh, m, algorithm)
    if eh == 0:
        with working_precision(_BITS):
            lo = core.g_lower(Fraction(0))
            hi = core.cell_upper(Fraction(0), Fraction(0))
        return _result(core, lo, hi, eh, m, algorithm, Fraction(0), 1, None, (Fraction(0), Fraction(0)))
    if algorithm == "adaptive":
        return _adaptive(core, eh, m, record_limit, min(max_cells, MAX_STAIRCASE_SPLITS))
    n = grid_size(eh, m)
    if n > max_cells:
        raise InvalidParameter(
            "margin",
            f"the {algorithm} algorithm needs a grid of {n} cells for eps_h={exact_str(eh)}, "
            f"margin={exact_str(m)} (more than {max_cells}); use --algorithm adaptive or a larger margin",
        )
    if algorithm == "naive":
        return _naive(core, eh, m, n, record_limit)
    return _grid(core, eh, m, n, seed, record_limit)


def _unbounded(core: _Core, eh: Fraction, m: Fraction, algorithm: str, at: Fraction = Fraction(0)) -> HeadBound:
    """f(at) >= 1 was proved: G_f(at) = +inf (``argmax`` records ``at``)."""
    enc = Enclosure(INF, INF, 15, _BITS)
    return HeadBound(enc, eh, m, algorithm, at, core.profile_evaluations,
                     core.delta_mu_evaluations, core.root_isolations, 0, None, True, None)


def _result(core: _Core, lo: arb, hi: arb, eh: Fraction, m: Fraction, algorithm: str,
            argmax: Fraction, cells: int, step: Optional[Fraction],
            breakpoints: Optional[tuple[Fraction, ...]]) -> HeadBound:
    if not lo.is_finite():
        return _unbounded(core, eh, m, algorithm, argmax)
    if not hi.is_finite():
        raise PrecisionExhausted(
            f"the {algorithm} staircase could not bound G_f above: the profile may reach 1 on a cell "
            "although no grid point was proved to (a finer grid or the adaptive algorithm may decide it)"
        )
    with working_precision(_BITS):
        hi = hi if (not hi.is_finite() or hi >= lo) else lo
    enc = Enclosure(lo, hi, core.digits, _BITS)
    return HeadBound(enc, eh, m, algorithm, argmax, core.profile_evaluations,
                     core.delta_mu_evaluations, core.root_isolations, cells, step, False, breakpoints,
                     taylor_cells=core.taylor_cells)


def _naive(core: _Core, eh: Fraction, m: Fraction, n: int, record_limit: int) -> HeadBound:
    """GDPT App D Alg 2 on the grid x_i = i eh / n: both roots of every cell, proved near their
    neighbours' (module docstring); the ends reported are those of a from-scratch isolation of
    every root (:func:`_max_end`), and so are the counts (each f(x) and root in the same order)."""
    step = eh / n
    xs = [step * i for i in range(n + 1)]
    lows: list[_Root] = []
    ups: list[_Root] = []
    up_unbounded = False
    with working_precision(_BITS):
        for i in range(n):
            a, b = xs[i], xs[i + 1]
            low = core.lower_root(a, _proposal(lows))
            if not low.lo.is_finite():  # f(a) >= 1 proved: G_f(a) = +inf
                return _unbounded(core, eh, m, "naive", a)
            lows.append(low)
            if up_unbounded:
                continue  # some cell is already unbounded above; only lower bounds can change
            up = core.upper_root(a, b, _proposal(ups))
            if up.hi.is_finite():
                ups.append(up)
            else:
                up_unbounded = True
        lo, best = _max_end(lows, core.digits)
        hi = INF if up_unbounded else _max_end(ups, core.digits)[0]
        # may_exceed decides nothing here (naive isolates G_f(eh) regardless); it is kept for the
        # recorded delta_mu_evaluations count, which every naive certificate carries
        core.may_exceed(eh, arb_to_fraction(lo))
        v = core.g_lower(eh)
        if v > lo:
            lo, best = v, eh
    bps = tuple(xs) if n + 1 <= record_limit else None
    return _result(core, lo, hi, eh, m, "naive", best, n, step, bps)


def _grid(core: _Core, eh: Fraction, m: Fraction, n: int, seed: int, record_limit: int) -> HeadBound:
    """GDPT App D Alg 3 (``shuffled``): cells in a seeded random order, a root isolated only where
    the cheap test shows the cell can beat the current bound."""
    algorithm = "shuffled"
    step = eh / n
    xs = [step * i for i in range(n + 1)]
    order = list(range(n))
    random.Random(seed).shuffle(order)
    lo = arb(0)
    hi = arb(0)
    # the bounds as the rationals the cell tests take, converted when they move (a few times), not per cell
    lo_q = hi_q = Fraction(0)
    best = Fraction(0)
    with working_precision(_BITS):
        for i in order:
            a, b = xs[i], xs[i + 1]
            # lower: certified point value G_f(a)
            if core.may_exceed(a, lo_q):
                v = core.g_lower(a)
                if not v.is_finite():
                    return _unbounded(core, eh, m, algorithm, a)
                if v > lo:
                    lo, best, lo_q = v, a, arb_to_fraction(v)
            # upper: staircase value mu_GDP(b, f(a))
            if not hi.is_finite():
                continue  # some cell is already unbounded above; only lower bounds can change
            if not core.cell_le(a, b, hi_q):
                u = core.cell_upper(a, b)
                if not u.is_finite():
                    hi = u
                elif u > hi:
                    hi, hi_q = u, arb_to_fraction(u)
        if core.may_exceed(eh, lo_q):
            v = core.g_lower(eh)
            if v > lo:
                lo, best = v, eh
    bps = tuple(xs) if n + 1 <= record_limit else None
    return _result(core, lo, hi, eh, m, algorithm, best, n, step, bps)


def _adaptive(core: _Core, eh: Fraction, m: Fraction, record_limit: int, max_splits: int) -> HeadBound:
    # a hair inside the margin, so that the outward-rounded decimals of
    # [mu_lo, mu_lo + m_in] still have width <= m
    m_in = m - m / 2**20
    k0 = 8
    points = [eh * i / k0 for i in range(k0 + 1)]
    with working_precision(_BITS):
        lo = core.g_lower(Fraction(0))
        best = Fraction(0)

        def consider(x: Fraction) -> None:
            nonlocal lo, best
            if not lo.is_finite():  # already unbounded: f >= 1 somewhere
                return
            if core.may_exceed(x, arb_to_fraction(lo)):
                v = core.g_lower(x)
                if v > lo:
                    lo, best = v, x

        for x in points[1:]:
            consider(x)
        cells = [(points[i], points[i + 1]) for i in range(k0)]
        closed: list[tuple[Fraction, Fraction]] = []
        depth = splits = 0
        while cells:
            if not lo.is_finite():
                return _unbounded(core, eh, m, "adaptive", best)
            t = arb_to_fraction(lo) + m_in
            still = []
            for c in cells:
                (closed if core.cell_le(c[0], c[1], t) else still).append(c)
            if not still:
                break
            depth += 1
            splits += len(still)
            if splits > max_splits:
                raise PrecisionExhausted(
                    f"the adaptive staircase needs more than {max_splits} cell splits at margin "
                    f"{exact_str(m)} on [0, {exact_str(eh)}] (G_f is nearly flat over a long range, as for "
                    "the Gaussian); use a larger --margin or a smaller --eps-h (a closed-form tail covers the rest)"
                )
            if depth > MAX_STAIRCASE_DEPTH:
                raise PrecisionExhausted(
                    f"the adaptive staircase could not close {len(still)} cell(s) near "
                    f"eps={float(still[0][0]):.6g} at margin {exact_str(m)}"
                )
            cells = []
            for a, b in still:
                mid = (a + b) / 2
                consider(mid)
                cells.append((a, mid))
                cells.append((mid, b))
        hi = endpoints(ball(arb_to_fraction(lo) + m_in))[1]  # exact point >= mu_lo + m_in
    bps = None
    # the recorded partition is re-checked cell by cell with the staircase
    # rule f(a) <= delta_mu_hi(b); a Taylor-closed cell need not pass it
    if len(closed) + 1 <= record_limit and core.taylor_cells == 0:
        bps = tuple(sorted({c[0] for c in closed} | {c[1] for c in closed}))
    return _result(core, lo, hi, eh, m, "adaptive", best, len(closed), None, bps)
