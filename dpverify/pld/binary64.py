"""Binary64 arithmetic with a proven error, for the certified path's two float routes: the
Fourier power (:mod:`.fourier`) and the discretisation's mass polynomials
(:mod:`.discretise`, blocks of :mod:`.taylor_blocks`).

Both rest on the IEEE-754 model of round to nearest: every +, -, * of two doubles is the
exact result correctly rounded, fl(x op y) = (x op y)(1 + d), |d| <= u = 2^-53, when no
underflow or overflow occurs (Higham, *Accuracy and Stability of Numerical Algorithms*,
2nd ed., Sec. 2.2). :func:`ieee_round_to_nearest` probes that the process rounds to nearest;
numpy evaluates every ufunc call separately, each element once, so ``a * b - c`` written as
two numpy operations is two roundings and never a fused multiply-add (numpy has no implicit
contraction; ``np.floor`` / ``np.ceil`` are exact). No ``np.exp`` / ``np.log`` here: their
results differ between libraries and carry no proven error.

:func:`compensated_horner` evaluates polynomials whose coefficients are double-double numbers
(hi + lo) at integer points with about 100 bits, and :func:`horner_error` bounds its error a
priori; :func:`round_up` / :func:`round_down` turn a value with a bound into integers in the
sound direction. Together: an integer mass that encloses the exact one, the same bits on every
machine that rounds to nearest.
"""

from __future__ import annotations

import numpy as np
from flint import arb

__all__ = ["UNIT_ROUNDOFF_BITS", "compensated_horner", "float_upper", "horner_error", "ieee_round_to_nearest", "round_down",
           "round_up", "split_double_double", "MAX_ABS", "MAX_ERROR", "MAX_POINT", "MIN_ABS"]

#: unit roundoff of binary64, round to nearest: u = 2^-53 (here and in the Fourier power)
UNIT_ROUNDOFF_BITS = 53
_UBITS = UNIT_ROUNDOFF_BITS
#: Veltkamp's splitter 2^27 + 1: s = s_hi + s_lo exactly, each half at most 26 significant
#: bits (Dekker 1971, Sec. 5; Boldo 2006 proves it for binary64 without extra conditions
#: barring overflow)
_SPLIT = float((1 << 27) + 1)
#: every nonzero coefficient fed to compensated_horner is at least this (smaller ones are
#: dropped into the error bound): all are then multiples of 2^-1012, and so is every value
#: computed from them with integer points, so nothing is subnormal (neither gradual
#: underflow nor a flush-to-zero mode a library may switch on changes a result)
MIN_ABS = 2.0 ** -960
#: sum |coefficient| |u|^k must stay below this: every intermediate is at most a few times
#: it, and Veltkamp's product s (2^27 + 1) stays finite
MAX_ABS = 2.0 ** 900
#: evaluation points are integers of at most this magnitude: u has at most 26 significant
#: bits, so Dekker's product needs no split of u (Veltkamp would return u and 0)
MAX_POINT = 1 << 26
#: round_up / round_down need the error bound below this (their proof)
MAX_ERROR = 2.0 ** 20


def ieee_round_to_nearest() -> bool:
    """numpy's binary64 +, -, * round to nearest here (the error model of the
    module docstring). Probed on every call (a few operations) on ties and
    near-ties in both signs; a process whose rounding mode was changed gets
    the exact routes instead."""
    one = np.array([1.0, -1.0])
    t = 2.0 ** -53
    sg = np.sign(one)
    return (bool(np.all(one + t * sg == one))  # a tie goes to even: stays
            and bool(np.all(one + 2.5 * t * sg == one * (1 + 2 * t)))  # nearest is below
            and bool(np.all(one + 3.5 * t * sg == one * (1 + 4 * t)))  # nearest is above
            and bool(np.all((one * (1 + 2 * t)) * (1 + 2 * t) == one * (1 + 4 * t)))
            and bool(np.all(one - (t / 2) * sg == one)))  # tie below 1: to even


def float_upper(x: arb) -> float:
    """A double >= every value of the ball ``x`` (nonnegative finite balls; inf otherwise)."""
    if not x.is_finite():
        return float("inf")
    up = arb(x.upper())
    f = float(up.mid())
    while not arb(f) >= up:  # the conversion may have rounded down: step up (exact)
        f = float(np.nextafter(f, np.inf))
    return f


def split_double_double(b: arb) -> tuple[float, float, arb]:
    """(hi, lo, r): doubles with |b - hi - lo| <= r for every value of the ball ``b``. hi is the
    double nearest the midpoint, lo the double nearest what remains; either is 0 below
    MIN_ABS (then r holds it). r is an arb upper bound (a point)."""
    mid = arb(b.mid())
    hi = float(mid)
    if abs(hi) < MIN_ABS:
        hi = 0.0
    rest = mid - hi
    lo = float(arb(rest.mid()))
    if abs(lo) < MIN_ABS:
        lo = 0.0
    r = abs(b - hi - lo)
    return hi, lo, arb(r.upper())


def _gamma(n: int) -> arb:
    """gamma_n = n u / (1 - n u) (Higham, Lemma 3.1), exactly."""
    u = arb(2) ** -_UBITS
    return n * u / (1 - n * u)


def horner_error(order: int, hi_sum: arb, lo_sum: arb) -> arb:
    """An upper bound of |s + c - p(u)| for (s, c) = :func:`compensated_horner` of one
    polynomial p(u) = sum_k (H_k + L_k) u^k of degree ``order`` = N at an integer point u,
    given hi_sum >= sum_k |H_k| |u|^k and lo_sum >= sum_k |L_k| |u|^k.

    Proof (the compensated Horner scheme of Graillat, Langlois, Louvet 2005, error-free
    transformations of Ogita, Rump, Oishi 2005, written out for double-double coefficients).
    The loop keeps s_k and c_k; TwoProduct gives p_k + pi_k = s_{k+1} u exactly and TwoSum
    gives s_k + sigma_k = p_k + H_k exactly (both exact as no value underflows or overflows:
    MIN_ABS, MAX_ABS). With tau_N = L_N and tau_k = pi_k + sigma_k + L_k, induction on k
    gives s_k + sum_{j>=k} tau_j u^(j-k) = sum_{j>=k} (H_j + L_j) u^(j-k); so p(u) = s_0 +
    g, g = sum_k tau_k u^k. The c-loop is Horner's rule on g whose coefficients are formed with
    two roundings: |c_0 - g| <= gamma_(2N+2) sum_k T_k |u|^k, T_k = |pi_k| + |sigma_k| + |L_k|
    (Higham, eq. (5.3), and gamma_2 + gamma_2N (1 + gamma_2) <= gamma_(2N+2), Lemma 3.3).
    Round to nearest: |pi_k| <= u_r |s_{k+1} u|, |sigma_k| <= u_r (|p_k| + |H_k|) <=
    u_r ((1 + u_r) |s_{k+1} u| + |H_k|), and by induction |s_k| <= (1 + gamma_(2N+1))
    sum_{j>=k} |H_j| |u|^(j-k), so |s_{k+1} u| |u|^k <= (1 + gamma_(2N+1)) hi_sum for an
    integer u (|u| >= 1, or u = 0 where every term with k >= 1 vanishes). Summing over the
    N values k < N: sum_k T_k |u|^k <= u_r ((2 + u_r)(1 + gamma_(2N+1)) N + 1) hi_sum + lo_sum."""
    u = arb(2) ** -_UBITS
    N = order
    inner = u * ((2 + u) * (1 + _gamma(2 * N + 1)) * N + 1) * hi_sum + lo_sum
    return arb((_gamma(2 * N + 2) * inner).upper())


def compensated_horner(H: np.ndarray, L: np.ndarray, lengths: np.ndarray,
                       u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(s, c) with s + c close to p_r(u) = sum_k (H[r, k] + L[r, k]) u^k, row r's polynomial
    at each of its ``lengths[r]`` points (``u`` holds the rows' points one row after the
    other; integers, |u| <= MAX_POINT). The error is :func:`horner_error`'s bound per row, for
    the row's own degree: the steps above it (zero coefficients, a shorter row padded) keep
    s = c = 0 exactly (every product and sum of zeros is 0).
    Coefficients are doubles of magnitude 0 or >= MIN_ABS; each row's sum |H| |u|^k below
    MAX_ABS (the caller checks both)."""
    N = H.shape[1] - 1
    row = np.repeat(np.arange(H.shape[0]), lengths)
    Ht = np.ascontiguousarray(H.T)
    Lt = np.ascontiguousarray(L.T)
    s = Ht[N][row]
    c = Lt[N][row]
    # one buffer per temporary (no allocation per step); every call below is one IEEE
    # operation per element, in the order the proof reads: numpy runs each ufunc call on its
    # own and never fuses two of them into an FMA (which would break TwoProduct's and
    # TwoSum's exactness and Higham's model)
    p, g, s_hi, s_lo, pi, t, hk, z, sigma = (np.empty_like(u) for _ in range(9))
    for k in range(N - 1, -1, -1):
        # TwoProduct(s, u) (Dekker's mul12 with u = u_hi, u_lo = 0): p + pi = s u exactly
        np.multiply(s, u, out=p)
        np.multiply(s, _SPLIT, out=g)
        np.subtract(g, s, out=s_hi)
        np.subtract(g, s_hi, out=s_hi)  # s_hi = g - (g - s)
        np.subtract(s, s_hi, out=s_lo)
        np.multiply(s_hi, u, out=pi)
        np.subtract(pi, p, out=pi)
        np.multiply(s_lo, u, out=t)
        np.add(pi, t, out=pi)  # pi = (s_hi u - p) + s_lo u
        # TwoSum(p, H_k) (Knuth): s + sigma = p + H_k exactly
        np.take(Ht[k], row, out=hk)
        np.add(p, hk, out=s)
        np.subtract(s, p, out=z)
        np.subtract(s, z, out=sigma)
        np.subtract(p, sigma, out=sigma)
        np.subtract(hk, z, out=t)
        np.add(sigma, t, out=sigma)  # sigma = (p - (s - z)) + (H_k - z)
        # c = c u + ((pi + sigma) + L_k)
        np.add(pi, sigma, out=pi)
        np.take(Lt[k], row, out=t)
        np.add(pi, t, out=pi)
        np.multiply(c, u, out=c)
        np.add(c, pi, out=c)
    return s, c


def _parts(s: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(n1, n2, f): s = n1 + f1, c = n2 + f2 with n1, n2 integral (np.floor is exact) and
    f = fl(f1^ + f2^), f_i^ = fl(x - floor(x)) within 2^-53 of the true fraction in [0, 1)."""
    n1 = np.floor(s)
    n2 = np.floor(c)
    return n1, n2, (s - n1) + (c - n2)


def _to_ints(n1: np.ndarray, n2: np.ndarray, k: np.ndarray) -> list[int]:
    """max(0, n1 + n2 + k) for integral doubles, as exact Python integers. The usual case in
    int64 (|n1| below 2^63 - 2^52, |n2| and |k| below 2^50): n1 = hi 2^32 + r with hi =
    floor(n1 2^-32) and r = n1 - hi 2^32 in [0, 2^32), each step exact (a power-of-two scaling,
    an exact floor, a difference that is an integer below 2^53); otherwise element by element."""
    if n1.size == 0:
        return []
    big = 2.0 ** 50
    if float(np.max(np.abs(n2))) < big and float(np.max(np.abs(k))) < big:
        rest = n2 + k  # exact: integers below 2^51
        hi = np.floor(n1 * 2.0 ** -32)
        r = n1 - hi * 2.0 ** 32
        if float(np.max(np.abs(hi))) < 2.0 ** 31 - 2.0 ** 20:  # |hi 2^32 + r + rest| < 2^63
            t = hi.astype(np.int64) * (1 << 32) + r.astype(np.int64) + rest.astype(np.int64)
            return np.maximum(t, 0).tolist()
    return [max(0, int(x) + int(y) + int(z)) for x, y, z in zip(n1.tolist(), n2.tolist(), k.tolist())]


def round_up(s: np.ndarray, c: np.ndarray, err: np.ndarray) -> list[int]:
    """Integers >= max(0, X) for every X with |X - s - c| <= err (err <= MAX_ERROR).

    Proof: X <= n1 + n2 + y, y = f1 + f2 + err with f_i the true fractions; fl's
    error in f_i is at most 2^-53 each, and r = fl(f + err) >= (f + err)(1 - u)^2 for these
    nonnegative terms (f = fl(f1^ + f2^) one of them), so y <= r + 3 u r + 2^-52 < r + 2^-30 (r <= 2^20 + 3). Then
    w = fl(r + 2^-20) >= r + 2^-20 - u (2^20 + 4) > r + 2^-30 >= y, and ceil(w) >= y."""
    n1, n2, f = _parts(s, c)
    w = (f + err) + 2.0 ** -20
    return _to_ints(n1, n2, np.ceil(w))


def round_down(s: np.ndarray, c: np.ndarray, err: np.ndarray) -> list[int]:
    """Integers <= X, clamped at 0, for every X with |X - s - c| <= err (err <= MAX_ERROR);
    X >= 0 is the caller's (a mass).

    Proof: X >= n1 + n2 + y, y = f1 + f2 - err >= f - 2^-52 - u f - err; r = fl(f - err)
    is within u (2^20 + 3) of f - err, so y > r - 2^-30; w = fl(r - 2^-20) <= r - 2^-20 +
    u (2^20 + 4) < r - 2^-30 < y, and floor(w) <= y."""
    n1, n2, f = _parts(s, c)
    w = (f - err) - 2.0 ** -20
    return _to_ints(n1, n2, np.floor(w))
