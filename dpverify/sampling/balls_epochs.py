"""Balls-in-bins DP-SGD over E >= 2 epochs: a certified enclosure of delta(eps)
and epsilon(delta) by adaptive composition of the one-epoch dominating pair.

Which runs. Every epoch re-allocates the n records to its T batches afresh,
independently of the earlier epochs (a new uniform assignment per epoch), and
every step may depend on the outputs of all earlier steps (adaptive DP-SGD).
Then the run is an adaptive composition of E one-epoch mechanisms, each of
which is dominated by the pair (P, Q) of Chua et al. (AISTATS 2025, the
balls-and-bins ABLQ pair; :mod:`dpverify.sampling.balls`), and by AFA Thm 10
(adaptive composition of dominating pairs: if (P_e, Q_e) dominates the e-th
mechanism for every fixed output of the earlier ones, the product pair
dominates the composition) the E-fold product (P^E, Q^E) dominates the run.
Conditions: the same relation (add, remove, or add/remove taking the worse
direction per eps: the composed pair of each direction dominates that
direction, AFA Thm 10 applied to (P, Q) and to (Q, P) separately), the same T
and sigma in every epoch, and fresh allocations per epoch. A run that keeps one
allocation for all epochs (persistent bins) is NOT covered (its epochs are
not independent given the data) and is not accepted here.

The bound. For a pair (P, Q) with privacy loss X = log(dP/dQ) under P,
H_{e^eps}(P || Q) = E_P[(1 - e^{eps - X})_+] (AFA Lemma 37, mass at +inf
included: the integrand is 1 there); for the product pair the loss is the sum
of E independent copies, and the integrand is nonnegative, <= 1 and
nondecreasing in every copy. Hence:

* upper: any super-measure nu >= the law of some X_up >= X (a coupling), with
  values on the grid Delta Z or +inf, gives
  delta <= sum_k (nu_f^{*E})_k (1 - e^{eps - k Delta})_+ + (|nu|^E - |nu_f|^E),
  where nu_f is nu without its +inf atom (the second term bounds every
  composed outcome with a +inf factor by 1);
* lower: any sub-measure mu <= the law of some X_dn <= X on Delta Z gives
  delta >= sum_k (mu^{*E})_k (1 - e^{eps - k Delta})_+.

Remove direction (pair (P, Q)): X = log L, L = S / T, with S the sum of the T
log-normals Y_t. Under P the law of L is its law under N(e_1, sigma^2 I) (P is
the uniform mixture of the T shifted Gaussians and L is symmetric in the
coordinates), i.e. Y_1 is the tilted log-normal with F_1(y) = Phi(sigma log y -
1/(2 sigma)) and Y_2..Y_T are as under Q, F(y) = Phi(sigma log y + 1/(2
sigma)). On the linear grid of the one-epoch module (cells of the recorded
``bins_grid``), S_up (every Y at its cell's upper edge, a Y above the grid top
sends the outcome to +inf) is >= S, and S_dn (lower edges, the tail dropped)
is <= S; their P-laws are products of one factor of F_1's cell masses and the
(T-1)-th power of F's, rounded up (super-measure) or down (sub-measure) to
units 2^-128, cut at degree ``keep``. Upper: X_up = ceil(log(S_up h / T) /
Delta) Delta; the mass of S_up >= keep h or a tail cell goes to +inf, bounded
by 1 - (the sub-measure of {S_up < keep h}). Lower: X_dn = floor(log(S_dn h /
T) / Delta) Delta, S_dn = 0 dropped.

Add direction (pair (Q, P)): the loss is Z = -log L under Q; Q-laws of S_dn
(masses up, a tail Y at the top edge: still <= Y) and S_up (masses down, tail
dropped). Upper: Z_up = ceil(-log(S_dn h / T) / Delta) Delta, S_dn = 0 at +inf;
the mass not represented below degree ``keep`` (1 - the sub-measure of
{S_dn < keep h}) sits at S >= min(keep, top) h and goes to that loss (rounded
up). Lower: Z_dn from S_up, floor.

Window (a hint): per epoch, indices below the window's low end are raised to
it (upper: the integrand is nondecreasing) or dropped (lower), indices above
its high end go to +inf (upper) or are dropped (lower). So any window, any
Delta = 2^-m and any linear grid give valid bounds; the floats only choose them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Optional

from flint import arb, fmpz_poly

from .. import _validate as V
from ..certificate.format import BINS_MAX_COMPOSED, BINS_MAX_EPS, BINS_MAX_WORK
from ..certificate.prose import BINS_EPOCHS_SOURCE
from ..ball import ball, working_precision
from ..errors import InvalidParameter, PrecisionExhausted
from ..recheck.bins_plan import REFINED_DEGREE, ROUNDING_BUDGET, base_degree, cell_exponent, s_max, y_upper
from . import balls as B

__all__ = ["LossGrid", "enclose_eps", "enclose_delta", "SOURCE"]

#: bits of the fixed-point weights e^{-Delta} in the hinge sums
_W_BITS = 200
#: composed points the proposed loss grid aims at
_POINTS = 1 << 20
#: per-epoch mass (float proposal) left outside the loss window at each end
_WINDOW_TAIL = 1e-30

SOURCE = BINS_EPOCHS_SOURCE


@dataclass(frozen=True)
class LossGrid:
    """The loss grid (a hint): step 2^-m; per direction the window [lo, hi] of
    per-epoch indices."""

    m: int
    remove_lo: int
    remove_hi: int
    add_lo: int
    add_hi: int

    def to_json(self) -> dict[str, int]:
        return {"m": self.m, "remove_lo": self.remove_lo, "remove_hi": self.remove_hi,
                "add_lo": self.add_lo, "add_hi": self.add_hi}

    def window(self, d: str) -> tuple[int, int]:
        return (self.remove_lo, self.remove_hi) if d == "remove" else (self.add_lo, self.add_hi)


# --------------------------------------------------------------------------- one epoch's loss law


def _mul(p: fmpz_poly, q: fmpz_poly, up: bool, keep: int, tick: "B.Tick" = None) -> fmpz_poly:
    """p q rescaled to units 2^-U, up (exact ceiling) or down, degrees < keep."""
    from ..pld.units import _ones, floor_shift

    if tick:
        tick()
    r = (p * q).truncate(keep)
    if up and r.length():
        r = r + _ones(r.length()) * ((1 << B.UNIT_BITS) - 1)
    return floor_shift(r, B.UNIT_BITS)


def _linear_laws(sigma: Fraction, T: int, grid: "B.Grid", dirs: tuple[str, ...], tick: "B.Tick" = None) -> dict[str, Any]:
    """The polynomials in S / h (units 2^-U) each direction needs (module docstring)."""
    from ..pld.convolve import poly_power
    from ..recheck.bins import place

    ks = B.edges(grid)
    keep = grid.keep
    with working_precision(B._PREC):
        s = ball(sigma)
        half = 1 / (2 * s)
        hb = ball(grid.h)
        logs = [None] + [(hb * k).log() for k in ks[1:]]

        def masses(shift: arb) -> tuple[list[int], list[int], int]:
            F = [arb(0)] + [B.normal_cdf(s * lg + shift) for lg in logs[1:]]
            w = [F[i] - F[i - 1] for i in range(1, len(ks))]
            unit = arb(2) ** B.UNIT_BITS
            tail = B.normal_cdf(-(s * logs[-1] + shift))
            return ([max(0, B._int(x * unit, True)) for x in w], [max(0, B._int(x * unit, False)) for x in w],
                    max(0, B._int(tail * unit, True)))

        q_hi, q_lo, q_tail = masses(half)
        p_hi, p_lo, _ = masses(-half) if "remove" in dirs else (None, None, 0)

    def pw(c: list[int], n: int, up: bool) -> fmpz_poly:
        if n == 0:  # T = 1: no other coordinate (the unit mass at degree 0)
            return fmpz_poly([1 << B.UNIT_BITS])
        return poly_power(c, n, B.UNIT_BITS, up, keep=keep, tick=tick)

    out: dict[str, Any] = {}
    if "remove" in dirs:  # P-law: one tilted factor times the (T-1)-th power of Q's cells
        out["remove"] = {
            "up_hi": _mul(fmpz_poly(place(ks, p_hi, 1, 0)), pw(place(ks, q_hi, 1, 0), T - 1, True), True, keep, tick),
            "up_lo": _mul(fmpz_poly(place(ks, p_lo, 1, 0)), pw(place(ks, q_lo, 1, 0), T - 1, False), False, keep, tick),
            "dn_lo": _mul(fmpz_poly(place(ks, p_lo, 0, 0)), pw(place(ks, q_lo, 0, 0), T - 1, False), False, keep, tick),
        }
    if "add" in dirs:
        out["add"] = {"dn_hi": pw(place(ks, q_hi, 0, q_tail), T, True), "dn_lo": pw(place(ks, q_lo, 0, 0), T, False),
                      "up_lo": pw(place(ks, q_lo, 1, 0), T, False)}
    return out


def _log_index(j: int, hT: arb, m: int) -> tuple[int, int]:
    """(floor, ceil) of log(j h / T) 2^m, decided exactly (precision raised while a
    ball holds an integer; log(j h / T) is 0 exactly when j h = T)."""
    if hT * j == 1:
        return 0, 0
    for prec in (64, 256, 512, 2048):
        with working_precision(prec):
            v = (hT * j).log() * (arb(2) ** m)
            lo, hi = B._int(v, False), B._int(v, True)
            if hi - lo == 1:
                return lo, hi
    # undecided at 2048 bits (never seen): the sound sides, one unit apart at worst
    return lo, hi


@dataclass
class _EpochLaw:
    """One epoch's loss law on 2^-m Z (units 2^-U) for one direction: upper
    super-measure ``up`` (index lo + k) with ``up_inf`` at +inf; lower sub-measure
    ``low`` on the same window."""

    lo: int
    up: list[int]
    up_inf: int
    low: list[int]


def _epoch_law(L: dict[str, Any], d: str, T: int, grid: "B.Grid", lg: LossGrid, tick: "B.Tick" = None) -> _EpochLaw:
    hT = ball(grid.h) / T
    keep = grid.keep
    lo, hi = lg.window(d)
    n = hi - lo + 1
    up, low = [0] * n, [0] * n
    up_inf = 0
    idx_cache: dict[int, tuple[int, int]] = {}

    def idx(j: int) -> tuple[int, int]:
        if j not in idx_cache:
            if tick and not j & 4095:
                tick()
            idx_cache[j] = _log_index(j, hT, lg.m)
        return idx_cache[j]

    def add_up(i: Optional[int], mass: int) -> None:  # i None: +inf
        nonlocal up_inf
        if mass <= 0:
            return
        if i is None or i > hi:
            up_inf += mass
        else:
            up[max(i, lo) - lo] += mass

    def add_low(i: int, mass: int) -> None:
        if mass > 0 and lo <= i <= hi:
            low[i - lo] += mass

    one = 1 << B.UNIT_BITS
    if d == "remove":
        C = L["up_hi"]
        for j in range(1, C.length()):
            add_up(idx(j)[1], int(C[j]))
        sub = sum(int(c) for c in L["up_lo"].coeffs())
        add_up(None, one - sub)  # S_up >= keep h or a tail cell: +inf
        C = L["dn_lo"]
        for j in range(1, C.length()):
            add_low(idx(j)[0], int(C[j]))
    else:
        C = L["dn_hi"]
        if C.length():
            add_up(None, int(C[0]))  # S_dn = 0: Z = +inf
        for j in range(1, C.length()):
            add_up(-idx(j)[0], int(C[j]))
        sub = sum(int(c) for c in L["dn_lo"].coeffs())
        far = min(keep, grid.top)  # every outcome not represented has S >= far h
        add_up(-idx(far)[1] if far >= 1 else None, one - sub)
        C = L["up_lo"]
        for j in range(1, C.length()):
            add_low(-idx(j)[1], int(C[j]))
    return _EpochLaw(lo, up, up_inf, low)


# --------------------------------------------------------------------------- E epochs


@dataclass
class _Composed:
    """E-fold laws of one direction: coefficient k at loss (base + k) 2^-m."""

    m: int
    base: int
    up: fmpz_poly
    up_inf: Fraction  # upper bound of the mass at +inf (exact)
    low: fmpz_poly


def _compose(e: _EpochLaw, E: int, m: int, tick: "B.Tick" = None) -> _Composed:
    from ..pld.convolve import poly_power

    n = len(e.up)
    if E * n > BINS_MAX_COMPOSED:
        raise PrecisionExhausted(f"the {E}-epoch balls-in-bins law needs {E * n} loss-grid points > {BINS_MAX_COMPOSED} "
                                 "(work cap, shared with verify)")
    fin = sum(e.up)
    tot = fin + e.up_inf
    U = B.UNIT_BITS
    # |nu|^E - |nu_f|^E, in units 2^-(U E): every composed outcome with a +inf factor
    inf = Fraction(tot**E - fin**E, 1 << (U * E))
    return _Composed(m, E * e.lo, poly_power(e.up, E, U, True, tick=tick), inf,
                     poly_power(e.low, E, U, False, tick=tick))


def _hinge(C: fmpz_poly, base: int, m: int, eps: Fraction, w_fix: int, up: bool) -> Fraction:
    """sum_k C_k 2^-U (1 - e^{eps - (base + k) 2^-m})_+, an upper (``up``) or lower bound:
    exact integer sums S0 = sum_{k >= k0} C_k, G = sum_{k >= k0} C_k w^{k - k0} in fixed point
    (w_fix / 2^W a lower bound of e^{-2^-m} for ``up``, an upper bound otherwise; Horner with
    every step floored / ceiled the same way), then S0 - e^{eps - s_k0} G with the exponential
    in arb, rounded in the sound direction."""
    k0 = max(0, math.floor(eps * 2**m) - base + 1)  # first k with (base + k) 2^-m > eps
    n = C.length()
    if k0 >= n:
        return Fraction(0)
    coeffs = [int(c) for c in C.coeffs()[k0:]]
    S0 = sum(coeffs)
    W = _W_BITS
    g = 0
    for c in reversed(coeffs):
        g = ((g * w_fix) >> W if up else -((-g * w_fix) >> W)) + c
    with working_precision(B._PREC):
        t = ball(Fraction(base + k0, 2**m) - eps)  # > 0
        f = (-t).exp()
        val = ball(S0) - f * ball(g)
        val = val / arb(2) ** B.UNIT_BITS
        a, b = B.endpoints(val)
    return _to_fraction(b if up else a)


def _to_fraction(x: arb) -> Fraction:
    """An exact point arb (a dyadic number) as the equal Fraction."""
    man, exp = x.man_exp()
    return Fraction(int(man)) * (Fraction(2) ** int(exp))


def _w_fix(m: int, up: bool) -> int:
    with working_precision(B._PREC):
        w = (-(arb(2) ** (-m))).exp() * arb(2) ** _W_BITS
        return B._int(w, False) if up else B._int(w, True)


@dataclass
class EpochsLaws:
    """The composed laws of every direction of a run."""

    run: "B.BinsRun"
    grids: dict[str, "B.Grid"]
    loss: LossGrid
    parts: dict[str, _Composed]

    def delta_bounds(self, eps: Fraction) -> tuple[Fraction, Fraction]:
        los, his = [], []
        m = self.loss.m
        wu, wl = _w_fix(m, True), _w_fix(m, False)
        for d, c in self.parts.items():
            his.append(_hinge(c.up, c.base, m, eps, wu, True) + c.up_inf)
            los.append(max(Fraction(0), _hinge(c.low, c.base, m, eps, wl, False)))
        return max(los), max(his)


def laws(r: "B.BinsRun", grids: Optional[dict[str, "B.Grid"]] = None,
         loss: Optional[LossGrid] = None, points: int = _POINTS, tick: "B.Tick" = None) -> EpochsLaws:
    """The composed laws on the linear grids (one per direction) and the loss grid
    (proposed when None, aiming at ``points`` composed points); ``tick`` (:func:`dpverify.progress.budget_tick`)
    between products and grid points."""
    dirs = B._directions(r.relation)
    grids = grids or choose_grids(r)
    B.check_work(r, grids)  # the linear part, before its powers
    lin = {d: _linear_laws(r.sigma, r.batches, grids[d], (d,), tick)[d] for d in dirs}
    loss = loss or choose_loss(r, grids, lin, points)
    B.check_work(r, grids, {d: loss.window(d) for d in dirs})
    parts = {d: _compose(_epoch_law(lin[d], d, r.batches, grids[d], loss, tick), r.epochs, loss.m, tick)
             for d in dirs}
    return EpochsLaws(r, grids, loss, parts)


# --------------------------------------------------------------------------- choices (floats: hints only)


def _j_range(C: fmpz_poly, tol: float) -> tuple[int, int]:
    """Float: the degrees [a, b] outside which the law C (units 2^-U) has at most tol per end."""
    p = [int(c) / 2.0**B.UNIT_BITS for c in C.coeffs()]
    acc, a = 0.0, 1
    for j in range(1, len(p)):
        acc += p[j]
        if acc > tol:
            a = j
            break
    acc, b = 0.0, max(len(p) - 1, 1)
    for j in range(len(p) - 1, 0, -1):
        acc += p[j]
        if acc > tol:
            b = j
            break
    return a, max(a, b)


def choose_loss(r: "B.BinsRun", grids: dict[str, "B.Grid"], lin: dict[str, Any],
                points: int = _POINTS) -> LossGrid:
    """Float proposal of the loss grid: per direction the window that carries all but
    about 1e-30 of the epoch's law, and the finest 2^-m (m <= 12: the loss rounding then
    costs at most E 2^-12 in eps, below the linear grid's share) whose E-fold law stays
    within about ``points`` points (module docstring: any window and any m are sound)."""
    spans: dict[str, tuple[float, float]] = {"remove": (0.0, 0.0), "add": (0.0, 0.0)}
    for d in lin:
        hT = float(grids[d].h) / r.batches
        C = lin[d]["up_hi"] if d == "remove" else lin[d]["dn_hi"]
        a, b = _j_range(C, _WINDOW_TAIL)
        x0, x1 = math.log(a * hT), math.log(b * hT)
        spans[d] = (x0 - 1e-3, x1 + 1e-3) if d == "remove" else (-x1 - 1e-3, -x0 + 1e-3)
    span = max(b - a for a, b in spans.values())
    m = max(1, min(12, math.floor(math.log2(points / (r.epochs * max(span, 1e-3))))))
    f = 2.0**m
    (r0, r1), (a0, a1) = spans["remove"], spans["add"]
    return LossGrid(m, math.floor(r0 * f), math.ceil(r1 * f), math.floor(a0 * f), math.ceil(a1 * f))


def choose_grids(r: "B.BinsRun", degree: Optional[int] = None) -> dict[str, "B.Grid"]:
    """Float proposal of the linear grid per direction, covering S up to :func:`dpverify.recheck.bins_plan.s_max`
    with about ``degree`` cells of S. By default 2^16, 2^17 from E = 3, 2^18 from E = 9: every
    epoch's loss is rounded outward by about h / L and the roundings add over the epochs
    (measured, T = 10, sigma 1.1, E = 20: width 6% at 2^16, 1.6% at 2^18, twice the time).

    The cell width h that a degree buys shrinks as T grows (S ranges over about T times the
    coordinates' range), while the rounding of S is up to T h on S near T: the loss moves by
    up to about h per epoch, E h over the run on each side. So the default degree is then
    doubled, up to 2^20, while E h > 1/4 (measured, T = 240, sigma 0.85, E = 60, delta(3):
    [8.6e-7, 5.8e-2] at 2^18, h = 1/16, 31 s CPU; [4.6e-5, 1.5e-3] at 2^20, h = 1/64, 123 s).
    Smaller runs (E h <= 1/4 at the first degree) keep their grids."""
    sig = float(r.sigma)

    def grids(deg: int) -> dict[str, "B.Grid"]:
        return {d: _grid(r.sigma, r.batches, s_max(sig, r.batches, r.epochs, d) / r.batches, deg)
                for d in B._directions(r.relation)}

    if degree is not None:
        return grids(degree)
    degree = base_degree(r.epochs)
    out = grids(degree)
    while degree < REFINED_DEGREE and r.epochs * max(float(g.h) for g in out.values()) > ROUNDING_BUDGET:
        degree *= 2
        finer = grids(degree)
        if finer == out:  # the unit-cell cap binds: a larger degree buys nothing
            break
        if _linear_work(r, finer) > _REFINE_WORK:  # the work cap shared with verify: keep the coarser grid
            break
        out = finer
    return out


#: the linear part's share of the work cap a refinement may use (the loss windows' E-fold powers,
#: at most about 4 BINS_MAX_COMPOSED coefficients, take the rest)
_REFINE_WORK = BINS_MAX_WORK - 8 * BINS_MAX_COMPOSED


def _linear_work(r: "B.BinsRun", grids: dict[str, "B.Grid"]) -> int:
    from ..recheck.bins import work

    return work(r.batches, r.epochs, {d: g.to_json() for d, g in grids.items()}, {})


def _grid(sigma: Fraction, T: int, c_max: float, degree: int) -> "B.Grid":
    """As :func:`dpverify.sampling.balls.choose_grid`, with up to ``bins_plan.UNITS`` unit cells
    (the loss law needs the resolution near L = 1 more than one epoch's hinge does)."""
    s = float(sigma)
    q = y_upper(s)
    g = cell_exponent(s, T, c_max, degree)
    h = 2.0**-g
    keep = math.ceil(T * c_max / h) + 2
    if keep > B.MAX_DEGREE:
        raise PrecisionExhausted(f"the balls-in-bins grid needs degree {keep} > {B.MAX_DEGREE} (work cap)")
    top = max(1, min(math.ceil(min(math.exp(min(13.3 / s - 0.5 / s**2, 700.0)), 1e15) / h), keep))
    fine = max(1, min(math.ceil(q / h), top))
    return B.Grid(g, fine, B._PER, top, keep)


def _float_eps(C: fmpz_poly, base: int, m: int, inf: float, delta: float) -> Optional[float]:
    """Float eps where sum_k C_k 2^-U (1 - e^{eps - s_k})_+ + inf = delta (a proposal)."""
    U = B.UNIT_BITS
    p = [int(c) / 2.0**U for c in C.coeffs()]
    n = len(p)
    w = math.exp(-(2.0**-m))
    S0, G = inf, 0.0
    for k in range(n - 1, -1, -1):
        S0 += p[k]
        G = p[k] + w * G
        # at eps = s_{k-1} the terms k.. count: S0 - e^{-Delta} G
        if S0 - w * G >= delta:
            if G <= 0:
                return (base + k) / 2.0**m
            x = (S0 - delta) / G
            return (base + k) / 2.0**m + (math.log(x) if x > 0 else -2.0**-m)
    return None


def _search(L: EpochsLaws, delta: Fraction, digits: int, upper: bool, tick: "B.Tick" = None) -> Optional[Fraction]:
    """A decimal eps whose certified delta bound is <= delta (upper end) or > delta (lower
    end): a float proposal, then certified steps outward (each step a full proof)."""
    m = L.loss.m
    props = []
    for c in L.parts.values():
        props.append(_float_eps(c.up if upper else c.low, c.base, m, float(c.up_inf) if upper else 0.0,
                                float(delta)))
    props = [x for x in props if x is not None]
    if not props:
        return Fraction(0) if upper else None
    x = max(max(props), 0.0)
    x = x * (1 + 10.0 ** -(digits + 1)) if upper else x * (1 - 10.0 ** -(digits + 1))
    if x <= 0:
        return Fraction(0) if upper else None
    cand = B._decimal(x, digits, up=upper)
    step = Fraction(10) ** (math.floor(math.log10(float(cand))) - digits + 1) if cand > 0 else Fraction(0)
    for _ in range(24):
        if tick:
            tick()
        lo, hi = L.delta_bounds(cand)
        if (hi <= delta) if upper else (lo > delta):
            return cand
        cand = cand + step if upper else cand - step
        step *= 2
        if cand <= 0:
            return Fraction(0) if upper and L.delta_bounds(Fraction(0))[1] <= delta else None
    return None


def enclose_eps(r: "B.BinsRun", delta: Any, digits: int = 4,
                grids: Optional[tuple[dict[str, "B.Grid"], Optional[LossGrid]]] = None,
                points: int = _POINTS, time_budget: Optional[float] = None) -> dict[str, Any]:
    """Certified [lo, hi] of epsilon(delta) of E epochs: {lo, hi, grids, loss}; PrecisionExhausted
    once ``time_budget`` seconds have passed (:func:`dpverify.progress.budget_tick`)."""
    d = V.open_unit("delta", delta)
    tick = B.budget_tick(time_budget, B.WHAT)
    L = laws(r, *(grids or (None, None)), points=points, tick=tick)
    hi = _search(L, d, digits, True, tick)
    if hi is None:
        raise PrecisionExhausted("no certified upper end of epsilon(delta) for the balls-in-bins epochs on this grid")
    lo = _search(L, d, digits, False, tick)
    if lo is not None and lo > hi:  # both certified: never (delta_lo <= delta_hi at every eps)
        raise PrecisionExhausted("the certified ends cross")
    return {"lo": "0" if lo is None else B.V_exact(lo), "hi": B.V_exact(hi), "grids": L.grids, "loss": L.loss}


def enclose_delta(r: "B.BinsRun", eps: Any, grids: Optional[tuple[dict[str, "B.Grid"], Optional[LossGrid]]] = None,
                  points: int = _POINTS, time_budget: Optional[float] = None) -> dict[str, Any]:
    """Certified [lo, hi] of delta(eps) of E epochs: {lo, hi, grids, loss}; PrecisionExhausted
    once ``time_budget`` seconds have passed (:func:`dpverify.progress.budget_tick`)."""
    e = V.nonnegative("eps", eps)
    if e > BINS_MAX_EPS:
        raise InvalidParameter("eps", f"eps > {BINS_MAX_EPS} is beyond the balls-in-bins enclosure; give eps <= "
                                      f"{BINS_MAX_EPS}")
    L = laws(r, *(grids or (None, None)), points=points, tick=B.budget_tick(time_budget, B.WHAT))
    lo, hi = L.delta_bounds(e)
    return {"lo": B.lower_decimal(ball(lo), 10) if lo > 0 else "0", "hi": B.upper_decimal(ball(hi), 10),
            "grids": L.grids, "loss": L.loss}
