"""Second route for the PLD accountant's certificates (``pld.epsilon``, ``pld.delta``,
``pld.claim``; the event trees' ``events.*`` and the oracle reuse it), on mpmath and GMP
integers only: nothing from the arb side is imported.

What is re-proved: an independent enclosure [lo', hi'] of the same quantity, which
``verify`` accepts only if it lies inside the recorded [lo, hi] (containment; disjoint:
refused; neither: exit 3). The upper end comes from the connect-the-dots pair of each
step (a chord of the convex privacy curve lies above it; Doroshenko et al. 2022), the lower
end from the pair of loss buckets (a post-processing, so its hockey-stick divergence is
below the mechanism's; bounded by the sum over classes of (P_k - e^eps Q_k)+), both
composed exactly by Kronecker substitution into one integer product (GMP via gmpy2),
with directed rounding to units of 2^-K and tail truncation charged to the bounds. For
``pld.claim`` the verdict (holds iff hi' <= delta, fails iff lo' > delta) must equal the
recorded one.

Independent parts: the pair's tails with ``mpmath.ncdf`` (the arb route uses erfc), the
discretisation written again at K + 2m + 64 bits, the queries by scans instead of binary
search. The grid starts four halvings below the recorded one (a hint) and only the
directions and sides not yet inside the recorded enclosure are refined
(:func:`_grid_for_width`). mpmath's own roundings are not directed: the route is a second
opinion at a precision far beyond the units, not a proof in the arb sense.
"""

from __future__ import annotations

import json
import math
from fractions import Fraction
from typing import Any, Callable, Mapping, Optional

import mpmath
from mpmath import mpf

from ..certificate.format import TF_STEPS_RULE
from ..errors import CertificateRejected, CouldNotReprove, MalformedCertificate
from .gdp import exact_input, to_mpf
from .verify import Recheck, parse_bound, register

try:  # GMP's packing and multiplication for the one big product of each convolution
    import gmpy2 as _gmpy2
except ImportError:  # pragma: no cover - gmpy2 is a declared dependency
    _gmpy2 = None

_DPS = 40
_M = 8  # grid 2^-8
_F = 1 << 64
#: the most grid points one step's loss range may span on the chosen grid; beyond: exit 3
MAX_KNOTS = 1 << 22


def _tails(sig: mpf, q: mpf, direction: str, e: mpf) -> tuple[mpf, mpf]:
    mu = 1 / sig if direction != "replace" else 2 / sig
    if q == 1:
        return mpmath.ncdf(-e / mu + mu / 2), mpmath.ncdf(-e / mu - mu / 2)
    if direction == "remove":
        a = mpmath.expm1(e) + q
        if a <= 0:
            return mpf(1), mpf(1)
        x = (mpmath.log(a / q) + mu * mu / 2) / mu
        return (1 - q) * mpmath.ncdf(-x) + q * mpmath.ncdf(mu - x), mpmath.ncdf(-x)
    a = mpmath.expm1(-e) + q
    if a <= 0:
        return mpf(0), mpf(0)
    x = (mpmath.log(a / q) + mu * mu / 2) / mu
    pt = mpmath.ncdf(x)
    return pt, (1 - q) * pt + q * mpmath.ncdf(x - mu)


def _laplace_tails(b: mpf, q: mpf, direction: str, e: mpf) -> tuple[mpf, mpf]:
    """Subsampled Laplace pair (scale b, sensitivity 1), by the same case split
    as the arb route but written on the densities' survival functions."""
    lmin = mpmath.log(1 - q + q * mpmath.exp(-1 / b))
    lmax = mpmath.log(1 - q + q * mpmath.exp(1 / b))
    lo_end, hi_end = (lmin, lmax) if direction == "remove" else (-lmax, -lmin)
    if e >= hi_end:
        return mpf(0), mpf(0)
    if e < lo_end:
        return mpf(1), mpf(1)
    s0 = lambda x: mpmath.exp(-x / b) / 2  # noqa: E731
    s1 = lambda x: 1 - mpmath.exp((x - 1) / b) / 2  # noqa: E731
    if direction == "remove":
        x = (b * mpmath.log((mpmath.expm1(e) + q) / q) + 1) / 2
        return (1 - q) * s0(x) + q * s1(x), s0(x)
    x = (b * mpmath.log((mpmath.expm1(-e) + q) / q) + 1) / 2
    return 1 - s0(x), (1 - q) * (1 - s0(x)) + q * (1 - s1(x))


def _finite(P: list, Q: list):
    """Tails and +inf mass of a finite pair, by summation."""

    def tails(e: mpf) -> tuple[mpf, mpf]:
        x = mpmath.exp(e)
        sel = [(p, r) for p, r in zip(P, Q) if p > 0 and r > 0 and p > x * r]
        return mpmath.fsum(p for p, _ in sel), mpmath.fsum(r for _, r in sel)

    return tails, mpmath.fsum(p for p, r in zip(P, Q) if r == 0)


def _range(tails, inf: mpf, h: mpf, tau: mpf, cap: int = 10**7) -> tuple[int, int]:
    """Knot indices [lo, hi] outside which each tail is at most ``tau``: doubling, then
    bisection (the tails are monotone), so the range is not up to twice too long."""
    def above(i: int) -> bool:
        return tails(i * h)[0] > tau

    def below(i: int) -> bool:
        return 1 - inf - tails(i * h)[0] > tau

    hi = 1
    while above(hi) and hi < cap:
        hi *= 2
    a = hi // 2  # above(a) holds (or a = 0)
    while hi - a > 1 and hi < cap:
        mid = (a + hi) // 2
        a, hi = (mid, hi) if above(mid) else (a, mid)
    lo = -1
    while below(lo) and lo > -cap:
        lo *= 2
    b = lo // 2
    while b - lo > 1 and lo > -cap:
        mid = -((-(b + lo)) // 2)
        lo, b = (lo, mid) if below(mid) else (mid, b)
    return lo, hi


def _discretise(tails, inf: mpf, K: int, tau: mpf, m: int = _M, cap: int = 10**7,
                max_knots: int = MAX_KNOTS):
    """Connect-the-dots (upper) and quantised (lower) masses on the grid 2^-m, the knot
    index range capped at +-``cap`` (the calibration re-check uses finer grids); a range
    of ``max_knots`` points or more fails closed (exit 3) before the work.

    Worked at K + 2m + 64 bits: a connect-the-dots mass is a second difference of the
    curve over knots h apart, so the tails lose about 2m bits to cancellation, and the
    masses must still be right to well under one unit 2^-K before they are rounded
    outward by a unit. The ``tails`` must evaluate their parameters at the ambient
    precision (not capture them rounded)."""
    with mpmath.workprec(max(mpmath.mp.prec, K + 2 * m + 64)):
        return _discretise_at(tails, inf, K, tau, m, cap, max_knots)


def _discretise_at(tails, inf: mpf, K: int, tau: mpf, m: int, cap: int, max_knots: int):
    h = mpf(2) ** -m
    i0, n = _range(tails, inf, h, tau, cap)
    if n - i0 >= max_knots:  # fail closed before the work, not slowly or out of memory
        raise CouldNotReprove(f"one step's privacy loss spans more than {max_knots} points of the grid 2^-{m}")
    unit = mpf(2) ** K
    pts = [tails(i * h) for i in range(i0, n + 1)]
    xs = [mpmath.exp(i * h) for i in range(i0, n + 1)]
    ds = [p - x * qq + inf for (p, qq), x in zip(pts, xs)]
    sl = [(ds[0] - 1) / xs[0]] + [(ds[t] - ds[t - 1]) / (xs[t] - xs[t - 1]) for t in range(1, len(ds))] + [mpf(0)]
    up = [max(0, int(mpmath.ceil(xs[t] * (sl[t + 1] - sl[t]) * unit)) + 1) for t in range(len(ds))]
    up_inf = int(mpmath.ceil(ds[-1] * unit)) + 1
    lp = [max(0, int(mpmath.floor((pts[t][0] - pts[t + 1][0]) * unit)) - 1) for t in range(len(ds) - 1)]
    lq = [int(mpmath.ceil((pts[t][1] - pts[t + 1][1]) * unit)) + 1 for t in range(len(ds) - 1)]
    l_inf = max(0, int(mpmath.floor(inf * unit)) - 1)
    return (i0, up, up_inf), (i0, lp, lq, l_inf)


def _kron(a: list[int], b: list[int]) -> list[int]:
    """Exact product of two nonnegative integer sequences by Kronecker substitution:
    pack each into one integer (fixed-width fields wide enough that no field carries),
    multiply once, unpack. With gmpy2 (a declared dependency) packing, the product and
    unpacking are GMP's; without it, Python's own integers give the same exact result,
    slower."""
    if not a or not b:
        return []
    bits = max(max(a).bit_length(), 1) + max(max(b).bit_length(), 1) + min(len(a), len(b)).bit_length() + 1
    n = len(a) + len(b) - 1
    if _gmpy2 is not None:
        x = _gmpy2.pack(a, bits)
        y = x if b is a else _gmpy2.pack(b, bits)  # x * x: GMP squares, about 1.5x faster
        out = [int(c) for c in _gmpy2.unpack(x * y, bits)]
        return out + [0] * (n - len(out))  # unpack omits trailing zero fields
    k = (bits + 7) // 8

    def pack(v: list[int]) -> int:
        return int.from_bytes(b"".join(x.to_bytes(k, "little") for x in v), "little")

    raw = (pack(a) * pack(b)).to_bytes(n * k + 1, "little")
    return [int.from_bytes(raw[i * k:(i + 1) * k], "little") for i in range(n)]


def _trim(v: list[int], budget: int) -> tuple[int, int, int, int]:
    a, s = 0, 0
    while a < len(v) - 1 and s + v[a] <= budget:
        s += v[a]
        a += 1
    b, t = len(v), 0
    while b - 1 > a and t + v[b - 1] <= budget:
        t += v[b - 1]
        b -= 1
    return a, s, b, t


def _mul_upper(x, y, K: int, budget: int):
    v = [-((-c) >> K) for c in _kron(x[1], y[1])]  # Python's >> floors: this is the ceiling
    a, s, b, t = _trim(v, budget)
    v = v[a:b]
    v[0] += s
    return (x[0] + y[0] + a, v, x[2] + y[2] + t)


def _mul_lower(x, y, K: int, budget: int):
    P = [c >> K for c in _kron(x[1], y[1])]
    Q = [-((-c) >> K) for c in _kron(x[2], y[2])]
    a, _, b, _ = _trim(P, budget)
    inf = max(0, x[3] + y[3] - (-((-x[3] * y[3]) >> K)))  # a + b - ab, ab rounded up
    return (x[0] + y[0] + a, P[a:b], Q[a:b], inf)


def _power(d, T: int, mul, K: int, budget: int):
    res, base = None, d
    while True:
        if T & 1:
            res = base if res is None else mul(res, base, K, budget)
        T >>= 1
        if not T:
            return res
        base = mul(base, base, K, budget)


def _compose(events, direction: str, K: int, tau: mpf, budget: int, m: int = _M, sides: str = "both",
             max_knots: int = MAX_KNOTS):
    """The T-fold upper (connect-the-dots) and lower (grouped) pairs of one direction;
    ``sides`` = "upper" or "lower" skips the other one (None in its place)."""
    want_u, want_l = sides != "lower", sides != "upper"
    ups, lows = None, None
    for make, T in events:
        tails, inf = make(direction)
        u, l = _discretise(tails, inf, K, tau, m, max_knots=max_knots)
        U = _power(u, T, _mul_upper, K, budget) if want_u else None
        L = _power(l, T, _mul_lower, K, budget) if want_l else None
        ups = U if ups is None else (_mul_upper(ups, U, K, budget) if want_u else None)
        lows = L if lows is None else (_mul_lower(lows, L, K, budget) if want_l else None)
    return ups, lows


def _lower_delta(L, eps: mpf) -> int:
    """sum_k (P_k - e^eps Q_k)+ over the lower pair's classes, in units (rounded down).

    Each class of the lower pair groups whole outcomes of the composed mechanism
    (a loss bucket of each step; products of buckets merged by index; classes
    trimmed away drop whole groups), with P rounded down and Q rounded up. For a
    group G, (P(G) - e^eps Q(G))+ <= sum over its outcomes of (P - e^eps Q)+, so the
    sum over groups is at most the hockey-stick divergence delta(eps) (AFA Def 2 /
    the data-processing inequality); it is exact for the grouped pair, so its
    error is only the merging within a class, O(T h^2) in delta for a smooth loss,
    not O(sqrt(T) h) as for a suffix of classes ordered by index."""
    off, P, Q, linf = L
    # e^eps 2^64 rounded up, by far more than mpmath's own relative error
    E = int(mpmath.ceil(mpmath.exp(eps) * _F * (1 + mpf(10) ** (5 - _DPS)))) + 1
    s = 0
    for p, q in zip(P, Q):
        d = (p << 64) - q * E
        if d > 0:
            s += d
    return (s >> 64) + linf


def _delta_bounds(U, L, eps: mpf, K: int, m: int = _M) -> tuple[mpf, mpf]:
    """[lower, upper] of delta(eps); a side that was not computed (None) is -inf / +inf."""
    lo = mpf(_lower_delta(L, eps)) / mpf(2) ** K if L is not None else -mpmath.inf
    if U is None:
        return lo, mpmath.inf
    h = mpf(2) ** -m
    off, v, inf = U
    up = mpf(inf)
    for k, c in enumerate(v):
        s = (off + k) * h
        if s > eps and c:
            up += c * -mpmath.expm1(eps - s)
    return lo, up / mpf(2) ** K


def _lower_eps(L, delta: mpf, K: int) -> mpf:
    """A lower bound of eps(delta) from the lower pair: for any set S of classes,
    delta(eps) >= P(S) - e^eps Q(S) (the hockey-stick divergence is a supremum over
    events), so eps(delta) >= log((P(S) - delta) / Q(S)) whenever P(S) > delta.
    S runs over the sets {P_k / Q_k > t} (ordered by a float ratio: the order only
    chooses S); the best one is found in floats and its bound computed exactly."""
    off, P, Q, linf = L
    unit = mpf(2) ** K
    Du = delta * unit
    order = sorted((k for k in range(len(P)) if P[k] > 0),
                   key=lambda k: -(P[k] / Q[k]) if Q[k] else -math.inf)
    Di = int(mpmath.ceil(Du))
    if linf > Du:
        return mpmath.inf  # mass at +infinity alone exceeds delta: no finite eps
    sp, sq, best, chosen = linf, 0, -math.inf, None
    for k in order:  # the prefix sums are exact integers; only the choice is in floats
        sp += P[k]
        sq += Q[k]
        if sp > Di:
            try:
                v = math.log((sp - Di) / sq) if sq else math.inf
            except OverflowError:
                v = math.inf
            if v > best:
                best, chosen = v, (sp, sq)
    if chosen is None:
        return mpf(0)
    sp, sq = chosen
    if sq == 0:
        return mpmath.inf
    val = mpmath.log(mpf(sp - Di) / sq)  # Di >= delta 2^K: the numerator is rounded down
    return max(mpf(0), val - abs(val) * mpf(10) ** (5 - _DPS))  # outward by far more than mpmath's error


def _eps_bounds(U, L, delta: mpf, K: int, m: int = _M) -> tuple[mpf, mpf]:
    """[lower, upper] of eps(delta); a side that was not computed (None) is -inf / +inf."""
    lo = _lower_eps(L, delta, K) if L is not None else -mpmath.inf
    if U is None:
        return lo, mpmath.inf
    h = mpf(2) ** -m
    unit = mpf(2) ** K
    off, v, inf = U
    # upper: the curve is nonincreasing; scan knots from the top for the crossing
    hi = mpmath.inf
    S, V = mpf(inf), mpf(0)
    for k in range(len(v) - 1, -1, -1):
        s = (off + k) * h
        # on (s_{k-1}, s_k] the curve is (S_k - e^eps V_k)/unit with S_k, V_k including k
        S += v[k]
        V += v[k] * mpmath.exp(-s)
        if (S - mpmath.exp(max(s - h, 0)) * V) / unit > delta:
            root = mpmath.log((S - delta * unit) / V) if S > delta * unit else s
            hi = max(min(root, s), mpf(0))
            break
        hi = max(s - h, mpf(0))
    return lo, hi


def _count(t: Any) -> int:
    if isinstance(t, str) and t.isdigit():
        t = int(t)
    if not isinstance(t, int) or not 1 <= t <= 10**7:
        raise CertificateRejected("PLD inputs out of range (1 <= steps <= 1e7)")
    return t


def _event(e: Mapping[str, Any], count_key: str):
    """(make(direction) -> (tails, inf), count, replace_ok) of one event."""
    if "mechanism" in e:
        mech = e["mechanism"]
    elif count_key == "steps":
        mech = "subsampled-gaussian"  # the pld.* kinds are the Poisson-subsampled Gaussian (no key to read)
    else:
        raise MalformedCertificate("inputs.events[].mechanism is missing (nothing defaults)")
    if "sensitivity" in e and exact_input(e, "sensitivity") != 1:
        raise CouldNotReprove("a PLD step with sensitivity other than 1 is not re-derived here")
    q = exact_input(e, "sampling_rate")  # missing: exit 2 (a rate of 1 was a 9x under-report)
    if not 0 < q <= 1:
        raise CertificateRejected("sampling_rate must be in (0, 1]")
    qm, T = to_mpf(q), _count(e.get(count_key))
    if mech in ("subsampled-gaussian", "gaussian"):
        s = exact_input(e, "noise_multiplier")
        if s <= 0:
            raise CertificateRejected("noise_multiplier must be > 0")
        return (lambda d: ((lambda x: _tails(to_mpf(s), to_mpf(q), d, x)), mpf(0))), T, q == 1
    if mech == "laplace":
        b = exact_input(e, "scale")
        if b <= 0:
            raise CertificateRejected("scale must be > 0")
        return (lambda d: ((lambda x: _laplace_tails(to_mpf(b), to_mpf(q), d, x)), mpf(0))), T, False
    if mech == "approx":
        e0, d0 = to_mpf(exact_input(e, "exp_eps0")), to_mpf(exact_input(e, "delta0"))
        if e0 < 1 or not 0 <= d0 < 1:
            raise CertificateRejected("approx: exp_eps0 >= 1 and 0 <= delta0 < 1 required")
        P = [d0, (1 - d0) * e0 / (1 + e0), (1 - d0) / (1 + e0), mpf(0)]
        Q = list(reversed(P))

        def make(d: str):
            if d == "add":
                return _finite(P, [(1 - qm) * p + qm * r for p, r in zip(P, Q)])
            return _finite([(1 - qm) * r + qm * p for p, r in zip(P, Q)], Q)

        return make, T, False
    raise MalformedCertificate(f"unknown event mechanism {mech!r}")


_TF_KEYS = ("dataset_size", "batch_size", "epochs", "steps_rule")


def check_tf_schedule(inputs: Mapping[str, Any]) -> None:
    """A schedule given as epochs, dataset size N and batch size B must define
    the ``steps`` and ``sampling_rate`` the certificate computed with:
    q = B / N and T = ceil(epochs N / B) (:data:`TF_STEPS_RULE`), re-derived in
    exact rationals. Either all four keys are present or none."""
    present = [k for k in _TF_KEYS if k in inputs]
    if not present:
        return
    if len(present) != len(_TF_KEYS):
        missing = [k for k in _TF_KEYS if k not in inputs]
        raise MalformedCertificate(f"inputs: {', '.join(present)} given without {', '.join(missing)}")
    if inputs["steps_rule"] != TF_STEPS_RULE:
        raise MalformedCertificate(f"inputs.steps_rule: unknown rule (allowed: {TF_STEPS_RULE!r})")
    n, b = inputs["dataset_size"], inputs["batch_size"]
    if not (isinstance(n, int) and isinstance(b, int) and 1 <= b <= n <= 10**12):
        raise MalformedCertificate("inputs.dataset_size and batch_size must be counts with 1 <= batch_size <= dataset_size <= 1e12")
    ep = exact_input(inputs, "epochs")
    if ep <= 0:
        raise CertificateRejected("inputs.epochs must be > 0")
    q_rec = exact_input(inputs, "sampling_rate")
    if q_rec != Fraction(b, n):
        raise CertificateRejected(f"inputs.sampling_rate={inputs['sampling_rate']} is not batch_size / dataset_size = {b}/{n}")
    t = ep * n / b
    steps = t.numerator // t.denominator + (1 if t.denominator != 1 else 0)
    if inputs.get("steps") != steps:
        raise CertificateRejected(f"inputs.steps={inputs.get('steps')!r} is not ceil(epochs * dataset_size / batch_size) = {steps}")


def _events(inputs: Mapping[str, Any]) -> list:
    check_tf_schedule(inputs)
    if "events" in inputs:
        evs = inputs["events"]
        if not isinstance(evs, list) or not evs or not all(isinstance(e, dict) for e in evs):
            raise MalformedCertificate("inputs.events must be a non-empty list of objects")
        return [_event(e, "count") for e in evs]
    return [_event(inputs, "steps")]


def _directions(inputs: Mapping[str, Any]) -> list[str]:
    if "neighboring" not in inputs:
        raise MalformedCertificate("inputs.neighboring is missing (allowed: add-remove, add, remove, replace-one)")
    rel = inputs["neighboring"]
    table = {"add-remove": ["remove", "add"], "add": ["add"], "remove": ["remove"], "replace-one": ["replace"]}
    if rel not in table:
        raise MalformedCertificate(f"inputs.neighboring={rel!r} is not a relation")
    return table[rel]


def _bounds(inputs: Mapping[str, Any], kind: str, target: mpf, scale: mpf,
            eps_hint: mpf = mpf(0), m: int = _M, sides: str = "both",
            direction: "str | None" = None) -> tuple[mpf, mpf]:
    events = _events(inputs)
    K, tau, budget = _units(scale, eps_hint, sum(t for _, t, _ in events))
    los, his = [], []
    for d in ([direction] if direction else _directions(inputs)):
        if d == "replace" and not all(ok for _, _, ok in events):
            raise CertificateRejected("replace-one is only certified for Gaussian steps at sampling rate 1")
        U, L = _compose([(mk, t) for mk, t, _ in events], d, K, tau, budget, m, sides)
        lo, hi = _eps_bounds(U, L, target, K, m) if kind == "eps" else _delta_bounds(U, L, target, K, m)
        los.append(lo)
        his.append(hi)
    return max(los), max(his)


#: relative truncation error (of the delta scale) the second route allows itself: at
#: 10^-7 the tail mass sent to +inf cost prv_accountant #17 a whole grid halving
_TAU_REL = mpf(10) ** -10


def _units(scale: mpf, eps_hint: mpf, total: int) -> tuple[int, mpf, int]:
    """Integer unit 2^-K, per-step tail budget tau and trimming budget (in units) of
    one re-derivation whose delta is of size ``scale``; Q-masses near loss eps are
    ~e^-eps times the P-masses, so ``eps_hint`` adds bits to resolve them."""
    extra = int(mpmath.ceil(mpf("1.45") * min(max(eps_hint, mpf(0)), mpf(2000)))) + 16
    K = max(64, int(-mpmath.log(scale * mpf(10) ** -4, 2)) + 48 + extra)
    tau = scale * _TAU_REL / total
    budget = int(scale * _TAU_REL * mpf(2) ** K / (4 * total.bit_length() + 4))
    return K, tau, budget


def _as_recheck(lo: mpf, hi: mpf, verdict: Optional[str] = None) -> Recheck:
    return Recheck(lo=lo, hi=hi, dps=_DPS, verdict=verdict)


#: coarsest and finest grid exponents the second route uses (2^-m); beyond: exit 3
_M_MIN, _M_MAX = 8, 24
#: at most this many grids are tried for one re-derivation
_TRIES = 5


def grid_hint(result: Mapping[str, Any]) -> "int | None":
    """The producer's recorded grid ``"2^-m"`` (untrusted: it only chooses where the
    search starts), or None."""
    g = result.get("grid") if isinstance(result, Mapping) else None
    if isinstance(g, str) and g.startswith("2^-") and g[3:].isdigit() and len(g) <= 6:
        return int(g[3:])
    return None


def _grid_for_width(compute: Callable[[int, str, str], tuple], dirs: list, result: Mapping[str, Any]) -> tuple[mpf, mpf]:
    """[lo', hi'] = [max_d lo_d, max_d hi_d] over the directions d (the quantity is the
    larger of the directions' values), each direction's ends being the best over the
    grids tried for it (every end is a bound on its own, so keeping the best is sound).
    Stops once the recorded enclosure is settled (contains [lo', hi'] or is disjoint).

    The first grid is four halvings coarser than the recorded one (a hint), or 2^-8. Then
    only what is unsettled is
    refined: the upper side of each direction whose upper end is above the recorded
    one (one product per step), and the lower side of the direction with the largest
    lower end when it is below the recorded one (two products per step), each on the
    grid predicted from that direction's own gap g: the gap of the two discretisations
    shrinks like h^2 (a quarter per halving), so the next grid is the nearest one whose
    predicted gap is half the recorded width, at least one halving finer. Grids stay within
    2^-8 .. 2^-24 and at most :data:`_TRIES` rounds are computed; a forged grid costs
    time, never acceptance: acceptance is decided by
    :func:`~dpverify.recheck.verify.accept_enclosure` on what is returned."""
    from .verify import enclosure_of

    enc = result.get("enclosure")
    rec = enclosure_of(enc, "result.enclosure", _DPS) if isinstance(enc, dict) else None
    hint = grid_hint(result)
    # probe four halvings coarser than the hint (about 1/16 of its cost): it settles the
    # directions that are far from the recorded enclosure and sizes the next grid
    m0 = min(max(hint - 4 if hint is not None else _M_MIN, _M_MIN), _M_MAX)
    lo_d = {d: -mpmath.inf for d in dirs}
    hi_d = {d: mpmath.inf for d in dirs}
    m_d = {d: m0 for d in dirs}
    todo = {d: "both" for d in dirs}
    lo, hi = -mpmath.inf, mpmath.inf
    for _ in range(_TRIES):
        for d, sides in todo.items():
            a, b = compute(m_d[d], sides, d)
            lo_d[d], hi_d[d] = max(lo_d[d], a), min(hi_d[d], b)
        lo, hi = max(lo_d.values()), max(hi_d.values())
        if rec is None or hi < rec[0] or lo > rec[1]:
            return lo, hi
        width = rec[1] - rec[0]
        if not mpmath.isfinite(width) or width <= 0:
            return lo, hi
        todo = {d: "upper" for d in dirs if hi_d[d] > rec[1]}
        if lo < rec[0]:
            top = max(dirs, key=lambda d: lo_d[d])
            todo[top] = "both" if top in todo else "lower"
        if not todo:
            return lo, hi
        for d in todo:
            gap = hi_d[d] - lo_d[d]
            if m_d[d] >= _M_MAX or not mpmath.isfinite(gap):
                return lo, hi
            step = int(mpmath.nint(mpmath.log(gap / (width / 2), 4))) if gap > 0 else 1
            m_d[d] = min(m_d[d] + max(1, step), _M_MAX)
    return lo, hi


def _accuracy_factor(enc: Any) -> mpf:
    """For a delta enclosure of relative width w (a hint), the factor min(1, 10^3 w)
    that shrinks the route's own truncation and unit error (both 10^-10 of the delta
    scale) to 10^-7 w: the producer's enclosure is as tight as its grid allows, so the
    route must not lose to truncation what the grid gains."""
    from .verify import enclosure_of

    try:
        lo, hi = enclosure_of(enc, "result.enclosure", _DPS)
    except (MalformedCertificate, CertificateRejected):
        return mpf(1)
    if not (mpmath.isfinite(lo) and mpmath.isfinite(hi)) or hi <= 0:
        return mpf(1)
    w = (hi - lo) / hi
    return min(mpf(1), max(w * mpf(10) ** 3, mpf(10) ** -30))


def _remembered(bounds: Callable[..., tuple]) -> Callable[..., tuple]:
    memo: dict = {}

    def call(inputs: Mapping[str, Any], kind: str, target: mpf, scale: mpf, hint: mpf, m: int,
             sides: str, direction: str) -> tuple:
        key = (json.dumps(inputs, sort_keys=True, default=str), kind, repr(target), repr(scale),
               repr(hint), m, direction, mpmath.mp.prec)
        for s in (sides, "both"):  # a "both" result serves either side
            if (key, s) in memo:
                return memo[(key, s)]
        out = memo[(key, sides)] = bounds(inputs, kind, target, scale, hint, m, sides, direction)
        if len(memo) > 256:
            memo.pop(next(iter(memo)))
        return out

    return call


def register_queries(prefix: str, bounds: Callable[..., tuple],
                     directions: Callable[[Mapping[str, Any]], list]) -> tuple[Callable, Callable, Callable]:
    """Register ``PREFIX.epsilon``, ``PREFIX.delta`` and ``PREFIX.claim`` re-checkers around
    ``bounds(inputs, kind, target, delta_scale, eps_hint, m, sides, direction) -> (lo, hi)``
    (one direction of ``directions(inputs)``, on the grid 2^-m),
    chosen from the recorded width (:func:`_grid_for_width`): the recorded enclosure is
    only a hint for the grid and the scale, never a bound that is believed. Results are
    remembered for the process (certificates of one run often share a configuration:
    a claim and its estimate, an oracle battery and its claims)."""
    bounds = _remembered(bounds)

    @register(f"{prefix}.epsilon")
    def recheck_epsilon(inputs: Mapping[str, Any], result: Mapping[str, Any]) -> Recheck:
        with mpmath.workdps(_DPS):
            D = to_mpf(exact_input(inputs, "delta"))
            if not 0 < D < 1:
                raise CertificateRejected("delta must be in (0, 1)")
            enc = result.get("enclosure", {})
            hint = parse_bound(enc.get("hi", "0"), "result.enclosure.hi", _DPS) if isinstance(enc, dict) else mpf(0)
            h = hint if mpmath.isfinite(hint) else mpf(0)
            lo, hi = _grid_for_width(lambda m, sides, d: bounds(inputs, "eps", D, D, h, m, sides, d),
                                     directions(inputs), result)
            return _as_recheck(lo, hi)

    @register(f"{prefix}.delta")
    def recheck_delta(inputs: Mapping[str, Any], result: Mapping[str, Any]) -> Recheck:
        with mpmath.workdps(_DPS):
            E = to_mpf(exact_input(inputs, "eps"))
            enc = result.get("enclosure", {})
            rec_hi = parse_bound(enc.get("hi", "1"), "result.enclosure.hi", _DPS) if isinstance(enc, dict) else mpf(1)
            scale = min(max(rec_hi, mpf(10) ** -300), mpf(1)) if rec_hi != mpmath.inf else mpf(1)
            scale *= _accuracy_factor(enc)
            lo, hi = _grid_for_width(lambda m, sides, d: bounds(inputs, "delta", E, scale, E, m, sides, d),
                                     directions(inputs), result)
            return _as_recheck(lo, hi)

    @register(f"{prefix}.claim")
    def recheck_claim(inputs: Mapping[str, Any], result: Mapping[str, Any]) -> Recheck:
        with mpmath.workdps(_DPS):
            E = to_mpf(exact_input(inputs, "claimed_eps"))
            D = to_mpf(exact_input(inputs, "delta"))
            enc = result.get("enclosure", {})
            rec_hi = parse_bound(enc.get("hi", "1"), "result.enclosure.hi", _DPS) if isinstance(enc, dict) else D
            scale = min(max(min(rec_hi, D), mpf(10) ** -300), mpf(1)) if rec_hi != mpmath.inf else D
            scale *= _accuracy_factor(enc)
            lo, hi = _grid_for_width(lambda m, sides, d: bounds(inputs, "delta", E, scale, E, m, sides, d),
                                     directions(inputs), result)
            verdict = "holds" if hi <= D else "fails" if lo > D else "undecided"
            return _as_recheck(lo, hi, verdict)

    return recheck_epsilon, recheck_delta, recheck_claim


recheck_epsilon, recheck_delta, recheck_claim = register_queries("pld", _bounds, _directions)
