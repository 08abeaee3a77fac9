"""Second route for the PLD accountant's certificates (``pld.epsilon``,
``pld.delta``, ``pld.claim``), on mpmath and Python integers only.

What is re-proved, exactly: an *independent* pair of bounds [lo', hi'] for
the same quantity, computed on a coarse grid (h = 2^-8) by a second
implementation of the mathematics, and the check that the recorded enclosure
[lo, hi] intersects [lo', hi'] (``verify`` rejects when it does not, i.e. when
the second route refutes the certificate: e.g. a recorded eps upper end below
lo' is false). For ``pld.claim`` the re-derived verdict (holds iff hi' <= D,
fails iff lo' > D) must not contradict the recorded one. The recorded width is
*not* re-proved to the recorded accuracy (the coarse grid is wider); the
narrow enclosure rests on the arb route.

Independent parts: the pair's tails with ``mpmath.ncdf`` (the arb route uses
erfc), the discretisation written again (connect-the-dots upper side,
quantised (P, Q) lower side: same theorems, different code), the convolution by
Kronecker substitution into one Python integer (the arb route uses FLINT's
fmpz_poly), and the queries by full scans instead of binary search. Nothing
from the arb side is imported. mpmath works at 40 significant digits with
directed rounding of the final masses (floor/ceil), a precision far beyond the
2^-K units used; the route is a second opinion, not a proof in the arb sense.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Callable, Mapping, Optional

import mpmath
from mpmath import mpf

from ..errors import CertificateRejected, MalformedCertificate
from .recheck_gdp import exact_input, to_mpf
from .verify import Recheck, parse_bound, register

_DPS = 40
_M = 8  # grid 2^-8


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
    hi = 1
    while tails(hi * h)[0] > tau and hi < cap:
        hi *= 2
    lo = -1
    while 1 - inf - tails(lo * h)[0] > tau and lo > -cap:
        lo *= 2
    return lo, hi


def _discretise(tails, inf: mpf, K: int, tau: mpf, m: int = _M, cap: int = 10**7):
    """Connect-the-dots (upper) and quantised (lower) masses on the grid 2^-m, the knot
    index range capped at +-``cap`` (the calibration re-check uses finer grids)."""
    h = mpf(2) ** -m
    i0, n = _range(tails, inf, h, tau, cap)
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
    """Exact product of two nonnegative integer sequences by Kronecker substitution."""
    if not a or not b:
        return []
    bits = max(max(a).bit_length(), 1) + max(max(b).bit_length(), 1) + min(len(a), len(b)).bit_length() + 1
    w = (bits + 7) // 8 * 8

    def pack(v: list[int]) -> int:
        return int.from_bytes(b"".join(x.to_bytes(w // 8, "little") for x in v), "little")

    n = len(a) + len(b) - 1
    raw = (pack(a) * pack(b)).to_bytes(n * w // 8 + 1, "little")
    k = w // 8
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


def _compose(events, direction: str, K: int, tau: mpf, budget: int, m: int = _M):
    ups, lows = None, None
    for make, T in events:
        tails, inf = make(direction)
        u, l = _discretise(tails, inf, K, tau, m)
        U, L = _power(u, T, _mul_upper, K, budget), _power(l, T, _mul_lower, K, budget)
        if ups is None:
            ups, lows = U, L
        else:
            ups, lows = _mul_upper(ups, U, K, budget), _mul_lower(lows, L, K, budget)
    return ups, lows


def _delta_bounds(U, L, eps: mpf, K: int, m: int = _M) -> tuple[mpf, mpf]:
    h = mpf(2) ** -m
    off, v, inf = U
    up = mpf(inf)
    for k, c in enumerate(v):
        s = (off + k) * h
        if s > eps and c:
            up += c * -mpmath.expm1(eps - s)
    off, P, Q, linf = L
    e = mpmath.exp(eps)
    best, sp, sq = mpf(0), 0, 0
    for k in range(len(P) - 1, -1, -1):
        sp += P[k]
        sq += Q[k]
        best = max(best, sp - e * sq)
    return (best + linf) / mpf(2) ** K, up / mpf(2) ** K


def _eps_bounds(U, L, delta: mpf, K: int, m: int = _M) -> tuple[mpf, mpf]:
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
    off, P, Q, linf = L
    lo, sp, sq = mpf(0), linf, 0
    for k in range(len(P) - 1, -1, -1):
        sp += P[k]
        sq += Q[k]
        if sp > delta * unit and sq > 0:
            lo = max(lo, mpmath.log((sp - delta * unit) / sq))
    return lo, hi


def _count(t: Any) -> int:
    if isinstance(t, str) and t.isdigit():
        t = int(t)
    if not isinstance(t, int) or not 1 <= t <= 10**7:
        raise CertificateRejected("PLD inputs out of range (1 <= steps <= 1e7)")
    return t


def _event(e: Mapping[str, Any], count_key: str):
    """(make(direction) -> (tails, inf), count, replace_ok) of one event."""
    mech = e.get("mechanism", "subsampled-gaussian")
    q = exact_input(e, "sampling_rate") if "sampling_rate" in e else Fraction(1)
    if not 0 < q <= 1:
        raise CertificateRejected("sampling_rate must be in (0, 1]")
    qm, T = to_mpf(q), _count(e.get(count_key))
    if mech in ("subsampled-gaussian", "gaussian"):
        s = exact_input(e, "noise_multiplier")
        if s <= 0:
            raise CertificateRejected("noise_multiplier must be > 0")
        return (lambda d: ((lambda x: _tails(to_mpf(s), qm, d, x)), mpf(0))), T, q == 1
    if mech == "laplace":
        b = exact_input(e, "scale")
        if b <= 0:
            raise CertificateRejected("scale must be > 0")
        return (lambda d: ((lambda x: _laplace_tails(to_mpf(b), qm, d, x)), mpf(0))), T, False
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


def _events(inputs: Mapping[str, Any]) -> list:
    if "events" in inputs:
        evs = inputs["events"]
        if not isinstance(evs, list) or not evs or not all(isinstance(e, dict) for e in evs):
            raise MalformedCertificate("inputs.events must be a non-empty list of objects")
        return [_event(e, "count") for e in evs]
    return [_event(inputs, "steps")]


def _directions(inputs: Mapping[str, Any]) -> list[str]:
    rel = inputs.get("neighboring", "add-remove")
    table = {"add-remove": ["remove", "add"], "add": ["add"], "remove": ["remove"], "replace-one": ["replace"]}
    if rel not in table:
        raise MalformedCertificate(f"inputs.neighboring={rel!r} is not a relation")
    return table[rel]


def _bounds(inputs: Mapping[str, Any], kind: str, target: mpf, scale: mpf,
            eps_hint: mpf = mpf(0), m: int = _M) -> tuple[mpf, mpf]:
    events = _events(inputs)
    K, tau, budget = _units(scale, eps_hint, sum(t for _, t, _ in events))
    los, his = [], []
    for d in _directions(inputs):
        if d == "replace" and not all(ok for _, _, ok in events):
            raise CertificateRejected("replace-one is only certified for Gaussian steps at sampling rate 1")
        U, L = _compose([(mk, t) for mk, t, _ in events], d, K, tau, budget, m)
        lo, hi = _eps_bounds(U, L, target, K, m) if kind == "eps" else _delta_bounds(U, L, target, K, m)
        los.append(lo)
        his.append(hi)
    return max(los), max(his)


#: relative truncation error (of the delta scale) the second route allows itself
_TAU_REL = mpf(10) ** -7


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
_M_MIN, _M_MAX = 8, 13


def _grid_for_width(compute: Callable[[int], tuple], result: Mapping[str, Any]) -> tuple[mpf, mpf]:
    """[lo', hi'] at the recorded accuracy, not finer: a probe on the grid 2^-8
    gives the route's own gap g_8; the gap of the two discretisations shrinks
    like h^2 (a quarter per halving of h), so the grid is the coarsest one whose
    predicted gap is at most half the recorded width. One more halving is tried
    when that grid's enclosure is neither inside the recorded one nor disjoint
    from it. The recorded enclosure only chooses the grid: acceptance is decided
    by :func:`~dpverify.certificate.verify.accept_enclosure` on what is returned."""
    from .verify import enclosure_of

    enc = result.get("enclosure")
    rec = enclosure_of(enc, "result.enclosure", _DPS) if isinstance(enc, dict) else None
    lo, hi = compute(_M_MIN)

    def settled(a: mpf, b: mpf) -> bool:
        return rec is None or (rec[0] <= a and b <= rec[1]) or b < rec[0] or a > rec[1]

    if settled(lo, hi) or not mpmath.isfinite(hi - lo):
        return lo, hi
    width = rec[1] - rec[0]
    if not mpmath.isfinite(width) or width <= 0:
        return lo, hi
    gap = hi - lo
    m = _M_MIN + max(1, int(mpmath.ceil(mpmath.log(gap / (width / 2), 4))) if gap > 0 else 1)
    for m in range(min(m, _M_MAX), min(m + 1, _M_MAX) + 1):
        lo, hi = compute(m)
        if settled(lo, hi):
            break
    return lo, hi


def register_queries(prefix: str, bounds: Callable[..., tuple]) -> tuple[Callable, Callable, Callable]:
    """Register ``PREFIX.epsilon``, ``PREFIX.delta`` and ``PREFIX.claim`` re-checkers around
    ``bounds(inputs, kind, target, delta_scale, eps_hint, m) -> (lo, hi)`` on the grid 2^-m,
    chosen from the recorded width (:func:`_grid_for_width`): the recorded enclosure is
    only a hint for the grid and the scale, never a bound that is believed."""

    @register(f"{prefix}.epsilon")
    def recheck_epsilon(inputs: Mapping[str, Any], result: Mapping[str, Any]) -> Recheck:
        with mpmath.workdps(_DPS):
            D = to_mpf(exact_input(inputs, "delta"))
            if not 0 < D < 1:
                raise CertificateRejected("delta must be in (0, 1)")
            enc = result.get("enclosure", {})
            hint = parse_bound(enc.get("hi", "0"), "result.enclosure.hi", _DPS) if isinstance(enc, dict) else mpf(0)
            h = hint if mpmath.isfinite(hint) else mpf(0)
            lo, hi = _grid_for_width(lambda m: bounds(inputs, "eps", D, D, h, m), result)
            return _as_recheck(lo, hi)

    @register(f"{prefix}.delta")
    def recheck_delta(inputs: Mapping[str, Any], result: Mapping[str, Any]) -> Recheck:
        with mpmath.workdps(_DPS):
            E = to_mpf(exact_input(inputs, "eps"))
            enc = result.get("enclosure", {})
            rec_hi = parse_bound(enc.get("hi", "1"), "result.enclosure.hi", _DPS) if isinstance(enc, dict) else mpf(1)
            scale = min(max(rec_hi, mpf(10) ** -300), mpf(1)) if rec_hi != mpmath.inf else mpf(1)
            lo, hi = _grid_for_width(lambda m: bounds(inputs, "delta", E, scale, E, m), result)
            return _as_recheck(lo, hi)

    @register(f"{prefix}.claim")
    def recheck_claim(inputs: Mapping[str, Any], result: Mapping[str, Any]) -> Recheck:
        with mpmath.workdps(_DPS):
            E = to_mpf(exact_input(inputs, "claimed_eps"))
            D = to_mpf(exact_input(inputs, "delta"))
            enc = result.get("enclosure", {})
            rec_hi = parse_bound(enc.get("hi", "1"), "result.enclosure.hi", _DPS) if isinstance(enc, dict) else D
            scale = min(max(min(rec_hi, D), mpf(10) ** -300), mpf(1)) if rec_hi != mpmath.inf else D
            lo, hi = _grid_for_width(lambda m: bounds(inputs, "delta", E, scale, E, m), result)
            verdict = "holds" if hi <= D else "fails" if lo > D else "undecided"
            return _as_recheck(lo, hi, verdict)

    return recheck_epsilon, recheck_delta, recheck_claim


recheck_epsilon, recheck_delta, recheck_claim = register_queries("pld", _bounds)
