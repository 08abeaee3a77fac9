"""The second route's certified Fourier power: D^{*a} of a discretised pair in binary64 with a
proven error bound, rounded outward to the same integer units as the exact products of
:mod:`.pld` (upper masses and Q-masses up, P-masses of the lower pair down).

Its own implementation of the mathematics the producer uses (nothing from the arb side):
twiddle errors and every bound on MPFR through gmpy2 with directed rounding, or exact
integers; the butterflies are numpy element-wise ufuncs, one IEEE binary64 operation each
(numpy's ufuncs do not fuse a multiply and an add), in a radix-2 loop written here.

Let c be the integer masses of one step's vector (units 2^-K, indices 0..n-1) and x its
doubles, rounded up (upper pair, Q) or down (P); y = x^{*a}, Y = (c 2^-K)^{*a}.

1. **Inputs.** x_i = c_i 2^-K with c_i rounded to 53 bits by MPFR in the needed direction
   (exact: the scaling by 2^-K keeps a normal double for K <= :data:`MAX_K`). Convolution of
   nonnegative vectors is monotone, so y >= Y (up) or y <= Y (down) coefficientwise.

2. **Transform error** (Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed.,
   Lemma 3.5 and the argument of Thm 24.2 kept componentwise). A butterfly computes
   fl(a +- fl(w^ b)), |w^ - w| <= mu (:func:`_twiddles`, a bound in complex modulus), the complex product by the standard
   formula: |fl(w^ b) - w^ b| <= sqrt2 gamma_2 |w^| |b|, gamma_2 = 2u / (1 - 2u), u = 2^-53;
   each real component of the sum is rounded once (relative u). So an output is within
   eta (|a| + |b|) of the exact butterfly of its computed inputs, with
   eta = mu + sqrt2 gamma_2 (1 + mu) + u (1 + mu)(1 + sqrt2 gamma_2). Stage k is a matrix A_k
   of modulus-1 entries, and |v_k - A_k v_(k-1)| <= eta |A_k| |v_(k-1)| gives, by induction,
   |v_L - F x| <= ((1 + eta)^L - 1) |A_L| ... |A_1| |x|; in the radix-2 transform each input
   reaches each output along exactly one path, so that product is the all-ones matrix: every
   coefficient is within e = ((1 + eta)^L - 1) ||x||_1 of the exact DFT (N = 2^L).

3. **Power.** p_f = z^_f^a by binary powering, each complex product of relative error
   nu = sqrt2 gamma_2: |p_f - z^_f^a| <= ((1 + nu)^c - 1) |z^_f|^a with c the chain's product
   count (c -> 2c + 1 per squaring, c1 + c2 + 1 per product); and |z^_f^a - z_f^a| <=
   (|z^_f| + e)^a - |z^_f|^a (telescoping). Both bounds rise with |z^_f|, so they are summed
   over frequencies by counting r2 = fl(|z^_f|^2) in bins (exact comparisons of doubles),
   each bin evaluated at its upper edge: |z^_f|^2 <= (r2 + 2^-1000)(1 + 3u) (two roundings,
   an underflow of the squares at most 2^-1000). S1 >= sum_f |p_f|, SE >= sum_f |p_f - z_f^a|.

4. **Inverse.** IDFT(p) = conj(DFT(conj p)) / N (conjugation and the division by 2^L exact but
   for underflow), so every output is within Err = [((1 + eta)^L - 1) S1 + SE] / N (+ an
   underflow term, :data:`_UF`) of the circular convolution y_c[r] = sum_j y[r + j N]; its real
   part is taken (y is real, so that only helps).

5. **Window.** The outputs are read on N consecutive composed indices [W, W + N). As y >= 0,
   y_c >= y there (circular wrap only adds). Mass of Y outside the window is bounded by
   Chernoff: for lambda > 0, sum_(k >= t) Y_k <= e^(-lambda t) M(lambda)^a and
   sum_(k <= t) Y_k <= e^(lambda t) M(-lambda)^a, M(lambda) = 2^-K sum_i c_i e^(lambda i),
   all in MPFR rounded up; floats only choose lambda and the window. When the whole support
   a (n - 1) + 1 fits in N there is no wrap and no outside mass.

Outputs (integers in units 2^-K, E = ceil(2^K Err)):

* upper pair: ceil(2^K y_c) + E >= 2^K y >= 2^K Y on the window, the mass below it added at
  its first index (mass moved to a larger loss only raises the curve), the mass above it
  moved to +inf; +inf: ceil(2^K (1 - (1 - alpha)^a)) exactly (alpha = inf / 2^K; the composed
  mechanism's +inf mass is 1 - (1 - alpha_true)^a <= that, and its finite part <= Y).
* lower pair: P = max(0, floor(2^K y_c) - E) <= 2^K (Y + wrap), Q >= the composed Q on the
  window's classes (6) (the classes outside are dropped: each only loses its
  (P - e^eps Q)+ >= 0); the wrapped-in P-mass is at most the P-mass outside the window,
  returned as ``deficit`` D: sum over any set S of classes of (P - e^eps Q) is at least the
  same sum of the returned pair minus D, so the caller subtracts D once (:mod:`.pld`);
  +inf: floor(2^K (1 - (1 - alpha)^a)) exactly.

6. **Tilted Q.** Q-masses count e^eps times in delta, so an absolute float error in Q would
   cost e^eps more than in P. The Q vector is transformed tilted instead: x~_i >= Q_i 2^-K
   e^(h (off + i + c)) (h = 2^-m the grid; c = b // 2 for a vector that composes b steps: its
   class i holds losses in [(off + i) h, (off + i + b) h], so x~ is about P's size, Q ~ e^-loss
   P). Tilting by the character e^(h j) commutes with convolution, for any c: (x~)^{*a}_k =
   e^(h (a off + k + a c)) (x)^{*a}_k, so the composed Q at class k is at most
   e^(-h (a off + k + a c)) (y~_c[k] + Err~) with Err~ the bound of 4 for x~ (circular wrap only
   adds); in delta it counts e^(eps - loss) Err~ <= Err~ on the classes above eps, where
   (P - e^eps Q)+ is not 0. The factors e^(+-h j) are doubles >= the true
   value: two tables of MPFR exponentials rounded up to 53 bits (of exponents j 2^-m formed
   exactly from the integer j, :func:`_exp_up`), their float product and a
   float product by 1 + 2^-50 (each rounding to nearest loses at most a factor 1 - u of a
   positive normal value, and (1 - u)^2 (1 + 8u) >= 1); every later float product that must
   stay above its exact value is followed by the same factor ((1 - u)^4 (1 + 8u) >= 1 covers a
   chain of three more roundings). Losses are kept within +-:data:`_TILT_CAP` so that every
   value stays a normal double.

Every choice here (window, lambda, bins, whether to decline) is made from the inputs alone by
IEEE basic operations (correctly rounded, to nearest: checked, :func:`round_to_nearest`),
math.fsum and MPFR, never by numpy's or libm's exp / log (their last bits differ between
CPUs): the same inputs take the same path, and give the same integers, on every machine
(no clock).
"""

from __future__ import annotations

import math
from typing import Callable, Optional

import gmpy2
import numpy as np
from gmpy2 import mpfr, mpz

__all__ = ["Declined", "fourier_upper", "fourier_upper_tilted", "fourier_lower", "fourier_lower_tilted", "MAX_N",
           "MAX_K"]

#: largest transform (memory: about ten arrays of N doubles)
MAX_N = 1 << 21
#: largest unit exponent: every nonzero mass c 2^-K stays a normal double, and 2^K Err's
#: underflow term (2^-900) stays far below one unit
MAX_K = 800
_PREC = 128
#: per output, above every underflow contribution: an operation whose result is below 2^-1022
#: errs by at most 2^-1022 (flush to zero) or 2^-1075 (gradual underflow); at most
#: 2^21 * 64 operations feed one output (and the division by N of a subnormal loses < 2^-1074)
_UF_BITS = 900

_UP = gmpy2.context(precision=_PREC, round=gmpy2.RoundUp)
_DN = gmpy2.context(precision=_PREC, round=gmpy2.RoundDown)
_NEAR = gmpy2.context(precision=_PREC, round=gmpy2.RoundToNearest)
_UP53 = gmpy2.context(precision=53, round=gmpy2.RoundUp)
_DN53 = gmpy2.context(precision=53, round=gmpy2.RoundDown)
_U = mpfr(2) ** -53


class Declined(Exception):
    """The Fourier power cannot certify within the allowance; the caller uses the exact
    products. ``factor``: how many times too large the bound was (None: no smaller power helps)."""

    def __init__(self, why: str, factor: Optional[float] = None) -> None:
        super().__init__(why)
        self.factor = factor


def round_to_nearest() -> bool:
    """Whether numpy's binary64 operations round to nearest in this process (the error bounds
    assume it): 1 + 0.75 ulp rounds to 1 + ulp only to nearest or upward, -1 - 0.75 ulp to
    -1 - ulp only to nearest or downward, so both hold only for round to nearest."""
    one = np.array([1.0, -1.0])
    d = np.array([0.75 * 2.0 ** -52, -0.75 * 2.0 ** -52])
    s = one + d
    return bool(s[0] == 1.0 + 2.0 ** -52 and s[1] == -1.0 - 2.0 ** -52)


def _up(x) -> mpfr:
    return _UP.plus(x)


def _gamma_nu() -> mpfr:
    """nu = sqrt2 gamma_2 rounded up (Higham Lemma 3.5)."""
    g2 = _UP.div(_UP.mul(2, _U), _DN.sub(1, _UP.mul(2, _U)))
    return _UP.mul(_UP.sqrt(2), g2)


def _table(n: int, N: int) -> tuple[np.ndarray, np.ndarray, mpfr]:
    """cos, sin of 2 pi k / N for k < n as doubles and mu >= |w^_k - w_k| over k < n, the
    error of the complex entry w^_k = cos^ + i sin^ in modulus (MPFR upper end). The angle is
    enclosed in [x_lo, x_hi] (pi rounded each way); cos and sin are 1-Lipschitz, so each value
    lies within x_hi - x_lo of f(x_lo), itself enclosed by MPFR's correctly rounded f in both
    directions; the double is the nearest one to the midpoint and its error e_f the larger
    distance to the enclosure's ends (rounded up). The modulus error is sqrt(e_cos^2 + e_sin^2)
    rounded up (up to sqrt2 times one component's error: the componentwise bound alone is not
    one of |w^ - w|)."""
    c = np.empty(n)
    s = np.empty(n)
    worst = mpfr(0)
    pi_lo, pi_hi = _DN.const_pi(), _UP.const_pi()
    for k in range(n):
        x_lo = _DN.div(_DN.mul(pi_lo, 2 * k), N)
        x_hi = _UP.div(_UP.mul(pi_hi, 2 * k), N)
        w = _UP.sub(x_hi, x_lo)
        sq = mpfr(0)
        for f_dn, f_up, out in ((_DN.cos(x_lo), _UP.cos(x_lo), c), (_DN.sin(x_lo), _UP.sin(x_lo), s)):
            lo, hi = _DN.sub(f_dn, w), _UP.add(f_up, w)
            d = float(_NEAR.div(_NEAR.add(lo, hi), 2))
            out[k] = d
            err = max(_UP.sub(hi, d), _UP.sub(d, lo))
            sq = _UP.add(sq, _UP.mul(err, err))
        err = _UP.sqrt(sq)
        if err > worst:
            worst = err
    return c, s, worst


_TW: dict[int, tuple[np.ndarray, np.ndarray, mpfr]] = {}


def _twiddles(N: int) -> tuple[np.ndarray, np.ndarray, mpfr]:
    """cos, sin of 2 pi k / N for k < N / 2 and mu >= |w^_k - w_k| over all k: entry
    k = k_h B + k_l is the binary64 product (standard formula) of two table entries of about
    sqrt(N / 2) each (:func:`_table`), so mu = mu_h (1 + mu_l) + mu_l + nu (1 + mu_h)(1 + mu_l)
    (Higham Lemma 3.5 for the product). Cached by N: the same N always gives the same table."""
    hit = _TW.get(N)
    if hit is not None:
        return hit
    half = max(1, N // 2)
    B = 1 << (((half - 1).bit_length() + 1) // 2)
    if B == 1:
        out = _table(half, N)
    else:
        ch, sh, mh = _table((half + B - 1) // B, N // B)
        cl, sl, ml = _table(B, N)
        c = (np.outer(ch, cl) - np.outer(sh, sl)).ravel()[:half]
        s = (np.outer(sh, cl) + np.outer(ch, sl)).ravel()[:half]
        mu = _UP.add(_UP.add(_UP.mul(mh, _UP.add(1, ml)), ml),
                     _UP.mul(_gamma_nu(), _UP.mul(_UP.add(1, mh), _UP.add(1, ml))))
        out = (c, s, mu)
    if len(_TW) >= 4:
        _TW.pop(next(iter(_TW)))
    _TW[N] = out
    return out


def _bitrev(L: int) -> np.ndarray:
    r = np.zeros(1, dtype=np.int64)
    for _ in range(L):
        r = np.concatenate([2 * r, 2 * r + 1])
    return r


def fft(re: np.ndarray, im: np.ndarray, table: "tuple | None" = None) -> tuple[np.ndarray, np.ndarray, mpfr]:
    """sum_i x_i e^(-2 pi i k i / N) by radix-2 decimation in time (module docstring 2):
    (re, im, mu). ``table``: (cos, sin, mu) in place of :func:`_twiddles` (tests only)."""
    N = re.size
    L = N.bit_length() - 1
    cos, sin, mu = _twiddles(N) if table is None else table
    perm = _bitrev(L)
    xr = np.ascontiguousarray(re[perm], dtype=np.float64)
    xi = np.ascontiguousarray(im[perm], dtype=np.float64)
    for s in range(1, L + 1):
        half = 1 << (s - 1)
        stride = N >> s
        wr = cos[::stride][:half]
        wi = -sin[::stride][:half]  # w = e^(-2 pi i j / 2^s); negation exact
        R = xr.reshape(-1, 2 * half)
        I_ = xi.reshape(-1, 2 * half)
        ar, ai, br, bi = R[:, :half], I_[:, :half], R[:, half:], I_[:, half:]
        tr = wr * br - wi * bi  # three IEEE operations per component, no fusion
        ti = wr * bi + wi * br
        np.subtract(ar, tr, out=br)
        np.subtract(ai, ti, out=bi)
        ar += tr
        ai += ti
    return xr, xi, mu


def _eta(mu: mpfr) -> mpfr:
    nu = _gamma_nu()
    return _UP.add(_UP.add(mu, _UP.mul(nu, _UP.add(1, mu))), _UP.mul(_UP.mul(_U, _UP.add(1, mu)), _UP.add(1, nu)))


def growth(mu: mpfr, L: int) -> mpfr:
    """(1 + eta)^L - 1 rounded up (module docstring 2)."""
    return _UP.sub(_UP.pow(_UP.add(1, _eta(mu)), L), 1)


def _pow(re: np.ndarray, im: np.ndarray, a: int) -> tuple[np.ndarray, np.ndarray, int]:
    """z^a element-wise by binary powering, standard complex products; the chain count c."""
    rr = ri = None
    rc = 0
    br, bi, bc = re, im, 0
    while True:
        if a & 1:
            if rr is None:
                rr, ri, rc = br, bi, bc
            else:
                rr, ri = rr * br - ri * bi, rr * bi + ri * br
                rc = rc + bc + 1
        a >>= 1
        if not a:
            break
        br, bi = br * br - bi * bi, 2.0 * (br * bi)  # 2 x exact
        bc = 2 * bc + 1
    assert rr is not None and ri is not None
    return rr, ri, rc


def _bins(r2: np.ndarray, a: int) -> tuple[list, list]:
    """Edges e_0 = max > e_1 > ... (doubles; floats choose them) and counts: bin j < J holds
    the values in (e_(j+1), e_j], the last bin those <= e_J (exact comparisons)."""
    srt = np.sort(r2)
    top = float(srt[-1])
    if not top > 0:
        return [0.0], [r2.size]
    edges = [top]
    j = 1.0
    while j <= 4400:
        e = float(_NEAR.mul(top, _NEAR.exp2(-j / (2.0 * a))))  # MPFR: the same edge on any machine
        if not e > 0:
            break
        if e < edges[-1]:
            edges.append(e)
        j = j + 0.25 if j < 16 else j * 1.25
    le = np.searchsorted(srt, np.array(edges), side="right")
    counts = [int(le[i] - le[i + 1]) for i in range(len(edges) - 1)] + [int(le[-1])]
    return edges, counts


def power_bounds(r2: np.ndarray, a: int, e: mpfr, c: int) -> tuple[mpfr, mpfr]:
    """(S1, SE) of module docstring 3, given r2 = fl(|z^_f|^2) of every frequency, the
    transform error e and the chain count c (MPFR, rounded up)."""
    edges, counts = _bins(r2, a)
    nu = _gamma_nu()
    g_up = _UP.pow(_UP.add(1, nu), c)
    g1 = _UP.sub(g_up, 1)
    slack = _UP.add(1, _UP.mul(3, _U))
    tiny = mpfr(2) ** -1000
    S1 = mpfr(0)
    SE = mpfr(0)
    for edge, n in zip(edges, counts):
        if n == 0:
            continue
        r = _UP.sqrt(_UP.mul(_UP.add(edge, tiny), slack))
        ra_up, ra_dn = _UP.pow(r, a), _DN.pow(r, a)
        S1 = _UP.add(S1, _UP.mul(n, _UP.mul(g_up, ra_up)))
        term = _UP.add(_UP.mul(g1, ra_up), _UP.sub(_UP.pow(_UP.add(r, e), a), ra_dn))
        SE = _UP.add(SE, _UP.mul(n, term))
    base = _UP.add(_UP.sqrt(_UP.mul(_UP.add(edges[0], tiny), slack)), e)
    grow_uf = _UP.pow(base, c + 1) if base > 1 else mpfr(1)
    uf = _UP.mul(_UP.mul(r2.size * (c + 1), mpfr(2) ** -_UF_BITS), grow_uf)
    return _UP.add(S1, uf), _UP.add(SE, uf)


def _floats(c: list, K: int, up: bool) -> np.ndarray:
    """c_i 2^-K as doubles, the masses c_i >= 0 rounded to 53 bits toward +inf (``up``) or -inf
    (:func:`_round53`, exact integer arithmetic on all of c at once; it replaced one MPFR division per
    mass, whose doubles it gives bit for bit); the scaling by 2^-K is exact (a normal double for
    K <= :data:`MAX_K`)."""
    if not c:
        return np.zeros(0, dtype=np.float64)
    if min(c) < 0:
        raise ValueError("masses are nonnegative integers")
    return np.ldexp(_round53(c, up), -K)


def _round53(c: list, up: bool) -> np.ndarray:
    """The integers c_i >= 0 rounded to 53 significant bits toward +inf (``up``) or -inf, as doubles
    (exact: a 53-bit integer times a power of two below 2^1024), computed on 64-bit limbs with numpy
    integer operations, exact throughout (2.4x faster than one MPFR division per mass at 65-128 bits:
    0.041 -> 0.017 CPU s for the 137,153 masses of delta(0.947) at sigma 4, q 0.01, T 10^4).

    c is packed into slots of 64 L bits (L limbs, c_i < 2^(64 L)), each slot read as L little-endian
    uint64 limbs. For c_i > 0 with top nonzero limb t and that limb's bit length b (1..64), c_i has
    64 t + b bits; w = the top 64 of them (limb t shifted up by 64 - b, filled from limb t - 1) has its
    top bit set, so M = w >> 11 is c_i's top 53 bits and c_i = M 2^E + r with E = 64 t + b - 53 and
    0 <= r < 2^E; r = 0 iff w's low 11 bits, the bits of limb t - 1 below the ones taken and all
    limbs below t - 1 are zero. Rounded down: M 2^E (truncation is rounding toward -inf for c_i > 0);
    up: (M + [r > 0]) 2^E, M + 1 <= 2^53 exact in a double. c_i = 0 gives 0. These are MPFR's
    RoundDown / RoundUp to 53 bits (tests/recheck/test_fourier.py checks them against it)."""
    n = len(c)
    B = int(max(c)).bit_length()
    if B <= 53:  # every entry is an exact double
        return np.fromiter((float(v) for v in c), dtype=np.float64, count=n)
    L = -(-B // 64)
    A = np.frombuffer(gmpy2.pack(list(c), 64 * L).to_bytes(8 * L * n, "little"), dtype="<u8").reshape(n, L)
    nz = A != 0
    rows = np.arange(n)
    t = L - 1 - np.argmax(nz[:, ::-1], axis=1)  # top nonzero limb (0 for a zero row)
    hi = A[rows, t]
    lo = np.where(t >= 1, A[rows, np.maximum(t - 1, 0)], np.uint64(0))
    seen = np.logical_or.accumulate(nz, axis=1)  # seen[i, j]: a nonzero limb at or below j
    below = (t >= 2) & seen[rows, np.maximum(t - 2, 0)]
    b = np.zeros(n, dtype=np.int64)  # bit length of hi minus 1, by halving (hi > 0 in a nonzero row)
    h = hi.copy()
    for k in (32, 16, 8, 4, 2, 1):
        big = h >= np.uint64(1 << k)
        h = np.where(big, h >> np.uint64(k), h)
        b += np.where(big, k, 0)
    b += 1
    full = b == 64  # then w is limb t itself and all of limb t - 1 is below it
    sh = (64 - b) % 64  # 0..63: shifts by 64 are not defined
    w = (hi << sh.astype(np.uint64)) | np.where(full, np.uint64(0), lo >> (b % 64).astype(np.uint64))
    rest = np.where(full, lo, lo & ((np.uint64(1) << (b % 64).astype(np.uint64)) - np.uint64(1)))
    M = w >> np.uint64(11)
    if up:
        M = M + (((w & np.uint64(0x7FF)) != 0) | (rest != 0) | below).astype(np.uint64)
    out = np.ldexp(M.astype(np.float64), (64 * t + b - 53).astype(np.int32))  # exponents below 2^20
    return np.where(hi != 0, out, 0.0)


def _l1_up(c: list, K: int, up: bool) -> mpfr:
    """An upper bound of ||x||_1 for x = :func:`_floats` (c, K, up), from the exact integers:
    rounding to 53 bits toward +inf multiplies by less than 1 + 2^-52, toward -inf by at most 1."""
    s = _UP.mul(mpz(sum(c)), mpfr(2) ** -K)
    return _UP.mul(s, _UP.add(1, mpfr(2) ** -52)) if up else s


def _chernoff(c: list, K: int, a: int, t: int, above: bool, lam: float) -> mpfr:
    """An upper bound of the mass of (c 2^-K)^{*a} at composed indices >= t (``above``) or
    <= t (module docstring 5), lambda a dyadic near ``lam``; MPFR rounded up throughout."""
    lq = mpfr(round(lam * 2 ** 24)) / 2 ** 24  # exact dyadic
    if not lq > 0:
        raise Declined("no usable Chernoff parameter")
    E = _UP.exp(lq if above else -lq)
    M = mpfr(0)
    for v in reversed(c):  # Horner: every term >= 0, each operation rounded up
        M = _UP.add(_UP.mul(M, E), v)
    M = _UP.mul(M, mpfr(2) ** -K)
    if not M > 0:
        return mpfr(0)
    lt = _DN.mul(lq, t) if above else _UP.mul(lq, t)  # lambda t, in the direction that raises the bound
    return _UP.exp(_UP.sub(_UP.mul(a, _UP.log(M)), lt) if above else _UP.add(_UP.mul(a, _UP.log(M)), lt))


# The choices below (window, lambda, bins, declines) are made by floats, and each is followed
# by a proof, so they only decide tightness and speed; they are made from IEEE basic operations
# (+ - * / and exact ldexp / frexp / rint, correctly rounded on every machine, one numpy ufunc
# each, never fused), math.fsum and MPFR (correctly rounded), never numpy's or libm's exp / log,
# whose last bits differ between CPUs (numpy's AVX512 kernels against libm; revfft F4).

_LN2_HI = 6.93147180369123816490e-01  # fdlibm's split of ln 2: k ln2_hi exact for |k| < 2^11
_LN2_LO = 1.90821492927058770002e-10
#: 64 lambdas from 10^-7 to 50 in geometric steps, by MPFR (one fixed list on every machine)
_LAMBDAS = [float(_NEAR.exp(_NEAR.add(_NEAR.log(mpfr("1e-7")),
                                      _NEAR.mul(_NEAR.div(k, 63), _NEAR.log(_NEAR.div(mpfr(50), mpfr("1e-7")))))))
            for k in range(64)]


#: 2^(j/64), j < 64, and ln2 / 64 split so that k times its high part is exact for |k| < 2^21
_EXP2_64 = np.array([float(_NEAR.exp2(_NEAR.div(j, 64))) for j in range(64)])
_L64_HI = float(gmpy2.context(precision=32).div(_NEAR.const_log2(), 64))
_L64_LO = float(_NEAR.sub(_NEAR.div(_NEAR.const_log2(), 64), _L64_HI))
_INV_L64 = float(_NEAR.div(64, _NEAR.const_log2()))


def _exp_det(v: np.ndarray) -> np.ndarray:
    """e^v for v <= 0 (to about 1e-13 relative, enough for a choice; 0 below -745) by basic
    operations only: v = (64 q + j) ln2 / 64 + r, |r| <= ln2 / 128, e^v = 2^q 2^(j/64) e^r, e^r by
    its Taylor polynomial to r^4 (remainder < 5e-14)."""
    vc = np.maximum(v, -746.0)
    kf = np.rint(vc * _INV_L64)
    r = (vc - kf * _L64_HI) - kf * _L64_LO
    p = 1.0 + r * (1.0 + r * (0.5 + r * (1.0 / 6 + r * (1.0 / 24))))
    k = kf.astype(np.int64)
    return np.where(v < -745.0, 0.0, np.ldexp(_EXP2_64[k & 63] * p, k >> 6))


def _log_det(x: np.ndarray) -> np.ndarray:
    """log x for positive normal doubles (to about 1e-15 relative) by basic operations only:
    x = f 2^e, f in [sqrt(1/2), sqrt2), log f = 2 atanh(s), s = (f - 1)/(f + 1), |s| < 0.172,
    by its series to s^41 (remainder < 1e-30)."""
    f, e = np.frexp(x)
    small = f < 0.7071067811865476
    f = np.where(small, f * 2.0, f)
    e = (e - small).astype(np.float64)
    s = (f - 1.0) / (f + 1.0)
    s2 = s * s
    p = np.full(x.shape, 1.0 / 41)
    for i in range(39, 0, -2):
        p = p * s2 + 1.0 / i
    out: np.ndarray = e * _LN2_HI + (e * _LN2_LO + 2.0 * s * p)
    return out


def _log_sum(e: np.ndarray) -> float:
    """log sum e_i for doubles in [0, 1], one of them 1: each e_i 2^s truncated to an integer,
    s = 62 - bits(n) (the sum stays below 2^62), summed exactly in int64, its log by MPFR
    (relative error of the sum below n 2^-s <= 2^-20)."""
    sh = 62 - e.size.bit_length()
    total = int(np.ldexp(e, sh).astype(np.int64).sum())
    return float(_NEAR.sub(_NEAR.log(total), _NEAR.mul(sh, _NEAR.const_log2())))


def _logs(x: np.ndarray) -> np.ndarray:
    """log x_i (-inf for 0) of doubles >= 0 by :func:`_log_det` (floats: a choice only)."""
    return np.where(x > 0, _log_det(np.where(x > 0, x, 1.0)), -np.inf)


def _log_mgf(logx: np.ndarray, idx: np.ndarray, lam: float) -> float:
    """Floats only: log sum_i x_i e^(lam i) from ``logx`` = :func:`_logs` (x), ``idx`` = 0..n-1."""
    z = logx + lam * idx
    zm = float(z.max())
    return zm + _log_sum(_exp_det(z - zm))


def _tail_point(x: np.ndarray, a: int, log_target: float, above: bool) -> tuple[int, float]:
    """Floats only: the composed index t and lambda whose Chernoff bound of the mass beyond t is
    about e^log_target, the best over a geometric scan of lambda: every fourth lambda, then the
    three on each side of the best of those. The exponent (a log M(lambda) - log_target) / lambda
    has a derivative whose numerator a (lambda psi' - psi) + C rises with lambda (psi = log M is
    convex), so it falls, then rises: its least value over the whole list lies within three
    steps of *some* coarse point of least value; with ties among the coarse points (the keys are
    integers) the first is taken, so the window may be a little wider than the full scan's (revfast
    P1: never seen in 33,000 random cases). Either way this only chooses: the Chernoff bound is
    proved for whatever lambda is taken."""
    idx = np.arange(x.size, dtype=np.float64)
    logx = _logs(x)
    sgn = 1.0 if above else -1.0
    keys: dict = {}

    def point(k: int) -> tuple:
        if k not in keys:
            lam = _LAMBDAS[k]
            logM = _log_mgf(logx, idx, sgn * lam)
            r = (a * logM - log_target) / lam  # sgn * t at which the bound reaches the target
            t = math.ceil(r) if above else -math.ceil(r)
            keys[k] = (t if above else -t, k, t, float(lam))
        return keys[k]

    coarse = min(point(k) for k in range(0, len(_LAMBDAS), 4))
    best = min(point(k) for k in range(max(0, coarse[1] - 3), min(len(_LAMBDAS), coarse[1] + 4)))
    return best[2], best[3]


def _window(c: list, x: np.ndarray, K: int, a: int, allowance: int) -> tuple[int, int, mpfr, mpfr]:
    """(N, W, lo_m, hi_m): transform length, first composed index of the window, and proven
    bounds of the mass of (c 2^-K)^{*a} below and above it (module docstring 5)."""
    n = len(c)
    full = a * (n - 1) + 1
    whole = max(2, 1 << (full - 1).bit_length())
    target = _scaled(max(allowance, 1), K + 4)
    log_target = float(_NEAR.log(target))
    t_hi, lam_hi = _tail_point(x, a, log_target, True)
    t_lo, lam_lo = _tail_point(x, a, log_target, False)
    if t_lo < 0 and t_hi >= full:
        return whole, 0, mpfr(0), mpfr(0)
    t_lo, t_hi = max(t_lo, -1), min(t_hi, full)
    N = max(2, 1 << (t_hi - t_lo - 1).bit_length(), 1 << (n - 1).bit_length())
    if N >= full:
        return whole, 0, mpfr(0), mpfr(0)
    W = max(0, min(full - N, t_lo + 1 - (N - (t_hi - t_lo - 1)) // 2))
    hi_m = _chernoff(c, K, a, W + N, True, lam_hi) if W + N < full else mpfr(0)
    lo_m = _chernoff(c, K, a, W - 1, False, lam_lo) if W > 0 else mpfr(0)
    return N, W, lo_m, hi_m


def _ints(v: np.ndarray, K: int, up: bool) -> list:
    """ceil(2^K v) (``up``) or floor(2^K v) as integers: the scaling by 2^K is exact, and so
    are ceil / floor of a double and its conversion to an integer."""
    s = np.ldexp(v, K)
    s = np.ceil(s) if up else np.floor(s)
    return [int(t) for t in s.tolist()]


#: bits K a of :func:`_inf_power`'s exact integers beyond which it works in MPFR (at a = 10^5,
#: K = 80 the integers took 2.9 CPU s of the tilted power's 5)
_INF_EXACT_BITS = 1 << 20


def _inf_power(inf: int, K: int, a: int, up: bool, exact_bits: int = _INF_EXACT_BITS) -> int:
    """2^K (1 - (1 - inf / 2^K)^a) rounded up or down (it rises with inf): in exact integers while
    K a <= ``exact_bits``, else in MPFR at K + 64 bits, where 1 - inf 2^-K is exact (K + 1 bits), its
    a-th power is rounded down (result up) or up (result down) (mpfr_pow is correctly rounded in each
    direction), 1 minus it rounded the other way, the scaling by 2^K exact, and the ceiling / floor
    taken of the exact rational: at most one unit past the exact integer result. Where K a passes
    MPFR's exponent range the power underflows to 0 (rounded down) or to the least positive number
    (rounded up): the result is then the whole 2^K (up) or one unit below it at most (down), each
    still on its side (ref45 L4)."""
    if inf <= 0:
        return 0
    inf = min(inf, 1 << K)
    if K * a <= exact_bits:
        one = 1 << K
        num = (one ** a - (one - inf) ** a)
        sh = K * (a - 1)
        return -((-num) >> sh) if up else num >> sh
    p = K + 64
    hi = gmpy2.context(precision=p, round=gmpy2.RoundUp)
    lo = gmpy2.context(precision=p, round=gmpy2.RoundDown)
    q = hi.mul_2exp(mpfr(mpz((1 << K) - inf), p), -K)  # exact
    v = hi.mul_2exp(hi.sub(1, lo.pow(q, a)), K) if up else lo.mul_2exp(lo.sub(1, hi.pow(q, a)), K)
    n, d = v.as_integer_ratio()
    return -((-n) // d) if up else max(0, n // d)


def _cap(allowance: int, K: int) -> int:
    """The allowance, at most 2^1000 times the unit mass 2^K: it only decides whether to
    decline, so a smaller one is as sound, and 2^-K times it stays a finite double (an
    allowance past 2^1024 raised OverflowError in the float choices, not Declined). The cap
    stays far above any error a tilted Q (masses up to e^200 a step) can meet."""
    return min(allowance, 1 << (K + 1000))


def _scaled(v: int, k: int) -> float:
    """v 2^-k as a double (MPFR, correctly rounded: no conversion of a large v to float)."""
    return float(_NEAR.mul(v, mpfr(2) ** -k))


def _check(K: int, a: int, c: list) -> None:
    if K > MAX_K:
        raise Declined("mass unit below the binary64 range")
    if a < 2 or not c or not any(c):
        raise Declined("nothing to power")
    if not round_to_nearest():
        raise Declined("binary64 arithmetic does not round to nearest in this process")


def _transform_power(x: np.ndarray, N: int, a: int, mass: mpfr) -> tuple[np.ndarray, mpfr]:
    """The circular a-fold convolution of x padded to N (doubles) and Err (module 2-4)."""
    pad = np.zeros(N)
    pad[: x.size] = x
    zr, zi, mu = fft(pad, np.zeros(N))
    L = N.bit_length() - 1
    grow = growth(mu, L)
    e = _UP.add(_UP.mul(grow, mass), mpfr(2) ** -_UF_BITS)
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        pr, pi, c = _pow(zr, zi, a)
        if not (np.all(np.isfinite(pr)) and np.all(np.isfinite(pi))):
            raise Declined("power out of range")
        r2 = zr * zr + zi * zi
    S1, SE = power_bounds(r2, a, e, c)
    yr, _, _ = fft(pr, -pi)
    err = _UP.add(_UP.div(_UP.add(_UP.mul(grow, S1), SE), N), _UP.mul(2, mpfr(2) ** -_UF_BITS))
    return yr / N, err


def transform_work(N: int, a: int) -> int:
    """The work of one :func:`_transform_power` of length ``N`` to the power ``a``, in the units of
    :class:`.pld._Meter` (about 1e-8 CPU s each here, as its knots x bits): N x (2 x the bit length of
    a, the squarings and products of :func:`_pow`, + log2 N, the two transforms). A count, no proof:
    it is charged to the re-check's meter when the power declines (issue 22: a declined 2^21-long
    lower power cost 3 CPU s that no price covered)."""
    return N * (2 * a.bit_length() + N.bit_length())


def _charge(price: "Callable[[int], None] | None", N: int, a: int) -> None:
    """``price`` (the caller's count, :func:`.pld._fourier_kernel`) told the work of one transform
    power before it is done."""
    if price is not None:
        price(transform_work(N, a))


def _spent(N: int, err: mpfr, outside: mpfr, K: int, allowance: int) -> None:
    """Declines (with the factor) when N Err + the outside mass exceeds allowance 2^-K."""
    spent = _UP.add(_UP.mul(N, err), outside)
    limit = _DN.mul(allowance, mpfr(2) ** -K)
    if not spent <= limit:
        ratio = float(spent) / max(float(limit), 1e-300)
        raise Declined("the float error bound exceeds the allowance", ratio if math.isfinite(ratio) else None)


def _floor_check(x: np.ndarray, N: int, a: int, K: int, allowance: int) -> None:
    """Floats only: the inverse transform alone errs by about L eta mass^a in all; a power whose
    allowance is below that is the exact products' job (no smaller power lowers it)."""
    _decline_below_floor(math.fsum(x.tolist()), N, a, K, allowance)


def _early_floor_check(c: list, a: int, K: int, allowance: int) -> None:
    """:func:`_floor_check` before the float conversion and the window's tail search (about
    4 CPU s at 2^-17, T = 1000, digits 6, where the floor declines every time): the shortest
    transform :func:`_window` can choose (the input's own length, rounded up to a power of two)
    and the mass of the exact integers shrunk by 2^-40 (the doubles of :func:`_floats` sum to
    at least that), so each factor is at most the later check's and a decline here is one
    there. Floats only: it chooses the route, it proves nothing."""
    N = max(2, 1 << (len(c) - 1).bit_length())
    mass = _scaled(sum(c), K) * (1.0 - 2.0 ** -40)
    _decline_below_floor(mass, N, a, K, allowance, 1.0 - 2.0 ** -30)


def _decline_below_floor(mass: float, N: int, a: int, K: int, allowance: int, shrink: float = 1.0) -> None:
    L = max(1, N.bit_length() - 1)
    floor = L * 12 * 2.0 ** -53 * (float(_NEAR.exp(min(700.0, a * float(_NEAR.log(mass))))) if mass > 0 else 0.0)
    if floor * shrink > _scaled(allowance, K + 1):
        raise Declined("the allowance is below the binary64 error floor")


def _window_values(y: np.ndarray, N: int, W: int) -> np.ndarray:
    return y[np.arange(W, W + N) % N]


def fourier_upper(d: tuple, a: int, K: int, allowance: int, price: "Callable[[int], None] | None" = None) -> tuple:
    """(off, masses, inf)^{*a} of an upper pair (integers in units 2^-K) as an upper pair of
    the same kind (module docstring), or Declined when the proven error plus the mass outside
    the window exceeds ``allowance`` units."""
    off, c, inf = d
    _check(K, a, c)
    allowance = _cap(allowance, K)
    _early_floor_check(c, a, K, allowance)
    x = _floats(c, K, True)
    N, W, lo_m, hi_m = _window(c, x, K, a, allowance)
    if N > MAX_N:
        raise Declined("transform longer than the memory budget")
    _floor_check(x, N, a, K, allowance)
    _charge(price, N, a)
    y, err = _transform_power(x, N, a, _l1_up(c, K, True))
    _spent(N, err, _UP.add(lo_m, hi_m), K, allowance)
    E = int(_UP.ceil(_UP.mul(err, mpfr(2) ** K)))
    out = [max(0, v + E) for v in _ints(_window_values(y, N, W), K, True)]
    out[0] += int(_UP.ceil(_UP.mul(lo_m, mpfr(2) ** K)))
    inf_out = _inf_power(inf, K, a, True) + int(_UP.ceil(_UP.mul(hi_m, mpfr(2) ** K)))
    return (a * off + W, out, inf_out)


#: largest |loss| of an output tilt factor e^(+-loss) (module docstring 6): e^600 < 2^866, so a
#: mass below 2^803 units times it stays finite; the inputs' losses stay within _TILT_IN_CAP and
#: their unit within 2^-_TILT_MAX_K, so that 2^-700 e^-200 > 2^-989 stays a normal double
_TILT_CAP = 600
_TILT_IN_CAP = 200
_TILT_MAX_K = 700
_UP8 = 1.0 + 2.0 ** -50  # 1 + 8u, exact
_DN8 = 1.0 - 2.0 ** -50  # 1 - 8u, exact


def _exp_up(j: int, m: int, up: bool = True) -> float:
    """A double >= e^(j 2^-m) (``up``; else <=): the exponent j / 2^m is formed at the precision
    of j's bits (so exactly; rounded up were it not), its exponential rounded up (down) to 53
    bits. A conversion of j at the default 53 bits would round it for |j| > 2^53 (a grid 2^-60
    at losses of tens), either way, and could leave the factor on the wrong side of the truth."""
    ctx = gmpy2.context(precision=max(53, abs(j).bit_length() + 1), round=gmpy2.RoundUp)
    return float((_UP53 if up else _DN53).exp(ctx.div(mpz(j), mpz(1) << m)))


def _exp_table(j0: int, count: int, m: int, sign: int, step: int = 1, up: bool = True) -> np.ndarray:
    """Doubles g_t >= e^(sign (j0 + t step) 2^-m) for t < count (module docstring 6; ``up``
    False: g_t <= that): entry t = k B + l is the product of e^(sign (j0 + k B step) 2^-m) and
    e^(sign l step 2^-m), each rounded the same way, and of the rounding factor _UP8 (_DN8:
    fl(fl(a b)(1 - 8u)) <= a b (1 + u)^2 (1 - 8u) <= a b). The factor covers the product's one
    rounding only for normal doubles: the callers keep every exponent within +-600
    (:func:`_tilt_ok`), so each product lies in [e^-600, e^600], far inside the normal range
    (ref45 L1); a factor need not (the second one reaches e^(2 cap (B - 1) / count)), so a table
    with a non-finite entry is declined: an overflow to inf is no lower bound (reftilt L2)."""
    B = 1 << (((max(count, 2) - 1).bit_length() + 1) // 2)
    hi = np.array([_exp_up(sign * (j0 + k * B * step), m, up) for k in range((count + B - 1) // B)])
    lo = np.array([_exp_up(sign * t * step, m, up) for t in range(B)])
    with np.errstate(over="ignore", invalid="ignore"):
        g = np.outer(hi, lo).ravel()[:count] * (_UP8 if up else _DN8)
    if not np.all(np.isfinite(g)):
        raise Declined("a tilt factor past the double range")
    return g


def _tilt_ok(j0: int, count: int, m: int, cap: int, step: int = 1) -> bool:
    """Whether every exponent (j0 + t step) 2^-m, t <= count, lies within +-cap (it is linear
    in t: its ends decide)."""
    return max(abs(j0), abs(j0 + count * step)) <= cap << m


def _sum_up(x: np.ndarray) -> mpfr:
    """sum x_i (doubles >= 0) rounded up (MPFR, each addition rounded up)."""
    s = mpfr(0)
    for v in x.tolist():
        s = _UP.add(s, v)
    return s


def fourier_lower(d: tuple, a: int, K: int, allowance: int, m: int, b: int = 1,
                  price: "Callable[[int], None] | None" = None) -> tuple[tuple, int]:
    """((off, P, Q, inf), deficit): (off, P, Q, inf)^{*a} of a lower pair on the grid 2^-m that
    composes b steps, as a lower pair of the same kind on the window's classes, and D >= the
    P-mass wrapped into it (module docstring), Q through its tilt (6; any b is sound, the right
    one keeps the bound tight), or Declined as :func:`fourier_upper`."""
    off, P, Q, inf = d
    _check(K, a, P)
    allowance = _cap(allowance, K)
    _early_floor_check(P, a, K, allowance)
    if len(Q) != len(P):
        raise Declined("P and Q of different lengths")
    n = len(P)
    c = b // 2
    if K > _TILT_MAX_K or not _tilt_ok(off + c, n, m, _TILT_IN_CAP):
        raise Declined("a step's losses beyond the tilt's range")
    xP = _floats(P, K, False)
    xQ = _floats(Q, K, True) * _exp_table(off + c, n, m, 1) * _UP8  # two roundings: (1-u)^2 (1+8u) >= 1
    if not np.all(np.isfinite(xQ)):
        raise Declined("tilted masses out of range")
    N, W, lo_m, hi_m = _window(P, xP, K, a, allowance)
    if N > MAX_N:
        raise Declined("transform longer than the memory budget")
    j0 = a * (off + c) + W
    if not _tilt_ok(j0, N, m, _TILT_CAP):
        raise Declined("composed losses beyond the tilt's range")
    _floor_check(xP, N, a, K, allowance)
    _floor_check(xQ, N, a, K, allowance)
    _charge(price, N, a)  # P and Q: the lower meter counts two
    yP, eP = _transform_power(xP, N, a, _l1_up(P, K, False))
    outside = _UP.add(lo_m, hi_m)
    _spent(N, eP, outside, K, allowance)
    yQ, eQ = _transform_power(xQ, N, a, _sum_up(xQ))
    _spent(N, eQ, mpfr(0), K, allowance)
    EP = int(_UP.ceil(_UP.mul(eP, mpfr(2) ** K)))
    EQ = float(_UP53.div(_UP.ceil(_UP.mul(eQ, mpfr(2) ** K)), 1))  # ceil gives an mpz: div rounds it up (G1)
    Pn = [max(0, v - EP) for v in _ints(_window_values(yP, N, W), K, False)]
    # t_k = fl(2^K y~ + E) (2^K y~ exact), then fl(fl(t_k g_k) (1 + 8u)) >= t_k g_k; a t_k <= 0
    # bounds a tilted mass <= 0 (a sum rounds to a result of the exact one's sign, and a
    # subnormal sum is exact), whose class has Q = 0; a positive one keeps at least one unit
    # (its product might underflow to 0)
    t = np.ldexp(_window_values(yQ, N, W), K) + EQ
    with np.errstate(over="ignore", under="ignore"):
        q = (np.maximum(t, 0.0) * _exp_table(j0, N, m, -1)) * _UP8
    if not np.all(np.isfinite(q)):
        raise Declined("untilted masses out of range")
    Qn = [int(v) for v in np.where(t > 0, np.maximum(np.ceil(q), 1.0), 0.0).tolist()]
    deficit = int(_UP.ceil(_UP.mul(outside, mpfr(2) ** K)))
    return (a * off + W, Pn, Qn, _inf_power(inf, K, a, False)), deficit


#: bits of the tilt mu = J 2^-s per index (32 <= J <= 64): a short dyadic, so that every exponent
#: mu (i - c) of the tilt is an exact dyadic handed to MPFR (:func:`_exp_up`)
_TILT_BITS = 6


def _tilt_choice(x: np.ndarray, a: int, t: int) -> tuple[int, int, int, int]:
    """Floats only (a choice; every choice is proved sound by :func:`fourier_upper_tilted`):
    (J, s, C, r), the tilt mu = J 2^-s per index and its centre c = C 2^-r (indices of x).

    mu is the best of a scan of :data:`_LAMBDAS` for a log M(mu) - mu t - log mu,
    M(mu) = sum_i x_i e^(mu i): the tilted bound's error factor at index t is
    g_t = e^(-mu (t - a c)) = e^(a log M(mu) - mu t) (design tilt44 section 4: the Chernoff
    saddle at the read point), and summed over the indices above t it is about g_t / mu. The
    exponent is convex in mu, so the coarse-then-fine scan of :func:`_tail_point` finds the
    list's least value. c = log M(mu) / mu for the rounded mu makes the tilted step's mass
    about 1 (the composed tilted mass about 1: the float error is relative to it), with r
    fractional bits so that a mu |c - C 2^-r| <= 2^-5."""
    idx = np.arange(x.size, dtype=np.float64)
    logx = _logs(x)
    keys: dict = {}

    def point(k: int) -> tuple:
        if k not in keys:
            mu = _LAMBDAS[k]
            keys[k] = (a * _log_mgf(logx, idx, mu) - mu * t - float(_NEAR.log(mu)), k)
        return keys[k]

    coarse = min(point(k) for k in range(0, len(_LAMBDAS), 4))
    best = min(point(k) for k in range(max(0, coarse[1] - 3), min(len(_LAMBDAS), coarse[1] + 4)))
    f, e = math.frexp(_LAMBDAS[best[1]])
    J, s = int(round(f * (1 << _TILT_BITS))), _TILT_BITS - e
    mu = math.ldexp(J, -s)  # exact
    r = max(0, (a * J).bit_length() - s + 4)
    C = int(round(math.ldexp(_log_mgf(logx, idx, mu) / mu, r)))
    return J, s, C, r


def _wrap_above(x: np.ndarray, a: int, mu: float, W: int, N: int, full: int, memo: dict) -> float:
    """Floats only (a choice): the log of an estimate of the tilted mass wrapped from above into
    the window [W, W + N), untilted at its landing: sum_(k >= W + N) y_k e^(mu (k - W)) <=
    e^(mu N) e^(-nu (W + N)) M(nu)^a for every nu > mu (design section 1, risk 9), the least
    over nu = mu 2^(j/16), j = 1..64 (convex in nu: the first rise ends the scan); -inf when the
    composed support ends inside the window. ``memo`` keeps log M(nu) between calls (same x, mu)."""
    if W + N >= full:
        return -math.inf
    best = math.inf
    for j in range(1, 65):
        nu = mu * float(_NEAR.exp2(_NEAR.div(j, 16)))
        if j not in memo:
            if not memo:
                memo[0] = (_logs(x), np.arange(x.size, dtype=np.float64))
            memo[j] = _log_mgf(*memo[0], nu)
        v = a * memo[j] - nu * (W + N) + mu * N
        if v > best:
            break
        best = v
    return best


def _tilt_setup(c: list, K: int, a: int, off: int, need: int, allowance: int, up: bool, at: int = 0) -> tuple:
    """The start both tilted powers share (choices and declines only): the allowance capped, the
    step's length n, the window's floor W = need - a off and the composed support's length, the step's
    doubles (rounded up for an upper pair, down for a lower pair's P: module 1) and the tilt
    (J, s, C, r) chosen at W + 1 + ``at`` (:func:`_tilt_choice`; any point is sound)."""
    _check(K, a, c)
    allowance = _cap(allowance, K)
    n, W = len(c), need - a * off
    full = a * (n - 1) + 1
    if K > _TILT_MAX_K:
        raise Declined("mass unit below the tilt's range")
    if not 0 < W < full - 1:
        raise Declined("the read floor leaves no tail to tilt for")
    if n > MAX_N:
        raise Declined("transform longer than the memory budget")
    x = _floats(c, K, up)
    return allowance, n, W, full, x, _tilt_choice(x, a, W + 1 + at)


def fourier_upper_tilted(d: tuple, a: int, K: int, allowance: int, need: int,
                         price: "Callable[[int], None] | None" = None) -> tuple:
    """(off, masses, inf)^{*a} of an upper pair (integers in units 2^-K) as an upper pair of
    the same kind, through the TILTED transform (design tilt44 section 1), for a result that is
    read only above the absolute index ``need`` (:class:`.pld._Reader`); or Declined when the
    error charged over the read indices exceeds ``allowance`` units (a decision only).

    Proved, whatever ``need`` is (W = need - a off, the window [W, W + N)): let x be the
    doubles of the masses rounded up (module 1), mu = J 2^-s, c = C 2^-r (dyadic: every exponent
    mu (i - c) is an exact dyadic), x~_i >= x_i e^(mu (i - c)) (MPFR tables rounded up and the
    (1 - u)^2 (1 + 8u) >= 1 chain of module 6), y~ = (x~)^{*a}, Y the exact composed masses.
    The tilt is a character of Z, so (tilted exact masses)^{*a}_k = e^(mu (k - a c)) Y_k, and by
    monotonicity y~[k] >= that. The computed circular power y^~ (module 2-4 applied to x~, whose
    l1 norm is summed rounded up) is within Err~ of y~_c[k] = sum_j y~[k + j N] >= y~[k] (every
    term >= 0: no condition on the wrap's direction; design section 1). Multiplying by
    g_k >= e^(-mu (k - a c)) > 0 (tables rounded up, the chain of module 6):
    out_k = ceil((2^K y^~[k] + E) g_k) >= 2^K Y_k for W < k < W + N (E = ceil(2^K Err~)),
    each also capped by the composed total mass (S 2^-K)^a (S = sum of the masses: no composed
    mass exceeds it; the min of two upper bounds is one). The mass at indices <= W is at most
    that total and is placed at W: mass moved to a larger loss only raises the curve (the
    argument of :class:`.pld._Reader`, for any W), and this is the per-index guard of design
    risk 4: the tilted bound grows without bound below the centre, and no index at or below the
    read floor carries it. The mass at indices >= W + N (an MPFR Chernoff bound of the exact
    integers, module 5) goes to +inf, and +inf itself as in :func:`fourier_upper`.

    The decision (design section 3) charges what is read, with weight at most 1: Err~ times the
    sum of g_k over k > W, one unit an index, the mass moved to +inf, and estimates (floats) of
    the wrapped-in mass landing above W: from above it is amplified, at most
    e^(mu N) e^(-nu (W + N)) M(nu)^a for nu > mu (design risk 9), from below damped, at most
    e^(-mu N) times the total. A wrong ``need`` (a forged hint) only loosens the result."""
    off, c, inf = d
    allowance, n, W, full, x, (J, s, C, r) = _tilt_setup(c, K, a, off, need, allowance, True)
    M, step = s + r, J << r
    if not _tilt_ok(-J * C, n, M, _TILT_IN_CAP, step):
        raise Declined("a step's tilt beyond the tilt's range")
    log_target = float(_NEAR.log(_scaled(max(allowance, 1), K + 4)))
    t_hi, lam_hi = _tail_point(x, a, log_target, True)
    mu = math.ldexp(J, -s)
    N = min(MAX_N, max(2, 1 << (max(t_hi - W, n) - 1).bit_length()))
    memo: dict = {}
    # the window doubles while either wrap's estimate is above the target: the amplified one from
    # above (design risk 9) or the damped one from below, e^(-mu N) times the composed total (at
    # T = 10^6 the latter alone declined N = 2^20: mu N = 23.5 left 6e-11 against an allowance of
    # 1e-11, and fifteen exact squarings ran instead)
    log_total = float(_NEAR.mul(a, _NEAR.log(_NEAR.mul(mpz(sum(c)), mpfr(2) ** -K))))
    wrap = _wrap_above(x, a, mu, W, N, full, memo)
    while (wrap > log_target or log_total - mu * N > log_target) and N < MAX_N:
        N *= 2
        wrap = _wrap_above(x, a, mu, W, N, full, memo)
    j0 = J * ((W << r) - a * C)
    if not _tilt_ok(j0, N, M, _TILT_CAP, step):
        raise Declined("composed tilt beyond the tilt's range")
    unit = mpfr(2) ** -K
    total = _UP.pow(_UP.mul(mpz(sum(c)), unit), a)
    hi_m = _chernoff(c, K, a, W + N, True, lam_hi) if W + N < full else mpfr(0)
    wraps = _UP.mul(_UP.exp(_UP.div(-J * N, mpz(1) << s)), total)  # from below (exact exponent)
    wraps = _UP.add(wraps, _NEAR.exp(min(wrap, 700.0)))
    limit = _DN.mul(allowance, unit)
    outside = _UP.add(_UP.add(hi_m, wraps), _UP.mul(N, unit))
    if not outside <= limit:
        raise Declined("the mass outside the window exceeds the allowance", None)
    xt = (x * _exp_table(-J * C, n, M, 1, step)) * _UP8  # two roundings: (1-u)^2 (1+8u) >= 1
    if not np.all(np.isfinite(xt)):
        raise Declined("tilted masses out of range")
    _charge(price, N, a)
    y, err = _transform_power(xt, N, a, _sum_up(xt))
    g = _exp_table(j0, N, M, -1, step)
    spent = _UP.add(_UP.mul(err, math.fsum(g[1:].tolist())), outside)
    if not spent <= limit:
        ratio = float(spent) / max(float(limit), 1e-300)
        raise Declined("the tilted error bound exceeds the allowance", ratio if math.isfinite(ratio) else None)
    E = float(_UP53.div(_UP.ceil(_UP.mul(err, mpfr(2) ** K)), 1))  # ceil gives an mpz: div rounds it up (G1)
    top = _UP.ceil(_UP.mul(total, mpfr(2) ** K))
    # t_k = fl(2^K y^~ + E) (2^K y^~ exact), then fl(fl(t_k g_k) (1 + 8u)) >= t_k g_k: three
    # roundings, (1 - u)^3 (1 + 8u) >= 1; a t_k <= 0 bounds a tilted mass <= 0 (a sum rounds to a
    # result of the exact one's sign); a positive one keeps at least one unit (its product
    # might underflow)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        t = np.ldexp(_window_values(y, N, W), K) + E
        q = (np.maximum(t, 0.0) * g) * _UP8
    if not (np.all(np.isfinite(t)) and np.all(np.isfinite(q))):
        raise Declined("untilted masses out of range")
    q = np.minimum(np.where(t > 0, np.maximum(np.ceil(q), 1.0), 0.0), float(_UP53.div(top, 1)))
    out = [int(v) for v in q.tolist()]
    out[0] = int(top)
    inf_out = _inf_power(inf, K, a, True) + int(_UP.ceil(_UP.mul(hi_m, mpfr(2) ** K)))
    return (a * off + W, out, inf_out)


def _sum_up_exact(t: np.ndarray) -> mpfr:
    """An upper bound of sum t_i for finite doubles t_i >= 0, in exact integers (the same on
    every machine whatever numpy's summation order, and fast): with max t < 2^e and b the bits of
    the count n, each t_i 2^sh (sh = 62 - b - e; np.ldexp is exact but where its result is
    subnormal, and there it errs by less than 1) is replaced by floor(.) + 1 > it for t_i > 0
    and 0 for t_i = 0: integers at most 2^(62 - b) each, summed exactly in int64 (the sum stays
    below n 2^(62 - b) < 2^62), then scaled by 2^-sh exactly in MPFR. Declined for an infinite,
    NaN or negative t_i."""
    n = t.size
    if n and not (np.all(np.isfinite(t)) and float(t.min()) >= 0):
        raise Declined("a sum of masses out of range")
    top = float(t.max()) if n else 0.0
    if not top > 0:
        return mpfr(0)
    sh = 62 - n.bit_length() - math.frexp(top)[1]
    ints = np.floor(np.ldexp(t, sh)).astype(np.int64) + (t > 0)
    return _UP.mul(mpz(int(ints.sum())), _UP.exp2(-sh))


def _exp_mp(j: int, s: int) -> mpfr:
    """e^(j 2^-s) rounded up at :data:`_PREC` bits, its exponent formed exactly (at j's bits)."""
    ctx = gmpy2.context(precision=max(_PREC, abs(j).bit_length() + 1), round=gmpy2.RoundUp)
    return _UP.exp(ctx.div(mpz(j), mpz(1) << s))


def _wrap_theta(logx: np.ndarray, idx: np.ndarray, a: int, J: int, s: int, W: int, N: int, sigma: int,
                T_max: int, logm: dict) -> tuple[int, float]:
    """Floats only (a choice; :func:`_wrap_in` proves whatever it gets): (T, f(T)), the integer
    T, theta = T 2^-s, on the side ``sigma`` of mu = J 2^-s (T in [J + 1, T_max] above,
    [-T_max, J - 1] below) least for f(T) = a log M(theta) - theta W - |theta - mu| N, the log of
    the wrap bound at the window's first index (without its slowly varying factors; M of the
    doubles x, ``logm`` keeps log M(theta) by T between calls). f is convex in T (log M is), so
    the least of the integers is found by a doubling bracket and a bisection on the sign of
    f(T + 1) - f(T) (a float slip only moves the choice); (J, inf) where the range is empty."""

    def f(k: int) -> float:  # k >= 1 steps away from J
        T = J + sigma * k
        th = math.ldexp(T, -s)
        if T not in logm:
            logm[T] = _log_mgf(logx, idx, th)
        return a * logm[T] - th * W - math.ldexp(k * N, -s)

    k_max = T_max - J if sigma > 0 else T_max + J
    if k_max < 1:
        return J, math.inf
    hi = 1
    while hi < k_max and f(min(2 * hi, k_max)) < f(hi):
        hi = min(2 * hi, k_max)
    lo, hi = max(1, hi // 2), min(2 * hi, k_max)  # the least lies in [lo, hi]
    while lo < hi:
        mid = (lo + hi) // 2
        if f(mid + 1) < f(mid):
            lo = mid + 1
        else:
            hi = mid
    return J + sigma * lo, f(lo)


#: the window positions (fractions of N past W) at which :func:`_wrap_choice` fits a theta
_WRAP_AT = (0.0, 0.125, 0.25, 0.5)


def _wrap_choice(x: np.ndarray, a: int, J: int, s: int, W: int, N: int, logm: dict) -> tuple[list, float]:
    """Floats only: (Ts, v), the thetas of :func:`_wrap_in` for the window [W, W + N) and v, the
    log of an estimate of its wrap bounds summed over the window. Per side and per position
    k = W + f N (f in :data:`_WRAP_AT`) the theta least at k (:func:`_wrap_theta` with W = k): a
    theta fitted at the window's first index can grow along it (a negative one, below), and the
    per-index least of several bounds is a bound. v: the log of the sum over the positions of
    e^(f(T)) times the length to the next one (the bound there, held over the segment)."""
    n = x.size
    T_max = _wrap_t_max(n, s, N)
    if "x" not in logm:
        logm["x"] = (_logs(x), np.arange(n, dtype=np.float64))
    logx, idx = logm["x"]
    Ts: list = []
    terms = []
    ends = [int(f * N) for f in _WRAP_AT] + [N]
    for sigma in (1, -1):
        for j in range(len(_WRAP_AT)):
            T, f = _wrap_theta(logx, idx, a, J, s, W + ends[j], N, sigma, T_max, logm)
            if (sigma, T) not in Ts:
                Ts.append((sigma, T))
            terms.append(f + float(_NEAR.log(ends[j + 1] - ends[j])))
    top = max(terms)
    v = top + _log_sum(_exp_det(np.array(terms) - top)) if math.isfinite(top) else top
    return Ts, v


def _tail_cap(logm: dict, a: int, s: int, W: int, N: int, K: int) -> np.ndarray:
    """Floats only (a charge): for t < N, about 2^K min over the thetas theta = T 2^-s > 0 of
    ``logm`` (log M(theta) by T, :func:`_wrap_theta`) of e^(a log M(theta) - theta k), the
    Chernoff bound of the P-mass at indices >= k (module 5), k = W + t taken at the start of
    each block of 64 (the bound falls with k), at most 2^K. Where the circular power's top is
    filled by the wrap from below, the computed masses there are no estimate of the true ones;
    this is."""
    B = 64
    ks = np.arange(W, W + N, B, dtype=np.float64)
    best = np.zeros(ks.size)
    for T, lm in logm.items():
        if isinstance(T, int) and T > 0:
            best = np.minimum(best, a * lm - math.ldexp(T, -s) * ks)
    return np.ldexp(np.repeat(_exp_det(best), B)[:N], K)


def _wrap_t_max(n: int, s: int, N: int) -> int:
    """The largest |T| whose theta = T 2^-s keeps the exponents of :func:`_wrap_in` within the
    tilt's range: |T| max(i0, n - i0) <= 200 2^s (inputs, i0 = n // 2), |T| N <= 600 2^s (outputs)."""
    return min((_TILT_IN_CAP << s) // (n - n // 2), (_TILT_CAP << s) // N)


def _wrap_in(x: np.ndarray, a: int, K: int, J: int, s: int, W: int, N: int, Ts: list) -> tuple[np.ndarray, mpfr]:
    """(R, U): doubles R_t >= 2^K (A_(W+t) + B_(W+t)) for t < N, the bounds of the untilted
    P-mass wrapped into window index k = W + t (:func:`fourier_lower_tilted`, step 4), and
    U >= 2^K times the P-mass of (P 2^-K)^{*a} at indices >= W + N (MPFR, rounded up; a charge
    only). x: doubles with P_i 2^-K <= x_i (1 + 2^-52) (rounded down, module 1), mu = J 2^-s.

    Per side several theta = T 2^-s (``Ts``: pairs (side, T), T > J above, T < J below, chosen by
    :func:`_wrap_choice`; any such T is sound), the least bound kept per index (each is a bound,
    so is their minimum). For one theta: the terms fl(fl(x_i g_i)(1 + 8u)) >= x_i g_i, with
    g_i >= e^(theta (i - i0)) from :func:`_exp_table` (i0 = n // 2; every product normal, as the
    exponents stay within +-200 and a nonzero x_i >= 2^-700), their sum (:func:`_sum_up_exact`)
    and their largest one, each times 1 + 2^-52 rounded up, are S >= e^(-theta i0) M(theta) and
    X >= e^(-theta i0) m(theta) (M, m of step 4). So, with gap = |theta - mu| N,
    2^K e^(-theta k) M(theta)^(a-1) m(theta) e^(-gap) / (1 - e^(-gap)) <= c e^(-theta t),
    c = 2^K e^(theta (a i0 - W) - gap) S^(a-1) X / (1 - e^(-gap)) in MPFR rounded up (the
    exponent an exact dyadic; the denominator rounded down, and checked positive). c is rounded up
    to a double (inf past the range: still an upper bound) after a max with 2^-1000, and
    r_t = max(fl(fl(c h_t)(1 + 8u)), 2^-999) with h_t >= e^(-theta t) (:func:`_exp_table`):
    where the exact product c h_t is normal the two roundings stay above it
    ((1 - u)^2 (1 + 8u) >= 1), where it is below 2^-1022 so is the bound, and 2^-999 is above
    it. R_t = fl(fl(r_t^above + r_t^below)(1 + 8u)), above their sum the same way (both terms
    normal). U: the least Chernoff bound e^(-theta (W + N)) M(theta)^a (module 5) of the thetas
    above."""
    n = x.size
    i0 = n // 2
    sides: dict = {}
    U = None
    one52 = _UP.add(1, mpfr(2) ** -52)
    with np.errstate(over="ignore"):
        for sigma, T in Ts:
            if sigma * (T - J) < 1 or not (_tilt_ok(-T * i0, n, s, _TILT_IN_CAP, T) and _tilt_ok(0, N, s, _TILT_CAP, T)):
                raise Declined("no wrap bound within the tilt's range")
            terms = (x * _exp_table(-T * i0, n, s, 1, T)) * _UP8
            S = _UP.mul(_sum_up_exact(terms), one52)
            X = _UP.mul(float(terms.max()), one52)
            base = T * (a * i0 - W)
            gap = abs(T - J) * N  # |theta - mu| N = gap 2^-s
            den = _DN.sub(1, _exp_mp(-gap, s))
            if not den > 0:
                raise Declined("the wrap's geometric sum out of range")
            c = _UP.mul(_UP.div(_UP.mul(_UP.mul(_exp_mp(base - gap, s), _UP.pow(S, a - 1)), X), den), mpfr(2) ** K)
            if not c > 0:  # no factor is 0 (each rounded up) nor NaN; inf stays a bound
                raise Declined("a wrap bound out of range")
            if sigma == 1:  # the mass at indices >= W + N: e^(-theta (W + N)) M(theta)^a
                u = _UP.mul(_UP.mul(_exp_mp(base - T * N, s), _UP.pow(S, a)), mpfr(2) ** K)
                U = u if U is None or u < U else U
            cd = float(_UP53.plus(max(c, mpfr(2) ** -1000)))
            r = np.maximum((cd * _exp_table(0, N, s, -1, T)) * _UP8, 2.0 ** -999)
            sides[sigma] = np.minimum(sides[sigma], r) if sigma in sides else r
        if len(sides) < 2 or U is None:
            raise Declined("no wrap bound on one side")
        R = (sides[1] + sides[-1]) * _UP8
    return R, U


def fourier_lower_tilted(d: tuple, a: int, K: int, allowance: int, need: int, m: int, b: int = 1,
                         price: "Callable[[int], None] | None" = None) -> tuple:
    """(off, P, Q, inf)^{*a} of a lower pair (integers in units 2^-K) on the grid 2^-m that
    composes b steps, as a lower pair of the same kind on the classes of the window
    [W, W + N) (W = need - a off), through the TILTED transform (design pld-speed, "The
    re-check's tilted Fourier power"), for a pair read only through classes above the absolute
    index ``need`` (:class:`.pld._Reader`); or Declined when what it loses on the read classes
    exceeds ``allowance`` units (a decision only, never a bound).

    What is proved, whatever ``need`` is (indices k are composed indices relative to a off; Y,
    Z the exact a-fold convolutions of P 2^-K and Q 2^-K, the exact products' masses before
    their roundings): every returned P_k <= 2^K Y_k and every returned Q_k >= 2^K Z_k, so the
    returned pair is a lower pair (each class a group of composed outcomes, P rounded down, Q
    up: :func:`.pld._lower_delta`); the classes outside the window are dropped, each losing only
    its (P - e^eps Q)+ >= 0 (the argument of :meth:`.pld._Reader.cut` and of the trims of
    :func:`.pld._pmul_lower`, sound for any window); +inf as in :func:`fourier_lower`.

    1. **Tilts.** mu = J 2^-s, c = C 2^-r, h = 2^-m (dyadics: every exponent below is an exact
       dyadic handed to MPFR, :func:`_exp_up`). P: x_i <= P_i 2^-K (module 1, rounded down),
       x~_i = fl(fl(x_i g_i)(1 - 8u)) <= x_i g_i <= P_i 2^-K e^(mu (i - c)) (g_i <= e^(mu (i - c))
       from :func:`_exp_table` rounded down; (1 + u)^2 (1 - 8u) <= 1; every product normal, the
       exponents within +-200 and K <= 700). Q: x'_i >= Q_i 2^-K e^(h (off + i + cb) + mu (i - c))
       (module 6 with the same chain rounded up; cb = b // 2, any value is sound). Each tilt is
       e^(alpha i + beta), a character of Z up to a constant: the a-fold convolution of the
       tilted exact masses is e^(alpha k + a beta) times the untilted one, so
       Y~_k = e^(mu (k - a c)) Y_k and Z~_k = e^(tau_k) Z_k, tau_k = h (a off + k + a cb) +
       mu (k - a c); by monotonicity of convolution of nonnegative vectors, y~ = (x~)^{*a} <= Y~
       and y' = (x')^{*a} >= Z~ termwise.
    2. **Transforms.** The computed circular powers p^ (of x~) and q^ (of x', each padded to
       N >= n) are within Err_P, Err_Q of the circular convolutions y~_c[k] = sum_j y~[k + j N],
       y'_c (module 2-4, with l1 norms summed rounded up by :func:`_sum_up_exact`); the window
       [W, W + N) holds one representative of every residue mod N, read at k = W + t.
    3. **Q (upper).** y'_c[k] >= y'[k] >= Z~_k (every term >= 0: a wrap only adds), so
       2^K Z_k <= e^(-tau_k) (2^K q^[k] + E_Q) with E_Q >= 2^K Err_Q; the output is
       ceil(fl(fl(t_k G_k)(1 + 8u))), t_k = fl(2^K q^[k] + E_Q), G_k >= e^(-tau_k) rounded up
       ((1 - u)^3 (1 + 8u) >= 1), at least 1 where t_k > 0, and 0 where t_k <= 0 (then the exact
       sum is <= 0, so Z_k = 0), exactly as :func:`fourier_upper_tilted`.
    4. **Wrap (P, lower).** y~_c[k] = y~[k] + w_k, w_k = sum_(j != 0) y~[k + j N]
       <= sum_(j != 0) Y~_(k + j N), so e^(-mu (k - a c)) w_k <= sum_(j != 0) e^(mu j N) Y_(k + j N).
       For every real theta and every index k', Y_k' <= e^(-theta k') M(theta)^(a-1) m(theta),
       M(theta) = sum_i P_i 2^-K e^(theta i), m(theta) = max_i P_i 2^-K e^(theta i):
       Y_k' e^(theta k') = sum_i (P_i 2^-K e^(theta i)) (Y'_(k'-i) e^(theta (k'-i))) with Y' the
       (a-1)-fold convolution, each first factor <= m(theta), and sum_j Y'_j e^(theta j) =
       M(theta)^(a-1). Hence, for theta > mu (j >= 1, from above: amplified, design risk 9)
       A_k = e^(-theta k) M^(a-1) m e^(-(theta - mu) N) / (1 - e^(-(theta - mu) N)) bounds
       sum_(j >= 1) e^(mu j N) Y_(k + j N) (a geometric series), and for theta' < mu (from below:
       damped) B_k, the same with theta', |theta' - mu|, bounds sum_(j >= 1) e^(-mu j N) Y_(k - j N);
       each side takes, per index, the least of its bounds for several thetas (each is one), and
       R_k >= 2^K (A_k + B_k) (:func:`_wrap_in`). The sums run over all j (indices outside the
       composed support hold 0), over exact masses of the exact composition: no rounding, trim
       or floor of this function enters them.
    5. **P (lower).** From 1, 2, 4: Y_k = e^(-mu (k - a c)) Y~_k >= e^(-mu (k - a c)) y~[k] =
       e^(-mu (k - a c)) (y~_c[k] - w_k) >= e^(-mu (k - a c)) (p^[k] - Err_P) - (A_k + B_k), and
       Y_k >= 0. With E_P >= 2^K Err_P, X_k = 2^K p^[k] - E_P (exact scaling), g_k <= e^(-mu (k - a c))
       rounded down: t_k = fl(X_k), p_k = fl(fl(max(t_k, 0) g_k)(1 - 8u)), d_k = fl(fl(p_k - R_k)(1 - 8u)),
       and the output is floor(d_k) where d_k >= 1, else 0. Where d_k >= 1: fl(p_k - R_k) > 0, so
       p_k > R_k >= 2^-999 (rounding to nearest keeps the sign), so t_k > 0 and X_k > 0; every
       rounded value on the way is then at least about 2^-1000, so its exact operation's result is
       normal (rounding is monotone; g_k <= e^600) and the rounded value at most (1 + u) times it
       (a subnormal difference would be exact): d_k <= (p_k - R_k)(1 + u)^2 (1 - 8u) <= p_k - R_k
       and p_k <= X_k g_k (1 + u)^3 (1 - 8u) <= X_k g_k; so, with X_k <= 2^K (p^[k] - Err_P),
       floor(d_k) <= X_k e^(-mu (k - a c)) - R_k <= 2^K Y_k.

    The choices (floats by the module's deterministic primitives: mu and c by :func:`_tilt_choice`
    at the read floor's typical class W + a b / 2, N as :func:`fourier_upper_tilted` chooses it and doubled further while the
    estimated wrap bound of step 4 is above the target, the thetas of step 4 by
    :func:`_wrap_choice`) only decide tightness; the decision charges what the read classes
    (k > W) lose at most: per class the least of its estimated term (P - e^eps Q)+ (the computed
    masses, P also capped by a float Chernoff bound, :func:`_tail_cap`; eps ~ (need + a b + 1) h)
    and E_P g_k + R_k + 1 + e^eps (E_Q G_k + 1) (the subtracted error and wrap, the roundings),
    plus U >= the P-mass past the window (dropped; :func:`_wrap_in`). A wrong ``need`` (a forged
    hint) only loosens the result."""
    off, P, Q, inf = d
    if len(Q) != len(P):
        raise Declined("P and Q of different lengths")
    # the tilt's saddle at W + a b / 2, not at W: a class k of a composition of a b steps groups
    # losses in [k, k + a b] h, and the outcomes of loss near the floor's lie, by the central limit,
    # in the classes near W + a b / 2 (at T = 10^6 the floor class W read 122 nats below eps, in the
    # bulk, and the charge at the floor's tilt declined by a factor 26-147; there it is 0.03)
    allowance, n, W, full, x, (J, s, C, r) = _tilt_setup(P, K, a, off, need, allowance, False, (a * b) // 2)
    M, step = s + r, J << r
    cb = b // 2
    M2 = max(m, M)
    stepQ = (1 << (M2 - m)) + (step << (M2 - M))
    jQ = ((off + cb) << (M2 - m)) - ((J * C) << (M2 - M))
    if not (_tilt_ok(-J * C, n, M, _TILT_IN_CAP, step) and _tilt_ok(jQ, n, M2, _TILT_IN_CAP, stepQ)):
        raise Declined("a step's tilt beyond the tilt's range")
    log_target = float(_NEAR.log(_scaled(max(allowance, 1), K + 4)))
    t_hi, _ = _tail_point(x, a, log_target, True)
    mu = math.ldexp(J, -s)
    N = min(MAX_N, max(2, 1 << (max(t_hi - W, n) - 1).bit_length()))
    memo: dict = {}
    logm: dict = {}
    while True:  # the window doubles while a wrap (step 4) is estimated above the target
        if N < MAX_N and _wrap_above(x, a, mu, W, N, full, memo) > log_target:
            N *= 2  # the amplified wrap from above alone (design risk 9), the cheaper estimate
            continue
        Ts, v = _wrap_choice(x, a, J, s, W, N, logm)
        if any(T == J for _, T in Ts):
            raise Declined("no wrap bound within the tilt's range")
        if N >= MAX_N or v <= log_target:
            break
        N *= 2
    j0 = J * ((W << r) - a * C)
    j0Q = ((a * off + W + a * cb) << (M2 - m)) + (j0 << (M2 - M))
    if not (_tilt_ok(j0, N, M, _TILT_CAP, step) and _tilt_ok(j0Q, N, M2, _TILT_CAP, stepQ)):
        raise Declined("composed tilt beyond the tilt's range")
    _charge(price, N, a)  # P and Q: the lower meter counts two
    R, above = _wrap_in(x, a, K, J, s, W, N, Ts)
    scale = mpfr(2) ** K
    # P: tilted down, powered, the error and the wrap bound subtracted, untilted down
    xt = (x * _exp_table(-J * C, n, M, 1, step, False)) * _DN8
    yP, eP = _transform_power(xt, N, a, _sum_up_exact(xt))
    EP = float(_UP53.plus(_UP.mul(eP, scale)))
    g = _exp_table(j0, N, M, -1, step, False)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        tP = np.ldexp(_window_values(yP, N, W), K) - EP
        pP = (np.maximum(tP, 0.0) * g) * _DN8
        dP = (pP - R) * _DN8
    if not (np.all(np.isfinite(tP)) and np.all(np.isfinite(pP)) and not np.any(np.isnan(dP))):
        raise Declined("untilted masses out of range")
    Pn = np.where(dP >= 1.0, np.floor(dP), 0.0)
    # Q: tilted up by the loss and mu, powered, the error added, untilted up
    xq = (_floats(Q, K, True) * _exp_table(jQ, n, M2, 1, stepQ)) * _UP8
    if not np.all(np.isfinite(xq)):
        raise Declined("tilted masses out of range")
    yQ, eQ = _transform_power(xq, N, a, _sum_up_exact(xq))
    EQ = float(_UP53.plus(_UP.mul(eQ, scale)))
    gQ = _exp_table(j0Q, N, M2, -1, stepQ)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        tQ = np.ldexp(_window_values(yQ, N, W), K) + EQ
        q = (np.maximum(tQ, 0.0) * gQ) * _UP8
    if not (np.all(np.isfinite(tQ)) and np.all(np.isfinite(q))):
        raise Declined("untilted masses out of range")
    Qn = np.where(tQ > 0, np.maximum(np.ceil(q), 1.0), 0.0)
    # the decision: what is lost on the read classes (k > W), at most the class's own term
    # (P - e^eps Q)+ (estimated by the computed masses, P also by a Chernoff bound, eps by the
    # read floor)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        wq = float(_NEAR.exp(_NEAR.mul(need + a * b + 1, mpfr(2) ** -m)))
        est = np.maximum(np.minimum(np.ldexp(_window_values(yP, N, W), K) * g, _tail_cap(logm, a, s, W, N, K))
                         - wq * np.ldexp(_window_values(yQ, N, W), K) * gQ, 0.0)
        lost = np.minimum(est, EP * g + R + 1.0 + wq * (EQ * gQ + 1.0))[1:]
    if not np.all(np.isfinite(lost)):
        raise Declined("the tilted error bound is out of range")
    spent = _UP.add(_sum_up_exact(lost), above)
    if not spent <= allowance:
        # in MPFR: an allowance past 2^1024 (``_cap`` admits 2^(K + 1000)) made float() raise (reftilt L1)
        ratio = float(_NEAR.div(spent, max(allowance, 1)))
        raise Declined("the tilted error bound exceeds the allowance", ratio if math.isfinite(ratio) else None)
    return (a * off + W, [int(v) for v in Pn.tolist()], [int(v) for v in Qn.tolist()], _inf_power(inf, K, a, False))
