"""Second route for shuffle-and-iterate DP-SGD brackets (``shuffle.epsilon``,
``shuffle.delta``, ``shuffle.claim``), on MPFR (gmpy2, directed rounding) and GMP
integers; mpmath only proposes. Nothing from the arb side is imported.

Both ends are re-proved (the mathematics is stated in the producer's module,
``dpverify.sampling.shuffle``; this is a second implementation of it):

* upper end: the Gaussian pair with mu = Delta sqrt(E) / sigma (Delta = 2 under
  replace-one, else 1; no amplification, AFA Thm 10 per permutation, joint
  convexity over permutations): delta_mu(eps) = Phi(-eps/mu + mu/2) -
  e^eps Phi(-eps/mu - mu/2) (GDPT eq. 2) enclosed in MPFR directed rounding
  (:func:`.gdp.delta_mu_iv`) at a rational mu_+ >= mu (delta_mu increases in mu);
  for epsilon, a proposed eps (mpmath bisection, untrusted) is proved to lie above
  the root by delta_mu(eps) < delta (delta_mu decreases in eps);
* lower end: the max-of-batch-sums statistic of one epoch for a concrete dataset
  pair (every other record's gradient -1, their batch sums subtracted), x*'s batch
  shifted by a m under P and b m under Q, m = 1/sigma: P(M <= x) =
  Phi(x - a m) Phi(x)^(T-1), Q(M <= x) = Phi(x - b m) Phi(x)^(T-1) ((a, b) = (2, 0)
  under replace-one, (2, 1) under replace-special and fixed-layout add-remove;
  persistent shuffling: m sqrt(E), one epoch), cut at the recorded edges (a hint: any
  edges give a lower bound), grouped by this route's own class indices, composed E
  times (dynamic) by Kronecker substitution into GMP products with P rounded down and
  Q rounded up to units 2^-128 after each product; for a class set J,
  delta(eps) >= (A_J - e^eps B_J) 2^-128. The recorded lower end of epsilon is
  accepted only when some prefix J (classes by decreasing P/Q) gives
  A_J - e^lo B_J > delta 2^128, i.e. delta(lo) > delta. The cell masses are
  differences of those CDFs enclosed in MPFR directed rounding (m as a rational
  bracket), P rounded down and Q up to the units; the comparison with e^lo (rounded
  up) is exact in rationals. Certificates of earlier releases recorded a lower end of
  the pair "every other record 0" ((a, b) = (1, 0) outside replace-one), also a
  concrete pair of these relations: when the first pair does not prove a recorded
  end, that pair is tried (:func:`_pairs`).
"""

from __future__ import annotations

import math
from functools import cmp_to_key, lru_cache
from fractions import Fraction
from typing import Any, Mapping

import mpmath
from gmpy2 import is_finite as mpfr_is_finite
from gmpy2 import mpfr
from mpmath import mpf

from ..certificate.format import SHUFFLE_MAX_MU, shuffle_mu_beyond_cap
from ..errors import CertificateRejected, CouldNotReprove, MalformedCertificate
from .bins import _count
from .bins import _power as _packed_power
from .core import Iv, arith, ceil_int, floor_int, mpfr_to_mpf, mpf_to_fraction
from .gdp import delta_mu_iv, exact_input, side, fraction_to_mpf
from .decimals import exact_decimal
from .verify import Recheck, parse_bound, register, root_enclosure

_K = 128
_DPS = 60
#: bits of the directed-rounding cell masses: far below the units 2^-128 even after the
#: power Phi^T (relative error about T 2^-_BITS)
_BITS = 192
_MAX_CELLS = 4096
_MAX_CLASSES = 1 << 19
_SCHEMES = {"shuffle": False, "shuffle-persistent": True}
_RELATIONS = ("add-remove", "add", "remove", "replace-one", "replace-special")


def _run(inputs: Mapping[str, Any]) -> dict[str, Any]:
    sig = exact_input(inputs, "noise_multiplier")
    if sig <= 0:
        raise MalformedCertificate("inputs.noise_multiplier must be > 0")
    n = _count(inputs, "dataset_size", 10**12)
    b = _count(inputs, "batch_size", n)
    E = _count(inputs, "epochs", 100_000)
    samp = inputs.get("sampling")
    if samp not in _SCHEMES:
        raise MalformedCertificate(f"inputs.sampling={samp!r} (allowed: {', '.join(_SCHEMES)})")
    rel = inputs.get("neighboring")
    if rel not in _RELATIONS:
        raise MalformedCertificate(f"inputs.neighboring={rel!r} (allowed: {', '.join(_RELATIONS)})")
    if rel in ("add-remove", "add", "remove") and n > 1 and b > 1 and (n - 1) % b == 0:
        raise CertificateRejected(f"{rel} with B dividing n - 1 changes the number of batches: no bracket "
                                  "covers it")
    Delta = 2 if rel == "replace-one" else 1
    if shuffle_mu_beyond_cap(Delta, E, sig):
        # the producer refuses this run before any work (its upper end is beyond both routes)
        raise MalformedCertificate(f"inputs.noise_multiplier: mu = Delta sqrt(E) / sigma exceeds the shuffled "
                                   f"bracket's cap {SHUFFLE_MAX_MU} (a smaller noise multiplier is refused)")
    return {"sig": sig, "n": n, "b": b, "E": E, "persistent": _SCHEMES[samp], "rel": rel,
            "T": -(-n // b), "Delta": Delta}


def _check_mu(r: Mapping[str, Any], result: Mapping[str, Any]) -> None:
    """The recorded ``result.mu`` = [lo, hi] must enclose mu = Delta sqrt(E) / sigma, decided
    exactly: lo^2 <= Delta^2 E / sigma^2 <= hi^2 in rationals (0 <= lo)."""
    rec = result.get("mu")
    if rec is None:
        return
    if not isinstance(rec, Mapping) or not {"lo", "hi"} <= set(rec):
        raise MalformedCertificate("result.mu must be an object with lo and hi")
    lo, hi = exact_decimal(rec["lo"], "result.mu.lo"), exact_decimal(rec["hi"], "result.mu.hi")
    mu2 = Fraction(r["Delta"] ** 2 * r["E"]) / r["sig"] ** 2
    if lo < 0 or lo > hi or not lo * lo <= mu2 <= hi * hi:
        raise CertificateRejected(f"result.mu = [{rec['lo']}, {rec['hi']}] does not enclose Delta sqrt(E) / sigma")


def _mu_bracket(r: Mapping[str, Any], persistent_only: bool = False) -> tuple[Fraction, Fraction]:
    """Rationals mu- <= mu <= mu+ for mu = Delta sqrt(E) / sigma (or Delta / sigma for
    the one-epoch pair of a non-persistent scheme when ``persistent_only``), from an
    integer square root: s = isqrt(E 4^k) gives s 2^-k <= sqrt(E) < (s + 1) 2^-k."""
    base = Fraction(r["Delta"]) / r["sig"]
    if persistent_only and not r["persistent"]:
        return base, base
    k = 200
    s = math.isqrt(r["E"] << (2 * k))
    if s * s == r["E"] << (2 * k):
        return base * Fraction(s, 1 << k), base * Fraction(s, 1 << k)
    return base * Fraction(s, 1 << k), base * Fraction(s + 1, 1 << k)


def _mu_gauss(r: Mapping[str, Any]) -> mpf:
    return r["Delta"] * mpmath.sqrt(r["E"]) / fraction_to_mpf(r["sig"])


def _delta_mu(mu: mpf, e: mpf) -> mpf:
    return mpmath.ncdf(-e / mu + mu / 2) - mpmath.exp(e) * mpmath.ncdf(-e / mu - mu / 2)


def _eps_upper(r: Mapping[str, Any], delta: mpf) -> mpf:
    """A point above the root of delta_mu(eps) = delta (bisection; delta_mu decreases)."""
    mu = _mu_gauss(r)
    lo, hi = mpf(-1), mpf(1)
    while _delta_mu(mu, lo) <= delta:
        lo *= 2
    while _delta_mu(mu, hi) > delta:
        hi *= 2
        if hi > 2**40:
            raise CouldNotReprove("the upper end's root is beyond 2^40")
    for _ in range(200):
        mid = (lo + hi) / 2
        if _delta_mu(mu, mid) > delta:
            lo = mid
        else:
            hi = mid
    return hi * (1 + mpf(10) ** -30) + mpf(10) ** -40


def _hints(result: Mapping[str, Any]) -> tuple[Fraction, Fraction, int, int]:
    h = result.get("shuffle_lower")
    if not isinstance(h, Mapping):
        raise MalformedCertificate("result.shuffle_lower is missing")
    try:
        a, s = Fraction(h["edge_from"]), Fraction(h["edge_step"])
        cells, grid = h["cells"], h["grid"]
    except (KeyError, ValueError, ZeroDivisionError, TypeError):
        raise MalformedCertificate("result.shuffle_lower: edge_from, edge_step (numbers), cells, grid") from None
    if not (isinstance(cells, int) and 2 <= cells <= _MAX_CELLS and isinstance(grid, int) and 0 <= grid <= 16
            and s > 0 and abs(a) < 10**6 and s < 10**6):
        raise MalformedCertificate(f"result.shuffle_lower out of range (cells 2..{_MAX_CELLS}, grid 0..16, "
                                   "edge_step > 0)")
    return a, s, cells, grid


def _pairs(rel: str) -> tuple[tuple[int, int], ...]:
    """The dataset pairs (a, b) whose lower end is accepted: x*'s batch shifted by a C under
    D and b C under D', every other batch by 0 (its known sum subtracted). Replace-one:
    others -1, x* +1 against -1: (2, 0). Add-remove in the fixed layout and
    replace-special: others -1, x* +1 against an empty slot (gradient 0): (2, 1), the
    producer's pair; and others 0, x* +1 against the empty slot: (1, 0), the pair that
    certificates of earlier releases recorded their lower end with. Both are concrete
    pairs of the relation, so a lower end proved by either one is a lower end."""
    return ((2, 0),) if rel == "replace-one" else ((2, 1), (1, 0))


def _cells(r: Mapping[str, Any], a: Fraction, s: Fraction, K: int,
           pair: tuple[int, int]) -> tuple[list[Iv], list[Iv]]:
    # both directions (add, remove) use the same masses, swapped: computed once
    return _cells_of(r["T"], pair, r["sig"], r["persistent"], r["E"], a, s, K)


@lru_cache(maxsize=4)
def _cells_of(T: int, pair: tuple[int, int], sig: Fraction, persistent: bool, E: int, a: Fraction, s: Fraction,
              K: int) -> tuple[list[Iv], list[Iv]]:
    """Enclosures of the K cell masses of P (M <= x: Phi(x - pa m) Phi(x)^(T-1)) and Q
    (Phi(x - pb m) Phi(x)^(T-1); Phi(x)^T when pb = 0), (pa, pb) = ``pair``, m = 1/sigma
    (persistent: sqrt(E)/sigma), between the edges a + i s, in MPFR directed rounding: Phi
    by :meth:`Arith.ncdf_abs` (absolute accuracy 2^-_BITS), the powers by MPFR's correctly
    rounded pow (Phi in [0, 1]: pow is increasing in it), m as its rational bracket
    (Phi(x - k m) decreasing in m for k >= 0); a cell mass is the difference of the
    enclosures."""
    A = arith(_BITS)
    m_lo, m_hi = _mu_bracket({"Delta": 1, "sig": sig, "persistent": persistent, "E": E}, persistent_only=True)
    one = (mpfr(1), mpfr(1))
    Fp: list[Iv] = [(mpfr(0), mpfr(0))]
    Fq: list[Iv] = [(mpfr(0), mpfr(0))]

    def shifted(x: Fraction, k: int) -> Iv:
        d = A.ncdf_abs((A.q(x - k * m_hi)[0], A.q(x - k * m_lo)[1]))
        return (max(d[0], mpfr(0)), min(d[1], mpfr(1)))

    pa, pb = pair
    for i in range(K - 1):
        x = a + i * s
        c = A.ncdf_abs(A.q(x))
        c = (max(c[0], mpfr(0)), min(c[1], mpfr(1)))
        rest = (A.dn.pow(c[0], T - 1), A.up.pow(c[1], T - 1))
        Fq.append((A.dn.pow(c[0], T), A.up.pow(c[1], T)) if pb == 0 else A.mul(shifted(x, pb), rest))
        Fp.append(A.mul(shifted(x, pa), rest))
    Fp.append(one)
    Fq.append(one)
    return ([A.sub(Fp[k + 1], Fp[k]) for k in range(K)], [A.sub(Fq[k + 1], Fq[k]) for k in range(K)])


def _power(c: list[int], E: int, up: bool) -> list[int]:
    """E-th power of sum_i c_i z^i (units 2^-K, nonnegative), every product rounded up (``up``) or
    down to units by repeated squaring: a super-measure (up) or a sub-measure (down) of the exact
    E-fold convolution, since the products are monotone in nonnegative coefficients. The packed
    products of the balls-in-bins route (:func:`.bins._power`: one GMP product per step, rounded
    on the packed integer, no per-coefficient Python work between products)."""
    return _packed_power(c, E, up, None, _K)


def _units(p: list[Iv], q: list[Iv]) -> tuple[list[int], list[int]]:
    """P rounded down and Q rounded up to integer units 2^-K, from the enclosures' lower
    and upper ends (mul_2exp is exact: only the exponent moves; a Python '*' would round
    in gmpy2's global context, to nearest at 53 bits)."""
    A = arith(_BITS)
    return [_to_units(A, x[0], False) for x in p], [_to_units(A, x[1], True) for x in q]


_UNIT = mpfr(2) ** -_K  # exact: a power of two


def _to_units(A: Any, x: mpfr, up: bool) -> int:
    """floor (ceil when ``up``) of x 2^K, at least 0. A mass below one unit is 0 (or 1) units
    without forming it: with T = 10^12 batches a cell mass is ~2^-(10^9), whose exact ratio
    of integers has a billion-bit denominator (15 s of as_integer_ratio per cell set)."""
    if x <= 0:
        return 0
    if x < _UNIT:
        return 1 if up else 0
    return max(0, ceil_int(A.up.mul_2exp(x, _K)) if up else floor_int(A.dn.mul_2exp(x, _K)))


def _prefixes(r: Mapping[str, Any], result: Mapping[str, Any], swap: bool,
              pair: tuple[int, int]) -> list[tuple[int, int]]:
    a, s, cells, grid = _hints(result)
    p, q = _cells(r, a, s, cells, pair)
    if swap:
        p, q = q, p
    # P rounded down, Q up, to units 2^-K: floor / ceil of the enclosure's end times 2^K, exactly
    P, Q = _units(p, q)
    E = 1 if r["persistent"] else r["E"]
    if E > 1:
        idx = [math.floor(math.log(x / y) * 2.0**grid) if x > 0 and y > 0 else None for x, y in zip(P, Q)]
        fin = [i for i in idx if i is not None]
        lo, hi = min(fin), max(fin)
        if E * (hi - lo + 1) > _MAX_CLASSES:
            sc = math.ceil(E * (hi - lo + 1) / _MAX_CLASSES)
            idx = [None if i is None else (i - lo) // sc for i in idx]
            lo, hi = 0, max(i for i in idx if i is not None)
        cp, cq = [0] * (hi - lo + 1), [0] * (hi - lo + 1)
        for i, x, y in zip(idx, P, Q):
            if i is not None:  # outcomes with a dropped cell form a class outside every J
                cp[i - lo] += x
                cq[i - lo] += y
        P, Q = _power(cp, E, False), _power(cq, E, True)
    # classes by decreasing P/Q, compared by exact cross-multiplication (Fraction keys cost
    # more than the products); the order only chooses the prefixes J, each one a lower bound
    order = sorted((j for j in range(len(P)) if P[j] > 0 and Q[j] > 0),
                   key=cmp_to_key(lambda i, j: P[j] * Q[i] - P[i] * Q[j]))
    out, A, B = [], 0, 0
    for j in order:
        A += P[j]
        B += Q[j]
        out.append((A, B))
    return out


def _exp_up(eps: Fraction) -> tuple[int, int]:
    """An upper bound X / D of e^eps (MPFR's exp rounded up), as exact integers (D > 0).
    From eps <= -0.7 n on (n = :data:`_EXP_FLOOR_BITS`) it is 2^-n: ln 2 < 0.7, so
    e^eps <= e^(-n ln 2); MPFR's own upper bound there could be its least positive number,
    2^-(2^30), whose denominator made every product a billion-bit integer (eps = -1e3000)."""
    if eps <= Fraction(-7, 10) * _EXP_FLOOR_BITS:
        return 1, 1 << _EXP_FLOOR_BITS
    v = arith(_BITS).exp(arith(_BITS).q(eps))[1]
    if not mpfr_is_finite(v):
        raise CouldNotReprove("e^eps overflows the second route's range")
    n, d = v.as_integer_ratio()
    return int(n), int(d)


#: e^eps below 2^-this is taken as 2^-this in the lower end: the classes' Q-masses are at most
#: 2^K units, so what it gives up is below 2^-(K + 64) units
_EXP_FLOOR_BITS = 2 * (_K + 32)


def _swaps(rel: str) -> tuple[bool, ...]:
    return {"remove": (False,), "add": (True,)}.get(rel, (False, True))


#: beyond this eps, e^eps B_J > A_J for every prefix J (A_J <= 2^K cells, B_J >= 1 unit: Q is
#: rounded up, so a class with Q > 0 has at least one unit), so the pair proves no delta above 0
#: and the exact comparison would only multiply integers of eps / ln 2 bits (eps = 1e6: 12 s)
_EPS_NOTHING = Fraction(2 * (_K + 32))


def _lower_eps_holds(r: Mapping[str, Any], result: Mapping[str, Any], delta: Fraction, eps: Fraction,
                     memo: "dict | None" = None) -> bool:
    """Some prefix J gives A_J - e^eps B_J > delta 2^K (then delta(eps) > delta), decided
    in exact rationals with e^eps rounded up. ``memo`` keeps the prefixes (they do not
    depend on eps) between calls at several eps."""
    if eps > _EPS_NOTHING:
        return False
    X, D = _exp_up(eps)
    dl = delta * (1 << _K)
    bound = dl.numerator * D  # A - (X/D) B > n/d  <=>  (A D - X B) d > n D, in integers
    memo = {} if memo is None else memo
    for pair in _pairs(r["rel"]):  # the producer's pair first; a proof by any one suffices
        for swap in _swaps(r["rel"]):
            if (swap, pair) not in memo:
                memo[swap, pair] = _prefixes(r, result, swap, pair)
            for A, B in memo[swap, pair]:
                if (A * D - X * B) * dl.denominator > bound:
                    return True
    return False


def _lower_delta(r: Mapping[str, Any], result: Mapping[str, Any], eps: Fraction,
                 pair: tuple[int, int]) -> mpf:
    """max_J (A_J - e^eps B_J) 2^-K for ``pair``, e^eps rounded up, in exact rationals,
    then rounded down."""
    if eps > _EPS_NOTHING:
        return mpf(0)  # 0 is a lower bound of every delta (and the best the pair gives there)
    X, D = _exp_up(eps)
    best = 0  # max_J (A_J D - X B_J), over the common denominator D 2^K
    for swap in _swaps(r["rel"]):
        for A, B in _prefixes(r, result, swap, pair):
            best = max(best, A * D - X * B)
    return mpfr_to_mpf(arith(_BITS).q(Fraction(best, D << _K))[0])


def _recorded_lo(result: Mapping[str, Any]) -> "mpf | None":
    enc = result.get("enclosure")
    if not isinstance(enc, Mapping) or "lo" not in enc:
        return None
    return parse_bound(enc.get("lo"), "result.enclosure.lo", _DPS, "c")


def _eps_bracket(inputs: Mapping[str, Any], result: Mapping[str, Any]) -> tuple[mpf, mpf]:
    r = _run(inputs)
    delta = exact_input(inputs, "delta")
    if not 0 < delta < 1:
        raise MalformedCertificate("inputs.delta must be in (0, 1)")
    enc = result.get("enclosure")
    if not isinstance(enc, Mapping):
        raise MalformedCertificate("result.enclosure is missing")
    with mpmath.workdps(_DPS):
        prop = _eps_upper(r, fraction_to_mpf(delta))  # a proposal: proved above the root next
    # eps(delta) >= 0 by definition: a negative root (delta above delta_mu(0)) is proved at 0
    prop = max(prop, mpf(0))
    h = mpf_to_fraction(prop)
    mu_hi = _mu_bracket(r)[1]
    # delta_mu(mu+, h) < delta proves eps(delta) <= h: delta_mu decreases in eps and
    # increases in mu (mu <= mu+)
    if side(lambda A: delta_mu_iv(A, mu_hi, h), lambda A: A.q(delta), 20) != -1:
        raise CouldNotReprove("the no-amplification Gaussian's eps is not re-proved below the proposed upper end")
    # the lower end by the max-statistic pair at the recorded lower end (or, to refute the
    # certificate, just above its upper end); the upper end is the route's own: the one rule
    # for roots (verify.root_enclosure) makes the enclosure the acceptance rule judges
    memo: dict = {}
    return root_enclosure(enc, lambda x: _lower_eps_holds(r, result, delta, x, memo), None, ceiling=prop)


@register("shuffle.epsilon", explain="shuffle-and-iterate DP-SGD, bracket of epsilon(delta): the upper end "
          "of the no-amplification Gaussian (mu = Delta sqrt(E)/sigma): a point proposed by bisection on mpmath "
          "(untrusted) and proved above the root by delta_mu < delta in MPFR directed rounding at a rational "
          "mu+ >= mu; the lower end re-proved as delta(lo) > delta for the max-of-batch-sums dataset pair, composed over "
          "epochs by exact GMP products (units 2^-128, P down, Q up)")
def recheck_eps(inputs: Mapping[str, Any], result: Mapping[str, Any]) -> Recheck:
    lo, hi = _eps_bracket(inputs, result)
    _check_mu(_run(inputs), result)
    return Recheck(lo=lo, hi=hi, dps=_DPS, proved=frozenset({"mu"}))


# a claim is decided on the same bracket (verify derives the verdict from claim.relation)
recheck_claim = register("shuffle.claim", explain="shuffle-and-iterate DP-SGD, verdict on a claimed (eps, delta): "
                         "the epsilon bracket re-derived as for shuffle.epsilon; holds iff its upper end <= claimed "
                         "eps, fails iff its lower end > claimed eps")(recheck_eps)


@register("shuffle.delta", explain="shuffle-and-iterate DP-SGD, bracket of delta(eps): delta_mu(eps) of the "
          "no-amplification Gaussian above, the max-of-batch-sums pair composed over epochs below")
def recheck_delta(inputs: Mapping[str, Any], result: Mapping[str, Any]) -> Recheck:
    r = _run(inputs)
    eps = exact_input(inputs, "eps")
    # delta_mu increases in mu: its value at mu+ >= mu, rounded up, is an upper end
    hi = mpfr_to_mpf(delta_mu_iv(arith(_BITS), _mu_bracket(r)[1], eps)[1])
    pairs = _pairs(r["rel"])
    lo = _lower_delta(r, result, eps, pairs[0])
    rec = _recorded_lo(result)
    for pair in pairs[1:]:  # an earlier release's pair, only when the recorded end needs it
        if rec is None or rec <= lo:
            break
        lo = max(lo, _lower_delta(r, result, eps, pair))
    _check_mu(r, result)
    return Recheck(lo=max(lo, mpf(0)), hi=hi, dps=_DPS, proved=frozenset({"mu"}))
