"""Dominating pairs added for the event accountant (the pairs of
:mod:`dpverify.pld.pairs` cover the Poisson-subsampled Gaussian and Laplace
mechanisms and exact rational finite pairs).

Every pair here offers the interface the certified discretisation of
:mod:`dpverify.pld.discretise` uses: ``tails(eps)`` = (P(eps < L < inf),
Q(eps < L < inf)) as arb balls for a real ball ``eps``, ``tails_at_grid``, and
``inf_mass()`` = P(L = +inf) (AFA Lemma 37). A pair (P, Q) *dominates* a
mechanism under a relation when H_{e^eps}(M(D) || M(D')) <= H_{e^eps}(P || Q)
for all real eps and all neighbours (AFA Def 7).

* :class:`AtomPair`: a pair whose privacy loss takes countably many *exact
  rational* values lambda_j (or +-inf) with ball masses (P_j, Q_j), optionally
  Poisson-subsampled (AFA Thm 11 (1)); the discrete Laplace and discrete
  Gaussian pairs (AFA Prop 8, remark: N_Z(0, s^2) vs N_Z(Delta, s^2) dominates
  the discrete Gaussian mechanism because the pmf is log-concave; the same
  argument applies to the discrete Laplace pmf e^{-a|x|} tanh(a/2)), and the
  (eps0, delta0)-DP pair (LT Thm 4.5) with eps0 rational.
* :class:`MixtureGaussianPair`: the pair of dp_accounting's
  ``MixtureOfGaussiansDpEvent`` (Choquette-Choo et al. 2023, arXiv 2310.15526):
  N(0, s^2) vs sum_i p_i N(c_i, s^2), one orientation per direction.
* :class:`MaxCurvePair`: a pair whose hockey-stick curve is the pointwise
  maximum of two pairs' curves (AFA Cor 32 with Lemma 9: such a pair exists
  because the maximum of two curves of pairs is convex, nonincreasing in
  alpha = e^eps, equals 1 at alpha = 0 and is >= (1 - alpha)_+). Used for
  sampling without replacement under replace-one (AFA Prop 30, Cor 32).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Callable, Optional, Sequence, Union

from flint import arb, arb_poly, arb_series, ctx

from ..ball import arb_to_fraction, ball, brief_str, endpoints, normal_sf, working_precision
from ..errors import InvalidParameter, Undecided
from ..limits import MAX_EVENT_ATOMS, MAX_NOISE_MULTIPLIER, discrete_event_atoms
from ..numtext import log_fraction
from ..pld.dominating import LossBound, PairFromTails, dyadic_loss_bound, exact_loss_bound, tails_on_grid
from ..pld.taylor_blocks import TAYLOR_MIN_KNOTS, TaylorExpansion, grid_tails_by_blocks, taylor_expansion

__all__ = [
    "AtomPair",
    "MaxCurvePair",
    "MixtureGaussianPair",
    "discrete_gaussian_pair",
    "discrete_laplace_pair",
    "epsilon_delta_pair",
]

INF = math.inf
Loss = Union[Fraction, float]  # exact rational, or +-math.inf


def _above(lam: Loss, theta: arb) -> bool:
    """Certified lam > theta (lam exact or +-inf; theta a ball)."""
    if lam == INF:
        return True
    if lam == -INF:
        return False
    if theta.is_exact():  # an exact point: compare rationals, no ball can straddle it
        return lam > arb_to_fraction(theta)
    b = ball(lam)
    if b > theta:
        return True
    if b <= theta:
        return False
    raise Undecided("a loss atom lies inside the threshold ball")


@dataclass(frozen=True)
class AtomPair(PairFromTails):
    """Pair with privacy loss on exact atoms lambda_1 < ... < lambda_n (+-inf
    allowed), masses given by ``masses()`` (a callable evaluated at the current
    arb precision, returning (P_j, Q_j) balls in the order of ``losses``) plus
    an optional unresolved tail: ``tail()`` returns (tP, tQ), upper bounds of
    the P- and Q-mass of atoms *not* listed (their losses unknown), which is
    added as the ball [0, t] to every tail probability (sound whichever side
    of eps those atoms lie).

    ``sampling`` = (q, "remove" | "add") applies Poisson subsampling (AFA
    Thm 11 (1)): remove: (P', Q') = ((1-q) Q + q P, Q), loss
    L' = log(1 - q + q e^lambda); add: (P', Q') = (P, (1-q) P + q Q),
    L' = -log(1 - q + q e^-lambda). Both are increasing in lambda, so
    L' > eps iff lambda > theta(eps) for an explicit threshold theta, and the
    exact order of the atoms is kept.
    """

    losses: tuple
    masses: Callable[[], Sequence[tuple]]
    name: str
    tail: Optional[Callable[[], tuple]] = None
    sampling: Optional[tuple] = None
    _cache: dict = field(default_factory=dict, compare=False, repr=False)

    def _data(self):
        key = ctx.prec
        if key not in self._cache:
            ms = list(self.masses())
            if self.sampling is not None:
                q, d = self.sampling
                qb = ball(q)
                if d == "remove":
                    ms = [((1 - qb) * b + qb * a, b) for a, b in ms]
                else:
                    ms = [(a, (1 - qb) * a + qb * b) for a, b in ms]
            # suffix sums over atoms with finite L' (Q' > 0 and P' > 0 possible)
            n = len(ms)
            sp, sq = [arb(0)] * (n + 1), [arb(0)] * (n + 1)
            inf_p = arb(0)
            for j in range(n - 1, -1, -1):
                lam_inf = self._loss_is_plus_inf(j)
                p, qq = ms[j]
                if lam_inf:
                    inf_p += p
                    sp[j], sq[j] = sp[j + 1], sq[j + 1]
                else:
                    sp[j], sq[j] = sp[j + 1] + p, sq[j + 1] + qq
            t = self.tail() if self.tail is not None else (arb(0), arb(0))
            self._cache.clear()
            self._cache[key] = (sp, sq, inf_p, t)
        return self._cache[key]

    def _loss_is_plus_inf(self, j: int) -> bool:
        """Is the (subsampled) loss of atom j +inf (Q' = 0 < P')?"""
        lam = self.losses[j]
        if self.sampling is None or self.sampling[1] == "remove":
            return lam == INF
        return False  # add: Q' = (1-q) P + q Q > 0 wherever P > 0

    def inf_mass(self) -> arb:
        return self._data()[2]

    def loss_bound(self) -> LossBound:
        """An upper bound of the (subsampled) loss under P (:mod:`dpverify.pld.dominating`).
        lam_top = the largest listed loss whose base P-mass is not exactly 0 (atoms of
        P-mass 0 do not count P-almost surely). Unsampled: L <= lam_top, and none when
        lam_top = +inf (P-mass at +inf). Remove sampling: L' = log(1 - q + q e^lam) is
        increasing, so L' <= log(1 - q + q e^lam_top) (none for +inf: P' = (1-q) Q + q P
        keeps q times that mass). Add sampling: L' = -log(1 - q + q e^-lam) <=
        -log(1 - q + q e^-lam_top), which is -log(1 - q) for lam_top = +inf (the atom's
        Q' = (1-q) P > 0, so its loss is finite). Unlisted atoms (an unresolved ``tail``,
        the discrete Gaussian's) have unknown losses: none."""
        if self.tail is not None:
            return math.inf
        top = None
        for lam, (p, _) in zip(reversed(self.losses), reversed(list(self.masses()))):
            if not (p.is_exact() and p.is_zero()):
                top = lam
                break
        if top is None or top == -INF:
            return math.inf  # no P-mass on a finite or +inf loss: not a probability (never here)
        if self.sampling is None:
            if top == INF:
                return math.inf
            # rational losses (discrete Laplace a(D - 2x)) are their own exact bound
            return exact_loss_bound(top) if isinstance(top, Fraction) else dyadic_loss_bound(ball(top))
        q, d = self.sampling
        qb = ball(q)
        if d == "remove":
            return math.inf if top == INF else dyadic_loss_bound((1 - qb + qb * ball(top).exp()).log())
        if top == INF:
            return dyadic_loss_bound(-(1 - qb).log())
        return dyadic_loss_bound(-(1 - qb + qb * (-ball(top)).exp()).log())

    def _threshold(self, eps: arb) -> Optional[arb]:
        """theta with: L' > eps iff lambda > theta; None means every atom
        with finite loss counts, and "none" is returned as +inf ball."""
        if self.sampling is None:
            return eps
        q, d = self.sampling
        qb = ball(q)
        if d == "remove":
            c = (eps.expm1() + qb) / qb  # e^lambda > c
        else:
            c = ((-eps).expm1() + qb) / qb  # e^-lambda < c
        if c <= 0:
            return None if d == "remove" else arb("inf")
        if not c > 0:
            raise Undecided("eps at the end of the subsampled loss range")
        lc = c.log()
        return lc if d == "remove" else -lc

    def _first_above(self, theta: Optional[arb]) -> int:
        """Smallest j with lambda_j > theta (atoms sorted increasingly)."""
        n = len(self.losses)
        if theta is None:
            # every atom counts, including lambda = -inf under remove sampling
            # (L' = log(1-q) > eps there, as c <= 0 says)
            return 0
        if theta.is_finite() is False and theta > 0:
            return n
        lo, hi = 0, n
        while lo < hi:
            mid = (lo + hi) // 2
            if _above(self.losses[mid], theta):
                hi = mid
            else:
                lo = mid + 1
        return lo

    def tails(self, eps: arb) -> tuple[arb, arb]:
        sp, sq, _, (tp, tq) = self._data()
        j = self._first_above(self._threshold(eps))
        p, q = sp[j], sq[j]
        # (atoms with lambda = -inf sort first and are never above a finite
        # threshold, so their Q-mass at loss -inf is never counted)
        if tp != 0 or tq != 0:
            p = p + arb(0, 1) * tp / 2 + tp / 2
            q = q + arb(0, 1) * tq / 2 + tq / 2
        return p, q


    def subsampled(self, q: Fraction, direction: str) -> "AtomPair":
        """Poisson subsampling at rate q (AFA Thm 11 (1)); this pair must
        dominate the base mechanism for add neighbours and remove neighbours
        (true for the symmetric pairs built here)."""
        if self.sampling is not None:
            raise InvalidParameter("event", "nested subsampling is not supported")
        if self.tail is not None:
            raise InvalidParameter("event", f"Poisson subsampling of {self.name} is not supported")
        if direction not in ("remove", "add"):
            raise InvalidParameter("neighboring", f"subsampling direction {direction!r}")
        return AtomPair(self.losses, self.masses, f"{self.name}-poisson-{direction}", None, (q, direction))


def epsilon_delta_pair(eps0: Fraction, delta0: Fraction) -> AtomPair:
    """The pair dominating every (eps0, delta0)-DP mechanism, both
    directions (LT Thm 4.5; Kairouz, Oh, Viswanath 2015): losses
    -inf, -eps0, eps0, +inf with P-masses 0, (1-d)/(1+e^eps0),
    (1-d) e^eps0/(1+e^eps0), d and Q the mirror image."""
    if eps0 < 0 or not 0 <= delta0 <= 1:
        raise InvalidParameter("epsilon", "epsilon_delta needs epsilon >= 0 and delta in [0, 1]")

    def masses():
        e = ball(eps0).exp()
        d = ball(delta0)
        a = (1 - d) * e / (1 + e)
        b = (1 - d) / (1 + e)
        return [(arb(0), d), (b, a), (a, b), (d, arb(0))]

    if eps0 == 0:
        # the two middle atoms coincide at loss 0 (exact)
        def masses0():
            d = ball(delta0)
            return [(arb(0), d), (1 - d, 1 - d), (d, arb(0))]

        return AtomPair((-INF, Fraction(0), INF), masses0, "epsilon-delta")
    return AtomPair((-INF, -eps0, eps0, INF), masses, "epsilon-delta")


def _check_atoms(event: str, atoms: int, what: str, at_least: bool = False) -> None:
    """Refuse (exit 2, before any work) a discrete event whose finite pair would list more than
    MAX_EVENT_ATOMS atoms (:mod:`dpverify.limits`)."""
    if atoms > MAX_EVENT_ATOMS:
        raise InvalidParameter("events", f"{event} with {what}: its pair would have {'over ' if at_least else ''}"
                               f"{atoms:,} atoms, above the cap of {MAX_EVENT_ATOMS:,} (each atom is a certified "
                               "mass on every grid)")


def discrete_laplace_pair(a: Fraction, sensitivity: int) -> AtomPair:
    """(DLap(a), DLap(a) + Delta), pmf tanh(a/2) e^{-a|x|} on the integers,
    Delta = ``sensitivity`` (dp_accounting ``DiscreteLaplaceDpEvent``).
    Loss L(x) = a (|x - Delta| - |x|): a Delta for x <= 0, a (Delta - 2x) for
    0 < x < Delta, -a Delta for x >= Delta (finitely many exact atoms).
    Masses in closed form: P(x <= 0) = 1/(1+e^-a), P(x >= Delta) =
    e^{-a Delta}/(1+e^-a) (geometric series), and Q(x) = P(x - Delta).
    Dominates both directions (AFA Prop 8 remark: log-concave pmf)."""
    D = int(sensitivity)
    if D < 1 or a <= 0:
        raise InvalidParameter("sensitivity", "discrete Laplace needs noise_parameter > 0 and sensitivity >= 1")
    _check_atoms("discrete_laplace", discrete_event_atoms("discrete_laplace", D), f"sensitivity={D}")
    xs = list(range(D, -1, -1))  # x = D (lowest loss) .. 0 (highest loss)
    losses = tuple(Fraction(a) * (D - 2 * x) for x in xs)

    def masses():
        A = ball(a)
        t = (A / 2).tanh()
        e = (-A).exp()
        den = 1 + e
        out = []
        for x in xs:
            if x == 0:
                p = 1 / den
            elif x == D:
                p = (-A * D).exp() / den
            else:
                p = t * (-A * x).exp()
            # Q(x) = P(x - D): the mirror atom
            y = D - x
            if y == 0:
                qq = 1 / den
            elif y == D:
                qq = (-A * D).exp() / den
            else:
                qq = t * (-A * y).exp()
            out.append((p, qq))
        # atom x = 0 stands for all x <= 0 and atom x = D for all x >= D
        return out

    return AtomPair(losses, masses, "discrete-laplace")


def discrete_gaussian_pair(sigma: Fraction, sensitivity: int) -> AtomPair:
    """(N_Z(0, s^2), N_Z(Delta, s^2)) (AFA Prop 8 remark; Canonne, Kamath,
    Steinke 2020), pmf e^{-x^2/(2 s^2)} / Z on the integers.
    Loss L(x) = (Delta^2 - 2 Delta x) / (2 s^2), exact rational for rational
    s^2. Atoms x in [-W, W + Delta] are listed; the rest of both laws is an
    unresolved tail bounded by 2 t_{W+1} / ((1 - r) Z), r = e^{-(2W+3)/(2s^2)}
    (ratio test: t_{x+1}/t_x = e^{-(2x+1)/(2 s^2)} <= r for x >= W+1), with W
    chosen so that the tail is below 2^-(prec + 20) at the working precision."""
    s2 = Fraction(sigma) ** 2
    D = int(sensitivity)
    atoms = discrete_event_atoms("discrete_gaussian", D, Fraction(sigma))
    if s2 >= MAX_EVENT_ATOMS**2:  # sigma alone is past the cap (limits.discrete_event_atoms)
        _check_atoms("discrete_gaussian", atoms, f"sigma={brief_str(Fraction(sigma))}", at_least=True)
    _check_atoms("discrete_gaussian", atoms, f"sigma={brief_str(Fraction(sigma))}, sensitivity={D}")
    W = (atoms - D - 1) // 2  # the window the count was taken of
    xs = list(range(W + D, -W - 1, -1))  # decreasing x = increasing loss
    losses = tuple((Fraction(D * D) - 2 * D * x) / (2 * s2) for x in xs)

    def parts():
        S2 = ball(s2)
        t = {x: (-(ball(x * x)) / (2 * S2)).exp() for x in range(-W - D, W + D + 1)}
        core = sum((t[x] for x in range(-W, W + 1)), arb(0))
        tail_one = (-(ball((W + 1) ** 2)) / (2 * S2)).exp() / (1 - (-(ball(2 * W + 3)) / (2 * S2)).exp())
        Z = core + tail_one * arb(1, 1)  # Z in [core, core + 2 tail]
        return t, Z, tail_one, core

    def masses():
        t, Z, _, _ = parts()
        return [(t[x] / Z, t[x - D] / Z) for x in xs]

    def tail():
        _, Z, tail_one, core = parts()
        # P-mass outside [-W, W + D] <= 2 tail_one / Z, Q likewise
        b = 2 * tail_one / core
        return b, b

    return AtomPair(losses, masses, "discrete-gaussian", tail)


# --------------------------------------------------------------------------- mixture of Gaussians


#: the working precision of a Taylor block's series over its whole ball (:meth:`MixtureGaussianPair._block`)
_BALL_SERIES_BITS = 64


@dataclass(frozen=True)
class MixtureGaussianPair(PairFromTails):
    """dp_accounting's mixture-of-Gaussians pair, in units of s (mu_i = c_i/s,
    all c_i >= 0, probabilities p_i summing to 1):

    * remove: P = sum_i p_i N(mu_i, 1), Q = N(0, 1); loss
      L(x) = g(x) := log sum_i p_i e^{mu_i x - mu_i^2/2}, increasing in x
      (log-sum-exp of nondecreasing affine functions), from log p_0 (the mass
      of the mu_i = 0 components; -inf if none) to +inf;
    * add: P = N(0, 1), Q = the mixture; L(x) = -g(x), decreasing.

    Tails: L > eps iff x > x_eps (remove, g(x_eps) = eps) or x < x'_eps (add,
    g(x'_eps) = -eps). The root is *proposed* in floats (along a grid, Newton
    from the neighbouring knot's root), polished by Newton steps in arb at
    doubling precision, and *proved* by the sign change g(t - r) < y < g(t + r)
    in arb; the tails are then evaluated on the ball [t - r, t + r]
    (normal_sf is rigorous on balls). A proposal that cannot be proved falls
    back to a scalar search, then to Undecided (the discretisation raises the
    precision).
    """

    sigma: Fraction
    sensitivities: tuple
    probs: tuple
    direction: str
    _cache: dict = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.direction not in ("remove", "add"):
            raise InvalidParameter("neighboring", f"direction {self.direction!r}")
        # g increasing (every mu_i >= 0) and a law (every p_i >= 0) are what the tails' derivation
        # rests on: the event readers check both, a pair built directly is checked here
        if any(c < 0 for c in self.sensitivities) or any(p < 0 for p in self.probs):
            raise InvalidParameter("sensitivities", "a mixture of Gaussians needs sensitivities >= 0 and "
                                                    "sampling_probs >= 0")
        # a component's shift c_i / s is its inverse noise multiplier: beyond 1 / MAX_NOISE_MULTIPLIER's
        # mirror (10^100) the float proposals' mu_i^2 leave binary64 (sd 1e-300 with a sensitivity 1e300
        # was an OverflowError, exit 4), and the loss range is far beyond any grid anyway
        top = max(self.sensitivities, default=Fraction(0))
        if self.sigma <= 0 or top > self.sigma * MAX_NOISE_MULTIPLIER:
            raise InvalidParameter("events", f"mixture_of_gaussians: standard_deviation={brief_str(Fraction(self.sigma))} "
                                   f"must be > 0 and at least the largest sensitivity ({brief_str(Fraction(top))}) "
                                   f"/ {brief_str(Fraction(MAX_NOISE_MULTIPLIER))} (a component's shift c_i / s is at most 1e100)")

    def inf_mass(self) -> arb:
        return arb(0)

    def swap_key(self) -> Optional[tuple]:
        """The law of the remove direction's (P, Q) = (mixture, N(0, 1)); the add direction is
        (N(0, 1), mixture), the same pair swapped (class docstring), so two pairs with equal keys
        in the two directions are each other's swap (:func:`dpverify.pld.pairs.swapped_pairs`:
        the add direction's curve is then read off the remove direction's composition). None
        unless the weights sum to exactly 1: the swap identity is one of probability laws (the
        event readers refuse other weights; a pair built directly is not read off the other)."""
        if sum(map(Fraction, self.probs), Fraction(0)) != 1:
            return None
        return (Fraction(self.sigma), tuple(map(Fraction, self.sensitivities)), tuple(map(Fraction, self.probs)))

    def float_tails(self, eps) -> tuple:
        """Binary64 (P(L > eps), Q(L > eps)) at the points of the numpy array ``eps``: the
        formulas of :meth:`_tails_with` with the float roots of :meth:`_float_roots`. Only a
        plan (:func:`dpverify.pld.plan._float_tails`): nothing certified reads it."""
        import numpy as np

        remove = self.direction == "remove"
        ys = np.asarray(eps, dtype=np.float64) * (1.0 if remove else -1.0)
        if self._p0() == 1:  # P = Q: the loss is 0
            v = (ys < 0).astype(np.float64)
            return v, v.copy()
        p0 = self._p0()
        floor = log_fraction(p0) if p0 > 0 else -math.inf
        inside = ys > floor
        xs = np.array(self._float_roots(ys[inside].tolist()), dtype=np.float64)
        fl = self._float_comps()
        r2 = math.sqrt(2.0)

        def sf(v: np.ndarray) -> np.ndarray:
            return np.array([0.5 * math.erfc(t / r2) for t in v.tolist()])

        # y at or below log p0: every x (remove) or no x (add) is in the event
        out = 1.0 if remove else 0.0
        base = sf(xs if remove else -xs)
        mix = np.zeros_like(base)
        for lp, mu in fl:
            mix += math.exp(lp) * (base if mu == 0 else sf(xs - mu if remove else mu - xs))
        P, Q = np.full(ys.size, out), np.full(ys.size, out)
        P[inside], Q[inside] = (mix, base) if remove else (base, mix)
        return P, Q

    def loss_bound(self) -> LossBound:
        """Add: L = -g(x) with g(x) = log(p_0 + sum_{mu_i > 0} p_i e^{mu_i x - mu_i^2/2})
        > log p_0 (the mixture's weight at sensitivity 0), so L < -log p_0 (0 when every
        component is at 0: P = Q); none when p_0 = 0 (g -> -inf as x -> -inf). Remove:
        L = g(x) -> +inf as x -> +inf unless every component is at 0 (then L = 0)."""
        p0 = self._p0()
        if p0 == 1:
            return Fraction(0)
        if self.direction == "remove" or p0 == 0:
            return math.inf
        return dyadic_loss_bound(-ball(p0).log())

    def _p0(self) -> Fraction:
        """Total probability of the components with sensitivity 0 (an exact rational of the
        inputs, asked at every knot: kept once computed)."""
        got = self._cache.get("p0")
        if got is None:
            got = self._cache["p0"] = sum((p for c, p in zip(self.sensitivities, self.probs) if c == 0), Fraction(0))
        return got

    def _consts(self) -> tuple:
        """(components [(mu_i, p_i)] as balls, log p0 ball or None), cached per precision."""
        if ctx.prec not in self._cache:
            s = ball(self.sigma)
            comps = [(ball(c) / s, ball(p)) for c, p in zip(self.sensitivities, self.probs) if p != 0]
            p0 = self._p0()
            fl = self._cache.get("fl")
            self._cache.clear()
            self._cache["p0"] = p0
            if fl is not None:
                self._cache["fl"] = fl
            self._cache[ctx.prec] = (comps, ball(p0).log() if 0 < p0 < 1 else None)
        return self._cache[ctx.prec]

    @staticmethod
    def _sums(x, comps, zero, slope: bool = True) -> tuple:
        """(G(x), G'(x)) with G = sum_i p_i e^{mu_i x - mu_i^2/2} = e^{g(x)}, for an arb ball or an
        arb power series ``x`` (``zero``: the 0 of its kind); G' is None unless ``slope``. A
        component with mu = 0 (exactly) weighs p e^0 = p and adds nothing to G'."""
        s = zero
        d = zero if slope else None
        for mu, p in comps:
            if mu == 0:
                s += p
            else:
                w = p * (mu * (x - mu / 2)).exp()
                s += w
                if d is not None:
                    d += w * mu
        return s, d

    @classmethod
    def _g(cls, x: arb, comps) -> tuple[arb, arb]:
        """(g(x), g'(x)) as balls (g' = G' / G, :meth:`_sums`)."""
        s, d = cls._sums(x, comps, arb(0))
        return s.log(), d / s

    def _float_comps(self) -> list:
        """(log p_i, mu_i) in binary64 for the float proposals: log p_i from the exact rational
        (a probability 1e-400 is 0.0 as a float), mu_i = c_i / s below 1e100 (checked above).
        Kept once formed: every root proposal asks (exact rationals of the inputs, the same
        doubles whenever formed)."""
        got = self._cache.get("fl")
        if got is None:
            got = self._cache["fl"] = [(log_fraction(p), float(c / self.sigma))
                                       for c, p in zip(self.sensitivities, self.probs) if p != 0]
        return got

    def _float_roots(self, ys: Sequence[float]) -> list:
        """Doubles near the roots of g(x) = y (proposals only; NaN where the
        search failed), all at once in numpy: g is increasing and convex
        (log-sum-exp of affine functions), and every component gives
        g(x) >= log p_i + mu_i x - mu_i^2/2, so x_i = (y - log p_i +
        mu_i^2/2) / mu_i lies at or right of the root; Newton from the least
        x_i then decreases monotonically to the root (no overshoot on a
        convex increasing function). Entries that have not converged after
        the iterations go to :meth:`_float_roots_scalar`. Floats propose,
        :meth:`_prove_root` proves. One y (a block's centre, a knot of the grid range's search)
        runs the same iteration in plain floats (:meth:`_float_root_one`): numpy's fixed cost
        per operation was most of such a call."""
        import numpy as np

        fl = self._float_comps()
        if len(ys) == 1 and any(b > 0 for _, b in fl):
            out = [self._float_root_one(float(ys[0]), fl)]
            if math.isfinite(out[0]):
                return out
        y = np.asarray(ys, dtype=np.float64)
        if y.size == 0:
            return []
        lp = np.array([a for a, _ in fl])[:, None]
        mu = np.array([b for _, b in fl])[:, None]
        pos = mu[:, 0] > 0
        if not bool(pos.any()):
            return self._float_roots_scalar(ys)
        x = np.min((y[None, :] - lp[pos] + mu[pos] ** 2 / 2) / mu[pos], axis=0)
        done = np.zeros(y.size, dtype=bool)
        # only the entries still iterating are carried (act: their indices; xa, ya: their x and y): an
        # entry's iterates are its own elementwise operations, the same whichever others share the
        # arrays, and a converged entry kept its x before too (its step was 0). One entry that never
        # meets the tolerance (g' tiny next to the end of the loss range: the step is rounding noise)
        # kept the whole batch in its 100 iterations: 3,205 knots of the 3-component mixture at 2^-8
        # cost 5.4 ms for 2,013 entries done in 2 iterations and none after 11
        act = np.arange(y.size)
        xa, ya = x.copy(), y
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            for _ in range(100):
                t = lp + mu * xa[None, :] - mu * mu / 2
                mx = t.max(axis=0)
                w = np.exp(t - mx)
                sw = w.sum(axis=0)
                v = mx + np.log(sw)
                d = (w * mu).sum(axis=0) / sw
                step = np.clip((v - ya) / d, -8.0, 8.0)
                xa = xa - step
                new = np.abs(step) < 1e-14 * (1 + np.abs(xa))
                if bool(new.any()):
                    x[act[new]] = xa[new]
                    done[act[new]] = True
                    rest = ~new
                    act, xa, ya = act[rest], xa[rest], ya[rest]
                    if act.size == 0:
                        break
        out = [float(v) if ok and math.isfinite(v) else math.nan for v, ok in zip(x.tolist(), done.tolist())]
        # g > log p0 everywhere: no root to propose at or below it (the
        # tails there are decided without one, _tails_with)
        p0 = self._p0()
        floor = log_fraction(p0) if p0 > 0 else -math.inf
        bad = [k for k, v in enumerate(out) if not math.isfinite(v) and ys[k] > floor + 1e-12 * (1 + abs(floor))]
        if bad:
            for k, v in zip(bad, self._float_roots_scalar([ys[k] for k in bad])):
                out[k] = v
        return out

    @staticmethod
    def _float_root_one(y: float, fl: list) -> float:
        """:meth:`_float_roots`' Newton iteration for one y in plain binary64 (the start at or
        right of the root, steps clipped to 8, at most 100), or NaN where it has not converged
        (the caller then runs the general route). A proposal only."""
        pos = [(a, b) for a, b in fl if b > 0]
        x = min((y - a + b * b / 2) / b for a, b in pos)
        for _ in range(100):
            t = [a + b * x - b * b / 2 for a, b in fl]
            mx = max(t)
            w = [math.exp(v - mx) for v in t]
            sw = sum(w)
            d = sum(wi * b for wi, (_, b) in zip(w, fl)) / sw
            if not (d > 0 and math.isfinite(mx)):
                return math.nan
            step = (mx + math.log(sw) - y) / d
            if not math.isfinite(step):
                return math.nan
            step = max(-8.0, min(8.0, step))
            x -= step
            if abs(step) < 1e-14 * (1 + abs(x)):
                return x if math.isfinite(x) else math.nan
        return math.nan

    def _float_roots_scalar(self, ys: Sequence[float]) -> list:
        """Doubles near the roots of g(x) = y for increasing or decreasing y
        (proposals only; NaN where the search failed): safeguarded Newton from
        the previous root (neighbouring grid points have close roots), else
        bisection on a doubling bracket."""
        fl = self._float_comps()

        def gf(x: float) -> tuple[float, float]:
            ts = [lp + mu * x - mu * mu / 2 for lp, mu in fl]
            mx = max(ts)
            ws = [math.exp(t - mx) for t in ts]
            sw = sum(ws)
            return mx + math.log(sw), sum(w * mu for w, (_, mu) in zip(ws, fl)) / sw

        out: list = []
        x = 0.0
        for y in ys:
            ok = False
            for _ in range(30):
                v, d = gf(x)
                if d <= 1e-300:
                    break
                step = max(-8.0, min(8.0, (v - y) / d))
                x -= step
                if abs(step) < 1e-14 * (1 + abs(x)):
                    ok = True
                    break
            if not ok:
                lo, hi = -1.0, 1.0
                while gf(lo)[0] > y and lo > -1e12:
                    lo *= 2
                while gf(hi)[0] < y and hi < 1e12:
                    hi *= 2
                for _ in range(120):
                    mid = (lo + hi) / 2
                    if mid in (lo, hi):
                        break
                    lo, hi = (mid, hi) if gf(mid)[0] < y else (lo, mid)
                x = (lo + hi) / 2
            out.append(x if math.isfinite(x) else math.nan)
            if not math.isfinite(x):
                x = 0.0
        return out

    def _prove_root(self, y: arb, comps, x0: float) -> Optional[arb]:
        """Ball containing the root of g(x) = y, from the proposal x0: Newton
        in arb at doubling precision (53 -> 106 -> ... bits, midpoints only)
        to about half the working precision, then one interval Newton step
        N(X) = t - (g(t) - y) / g'(X) on X = t +- r: if N(X) lies inside X,
        X holds exactly one root and it lies in N(X) (Moore, Interval
        Analysis, 1966; g is C^1 with g'(X) > 0), and N(X) is about twice as
        accurate as t. If that step fails, the certified sign change
        g(t - r) < y < g(t + r) after Newton to full precision (the former
        route); None if neither can be shown."""
        prec = ctx.prec

        def polish(t: arb, bits: int, upto: int) -> tuple[Optional[arb], int]:
            # Newton on midpoints, doubling the precision, until ``upto`` bits
            while bits < upto:
                bits = min(2 * bits, prec)
                with working_precision(bits + 16):
                    gv, gd = self._g(t, comps)
                    if not gd > 0:
                        return None, bits
                    t = arb((t - (gv - y) / gd).mid())
            return t, bits

        t0, bits = polish(arb(x0), 53, prec // 2 + 12)
        if t0 is None:
            return None
        t = t0
        X = arb(t, 2.0 ** -(bits - 8) * (1 + abs(x0)))  # any radius: the step below decides
        gv, _ = self._g(t, comps)
        _, gd = self._g(X, comps)
        if gd > 0:
            N = t - (gv - y) / gd
            if X.contains(N):
                return N
        t1, bits = polish(t, bits, prec)
        if t1 is None:
            return None
        t = t1
        r = endpoints(arb(2) ** (-(prec - 12)) * (1 + abs(t)))[1]
        for _ in range(4):
            a, _ = self._g(t - r, comps)
            b, _ = self._g(t + r, comps)
            if a < y and b > y:
                return t + arb(0, 1) * r
            r = r * 256
        gv, slope = self._g(t, comps)
        if 0 < slope < 1:
            # g is a log of a sum near 1 where the loss is near log p0, so its value carries an
            # absolute error (its ball's radius: the precision, and the components' balls as formed)
            # while its slope may be tiny (a shifted component of weight 1e-7 at sd 0.25: g' ~ 4e-7):
            # the root is then known to about |g(t) - y| / g' only, which the radius must cover (any
            # radius is sound: the sign change decides; ref53: undecided at 100, 160, 200 and 300
            # bits from the exact root). Tried last, so a root proved before keeps its ball
            r = endpoints(2 * abs(gv - y) / arb(slope.lower()))[1]
            a, _ = self._g(t - r, comps)
            b, _ = self._g(t + r, comps)
            if a < y and b > y:
                return t + arb(0, 1) * r
        return None

    def _root(self, y: arb, comps, guess: Optional[float]) -> arb:
        x = self._prove_root(y, comps, guess) if guess is not None and math.isfinite(guess) else None
        if x is None:
            g = float(self._float_roots([float(y.mid())])[0])
            x = self._prove_root(y, comps, g) if math.isfinite(g) else None
        if x is None:
            raise Undecided("mixture-of-Gaussians loss inversion")
        return x

    def _tails_with(self, eps: arb, guess: Optional[float],
                    sf: Callable[[arb], arb] = normal_sf) -> tuple[arb, arb]:
        comps, lp0 = self._consts()
        remove = self.direction == "remove"
        if self._p0() == 1:
            # all components at 0: P = Q, loss identically 0
            if eps < 0:
                return arb(1), arb(1)
            if eps >= 0:
                return arb(0), arb(0)
            raise Undecided("eps at 0 for a zero-sensitivity mixture")
        y = eps if remove else -eps
        # g ranges over (log p0, inf); y <= log p0 means every x (remove) /
        # no x (add) satisfies the event
        if lp0 is not None:
            if y <= lp0:
                return (arb(1), arb(1)) if remove else (arb(0), arb(0))
            if not y > lp0:
                raise Undecided("eps at the end of the mixture loss range")
        x = self._root(y, comps, guess)
        # components with mu = 0 (exactly) share the base law's tail
        if remove:
            qt = sf(x)
            pt = sum((p * (qt if mu == 0 else sf(x - mu)) for mu, p in comps), arb(0))
            return pt, qt
        pt = sf(-x)
        qt = sum((p * (pt if mu == 0 else sf(mu - x)) for mu, p in comps), arb(0))
        return pt, qt

    def tails(self, eps: arb) -> tuple[arb, arb]:
        return self._tails_with(eps, None)

    def _inverse_poly(self, eps_c: arb, length: int, comps) -> Optional[list]:
        """Exact (dyadic) coefficients of a polynomial p with p(t) close to x(eps_c + t), the
        point where L crosses eps_c + t (a proposal only: :meth:`_block_series` proves how
        close). From x_c, a point near the root at eps_c, and h(u) = g(x_c + u) - g(x_c): the
        inverse function of h is the series reversion of h (Lagrange inversion), and
        x(eps) = x_c + h^{-1}(y(eps) - g(x_c)), y = eps (remove) or -eps (add)."""
        remove = self.direction == "remove"
        try:
            xc = self._root(eps_c if remove else -eps_c, comps, None)
        except Undecided:
            return None
        x0 = arb(xc.mid())
        old = ctx.cap
        try:
            ctx.cap = length  # series are cut at ctx.cap terms whatever their own length
            G, _ = self._sums(arb_series([x0, 1], prec=length), comps, arb_series([0], prec=length), slope=False)
            cs = G.log().coeffs()
            if len(cs) < 2:
                return None
            inv = arb_series([arb(0)] + cs[1:], prec=length).reversion().coeffs()
        except ValueError:  # h'(0) not proved nonzero at this precision
            return None
        finally:
            ctx.cap = old
        out = [x0] + [arb(v.mid()) if (remove or k % 2 == 0) else -arb(v.mid()) for k, v in enumerate(inv) if k > 0]
        return out if all(v.is_finite() for v in out) else None

    def _newton_poly(self, eps_c: arb, length: int, comps, eps_p: arb, poly_p: list) -> Optional[list]:
        """As :meth:`_inverse_poly` (a proposal only), from ``poly_p``, the proposal at a nearby
        centre ``eps_p``: X0(t) = poly_p(eps_c - eps_p + t) (a Taylor shift), then one Newton step
        on power series, X1 = X0 - (g(X0) - y) / g'(X0), g' = G' / G (G = sum_i p_i e^{mu_i x -
        mu_i^2/2}, G' = sum_i p_i mu_i e^{mu_i x - mu_i^2/2}), which squares X0's distance from
        the root's series. None where a coefficient is not finite."""
        sign = 1 if self.direction == "remove" else -1
        old = ctx.cap
        try:
            ctx.cap = length
            X = arb_series(arb_poly(poly_p)(arb_poly([eps_c - eps_p, 1])).coeffs(), prec=length)
            G, D = self._sums(X, comps, arb_series([0], prec=length))
            X = X - (G.log() - arb_series([sign * eps_c, sign], prec=length)) * G / D
        except (ValueError, ZeroDivisionError):
            return None
        finally:
            ctx.cap = old
        out = [arb(v.mid()) for v in X.coeffs()]
        return out if len(out) == length and all(v.is_finite() for v in out) else None

    def _block_series(self, e: arb, length: int, comps, poly: list, eps_c: arb, inv_s2: arb) -> tuple:
        """Taylor coefficients in t (``length`` of them) of three functions of eps = e + t, at
        every point of the ball ``e``: P(x > X), Q(x > X) in the remove orientation (their
        mirror in the add one) and the residual r = g(X) - y(eps), where X = p(eps - eps_c) for
        the fixed polynomial p of :meth:`_inverse_poly`. Each is an explicit analytic function of
        eps (erfc and log of a positive sum of exponentials of a polynomial), so arb's series at
        the ball enclose its coefficients at each point (as the Poisson Gaussian pair's
        series); :meth:`_block` turns r into the distance from X to the true root.

        The tails' series are their values at X(e) plus the integrals of their derivatives in t
        (the fundamental theorem of calculus, coefficient by coefficient, as arb's own erfc
        series): with phi the N(0, 1) density, d/dt Q(x > X) = -phi(X) X' and, since phi(X - mu)
        = phi(X) e^{mu X - mu^2/2}, d/dt sum_i p_i Q(x > X - mu_i) = -phi(X) G(X) X' with G =
        sum_i p_i e^{mu_i X - mu_i^2/2}, the sum whose log is g (the likelihood ratio: dP = e^L
        dQ). One exp series for phi(X) and G's, already formed for r, in place of an erfc series
        per component; the add orientation's tails are P(x < X), Q(x < X), whose derivatives
        are the same with the sign flipped."""
        remove = self.direction == "remove"
        if e.is_exact() and e == eps_c:
            # at the centre itself t = eps - eps_c is the series variable, so X's coefficients are p's
            X = arb_series(poly, prec=length)
        else:
            # X = p(e - eps_c + t): one composition with the linear series (arb_poly_compose
            # encloses the composed coefficients at every point of the ball e - eps_c)
            X = arb_series(arb_poly(poly)(arb_poly([e - eps_c, 1])).coeffs(), prec=length)
        G, _ = self._sums(X, comps, arb_series([0], prec=length), slope=False)
        eps = arb_series([e, 1], prec=length)
        r = G.log() - eps if remove else G.log() + eps
        dq = (X * X * arb(-0.5)).exp() * X.derivative() / (2 * arb.pi()).sqrt()
        dp = dq * G
        x0 = X.coeffs()[0]  # X(e): a ball over the ball e
        if remove:
            q0 = (x0 * inv_s2).erfc() / 2
            p0 = sum((p * (q0 if mu == 0 else ((x0 - mu) * inv_s2).erfc() / 2) for mu, p in comps), arb(0))
            return p0 - dp.integral(), q0 - dq.integral(), r
        p0 = (-x0 * inv_s2).erfc() / 2
        q0 = sum((p * (p0 if mu == 0 else ((mu - x0) * inv_s2).erfc() / 2) for mu, p in comps), arb(0))
        return p0 + dq.integral(), q0 + dp.integral(), r

    def _block(self, m: int, a: int, b: int, order: int, tol: arb, comps, inv_s2: arb,
               reach: int = 0, near: Optional[dict] = None) -> Optional[TaylorExpansion]:
        """The expansion at the centre knot that encloses (P(L > eps), Q(L > eps)) at the knots
        eps = i 2^-m, i = a - ``reach`` .. b + ``reach`` (:class:`.taylor_blocks.TaylorExpansion`, the
        distance bound below as its ``extra``), or None (the block is then split). Unevaluated:
        :func:`.taylor_blocks.grid_tails_by_blocks` evaluates it at the block's knots, or, with
        ``reach`` 1, the discretisation forms the masses from it
        (:func:`dpverify.pld.discretise.block_masses`). ``near``: a dict the caller keeps over one
        grid, where the last block answered leaves its centre knot and proposal, from which the
        next block's proposal is one Newton step (:meth:`_newton_poly`; a choice of route only:
        the proof below holds for any proposal p).

        Proof. Let x(eps) be the true crossing point (L > eps iff x > x(eps) in the remove
        orientation, x < x(eps) in the add one; g(x(eps)) = y(eps) = +-eps) and X = p(eps -
        eps_c) for the fixed polynomial p. taylor_block (Taylor with the Lagrange remainder)
        encloses F(X) (the tails as functions of the crossing point) at each knot. With
        r = g(X) - y, by the mean value theorem r = g(X) - g(x(eps)) = g'(xi) (X - x(eps)) for some xi
        between X and x(eps). g is convex (log-sum-exp of affine functions), so g' is
        increasing and g'(xi) >= g'(z) for any z below both; z = (the ball p([-R, R])'s lower
        end) - 2^-20 is below X, and below x(eps) once g(z) < y at the block's smallest y
        (g increasing: x(y) > z iff g(z) < y). So |X - x(eps)| <= |r| / g'(z), and since each
        tail is a normal survival function at x, or a mixture of them shifted by constants,
        its derivative in x is at most max(1, sum p_i) / sqrt(2 pi) in absolute value: F(x(eps))
        lies in F(X) +- (1 + sum p_i) / sqrt(2 pi) |r| / g'(z), |r| bounded on the whole block
        by r's Taylor polynomial at the centre and its Lagrange remainder (the coefficient N + 1
        over the block's ball, as in taylor_block)."""
        h = arb(2) ** (-m)
        c = (a + b) // 2
        eps_c = h * c
        # the proposal p: one Newton step from the last block's where it is close (a choice of
        # route: the proof below holds for any p), else by series reversion at the centre
        key = (ctx.prec, m, order)
        last = None if near is None else near.get(key)
        if last is not None and abs(c - last[0]) <= 2 * (b - a + 1):
            got = self._block_with(m, a, b, c, order, tol, comps, inv_s2, reach,
                                   self._newton_poly(eps_c, order + 2, comps, h * last[0], last[1]))
            if got is not None:
                near[key] = (c, got[1])
                return got[0]
        got = self._block_with(m, a, b, c, order, tol, comps, inv_s2, reach,
                               self._inverse_poly(eps_c, order + 2, comps))
        if got is None:
            return None
        if near is not None:
            near[key] = (c, got[1])
        return got[0]

    def _block_with(self, m: int, a: int, b: int, c: int, order: int, tol: arb, comps, inv_s2: arb, reach: int,
                    poly: Optional[list]) -> Optional[tuple[TaylorExpansion, list]]:
        """:meth:`_block`'s expansion from the proposal ``poly`` (its proof), with ``poly``; None
        where there is no proposal or the bound fails."""
        if poly is None:
            return None
        remove = self.direction == "remove"
        h = arb(2) ** (-m)
        eps_c = h * c
        rs: list = []  # the residual's series at the centre, then over the block's ball

        def series(e: arb, L: int) -> tuple:
            if e.is_exact():
                pt, qt, r = self._block_series(e, L, comps, poly, eps_c, inv_s2)
            else:
                # the series over the block's ball serves only as remainder bounds, whose width is
                # the ball's (radius 1/16 nat or so), not the rounding's: a lower precision rounds
                # each coefficient by 2^-_BALL_SERIES_BITS of the terms forming it, far inside that
                with working_precision(min(ctx.prec, _BALL_SERIES_BITS)):
                    pt, qt, r = self._block_series(e, L, comps, poly, eps_c, inv_s2)
            rs.append(r)
            return pt, qt

        got = taylor_expansion(series, h, a, b, c, order, tol, reach)
        if got is None or len(rs) != 2:
            return None
        R = got.radius  # h (max(c - a, b - c) + reach): every knot the expansion serves
        # |r| on the whole block: its Taylor polynomial at the centre with the Lagrange remainder
        # (coefficient N + 1 over the ball, as taylor_block's proof)
        at, over = rs[0].coeffs(), rs[1].coeffs()
        if len(at) != order + 1 or len(over) != order + 2:
            return None
        # both polynomials evaluated in arb on the ball S = [-R, R] (which holds every s of the
        # block): the result encloses the polynomial's value at each point of S
        S = arb(0, R.mid() if R.is_exact() else R.upper())
        r_max = abs(arb_poly(at)(S)) + abs(over[order + 1]) * R ** (order + 1)
        z = arb(arb_poly(poly)(S).lower()) - arb(2) ** -20
        y_min = h * (a - reach) if remove else -(h * (b + reach))
        gz, dz = self._g(z, comps)
        if not (gz < y_min and dz > 0):
            return None
        # the tails' slopes in x: at most (sum p_i) / sqrt(2 pi) (the mixture side) and 1 / sqrt(2 pi)
        # (the N(0, 1) side); 1 + sum p_i covers both whatever the weights sum to
        e = (r_max * (1 + sum((p for _, p in comps), arb(0))) / (2 * arb.pi()).sqrt() / dz).upper()
        if not e <= tol:
            return None  # the proposal is too far from the root here: a smaller block
        return replace(got, extra=arb(e)), poly

    def tails_at_grid(self, m: int, i0: int, n: int, progress=None) -> tuple[list, list]:
        """:meth:`tails` at the exact points i 2^-m, i = i0..n: by blocks of knots that
        share one Taylor expansion with a proven remainder (:meth:`_block`), as the
        Poisson-subsampled Gaussian pair does; a
        block whose remainder is not small enough (near the end of the loss range, where the
        root runs to -inf) is split, and its smallest pieces get one proved root and one
        erfc per component per knot (float root proposals made first for the piece). Every
        value is an enclosure either way; the route is decided on arb balls and the inputs only."""
        P_t, Q_t, _ = self._grid(m, i0, n, progress, 0)
        return P_t, Q_t

    def grid_expansions(self, m: int, i0: int, n: int, progress=None) -> tuple[list, list, list]:
        """As :meth:`tails_at_grid`, but the blocks' expansions are returned unevaluated (each
        valid one knot beyond its block on either side, with the distance of the proposed
        crossing point from the true one as its ``extra`` error) and their knots are None in the
        tail lists: the discretisation forms its masses from the expansions directly
        (:mod:`dpverify.pld.discretise`, as for the Poisson-subsampled Gaussian pair)."""
        return self._grid(m, i0, n, progress, 1)

    def _grid(self, m: int, i0: int, n: int, progress, reach: int) -> tuple[list, list, list]:
        sign = 1.0 if self.direction == "remove" else -1.0
        inv_s2 = 1 / arb(2).sqrt()
        comps, lp0 = self._consts()

        def sf(x: arb) -> arb:
            # arb's erfc is rigorous on balls; on the grid range the arguments
            # are moderate, where it is also tight (normal_sf's midpoint route
            # is for huge inexact arguments and costs more per call)
            return (x * inv_s2).erfc() / 2

        total = n - i0 + 1
        near: dict = {}  # the last block's centre and proposal (_block)

        def knots(a: int, b: int) -> tuple[list, list]:
            guesses = self._float_roots([sign * i * 2.0 ** -m for i in range(a, b + 1)])
            # the caller's progress (its clock, in the PLD loop) every few knots: one knot is a
            # proved root and an erfc per component (a few ms), and a grid can hold 10^5 of them
            # (mu 0, 1, 65, sd 1.3: 51,001 knots at 2^-5 ran 99 CPU s past a 10 s budget)
            inner = None if progress is None else (lambda f: progress((a - i0 + f * (b - a + 1)) / total))
            return tails_on_grid(m, a, b, inner, lambda k, eps: self._tails_with(eps, guesses[k], sf))

        def block(a: int, b: int, order: int, tol: arb) -> Optional[TaylorExpansion]:
            if progress is not None:  # a block that fails is split and tried again: each try is work
                progress((a - i0) / total)
            return self._block(m, a, b, order, tol, comps, inv_s2, reach, near)

        # on grids of 2^-7 and coarser (2^(m-3) < 32 knots) the smallest block (TAYLOR_MIN_KNOTS = 32 knots) spans more than 1/8
        # nat, whose residual bound fails (below): no block is tried there, every knot gets its own root
        # (measured: of 1,006 tries at 2^-5..2^-7 over four mixtures, the three components 0, 1, 2 at
        # weights .98, .01, .01 with sd 1 and 2, (1/2, 3) at sd 3/2 and (0, 1, 3) at sd 1/2, both directions,
        # none held; 2^-8's 32-knot blocks held on 1,008 of 1,034. A failed try costs about 30 knots'
        # roots: the add direction of the first mixture at 2^-6, 42 -> 30 ms). A choice of route: the knots
        # get the values the split tries ended with (the same root and erfc calls on the same float guesses)
        if self._p0() == 1 or (1 << max(0, m - 3)) < TAYLOR_MIN_KNOTS:
            P_t, Q_t = knots(i0, n)
            return P_t, Q_t, []
        # the end of the loss range in eps (remove: log p0; add: -log p0), where x(eps) -> -inf
        end = None if lp0 is None else (lp0 if sign > 0 else -lp0)
        # first tries of 1/8 nat on every grid (taylor_block_size's 128-knot floor is 1/2 nat at
        # 2^-8): a wider block's residual bound over its ball fails (3 components, mu 0, 1, 2 at
        # 2^-8: 73 of 179 blocks failed and were split to 32 knots; 0.30 -> 0.21 CPU s a direction)
        size = max(TAYLOR_MIN_KNOTS, min(1024, 1 << max(0, m - 3)))
        return grid_tails_by_blocks(m, i0, n, progress, end, block, knots, keep=reach > 0, size=size)


# --------------------------------------------------------------------------- pointwise maximum


@dataclass(frozen=True)
class MaxCurvePair(PairFromTails):
    """A pair (P~, Q~) whose hockey-stick curve is max(H_R, H_A), the curves
    of the pairs ``first`` and ``second`` (AFA Cor 32, constructed by Lemma 9).

    Tails of P~: with H(x) = H_x(P~ || Q~), x = e^eps, Q~(L > eps) = -H'(x+)
    and P~(L > eps) = H(x) - x H'(x+) - P~(L = inf), so on every eps where one
    curve is strictly larger the tails are that pair's tails. Where the two
    curves are *equal* (``tie_at_zero``: at eps = 0 exactly, which holds for
    the replace-one WOR pairs because the base pair is symmetric, so
    H_A(1) = H_R(1) by AFA Lemma 46), the right derivative of the maximum is
    the larger right derivative, i.e. the pair with the smaller Q-tail.
    Elsewhere an undecidable comparison raises Undecided (the discretisation
    then raises the precision). P~(L = inf) = max of the two inf-masses
    (the limit of H at x -> inf)."""

    first: object
    second: object
    tie_at_zero: bool = True

    def inf_mass(self) -> arb:
        a, b = self.first.inf_mass(), self.second.inf_mass()  # type: ignore[attr-defined]
        if a >= b:
            return a
        if b >= a:
            return b
        raise Undecided("inf masses")

    def loss_bound(self) -> LossBound:
        """max of the two pairs' bounds: each curve is 0 from its bound on, so their maximum
        (this pair's curve) is too, and delta~(eps) = P~(L > eps) - ... = 0 for eps >= B
        means L <= B P~-almost surely (:mod:`dpverify.pld.dominating`)."""
        return max(self.first.loss_bound(), self.second.loss_bound())  # type: ignore[attr-defined]

    def tails(self, eps: arb) -> tuple[arb, arb]:
        pr, qr = self.first.tails(eps)  # type: ignore[attr-defined]
        pa, qa = self.second.tails(eps)  # type: ignore[attr-defined]
        return self._pick(eps, pr, qr, pa, qa, self.first.inf_mass(), self.second.inf_mass())  # type: ignore[attr-defined]

    def tails_at_grid(self, m: int, i0: int, n: int,
                      progress: Optional[Callable[[float], None]] = None) -> tuple[list, list]:
        """:meth:`tails` at the exact knots i 2^-m, i = i0..n: each pair's tails by its own grid
        route (the Gaussian pairs' Taylor blocks, :meth:`.SubsampledGaussianPair.tails_at_grid`),
        then the same choice per knot (:meth:`_pick`). Both routes give enclosures of the same
        tails at the same exact points, so the choice and its union fallback are sound either way.
        Knot by knot through :meth:`tails` this cost two arb erfc pairs a knot: 7 of the 15 s of
        ``calibrate dpsgd --sampling without-replacement`` at N = 10 (issue 22); the inf-masses are
        formed once."""
        half = None if progress is None else (lambda f: progress(f / 2))
        rest = None if progress is None else (lambda f: progress(0.5 + f / 2))
        Pr, Qr = self.first.tails_at_grid(m, i0, n, half)  # type: ignore[attr-defined]
        Pa, Qa = self.second.tails_at_grid(m, i0, n, rest)  # type: ignore[attr-defined]
        h = arb(2) ** (-m)
        ir, ia = self.first.inf_mass(), self.second.inf_mass()  # type: ignore[attr-defined]
        P_t: list = []
        Q_t: list = []
        for k in range(n - i0 + 1):
            p, q = self._pick(h * (i0 + k), Pr[k], Qr[k], Pa[k], Qa[k], ir, ia)
            P_t.append(p)
            Q_t.append(q)
        return P_t, Q_t

    def _pick(self, eps: arb, pr: arb, qr: arb, pa: arb, qa: arb, ir: arb, ia: arb) -> tuple[arb, arb]:
        """The tails at ``eps`` from enclosures of the two pairs' tails there and of their inf-masses
        ``ir``, ``ia`` (class docstring)."""
        if self.tie_at_zero and eps.is_exact() and eps.is_zero():
            if qr <= qa:
                return pr, qr
            if qa <= qr:
                return pa, qa
            raise Undecided("tie at eps = 0")
        e = eps.exp()
        dr = pr - e * qr + ir
        da = pa - e * qa + ia
        if dr > da:
            return pr, qr
        if da > dr:
            return pa, qa
        # not ordered at this precision: the true tails are one of the two
        # pairs' tails (whichever curve is larger, or at a tie the one with
        # the larger right derivative), so the union of both balls encloses them
        return pr.union(pa), qr.union(qa)

