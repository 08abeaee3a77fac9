"""Second route for event-tree certificates (``events.epsilon``,
``events.delta``, ``events.claim``), on MPFR with directed rounding (gmpy2) and
exact rationals only (nothing from the arb side, not even the event parser: the
canonical JSON tree is walked here).

Covered, each by its own pair written again here:

* gaussian, laplace, their poisson_sampled versions (AFA Thm 11 (1)) and
  sampled_without_replacement: add/remove by AFA Thm 11 (2) (the Poisson pair
  at the replace-one shift 2C), replace-one by AFA Prop 30 + Cor 32 (the pair
  whose curve is the maximum of the "remove" and "add" curves, :func:`.wor.max_curve_tails`);
* epsilon_delta (LT Thm 4.5 pair, also Poisson-sampled: :func:`_eps_delta`),
  randomized_response (exact finite laws: :func:`.pld.finite_tails`);
* mixture_of_gaussians (:func:`_mog`): N(0, s^2) vs sum_i p_i N(c_i, s^2) per
  direction, the loss inverted at a root whose bracket is proved in directed rounding;
* discrete_laplace (:func:`_dlap`) and discrete_gaussian (:func:`_dgauss`): exact
  rational loss atoms with enclosed masses (:func:`_atoms_iv`), the discrete
  Gaussian's unlisted mass bounded by a ratio test;
* zcdp (with plain Gaussian events): delta by CKS20 Prop 12 (:func:`_zcdp_delta`),
  epsilon by the optimal RDP -> DP conversion (ABC Thm 3) proved at one order
  (:func:`_zcdp_eps`); no_op, non_private, self_composed, composed.

The same PLD as ``pld.*`` (recheck.pld) gives [lo', hi'].
Anything else is refused with "could not re-prove" (fail closed).

Proof: every leaf hands :mod:`.pld` interval tails (:class:`.pld.IvTails`) that
enclose the exact pair's tails, whose discretisation rounds outward to units
2^-K; searches (roots, orders, minimisers) only propose points, and what an
accept uses is proved at those points (``verify --explain``, :data:`.kinds.STEPS`).
"""

from __future__ import annotations

import bisect
import json
import math
from fractions import Fraction
from itertools import repeat
from operator import add as _add, mul as _mul
from typing import Any, Callable, Mapping

import gmpy2
import mpmath
from gmpy2 import mpfr, mpz, next_above
from mpmath import mpf

from ..errors import CertificateRejected, CouldNotReprove, MalformedCertificate
from ..numtext import is_digits
from . import series as bs
from .core import _PHI_MAX, Arith, Iv, arith, ceil_int, floor_int, pow2, to_fraction, mpfr_to_mpf, mpf_to_fraction
from .gdp import exact_input, fraction_to_mpf
from .pld import (_UNIT, IvTails, _enclosures, _units, direction_bounds, _compose, _delta_bounds, _eps_bounds, finite_tails, gauss_tails,
                  gaussian_bounds, laplace_tails, poisson_step_bounds,
                  register_queries, window_grids)
from .pld import _eps_input, not_a_relation, schedule_leaves as _pld_leaves
from .pld import (_DPS as _PRICE_DPS, Support, _delta_input, _delta_scale, _eps_scale, _recorded_hi, _tilt_hint,
                  grid_hint, grid_work, tilted_lower)
from .wor import max_curve_tails
from ..certificate.format import (EVENT_FIELDS, EVENT_MAX_LEAVES, MAX_EVENT_ATOMS, SENSITIVITY_CONVENTION,
                                   discrete_event_atoms)
from ..certificate.prose import REALISED_LOWER, WOR_UPPER_ONLY, ZCDP_THEOREMS, ZCDP_WHY, event_theorem
from .verify import RECHECKERS, Recheck, check_enclosure, enclosure_of

_DIRS = {"add-remove": ["remove", "add"], "add": ["add"], "remove": ["remove"],
         "replace-one": ["replace"], "replace-special": ["remove", "add"]}

#: Largest discrete-Gaussian window / discrete-Laplace sensitivity (atoms) this route enumerates before
#: failing closed (exit 3): its window grows with its working precision, so it may list more atoms than
#: the producer (whose cap, MAX_EVENT_ATOMS, is checked on the event first: beyond it, exit 2)
MAX_ATOMS = 2 * MAX_EVENT_ATOMS
#: Largest one-step grid (knots at 2^-8) the second route discretises before failing closed.
MAX_KNOTS = 1 << 21
#: knots of all the leaves of one composition together (each knot costs 20-40 us of MPFR tails):
#: a grid whose leaves would span more fails closed (exit 3) before the work. The grid comes from
#: the recorded grid and width (hints a forger sets: "2^-19" kept a 1 KB certificate busy past 40 s)
KNOT_BUDGET = 1 << 19
#: the finest grid hint believed: the search starts at most at 2^-(this - 4) (the producer's
#: events certificates record 2^-8 .. 2^-13 here; a finer one is reached by refinement)
_MAX_GRID_HINT = 15


def _knot_cap(blocks: list) -> int:
    """Per-leaf knot cap so that the leaves together stay within :data:`KNOT_BUDGET`."""
    return max(1 << 10, min(MAX_KNOTS, KNOT_BUDGET // max(1, len(blocks))))


def _num(obj: Mapping[str, Any], key: str) -> Fraction:
    return exact_input(obj, key)


def _int(obj: Mapping[str, Any], key: str) -> int:
    v = obj.get(key)
    if isinstance(v, bool) or not isinstance(v, int):
        raise MalformedCertificate(f"inputs.event: {key} must be an integer")
    return v


def _cannot(what: str) -> CouldNotReprove:
    return CouldNotReprove(f"could not re-prove: the independent route does not cover {what}")


# --------------------------------------------------------------------------- finite atoms


def _atoms_iv(losses: list, masses: Callable[[Arith], tuple], inf: Fraction = Fraction(0)) -> IvTails:
    """Interval tails of a pair whose loss takes the exact rational values ``losses`` (any
    order). ``masses(A)`` returns (P, Q, slack): the atoms' masses as enclosures and an
    upper bound of the mass left unlisted (each of P and Q), added to the upper ends only:
    the true tail lies between the listed atoms' tail and that plus all unlisted mass.

    The comparison loss > e is decided exactly against the ends of e's enclosure (a grid
    point i 2^-m: a point): an atom above the upper end counts in both ends, one between
    them in the upper ends only. Suffix sums of the sorted atoms are formed once per
    precision, the lower ends rounded down and the upper ends up (MPFR), at 24 bits above
    the working precision plus the bits of the atom count, so the accumulated rounding
    stays far below the units 2^-K the discretisation rounds to."""
    order = sorted(range(len(losses)), key=lambda j: losses[j])
    ls = [losses[j] for j in order]
    cache: dict = {}

    def sums(A: Arith):
        got = cache.get(A.prec)
        if got is None:
            B = arith(A.prec + 24 + len(ls).bit_length())
            P, Q, slack = masses(B)
            n = len(ls)
            zero = mpfr(0)
            spl, sph, sql, sqh = [zero] * (n + 1), [zero] * (n + 1), [zero] * (n + 1), [zero] * (n + 1)
            dn, up = B.dn, B.up
            for k in range(n - 1, -1, -1):
                j = order[k]
                spl[k], sph[k] = dn.add(spl[k + 1], P[j][0]), up.add(sph[k + 1], P[j][1])
                sql[k], sqh[k] = dn.add(sql[k + 1], Q[j][0]), up.add(sqh[k + 1], Q[j][1])
            got = cache[A.prec] = (spl, sph, sql, sqh, slack, up)
        return got

    def fn(A: Arith, e: tuple) -> tuple:
        spl, sph, sql, sqh, (sp, sq), up = sums(A)
        sure = bisect.bisect_right(ls, to_fraction(e[1]))  # first atom with loss > e's upper end
        maybe = bisect.bisect_right(ls, to_fraction(e[0]))
        return (spl[sure], up.add(sph[maybe], sp)), (sql[sure], up.add(sqh[maybe], sq))

    return IvTails(fn, inf)


def _powers(A: Arith, r: Iv, n: int) -> list:
    """[r^0, ..., r^n] for 0 < r: chains of directed products (each end stays on its side)."""
    out = [(mpfr(1), mpfr(1))]
    for _ in range(n):
        out.append(A.mul(out[-1], r))
    return out


def _dlap(a: Fraction, D: int) -> IvTails:
    """(DLap(a), DLap(a) + D), pmf e^{-a|x|} / Z, Z = (1 + r)/(1 - r), r = e^-a
    (the sum of the two geometric series). Loss a(|x - D| - |x|): a D for
    x <= 0, a (D - 2x) for 0 < x < D, -a D for x >= D. Lumped ends by the
    geometric series: P(x <= 0) = 1/((1 - r) Z) = 1/(1 + r), P(x >= D) = r^D/(1 + r);
    atoms P(x) = r^|x| (1 - r)/(1 + r); Q(x) = P(x - D). The pair is symmetric
    (x -> D - x), so one orientation serves every direction (AFA Prop 8 remark:
    log-concave pmf). Losses exact rationals, masses in directed rounding
    (:func:`_atoms_iv`), nothing unlisted."""
    if a <= 0 or D < 1:
        raise MalformedCertificate("discrete_laplace needs noise_parameter > 0 and sensitivity >= 1")
    if D > MAX_ATOMS:
        raise _cannot(f"discrete_laplace with sensitivity above {MAX_ATOMS}")

    def masses(A: Arith) -> tuple:
        one = A.q(1)
        r = A.exp(A.q(-a))
        pw = _powers(A, r, D)
        inv = A.div(one, A.add(one, r))  # 1/(1 + r)
        c = A.mul(A.sub(one, r), inv)  # (1 - r)/(1 + r)
        P = [inv] + [A.mul(pw[x], c) for x in range(1, D)] + [A.mul(pw[D], inv)]
        Q = [A.mul(pw[D], inv)] + [A.mul(pw[D - x], c) for x in range(1, D)] + [inv]
        return P, Q, (mpfr(0), mpfr(0))

    # atom x = 0 stands for all x <= 0 and atom x = D for all x >= D; Y = X + D
    tails = _atoms_iv([a * (D - 2 * x) for x in range(D + 1)], masses)
    # every loss a (D - 2x) is at most a D, exactly (the atom x <= 0 has P-mass 1/(1 + r) > 0):
    # the supremum is a rational from the inputs (pld.loss_sup uses it unrounded)
    tails.sup = a * D
    return tails


def _dgauss_window(s2: Fraction, prec: int) -> int:
    """W with e^{-(W+1)^2/(2 s^2)} below about 2^-(prec + 16): the unlisted mass is then far
    below a unit (a choice only: every W gives a sound enclosure)."""
    return int(math.ceil(math.sqrt(2 * float(s2) * (prec + 16) * math.log(2)))) + 1


def _dgauss(s: Fraction, D: int) -> IvTails:
    """(N_Z(0, s^2), N_Z(D, s^2)), pmf t_x / Z with t_x = e^{-x^2/(2 s^2)}.
    Loss (D^2 - 2 D x)/(2 s^2), exact rational. Atoms x in [-W, W + D] are
    listed. Z = sum_{|x| <= M} t_x + rest, M = W + D, with
    0 <= rest <= 2 t_{M+1}/(1 - rho), rho = e^{-(2M+3)/(2 s^2)} (ratio test:
    t_{x+1}/t_x = e^{-(2x+1)/(2 s^2)} <= rho for x >= M + 1), so Z is enclosed. The
    unlisted mass of each law (P: x < -W or x > W + D; Q: the same atoms shifted by D)
    is at most 2 t_{W+1}/((1 - rho_W) Z), rho_W = e^{-(2W+3)/(2 s^2)}, by the same ratio
    test; it widens the upper ends of the tails (:func:`_atoms_iv`), never a guess. W is
    chosen from the working precision (:func:`_dgauss_window`)."""
    if s <= 0 or D < 1:
        raise MalformedCertificate("discrete_gaussian needs sigma > 0 and sensitivity >= 1")
    s2 = s * s
    W0 = _dgauss_window(s2, 160)
    if 2 * W0 + D > MAX_ATOMS:
        raise _cannot(f"discrete_gaussian with sigma {float(s):.3g} (more than {MAX_ATOMS} atoms)")
    by_prec: dict = {}

    def tails_at(A: Arith) -> IvTails:
        W = _dgauss_window(s2, A.prec)
        if 2 * W + D > MAX_ATOMS:
            raise _cannot(f"discrete_gaussian with sigma {float(s):.3g} (more than {MAX_ATOMS} atoms)")
        M = W + D

        def masses(B: Arith) -> tuple:
            S2 = B.q(2 * s2)
            t = [B.exp(B.neg(B.div(B.q(x * x), S2))) for x in range(M + 2)]  # t_x = t_{-x}
            rho = B.exp(B.neg(B.div(B.q(2 * M + 3), S2)))
            one = B.q(1)
            rest = B.div(B.scale2(t[M + 1], 1), B.sub(one, rho))
            body = B.fsum([t[0]] + [B.scale2(t[x], 1) for x in range(1, M + 1)])
            Z = (body[0], B.add(body, rest)[1])
            rho_w = B.exp(B.neg(B.div(B.q(2 * W + 3), S2)))
            out = B.div(B.scale2(t[W + 1], 1), B.mul(B.sub(one, rho_w), Z))[1]
            xs = range(-W, W + D + 1)
            P = [B.div(t[abs(x)], Z) for x in xs]
            Q = [B.div(t[abs(x - D)], Z) for x in xs]
            return P, Q, (out, out)

        return _atoms_iv([(Fraction(D * D) - 2 * D * x) / (2 * s2) for x in range(-W, W + D + 1)], masses)

    def fn(A: Arith, e: tuple) -> tuple:
        tl = by_prec.get(A.prec)
        if tl is None:
            tl = by_prec[A.prec] = tails_at(A)
        return tl.fn(A, e)

    return IvTails(fn)


def _eps_delta(e0: Fraction, d0: Fraction, q: Fraction, direction: str) -> IvTails:
    """The (eps0, delta0)-DP pair (LT Thm 4.5: P = (delta0, (1-delta0) s, (1-delta0)(1-s), 0),
    Q its reverse, s = e^eps0/(1+e^eps0)), Poisson-sampled at rate q by AFA Thm 11 (1):
    remove P' = (1-q) Q + q P, add Q' = (1-q) P + q Q. At q = 1 the losses are +inf, eps0,
    -eps0, -inf (exact: :func:`_atoms_iv`); at q < 1 they are logs of interval ratios, so
    loss > e is decided per atom by p > e^e r on the enclosures (an undecided atom counts
    in the upper ends only)."""
    if q == 1:
        def masses(A: Arith) -> tuple:
            one = A.q(1)
            s = A.div(one, A.add(one, A.exp(A.q(-e0))))
            t = A.div(one, A.add(one, A.exp(A.q(e0))))  # 1 - s, without cancellation
            c = A.q(1 - d0)
            return [A.mul(c, s), A.mul(c, t)], [A.mul(c, t), A.mul(c, s)], (mpfr(0), mpfr(0))

        tails = _atoms_iv([e0, -e0], masses, d0)
        # the finite losses are exactly +-eps0 (the +inf atom is ``inf``, which loss_sup
        # refuses on its own): L <= eps0, a rational from the inputs (pld.loss_sup)
        tails.sup = e0
        return tails
    cache: dict = {}

    def atoms(A: Arith) -> list:
        got = cache.get(A.prec)
        if got is None:
            one = A.q(1)
            s = A.div(one, A.add(one, A.exp(A.q(-e0))))
            t = A.div(one, A.add(one, A.exp(A.q(e0))))
            c, D0 = A.q(1 - d0), A.q(d0)
            P, Q = [D0, A.mul(c, s), A.mul(c, t), (mpfr(0), mpfr(0))], [(mpfr(0), mpfr(0)), A.mul(c, t), A.mul(c, s), D0]
            Qr, Q1 = A.q(q), A.q(1 - q)
            if direction == "remove":
                P = [A.add(A.mul(Q1, r), A.mul(Qr, p)) for p, r in zip(P, Q)]
            else:
                Q = [A.add(A.mul(Q1, p), A.mul(Qr, r)) for p, r in zip(P, Q)]
            got = cache[A.prec] = [(p, r) for p, r in zip(P, Q) if p[1] > 0 and r[1] > 0]
        return got

    def fn(A: Arith, e: tuple) -> tuple:
        x = A.exp(e)
        dn, up = A.dn, A.up
        pl, ph, ql, qh = [], [], [], []
        for p, r in atoms(A):
            if p[0] > up.mul(x[1], r[1]):  # loss > e for sure
                pl.append(p[0]), ql.append(r[0])
            if p[1] > dn.mul(x[0], r[0]):  # possibly
                ph.append(p[1]), qh.append(r[1])
        return (dn.fsum(pl), up.fsum(ph)), (dn.fsum(ql), up.fsum(qh))

    # the remove direction's atom (delta0, 0) keeps P-mass q delta0 at +inf; add has none
    return IvTails(fn, q * d0 if direction == "remove" else Fraction(0))


# --------------------------------------------------------------------------- mixture of Gaussians


def _mog_sum_end(A: Arith, iv: list, x: mpfr, upper: bool) -> mpfr:
    """The upper (``upper``) or lower end of the interval evaluation of
    S(x) = sum_i p_i e^{mu_i x - mu_i^2/2} at a point x, ``iv`` the enclosures
    (mu_i, mu_i^2/2, p_i) with p_i >= 0, computing that end's exponentials only: each
    term's end is a monotone function of its inputs' ends (exp increasing, p_i >= 0 and
    e^(.) > 0, mu_i x's end from mu_i's end on the side of x's sign), each operation rounded
    toward that end. It is the same number, bit for bit, as that end of
    A.fsum([A.mul(P, A.exp(A.sub(A.mul(M, (x, x)), H)))]), at half the exponentials (the
    root bracket needs S's upper end at its left point, its lower end at its right one)."""
    if upper:
        up = A.up
        return up.fsum([up.mul(P[1], up.exp(up.sub(up.mul(M[1] if x >= 0 else M[0], x), H[0])))
                        for M, H, P in iv])
    dn = A.dn
    return dn.fsum([dn.mul(P[0], dn.exp(dn.sub(dn.mul(M[0] if x >= 0 else M[1], x), H[1])))
                    for M, H, P in iv])


#: the bits a proposal extrapolated from the roots of the last 1..4 knots is taken to have (a
#: guess: it only sets the precision of the first Newton step of :func:`_mog`'s knot loop)
_PREDICT_BITS = {1: 8, 2: 16, 3: 24, 4: 32}


def _extrapolate(c: Any, hist: list) -> mpfr:
    """z at the next knot from its values at the last knots (latest first), by the polynomial
    through them (differences of order len(hist) vanish), in the context ``c``: a proposal."""
    if len(hist) == 1:
        return hist[0]
    if len(hist) == 2:
        return c.sub(c.mul_2exp(hist[0], 1), hist[1])
    if len(hist) == 3:
        return c.add(c.mul(3, c.sub(hist[0], hist[1])), hist[2])
    return c.sub(c.mul(4, c.add(hist[0], hist[2])), c.add(c.mul(6, hist[1]), hist[3]))


_Z, _O = mpfr(0), mpfr(1)
_RADII: dict = {}  # 2^-(prec - 12) by precision (:func:`_mog`'s first bracket)
_CTXS: dict = {}


def _ctx(p: int) -> Any:
    """gmpy2's round-to-nearest context at ``p`` bits (cached): proposals only."""
    c = _CTXS.get(p)
    if c is None:
        c = _CTXS[p] = gmpy2.context(precision=p)
    return c


#: the largest degree of the mixture's polynomial F(z) = sum_i a_i z^(n_i) (:func:`_mog_degrees`)
#: solved in z; beyond it the root is sought in x (each power is a few MPFR products: log2 n)
_MOG_MAX_DEGREE = 64


def _mog_degrees(comps: list) -> "tuple[Fraction, list] | None":
    """(g, [n_i]) with mu_i = n_i g, n_i >= 0 integers and g > 0 the largest such rational
    (gcd of the numerators over the lcm of the denominators, each mu_i in lowest terms), or
    None when no mu_i is positive or some n_i exceeds :data:`_MOG_MAX_DEGREE`."""
    pos = [mu for mu, _ in comps if mu > 0]
    if not pos:
        return None
    g = Fraction(math.gcd(*(mu.numerator for mu in pos)), math.lcm(*(mu.denominator for mu in pos)))
    ns = [int(mu / g) for mu, _ in comps]
    return (g, ns) if max(ns) <= _MOG_MAX_DEGREE else None


def _mog_poly_end(ctx: Any, a: list, ns: list, z: mpfr) -> mpfr:
    """F(z) = sum_i a_i z^(n_i) at a point z > 0 with every operation rounded in ``ctx``'s
    direction (gmpy2's RoundUp or RoundDown context) and ``a`` that side's ends of the
    enclosures of a_i >= 0: every term is a product of nonnegatives, increasing in each
    factor, so rounding each operation up (down) bounds F(z) from above (below); MPFR's
    pow with an integer exponent and fsum are correctly rounded in that direction."""
    return ctx.fsum([ctx.mul(ai, ctx.pow(z, n)) if n else ai for ai, n in zip(a, ns)])


def _mog_poly_brackets(A: Arith, a_dn: list, a_up: list, ns: list, lo: mpfr, hi: mpfr, c: Iv) -> bool:
    """Whether [lo, hi] (0 < lo) is proved to contain the root z of F(z) = e^y, ``c`` an
    enclosure of e^y and ``a_dn``/``a_up`` the ends of a_i's enclosures: F(lo) <= F_up(lo) < c_0
    <= e^y <= c_1 < F_dn(hi) <= F(hi) (:func:`_mog_poly_end`), so F - e^y changes sign on
    [lo, hi] and, F being continuous and increasing, its one root lies strictly inside."""
    return lo > 0 and _mog_poly_end(A.up, a_up, ns, lo) < c[0] and _mog_poly_end(A.dn, a_dn, ns, hi) > c[1]


def _ipoly_mul(a: list, b: list) -> list:
    """The exact product of two integer polynomials (coefficient lists, any signs), by Kronecker
    substitution on their positive and negative parts (a = a+ - a-, each >= 0 coefficient-wise):
    a b = (a+ b+ + a- b-) - (a+ b- + a- b+), each bracket a sum of two products of nonnegative
    polynomials packed into slots of s bits (gmpy2.pack), s one bit above min(len a, len b)
    2 max|a| max|b|, so no slot carries into the next and unpacking reads every coefficient exactly."""
    n = len(a) + len(b) - 1
    if not any(a) or not any(b):  # a zero slot width would not pack (a power of W floored to zeros)
        return [0] * n
    ap, am = [x if x > 0 else 0 for x in a], [-x if x < 0 else 0 for x in a]
    bp, bm = [x if x > 0 else 0 for x in b], [-x if x < 0 else 0 for x in b]
    s = (2 * min(len(a), len(b)) * max(map(abs, a)) * max(map(abs, b))).bit_length() + 1
    Ap, Am, Bp, Bm = (gmpy2.pack(v, s) for v in (ap, am, bp, bm))
    pos = gmpy2.unpack(Ap * Bp + Am * Bm, s)
    neg = gmpy2.unpack(Ap * Bm + Am * Bp, s)
    pos += [0] * (n - len(pos))
    neg += [0] * (n - len(neg))
    return [int(x - y) for x, y in zip(pos[:n], neg[:n])]


def _ball_q(b: tuple, num: int, den: int) -> tuple:
    """The ball b times the exact rational num / den (den > 0), at the same fixed point: the middle
    floored (within one unit, added to the radius) and the radius rounded up."""
    return ((b[0] * num) // den, -((-(b[1] * abs(num))) // den) + 1)


def _tm_mul(a: list, ea: int, b: list, eb: int, N: int, P: int) -> tuple:
    """The product of two Taylor models on |t| <= 1 (coefficients a_j 2^-P of degree <= N, error ea
    units 2^-P: f(t) in sum a_j t^j 2^-P +- ea 2^-P), truncated to degree N: the exact product's
    coefficients floored to 2^-P (each within one unit: N + 1 units in all), the dropped ones by the
    sum of their magnitudes (|t|^j <= 1), and the errors by |pa| eb + ea |pb| + ea eb with
    |pa| <= sum |a_j| 2^-P. Exact integers throughout, every bound rounded up."""
    full = _ipoly_mul(a, b)
    kept = [x >> P for x in full[:N + 1]]
    kept += [0] * (N + 1 - len(kept))
    drop = sum(map(abs, full[N + 1:]))
    cross = sum(map(abs, a)) * eb + ea * sum(map(abs, b)) + ea * eb
    return kept, -((-(drop + cross)) >> P) + N + 2


def _tm_combine(mids: list, rads: list, models: list, P: int, balls: bool = False) -> tuple:
    """sum_k c_k M_k for models M_k = (coefficients, error) at 2^-P and coefficients c_k in
    [mid_k - rad_k, mid_k + rad_k] 2^-P (``rads`` ignored unless ``balls``: then rad_k; else the
    mids are exact): the middles' products summed exactly at 2^-2P and floored once (N + 1 units),
    the error sum_k (rad_k sum|M_k| + (|mid_k| + rad_k) err_k) rounded up."""
    n = len(models[0][0])
    acc = [0] * n
    err2 = 0
    for k, (cm, (coef, e)) in enumerate(zip(mids, models)):
        cr = rads[k] if balls else 0
        if cm:
            acc = list(map(_add, acc, map(_mul, repeat(cm), coef)))
        err2 += cr * sum(map(abs, coef)) + (abs(cm) + cr) * e
    return [x >> P for x in acc], -((-err2) >> P) + n + 1


def _mog_u_series(b: list, ns: list, hk: list, N: int, P: int) -> "list | None":
    """A proposal only (plain fixed-point integers at 2^-P, floors): u_1..u_N of the series u(t) with
    sum_i b_i (1 + u)^(n_i) = e^(sgn H t), ``hk`` the integers (sgn H)^k / k! 2^P, ``b`` the weights
    b_i 2^P. Order by order: p_i = (1 + u)^(n_i) has k p_ik = sum_(j=1..k) ((n_i + 1) j - k) u_j p_i(k-j)
    (J. C. P. Miller's recurrence, from (1 + u) p' = n u' p), so the coefficient k of the left side is
    beta u_k plus terms in u_1..u_(k-1), beta = sum_i n_i b_i. None where beta is not positive."""
    comps = [(bi, n) for bi, n in zip(b, ns) if n]
    beta = sum(bi * n for bi, n in comps)
    if beta <= 0:
        return None
    u, ju = [0], [0]  # u_j and j u_j
    ps = [[1 << P] for _ in comps]
    rs = [[1 << P] for _ in comps]  # each p_i reversed (p_ik, ..., p_i0), so that the sums are dot products
    for k in range(1, N + 1):
        rest, S = [], 0
        for (bi, n), r in zip(comps, rs):
            # sum_(j=1..k-1) ((n + 1) j - k) u_j p_(k-j) = (n + 1) sum j u_j p_(k-j) - k sum u_j p_(k-j)
            pr = r[:k - 1]  # p_(k-1), ..., p_1
            v = ((n + 1) * sum(map(_mul, ju[1:k], pr)) - k * sum(map(_mul, u[1:k], pr))) // (k << P)
            rest.append(v)
            S += bi * v
        uk = ((hk[k] << P) - S) // beta
        u.append(uk)
        ju.append(k * uk)
        for (_, n), p, r, v in zip(comps, ps, rs, rest):
            p.append(n * uk + v)
            r.insert(0, p[-1])
    return u


#: the mixture's block route (:func:`_mog`'s ``many``; choices only, every block is proved or redone knot
#: by knot): a block spans 2^(1 - _MOG_SPAN) of loss (2^(m + 1 - _MOG_SPAN) knots, at least
#: 2^(_MOG_MIN_RHO + 1)); the root polynomial's degree is (prec + _MOG_GUARD) / _MOG_BITS_PER_TERM (one bit
#: a term fewer where the tails take Taylor models: x converges more slowly than z); blocks only where every
#: n_i is at most _MOG_BLOCK_DEGREE (F(Z) has degree max n_i N); the tails' models of degree
#: N + _MOG_TM_EXTRA (the powers of W have terms past N), on blocks of rho >= _MOG_TM_RHO (512 knots:
#: smaller blocks pay the models' fixed cost, about 40 products, over too few knots). Measured on the
#: 3-component mixture (roots by blocks, tails knot by knot), 191 bits: 1/4-nat blocks (_MOG_SPAN 2) 80 and
#: 85 us a knot at 2^-10 and 2^-8, 1/8-nat blocks 94 and 122 (pld-speed.md, session 57)
_MOG_SPAN = 2
_MOG_MIN_RHO = 3
_MOG_GUARD = 24
_MOG_BITS_PER_TERM = 4
_MOG_BLOCK_DEGREE = 8
_MOG_TM_EXTRA = 12
_MOG_TM_RHO = 8


def _mog_valid(s: Fraction, cs: list, ps: list) -> bool:
    """The mixture is a pair of probability laws: s > 0, weights >= 0 summing to exactly 1, a
    sensitivity >= 0 wherever its weight is not 0."""
    return s > 0 and all(p >= 0 for p in ps) and sum(ps) == 1 and all(c >= 0 for c, p in zip(cs, ps) if p != 0)


def _mog_weights(s: Fraction, cs: list, ps: list) -> dict:
    """mu = c / s -> summed weight, over the components of nonzero weight (components at one mean are
    one component: sum_i p_i N(mu, 1) = (sum_i p_i) N(mu, 1))."""
    weight: dict = {}
    for c, p in zip(cs, ps):
        if p != 0:
            mu = Fraction(c) / s
            weight[mu] = weight.get(mu, Fraction(0)) + Fraction(p)
    return weight


def _mog_as_gaussian(weight: dict) -> "tuple[Fraction, Fraction] | None":
    """(z, q) where a valid mixture of merged weights ``weight`` (:func:`_mog_weights`) is, law for
    law, the Poisson-subsampled Gaussian pair of noise multiplier z = 1 / mu at rate q: one positive
    mean mu of weight q, the rest (1 - q) at 0 (or q = 1 alone); :func:`_mog`'s docstring. None
    otherwise."""
    shifted = [(mu, q) for mu, q in weight.items() if mu != 0]
    if len(shifted) != 1:
        return None
    mu, q = shifted[0]
    return 1 / mu, q


def _mog(s: Fraction, cs: list, ps: list, direction: str) -> IvTails:
    """dp_accounting's MixtureOfGaussiansDpEvent pair in units of s
    (mu_i = c_i/s): remove: P = sum_i p_i N(mu_i, 1), Q = N(0, 1), loss
    g(x) = log S(x), S(x) = sum_i p_i e^{mu_i x - mu_i^2/2}, nondecreasing (log-sum-exp of
    nondecreasing affine maps; increasing when some mu_i > 0) with range
    (log p_0, inf), p_0 = the mass of the mu_i = 0 components; add: P = N(0, 1),
    Q = the mixture, loss -g(x).

    L > e iff x > x_y (remove, y = e) or x < x_y (add, y = -e), x_y the root of
    g(x) = y. The root is proposed (float Newton from the previous knot's root, then
    Newton in MPFR at doubling precisions up to the working one: untrusted) and *proved*
    to lie in [t - r, t + r] by S(t - r) < e^y < S(t + r) in directed rounding (S
    increasing; only the end of S each inequality needs: :func:`_mog_sum_end`).
    The tails are then sum_i p_i Phi(mu_i - x) and Phi(-x) (remove) or Phi(x) and
    sum_i p_i Phi(x - mu_i) (add) on that interval of x (Phi monotone:
    :meth:`Arith.ncdf_abs` on an interval encloses its range).

    Where every mu_i is an integer multiple n_i g of one rational g (:func:`_mog_degrees`:
    always for rational inputs, used up to degree :data:`_MOG_MAX_DEGREE`), S(x) = F(e^(g x))
    with F(z) = sum_i a_i z^(n_i), a_i = p_i e^(-mu_i^2/2) >= 0: a polynomial, increasing on
    z > 0 (some n_i > 0 has a_i > 0), so the root is sought in z with no exponential in the
    loop: Newton on F(z) = e^y (F is convex on z > 0) proposes z_t, and the bracket
    z_t (1 -+ r) is *proved* by F(z_t (1 - r)) < e^y < F(z_t (1 + r)) with each side's
    evaluation rounded toward its end (:func:`_mog_poly_end`); by the intermediate value
    theorem the root lies strictly between, and x_y = log(z_y) / g is enclosed by directed
    logs and divisions (log increasing). The same root as the route in x, found with a few
    products instead of an exponential per component per step. On the grid (``many``, the
    discretisation's knots) the proposal is extrapolated from the previous knots' roots and
    refined by Halley's iteration (no float search per knot); the bracket and the tails are
    proved exactly as at a single point (tests/recheck/test_mog_knot_loop.py). On grids fine enough,
    blocks of knots take one proposed polynomial in z each, proved by an exact residual bound
    (``block_roots``), and on the largest blocks the tails themselves are Taylor models in the knot
    offset (``block_tails``; tests/recheck/test_mog_blocks.py).

    Components at the same mu are one component of their summed weight (sum_i p_i N(mu, 1) =
    (sum_i p_i) N(mu, 1)). Where one positive mu is left, with weight q (the rest at mu = 0),
    P = (1 - q) N(0, 1) + q N(mu, 1) against Q = N(0, 1) (remove; add swaps them) is, law for
    law, the Poisson-subsampled Gaussian pair at rate q and noise 1/mu, so its tails are
    :func:`.pld.gauss_tails`' (closed-form root, Taylor blocks on fine grids): the same pair,
    not an approximation of it (dp_accounting's baseline mixture, the Poisson Gaussian written
    as a mixture, costs a Poisson Gaussian here)."""
    if not _mog_valid(s, cs, ps):
        raise MalformedCertificate("mixture_of_gaussians needs standard_deviation > 0, sensitivities >= 0, "
                                  "sampling_probs >= 0 summing to 1")
    weight = _mog_weights(s, cs, ps)
    comps = sorted(weight.items())
    p0 = weight.get(Fraction(0), Fraction(0))
    reduced = _mog_as_gaussian(weight)
    if reduced is not None:
        z, q = reduced
        return gauss_tails(z, q, direction)
    remove = direction == "remove"
    one, zero = (mpfr(1), mpfr(1)), (mpfr(0), mpfr(0))
    if p0 == 1:  # every component at 0: P = Q, loss identically 0

        def flat(A: Arith, e: tuple) -> tuple:
            if e[1] < 0:
                return one, one
            return (zero, zero) if e[0] >= 0 else _UNIT

        return IvTails(flat)
    fl = [(math.log(float(p)), float(mu)) for mu, p in comps]
    degrees = _mog_degrees(comps)
    state = {"guess": 0.0}
    consts: dict = {}

    def const(A: Arith):
        c = consts.get(A.prec)
        if c is None:
            iv = [(A.q(mu), A.q(mu * mu / 2), A.q(p)) for mu, p in comps]
            ctx = gmpy2.context(precision=A.prec + 16)  # the proposal's Newton (round to nearest)
            near = [(ctx.div(mpz(mu.numerator), mpz(mu.denominator)),
                     ctx.sub(ctx.log(ctx.div(mpz(p.numerator), mpz(p.denominator))),
                             ctx.div(mpz((mu * mu).numerator), mpz(2 * (mu * mu).denominator))))
                    for mu, p in comps]
            lp0 = A.log(A.q(p0)) if p0 > 0 else None
            # the proposal's first Newton steps at about doubling precisions below the last
            # (each step about doubles the correct bits from the float's 53)
            lows, p = [], A.prec + 16
            while p // 2 + 8 > 64:
                p = p // 2 + 8
                lows.append(gmpy2.context(precision=p))
            poly = None
            if degrees is not None:
                g, ns = degrees
                # a_i = p_i e^(-mu_i^2/2) enclosed; the proposal's copy to nearest
                a = [A.mul(P, A.exp(A.neg(H))) for _, H, P in iv]
                poly = (A.q(g), ctx.div(mpz(g.numerator), mpz(g.denominator)), ns,
                        [x[0] for x in a], [x[1] for x in a],
                        [ctx.mul(ctx.div(mpz(p.numerator), mpz(p.denominator)),
                                 ctx.exp(ctx.div(-mpz((mu * mu).numerator), mpz(2 * (mu * mu).denominator))))
                         for mu, p in comps])
            c = consts[A.prec] = (iv, ctx, near, lp0, lows[::-1], poly)
        return c

    def gd_float(x: float) -> tuple[float, float]:
        ts = [lp + mu * x - mu * mu / 2 for lp, mu in fl]
        mx = max(ts)
        ws = [math.exp(v - mx) for v in ts]
        sw = sum(ws)
        return mx + math.log(sw), sum(w * mu for w, (_, mu) in zip(ws, fl)) / sw

    def float_root(yf: float) -> float:
        """A double near the root (a proposal only): Newton from the previous
        knot's root (the roots of neighbouring knots are close), else bisection."""
        x = state["guess"]
        for _ in range(8):
            v, d = gd_float(x)
            if d <= 1e-12:
                break
            step = (v - yf) / d
            x -= step
            if abs(step) <= 1e-15 * (1 + abs(x)):
                return x
        lo, hi = state["guess"] - 1.0, state["guess"] + 1.0
        step = 1.0
        while gd_float(lo)[0] > yf:
            step *= 2
            lo -= step
        step = 1.0
        while gd_float(hi)[0] < yf:
            step *= 2
            hi += step
        for _ in range(200):
            mid = (lo + hi) / 2
            if mid in (lo, hi):
                break
            if gd_float(mid)[0] < yf:
                lo = mid
            else:
                hi = mid
        return (lo + hi) / 2

    def root_in_z(A: Arith, y: tuple) -> "Iv | None":
        _, ctx, _, _, lows, (G, g_near, ns, a_dn, a_up, a_near) = const(A)
        dn, up = A.dn, A.up
        if y[0] == y[1]:  # a point: e^y lies in [r, next_above(r)) for r = exp rounded down
            c0 = dn.exp(y[0])
            c1 = next_above(c0)
        else:
            c0, c1 = dn.exp(y[0]), up.exp(y[1])
        xf = float_root(float(ctx.div(ctx.add(y[0], y[1]), 2)))
        state["guess"] = xf  # the next knot's float start (a proposal only)
        # Newton on F(z) = e^y from z = e^(g x_f), at doubling precisions, then at the working one until
        # a step is below half its bits (quadratic convergence); only proposes z
        steps = lows + [ctx] * (2 + A.prec.bit_length())
        z = steps[0].exp(steps[0].mul(g_near, xf))
        half = mpfr(2) ** -(A.prec // 2 + 8)
        for k, c in enumerate(steps):
            pw = [c.pow(z, n) for n in ns]
            F = c.fsum([c.mul(ai, w) for ai, w in zip(a_near, pw)])
            dF = c.fsum([c.mul(c.mul(ai, w), n) for ai, w, n in zip(a_near, pw, ns) if n])
            if not dF > 0:
                break
            step = c.div(c.mul(c.sub(F, c0), z), dF)  # F'(z) = sum n_i a_i z^(n_i - 1)
            z = c.sub(z, step)
            if not z > 0:
                return None
            if k >= len(lows) and (step == 0 or abs(step) <= z * half):
                break
        state["z"] = z  # the knot loop's next start (a proposal only)
        return prove_z(A, z, c0, c1)

    def prove_z(A: Arith, z: mpfr, c0: mpfr, c1: mpfr) -> "Iv | None":
        """x_y enclosed from a proposal z of the root of F(z) = e^y, [c0, c1] an enclosure of
        e^y: the bracket z (1 -+ r) is proved by :func:`_mog_poly_brackets` (r = 2^-(prec - 12),
        widened 16-fold up to five times), then x_y = log(z_y) / g by a directed log (the upper
        end by concavity) and directed divisions; None where no bracket is proved (the proposal is only a proposal)."""
        G, _, ns, a_dn, a_up, _ = const(A)[5]
        dn, up = A.dn, A.up
        r = _RADII.get(A.prec)
        if r is None:
            r = _RADII[A.prec] = up.mul_2exp(mpfr(1), -(A.prec - 12))  # exact: a power of two
        for _ in range(6):
            a, b = dn.mul(z, dn.sub(1, r)), up.mul(z, up.add(1, r))
            if _mog_poly_brackets(A, a_dn, a_up, ns, a, b, (c0, c1)):
                # log b <= log a + (b - a) / a (log concave, 0 < a <= b), and log a < next_above(l0)
                # (MPFR rounds correctly): one logarithm instead of two
                l0 = dn.log(a)
                l1 = up.add(next_above(l0), up.div(up.sub(b, a), a))
                return (dn.div(l0, G[1] if l0 >= 0 else G[0]), up.div(l1, G[0] if l1 >= 0 else G[1]))
            r = up.mul_2exp(r, 4)
        return None

    def root(A: Arith, y: tuple) -> Iv:
        iv, ctx, near, _, lows, poly = const(A)
        if poly is not None:
            X = root_in_z(A, y)
            if X is not None:
                return X
            # not bracketed in z (a proposal gone astray): the same root is sought in x below
        ym = ctx.div(ctx.add(y[0], y[1]), 2)  # only steers the proposal
        t = mpfr(float_root(float(ym)), A.prec + 16)

        def newton(c: Any, t: mpfr) -> "tuple[mpfr, mpfr | None]":
            ws = [c.exp(c.add(c.mul(mu, t), k)) for mu, k in near]
            sw = c.fsum(ws)
            d = c.div(c.fsum([c.mul(w, mu) for w, (mu, _) in zip(ws, near)]), sw)
            if not d > 0:
                return t, None
            step = c.div(c.sub(c.log(sw), ym), d)
            return c.sub(t, step), step

        # Newton doubles the correct bits from 53: the first steps at lower precisions, then
        # at the working one until a step is below half its bits (the next error is about the
        # square: g'' / (2 g') <= max mu / 2 for this log-sum-exp, mu >= 0). All of it only
        # proposes t; a poor t only widens the proved bracket below or fails closed.
        for c in lows:
            t, step = newton(c, t)
            if step is None:
                break
        half = mpfr(2) ** -(A.prec // 2 + 8)
        for _ in range(4 + A.prec.bit_length()):
            t, step = newton(ctx, t)
            if step is None or step == 0 or abs(step) <= abs(t) * mpfr(2) ** -(A.prec + 8) + mpfr(2) ** -(A.prec + 40):
                break
            if abs(step) <= (1 + abs(t)) * half:
                break
        state["guess"] = float(t)
        r = A.up.mul(A.up.mul_2exp(mpfr(1), -(A.prec - 12)), A.up.add(1, abs(t)))
        ey = A.exp(y)
        for _ in range(6):
            a, b = A.dn.sub(t, r), A.up.add(t, r)
            if _mog_sum_end(A, iv, a, True) < ey[0] and _mog_sum_end(A, iv, b, False) > ey[1]:
                return (a, b)
            r = A.up.mul_2exp(r, 4)
        raise _cannot("a mixture-of-Gaussians loss whose inverse could not be bracketed")

    def fn(A: Arith, e: tuple) -> tuple:
        iv, _, _, lp0, _, _ = const(A)
        y = e if remove else A.neg(e)
        if lp0 is not None:  # is y <= log p_0 (every outcome has loss above it)?
            if y[1] <= lp0[0]:
                return (one, one) if remove else (zero, zero)
            if not y[0] > lp0[1]:
                return _UNIT
        return tails_at(A, iv, root(A, y))

    def tails_at(A: Arith, iv: list, X: Iv) -> tuple:
        """The tails on the enclosure X of the root x_y. Phi is increasing, so on an interval
        [a, b] it lies between Phi(a)'s lower end and Phi(a)'s upper end plus (b - a) 0.4
        (the mean value theorem: Phi' <= 1 / sqrt(2 pi) < 0.4), as :meth:`Arith.ncdf_abs`
        (written out here: every knot comes through), the lower end clamped at 0 and the upper
        at 1 (a probability); then sum_i p_i Phi(.) with p_i >= 0, products of nonnegatives
        rounded toward each end."""
        dn, up = A.dn, A.up
        point = A._ncdf_abs_point

        def phi(a: mpfr, b: mpfr) -> tuple:
            lo, hi = point(a)
            if b != a:
                hi = up.add(hi, up.mul(up.sub(b, a), _PHI_MAX))
            return max(lo, _Z), min(hi, _O)

        x0, x1 = X
        # a component at mu = 0 has the other law's tail: 0 - x and x - 0 are exact in MPFR
        # (the same numbers as -x and x), so that Phi is evaluated once
        if remove:
            t = phi(dn.minus(x1), up.minus(x0))
            us = [t if M[1] == 0 else phi(dn.sub(M[0], x1), up.sub(M[1], x0)) for M, _, _ in iv]
        else:
            t = phi(x0, x1)
            us = [t if M[1] == 0 else phi(dn.sub(x0, M[1]), up.sub(x1, M[0])) for M, _, _ in iv]
        mix = (dn.fsum([dn.mul(P[0], u[0]) for (_, _, P), u in zip(iv, us)]),
               up.fsum([up.mul(P[1], u[1]) for (_, _, P), u in zip(iv, us)]))
        return (mix, t) if remove else (t, mix)

    def block_roots(A: Arith, a: int, b: int, m: int, rho: int, N: int) -> "list | None":
        """Enclosures of the root x_y at the knots a..b (b - a < 2^(rho + 1)), y = +-i 2^-m, from one
        polynomial in t = (i - c) / 2^rho about c = a + 2^rho, or None (the caller goes knot by knot).

        Proof. In z = e^(g x) the root solves F(z) = e^y, F(z) = sum_i a_i z^(n_i) (a_i >= 0, some
        n_i > 0 with a_i > 0: F and F' increase on z > 0). Let Z(t) be any polynomial with integer
        coefficients Z_j 2^-P (a proposal: :func:`_mog_u_series`, untrusted) and z(t) the root at
        y(t) = y_c + sgn H t, H = 2^(rho - m). The residual R(t) = F(Z(t)) - e^(y_c) e^(sgn H t) has
        |R(t)| <= rho_R for |t| <= 1 with rho_R = sum_j max(|lo_j|, |hi_j|) + tail: F(Z) is formed
        exactly (Z^(n_i) by :func:`_ipoly_mul`), the a_i and e^(y_c) enclosed by integer ends, so
        the coefficient j of R lies in [lo_j, hi_j] (|sum_j r_j t^j| <= sum_j |r_j| for |t| <= 1), and
        tail >= e^(y_c) sum_(j > D) H^j / j! (D = deg F(Z); <= 2 e^(y_c) H^(D+1) / (D+1)! as
        H <= 1/2). Let zeta = min_t Z(t) lower bound (Z_0 - sum_(j>=1) |Z_j|), proved below z(t) by
        F(zeta) < e^(y_low) (directed, :func:`_mog_poly_end`; y_low the least y of the segment):
        then Z(t), z(t) >= zeta > 0, and by the mean value theorem
        |Z(t) - z(t)| = |R(t)| / F'(xi) <= rho_R / F'(zeta) =: delta (F' nondecreasing on z > 0).
        At each knot Z(k) is summed exactly (:func:`.series.at_integers`), z lies in
        [Z(k) - delta, Z(k) + delta], and x_y = log(z) / g is enclosed as :func:`prove_z` does. The
        segment must lie inside the loss support (y_low > log p_0, proved), and delta is taken only
        while it is below zeta 2^-(prec - 10) (a choice: wider would still be an enclosure)."""
        iv, ctx, _, lp0, _, poly = const(A)
        G, _, ns, a_dn, a_up, a_near = poly
        if max(ns) > _MOG_BLOCK_DEGREE:
            return None
        dn, up = A.dn, A.up
        sgn = 1 if remove else -1
        c = a + (1 << rho)
        hb = m - rho  # H = 2^-hb
        y_ends = [A.dn.div(sgn * (c - (1 << rho)), pow2(m)), A.dn.div(sgn * (c + (1 << rho)), pow2(m))]  # exact
        y_low = min(y_ends)
        if lp0 is not None and not y_low > lp0[1]:
            return None
        y_c = dn.div(sgn * c, pow2(m))  # exact
        if root_in_z(A, (y_c, y_c)) is None:  # only for its proposal z_c (state["z"])
            return None
        zc = state["z"]
        P = A.prec + _MOG_GUARD + max(0, -gmpy2.get_exp(zc))
        # the proposal: b_i = a_i z_c^(n_i) / e^(y_c) to nearest, then u (z = z_c (1 + u))
        ey = ctx.exp(y_c)
        bi = [int(ctx.mul_2exp(ctx.div(ctx.mul(ai, ctx.pow(zc, n)), ey), P)) for ai, n in zip(a_near, ns)]
        one = mpz(1) << P
        hk = [one] + [(sgn ** k) * ((one >> (hb * k)) // math.factorial(k)) for k in range(1, N + 1)]
        u = _mog_u_series(bi, ns, hk, N, P)
        if u is None:
            return None
        z0 = int(ctx.mul_2exp(zc, P))
        Z = [z0] + [(z0 * uj) >> P for uj in u[1:]]
        # the residual's coefficients, at the scale 2^-S, S = nmax P + Pa
        nmax = max(ns)
        Pa = P + 16
        S = nmax * P + Pa
        lo = [0] * (nmax * N + 1)
        hi = [0] * (nmax * N + 1)
        powers = {0: [1], 1: Z}
        for n in sorted(set(ns)):
            if n not in powers:
                k = max(k for k in powers if k < n)
                w = powers[k]
                for _ in range(n - k):
                    w = _ipoly_mul(w, Z)
                powers[n] = w
        for ad, au, n in zip(a_dn, a_up, ns):
            alo, ahi = floor_int(dn.mul_2exp(ad, Pa)), ceil_int(up.mul_2exp(au, Pa))
            sh = (nmax - n) * P
            for j, C in enumerate(powers[n]):
                C <<= sh
                if C >= 0:
                    lo[j] += alo * C
                    hi[j] += ahi * C
                else:
                    lo[j] += ahi * C
                    hi[j] += alo * C
        D = nmax * N
        e_lo, e_hi = floor_int(dn.mul_2exp(dn.exp(y_c), Pa)), ceil_int(up.mul_2exp(up.exp(y_c), Pa))
        e_lo, e_hi = e_lo << (S - Pa), e_hi << (S - Pa)
        fact = 1
        rho_R = 0
        for j in range(D + 1):
            if j:
                fact *= j
            den = fact << (hb * j)
            t_lo, t_hi = e_lo // den, -((-e_hi) // den)  # e^(y_c) H^j / j!, floored and ceiled
            if sgn < 0 and j % 2:
                t_lo, t_hi = -t_hi, -t_lo
            rho_R += max(abs(lo[j] - t_hi), abs(hi[j] - t_lo))
        rho_R += -((-2 * e_hi) // ((fact * (D + 1)) << (hb * (D + 1)))) + 1
        # zeta: a lower bound of Z over |t| <= 1, proved below every root of the segment
        zeta = dn.mul_2exp(Z[0] - sum(abs(x) for x in Z[1:]), -P)
        if not zeta > 0 or not _mog_poly_end(up, a_up, ns, zeta) < dn.exp(y_low):
            return None
        dF = dn.fsum([dn.mul(dn.mul(ad, n), dn.pow(zeta, n - 1)) for ad, n in zip(a_dn, ns) if n])
        if not dF > 0:
            return None
        delta = up.div(up.mul_2exp(mpz(rho_R), -S), dF)
        if delta > dn.mul_2exp(zeta, 10 - A.prec):
            return None
        tails = block_tails(A, Z, P, u, zc, delta, zeta, a, b, c, rho, N) if rho >= _MOG_TM_RHO else None
        if tails is not None:
            return tails
        Zs = rho * N + P
        Dz = ceil_int(up.mul_2exp(delta, Zs))
        out = []
        iv = const(A)[0]
        for v in bs.at_integers(bs.k_basis(Z, rho), a - c, b - c):
            z_lo, z_hi = dn.mul_2exp(v - Dz, -Zs), up.mul_2exp(v + Dz, -Zs)
            l0 = dn.log(z_lo)
            l1 = up.add(next_above(l0), up.div(up.sub(z_hi, z_lo), z_lo))
            X = (dn.div(l0, G[1] if l0 >= 0 else G[0]), up.div(l1, G[0] if l1 >= 0 else G[1]))
            (p0, p1), (q0, q1) = tails_at(A, iv, X)
            out.append(((p0, min(p1, _O)), (q0, min(q1, _O))))  # IvTails' intersection with [0, 1]
        return out

    def block_tails(A: Arith, Z: list, P: int, u: list, zc: mpfr, delta: mpfr, zeta: mpfr,
                    a: int, b: int, c: int, rho: int, N: int) -> "list | None":
        """The tails at the knots a..b from two Taylor models in t (:func:`_tm_mul`), given the block's
        proved root polynomial: z(t) in Z(t) +- delta, zeta <= z(t), Z(t) (:func:`block_roots`). None
        where the models' error exceeds 2^-prec (the caller then takes the tails knot by knot from the
        proved roots).

        Proof. W (degree N, integers 2^-P) is the proposal log(1 + u) (untrusted) and X(t) = xt + W(t) / g,
        xt a dyadic near log(z_c) / g: an exact polynomial. (1) X is near the root: E = e^(g X) =
        e^(g xt) e^W, and e^W is enclosed by the model sum_(k<=K) W^k / k! plus the Lagrange remainder
        r^(K+1) e^r / (K+1)! (r >= sup|W|); then eta >= sup|Z - E| (coefficient-wise intervals, summed in
        absolute value, plus the models' errors), so for every t, |z - E| <= delta + eta and
        min(z, E) >= zeta - eta > 0, and |x - X| = |log z - log E| / g <= (delta + eta) / (g (zeta - eta))
        =: eps_x (log's slope 1 / min). (2) For each mu_i, Phi(mu_i - x) lies within eps_x 0.4 of
        Phi(a_i - d), a_i = mu_i - xt, d = W / g (Phi' <= 1 / sqrt(2 pi) < 0.4), and Phi(a - d) =
        Phi(a) - sum_(k=1..K') phi(a) He_(k-1)(a) d^k / k! + R with |R| <= 0.4335 sqrt(K'!) r_d^(K'+1) / (K'+1)!
        (Cramer's inequality |He_n(x)| e^(-x^2/4) <= 1.0866 sqrt(n!) as in :meth:`.core.Arith._taylor_q`,
        r_d >= sup|d|); its coefficients are MPFR intervals (the Hermite recurrence He_(n+1) = a He_n -
        n He_(n-1) in directed rounding) held as balls, times the models of d^k. The P- and Q-tails are
        the sums over the components with their weights p_i (remove: P = sum p_i Phi(mu_i - x), Q =
        Phi(-x); add: P = 1 - Phi(-x), Q = 1 - sum p_i Phi(mu_i - x)). Each model's value at a knot is
        summed exactly (:func:`.series.at_integers`) and widened by its error."""
        _, ctx, _, _, _, poly = const(A)
        G = poly[0]
        B = arith(P + 64)
        dn, up = B.dn, B.up
        g = degrees[0]
        # xt: a dyadic near log(z_c) / g; W = (log(z_c) - g xt) + log(1 + u) to nearest in integers
        # ((1 + u) W' = u'), so that X(t) = xt + W(t) / g is near x(t)
        lz = ctx.log(zc)
        xt = mpfr(ctx.div(lz, ctx.div(mpz(g.numerator), mpz(g.denominator))), 64)
        xq = Fraction(*xt.as_integer_ratio())
        W, jW = [int(ctx.mul_2exp(ctx.sub(lz, ctx.mul(xt, ctx.div(mpz(g.numerator), mpz(g.denominator)))), P))], [0]
        for k in range(1, N + 1):
            wk = u[k] - sum(map(_mul, jW[1:k], u[k - 1:0:-1])) // (k << P)
            W.append(wk)
            jW.append(k * wk)
        one = 1 << P
        # powers of W as models (coefficients, error), k = 0..K
        supW = sum(map(abs, W))  # |W(t)| <= supW 2^-P
        if not 0 < supW < 3 * one >> 2:  # |W| < 3/4: e^W's remainder below, and x's range
            return None
        r = up.mul_2exp(mpz(supW), -P)  # exact: sup |W| (<= 3/4)
        rd = up.div(r, B.q(g)[0])  # >= sup |d|, d = W / g
        fr, frd, lim = float(r), float(rd), A.prec + 8
        # the orders (choices; the remainders below are bounded whatever they are): K for e^W, K2 for Phi
        K = next((k for k in range(4, 400) if (k + 1) * math.log2(fr) - math.lgamma(k + 2) / math.log(2) + 2
                  < -lim), None)
        K2 = next((k for k in range(4, 400) if (k + 1) * math.log2(frd) + math.lgamma(k + 1) / (2 * math.log(2))
                   - math.lgamma(k + 2) / math.log(2) < -lim), None)
        if K is None or K2 is None:  # past a few thousand bits: the knot loop answers
            return None
        NT = N + _MOG_TM_EXTRA  # the models' degree: W^k has terms past N
        pows = [([one] + [0] * NT, 0), (W + [0] * (NT - N), 0)]
        for _ in range(2, max(K, K2) + 1):
            pows.append(_tm_mul(pows[-1][0], pows[-1][1], W, 0, NT, P))
        # (1) eta >= sup |Z - e^(g xt) e^W|: 1 / k! floored (within one unit: a ball of radius 1)
        E_poly, E_err = _tm_combine([one // math.factorial(k) for k in range(K + 1)], [1] * (K + 1),
                                    pows[:K + 1], P, True)
        # e^W's Lagrange remainder r^(K+1) e^r / (K+1)! <= 3 r^(K+1) / (K+1)! (r < 3/4), in units
        E_err += ceil_int(up.mul_2exp(up.div(up.mul(3, up.pow(r, K + 1)), mpz(math.factorial(K + 1))), P)) + 1
        egx = B.exp(B.mul(B.q(g), B.q(xq)))
        e0, e1 = floor_int(dn.mul_2exp(egx[0], P)), ceil_int(up.mul_2exp(egx[1], P))  # e^(g xt) 2^P
        eta2 = 0  # units 2^-2P
        for Zj, Ej in zip(Z + [0] * (NT - N), E_poly):
            lo_, hi_ = (e0 * Ej, e1 * Ej) if Ej >= 0 else (e1 * Ej, e0 * Ej)
            eta2 += max(abs((Zj << P) - lo_), abs((Zj << P) - hi_))
        eta2 += e1 * E_err
        eta = up.mul_2exp(mpz(eta2), -2 * P)
        zlo = dn.sub(zeta, eta)
        if not zlo > 0:
            return None
        eps_x = up.div(up.add(delta, eta), dn.mul(G[0], zlo))
        eps_units = ceil_int(up.mul_2exp(up.mul(eps_x, _PHI_MAX), P)) + 1  # 0.4 eps_x, units 2^-P
        # (2) Phi(a - d) for a = mu - xt, mu = 0 (Q's) and every mu_i (the mixture's, weight p_i)
        mix = [[0, 0] for _ in range(K2 + 1)]
        zero_c = [[0, 0] for _ in range(K2 + 1)]
        gn, gd = g.numerator, g.denominator
        weights = dict(comps)
        for mu in sorted(set(weights) | {Fraction(0)}):
            av = B.sub(B.q(mu), B.q(xq))
            phi_a = B.div(B.exp(B.neg(B.scale2(B.mul(av, av), -1))), B._sqrt2pi)
            ab = bs.ball_of(av, P)
            # c_0 = Phi(a), c_1 = -phi(a) / g, c_(k+1) = a c_k / ((k+1) g) - (k-1) c_(k-1) / (k (k+1) g^2)
            # (He_k = a He_(k-1) - (k-1) He_(k-2) in c_k = -He_(k-1)(a) phi(a) / (k! g^k)), as balls
            bl = [bs.ball_of(B.ncdf_abs(av), P), _ball_q(bs.ball_of(phi_a, P), -gd, gn)]
            for k in range(1, K2):
                t1 = _ball_q(bs.mul(ab, bl[k], P), gd, (k + 1) * gn)
                t2 = _ball_q(bl[k - 1], (k - 1) * gd * gd, k * (k + 1) * gn * gn) if k > 1 else (0, 0)
                bl.append((t1[0] - t2[0], t1[1] + t2[1]))
            if mu == 0:
                zero_c = [[x, y] for x, y in bl]
            if mu in weights:
                pb = bs.ball_of(B.q(weights[mu]), P)
                for k, x in enumerate(bl):
                    t = bs.mul(x, pb, P)
                    mix[k][0] += t[0]
                    mix[k][1] += t[1]
        # Phi's remainder 0.4335 sqrt(K2!) rd^(K2+1) / (K2+1)!, in units (sum p_i = 1 for the mixture)
        rem = ceil_int(up.mul_2exp(up.div(up.mul(up.mul(up.div(mpz(4335), mpz(10000)), mpz(math.isqrt(math.factorial(K2)) + 1)),
                                                up.pow(rd, K2 + 1)), mpz(math.factorial(K2 + 1))), P)) + 1
        out = []
        for cf in (mix, zero_c):
            poly_, err = _tm_combine([x[0] for x in cf], [x[1] for x in cf], pows[:K2 + 1], P, True)
            err += eps_units + rem
            # the coefficients past j0 moved into the error while they sum to at most 2^-(prec + 4)
            j0, drop = len(poly_) - 1, 0
            while j0 > 1 and drop + abs(poly_[j0]) <= 1 << (P - A.prec - 4):
                drop += abs(poly_[j0])
                j0 -= 1
            poly_, err = poly_[:j0 + 1], err + drop
            if err > 1 << (P - A.prec + 10):
                return None
            out.append((poly_, err))
        (Pm, Pe), (Qm, Qe) = out
        if not remove:  # P = 1 - Phi(-x), Q = 1 - mix
            Pm, Qm = [one - Qm[0]] + [-x for x in Qm[1:]], [one - Pm[0]] + [-x for x in Pm[1:]]
            Pe, Qe = Qe, Pe
        cols = [_enclosures(A, bs.values_at_integers(pm, rho, a - c, b - c), e << (rho * (len(pm) - 1)),
                            P + rho * (len(pm) - 1)) for pm, e in ((Pm, Pe), (Qm, Qe))]
        return list(zip(*cols))

    def many(A: Arith, i0: int, n: int, m: int) -> list:
        """:func:`many_knots` by blocks of 2^(rho+1) knots, rho = m - :data:`_MOG_SPAN`: the roots
        from one polynomial a block (:func:`block_roots`), the tails from two Taylor models in t on
        blocks of rho >= :data:`_MOG_TM_RHO` (:func:`block_tails`), else at each knot from its root's
        enclosure as at a single point (:func:`tails_at`); knot by knot where a block's roots are not
        proved (near the end of the loss support). Every route is proved; which one a block takes
        depends on the inputs only."""
        rho = m - _MOG_SPAN
        if rho < _MOG_MIN_RHO or max(abs(i0), abs(n)) + (2 << rho) >= 1 << (A.prec - 2):
            return many_knots(A, i0, n, m)
        # more terms where the tails take Taylor models: x converges more slowly than z (pld-speed.md)
        N = -(-(A.prec + _MOG_GUARD) // (_MOG_BITS_PER_TERM - (rho >= _MOG_TM_RHO)))
        out: list = []
        a = i0
        while a <= n:
            b = min(n, a + (2 << rho) - 1)
            got = block_roots(A, a, b, m, rho, N) if b - a + 1 >= 1 << rho else None
            out += many_knots(A, a, b, m) if got is None else got
            a = b + 1
        return out

    def many_knots(A: Arith, i0: int, n: int, m: int) -> list:
        """:func:`fn` at the grid points i 2^-m, i = i0..n (exact: |i| < 2^(prec-1)), each
        intersected with [0, 1] as :class:`IvTails` does, on the route in z only (``degrees``): the
        same proof at every knot (the bracket :func:`prove_z`, then :func:`tails_at`), with a
        cheaper proposal. Neighbouring knots' roots are close: log z_y is smooth in y, so
        z_i ~ z_{i-1}^2 / z_{i-2} (log z extrapolated linearly, an error of order 2^-2m), and Newton
        on F(z) = e^y from there at precisions that follow the bits already correct (about twice
        the last step's, :func:`newton_z`) reaches the working precision in two or three steps,
        where :func:`root_in_z` starts each knot from a float search. A proposal that is not
        proved (or a knot where Newton stalls) takes :func:`root`, the per-point route, at that
        knot. What is proved does not depend on the proposal; only the bracket's ends, z (1 -+ r),
        may differ in their last bits from the per-point route's (a different z within
        2^-(prec + 10) of the root): both enclose the same root."""
        iv, ctx, _, lp0, _, _ = const(A)
        dn = A.dn
        two_m = pow2(m)
        full = (one, one) if remove else (zero, zero)
        low = _ctx(128)
        out = []
        hist: list = []  # the proposals of the last knots, latest first (consecutive knots with roots)
        for i in range(i0, n + 1):
            e = dn.div(i, two_m)
            y = e if remove else dn.minus(e)  # exact both
            if lp0 is not None:
                if y <= lp0[0]:
                    out.append(full)
                    hist = []
                    continue
                if not y > lp0[1]:
                    out.append(_UNIT)
                    hist = []
                    continue
            c0 = dn.exp(y)  # e^y lies in [c0, next_above(c0)) (MPFR rounds correctly)
            c1 = next_above(c0)
            X = None
            if hist:
                z = _extrapolate(low, hist)
                z = newton_z(A, z, c0, _PREDICT_BITS[len(hist)])
                X = prove_z(A, z, c0, c1) if z is not None else None
            if X is None:
                X = root(A, (y, y))
                z = state["z"]
            hist = [z] + hist[:3]
            (p0, p1), (q0, q1) = tails_at(A, iv, X)
            out.append(((p0, min(p1, _O)), (q0, min(q1, _O))))  # IvTails' intersection with [0, 1]
        return out

    def newton_z(A: Arith, z: mpfr, c0: mpfr, bits: int) -> "mpfr | None":
        """A proposal only: Halley's iteration on f(z) = F(z) - c0 from z (cubic convergence:
        the bits correct about triple each step), each step at about three times the bits the
        last step showed correct (plus 32, ``bits`` the start's guess), the last at the working
        precision once a step is below a third of its bits; None where it stalls. With
        D1 = z F'(z) = sum n_i a_i z^(n_i) and D2 = z^2 F''(z) = sum n_i (n_i - 1) a_i z^(n_i),
        Halley's step 2 f f' / (2 f'^2 - f f'') is 2 f D1 z / (2 D1^2 - f D2)."""
        _, full, _, _, _, (_, _, ns, _, _, a_near) = const(A)
        top = full.precision
        done = (A.prec + 16) // 3 + 2
        for _ in range(8):
            p = top if 3 * bits + 32 >= top else -(-(3 * bits + 32) // 32) * 32
            c = full if p == top else _ctx(p)
            t = [c.mul(ai, c.pow(z, k)) for ai, k in zip(a_near, ns)]
            f = c.sub(c.fsum(t), c0)
            d1 = c.fsum([c.mul(ti, k) for ti, k in zip(t, ns) if k])
            d2 = c.fsum([c.mul(ti, k * (k - 1)) for ti, k in zip(t, ns) if k > 1])
            den = c.sub(c.mul(c.square(d1), 2), c.mul(f, d2))
            if not (d1 > 0 and den > 0):
                return None
            step = c.div(c.mul(c.mul(c.mul(f, d1), 2), z), den)
            z = c.sub(z, step)
            if not z > 0:
                return None
            if step == 0:
                return z
            got = gmpy2.get_exp(z) - gmpy2.get_exp(step)
            if p == top and got >= done:
                return z
            bits = max(0, 3 * got - 6)
        return None

    # the pair is a function of the merged components (mu_i, p_i) and the direction alone: the same
    # key lets :func:`.pld._discretise` reuse its masses when the same mixture is discretised again
    return IvTails(fn, many=many if degrees is not None else None, key=("mog", tuple(comps), direction))


# --------------------------------------------------------------------------- zCDP


def _point(A: Arith, x: mpf) -> mpfr:
    """An mpf proposal as an exact mpfr point (rounded down once: any point serves)."""
    return A.q(mpf_to_fraction(x))[0]


def _zcdp_delta(rho: Fraction, xi: Fraction, eps: Fraction) -> tuple[mpf, mpf]:
    """[lo', hi'] of min(1, inf_{alpha > 1} exp(f(alpha))),
    f(alpha) = (alpha - 1)(xi + rho alpha - eps) + (alpha - 1) log(1 - 1/alpha) - log alpha
    (Canonne, Kamath, Steinke 2020 Prop 12 at tau = xi + rho alpha), in MPFR directed
    rounding at the exact inputs. Every alpha gives an upper end (the proposition holds at
    each order). f is strictly convex (f'' = 2 rho + 1/(alpha(alpha - 1)) > 0), so a bracket
    a < b with f'(a) < 0 < f'(b), both signs proved, holds the minimiser, and inf f lies in
    [f(a) + f'(a)(b - a), min(f(a), f(b))] (tangent at a; f decreasing left of a, increasing
    right of b). The bracket is proposed by mpmath bisection in t = log(alpha - 1)
    (untrusted: a wrong one fails the sign check)."""
    if rho == 0 and xi <= eps:
        return mpf(0), mpf(0)  # f' < 0 everywhere and f -> -inf
    r, x, e = fraction_to_mpf(rho), fraction_to_mpf(xi), fraction_to_mpf(eps)

    def fprime(a: mpf) -> mpf:
        return x - e + r * (2 * a - 1) + mpmath.log1p(-1 / a)

    lo, hi = mpf(-200), mpf(8)
    if not fprime(1 + mpmath.exp(lo)) < 0:
        raise _cannot("a zCDP conversion whose optimal order is below 1 + e^-200")
    while fprime(1 + mpmath.exp(hi)) < 0:
        hi += 8
        if hi > 10**4:
            raise _cannot("a zCDP conversion whose optimal order is beyond e^10000")
    for _ in range(mpmath.mp.prec // 2 + 20):  # bracket to about half the working bits
        mid = (lo + hi) / 2
        if fprime(1 + mpmath.exp(mid)) < 0:
            lo = mid
        else:
            hi = mid
    A = arith(int(mpmath.mp.prec) + 30)
    one, R, X, E = A.q(1), A.q(rho), A.q(xi), A.q(eps)
    XE = A.sub(X, E)

    def f_iv(al: mpfr) -> tuple:
        Al = (al, al)
        l1 = A.log1p(A.neg(A.div(one, Al)))
        am1 = A.sub(Al, one)
        f = A.sub(A.add(A.mul(am1, A.add(XE, A.mul(R, Al))), A.mul(am1, l1)), A.log(Al))
        return f, A.add(A.add(XE, A.mul(R, A.sub(A.scale2(Al, 1), one))), l1)

    a, b = _point(A, 1 + mpmath.exp(lo)), _point(A, 1 + mpmath.exp(hi))
    if not 1 < a < b:
        raise _cannot("the zCDP conversion's optimal order (bracket)")
    fa, da = f_iv(a)
    fb, db = f_iv(b)
    if not (da[1] < 0 and db[0] > 0):
        raise _cannot("the zCDP conversion's optimal order (sign check failed)")
    low = A.add(fa, A.mul(da, A.sub((b, b), (a, a))))
    d_lo, d_hi = A.exp(low)[0], min(A.exp(fa)[1], A.exp(fb)[1])
    return min(mpfr_to_mpf(d_lo), mpf(1)), min(mpfr_to_mpf(d_hi), mpf(1))


def _abc_gamma_above(A: Arith, al: Fraction, E: Fraction, d: Fraction, g: Fraction, pf: Fraction) -> bool:
    """Is ABC's gamma_alpha^E(d) > g proved (ABC Thm 3)? gamma = E + inf_{p in (d, 1)}
    log S(p) / (alpha - 1), S(p) = p^alpha (p - d)^(1 - alpha) + (1 - p)^alpha (e^E - p + d)^(1 - alpha),
    so it is min S > e^((alpha - 1)(g - E)). S is convex in p (each term is a perspective
    y (u / y)^alpha of the convex u^alpha, u and y affine in p). If alpha d >= 1, S'(1-) =
    (1 - d)^(-alpha)(1 - alpha d) <= 0 and the infimum is S(1) = (1 - d)^(1 - alpha) (ABC Thm 4
    eq. 17). Else the minimiser is inside: around the proposal p* (untrusted) points
    p_a < p_b with S'(p_a) < 0 < S'(p_b) are proved, and min S >= S(p_a) + S'(p_a)(p_b - p_a)
    (the tangent at p_a lies below S; S decreases left of p_a, increases right of p_b)."""
    one, Al, D = A.q(1), A.q(al), A.q(d)
    am1 = A.q(al - 1)
    need = A.exp(A.mul(am1, A.q(g - E)))
    if al * d >= 1:
        inf_s = A.exp(A.neg(A.mul(am1, A.log(A.q(1 - d)))))  # (1 - d exact: no rounding of -d to -1)
        return inf_s[0] > need[1]
    x = A.exp(A.q(E))

    def s_ds(p: mpfr) -> tuple:
        P = (p, p)
        pd, u = A.sub(P, D), A.sub(one, P)
        v = A.add(A.sub(x, P), D)
        if not (pd[0] > 0 and u[0] > 0 and v[0] > 0):
            return None
        t1 = A.exp(A.sub(A.mul(Al, A.log(P)), A.mul(am1, A.log(pd))))
        t2 = A.exp(A.sub(A.mul(Al, A.log(u)), A.mul(am1, A.log(v))))
        d1 = A.sub(A.div(Al, P), A.div(am1, pd))
        d2 = A.sub(A.div(am1, v), A.div(Al, u))
        return A.add(t1, t2), A.add(A.mul(t1, d1), A.mul(t2, d2))

    for k in (48, 36, 24, 12, 6):
        w = (pf - d) / 2 ** k
        pa, pb = A.q(pf - w)[0], A.q(min(pf + w, (pf + 1) / 2))[1]
        sa, sb = s_ds(pa), s_ds(pb)
        if sa is None or sb is None or not pa < pb:
            continue
        if sa[1][1] < 0 and sb[1][0] > 0:
            lb = A.add(sa[0], A.mul(sa[1], A.sub((pb, pb), (pa, pa))))
            return max(lb[0], A.sub(sb[0], A.mul(sb[1], A.sub((pb, pb), (pa, pa))))[0]) > need[1]
    return False


def _abc_float(a: float, g: float, d: float) -> tuple[float, float]:
    """A proposal (floats, untrusted) of the optimal conversion at order a (ABC Thm 3):
    (eps, p*), eps the smallest e >= 0 with gamma_a^e(d) >= g (bisection; gamma increases
    in e), p* the minimiser of S at that eps (bisection on the sign of S', S convex, in
    t = log(p - d) so that minimisers near d are resolved). Logs throughout: S's terms
    overflow doubles at large orders."""
    if a * d >= 1:  # ABC Thm 4 eq. 17: gamma = e - log(1 - d)
        return max(0.0, g + math.log1p(-d)), 1.0

    def parts(e: float, t: float) -> tuple[float, float, float, float]:
        pd = math.exp(t)
        p = d + pd
        l1 = a * math.log(p) + (1 - a) * t
        lv = e + math.log1p((d - p) * math.exp(-e))  # log(e^e - p + d)
        l2 = a * math.log1p(-p) + (1 - a) * lv
        return l1, l2, p, math.exp(lv)

    def slope_sign(e: float, t: float) -> float:
        l1, l2, p, v = parts(e, t)
        m = max(l1, l2)
        return math.exp(l1 - m) * (a / p - (a - 1) / (p - d)) + math.exp(l2 - m) * ((a - 1) / v - a / (1 - p))

    def argmin(e: float) -> float:
        lo, hi = math.log(d) - 40.0, math.log1p(-d) + math.log1p(-1e-15)
        if slope_sign(e, hi) < 0:
            return hi
        for _ in range(200):
            mid = (lo + hi) / 2
            if mid in (lo, hi):
                break
            lo, hi = (mid, hi) if slope_sign(e, mid) < 0 else (lo, mid)
        return (lo + hi) / 2

    def gamma(e: float) -> float:
        l1, l2, _, _ = parts(e, argmin(e))
        m = max(l1, l2)
        return e + (m + math.log(math.exp(l1 - m) + math.exp(l2 - m))) / (a - 1)

    if gamma(0.0) >= g:
        return 0.0, d + math.exp(argmin(0.0))
    lo, hi = 0.0, g + math.log(1 / d) / (a - 1) + 1  # the classic conversion is above
    for _ in range(200):
        mid = (lo + hi) / 2
        if mid in (lo, hi):
            break
        lo, hi = (lo, mid) if gamma(mid) >= g else (mid, hi)
    return hi, d + math.exp(argmin(hi))


def _zcdp_eps(rho: Fraction, xi: Fraction, delta: Fraction) -> tuple[mpf, mpf]:
    """An upper end of the zCDP epsilon: the optimal RDP -> DP conversion (ABC Thm 3) at one
    order alpha (any order gives an upper bound of the mechanism's epsilon; the infimum
    over orders is not claimed), proved in MPFR directed rounding: the order alpha, the
    value E and the minimiser p* are proposed in floats (golden-section search in
    log(alpha - 1), :func:`_abc_float`; untrusted), then gamma_alpha^E(delta) >
    xi + rho alpha is proved (:func:`_abc_gamma_above`), which makes the mechanism
    (E, delta)-DP. The lower end is 0 (zCDP fixes the Renyi curve, not the privacy profile)."""
    if rho == 0:
        raise _cannot("a zCDP epsilon with rho = 0")
    r, x, dm = float(rho), float(xi), float(delta)
    if not (r > 0 and dm > 0):
        raise _cannot("a zCDP epsilon beyond double range (proposal)")
    from .rdp import _golden

    t0 = math.log(math.sqrt(math.log(1 / dm) / r))

    def h(t: float) -> float:
        a = 1 + math.exp(float(t))
        return _abc_float(a, x + r * a, dm)[0]

    al = Fraction(1 + math.exp(float(_golden(h, t0 - 1.5, t0 + 1.5, 40)[0])))
    g = xi + rho * al
    v, p_prop = _abc_float(float(al), float(g), dm)
    A = arith(160)
    for k in (44, 36, 28, 20):
        E = Fraction(v) * (1 + Fraction(1, 2 ** k)) + Fraction(1, 2 ** (k + 20))
        if _abc_gamma_above(A, al, E, delta, g, Fraction(p_prop)):
            return mpf(0), mpfr_to_mpf(A.q(E)[1])
    raise _cannot("the zCDP conversion at the proposed order (ABC Thm 3 not proved at its value)")


def _zcdp_bounds(rho: Fraction, xi: Fraction, kind: str, target: Fraction) -> tuple[mpf, mpf]:
    """The zCDP conversion at the exact target (eps for delta, delta for eps)."""
    if rho == 0 and xi == 0:
        return mpf(0), mpf(0)
    try:
        with mpmath.workprec(max(mpmath.mp.prec, 160)):
            return _zcdp_delta(rho, xi, target) if kind == "delta" else _zcdp_eps(rho, xi, target)
    except (ArithmeticError, ValueError) as exc:  # extreme parameters: fail closed, not "rejected"
        raise _cannot(f"this zCDP conversion ({type(exc).__name__})") from exc


def _exact_target(inputs: Mapping[str, Any], kind: str, target: mpf) -> Fraction:
    """The exact input behind the mpf ``target`` (made from it by :func:`to_mpf` at the
    same precision): the zCDP conversion is evaluated at exact rationals."""
    for key in (("delta",) if kind == "eps" else ("eps", "claimed_eps")):
        if key in inputs:
            x = _num(inputs, key)
            if fraction_to_mpf(x) == target:
                return x
    raise _cannot("a zCDP conversion at a target that is not an input of the certificate")


# --------------------------------------------------------------------------- tree walk


def _poisson_relation_covered(t: Any, q: Fraction, rel: str) -> None:
    """Refuse a Poisson-sampled leaf under a relation no theorem covers, as the
    producer does: AFA Thm 11 (1) turns a base pair into Poisson-sampled pairs
    for add and remove neighbours only. Replace-special reduces to add/remove for
    the additive leaves (a special record that contributes nothing), not for an
    (eps, delta)-DP leaf, whose guarantee says nothing about the special record;
    replace-one under Poisson sampling has no proved pair for any leaf."""
    if q == 1 or rel in ("add-remove", "add", "remove"):
        return
    if rel == "replace-special" and t in ("gaussian", "laplace"):
        return
    raise CertificateRejected(f"a Poisson-sampled {t} event under {rel}: no theorem gives a dominating pair "
                              "(AFA Thm 11 (1) covers add and remove neighbours)")


def _leaf(ev: Mapping[str, Any], q: Fraction, rel: str):
    t = ev.get("type")
    _poisson_relation_covered(t, q, rel)
    if t in ("gaussian", "laplace"):
        s = _num(ev, "noise_multiplier")
        if s <= 0:
            raise MalformedCertificate("noise_multiplier must be > 0")
        if rel == "replace-one":
            if q != 1:
                raise MalformedCertificate("Poisson sampling under replace-one is not certified")
            if t == "gaussian":
                return lambda d: (gauss_tails(s, Fraction(1), "replace"), mpf(0))
            return lambda d: (laplace_tails(s / 2, Fraction(1), "remove"), mpf(0))
        f = gauss_tails if t == "gaussian" else laplace_tails
        return lambda d: (f(s, q, d if q != 1 else "remove"), mpf(0))
    if t == "epsilon_delta":
        # epsilon >= 0, delta in [0, 1]: certificate.ranges, before any route (a negative epsilon
        # built the +epsilon pair with its middle atoms swapped: adv42 F2)
        e0, d0 = _num(ev, "epsilon"), _num(ev, "delta")
        return lambda d: (_eps_delta(e0, d0, q, d), mpf(0))
    if t == "randomized_response" and q == 1:
        p, k = _num(ev, "noise_parameter"), _int(ev, "num_buckets")
        keep, other = 1 - p + p / k, p / k  # exact rationals: the pair's masses
        if rel == "replace-one":
            P, Q = [keep, other, (k - 2) * other], [other, keep, (k - 2) * other]
            return lambda d: (finite_tails(P, Q), mpf(0))
        if rel == "replace-special":
            P, Q = [keep, (k - 1) * other], [Fraction(1, k), Fraction(k - 1, k)]
            return lambda d: (finite_tails(P, Q), mpf(0)) if d == "remove" else (finite_tails(Q, P), mpf(0))
    if t in ("discrete_laplace", "discrete_gaussian") and q == 1:
        D = _int(ev, "sensitivity") * (2 if rel == "replace-one" else 1)
        atoms = discrete_event_atoms(t, D, _num(ev, "sigma") if t == "discrete_gaussian" else Fraction(0))
        if atoms > MAX_EVENT_ATOMS:
            # the producer refuses this event before any work (exit 2, limits.MAX_EVENT_ATOMS): so does verify
            sigma = f", sigma {_num(ev, 'sigma')}" if t == "discrete_gaussian" else ""
            raise MalformedCertificate(f"inputs.event: a {t} event (pair sensitivity {D}{sigma}) has {atoms:,} "
                                       f"atoms, above the producer's cap of {MAX_EVENT_ATOMS:,} "
                                       "(dpverify.limits.MAX_EVENT_ATOMS)")
        if t == "discrete_laplace":
            a = _num(ev, "noise_parameter")
            return lambda d: (_dlap(a, D), mpf(0))
        s = _num(ev, "sigma")
        return lambda d: (_dgauss(s, D), mpf(0))
    if t == "mixture_of_gaussians" and q == 1 and rel != "replace-one":
        s, cf, pf = _mog_inputs(ev)
        return lambda d: (_mog(s, cf, pf, d), mpf(0))
    raise _cannot(f"{t} (sampling {q}) under {rel}")


def _mog_inputs(ev: Mapping[str, Any]) -> tuple[Fraction, list, list]:
    """(s, sensitivities, weights) of a mixture_of_gaussians node, exact; refused when malformed."""
    s = _num(ev, "standard_deviation")
    cs, ps = ev.get("sensitivities"), ev.get("sampling_probs")
    if not isinstance(cs, list) or not isinstance(ps, list) or len(cs) != len(ps) or not 0 < len(cs) <= 10**4:
        raise MalformedCertificate("mixture_of_gaussians needs equal-length lists sensitivities, sampling_probs")
    cf = [_num({f"event.sensitivities[{i}]": c}, f"event.sensitivities[{i}]") for i, c in enumerate(cs)]
    pf = [_num({f"event.sampling_probs[{i}]": p}, f"event.sampling_probs[{i}]") for i, p in enumerate(ps)]
    return s, cf, pf


def _wor(ev: Mapping[str, Any], rel: str):
    n, m = _int(ev, "source_dataset_size"), _int(ev, "sample_size")
    inner = ev.get("event", {})
    if not isinstance(inner, dict) or inner.get("type") not in ("gaussian", "laplace") or not 0 < m <= n:
        raise _cannot(f"sampled_without_replacement under {rel}")
    s = _num(inner, "noise_multiplier") / 2  # replace-one base pair: shift 2C
    if s <= 0:
        raise MalformedCertificate("noise_multiplier must be > 0")
    f = gauss_tails if inner["type"] == "gaussian" else laplace_tails
    g = Fraction(m, n)

    def pair(d: str, gamma: Fraction = g):
        return f(s, gamma, d), mpf(0)

    if rel in ("add-remove", "add", "remove") and m < n:
        return lambda d: pair(d)  # AFA Thm 11 (2)
    if rel == "replace-one":
        if m == n:
            return lambda d: pair("remove", Fraction(1))
        # AFA Prop 30 + Cor 32
        return lambda d: (max_curve_tails(pair("remove")[0], pair("add")[0]), mpf(0))
    raise _cannot(f"sampled_without_replacement ({m}/{n}) under {rel}")


class _Tree:
    """The flattened tree: PLD blocks (make, times), zCDP totals, and whether a
    non-private event occurs."""

    def __init__(self) -> None:
        self.blocks: list = []
        self.zcdp = [Fraction(0), Fraction(0)]
        self.has_zcdp = False
        self.others = False  # any PLD leaf that is not a plain Gaussian
        self.non_private = False
        self.upper_only = False  # a pair that bounds the mechanism from above only (WOR replace-one)
        self.wor_upper = 0  # such steps met in the walk (each one entry of the writer's why_upper_only)
        #: the theorem each step cites (certificate.prose.event_theorem), once each, in walk order
        self.theorems: list = []
        #: replace-one: (make, times) of the pairs one concrete dataset pair attains, or None
        self.realised: "list | None" = []
        self.wor_sizes: set = set()
        #: (kind, noise multiplier, sampling rate, times) per leaf whose Renyi cumulant this route
        #: encloses (plain or Poisson-sampled Gaussian, plain Laplace: :func:`rdp_delta_upper`);
        #: None once any other leaf occurs
        self.rdp: "list | None" = []
        #: (z, times, whole) per step that is a Gaussian of noise multiplier z at sampling rate 1, in walk
        #: order: plain or Poisson-sampled at rate 1 (whole False), or without replacement of the whole
        #: dataset under replace-one (whole True, the pair N(0, 1) vs N(2 / z, 1) of :func:`_wor`). One
        #: record read two ways: :attr:`gauss` (the zCDP sum) and :attr:`closed` (the closed form)
        self.rate_one: list = []
        #: False once a step occurs that is not a Gaussian at rate 1 (the closed form does not apply)
        self.all_rate_one = True
        #: (list's name, key) -> position of that step kind's entry (:meth:`add`)
        self._at: dict = {}

    def gaussian(self, z: "Fraction | None", times: int, whole: bool = False) -> None:
        """Record a step: a Gaussian at rate 1 of noise multiplier ``z`` (``whole``: the whole dataset
        without replacement under replace-one), or (None) any other step, which ends the closed form."""
        if z is None:
            self.all_rate_one = False
        else:
            self.rate_one.append((z, times, whole))

    @property
    def gauss(self) -> list:
        """(z, times) of the plain Gaussian leaves (plain or Poisson-sampled at rate 1), each exactly
        ((c/z)^2/2)-zCDP (Mironov 2017 Prop 7): the zCDP route's sum. The whole dataset without
        replacement is left out: it is a sampled step (it sets :attr:`others`), which that route refuses
        (so the two readings differ only on a tree the zCDP route never answers)."""
        return [(z, t) for z, t, whole in self.rate_one if not whole]

    @property
    def closed(self) -> "list | None":
        """(1 / z, times) per step that is a Gaussian at sampling rate 1, the pair N(0, 1) vs N(c / z, 1)
        (c = 2 under replace-one, else 1), the form of :func:`.pld.gaussian_bounds`; None once any other
        step occurs (:func:`_closed_bounds`)."""
        return [(1 / z, t) for z, t, _ in self.rate_one] if self.all_rate_one else None

    def cite(self, text: str) -> None:
        if text not in self.theorems:
            self.theorems.append(text)

    def add(self, what: str, key: Any, entry: tuple) -> None:
        """Append ``entry`` (its last item a count of steps) to the list ``what`` (blocks, realised, rdp),
        or add its count to the entry of the same ``key``: one step kind met again anywhere in the
        tree is one leaf repeated, since composition commutes (the product of the steps' pairs, AFA
        Thm 10, and the sum of their Renyi cumulants do not depend on the order), so the work is
        per distinct kind, as on the producer's side. ``key`` is the canonical JSON of the node that
        fixes the pair (the producer writes exact strings, so equal parameters give equal keys;
        another spelling of a number only stays apart, which costs time, never soundness)."""
        items = getattr(self, what)
        at = self._at.get((what, key))
        if at is None:
            self._at[(what, key)] = len(items)
            items.append(entry)
        else:
            items[at] = items[at][:-1] + (items[at][-1] + entry[-1],)


def _key(node: Any, q: Any = None) -> str:
    """The canonical text of a leaf node (and the Poisson rate around it): :meth:`_Tree.add`'s key."""
    return json.dumps([node, None if q is None else str(q)], sort_keys=True, ensure_ascii=True)


def _note_rdp(out: _Tree, ev: Any, q: Fraction, times: int) -> None:
    """Record a leaf for :func:`rdp_delta_upper`, or end that route for the tree."""
    t = ev.get("type") if isinstance(ev, dict) else None
    if out.rdp is not None and (t == "gaussian" or (t == "laplace" and q == 1)):
        z = _num(ev, "noise_multiplier")
        out.add("rdp", (t, z, q), (t, z, q, times))
    else:
        out.rdp = None


def _flat(event: Any, rel: str) -> _Tree:
    """The flattened tree of ``inputs.event``; more than 1e7 steps in total is refused, as the
    producer refuses it (its per-leaf check alone let 32 leaves of 1e7 steps through)."""
    tree = _Tree()
    _flatten(event, 1, rel, tree)
    total = sum(t for _, t in tree.blocks)
    if total > 10**7:
        raise MalformedCertificate(f"inputs.event: {total} steps in total; the producer supports at most 10000000")
    return tree


def _flatten(ev: Any, times: int, rel: str, out: _Tree, depth: int = 0) -> None:
    if depth > 64 or not isinstance(ev, dict):
        raise MalformedCertificate("inputs.event is not an event tree")
    t = ev.get("type")
    if times > 10**7:
        raise MalformedCertificate("more than 1e7 steps")
    if t == "no_op" or times == 0:
        return
    if t == "randomized_response":
        k, pr = _int(ev, "num_buckets"), _num(ev, "noise_parameter")
        if k < 1 or not 0 <= pr <= 1:
            raise MalformedCertificate("randomized_response needs num_buckets >= 1 and noise_parameter in [0, 1]")
        if k == 1:
            return  # one bucket: the output is constant, no privacy cost
    if t == "non_private":
        out.non_private = True
        out.gaussian(None, times)
    elif t == "self_composed":
        c = _int(ev, "count")
        if c < 0:
            raise MalformedCertificate("count must be >= 0")
        _flatten(ev.get("event"), times * c, rel, out, depth + 1)
    elif t == "composed":
        evs = ev.get("events")
        if not isinstance(evs, list):
            raise MalformedCertificate("composed needs a list of events")
        # equal events are one leaf repeated (composition commutes), as the producer groups them
        counts: dict = {}
        for e in evs:
            key = json.dumps(e, sort_keys=True, ensure_ascii=True)
            counts[key] = (counts[key][0], counts[key][1] + 1) if key in counts else (e, 1)
        for e, c in counts.values():
            _flatten(e, times * c, rel, out, depth + 1)
            if len(out.blocks) > EVENT_MAX_LEAVES:  # the work is per kind of step: bounded before it starts
                raise MalformedCertificate(f"inputs.event: more than {EVENT_MAX_LEAVES} distinct kinds of step (the "
                                           "producer's cap: each is discretised and composed on its own)")
    elif t == "zcdp":
        out.rdp = None
        rho, xi = _num(ev, "rho"), _num(ev, "xi")
        if rho < 0 or xi < 0:
            raise MalformedCertificate("zcdp needs rho, xi >= 0")
        out.has_zcdp = True
        out.gaussian(None, times)
        out.zcdp[0] += times * rho
        out.zcdp[1] += times * xi
    elif t == "poisson_sampled":
        q = _num(ev, "sampling_probability")
        if not 0 <= q <= 1:
            raise MalformedCertificate("sampling_probability must be in [0, 1]")
        inner = ev.get("event", {})
        if q == 0 or (isinstance(inner, dict) and inner.get("type") == "no_op"):
            return
        if isinstance(inner, dict) and inner.get("type") == "non_private":
            out.non_private = True
            out.gaussian(None, times)
            return
        make = _leaf(inner if isinstance(inner, dict) else {}, q, rel)
        out.add("blocks", _key(inner, q), (make, times))
        out.cite(event_theorem(str(inner.get("type")), rel, sampled=q != 1))
        _note_rdp(out, inner, q, times)
        _realise_whole(inner.get("type") if q == 1 and isinstance(inner, dict) else None, _key(inner, q), make,
                       times, out)
        if q == 1 and inner.get("type") == "gaussian":
            out.gaussian(_num(inner, "noise_multiplier"), times)
        else:
            out.others = True
            out.gaussian(None, times)
    elif t == "sampled_without_replacement":
        if _int(ev, "sample_size") == 0:
            return
        out.add("blocks", _key(ev), (_wor(ev, rel), times))
        whole = _int(ev, "sample_size") >= _int(ev, "source_dataset_size")
        out.cite(event_theorem(t, rel, inner=str(ev.get("event", {}).get("type")), whole=whole))
        out.others = True
        out.rdp = None
        inner = ev.get("event", {})
        # the whole dataset under replace-one: the base pair N(0, 1) vs N(2 / z, 1) (:func:`_wor`)
        out.gaussian(_num(inner, "noise_multiplier") if whole and rel == "replace-one"
                     and inner.get("type") == "gaussian" else None, times, whole=True)
        _realise_wor(ev, rel, times, out)
        if rel == "replace-one" and not whole:
            out.upper_only = True  # AFA Cor 32: tight for one step only
            out.wor_upper += 1
    else:
        make = _leaf(ev, Fraction(1), rel)
        out.add("blocks", _key(ev), (make, times))
        out.cite(event_theorem(str(t), rel))
        mog = _mog_inputs(ev) if t == "mixture_of_gaussians" else None
        reduced = _mog_as_gaussian(_mog_weights(*mog)) if mog is not None and _mog_valid(*mog) else None
        if reduced is not None:
            # law for law the Poisson-subsampled Gaussian (_mog): the closed form (at q = 1), the Renyi
            # tail and the zero-eps bound read it as that leaf, as the producer does since it gives such a
            # mixture the Poisson Gaussian's pair (a closed-form certificate at q = 1 was refused, ref54)
            z, q = reduced
            if out.rdp is not None:
                out.add("rdp", ("gaussian", z, q), ("gaussian", z, q, times))
            out.gaussian(z if q == 1 else None, times)
            out.others = out.others or q != 1
            return
        _note_rdp(out, ev, Fraction(1), times)
        _realise_whole(t, _key(ev), make, times, out)
        if t == "gaussian":
            out.gaussian(_num(ev, "noise_multiplier"), times)
        else:
            out.others = True
            out.gaussian(None, times)


def _cited(tree: _Tree, kind: str, rel: str, zero_zcdp: bool, realised_end: bool) -> "tuple[list, str | None]":
    """(``result.theorems``, ``why_upper_only`` or None) the writer words for this tree
    (dpverify.events.api, from the table in certificate.prose): nothing cited for a non-private
    tree, a zero zCDP total or no-op steps only (a constant answer); the zCDP conversion's theorem
    for a zCDP tree; else each step's theorem once, and for steps sampled without replacement
    under replace-one that sentence once (:func:`_cited_legacy`: once per step before), then where one dataset pair attains the lower end and the
    certificate's lower end is that pair's (``realised_end``: no result.upper_bound_only; writers
    before the realised pair reported [0, hi], upper_bound_only, without the clause), that."""
    if tree.non_private or (tree.has_zcdp and zero_zcdp) or not (tree.has_zcdp or tree.blocks):
        return [], None
    if tree.has_zcdp:
        return [ZCDP_THEOREMS["epsilon" if kind == "epsilon" else "delta"]], ZCDP_WHY
    if not tree.upper_only:
        return list(tree.theorems), None
    realised = realised_end and rel == "replace-one" and tree.realised is not None and len(tree.wor_sizes) <= 1
    return list(tree.theorems), "; ".join([WOR_UPPER_ONLY] + ([REALISED_LOWER] if realised else []))


def _cited_legacy(tree: _Tree, why: "str | None") -> "str | None":
    """The ``why_upper_only`` writers up to adv47 worded for ``why`` (:func:`_cited`): the sentence
    of steps without replacement once per such step. Still accepted (a certificate an older release
    wrote stays verifiable); the writer now names it once, as 21 such steps passed the schema's 2000
    characters (exit 4, adv47 L1)."""
    if why is None or not why.startswith(WOR_UPPER_ONLY) or tree.wor_upper <= 1:
        return why
    return "; ".join([WOR_UPPER_ONLY] * (tree.wor_upper - 1)) + "; " + why


def _check_cited(tree: _Tree, kind: str, rel: str, zero_zcdp: bool, result: Mapping[str, Any]) -> set:
    """Refuse (exit 1) a ``result.theorems`` or ``why_upper_only`` other than the writer's for this
    tree (:func:`_cited`); the fields re-derived. The list is compared as a set of distinct entries
    (its order is the writer's walk, which states nothing)."""
    want, why = _cited(tree, kind, rel, zero_zcdp, not result.get("upper_bound_only"))
    out = set()
    if "theorems" in result:
        got = result["theorems"]
        if not (isinstance(got, list) and all(isinstance(t, str) for t in got) and len(set(got)) == len(got)
                and set(got) == set(want)):
            extra = [t for t in got if t not in want] if isinstance(got, list) else []
            raise CertificateRejected(
                "result.theorems is not the list of theorems the steps of inputs.event cite under "
                f"{rel} (certificate.prose.event_theorem)"
                + (f": {str(extra[0])[:100]!r} is none of them" if extra else f": {len(want)} entries expected"))
        out.add("theorems")
    if "why_upper_only" in result:
        if result["why_upper_only"] not in (why, _cited_legacy(tree, why)):
            raise CertificateRejected(f"result.why_upper_only={str(result['why_upper_only'])[:80]!r} is not what the "
                                      f"writer states for this tree ({str(why)[:120]!r})")
        out.add("why_upper_only")
    return out


def _realise_wor(ev: Mapping[str, Any], rel: str, times: int, out: "_Tree") -> None:
    """Replace-one, m of n without replacement: the dataset pair x -> +e, x' and all others -e
    (linear loss) makes each step's laws the Poisson pair at rate m/n and noise z/2 after a known
    shift, in the remove (D, D') and add (D', D) orientation: a lower bound that is attained."""
    inner = ev.get("event", {})
    if out.realised is None or rel != "replace-one" or inner.get("type") not in ("gaussian", "laplace"):
        out.realised = None
        return
    n, m = _int(ev, "source_dataset_size"), _int(ev, "sample_size")
    out.wor_sizes.add(n)
    s = _num(inner, "noise_multiplier") / 2
    f = gauss_tails if inner["type"] == "gaussian" else laplace_tails
    g = Fraction(m, n)
    out.add("realised", _key(ev), ((lambda d: (f(s, g, d), mpf(0))), times))


def _realise_whole(t: Any, key: str, make: Any, times: int, out: "_Tree") -> None:
    """A Gaussian or Laplace step on the whole dataset: its (tight) replace-one pair ``make`` is
    attained by the same dataset pair; anything else leaves no realised lower end."""
    if out.realised is None:
        return
    if t in ("gaussian", "laplace"):
        out.add("realised", key, (make, times))
    else:
        out.realised = None


def _target_or_none(inputs: Mapping[str, Any], kind: str, target: mpf) -> "Fraction | None":
    try:
        return _exact_target(inputs, kind, target)
    except CouldNotReprove:
        return None


def _infinite_mass_exceeds(blocks: list, d: str, delta: Fraction) -> bool:
    """Whether the composed pair of direction ``d`` is proved to keep more than ``delta`` of
    P-mass at loss +inf, so that eps(delta) = +inf (no grid, no unit).

    delta(eps) = E_P[(1 - e^(eps - L))_+] + P(L = +inf) >= P(L = +inf) for every eps (AFA
    Lemma 37). Under the product of the steps' P's the composed loss is the sum of their
    independent losses (AFA Thm 10), none of which is -inf P-almost surely, so it is +inf
    exactly when one step's is: P(L = +inf) = 1 - prod_i (1 - a_i)^(T_i), a_i the exact
    rational ``IvTails.inf`` of a step (an (eps0, delta0) leaf: delta0; Poisson-sampled,
    "remove": q delta0). The product is rounded up (MPFR, 512 bits: above the producer's
    256, so what it proved is proved here too), the difference down, and compared with delta
    exactly. A step whose mass at +inf is not an exact rational stops the test (False: the
    grid route decides)."""
    A = arith(512)
    keep = mpfr(1)
    for make, t in blocks:
        a = make(d)[0].inf
        if not isinstance(a, (int, Fraction)):
            return False
        if a != 0:
            keep = A.up.mul(keep, A.up.pow(A.q(1 - Fraction(a))[1], t))
    return to_fraction(A.dn.sub(mpfr(1), keep)) > delta


def _bounds(inputs: Mapping[str, Any], kind: str, target: mpf, scale: mpf, hint: mpf, m: int = 8,
            sides: str = "both", direction: "str | None" = None) -> tuple[mpf, mpf]:
    rel = inputs.get("neighboring")
    if not isinstance(rel, str) or rel not in _DIRS:
        raise not_a_relation(rel, _DIRS)
    tree = _flat(inputs.get("event"), rel)
    if tree.non_private:
        return (mpmath.inf, mpmath.inf) if kind == "eps" else (mpf(1), mpf(1))
    if tree.has_zcdp:
        if tree.others or rel == "replace-special":
            raise _cannot("a zCDP event composed with events other than plain Gaussians")
        rho, xi = tree.zcdp
        for z, t in tree.gauss:
            mu = Fraction(2 if rel == "replace-one" else 1) / z
            rho += t * mu * mu / 2  # the Gaussian is exactly (mu^2/2)-zCDP (Mironov 2017 Prop 7)
        lo, hi = _zcdp_bounds(rho, xi, kind, _exact_target(inputs, kind, target))
        # the conversion bounds the mechanism from above only (zCDP fixes the Renyi curve,
        # not the privacy profile): its lower end says nothing about the mechanism
        return mpf(0), hi
    events = tree.blocks
    if not events:
        return mpf(0), mpf(0)
    closed = _closed_bounds(tree, inputs, kind, target, [direction] if direction else _DIRS[rel])
    if closed is not None:
        return closed
    if not tree.upper_only and sum(t for _, t in events) == 1:
        # one Poisson-subsampled Gaussian step (plain, or a mixture that is one, :func:`_mog_as_gaussian`),
        # whose pair in each direction is :func:`.pld.gauss_tails`' (add, remove, replace-special: _leaf)
        one = poisson_step_bounds(tree.rdp, [direction] if direction else _DIRS[rel], kind, target,
                                  _target_or_none(inputs, kind, target))
        if one is not None:
            return one
    if kind == "eps" and not tree.upper_only:
        # the exact input behind the target, else the target's own value (the screen's delta')
        D = _target_or_none(inputs, kind, target)
        D = mpf_to_fraction(target) if D is None else D
        if any(_infinite_mass_exceeds(events, d, D) for d in ([direction] if direction else _DIRS[rel])):
            return mpmath.inf, mpmath.inf
    total = sum(t for _, t in events)
    # as pld._bounds: where the lower pair is tilted (T >= TILT_Q_MIN_STEPS, or a large eps at few steps,
    # pld._tilt_hint) its Q-masses carry no e^eps, so the unit is sized for one step's losses, and the
    # tilted re-derivation is priced as the untilted one (adv52 M1: a T = 10^7 tree sized its unit for
    # eps 1014, about 1544 bits, which _untilt_q widened to 3000: 130 CPU s and 4.4 GB, where its
    # pld.epsilon twin takes 13 s). An upper-only tree's realised lower pair is composed untilted
    # (:func:`_realised_lower`) in this unit: below 2^20 steps it keeps the untilted one
    tilt = _tilt_hint(events, [direction] if direction else _DIRS[rel], scale, hint, m, few=not tree.upper_only)
    K, tau, budget = _units(scale, hint if tilt is None else tilt, total)
    price_bits = _units(scale, hint, total)[0] - K if tilt is not None else 0
    exact = _target_or_none(inputs, kind, target) if kind == "delta" else None  # at the target's precision
    # an upper-only pair's own lower side bounds the pair, not the mechanism, and is replaced by the
    # realised one below: composing it would double the products for a number that is thrown away
    main = sides if not tree.upper_only else {"both": "upper", "upper": "upper"}.get(sides)
    with mpmath.workprec(max(mpmath.mp.prec, K + 64)):
        los, his = [], []
        for d in ([direction] if direction else _DIRS[rel]) if main is not None else []:
            # bounded losses: delta = 0 exactly past the end (direction_bounds); a loss range beyond
            # the memory budget fails closed before the work
            lo, hi = direction_bounds(events, d, kind, target, exact, K, tau, budget, m, main, _knot_cap(events),
                                      price_bits=price_bits, tilt=tilt is not None)
            los.append(lo)
            his.append(hi)
        # the mechanism's value is only bounded above by a non-tight pair (the producer reports [0, hi]
        # or, where one concrete dataset pair attains a lower curve, [its lower end, hi])
        if tree.upper_only:
            return (_realised_lower(tree, rel, kind, target, K, tau, budget, m, sides),
                    max(his) if his else mpmath.inf)
        return max(los), max(his)


def _closed_bounds(tree: _Tree, inputs: Mapping[str, Any], kind: str, target: mpf,
                   dirs: list) -> "tuple[mpf, mpf] | None":
    """[lo, hi] of eps(delta) or delta(eps), the maximum over ``dirs``, of a tree whose every step is a
    Gaussian at sampling rate 1 (:attr:`_Tree.closed`), in closed form; None for any other tree, or
    where the closed form steps aside (the grid route then answers as before).

    Each such step's pair is N(0, 1) vs N(mu_i, 1), mu_i = 1/z under add, remove and replace-special
    (:func:`_leaf`), 2/z under replace-one (:func:`_leaf`, :func:`_wor` on the whole dataset); the
    composition of the steps' pairs (AFA Thm 10) is the product of shifted N(0, I), one Gaussian pair
    of shift mu, mu^2 = sum_i T_i mu_i^2, after a rotation (GDPT Sec 1): :func:`.pld.gaussian_bounds`,
    the one copy of the closed form (directed rounding). Its pairs are tight (no upper-only step
    occurs in such a tree), so both ends bound the mechanism. A grid cannot resolve these at large T
    (10^6 steps at sigma 1000, delta(1) to 4 digits: exit 3 after 62 CPU s); this takes milliseconds."""
    if not tree.closed or tree.upper_only:
        return None
    exact = _target_or_none(inputs, kind, target)
    ends = []
    for d in dirs:
        e = gaussian_bounds(tree.closed, d, kind, target, exact)
        if e is None:
            return None  # not narrow in this direction (an underflowing delta): the grid route decides
        ends.append(e)
    return max(e[0] for e in ends), max(e[1] for e in ends)


def _realised_lower(tree: "_Tree", rel: str, kind: str, target: mpf, K: int, tau: mpf, budget: int, m: int,
                    sides: str) -> mpf:
    if rel != "replace-one" or not tree.realised or len(tree.wor_sizes) > 1 or sides == "upper":
        return mpf(0)
    lows = []
    for d in ("remove", "add"):
        _, L = _compose(tree.realised, d, K, tau, budget, m, "lower", _knot_cap(tree.realised))
        lows.append(_eps_bounds(None, L, target, K, m)[0] if kind == "eps" else _delta_bounds(None, L, target, K, m)[0])
    return max(lows)


def _directions(inputs: Mapping[str, Any]) -> list:
    rel = inputs.get("neighboring")
    if not isinstance(rel, str) or rel not in _DIRS:
        raise not_a_relation(rel, _DIRS)
    return _DIRS[rel]


def _windows(inputs: Mapping[str, Any], eps: Fraction) -> dict:
    """:func:`.pld.window_grids` of an event tree whose steps go to the grid route (none for the trees
    :func:`_bounds` answers otherwise: non-private, zCDP)."""
    rel = inputs.get("neighboring")
    if not isinstance(rel, str) or rel not in _DIRS:
        return {}  # refused by _directions, naming the allowed relations
    tree = _flat(inputs.get("event"), rel)
    if tree.non_private or tree.has_zcdp or not tree.blocks:
        return {}
    return window_grids(tree.blocks, _DIRS[rel], eps)


_QUERIES = register_queries("events", _bounds, _directions, per_direction=False, windows=_windows)


def _check_nodes(ev: Any, path: str, depth: int = 0) -> None:
    """Every node has exactly the fields its type defines (the producer's strict reader
    refuses others: a ``count`` on a Gaussian, ``steps`` or ``sensitivity`` where the
    type has none would be ignored here and mean something to a reader)."""
    if depth > 64 or not isinstance(ev, dict):
        raise MalformedCertificate(f"{path} is not an event node")
    t = ev.get("type")
    if not isinstance(t, str) or t not in EVENT_FIELDS:  # a list is unhashable: a TypeError was exit 3
        raise MalformedCertificate(f"{path}.type={str(t)[:40]!r}: allowed: {', '.join(EVENT_FIELDS)}")
    fields = EVENT_FIELDS[t]
    extra = sorted(set(ev) - set(fields) - {"type"})
    if extra:
        raise MalformedCertificate(f"{path}.{extra[0]}: unknown key for type {t!r} (allowed: "
                                   f"{', '.join(['type', *fields]) })")
    missing = sorted(set(fields) - set(ev))
    if missing:
        raise MalformedCertificate(f"{path}.{missing[0]}: missing for type {t!r}")
    for k, kind in fields.items():
        if kind == "event":
            _check_nodes(ev[k], f"{path}.{k}", depth + 1)
        elif kind == "events":
            if not isinstance(ev[k], list):
                raise MalformedCertificate(f"{path}.{k} must be a list of events")
            for i, e in enumerate(ev[k]):
                _check_nodes(e, f"{path}.{k}[{i}]", depth + 1)


#: the scales of the coarse passes of :func:`screen_delta` (the unit resolves about 1e-10 of each):
#: a rung 10^-30 below the last, down to the PLD route's floor 10^-300, on its coarsest grid
_RUNG, _RUNGS, _COARSE_M = mpf(10) ** -30, 11, 8
#: a rung's unit resolves about this fraction of its scale (its lower end is 0 below it)
_RESOLVES = mpf(10) ** -10


def screen_delta(bounds: Callable, inputs: Mapping[str, Any], key: str, recorded: Any,
                 upper: "mpf | None" = None, where: str = "result.enclosure") -> "Recheck | None":
    """A coarse independent enclosure of delta at ``inputs[key]`` that settles the recorded
    enclosure (disjoint from it, or inside it), or None when the search must refine.

    The PLD route sizes its unit from the recorded upper end (a hint): a forged [0, 0] makes it
    resolve 1e-300, ten times the bits and several times the knots of the true scale (33-40 s
    instead of 1-4 s). So delta is first enclosed on the grid 2^-8 at scales this route chooses,
    1, 1e-30, ..., each an enclosure of the same delta (``bounds`` is the route's one-grid
    derivation), stopping at the first that settles the recorded one, whose lower end is above
    0 (the truth is then of that order), or whose scale reaches the recorded upper end's; after
    that the recorded upper end is at most 30 decades below the truth's scale, so the refinement
    costs what a genuine certificate of the same delta costs. With ``upper``, a proved upper
    bound of delta (:func:`rdp_delta_upper`), the rungs after the first whose unit cannot resolve
    a delta that small are skipped (a genuine delta of 1.5e-201 walked six rungs, 11 s, to find
    its scale): a skip only moves where the walk looks, every enclosure it uses is proved. ``where``:
    the recorded enclosure's path, named in a refusal."""
    if not isinstance(recorded, dict):
        return None
    rec_lo, rec_hi = enclosure_of(recorded, where, 40)
    with mpmath.workdps(40):
        E = fraction_to_mpf(exact_input(inputs, key))
        for k in range(_RUNGS):
            scale = _RUNG ** k
            if k > 0 and upper is not None and scale * _RESOLVES > upper:
                # this rung's lower end would be 0 (the truth is at most ``upper``): where the walk
                # would stop after it, the search starts now; a comparison that only chooses
                if rec_hi >= scale * _RUNG:
                    return None
                continue
            lo, hi = bounds(inputs, "delta", E, scale, E, _COARSE_M, "both")
            if hi < rec_lo or lo > rec_hi or (rec_lo <= lo and hi <= rec_hi):
                return Recheck(lo=lo, hi=hi, dps=40)
            if lo > 0 or rec_hi >= scale * _RUNG:
                return None
    return None


#: the recorded upper end of a claim at or above which :func:`screen_delta` is skipped. Not the second
#: rung's 1e-30: a claim forged to [1e-29, 2e-29] with the hint 2^-15 then handed the search a unit
#: sized from 2e-29 and a start at 2^-11, 39-41 CPU s to refuse where the screen's first rung (the
#: 2^-8 grid at scale 1) refuses it in about 1 s (ref51b MEDIUM-1); from 1e-10 such a forgery costs
#: about 15 s, and genuine claims near delta = 1e-8 (the events-claim fixture) still skip it
_CLAIM_SKIP_SCALE = mpf(10) ** -10


def _claim_scaled(kind: str, recorded: Any) -> bool:
    """Whether :func:`screen_delta` can be skipped: a claim (the screen never accepts one: its verdict
    needs the search) whose recorded upper end is at least :data:`_CLAIM_SKIP_SCALE`. There the
    walk computes only its first rung and stops whatever it finds, so all it could do is refuse a
    disjoint enclosure early; the search refuses it as well (disjoint is refused by the acceptance
    rule whichever enclosure shows it), on a unit sized from that upper end, at most about 100 bits
    finer than the first rung's (a forged [0, 0], the screen's reason, still walks the rungs). On
    the events-claim fixture the skipped rung was 4 grids at 2^-8, about a tenth of the first re-check."""
    if kind != "claim" or not isinstance(recorded, dict):
        return False
    try:
        return enclosure_of(recorded, "result.enclosure", 40)[1] >= _CLAIM_SKIP_SCALE
    except (MalformedCertificate, CertificateRejected):
        return False  # the screen names it


#: relations whose pairs the cumulants of :func:`rdp_delta_upper` describe (the add / remove pairs)
_RDP_RELATIONS = ("add-remove", "add", "remove")


def rdp_delta_upper(event: Any, rel: str, eps: Fraction) -> "mpf | None":
    """An upper bound of delta(eps), the maximum over the relation's directions, from the Renyi
    cumulants of the leaves, or None where a leaf has none here (anything but plain or
    Poisson-sampled Gaussians and plain Laplace steps, or a relation other than add / remove).

    Per direction d and integer order a >= 2: K_d(a) = log E_Q[(dP/dQ)^a] = (a - 1) D_a(P || Q)
    adds over the composed steps (Mironov 2017 Prop 1), and delta_d(eps) = H_{e^eps}(P || Q) <=
    zeta_a e^(K_d(a) - (a - 1) eps), zeta_a = (1/a)(1 - 1/a)^(a - 1) (Balle et al. 2020 Thm 21;
    :func:`.rdp._balle_delta_exponent`). Each leaf's K (the one copy in :mod:`.rdp`): the
    Gaussian's a (a - 1) / (2 z^2) (Mironov 2017 Prop 7, mu = 1/z under add / remove), Laplace
    by its closed form (:func:`.rdp._laplace_cgf`, lambda = 1/b), the Poisson-subsampled
    Gaussian's remove pair (P the mixture, Q = N(0, z^2)) by the binomial sum of Mironov, Talwar,
    Zhang 2019 Sec 3.2 (:func:`.rdp._ssg_integer`), its add pair by its loss bound: L <=
    -log(1 - q) P-almost surely (AFA Thm 11 (1)), so E_P[e^((a-1) L)] <= (1 - q)^-(a-1).
    Directed rounding throughout; the order is a float proposal and every order proves a bound.
    Far in the tail (delta below 1e-300, where the PLD route must resolve the recorded end) it
    answers in milliseconds."""
    tree = _flat(event, rel)
    return None if tree.non_private or tree.has_zcdp else leaves_delta_upper(tree.rdp, rel, eps)


def leaves_delta_upper(leaves: "list | None", rel: str, eps: Fraction) -> "mpf | None":
    """:func:`rdp_delta_upper` of the leaves (kind, noise multiplier, sampling rate, times) of
    :attr:`_Tree.rdp` (``kind`` "gaussian", or "laplace" at rate 1), or None.

    The add pair of a Poisson-subsampled Gaussian (P = N(0, z^2), Q the mixture) also has
    K(a) <= q (a - 1)(1 + q (a - 1)) / (2 z^2), the smaller of it and the loss bound counts: with
    W = e^((2x - 1) / (2 z^2)), 1 - q + q W >= W^q (weighted AM-GM), so E_P[(dP/dQ)^(a-1)] <=
    E[W^(-q (a-1))] = e^((q (a-1) + q^2 (a-1)^2) / (2 z^2)) for x ~ N(0, z^2). At a huge z the loss
    bound alone gave no bound below 1 for eps under T (-log(1 - q))."""
    from .rdp import _balle_delta_exponent, _laplace_cgf, _ssg_integer
    from .tail_plan import propose_order

    if rel not in _RDP_RELATIONS or not leaves:
        return None
    A = arith(96)

    def exponent(d: str, a: int) -> Iv:
        f = A.q(0)
        for t, z, q, times in leaves:
            if t == "laplace":
                k = _laplace_cgf(A, Fraction(a), 1 / z)
            elif q == 1:
                k = A.q(Fraction(a * a - a) / (2 * z * z))
            elif d == "remove":
                k = _ssg_integer(A, a, z, q)
            else:
                loss = A.mul(A.q(a - 1), A.neg(A.log(A.q(1 - q))))
                lam = (a - 1) * q
                amgm = A.q(lam * (1 + lam) / (2 * z * z))
                k = amgm if amgm[1] <= loss[1] else loss  # both upper bounds of K(a): the smaller
            f = A.add(f, A.mul(A.q(times), k))
        return A.add(_balle_delta_exponent(A, Fraction(a), eps, eps), A.sub(f, A.q((a - 1) * eps)))

    worst = mpfr("-inf")
    inverse = [(t, 1 / Fraction(z), q, times) for t, z, q, times in leaves]  # the proposal's scales

    def laplace(a: int, lam: Fraction) -> float:
        # the upper end of the proved cumulant, in binary64: proposes only (never overflows)
        return float(_laplace_cgf(A, Fraction(a), lam)[1])

    for d in _DIRS[rel]:
        a = propose_order(inverse, d, eps, laplace)
        worst = max(worst, exponent(d, a)[1])  # any order proves a bound: the proposal's is evaluated
    if not gmpy2.is_finite(worst):
        return None
    # A larger number is still an upper bound: one below 2^-_TAIL_FLOOR_BITS is raised to it. The
    # bound at sigma 1e20, eps 1e16 is e^-(7e8), which MPFR rounds up to 2^-(2^30): no exact
    # comparison can hold that (mpf_to_fraction stops at 2^-(10^6)), and the producer never records
    # below 2^-12000 anyway.
    return mpfr_to_mpf(max(A.up.exp(worst), _TAIL_FLOOR))


#: the least upper bound :func:`leaves_delta_upper` answers (about 1e-157826); see there
_TAIL_FLOOR_BITS = 2**19
_TAIL_FLOOR = mpfr(2) ** -_TAIL_FLOOR_BITS


def _settle_delta(U: "mpf | None", kind: str, inputs: Mapping[str, Any], recorded: Any,
                  where: str = "result.enclosure") -> "Recheck | None":
    """The recorded delta enclosure (of an events.delta or events.claim certificate) settled by
    the Renyi tail bound ``U`` alone (:func:`rdp_delta_upper`): the independent enclosure [0, U] lies
    inside a recorded [0, hi] with U <= hi, or below a recorded lower end (refused). A claim's
    verdict is "holds" when U <= delta. None when the bound does not settle it (the PLD route
    then decides). A forged [0, 1e-300] at claimed eps 199 kept the PLD route walking its unit
    down to 1e-300 for more than 150 s; the true delta there is below 1e-3000."""
    if U is None or not isinstance(recorded, dict):
        return None
    rec_lo, rec_hi = enclosure_of(recorded, where, 40)
    if not (U < rec_lo or (rec_lo <= 0 and U <= rec_hi)):
        return None
    verdict = None
    if kind == "claim":
        if not mpf_to_fraction(U) <= exact_input(inputs, "delta"):
            return None
        verdict = "holds"
    return Recheck(lo=mpf(0), hi=U, dps=40, verdict=verdict)


def tail_upper(leaves: "list | None", rel: str, eps: Fraction) -> "mpf | None":
    """An upper bound of delta(eps) of a schedule of ``leaves`` (:attr:`_Tree.rdp`'s form), or None:
    the smaller of the Renyi tail bound (:func:`leaves_delta_upper`) and, at eps >= 0, the
    total-variation bound of delta(0) (:func:`_tv_upper`), which bounds delta(eps) too (the curve does
    not increase), rounded up. The Renyi bound is the tighter far in the tail, the TV bound at a tiny
    sampling rate (a rate of 1e-400 puts delta near 1e-398, the Renyi bound at eps 0.1 near e^-409)."""
    upper = leaves_delta_upper(leaves, rel, eps)
    tv = _tv_upper(leaves, rel) if eps >= 0 else None
    if tv is not None:
        with mpmath.workprec(200):
            t = mpmath.fdiv(tv.numerator, tv.denominator, rounding="u")
        upper = t if upper is None or t < upper else upper
    return upper


def tail_settled(inputs: Mapping[str, Any], key: str, recorded: Any, kind: str = "delta",
                 tree: "_Tree | None" = None, where: str = "result.enclosure") -> "tuple[Recheck | None, mpf | None]":
    """The tail bound of delta at ``inputs[key]`` (:func:`tail_upper` of the event tree, ``tree`` when
    already flattened, or of a pld.* schedule) where the recorded upper end lies below the screen's
    first rung, and the enclosure it settles alone (:func:`_settle_delta`; ``kind`` "claim" also
    decides the verdict): (None, None) elsewhere. The bound is also the screen's skip
    (:func:`screen_delta`'s ``upper``). The one tail settling of every delta route: events.*,
    pld.delta / pld.claim and replace-one's add/remove and remove curves (``where``: the recorded
    enclosure's path, ``result.lower`` / ``result.upper`` for those curves)."""
    if not isinstance(recorded, dict) or not enclosure_of(recorded, where, 40)[1] < _RUNG:
        return None, None
    eps, rel = exact_input(inputs, key), str(inputs.get("neighboring"))
    if tree is None and "event" in inputs:
        tree = _flat(inputs["event"], rel)
    if tree is not None:
        leaves = None if tree.non_private or tree.has_zcdp else tree.rdp
    else:
        leaves = _pld_leaves(inputs)
    upper = tail_upper(leaves, rel, eps)
    return _settle_delta(upper, kind, inputs, recorded, where), upper


#: below this delta an epsilon certificate is first screened at it (:func:`_screen_eps`)
_SCREEN_DELTA = Fraction(1, 10**10)


def _screen_eps(inputs: Mapping[str, Any], recorded: dict) -> None:
    """Refuse at once an epsilon enclosure whose upper end is below a lower bound of eps(delta)
    proved at delta' = 1e-10 > delta on the grid 2^-8: eps(.) does not increase, so
    eps(delta) >= eps(delta'). The route's unit is sized by delta itself (an input): at 1e-100
    a re-derivation costs 30 s, so a certificate whose delta was forged small beside the
    original enclosure is answered from the cheap bound instead (genuine ones pass on)."""
    D = exact_input(inputs, "delta")
    if not 0 < D < _SCREEN_DELTA:
        return
    with mpmath.workdps(40):
        d1 = fraction_to_mpf(_SCREEN_DELTA)
        lo, _ = _bounds(inputs, "eps", d1, d1, mpf(0), 8, "lower")
    if lo > enclosure_of(recorded, "result.enclosure", 40)[1]:
        check_enclosure(recorded, Recheck(lo=lo, hi=mpmath.inf, dps=40))  # disjoint: refused


def _with_fields(inner: Any, kind: str = "") -> Any:
    """An events.* re-checker that also refuses inputs the producer would refuse and
    re-proves the certified detail fields: ``neighboring`` and ``sensitivity_convention``
    echo the inputs, ``upper_bound_only`` is re-derived from the tree, ``rho`` / ``xi``
    are the exact zCDP totals (composition adds them, BS16 Lemma 2.3)."""

    def recheck(inputs: Mapping[str, Any], result: Mapping[str, Any]) -> Recheck:
        if inputs.get("sensitivity_convention") != SENSITIVITY_CONVENTION:
            raise CertificateRejected("inputs.sensitivity_convention is not the convention the event pairs are "
                                      "built with (it defines what a noise multiplier means)")
        _check_nodes(inputs.get("event"), "inputs.event")
        rel = inputs.get("neighboring")
        _directions(inputs)
        tree = _flat(inputs.get("event"), rel)
        proved = set()
        for key, want in (("neighboring", rel), ("sensitivity_convention", SENSITIVITY_CONVENTION)):
            if key in result:
                if result[key] != want:
                    raise CertificateRejected(f"result.{key} differs from inputs.{key}")
                proved.add(key)
        upper_only = tree.upper_only or (tree.has_zcdp and not tree.non_private)
        if "upper_bound_only" in result:
            if bool(result["upper_bound_only"]) != upper_only:
                raise CertificateRejected(f"result.upper_bound_only={result['upper_bound_only']!r}, but the "
                                          f"tree's pairs are {'not ' if not upper_only else ''}upper bounds only")
            proved.add("upper_bound_only")
        rho, xi = tree.zcdp
        if tree.has_zcdp:
            for z, t in tree.gauss:
                mu = Fraction(2 if rel == "replace-one" else 1) / z
                rho += t * mu * mu / 2
            for key, want in (("rho", rho), ("xi", xi)):
                if key in result:
                    got = _num(result, key)
                    if got != want:
                        raise CertificateRejected(f"result.{key}={str(result[key])[:40]} is not the exact zCDP "
                                                  f"total {want}")
                    proved.add(key)
        g = result.get("grid")
        if isinstance(g, str) and g.startswith("2^-") and is_digits(g[3:]) and len(g) <= 6:
            # a hint: it chooses where the search starts (four halvings coarser), never what is proved.
            # An upper-only pair's upper end is re-proved at about the producer's grid: its gap to the
            # realised lower end is the theorems' gap, not a discretisation error, so the search's gap
            # model would step one halving per round from four coarser (fixed batches, 1000 steps:
            # 8.8 s instead of 6.8 s)
            m = int(g[3:]) + (4 if tree.upper_only else 0)
            result = dict(result, grid=f"2^-{min(m, _MAX_GRID_HINT)}")
        if kind == "epsilon" and isinstance(result.get("enclosure"), dict):
            _screen_eps(inputs, result["enclosure"])
        # eps in [0, EVENT_MAX_EPS] (the work grows with eps; a negative one was re-derived at |eps|:
        # revfast S0): certificate.ranges, before any route
        key = {"delta": "eps", "claim": "claimed_eps"}.get(kind)
        # the words after the bounds (an out-of-bounds certificate is exit 2 whatever it cites)
        proved |= _check_cited(tree, kind, rel, rho == xi == 0, result)
        if kind == "epsilon" and not (tree.non_private or tree.has_zcdp) \
                and _zero_eps_settled(lambda: tree.rdp, inputs, result):
            # a recorded [0, 0] as pld.epsilon settles it (adv44 G1's huge sigma as an event tree)
            return Recheck(lo=mpf(0), hi=mpf(0), dps=40, proved=frozenset(proved))
        # the tail bound only where the recorded end lies below the screen's first rung (it is loose at
        # moderate delta: 0.05 against a true 5.7e-7), so other certificates do not pay for it
        enc = result.get("enclosure")
        coarse, upper = tail_settled(inputs, key, enc, kind, tree) if key else (None, None)
        if coarse is not None:
            check_enclosure(result["enclosure"], coarse)  # inside, or refused here (disjoint)
            return Recheck(lo=coarse.lo, hi=coarse.hi, dps=coarse.dps, verdict=coarse.verdict,
                           proved=frozenset(proved))
        coarse = screen_delta(_bounds, inputs, key, result.get("enclosure"), upper) \
            if key and not _claim_scaled(kind, result.get("enclosure")) else None
        if coarse is not None and kind == "claim":
            # settled at the route's own scale: disjoint is refused here by the acceptance rule; an
            # enclosure already inside still needs the search for the claim's verdict
            check_enclosure(result["enclosure"], coarse)
            coarse = None
        re = coarse if coarse is not None else inner(inputs, result)
        return Recheck(value=re.value, err=re.err, dps=re.dps, verdict=re.verdict, lo=re.lo, hi=re.hi,
                       proved=frozenset(proved) | re.proved, details=re.details)

    recheck.__doc__ = inner.__doc__
    return recheck


for _name, _fn in zip(("epsilon", "delta", "claim"), _QUERIES):
    RECHECKERS[f"events.{_name}"] = _with_fields(_fn, _name)


def _pld_tail(inner: Any, kind: str) -> Any:
    """The pld.delta / pld.claim re-checker, first settled by the tail bound where the recorded
    upper end lies below 1e-30 (:func:`tail_settled`, as the events.* kinds are). A delta query at a
    huge noise multiplier (sigma 1e6: delta about e^-(10^11)) is answered [0, U] by the producer
    (``dpverify.pld.tail``); the grid route cannot resolve it at any unit. Other certificates go to
    ``inner`` unchanged."""

    def recheck(inputs: Mapping[str, Any], result: Mapping[str, Any]) -> Recheck:
        key = "eps" if kind == "delta" else "claimed_eps"
        _eps_input(inputs, key)  # >= 0 before either route (revfast S0)
        enc = result.get("enclosure")
        coarse, _ = tail_settled(inputs, key, enc, kind)
        if coarse is not None:
            check_enclosure(enc, coarse)  # inside, or refused here (disjoint)
            return coarse
        return inner(inputs, result)

    recheck.__doc__ = inner.__doc__
    return recheck


def _tv_upper(leaves: "list | None", rel: str) -> "Fraction | None":
    """An exact upper bound of delta(0) of a schedule of Gaussian leaves (kind, noise multiplier z,
    sampling rate q, times) under add, remove or add-remove, or None.

    delta(0) = sup_S P(S) - Q(S) is the total variation distance, which is subadditive over a
    composition: TV(P_1 x ... x P_T, Q_1 x ... x Q_T) <= sum_i TV(P_i, Q_i) (change one coordinate
    at a time). A Poisson-subsampled Gaussian step's pair in either direction differs by
    q (N(1, z^2) - N(0, z^2)) (the other component is shared), so its TV is
    q (2 Phi(1 / (2 z)) - 1) = 2 q int_0^{1/(2z)} phi <= q phi(0) / z < (2/5) q / z
    (phi(0) = 1 / sqrt(2 pi) = 0.3989...)."""
    if leaves is None or rel not in ("add-remove", "add", "remove"):
        return None
    total = Fraction(0)
    for t, z, q, times in leaves:
        if t != "gaussian" or z <= 0:
            return None
        total += times * q * Fraction(2, 5) / z
    return total


def _zero_eps_settled(leaves: Callable[[], "list | None"], inputs: Mapping[str, Any], result: Mapping[str, Any]) -> bool:
    """Is a recorded eps(delta) = [0, 0] proved by the total-variation bound (:func:`_tv_upper` of
    the ``leaves``, read only for such a certificate) at most delta? Format 1's per-direction results
    are not settled here."""
    enc = result.get("enclosure")
    if not (isinstance(enc, dict) and "directions" not in result
            and enclosure_of(enc, "result.enclosure", 40) == (0, 0)):
        return False
    upper = _tv_upper(leaves(), str(inputs.get("neighboring")))
    return upper is not None and upper <= exact_input(inputs, "delta")


def _pld_eps_zero(inner: Any) -> Any:
    """The pld.epsilon re-checker, first settled where the recorded enclosure is [0, 0]: eps(delta)
    = 0 exactly when delta(0) <= delta (eps(delta) is the least eps >= 0 whose delta(eps) is at most
    delta), proved by the total-variation bound :func:`_tv_upper`. The producer answers so at a huge
    noise multiplier (adv44 G1: sigma 1e50..1e100, delta(0) about 1e-102), where the grid route proves
    only an upper end of one cell (2^-m) and answered exit 3, and the Renyi tail bound at eps = 0 is
    about 1e-4. Format 1's per-direction results, and anything the bound does not settle, go to
    ``inner``, which refuses a false [0, 0]."""

    def recheck(inputs: Mapping[str, Any], result: Mapping[str, Any]) -> Recheck:
        if _zero_eps_settled(lambda: _pld_leaves(inputs), inputs, result):
            return Recheck(lo=mpf(0), hi=mpf(0), dps=40)
        return inner(inputs, result)

    recheck.__doc__ = inner.__doc__
    return recheck


RECHECKERS["pld.delta"] = _pld_tail(RECHECKERS["pld.delta"], "delta")
RECHECKERS["pld.claim"] = _pld_tail(RECHECKERS["pld.claim"], "claim")
RECHECKERS["pld.epsilon"] = _pld_eps_zero(RECHECKERS["pld.epsilon"])


def recorded_grid_price(inputs: Mapping[str, Any], quantity: str, result: Mapping[str, Any]) -> "tuple[int, int] | None":
    """(work, m): what the PLD re-check's meter (:class:`.pld._Meter`) charges this events.* query for
    its recorded grid 2^-m alone, in the direction that costs most, both sides, as
    :func:`.pld.recorded_grid_price` prices a pld.* query (the same count: per step law, knots x
    (K + m + 32) bits x the bit length of the total step count, x 3 for the upper and the two lower
    sides, and from 2^20 steps the tilted lower pair's exact products, :func:`.pld.grid_work`; K and tau
    from :func:`.pld._units` as :func:`_bounds` forms them). A grid on which one leaf
    spans :func:`_knot_cap` knots or more raises :class:`CouldNotReprove` with the re-check's own words
    (:func:`.pld._discretise`: the events route stops there before the work, whatever the meter; adv50:
    sigma 1.1, q 8/1875, T = 14063 at --digits 7, 2^-18). None where the re-check discretises nothing
    (no recorded grid; a non-private, zCDP or closed-form tree). Counting only, for the producer
    (:func:`dpverify.certificate.writer.unverifiable`): a few tail evaluations per leaf, no masses."""
    m = grid_hint(result)
    if m is None or quantity not in ("events.epsilon", "events.delta", "events.claim"):
        return None
    rel = inputs.get("neighboring")
    if not isinstance(rel, str) or rel not in _DIRS:
        return None
    with mpmath.workdps(_PRICE_DPS):
        tree = _flat(inputs.get("event"), rel)
        blocks = tree.blocks
        if tree.non_private or tree.has_zcdp or not blocks or (tree.closed and not tree.upper_only):
            return None
        total = sum(t for _, t in blocks)
        exact = None  # a delta query's exact eps: the bounded-loss floors (:func:`.pld.direction_bounds`)
        if quantity == "events.epsilon":
            scale = _eps_scale(result, _delta_input(inputs)[0])
            hint = _recorded_hi(result, mpf(0))
            eps_hint = hint if mpmath.isfinite(hint) else mpf(0)
        else:
            exact = _eps_input(inputs, "claimed_eps" if quantity == "events.claim" else "eps")
            cap = fraction_to_mpf(exact_input(inputs, "delta")) if quantity == "events.claim" else mpf(1)
            scale, eps_hint = _delta_scale(result, cap), fraction_to_mpf(exact)
        K, tau, _ = _units(scale, eps_hint, total)
        weight, knot_cap = total.bit_length(), _knot_cap(blocks)
        # an upper-only tree composes no lower pair of its own (:func:`_bounds`)
        tilted = None if tree.upper_only else tilted_lower(scale, eps_hint, [t for _, t in blocks])
        worst = 0
        for d in _DIRS[rel]:
            # as direction_bounds and _compose: at or past a bounded loss's end delta is 0 (no grid),
            # below it each step's knots start at its floor (near a pure-DP eps: 2^-46, a few knots)
            sup = Support.of(blocks, d) if exact is not None else None
            if sup is not None and exact >= sup.end:
                continue
            floors = sup.floors(exact) if sup is not None else [None] * len(blocks)
            laws = [(make(d)[0], None if c is None else math.floor(c * 2**m) - 1) for (make, _t), c in zip(blocks, floors)]
            worst = max(worst, grid_work(laws, K, tau, m, weight, knot_cap, tilted))
        return worst, m
