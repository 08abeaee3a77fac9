"""Balls-in-bins DP-SGD, one epoch: a certified enclosure of delta(eps) and
epsilon(delta).

The mechanism. Each of the n records is put, independently, in one of the T
batches of the epoch, uniformly at random (batch sizes are random, B = n / T in
expectation); step t releases the sum of batch t's clipped gradients (norm
<= C = 1) plus N(0, sigma^2 I). T is a parameter of the sampler: adding or
removing a record leaves it unchanged (one batch grows or shrinks by one).

The pair (Chua, Ghazi, Harrison, Leeman, Kamath, Kumar, Manurangsi, Sinha,
Zhang, "Balls-and-Bins Sampling for DP-SGD", AISTATS 2025, the dominating pair
of ABLQ with the balls-and-bins sampler): under add/remove (and zeroing-out,
dp_accounting's replace-special), one epoch is tightly dominated by

  P = (1/T) sum_t N(e_t, sigma^2 I_T),   Q = N(0, sigma^2 I_T)

(remove direction; add is the pair reversed). Under Q, with x_t i.i.d.
N(0, sigma^2), the density ratio is

  L = dP/dQ = (1/T) sum_t Y_t,   Y_t = exp((x_t - 1/2) / sigma^2),

a mean of T i.i.d. log-normals, log Y ~ N(-m^2/2, m^2), m = 1/sigma, so
F(y) = Q(Y <= y) = Phi(sigma log y + 1/(2 sigma)), E[Y] = 1 and
E[Y; Y > a] = Phi(1/(2 sigma) - sigma log a). With c = e^eps,

  delta_remove(eps) = E_Q[(L - c)_+] = E[L] - c + E[(c - L)_+]
                    = 1 - c + E[(c - L)_+]              (E[L] = 1 exactly),
  delta_add(eps)    = E_Q[(1 - c L)_+].

Both integrands only see L below c (resp. 1/c), so only the part of L's law
below c matters: S = T L is cut at degree T c / h of a grid of step h.

Enclosure (every step is a directed rounding; the grid is a hint, any grid
gives valid bounds). Cells (k_{i-1} h, k_i h], 0 = k_0 < ... < k_m = top of the
grid h = 2^-g (unit cells first, then widths doubling), masses
w_i = F(k_i h) - F(k_{i-1} h) and the tail tau = 1 - F(top h).

* Y_up = k_i h on cell i (and Y itself above top h) is >= Y pointwise, Y_dn =
  k_{i-1} h is <= Y, hence S_dn <= S <= S_up (couplings).
* remove, upper: delta <= E[(S_up/T - c)_+] = E[Y_up] - c + E[(c - S_up/T)_+]
  (the identity for the exact law of S_up), E[Y_up] = sum_i k_i h w_i +
  E[Y; Y > top h] in arb. In the last term the tail values are moved down to
  top h (smaller S, larger integrand: still an upper bound) and the masses are
  rounded up to units 2^-U: a super-measure, composed T times by exact integer
  products rounded up (:func:`dpverify.pld.convolve.poly_power`).
* remove, lower: delta >= E[Y_dn] - c + E[(c - S_dn/T)_+], the last term with
  masses rounded down, products rounded down and the tail dropped (a
  sub-measure of a nonnegative integrand).
* add, upper: (1 - c L)_+ decreases in L: S_dn with masses up (tail at top h);
  lower: S_up with masses down (tail dropped).

The hinge sums sum_j C_j (a - b j)_+ are read off the integer polynomials as
a S0 - b S1 over the indices where a - b j > 0 is proved (S0, S1 the sum of
C_j and of j C_j there, exact integers); an index whose sign the balls cannot
decide adds its positive part to the upper bound and nothing to the lower.

Epochs: the pair is for one epoch. Where every epoch re-allocates the records
independently, E epochs are an adaptive composition and the E-fold product of
the pair dominates them (AFA Thm 10): :mod:`dpverify.sampling.balls_epochs`
composes the loss law of the epoch on a log grid. This module answers E = 1;
:mod:`dpverify.sampling.bins` is the front end that chooses between the two.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from statistics import NormalDist
from typing import Any, Optional

from flint import arb, fmpz_poly

from .. import _validate as V
from ..ball import ball, endpoints, lower_decimal, normal_cdf, upper_decimal, working_precision
from ..certificate.format import BINS_MAX_EPS, BINS_ONE_EPOCH_DEGREE
from ..certificate.prose import BINS_SOURCE
from ..errors import InvalidParameter, PrecisionExhausted
from ..limits import MAX_BINS_EPOCHS
from ..progress import Tick, budget_tick
from ..relation import Relation, relation as _relation

__all__ = ["BinsRun", "Grid", "run", "enclose_delta", "enclose_eps", "edges", "SOURCE", "RELATIONS",
           "MAX_BATCHES", "MAX_DEGREE", "UNIT_BITS"]

#: relations the pair covers (Chua et al. 2025: add / remove, zeroing-out = replace-special)
RELATIONS = (Relation.ADD_REMOVE, Relation.ADD, Relation.REMOVE, Relation.REPLACE_SPECIAL)
#: most batches per epoch accepted (the grid's degree cap T c / h must stay below MAX_DEGREE)
MAX_BATCHES = 100_000
#: most degrees kept in a composed polynomial (work bound, checked before any product)
MAX_DEGREE = 1 << 21
#: masses in units 2^-UNIT_BITS
UNIT_BITS = 128
_PREC = 320
#: degree caps of the coarse (first) and fine (second) pass
_COARSE, _FINE = 1 << 14, BINS_ONE_EPOCH_DEGREE
#: cells per doubling of the cell width beyond the unit cells, and most unit cells
_PER, _UNITS = 256, 1 << 14

SOURCE = BINS_SOURCE


@dataclass(frozen=True)
class BinsRun:
    """One balls-in-bins DP-SGD run (exact inputs)."""

    sigma: Fraction
    n: int
    batch: int
    epochs: int
    relation: Relation

    @property
    def batches(self) -> int:
        """T = n / B batches per epoch (B divides n)."""
        return self.n // self.batch

    def inputs(self) -> dict[str, Any]:
        s = self.sigma
        return {"noise_multiplier": str(s.numerator) if s.denominator == 1 else V_exact(s),
                "dataset_size": self.n, "batch_size": self.batch, "epochs": str(self.epochs),
                "sampling": "balls-in-bins", "neighboring": self.relation.value}


def V_exact(x: Fraction) -> str:
    from ..ball import exact_str

    return exact_str(x)


def run(noise_multiplier: Any, dataset_size: Any, batch_size: Any, epochs: Any,
        neighboring: Any = "add-remove") -> BinsRun:
    """Validate and build a :class:`BinsRun` (InvalidParameter naming the flag)."""
    sig = V.positive("noise_multiplier", noise_multiplier)
    if not Fraction(1, 1000) <= sig <= 1000:
        raise InvalidParameter("noise_multiplier", f"noise_multiplier={noise_multiplier} is outside [0.001, 1000] "
                                                   "(the balls-in-bins grid is bounded before it starts)")
    n = V.integer("dataset_size", dataset_size, lo=1, hi=10**12)
    b = V.integer("batch_size", batch_size, lo=1, hi=n)
    if n % b:
        # The pair depends on T alone (each record lands in one of T bins, uniformly), so the run is
        # defined by the number of bins the sampler draws; with B not dividing N, "N/B batches" does not
        # say whether it is floor(N/B) or ceil(N/B) (and a dropped last batch is a different sampler:
        # its records are not released, which the pair does not model). Refuse rather than guess.
        raise InvalidParameter("batch_size", f"balls-in-bins needs the number of bins T = N/B to be an integer: "
                                             f"B={b} does not divide N={n}. The dominating pair depends only on "
                                             "T, the number of bins your sampler assigns records to: give the "
                                             "sizes whose quotient is that T (e.g. --dataset-size T "
                                             "--batch-size 1); a sampler that drops records is not balls-in-bins")
    T = n // b
    if T < 2:
        raise InvalidParameter("batch_size", "balls-in-bins with one batch per epoch (B = N) is the Gaussian "
                                             "mechanism: use --sampling poisson with --sampling-rate 1")
    if T > MAX_BATCHES:
        raise InvalidParameter("batch_size", f"T = N/B = {T} batches per epoch is above the work cap "
                                             f"{MAX_BATCHES} of the balls-in-bins enclosure")
    try:
        e = V.integer("epochs", epochs, lo=1, hi=MAX_BINS_EPOCHS)
    except InvalidParameter:
        raise InvalidParameter("epochs", f"epochs={epochs!r}: balls-in-bins takes a whole number of epochs in "
                                         f"[1, {MAX_BINS_EPOCHS}], each one re-allocating the records to the bins "
                                         "independently (E > 1: adaptive composition, AFA Thm 10)") from None
    rel = _relation(neighboring)
    if rel not in RELATIONS:
        raise InvalidParameter("neighboring", f"{rel.value}: the balls-in-bins pair is proved for add/remove and "
                                              "zeroing-out only (allowed: "
                                              f"{', '.join(r.value for r in RELATIONS)})")
    return BinsRun(sig, n, b, e, rel)


# --------------------------------------------------------------------------- grid


@dataclass(frozen=True)
class Grid:
    """The grid (a hint: any values give valid bounds). h = 2^-g; cells of
    width h up to index ``fine``, then widths doubling every ``per`` cells, up
    to index ``top``; composed polynomials keep degrees < ``keep``."""

    g: int
    fine: int
    per: int
    top: int
    keep: int

    def to_json(self) -> dict[str, Any]:
        return {"g": self.g, "fine": self.fine, "per": self.per, "top": self.top, "keep": self.keep}

    @property
    def h(self) -> Fraction:
        return Fraction(1, 2**self.g) if self.g >= 0 else Fraction(2 ** (-self.g))


def edges(grid: Grid) -> list[int]:
    """0 = k_0 < k_1 < ... < k_m = top: the rule the re-check reads the recorded grid
    by (one copy, in :func:`dpverify.recheck.bins.edges`; a hint's meaning, not a proof)."""
    from ..recheck.bins import edges as rule

    return rule(grid.to_json())


def _gauss_eps_float(sigma: float, delta: float) -> float:
    """Float eps of the Gaussian mechanism with mu = 1/sigma (a proposal of the
    largest eps searched: no amplification bounds the balls-in-bins epoch)."""
    N = NormalDist()
    mu = 1.0 / sigma

    def d(e: float) -> float:
        return N.cdf(-e / mu + mu / 2) - math.exp(e) * N.cdf(-e / mu - mu / 2)

    lo, hi = 0.0, 1.0
    while hi < 512 and d(hi) > delta:  # beyond: the work cap refuses anyway (_c_max)
        hi *= 2
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if d(mid) > delta else (lo, mid)
    return hi


def _c_max(eps: float) -> float:
    """e^eps for the largest eps searched; beyond e^40 the grid T e^eps / h would need more
    than MAX_DEGREE degrees at any step h this module accepts, so the work cap answers first."""
    if eps > 40:
        raise PrecisionExhausted(f"eps up to {eps:.3g} would need a balls-in-bins grid beyond the work cap "
                                 f"{MAX_DEGREE} (noise too small for this enclosure)")
    return math.exp(eps)


def choose_grid(sigma: Fraction, T: int, c_max: float, degree: int) -> Grid:
    """Float proposal: h = 2^-g with T c_max / h at most about ``degree`` and at
    most ``_UNITS`` unit cells below the 1 - 1e-6 quantile of Y (or below T c_max,
    beyond which no cell reaches the integrands); wider cells
    (width doubling every ``_PER`` cells) up to the 1 - 1e-40 quantile; nothing
    beyond the degrees kept (those never reach the integrands)."""
    s = float(sigma)

    def quant(z: float) -> float:  # Y at the upper z-quantile of log Y ~ N(-1/(2 s^2), 1/s^2)
        # kept a normal double both ways: at sigma 0.001 the quantile is e^-495250, which was 0.0 and a
        # ZeroDivisionError below (exit 4); e^-700 sizes the same grid (the degree term decides it)
        return math.exp(max(-700.0, min(z / s - 0.5 / s**2, 700.0)))

    g = min(math.floor(math.log2(degree / (T * c_max))), math.floor(math.log2(_UNITS / min(quant(4.75), T * c_max))))
    g = max(-30, min(g, 40))
    h = 2.0**-g
    keep = math.ceil(T * c_max / h) + 2
    if keep > MAX_DEGREE:
        raise PrecisionExhausted(f"the balls-in-bins grid needs degree {keep} > {MAX_DEGREE} (work cap)")
    top = max(1, min(math.ceil(min(quant(13.3), 1e15) / h), keep))
    fine = max(1, min(math.ceil(quant(4.75) / h), top))
    return Grid(g, fine, _PER, top, keep)


# --------------------------------------------------------------------------- composed laws


@dataclass
class _Laws:
    """The four composed polynomials (units 2^-U) and the means of Y_up / Y_dn."""

    T: int
    h: Fraction
    keep: int
    up_hi: fmpz_poly  # S_up, masses up, tail at top
    dn_hi: fmpz_poly  # S_dn, masses up, tail at top
    up_lo: fmpz_poly  # S_up, masses down, tail dropped
    dn_lo: fmpz_poly  # S_dn, masses down, tail dropped
    mean_up: arb
    mean_dn: arb


#: what the clock names when it stops a run (:func:`dpverify.progress.budget_tick`)
WHAT = "the balls-in-bins enclosure"


def _int(x: arb, up: bool) -> int:
    v = (x.upper().ceil() if up else x.lower().floor()).unique_fmpz()
    if v is None:  # an exact point's floor / ceiling is an integer: never reached
        raise PrecisionExhausted("a grid index could not be decided")
    return int(v)


def check_work(r: "BinsRun", grids: dict[str, Grid], windows: Optional[dict[str, tuple[int, int]]] = None) -> None:
    """Refuse (PrecisionExhausted) a run whose grids (one per direction; E > 1: and loss windows)
    imply more polynomial-product work than the cap verify enforces too (the count is the
    re-check's, :func:`dpverify.recheck.bins.work`, so no certificate written here is refused there)."""
    from ..certificate.format import BINS_MAX_WORK
    from ..recheck.bins import work

    w = work(r.batches, r.epochs, {d: g.to_json() for d, g in grids.items()}, windows or {})
    if w > BINS_MAX_WORK:
        raise PrecisionExhausted(f"the balls-in-bins grids need {w:,} coefficients of polynomial products > "
                                 f"{BINS_MAX_WORK:,} (work cap, shared with verify)")


def laws(sigma: Fraction, T: int, grid: Grid, tick: Tick = None) -> _Laws:
    from ..pld.convolve import poly_power

    ks = edges(grid)
    h = grid.h
    with working_precision(_PREC):
        s = ball(sigma)
        half = 1 / (2 * s)
        hb = ball(h)
        F = [arb(0)] + [normal_cdf(s * (hb * k).log() + half) for k in ks[1:]]
        w = [F[i] - F[i - 1] for i in range(1, len(ks))]
        A = hb * ks[-1]
        tail = normal_cdf(-(s * A.log() + half))
        tail_mean = normal_cdf(half - s * A.log())
        mean_up = sum((hb * ks[i + 1] * w[i] for i in range(len(w))), arb(0)) + tail_mean
        mean_dn = sum((hb * ks[i] * w[i] for i in range(len(w))), arb(0)) + tail_mean
        unit = arb(2) ** UNIT_BITS
        hi = [max(0, _int(x * unit, True)) for x in w]
        lo = [max(0, _int(x * unit, False)) for x in w]
        t_hi = max(0, _int(tail * unit, True))

    from ..recheck.bins import place  # the coefficient layout (exact integers, no proof in it)

    def poly(masses: list[int], shift: int, tail_units: int) -> list[int]:
        return place(ks, masses, shift, tail_units)

    def pw(c: list[int], up: bool) -> fmpz_poly:
        return poly_power(c, T, UNIT_BITS, up, keep=grid.keep, tick=tick)

    return _Laws(T, h, grid.keep,
                 up_hi=pw(poly(hi, 1, t_hi), True), dn_hi=pw(poly(hi, 0, t_hi), True),
                 up_lo=pw(poly(lo, 1, 0), False), dn_lo=pw(poly(lo, 0, 0), False),
                 mean_up=mean_up, mean_dn=mean_dn)


def _hinge(C: fmpz_poly, a: arb, b: arb, up: bool, keep: int) -> arb:
    """sum_j C_j (a - b j)_+ 2^-U: exact where a - b j > 0 is proved, an undecided
    index adds its positive part (upper) or nothing (lower)."""
    x = a / b
    lo_x, hi_x = endpoints(x)
    # lo_x, hi_x are exact points: j < lo_x (j < ceil(lo_x)) proves a - b j > 0
    sure = max(0, _int(lo_x, True))
    maybe = max(sure, _int(hi_x, True))
    if up and maybe > keep:
        raise PrecisionExhausted("the evaluated eps lies beyond the degrees kept (grid too short)")
    p = C.truncate(sure)
    s0, s1 = p(1), p.derivative()(1) if p.length() > 1 else 0
    val = a * arb(s0) - b * arb(s1)
    if up:
        for j in range(sure, min(maybe, C.length())):
            t = a - b * j
            hi = endpoints(t)[1]
            if hi > 0:
                val += arb(C[j]) * hi
    return val / arb(2) ** UNIT_BITS


def _directions(rel: Relation) -> tuple[str, ...]:
    if rel is Relation.REMOVE:
        return ("remove",)
    if rel is Relation.ADD:
        return ("add",)
    return ("remove", "add")


def delta_bounds(L: _Laws, rel: Relation, eps: Fraction) -> tuple[arb, arb]:
    """Exact points lo <= delta(eps) <= hi (hi = +inf never: raises when the grid is short)."""
    with working_precision(_PREC):
        c = ball(eps).exp()
        b = ball(L.h) / L.T
        los, his = [], []
        for d in _directions(rel):
            if d == "remove":
                hi = endpoints(L.mean_up)[1] - c + _hinge(L.up_hi, c, b, True, L.keep)
                lo = endpoints(L.mean_dn)[0] - c + _hinge(L.dn_lo, c, b, False, L.keep)
            else:
                hi = _hinge(L.dn_hi, arb(1), c * b, True, L.keep)
                lo = _hinge(L.up_lo, arb(1), c * b, False, L.keep)
            his.append(endpoints(hi)[1])
            los.append(endpoints(lo)[0])
        hi, lo = his[0], arb(0)
        for x in his[1:]:  # exact points: the comparisons are decided
            if x > hi:
                hi = x
        for x in los:
            if x > lo:
                lo = x
        return lo, hi


def _decimal(x: float, digits: int, up: bool) -> Fraction:
    if x <= 0:
        return Fraction(0)
    e = math.floor(math.log10(x)) - digits + 1
    q = Fraction(10) ** e
    v = Fraction(x) / q
    return (math.ceil(v) if up else math.floor(v)) * q


def _search(L: _Laws, rel: Relation, delta: Fraction, digits: int, upper: bool, start: float,
            cap: float, tick: Tick = None) -> Optional[Fraction]:
    """Upper: a decimal eps with certified delta_hi(eps) <= delta (None if none below cap);
    lower: a decimal eps with certified delta_lo(eps) > delta (None if none)."""
    dl = ball(delta)

    def ok(e: Fraction) -> bool:
        if tick:
            tick()  # outside the try: the clock's PrecisionExhausted stops the run
        try:
            lo, hi = delta_bounds(L, rel, e)
        except PrecisionExhausted:
            return False
        return bool(hi <= dl) if upper else bool(lo > dl)

    a, b = 0.0, cap
    if upper and ok(Fraction(0)):
        return Fraction(0)
    if not upper and not ok(Fraction(0)):
        return None
    for _ in range(60):  # float bisection of the certified predicate (a proposal)
        m = (a + b) / 2
        if ok(Fraction(m)):
            if upper:
                b = m
            else:
                a = m
        else:
            if upper:
                a = m
            else:
                b = m
        if b - a <= 10.0 ** -(digits + 2) * max(b, 1e-12):
            break
    x = _decimal(b if upper else a, digits, up=upper)
    for _ in range(40):
        if ok(x):
            return x
        step = Fraction(10) ** (math.floor(math.log10(float(x) or 1e-300)) - digits + 1) if x else Fraction(0)
        x = x + step if upper else x - step
        if upper and float(x) > cap:
            return None
        if not upper and x <= 0:
            return None
    return None


def _one_epoch(r: "BinsRun") -> None:
    if r.epochs != 1:  # the front end (dpverify.sampling.bins) sends E > 1 to balls_epochs
        raise InvalidParameter("epochs", f"epochs={r.epochs}: this enclosure is of one epoch; "
                                         "dpverify.sampling.bins composes E > 1")


def enclose_eps(r: "BinsRun", delta: Any, digits: int = 6, grid: Optional[Grid] = None,
                time_budget: Optional[float] = None) -> dict[str, Any]:
    """Certified [lo, hi] of epsilon(delta) of one epoch: {lo, hi (decimal strings), grid};
    PrecisionExhausted once ``time_budget`` seconds have passed (:func:`dpverify.progress.budget_tick`)."""
    _one_epoch(r)
    d = V.open_unit("delta", delta)
    tick = budget_tick(time_budget, WHAT)
    T = r.batches
    if grid is None:
        cap = _gauss_eps_float(float(r.sigma), float(d)) * 1.02 + 1e-6
        g1 = choose_grid(r.sigma, T, _c_max(cap), _COARSE)
        L1 = laws(r.sigma, T, g1, tick)
        hi1 = _search(L1, r.relation, d, 3, True, 0.0, cap, tick)
        c2 = float(hi1) * 1.001 + 1e-9 if hi1 is not None else cap
        grid = choose_grid(r.sigma, T, _c_max(c2), _FINE)
    check_work(r, {d: grid for d in _directions(r.relation)})
    L = laws(r.sigma, T, grid, tick)
    cap = math.log(grid.keep * float(grid.h) / T)
    hi = _search(L, r.relation, d, digits, True, 0.0, cap, tick)
    if hi is None:
        raise PrecisionExhausted("no certified upper end of epsilon(delta) on the balls-in-bins grid")
    lo = _search(L, r.relation, d, digits, False, 0.0, float(hi), tick)
    return {"lo": "0" if lo is None else V_exact(lo), "hi": V_exact(hi), "grid": grid}


def enclose_delta(r: "BinsRun", eps: Any, grid: Optional[Grid] = None,
                  time_budget: Optional[float] = None) -> dict[str, Any]:
    """Certified [lo, hi] of delta(eps) of one epoch: {lo, hi (decimal strings), grid};
    PrecisionExhausted once ``time_budget`` seconds have passed (:func:`dpverify.progress.budget_tick`)."""
    _one_epoch(r)
    e = V.nonnegative("eps", eps)
    if e > BINS_MAX_EPS:
        raise InvalidParameter("eps", f"eps > {BINS_MAX_EPS} is beyond the balls-in-bins enclosure (its grid needs "
                                      f"T e^eps / h degrees); give eps <= {BINS_MAX_EPS}")
    T = r.batches
    grid = grid or choose_grid(r.sigma, T, _c_max(float(e)) * 1.001, _FINE)
    check_work(r, {d: grid for d in _directions(r.relation)})
    L = laws(r.sigma, T, grid, budget_tick(time_budget, WHAT))
    lo, hi = delta_bounds(L, r.relation, e)
    return {"lo": lower_decimal(lo, 10) if lo > 0 else "0", "hi": upper_decimal(hi, 10), "grid": grid}
