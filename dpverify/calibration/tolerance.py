"""A noise multiplier to a tolerance, the contract of Opacus'
``get_noise_multiplier``: a value z with

    target - tolerance <= upper(z) < target,

where ``upper(z)`` is a certified upper end of epsilon at z (the accountant's
``get_epsilon``), so the returned z is proved to meet the target and is within
the tolerance of the boundary as measured by that same upper end.

Only ``upper`` decides: z is returned after ``upper(z)`` was computed and seen
in the window, and every bracket the search keeps is a pair of computed upper
ends. A float model (``model(z)``, an estimate of epsilon, planning only) only
chooses where to evaluate: a float solve proposes the first point, and after
each certified evaluation the model's offset from it (``upper(z) -
model(z)``, the certified grid's bias plus the enclosure's upper half-width)
is carried to the next proposal, which lands in the window when the offset
varies little between nearby z. Opacus' own bisection spends about twelve
certified evaluations from z = 20 downwards (the first ones at small epsilon,
where a relative width is the most expensive); this needs one or two. When
the model is absent, fails, or its proposals stop narrowing the certified
bracket, the search bisects that bracket as Opacus does (doubling z first
until some upper end is below the target), so it ends wherever Opacus' loop
would.

epsilon is nonincreasing in the noise multiplier (a larger Gaussian noise is
a post-processing of a smaller one: add independent noise), which is what
makes a bracket of two evaluated points meaningful; soundness does not rest
on it (the returned z is evaluated itself).
"""

from __future__ import annotations

import math
from typing import Callable, Optional

from ..errors import InvalidParameter
from ..pld import plan as _plan

__all__ = ["FloatModel", "noise_to_tolerance"]

#: Opacus' largest noise multiplier (opacus.accountants.utils.MAX_SIGMA)
MAX_NOISE = 1e6
#: the first proposal aims the model this far into the window (fraction of the
#: tolerance below the target): the certified upper end lies above the estimate
#: by up to the enclosure's width, which the first evaluation then measures
_FIRST_AIM = 0.9
#: later proposals aim at the window's middle
_AIM = 0.5
#: model proposals tried before the search only bisects
_MODEL_STEPS = 6
#: certified evaluations at most (Opacus' loop has no bound; a bisection of
#: [0, 1e6] to 2^-52 relative takes about 80)
MAX_EVALUATIONS = 100


def _solve(model: Callable[[float], Optional[float]], y: float, z0: float,
           lo: float, hi: Optional[float], within: float) -> Optional[float]:
    """A float z in (lo, hi) with |model(z) - y| <= within, or the closest seen
    (secant in log z; the model is nonincreasing in z). None when the model
    fails. Planning only."""
    top = hi if hi is not None else MAX_NOISE
    z = min(max(z0, lo * 1.0001 if lo > 0 else z0), top)
    e = model(z)
    if e is None:
        return None
    pts = [(math.log(z), e - y)]
    best = lambda: math.exp(min(pts, key=lambda p: abs(p[1]))[0])
    # first step: epsilon of DP-SGD falls about like z^-1.5 in the range met here
    step = math.log(e / y) / 1.5 if e > 0 and y > 0 else (0.05 if e > y else -0.05)
    step = max(-0.2, min(0.2, step))
    for _ in range(12):
        if len(pts) >= 2 and pts[-1][1] != pts[-2][1]:
            (v0, g0), (v1, g1) = pts[-2], pts[-1]
            v = v1 - g1 * (v1 - v0) / (g1 - g0)
            v = max(v1 - 1.0, min(v1 + 1.0, v))
        else:
            v = pts[-1][0] + step
        z = math.exp(v)
        if lo > 0 and z <= lo:
            z = math.sqrt(lo * math.exp(pts[-1][0])) if math.exp(pts[-1][0]) > lo else lo * 1.01
        if z > top:
            z = top
        e = model(z)
        if e is None:
            break  # the best point the model gave
        pts.append((math.log(z), e - y))
        if abs(e - y) <= within:
            break
    return best()


def noise_to_tolerance(upper: Callable[[float], float], target: float, tolerance: float, *,
                       model: Optional[Callable[[float], Optional[float]]] = None,
                       guess: float = 1.0) -> float:
    """The noise multiplier of the module docstring: ``upper(z)`` (certified upper
    end of epsilon at z, a float rounded up) is < ``target`` and within
    ``tolerance`` of it. ``model`` (float estimate of epsilon at z, or None
    where it has none) and ``guess`` only choose the points evaluated.

    Raises ValueError("The privacy budget is too low.") as Opacus does when even
    z = 1e6 does not meet the target, and InvalidParameter when no z was seen in
    the window within MAX_EVALUATIONS (the best proved z is then named)."""
    if not math.isfinite(target):
        raise InvalidParameter("target_epsilon", f"target_epsilon={target!r} must be finite")
    if not tolerance > 0:
        raise InvalidParameter("epsilon_tolerance", f"epsilon_tolerance={tolerance!r} must be > 0")
    seen: dict[float, float] = {}
    lo = 0.0  # largest z with upper(z) >= target (0: none yet)
    hi: Optional[float] = None  # smallest z with upper(z) < target
    offset = 0.0  # upper(z) - model(z) at the last evaluated z

    def evaluate(z: float) -> float:
        nonlocal lo, hi
        if z not in seen:
            seen[z] = upper(z)
        u = seen[z]
        if u < target:
            hi = z if hi is None else min(hi, z)
        else:
            lo = max(lo, z)
        return u

    z: Optional[float] = None
    if model is not None:
        z = _solve(model, target - _FIRST_AIM * tolerance, guess, 0.0, None, tolerance / 20)
    for k in range(MAX_EVALUATIONS):
        if z is None or not (z > lo and (hi is None or z < hi)) or z in seen:
            # bisect the certified bracket (Opacus' loop: double until an upper end is below)
            if hi is None:
                z = 2 * lo if lo > 0 else 20.0
                if z > MAX_NOISE:
                    raise ValueError("The privacy budget is too low.")
            else:
                z = (lo + hi) / 2
                if z in seen or z <= lo or z >= hi:
                    break  # the bracket is one float wide
        u = evaluate(z)
        if target - tolerance <= u < target:
            return z
        z_next: Optional[float] = None
        if model is not None and k < _MODEL_STEPS:
            e = model(z)
            if e is not None:
                offset = u - e
                z_next = _solve(model, target - _AIM * tolerance - offset, z, lo, hi, tolerance / 20)
        z = z_next
    best = "none" if hi is None else f"{hi!r} (certified upper end {seen[hi]!r})"
    raise InvalidParameter("epsilon_tolerance", f"no noise multiplier with a certified epsilon in "
                           f"[{target - tolerance!r}, {target!r}) was found in {len(seen)} certified "
                           f"evaluations; the smallest one proved to meet the target: {best}")


class FloatModel:
    """Planning only: a float estimate of epsilon(delta) of ``steps``
    Poisson-subsampled Gaussian steps (rate ``q``) under add-remove as a
    function of the noise multiplier, for :func:`noise_to_tolerance`'s
    proposals: the float upper end of the certified discretisation
    (:func:`dpverify.pld.plan.float_epsilon`) on two grids, extrapolated by the
    h^2 law of its error (Richardson). The grids are chosen once, at the first
    call: the coarsest pair whose two values are within _MODEL_STEP (relative).
    ``guess`` is the central-limit (GDP) noise multiplier of the target, the
    search's start."""

    #: relative change of the float upper end from the model's coarser grid to its finer one
    _MODEL_STEP = 0.03
    _M_MIN, _M_MAX = 8, 16

    def __init__(self, q: float, steps: int, delta: float, target: float) -> None:
        self.q, self.steps, self.delta, self.target = q, int(steps), float(delta), float(target)
        self.m: Optional[int] = None
        self.directions: Optional[tuple] = None
        self.calls = 0
        self.guess = self._clt_guess()

    def _clt_guess(self) -> float:
        """The z whose Gaussian-DP central limit (mu = q sqrt(T (e^{1/z^2} - 1)),
        Dong, Roth, Su 2019 Thm 5) meets the target: a start, nothing more."""
        ld = math.log(self.delta)
        lo, hi = 1e-6, 100.0
        for _ in range(100):  # the mu whose Gaussian curve gives eps = target at delta
            mu = math.sqrt(lo * hi)
            if _plan._eps_gauss(ld, mu * mu / 2, mu * mu) > self.target:
                hi = mu
            else:
                lo = mu
        x = (lo / self.q) ** 2 / max(1, self.steps)
        return 1.0 / math.sqrt(math.log1p(x)) if x > 0 else MAX_NOISE

    def _upper(self, z: float, m: int, directions: Optional[tuple] = None) -> Optional[float]:
        from fractions import Fraction

        from ..events import api as A
        from ..events import model as E
        from ..pld.refine import Step

        ev = E.SelfComposed(E.PoissonSampled(Fraction(self.q), E.Gaussian(Fraction(z))), self.steps)
        p = A.plan(ev, "add-remove")
        try:
            return _plan.float_epsilon([Step(b.make_pair, b.count) for b in p.blocks],
                                       p.directions if directions is None else directions,
                                       self.delta, m, self.target)
        except (ValueError, ArithmeticError, OverflowError):  # a proposal only: no estimate
            return None

    def _choose_grid(self, z: float) -> None:
        """The model's grids and directions, once (class docstring); a direction whose
        float upper end is below 0.9 of another's does not set the maximum near here
        (AFA Sec 4.1) and is left out of the model."""
        prev: dict = {}
        for m in range(self._M_MIN, self._M_MAX + 1):
            cur = {d: self._upper(z, m, (d,)) for d in (self.directions or ("remove", "add"))}
            if all(v is not None for v in cur.values()) and prev and all(v is not None for v in prev.values()):
                top = max(cur.values())
                self.directions = tuple(d for d, v in cur.items() if v >= 0.9 * top)
                if all(abs(prev[d] - cur[d]) <= self._MODEL_STEP * max(1.0, cur[d]) for d in self.directions):
                    self.m = m - 1
                    return
            prev = cur
        self.m = self._M_MAX - 1

    def __call__(self, z: float) -> Optional[float]:
        if not (z > 0 and math.isfinite(z)):
            return None
        self.calls += 1
        if self.m is None:
            self._choose_grid(z)
        a = b = None
        for m in (self.m, self.m + 1):  # the finer pair where the window missed the law
            a, b = self._upper(z, m, self.directions), self._upper(z, m + 1, self.directions)  # type: ignore[operator]
            if a is not None and b is not None:
                break
        if a is None or b is None:
            return None
        return b - (a - b) / 3
