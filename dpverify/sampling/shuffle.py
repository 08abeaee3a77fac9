"""Shuffle-and-iterate DP-SGD: a certified bracket [lower, upper] for epsilon(delta)
and delta(eps).

The mechanism. A dataset of n records is cut, at the start of an epoch, into
T = ceil(n / B) batches by a uniformly random permutation (sizes B, the last one
n - (T - 1) B: every record is in exactly one batch per epoch; a dropped last
batch is not covered). Each step releases the sum of the batch's per-record
gradients, each clipped to norm C, plus N(0, sigma^2 C^2 I). ``dynamic``
shuffling draws a new permutation every epoch; ``persistent`` shuffling draws
one and reuses it for all E epochs. Units: C = 1, noise multiplier sigma.

Relations (the sensitivity Delta of one batch sum):

* replace-one: one record swapped, Delta = 2 (both clipped gradients in the
  unit ball). The dataset size and the batch layout do not change.
* replace-special (dp_accounting's REPLACE_SPECIAL): one record replaced by a
  special record whose clipped gradient is 0, Delta = 1.
* add-remove / add / remove: adding or removing a record changes n, hence a
  batch size (or the number of batches when B divides n - 1). Handled as the
  *fixed-layout* convention: n is the size of the larger dataset, its layout
  (T batches) is kept, and the smaller dataset leaves the removed record's slot
  empty, which is replace-special with a zero gradient, Delta = 1. An
  implementation that re-cuts its batches after a removal changes the
  composition of every later batch; no theorem here bounds it from above, so
  the upper end is stated for the fixed layout only. :func:`run` refuses
  add-remove when B divides n - 1, where T itself would change. (The lower end's
  pair below also fits a re-cut that keeps T and makes exactly one batch one record
  smaller, as a DataLoader with its partial last batch does; that is said here,
  not certified.)

Upper end (no amplification). Condition on the permutation(s). The records'
positions are then fixed, the two datasets differ in one record, and that record
is in exactly one batch per epoch: each epoch is an adaptive composition of T
Gaussian steps of which one has sensitivity <= Delta and the others 0, so
(AFA Thm 10, the steps' dominating pairs composed adaptively) the E epochs are
dominated by the product of E pairs (N(0,1), N(Delta/sigma, 1)), i.e. by the
Gaussian pair with mu = Delta sqrt(E) / sigma (a product of unit Gaussians
shifted along one direction is that pair after a rotation). Un-conditioning is a
mixture over the permutations, and the hockey-stick divergence is jointly convex,
so the bound survives it. This holds for dynamic and persistent shuffling alike
(persistent: one permutation for all epochs, the same argument).

Lower end (a concrete pair; Chua et al. ICML 2024, Sec 4, the "max of the
batch sums" statistic; the pair is the one of their released ShuffleAccountant,
means 2 and 1). One-dimensional gradients, a loss whose gradient does not
depend on the model (so the steps are non-adaptive), every record other than
the distinguished x* with gradient -1, and x* with +1 in D. In D' x* is

* replace-one: -1 (another record of the domain);
* replace-special: the special record, gradient 0;
* add-remove (fixed layout): absent, its slot empty, i.e. a zero contribution
  to its batch sum: the same as replace-special.

Batch s holds |B_s| records, a number fixed by the layout (B, the last one
n - (T - 1) B; in D' x*'s empty slot still counts), so its sum is -|B_s| when x*
is not in it and -(|B_s| - 1) + g when x* (gradient g) is. Add |B_s| to batch
s's sum and divide by sigma: the batches without x* become N(0, 1), and x*'s
batch t becomes N(a m, 1) under D and N(b m, 1) under D', m = 1/sigma, with
(a, b) = (1 + 1, g' + 1) for x*'s gradient g' in D': (2, 0) under replace-one,
(2, 1) under replace-special and fixed-layout add-remove (:func:`pair_shifts`). One epoch's output is

  P: Y ~ N(a m e_t, I_T),   Q: Y ~ N(b m e_t, I_T),   t = x*'s batch.

Under either dataset the T coordinates are independent given t, so the
statistic M = max_s Y_s has, given t,

  P(M <= x | t) = Phi(x - a m) Phi(x)^(T - 1),   Q(M <= x | t) = Phi(x - b m) Phi(x)^(T - 1),

which does not depend on t (the maximum is symmetric in the coordinates). So
the law of t does not matter (uniform over the records' slots, batch s with
probability |B_s| / n, or anything else), and it need not even be the same law
under D and D'; in the fixed layout it is, since the slots are permuted alike.
Why this pair needs the fixed layout or a special record: the offsets |B_s|
must be the same known constants under both datasets. If the smaller dataset's
batches had other sizes (a re-cut that moves records between batches, or changes
T), the offsets would be off in several batches and Q would not be the law above
(a re-cut that only makes one batch one record smaller is the exception: the
shift b m = m under D' then sits in that batch, and M's law does not depend
on where).
The earlier pair (every other record 0, shifts (1, 0)) does not use the offsets
and is valid under any re-cut that keeps T; it is weaker (the shift under Q removes the 1/T
dilution of P's signal), and :mod:`dpverify.recheck.shuffle` still accepts a lower
end that it proves, as certificates of earlier releases recorded.

M cut into K cells by edges x_1 < ... < x_{K-1} is a post-processing, so the
hockey-stick divergence of the cell laws is below the mechanism's (data
processing). Dynamic shuffling: the E epochs use independent permutations and
the gradients do not depend on the model, so the E epochs' outputs are i.i.d.
under P and under Q, and (M_1, ..., M_E) binned is a post-processing of the
whole run: its law is the E-fold product of the one-epoch cell laws. Persistent
shuffling: the batches hold the same records in every epoch and x* sits in the
same batch t, so Z_s = sum_e Y_{e,s} / sqrt(E) (a post-processing) has the
independent noises of E epochs averaged to N(0, 1) per coordinate and x*'s shift
summed: Z ~ N(a m sqrt(E) e_t, I_T) under P and N(b m sqrt(E) e_t, I_T) under Q,
one epoch with m sqrt(E) in place of m (and no composition).

The E-fold product is grouped into classes (a class index per cell, composed
by adding indices: any grouping is a post-processing, so the choice of the
indices, made in floating point from the cells' privacy losses, affects only
tightness, never soundness). Class masses are composed exactly as integer
polynomials (:mod:`flint.fmpz_poly`), P rounded down and Q rounded up to units
2^-U after every product (U = 96; U = 128 for one epoch's cells when nothing is
composed), so the result is a sub-measure of P's class law and a super-measure of
Q's. For every set J of classes

  delta(eps) >= P(J) - e^eps Q(J) >= (A_J - e^eps B_J) / 2^U,

with A_J, B_J the integer sums, and eps(delta) > eps0 whenever the right side
exceeds delta at eps0 (delta(eps) is non-increasing). The best J for a given
eps is a prefix of the classes sorted by decreasing P/Q; all prefixes are
scanned.

A lower bound for one pair of datasets and one loss is a lower bound of the
mechanism's worst case: a claimed (eps, delta) with eps below the lower end is
false for this implementation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Optional

from flint import arb

from .. import _validate as V
from ..ball import ball, brief_str, endpoints, lower_decimal, normal_cdf, upper_decimal, working_precision
from ..certificate.format import SHUFFLE_MAX_MU, shuffle_mu_beyond_cap
from ..certificate.prose import SHUFFLE_SOURCE, shuffle_pair_shifts, shuffle_relation_note
from ..errors import InvalidParameter
from ..limits import MAX_DATASET_SIZE, MAX_SHUFFLE_EPOCHS
from ..progress import Tick, budget_tick
from ..relation import Relation, relation as _relation

__all__ = ["ShuffleRun", "run", "lower_eps", "lower_delta", "upper_eps", "upper_delta", "bracket_eps",
           "bracket_delta", "SCHEMES", "LowerHints", "cell_masses", "sensitivity", "pair_shifts"]

#: sampling names (CLI, JSON, certificates) -> persistent?
SCHEMES = {"shuffle": False, "shuffle-persistent": True}
#: the most composed classes (length of the E-fold class polynomial)
MAX_CLASSES = 1 << 19
_PREC = 256
#: units 2^-U of the composed class masses (dynamic shuffling, E > 1: the integer products' size)
_UNIT_BITS = 96
#: units of one epoch's cell masses when nothing is composed (E = 1 or persistent shuffling):
#: Q is rounded up by one unit per cell and weighed by e^eps, so at eps near 50 (MNIST
#: persistent) 2^-96 per cell would cost more than delta; the re-check's units are 2^-128 too
_UNIT_BITS_ONE = 128

SOURCE = SHUFFLE_SOURCE
#: what the clock names when it stops a run (:func:`dpverify.progress.budget_tick`)
WHAT = "the shuffled bracket"
#: cells between two looks at the clock in :func:`cell_masses`
_TICK_CELLS = 64


@dataclass(frozen=True)
class ShuffleRun:
    """One shuffled DP-SGD run (exact inputs)."""

    sigma: Fraction
    n: int
    batch: int
    epochs: int
    persistent: bool
    relation: Relation

    @property
    def batches(self) -> int:
        """T = ceil(n / B) batches per epoch (the last one partial when B does not divide n)."""
        return -(-self.n // self.batch)

    @property
    def sampling(self) -> str:
        return "shuffle-persistent" if self.persistent else "shuffle"

    def inputs(self) -> dict[str, Any]:
        return {"noise_multiplier": str(self.sigma) if self.sigma.denominator != 1 else str(self.sigma.numerator),
                "dataset_size": self.n, "batch_size": self.batch, "epochs": str(self.epochs),
                "sampling": self.sampling, "neighboring": self.relation.value}


def sensitivity(rel: Relation) -> int:
    """Delta of one batch sum in units of C: 2 under replace-one, else 1."""
    return 2 if rel is Relation.REPLACE_ONE else 1


def relation_note(rel: Relation) -> str:
    return shuffle_relation_note(rel.value)


def run(noise_multiplier: Any, dataset_size: Any, batch_size: Any, epochs: Any, sampling: str,
        neighboring: Any = "add-remove") -> ShuffleRun:
    """Validate and build a :class:`ShuffleRun` (InvalidParameter naming the argument)."""
    sig = V.noise_multiplier("noise_multiplier", noise_multiplier)
    n = V.integer("dataset_size", dataset_size, lo=1, hi=MAX_DATASET_SIZE)
    b = V.integer("batch_size", batch_size, lo=1, hi=n)
    e = V.integer("epochs", epochs, lo=1, hi=MAX_SHUFFLE_EPOCHS)
    if sampling not in SCHEMES:
        raise InvalidParameter("sampling", f"sampling={sampling!r} is not a shuffling scheme "
                                           f"(allowed: {', '.join(SCHEMES)})")
    rel = _relation(neighboring)
    if rel in (Relation.ADD_REMOVE, Relation.ADD, Relation.REMOVE) and n > 1 and (n - 1) % b == 0 and b > 1:
        raise InvalidParameter(
            "neighboring", f"{rel.value} with shuffling is ambiguous here: B={b} divides n-1={n - 1}, so removing "
            "a record changes the number of batches per epoch (an observable change); give --neighboring "
            "replace-one or replace-special, or a dataset size where the batch count does not change")
    return ShuffleRun(sig, n, b, e, SCHEMES[sampling], rel)


# --------------------------------------------------------------------------- upper end


def _mu_rational(r: ShuffleRun, up: bool) -> Fraction:
    """A rational >= (``up``) or <= Delta sqrt(E) / sigma (the no-amplification Gaussian's mu), 40 digits."""
    with working_precision(_PREC):
        m = ball(sensitivity(r.relation)) * arb(r.epochs).sqrt() / ball(r.sigma)
        lo, hi = endpoints(m)
        s = 10**40
        end = (hi * s).upper().ceil() if up else (lo * s).lower().floor()
        return Fraction(int(end.unique_fmpz()), s)


def _mu_upper(r: ShuffleRun) -> Fraction:
    return _mu_rational(r, True)


def gaussian_delta(r: ShuffleRun, eps: Fraction) -> tuple[arb, arb]:
    """[lo, hi] of delta_mu(eps) for the no-amplification Gaussian, mu = Delta sqrt(E) / sigma:
    delta_mu at a rational below and above mu (delta_mu increases with mu, GDPT App A.5).
    The upper end bounds the mechanism; the lower end bounds only this Gaussian pair (the
    value where it exceeds delta is where the upper end stops certifying anything)."""
    from ..gdp.delta_mu import delta_mu

    check_mu(r)
    below = _mu_rational(r, False)
    # mu below 10^-40 (sigma 1e100) has the 40-digit floor 0, where delta_mu is not defined: 0 is a
    # lower end all the same (delta >= 0); it was an InvalidParameter "mu=0" naming --mu (exit 2)
    lo = delta_mu(below, eps, digits=10).lo if below > 0 else arb(0)
    return lo, delta_mu(_mu_upper(r), eps, digits=10).hi


def upper_eps(r: ShuffleRun, delta: Fraction, digits: int = 8) -> tuple[arb, Fraction]:
    """Upper end of epsilon(delta) (an exact point) and the mu used.

    eps_mu(delta) increases with mu (d delta_mu / d mu > 0, GDPT App A.5), so
    the root at a rational mu above the true one is above the true root."""
    from ..gdp.eps_for_delta import eps_for_delta

    mu = _mu_upper(r)
    hi = eps_for_delta(mu, delta, digits=digits).hi
    # epsilon(delta) is the least eps >= 0 with delta(eps) <= delta: where the Gaussian's root
    # is negative (delta above delta_mu(0)), eps(delta) = 0 (the root was recorded as an
    # upper end below the lower end 0, an empty interval that verify refused)
    return (hi if hi > 0 else arb(0)), mu


def upper_delta(r: ShuffleRun, eps: Fraction) -> tuple[arb, Fraction]:
    """Upper end of delta(eps): delta_mu(eps) at the rational mu above the true one
    (delta_mu increases with mu)."""
    from ..gdp.delta_mu import delta_mu

    mu = _mu_upper(r)
    return delta_mu(mu, eps, digits=10).hi, mu


# --------------------------------------------------------------------------- lower end


@dataclass(frozen=True)
class LowerHints:
    """How the lower end was computed (hints: any values give a valid bound)."""

    edge_from: Fraction
    edge_step: Fraction
    cells: int
    grid: int  # class index grid 2^-grid (dynamic shuffling with E > 1)

    def to_json(self) -> dict[str, Any]:
        return {"edge_from": str(self.edge_from), "edge_step": str(self.edge_step), "cells": self.cells,
                "grid": self.grid}


def pair_shifts(rel: Relation) -> tuple[int, int]:
    """(a, b) of :func:`dpverify.certificate.prose.shuffle_pair_shifts` (the lower end's dataset
    pair: the shift of x*'s batch sum, in units of C, under D and under D')."""
    return shuffle_pair_shifts(rel.value)


def _unit_ball(r: ShuffleRun) -> arb:
    """1 / sigma (persistent shuffling: sqrt(E) / sigma), the shift of one unit of gradient."""
    m = ball(1) / ball(r.sigma)
    if r.persistent:
        m = m * arb(r.epochs).sqrt()
    return m


def _compose_count(r: ShuffleRun) -> int:
    return 1 if r.persistent else r.epochs


def choose_hints(r: ShuffleRun, cells: Optional[int] = None) -> LowerHints:
    """Float proposal of the cell edges: from where Q's max has CDF 1e-9 (at most; the
    unshifted Phi(x)^T) to 9 noise units above P's shift a / sigma (beyond: masses far
    below any delta of interest)."""
    from statistics import NormalDist

    T = r.batches
    mu = pair_shifts(r.relation)[0] / float(r.sigma) * (math.sqrt(r.epochs) if r.persistent else 1.0)
    a = NormalDist().inv_cdf(math.exp(math.log(1e-9) / T))
    b = max(a + 1.0, mu + 9.0)
    E = _compose_count(r)
    K = cells or (160 if E > 1 else 1024)
    step = Fraction(math.ceil((b - a) / (K - 1) * 4096), 4096)
    start = Fraction(math.floor(a * 64), 64)
    grid = 12
    if E > 1:  # class losses span about [-1, mu b]; keep E * span * 2^grid under the cap
        span = 2.0 + mu * b
        while grid > 2 and E * span * 2**grid > MAX_CLASSES / 2:
            grid -= 1
    return LowerHints(start, step, K, grid)


def cell_masses(r: ShuffleRun, hints: LowerHints, tick: Tick = None) -> tuple[list[arb], list[arb]]:
    """Balls of P(M in cell k) and Q(M in cell k), k = 0..K-1, cells (-inf, x_1],
    (x_1, x_2], ..., (x_{K-1}, inf), x_i = edge_from + (i - 1) edge_step; one epoch's
    max statistic with P(M <= x) = Phi(x - a m) Phi(x)^(T-1), Q(M <= x) =
    Phi(x - b m) Phi(x)^(T-1), (a, b) = :func:`pair_shifts`, m = 1/sigma (persistent:
    the epoch sums' statistic, m = sqrt(E)/sigma)."""
    T = r.batches
    m = _unit_ball(r)
    a, b = pair_shifts(r.relation)
    Fp, Fq = [arb(0)], [arb(0)]
    for i in range(hints.cells - 1):
        if tick and i % _TICK_CELLS == 0:
            tick()
        x = ball(hints.edge_from + i * hints.edge_step)
        c = normal_cdf(x)
        rest = c ** (T - 1)
        Fq.append(c ** T if b == 0 else normal_cdf(x - b * m) * rest)
        Fp.append(normal_cdf(x - a * m) * rest)
    Fp.append(arb(1))
    Fq.append(arb(1))
    return ([Fp[k + 1] - Fp[k] for k in range(hints.cells)], [Fq[k + 1] - Fq[k] for k in range(hints.cells)])


def _unit_bits(r: ShuffleRun) -> int:
    return _UNIT_BITS_ONE if _compose_count(r) == 1 else _UNIT_BITS


def _units(x: arb, up: bool, bits: int) -> int:
    y = x * arb(2) ** bits
    v = int((y.upper().ceil() if up else y.lower().floor()).unique_fmpz())
    return max(v, 0)


def _poly_power(coeffs: list[int], E: int, up: bool, tick: Tick = None) -> list[int]:
    """E-th power of sum_i c_i z^i (coefficients in units 2^-U), rescaled to units
    after every product: floor for P (a sub-measure), ceiling for Q (a super-measure).
    ``tick`` is called before every product (it may stop the run, never change a product)."""
    from ..pld.convolve import poly_power

    return [int(c) for c in poly_power(coeffs, E, _UNIT_BITS, up, tick=tick).coeffs()]


@dataclass
class _Classes:
    """Composed class masses of one orientation, in units 2^-U."""

    P: list[int]
    Q: list[int]


def _classes(r: ShuffleRun, hints: LowerHints, swap: bool, tick: Tick = None) -> _Classes:
    with working_precision(_PREC):
        p, q = cell_masses(r, hints, tick)
    if swap:
        p, q = q, p
    bits = _unit_bits(r)
    P = [_units(x, False, bits) for x in p]
    Q = [_units(x, True, bits) for x in q]
    E = _compose_count(r)
    if E == 1:
        return _Classes(P, Q)
    # class index of each cell: its privacy loss on the grid 2^-grid (a proposal)
    h = 2.0 ** hints.grid
    idx = []
    for a, b in zip(P, Q):
        if a == 0:
            idx.append(None)
            continue
        idx.append(math.floor(math.log(a / b) * h) if b > 0 else None)
    finite = [i for i in idx if i is not None]
    lo, hi = min(finite), max(finite)
    if E * (hi - lo + 1) > MAX_CLASSES:  # a coarser grouping is still a post-processing
        scale = math.ceil(E * (hi - lo + 1) / MAX_CLASSES)
        idx = [None if i is None else (i - lo) // scale for i in idx]
        lo, hi = 0, max(i for i in idx if i is not None)
    width = hi - lo + 1
    cp, cq = [0] * width, [0] * width
    for i, a, b in zip(idx, P, Q):
        if i is None:  # P-mass 0 (drops nothing) or Q-mass 0 (never: Phi > 0)
            continue
        cp[i - lo] += a
        cq[i - lo] += b
    return _Classes(_poly_power(cp, E, up=False, tick=tick), _poly_power(cq, E, up=True, tick=tick))


def _prefixes(c: _Classes) -> list[tuple[int, int]]:
    """(A_k, B_k): sums over the k classes of largest P/Q (float order: a choice only)."""
    order = sorted((j for j in range(len(c.P)) if c.P[j] > 0),
                   key=lambda j: -(c.P[j] / c.Q[j]) if c.Q[j] else -math.inf)
    out, A, B = [], 0, 0
    for j in order:
        A += c.P[j]
        B += c.Q[j]
        out.append((A, B))
    return out


def _orientations(rel: Relation) -> tuple[bool, ...]:
    """False: P = the dataset with x* (remove); True: swapped (add)."""
    if rel is Relation.REMOVE:
        return (False,)
    if rel is Relation.ADD:
        return (True,)
    return (False, True)


def lower_eps(r: ShuffleRun, delta: Fraction, hints: Optional[LowerHints] = None,
              digits: int = 6, tick: Tick = None) -> tuple[str, LowerHints]:
    """A decimal eps0 with certified delta(eps0) > delta, hence epsilon(delta) > eps0
    ("0" when no prefix exceeds delta); and the hints used. ``tick``: the run's clock
    (:func:`dpverify.progress.budget_tick`), called between pieces of work."""
    hints = hints or choose_hints(r)
    best: Optional[arb] = None
    bits = _unit_bits(r)
    with working_precision(_PREC):
        unit = arb(2) ** bits
        dl = ball(delta) * unit
        for swap in _orientations(r.relation):
            pre = _prefixes(_classes(r, hints, swap, tick))
            # float choice of the best prefix, then one certified evaluation
            cand = [(math.log((A - float(delta) * 2.0**bits) / B), k) for k, (A, B) in enumerate(pre)
                    if B > 0 and A > float(delta) * 2.0**bits * (1 + 1e-9)]
            if not cand:
                continue
            _, k = max(cand)
            A, B = pre[k]
            v = ((arb(A) - dl) / arb(B)).log()
            if best is None or v.lower() > best.lower():
                best = v
        if best is None or not best.lower() > 0:
            return "0", hints
        text = lower_decimal(best, digits)
        return text, hints


def lower_delta(r: ShuffleRun, eps: Fraction, hints: Optional[LowerHints] = None,
                tick: Tick = None) -> tuple[arb, LowerHints]:
    """A certified lower bound of delta(eps) (an exact point, >= 0); ``tick`` as :func:`lower_eps`."""
    hints = hints or choose_hints(r)
    best = arb(0)
    with working_precision(_PREC):
        x = ball(eps).exp()
        # eps is exact: 1e3000 has no float (xf only orders the candidates; the bound is exact)
        xf = math.exp(float(eps)) if -700 < eps < 700 else (math.inf if eps > 0 else 0.0)
        for swap in _orientations(r.relation):
            pre = _prefixes(_classes(r, hints, swap, tick))
            cand = [(A - xf * B, k) for k, (A, B) in enumerate(pre)]
            if not cand:
                continue
            _, k = max(cand)
            A, B = pre[k]
            v = (arb(A) - x * arb(B)) / arb(2) ** _unit_bits(r)
            lo = endpoints(v)[0]
            if lo > best:
                best = lo
    return best, hints


# --------------------------------------------------------------------------- brackets


def check_mu(r: ShuffleRun) -> None:
    """Refuse, before any work, a run whose no-amplification mu = Delta sqrt(E) / sigma exceeds
    :data:`SHUFFLE_MAX_MU` (decided exactly: Delta^2 E / sigma^2 against the cap squared)."""
    if shuffle_mu_beyond_cap(sensitivity(r.relation), r.epochs, r.sigma):
        raise InvalidParameter("noise_multiplier", f"noise_multiplier={brief_str(r.sigma)} is too small for the "
                               f"shuffled bracket: mu = Delta sqrt(E) / sigma exceeds {SHUFFLE_MAX_MU} (its upper "
                               "end, the no-amplification Gaussian's epsilon, would be above about 5e7)")


def bracket_eps(r: ShuffleRun, delta: Any, hints: Optional[LowerHints] = None,
                time_budget: Optional[float] = None) -> dict[str, Any]:
    """The certified bracket of epsilon(delta): {lo, hi, mu, hints}. ``time_budget`` (seconds,
    None: none) may only stop the run (PrecisionExhausted, exit 3), never change its answer."""
    d = V.open_unit("delta", delta)
    check_mu(r)
    lo, hints = lower_eps(r, d, hints, tick=budget_tick(time_budget, WHAT))
    hi, mu = upper_eps(r, d)
    return {"lo": lo, "hi": upper_decimal(hi, 10), "mu": mu, "hints": hints}


def bracket_delta(r: ShuffleRun, eps: Any, hints: Optional[LowerHints] = None,
                  time_budget: Optional[float] = None) -> dict[str, Any]:
    """The certified bracket of delta(eps): {lo, hi, mu, hints}; ``time_budget`` as :func:`bracket_eps`.
    eps >= 0, the one range of ``audit dpsgd --eps`` on every sampling (the bracket's closed forms hold
    at eps < 0 too, but the Poisson, balls-in-bins and replace-one routes refuse it, and 1 - e^eps <=
    delta(eps) <= 1 says about as much there; certificate.ranges declares the range verify applies)."""
    e = V.nonnegative("eps", eps)
    check_mu(r)
    lo, hints = lower_delta(r, e, hints, tick=budget_tick(time_budget, WHAT))
    hi, mu = upper_delta(r, e)
    return {"lo": lower_decimal(lo, 10) if lo > 0 else "0", "hi": upper_decimal(hi, 10), "mu": mu,
            "hints": hints}
