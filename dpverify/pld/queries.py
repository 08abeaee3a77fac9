"""Certified queries on one composed discretisation (upper and lower curves,
epsilon(delta) ends).

For a composed pessimistic distribution U (masses u_k / 2^K at loss
s_k = (offset + k) h, plus u_inf / 2^K at +inf) the upper curve is

    delta_U(eps) = 2^-K [ sum_{s_k > eps} u_k (1 - e^{eps - s_k}) + u_inf ]
                 = 2^-K [ S_k0 - e^eps V_k0 + u_inf ],

with S_k0 = sum_{k >= k0} u_k (exact integer) and
V_k0 = e^{-s_k0} sum_{j >= 0} u_{k0+j} e^{-j h} (an integer polynomial evaluated
at the ball e^{-h}: all terms positive, so arb's bound is tight). It is an
upper bound of the true curve (discretise / convolve docstrings).

For the optimistic classes (P_k, Q_k), any set of classes S gives
sum_{k in S} (P_k - e^eps Q_k) <= sum_k (P_k - e^eps Q_k)_+ <= true curve;
we use the suffix sets {k >= j} and take the best of a few j near the first
class with P_k > e^eps Q_k. Q is stored tilted (Qt_k = Q_k e^{s_k},
discretise docstring), so e^eps Q_{>=j} = e^{eps - s_j - tilt} Qt_{>=j}(e^{-h}), a
positive-term polynomial evaluation like V.

epsilon(delta) = inf { eps : delta(eps) <= delta } (the curve is nonincreasing):

* upper end: any exact eps_hi with delta_U(eps_hi) <= delta (certified) has
  epsilon(delta) <= eps_hi. On (s_{k0-1}, s_k0] delta_U is
  2^-K (S - e^eps V + u_inf) and the crossing is log((S + u_inf - delta 2^K) / V).
* lower end: for each j with P_{>=j} > delta 2^K, every
  eps < log((P_{>=j} - delta 2^K) / Q_{>=j}) has lower curve > delta, so
  epsilon(delta) >= that log (take the lower end of its ball).

Floats (:mod:`.plan`) choose only which suffixes are tried; every bound
returned is certified on its own.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction
from typing import Callable, Optional, Sequence

from flint import arb, ctx, fmpz

from ..ball import arb_to_fraction, ball, endpoints
from .discretise import LowerDist, UpperDist

__all__ = ["ComposedBounds"]


class ComposedBounds:
    """Composed pessimistic and optimistic distributions of one direction.

    Suffix sums are exact integers obtained by evaluating the shifted integer
    polynomial at 1 (FLINT, C speed); tilted Q-sums are the shifted tilted
    polynomial evaluated at the ball e^{-h} (all terms positive, so arb's
    enclosure is tight). No query walks the coefficients in Python: the
    suffix that gives the best optimistic bound is located by a binary search
    on a handful of coefficients (tightness only, every suffix is sound)."""

    def __init__(self, upper: UpperDist, lower: Optional[LowerDist]) -> None:
        """``lower`` None: only the upper queries (eps_upper, delta_upper_ball) are asked,
        which read U alone (a direction settled by its upper end, refine._direction)."""
        self.upper = upper
        self.lower = lower  # type: ignore[assignment]
        self.K = upper.K
        self.m = upper.m
        self.u_inf = int(upper.inf)
        # P at +inf, less the mass the Fourier wrap may have added to the classes
        self.l_inf = 0 if lower is None else int(lower.inf) - int(lower.deficit)
        self._us: dict[int, int] = {}
        self._ps: dict[int, int] = {}
        self._svs: dict[tuple[int, int], tuple[int, arb]] = {}
        self._total: Optional[tuple[int, arb]] = None  # (S_0, U(e^-h)): :meth:`_sv_prefix`
        self._prefix: dict[int, tuple[int, arb]] = {}

    # -- exact suffix sums
    def _u_suffix(self, k: int) -> int:
        v = self._us.get(k)
        if v is None:
            p = self.upper.poly
            v = int((p.right_shift(k) if k else p)(1)) if k < p.length() else 0
            self._us[k] = v
        return v

    def _p_suffix(self, j: int) -> int:
        v = self._ps.get(j)
        if v is None:
            p = self.lower.P
            v = int((p.right_shift(j) if j else p)(1)) if j < p.length() else 0
            self._ps[j] = v
        return v

    def _suffixes(self, js: range) -> dict[int, tuple[int, arb]]:
        """(P_{>=j}, :meth:`_qt_eval` (j)) for every j of a range of step 1, from ONE shifted
        polynomial each at the range's top: P_{>=j} = P_j + P_{>=j+1} (exact integers) and
        W_j = Qt_j + e^{-h} W_{j+1} (positive terms, arb: an enclosure of the same sum, the
        direct evaluation's bound up to a few roundings at the working precision). Each j's
        own shift copied the whole composed polynomial (ten of them per query)."""
        out: dict[int, tuple[int, arb]] = {}
        if len(js) == 0:
            return out
        L = self.lower
        top = js[-1]
        p = self._p_suffix(top)
        w = self._qt_eval(top)
        eh = (-(arb(1) / arb(2) ** self.m)).exp()
        nq = L.Q.length()
        out[top] = (p, w)
        for j in range(top - 1, js[0] - 1, -1):
            p += int(L.P[j])
            self._ps[j] = p
            w = (arb(fmpz(L.Q[j])) if j < nq else arb(0)) + eh * w
            out[j] = (p, w)
        return out

    def _qt_eval(self, j: int) -> arb:
        """sum_{k >= j} Qt_k e^{-(k - j) h}: e^{s_j + tilt} times the Q-mass
        of the classes k >= j (times 2^K), an upper bound (Qt rounded up)."""
        q = self.lower.Q
        if j >= q.length():
            return arb(0)
        h = arb(1) / arb(2) ** self.m
        return (q.right_shift(j) if j else q)((-h).exp())

    # -- upper curve
    def _k0(self, eps: Fraction, offset: int, length: int) -> int:
        k0 = math.floor(eps * (1 << self.m)) - offset + 1
        return min(max(k0, 0), length)

    def _upper_at(self, eps: Fraction, k0: int, sv: Optional[Callable[[int], tuple[int, arb]]] = None) -> arb:
        """2^K delta_U(eps) for eps in (s_{k0-1}, s_k0] (module docstring); ``sv`` gives (S_k0, V_k0)
        (:meth:`_sv` by default; eps_upper's decisions read :meth:`_sv_near`)."""
        if k0 >= self.upper.poly.length():
            return arb(self.u_inf)
        S, V = (sv or self._sv)(k0)
        return arb(fmpz(S)) - ball(eps).exp() * V + self.u_inf

    def _sv(self, k0: int) -> tuple[int, arb]:
        """(S_k0, V_k0) of the module docstring (k0 < the length): the exact suffix sum and
        e^{-s_k0} times the suffix polynomial at the ball e^{-h}, kept per (k0, precision):
        a query reads the same k0 up to three times (its search, the crossing's root, the
        root's check), each a copy of the composed law and two evaluations before."""
        key = (k0, ctx.prec)
        hit = self._svs.get(key)
        if hit is not None:
            return hit
        U = self.upper
        tail = U.poly.right_shift(k0) if k0 else U.poly
        S = self._us.get(k0)
        if S is None:  # the suffix sum from the tail at hand (_u_suffix would shift again)
            S = self._us[k0] = int(tail(1))
        h = arb(1) / arb(2) ** self.m
        V = (-(h * (U.offset + k0))).exp() * tail((-h).exp())
        self._svs[key] = (S, V)
        return S, V

    def _sv_near(self, k0: int) -> tuple[int, arb]:
        """(S_k0, V_k0) as :meth:`_sv` defines them, for eps_upper's decisions: next to a knot
        :meth:`_sv` evaluated whole, one term more or less, S_(k-1) = S_k + u_(k-1) and
        V_(k-1) = V_k + u_(k-1) e^(-s_(k-1)) (V_k = sum_(j >= k) u_j e^(-s_j)): exact integers and
        an enclosure of the same sum (radius a few roundings above the neighbour's); else
        :meth:`_sv`. Never kept in ``_svs``: the root of eps_upper reads :meth:`_sv` itself."""
        for k1, sign in ((k0 + 1, 1), (k0 - 1, -1)):
            got = self._svs.get((k1, ctx.prec))
            if got is not None:
                k = min(k0, k1)
                u = int(self.upper.poly[k])
                e = (-(arb(1) / arb(2) ** self.m * (self.upper.offset + k))).exp()
                return got[0] + sign * u, got[1] + sign * (e * u)
        return self._sv(k0)

    def delta_upper_ball(self, eps: Fraction) -> arb:
        n = self.upper.poly.length()
        return self._upper_at(eps, self._k0(eps, self.upper.offset, n)) / arb(2) ** self.K

    # -- lower curve
    def _j_star(self, eps: float) -> int:
        """First class whose effective loss s_k + log(P_k / Qt_k) exceeds
        ``eps`` (binary search; the effective loss is about nondecreasing).
        Including exactly the classes with P_k > e^eps Q_k maximises the
        suffix bound, so the best suffix starts near here. Tightness only."""
        L = self.lower
        n = L.P.length()
        h = 2.0 ** -self.m

        def above(k: int) -> bool:
            # empty classes (sparse finite pairs): decide on the nearest
            # nonempty class above (else below)
            # (chained lazily: the first candidate almost always decides, and two lists of
            # 4096 indices per probe were most of this search on a dense grid)
            for kk in itertools.chain(range(k, min(n, k + 4096)), range(k - 1, max(-1, k - 4096), -1)):
                p = int(L.P[kk])
                if p > 0:
                    break
            else:
                return k > n // 2
            q = int(L.Q[kk]) if kk < L.Q.length() else 0
            if q <= 0:
                return True
            return (L.offset + kk) * h + float(L.tilt) + math.log(p) - math.log(q) > eps

        lo, hi = 0, n
        while lo < hi:
            mid = (lo + hi) // 2
            if above(mid):
                hi = mid
            else:
                lo = mid + 1
        return lo

    def _suffix_window(self, eps: float) -> range:
        n = self.lower.P.length()
        j = self._j_star(eps)
        return range(max(0, j - 6), min(n, j + 4))

    def delta_lower_ball(self, eps: Fraction) -> arb:
        """A lower bound of 2^-K sum over a suffix of (P_k - e^eps Q_k), plus
        the +inf class (module docstring); the suffix is chosen near
        :meth:`_j_star` and every suffix is valid."""
        L = self.lower
        h = Fraction(1, 1 << self.m)
        best = arb(0)
        # float(eps) only proposes the window (every suffix is valid); an eps beyond any
        # float (1e3000) lies past the whole loss grid, so a clamped proposal is as good
        js = self._suffix_window(float(min(eps, Fraction(10) ** 300)))
        for j, (p, w) in sorted(self._suffixes(js).items()):
            v = arb(fmpz(p)) - ball(eps - (L.offset + j) * h - L.tilt).exp() * w
            lo = endpoints(v)[0]
            if lo > best:
                best = lo
        v = (best + self.l_inf) / arb(2) ** self.K
        return v if v >= 0 else arb(0)  # a deficit can push the bound below 0

    # -- epsilon(delta)
    def eps_upper(self, delta: Fraction, hint: Optional[float] = None) -> Optional[Fraction]:
        """An exact eps with certified upper curve <= delta, near the crossing;
        None if none exists (mass at +inf already exceeds delta).

        ``hint``: a float estimate of the upper end (the plan's), only a choice of the knots
        tested: the search first gallops out from the knot at ``hint`` (1, 2, 4, ... knots) to
        a bracket, then :meth:`_crossing` runs inside it. The knot returned is the one the
        unhinted search finds wherever the knots' decisions are monotone (each is certified on
        its own), and the root and its check read the same (S, V) of that knot (:meth:`_sv`,
        kept per knot), so the answer is the same to the bit. A probed knot j with s_j > 0
        whose ball lies certainly above delta proves delta_U(0) >= delta_U(s_j) > delta (the
        upper curve is nonincreasing: a sum of hinges (1 - e^(eps - s_k))_+), which is what the
        check at eps = 0 would have found: that check, the longest suffix of the query (the
        whole law above loss 0), is then skipped."""
        U = self.upper
        D = arb(delta.numerator) / delta.denominator * arb(2) ** self.K
        n = U.poly.length()
        if not arb(self.u_inf) < D:
            return None
        h = Fraction(1, 1 << self.m)

        logs: dict[int, float] = {}
        vals: dict[int, arb] = {}

        def val(j: int) -> arb:
            # knot s_j = (offset + j) h lies in (s_{j-1}, s_j]: k0 = j
            v = vals.get(j)
            if v is None:
                v = vals[j] = self._upper_at((U.offset + j) * h, min(max(j, 0), n), self._sv_near)
                m = float(v.mid())
                logs[j] = math.log(m) if m > 0 else -math.inf
            return v

        def ok_at(j: int) -> bool:
            return bool(val(j) <= D)

        # the search's start: the knot of loss 0 (not ok once the check at eps = 0 fails)
        start = min(-U.offset, n - 1) if U.offset < 0 else -1
        lo_p, hi_p, above0 = start, n, False
        log_d = math.log(float(D.mid()))
        if hint is not None and math.isfinite(hint) and n - start > 2:
            # floats choose the knots probed; every knot is decided by ok_at
            def probe(j: int) -> None:
                nonlocal lo_p, hi_p
                if ok_at(j):
                    hi_p = min(hi_p, j)
                else:
                    lo_p = max(lo_p, j)

            def clamp(j: int) -> int:
                return min(max(j, start + 1), n - 1)

            j = clamp(math.ceil(hint * (1 << self.m)) - U.offset)
            probe(j)
            j2 = clamp(j - 1 if hi_p == j else j + 1)
            if j2 != j:
                probe(j2)
                a, b = logs[j], logs[j2]
                if (lo_p == start or hi_p == n) and math.isfinite(a) and math.isfinite(b) and a != b:
                    # log delta_U is nearly linear in the knot near the crossing: a secant step
                    j = clamp(math.ceil(j + (log_d - a) * (j2 - j) / (b - a)))
                    if lo_p < j < hi_p:
                        probe(j)
            # gallop (1, 2, 4, ... knots) out to the side not yet bracketed
            step = 1
            while lo_p < hi_p and (lo_p == start or hi_p == n):
                j = hi_p - step if lo_p == start else lo_p + step
                if not start < j < n:
                    break
                probe(j)
                step *= 2
            if not lo_p < hi_p:  # decisions not monotone (balls at the crossing): the whole range
                lo_p, hi_p = start, n
            # a knot at loss s >= 0 certainly above delta: so is eps = 0 (the docstring)
            above0 = lo_p in vals and U.offset + lo_p >= 0 and bool(vals[lo_p] > D)
        # smallest knot index j (loss (offset + j) h) with upper curve <= delta
        if not above0 and self.delta_upper_ball(Fraction(0)) * arb(2) ** self.K <= D:
            return Fraction(0)  # epsilon(delta) is taken over eps >= 0
        if not ok_at(n):  # loss beyond the last knot: only +inf mass
            return None
        hi = self._crossing(ok_at, logs, lo_p, hi_p, log_d)
        # on (s_{hi-1}, s_hi] the curve is 2^-K (S - e^eps V + u_inf), k0 = hi
        best = (U.offset + hi) * h
        if hi >= 1 and hi < n:
            S, V = self._sv(hi)
            num = arb(fmpz(S)) + self.u_inf - D
            if num > 0 and V > 0:
                root = (num / V).log()
                # nudge above the exact crossing, where the check is decidable
                cand = arb_to_fraction(endpoints(root)[1])
                cand += abs(cand) * Fraction(1, 1 << 64) + Fraction(1, 1 << 200)
                if cand < best and self.delta_upper_ball(cand) * arb(2) ** self.K <= D:
                    best = cand
        return best

    # -- epsilon(delta) of the swapped pair, from this upper curve at -eps
    def _sv_prefix(self, k0: int) -> tuple[int, arb]:
        """(S_k0, V_k0) as :meth:`_sv` gives them, as the whole law's sums less its first k0
        terms: S_k0 = S_0 - A_k0 (exact integers) and V_k0 = e^{-s_0} (E - B_k0), with
        E = U(e^{-h}) and B_k0 = sum_{k < k0} u_k e^{-k h} (balls, each an enclosure of its
        positive-term sum; B from the nearest k below already summed, plus the slice between,
        e^{-j h} times a short polynomial at e^{-h}). The swapped queries read k0 near the law's
        bottom: the slices are short, and the whole law is evaluated once."""
        U = self.upper
        h = arb(1) / arb(2) ** self.m
        eh = (-h).exp()
        if self._total is None:
            self._total = (int(U.poly(1)), U.poly(eh))
            self._prefix = {0: (0, arb(0))}
        S_all, E_all = self._total
        got = self._prefix.get(k0)
        if got is None:
            base = max(j for j in self._prefix if j <= k0)
            A0, B0 = self._prefix[base]
            sl = U.poly.truncate(k0)
            sl = sl.right_shift(base) if base else sl
            got = self._prefix[k0] = (A0 + int(sl(1)), B0 + (-(h * base)).exp() * sl(eh))
        A, B = got
        return S_all - A, (-(h * U.offset)).exp() * (E_all - B)

    def _swapped_value(self, eps: Fraction) -> arb:
        """2^K (e^eps delta_U(-eps) + 1 - e^eps) (see :meth:`eps_upper_swapped`)."""
        U = self.upper
        n = U.poly.length()
        k0 = self._k0(-eps, U.offset, n)
        two_k = arb(2) ** self.K
        if k0 >= n:  # -eps at or past the last knot: delta_U(-eps) = u_inf
            return ball(eps).exp() * (self.u_inf - two_k) + two_k
        S, V = self._sv_prefix(k0)
        return ball(eps).exp() * (arb(fmpz(S)) + self.u_inf - two_k) - V + two_k

    def delta_upper_swapped(self, eps: Fraction) -> Optional[Fraction]:
        """An exact upper bound of delta'(eps), the curve of the *swapped* composition (as
        :meth:`eps_upper_swapped`, whose proof this is: delta'(eps) <= g(eps) =
        e^eps delta_U(-eps) + 1 - e^eps, one evaluation); None where -eps lies below the law's
        first knot (a choice: the bound there pays every rounded-up mass e^eps times)."""
        U = self.upper
        if U.poly.length() == 0 or -float(eps) <= U.offset * 2.0 ** -self.m:
            return None
        v = self._swapped_value(eps) / arb(2) ** self.K
        return arb_to_fraction(endpoints(v)[1])

    def eps_upper_swapped(self, delta: Fraction, hint: Optional[float] = None) -> Optional[Fraction]:
        """An exact eps >= 0 with eps'(delta) <= eps (certified), where eps' is the epsilon(delta)
        of the *swapped* composition: the T-fold product of the pairs (Q_i, P_i) when this U is
        the composed pessimistic law of the pairs (P_i, Q_i) (the add direction of a subsampled
        Gaussian schedule from its remove direction: the add pair is the remove pair swapped,
        :class:`.pairs.SubsampledGaussianPair`); None where no such eps is found here (the
        caller then composes the swapped pairs themselves).

        Proof. For probability measures P, Q (densities p, q on a common space; atoms at loss
        +-inf included) and alpha > 0, (y)_+ - (-y)_+ = y with y = p - q / alpha gives
        int (q - alpha p)_+ = alpha [int (p - q / alpha)_+ - int (p - q / alpha)]
        = alpha H_{1/alpha}(P || Q) + 1 - alpha, i.e. with alpha = e^eps

            delta_{(Q, P)}(eps) = e^eps delta_{(P, Q)}(-eps) + 1 - e^eps    (every real eps).

        The product of the swapped pairs is the swap of the product, so this holds for the
        composed pairs too. delta_U is an upper bound of the composed curve at every real eps,
        negative ones included (:mod:`.discretise`, pessimistic side: D lies above the curve
        for every x = e^eps >= 0, and the Fourier window only moves mass up or to +inf), so
        g(eps) = e^eps delta_U(-eps) + 1 - e^eps bounds the swapped composed curve from above;
        that curve is nonincreasing (a hockey-stick curve), so g(eps*) <= delta certifies
        eps'(delta) <= eps*. For -eps in (s_{k0-1}, s_k0] (module docstring)
        2^K g(eps) = e^eps (S_k0 + u_inf - 2^K) - V_k0 + 2^K, whose crossing with 2^K delta is
        log((2^K - V_k0 - 2^K delta) / (2^K - S_k0 - u_inf)): a search over the knots
        (:meth:`_crossing`, g at eps = -s_j certified at each) and that root choose eps*; the
        knot the search ends on is certified, and the root replaces it only where its own
        check passes. ``hint``: a float estimate of eps' (only a choice: see below)."""
        U = self.upper
        n = U.poly.length()
        if n == 0 or (hint is not None and -hint <= U.offset * 2.0 ** -self.m):
            # (a float estimate of eps' puts -eps' below the law's first knot: there every mass
            # the law was rounded up by counts e^eps' times, and the whole law's sums would be
            # paid for a bound that does not settle (T = 1e5: eps' 24.6))
            return None
        D = arb(delta.numerator) / delta.denominator * arb(2) ** self.K
        two_k = arb(2) ** self.K
        h = Fraction(1, 1 << self.m)

        def knot(j: int) -> Fraction:
            return -(U.offset + j) * h  # eps with -eps at knot j

        def root(k0: int) -> Optional[Fraction]:
            S, V = self._sv_prefix(k0)
            num, den = two_k - V - D, two_k - arb(fmpz(S)) - self.u_inf
            if not (num > 0 and den > 0):
                return None
            cand = arb_to_fraction(endpoints((num / den).log())[1])
            return cand + abs(cand) * Fraction(1, 1 << 64) + Fraction(1, 1 << 200)

        J = min(n - 1, -U.offset)  # the last knot with eps = -s_j >= 0
        if J < 0:
            return None
        logs: dict[int, float] = {}

        def ok(j: int) -> bool:  # g(-s_j) <= delta, certified; j = J - i
            v = self._swapped_value(knot(j))
            m = float(v.mid())
            logs[J - j] = math.log(m) if m > 0 else -math.inf
            return bool(v <= D)

        if not ok(0):
            # the crossing lies below the law's first knot (k0 = 0 there)
            cand = root(0)
            return cand if cand is not None and cand >= knot(0) and self._swapped_value(cand) <= D else None
        if J == 0:
            return max(knot(0), Fraction(0))
        # g falls as eps grows, i.e. as j falls: in i = J - j it turns true at i* (ok at i = J,
        # i = 0 is the search's start); the floats only choose the indices tested
        j = J - self._crossing(lambda i: ok(J - i), logs, 0, J, math.log(float(D.mid())))
        best = knot(j)
        cand = root(j + 1)  # -eps in (s_j, s_j+1]: k0 = j + 1
        if cand is not None and knot(j + 1) <= cand < best and self._swapped_value(cand) <= D:
            best = cand
        return max(best, Fraction(0))

    @staticmethod
    def _crossing(ok_at, logs: dict, lo: int, hi: int, log_d: float) -> int:
        """The knot index where ``ok_at`` turns true in (lo, hi], ok_at(hi) being true
        and lo not ok (or the search's start): the result of bisection, found in fewer
        evaluations (each one a polynomial of the composed length at a ball, 22 of them
        at T = 1e7). The floats (``logs``: log of each evaluated ball's midpoint) only
        choose the next index to test, by interpolating log delta_U linearly in the index
        (it is nearly linear near the crossing; Illinois' halving keeps a one-sided approach
        short); two steps in a row that do not halve the bracket are followed by a bisection
        step, so at most three times bisection's count. Every answer
        is decided by ok_at, so the index returned is the same one bisection finds
        wherever ok_at is monotone."""
        bisect = False
        slow = 0  # interpolation steps in a row that did not halve the bracket
        w_lo = w_hi = 1.0  # Illinois weights: an end kept twice in a row counts half
        last = 0
        while hi - lo > 1:
            a, b = logs.get(lo), logs.get(hi)
            mid = (lo + hi) // 2
            if not bisect and a is not None and b is not None and math.isfinite(a) and math.isfinite(b) \
                    and a > log_d > b:
                ra, rb = (a - log_d) * w_lo, (log_d - b) * w_hi
                mid = min(hi - 1, max(lo + 1, math.ceil(lo + (hi - lo) * ra / (ra + rb))))
            width = hi - lo
            if ok_at(mid):
                hi, w_hi = mid, 1.0
                w_lo = w_lo / 2 if last == 1 else w_lo
                last = 1
            else:
                lo, w_lo = mid, 1.0
                w_hi = w_hi / 2 if last == -1 else w_hi
                last = -1
            slow = slow + 1 if 2 * (hi - lo) > width and not bisect else 0
            bisect = slow >= 2
            slow = 0 if bisect else slow
        return hi

    def eps_lower(self, delta: Fraction, hint: Optional[float] = None) -> Optional[Fraction]:
        """An exact eps with epsilon(delta) >= eps (certified): for a suffix
        j with P_{>=j} + P_inf > delta, every eps below
        log((P_{>=j} + P_inf - delta) / Q_{>=j}) has lower curve > delta.
        ``hint`` (a float near epsilon(delta), e.g. the upper end) only
        chooses the suffixes tried."""
        L = self.lower
        D = arb(delta.numerator) / delta.denominator * arb(2) ** self.K
        h = Fraction(1, 1 << self.m)
        n = L.P.length()
        if hint is None:
            js: Sequence[int] = range(0, n, max(1, n // 64))
            sums = {j: (self._p_suffix(j), self._qt_eval(j)) for j in js}
        else:
            sums = self._suffixes(self._suffix_window(hint))
        best: Optional[Fraction] = None
        for j, (p, w) in sorted(sums.items()):
            num = arb(fmpz(p + self.l_inf)) - D
            if num > 0 and w > 0:
                # Q_{>=j} 2^K = e^{-s_j - tilt} w: eps < log(num / w) + s_j + tilt
                g = arb_to_fraction(endpoints((num / w).log() + ball((L.offset + j) * h + L.tilt))[0])
                if best is None or g > best:
                    best = g
        return max(best, Fraction(0)) if best is not None else Fraction(0)
