"""Certified a-fold self-convolution in the Fourier domain (dp_accounting's speed, with a proof).

dp_accounting composes T steps with one FFT, a pointwise power and one inverse
FFT. This module does the same in binary64 and proves how far the floats can
be from the exact result, so that the output is again a rigorous bound of the
kind :mod:`convolve` produces (pessimistic masses rounded up, optimistic P down,
tilted Q up). The exact products remain the route for everything this one
declines (its error bound is checked against an allowance; heterogeneous
schedules, tiny deltas and huge units go the exact way).

Let x be the vector fed to the FFT (length n, index i = loss (offset + i) h,
masses >= 0) and y = x^{*a} its a-fold convolution. Every statement below is
for the exact y of that x; the float route only approximates y, and the bound
Err (per coefficient) covers the difference.

1. **Inputs in the sound direction.** The integer masses c_i / 2^K become doubles
   rounded up (pessimistic U, tilted Q) or down (optimistic P): nextafter of
   the converted value, valid whether the conversion rounds to nearest or
   toward zero (error < 1 ulp). Convolution of nonnegative vectors is monotone,
   so the a-fold product of the rounded vector bounds that of the integer one
   in the same direction (:mod:`convolve`, module docstring). Up-rounding
   changes a mass by at most a factor 1 + 4u (conversion to nearest, then one
   ulp up), which enters ||x||_1 in 3.

2. **Circular wrap.** With N = 2^L, the cyclic convolution y_c[r] =
   sum_j y[r + jN] is >= y[k] for every k = r mod N (all terms >= 0): the
   circular result is an *upper* bound on any window of N consecutive
   indices [W, W + N). For a lower bound the wrapped-in mass a_k >= 0 is
   subtracted in total: sum_k a_k = y-mass outside the window (5).

3. **FFT error** (radix-2 decimation in time, real and imaginary parts in
   separate arrays, every operation one IEEE binary64 operation in round to
   nearest; numpy's element-wise ufuncs do not fuse). One butterfly
   computes fl(a +- fl(w^ b)) with |w^ - w| <= mu (twiddles computed in arb and
   their error bounded there, :func:`_twiddles`). With the complex product's
   bound |fl(w^ b) - w^ b| <= sqrt2 gamma_2 |w^||b| (Higham, *Accuracy and
   Stability of Numerical Algorithms*, 2nd ed., Lemma 3.5) and a rounded sum
   per real component, an output of the stage is within eta (|a| + |b|) of
   the exact butterfly of the computed inputs, eta = mu + (1 + 2 sqrt2) u +
   O(u mu) <= mu + 5u (u = 2^-53).
   Writing stage k as the matrix A_k, the computed v_k satisfies
   |v_k - A_k v_{k-1}| <= eta |A_k| |v_{k-1}| componentwise, and by induction
   |v_L - F x| <= ((1 + eta)^L - 1) |A_L| ... |A_1| |x| (the argument of Higham
   Thm 24.2, kept componentwise). In the radix-2 FFT each input reaches each
   output along exactly one path of modulus-1 weights, so |A_L|...|A_1| is
   the all-ones matrix (after the exact bit-reversal): every Fourier
   coefficient is within e = ((1 + eta)^L - 1) ||x||_1 (+ an underflow term) of
   the exact DFT.

4. **Power and inverse.** z^a is computed by binary powering; each complex
   product has relative error <= nu = sqrt2 gamma_2 < 3u, so the computed p
   satisfies |p - z^^a| <= ((1 + nu)^c - 1) |z^|^a with c the exponent count of the
   multiplication chain (c -> 2c + 1 per squaring, c1 + c2 + 1 per product).
   For |z^ - z| <= e, |z^^a - z^a| <= (|z^| + e)^a - |z^|^a (telescoping the
   product of a factors). Both bounds increase with |z^|; they are summed over
   the frequencies by counting |z^|^2 in bins (exact comparisons) and evaluating
   the bounds at each bin's upper edge in arb. The few frequencies where
   |z^|^a is not negligible carry nearly all of a e |z^|^(a-1); they are
   recomputed in arb instead (the exact input polynomial at the ball
   e^{-2 pi i f / N}, its a-th power in acb, p_f = the double nearest the
   midpoint, |p_f - z_f^a| read off the ball) and left out of the bins. This
   is what lets a = T: the float bound alone would grow like T e. At the
   other end, a frequency whose computed |z^_f|^2 is at most a cut r_c^2
   (floats choose it: r_c^a about 2^-60 of the target over N; most of the
   spectrum of a long composition) is not powered at all: p_f = 0, so it adds
   nothing to sum |p_f|, and |p_f - z_f^a| = |z_f|^a <= (|z^_f| + e)^a
   <= (r' + e)^a with r' = sqrt((r2_max + 2^-1000)(1 + 3u)) from the largest
   such r2 (the bins' bound of |z^| from r2, below), n_0 times for n_0 such
   frequencies. The inverse transform is
   conj(FFT(conj(p))) / N (conjugation and the power-of-two division are
   exact), so each output coefficient is within

       Err = [((1 + eta)^L - 1) sum_f |p_f| + sum_f |p_f - z_f^a|] / N

   of y_c (plus underflow terms; the real part is taken, which only helps).

5. **Outside the window**: the mass of y(c) (c = the integer masses; the
   window's circular values already dominate y(c) on the pessimistic side,
   and x <= c on the optimistic side) outside [W, W + N). The step's vector
   is split into a main part [c_lo, c_hi) and two thin ends. Sequences with
   at least one step in an end weigh at most a * ends * total^(a-1) (union
   bound), wherever they land; the main-only ones are bounded by Chernoff:
   for lambda > 0, sum_{k >= t} y_k <= e^{-lambda t} M(lambda)^a and
   sum_{k <= t} y_k <= e^{lambda t} M(-lambda)^a, M(lambda) = sum_i c_i 2^-K
   e^{lambda i} (any nonnegative measure), evaluated as the integer
   polynomial at the ball e^lambda in arb. Why the split: a tail of one unit
   per knot makes M grow so fast that a single Chernoff bound overshoots the
   true quantile by many nats. The floats only choose c_lo, c_hi, lambda and
   the window.

6. **Two real vectors, one transform** (the optimistic P and tilted Q). The
   transform of x = xP + i xQ gives Z; as xP, xQ are real, P^_k = (Z_k +
   conj Z_{N-k}) / 2 and Q^_k = (Z_k - conj Z_{N-k}) / (2i) (index N - 0 = 0).
   The computed Z is within e_Z = ((1 + eta)^L - 1) ||x||_1 of the exact one
   (3; ||x||_1 <= ||xP||_1 + ||xQ||_1: the bound of 3 holds for complex
   inputs), so each unpacked value is within (e_Z + e_Z) / 2 of the exact one
   from the computed Z, plus its own rounding: one sum per real component
   (relative u, so u (||x||_1 + e_Z) in modulus) and an exact halving (2^-1074
   if subnormal): e = e_Z + u (||x||_1 + e_Z) + 2^-1074 for both. After both
   powers (4), one inverse transform of c = p_P + i p_Q (each component one
   rounding: |c^ - c| <= u (|p_P| + |p_Q|)) gives o with |o - IFFT(c)| <=
   [((1 + eta)^L - 1)(1 + u) + u] (S1_P + S1_Q) / N; and IFFT(c) = IFFT(p_P) + i
   IFFT(p_Q), where IFFT(z_P^a) and IFFT(z_Q^a) are real, so Re IFFT(c) - y_P =
   Re IFFT(p_P - z_P^a) - Im IFFT(p_Q - z_Q^a), at most (SE_P + SE_Q) / N, and
   the same for Im against y_Q. Both outputs share Err = [(((1 + eta)^L - 1)(1 + u) + u)
   (S1_P + S1_Q) + SE_P + SE_Q] / N (+ underflow terms); where that exceeds the
   allowance the two inverses are done separately with their own Err (4).

7. **One real vector, a half-length transform** (the pessimistic U, and a pair's inverses
   when done separately). With N = 2M, z_k = x_{2k} + i x_{2k+1} (exact), Z = FFT_M(z) is
   computed as in 3 with L - 1 stages: |Z^_f - Z_f| <= e_Z = ((1 + eta_M)^(L-1) - 1) ||x||_1
   (||z||_1 <= ||x||_1 for x >= 0; eta_M from the length-M table). As x is real,
   A_f = Z_f + conj Z_{M-f} = 2 E_f and B_f = Z_f - conj Z_{M-f} = 2i O_f (E, O the DFTs of
   the even and odd entries), so X_f = E_f + w_f O_f = (A_f + v_f B_f) / 2 with v_f = -i w_f,
   w_f = e^{-2 pi i f / N} (the length-N table, |v^ - v| <= mu), for f < M; X_M = Re Z_0 -
   Im Z_0, and X_{N-f} = conj X_f (exact). The errors of Z propagate as ((1 + v^) d_f +
   (1 - v^) conj d_{M-f}) / 2, at most sqrt2 (1 + mu) e_Z (|1 + v| + |1 - v| <= 2 sqrt(1 +
   |v|^2)); each of the pass's sums and its complex product (Lemma 3.5) rounds once, on
   moduli at most 2 (||x||_1 + e_Z), and the halving is exact:
   |X^_f - X_f| <= e = sqrt2 (1 + mu) e_Z + kappa (||x||_1 + e_Z), kappa = u + nu (1 + mu)(1 + u)
   + (1 + mu) u + mu + u (1 + u)(1 + (1 + mu)(1 + nu)), nu = sqrt2 gamma_2 (X_M's error
   sqrt2 (e_Z + u (||x||_1 + e_Z)) is below e). The inverse reads y_{2m} + i y_{2m+1} =
   c_m, c = IFFT_M(Y) / 2, Y_k = (p_k + p_{k+M}) + v'_k (p_k - p_{k+M}), v'_k = i e^{2 pi i k
   / N} (an identity of the DFT for any p: y = IFFT_N(p)); c = conj(FFT_M(conj Y)) / N. The
   pre-pass rounds as the post-pass does, on q_k = |p_k| + |p_{k+M}| (|Y_k| <= 2 q_k,
   sum_k q_k = sum_f |p_f| <= S1): ||Y^ - Y||_1 <= kappa S1, ||Y^||_1 <= (2 + kappa) S1, and
   each output is within [((1 + eta_M)^(L-1) - 1)(2 + kappa) S1 + kappa S1] / N of the real
   or imaginary part of c_m. If p is exactly Hermitian (checked, :func:`_hermitian`; the power
   keeps it so: z^ is Hermitian to the bit, the binary powering commutes with conjugation
   in round to nearest, and the arb-recomputed set is closed under f -> N - f), y is real and
   within SE / N of y_c; otherwise Re c_m = Re y_{2m} - Im y_{2m+1} (and Im c_m = Im y_{2m}
   + Re y_{2m+1}), and as y_c is real each part errs by at most SE / N: 2 SE / N in all.
   So Err = [((1 + eta_M)^(L-1) - 1)(2 + kappa) S1 + kappa S1 + h SE] / N, h = 1 or 2 (+
   underflow terms). Against 3-4's full complex transforms this charges about sqrt2 (L - 1)
   / L of e and 2 (L - 1) / L of the inverse's rounding term, for half the transform work.

Pessimistic output: ceil(2^K (y_c + Err)) on the window, the Chernoff mass
below the window added at its first index (moving mass to a higher loss only
raises the curve), the Chernoff mass above and the union-bounded mass moved
to +inf. Optimistic: P = floor(2^K (y_c - Err))_+,
tilted Q = ceil(2^K (y_c + Err)), and the P-mass outside the window recorded
as ``deficit``: for any set of classes S, sum_S (P_k - e^eps Q_k) >= sum_S
(P'_k - e^eps Q'_k) - deficit, so the queries subtract it (accountant).
The +inf masses compose exactly: 1 - (1 - alpha)^a, increasing in alpha,
evaluated in arb in the needed direction.
"""

from __future__ import annotations

import bisect
import math
from fractions import Fraction
from typing import Callable, Optional, Union

import numpy as np
from flint import acb, arb, arb_poly, fmpq, fmpz, fmpz_poly

from ..ball import endpoints, working_precision
from .binary64 import UNIT_ROUNDOFF_BITS as _UBITS, ieee_round_to_nearest
from .discretise import LowerDist, UpperDist
from .units import ceil_shift, floor_shift

__all__ = ["fourier_power", "FourierDeclined", "ieee_round_to_nearest"]

Dist = Union[UpperDist, LowerDist]

#: output resolution before rescaling to 2^-K (int64 holds 2^60 * masses < 8)
_S = 60
#: largest transform (memory: a few complex arrays of this length)
MAX_N = 1 << 23
#: largest unit exponent K: every nonzero mass c 2^-K (c >= 1) stays a normal
#: double and 2^(K + 53) x stays finite (:meth:`_Transform._exact_poly`)
MAX_K = 900
#: an absolute term that dominates every underflow contribution: an IEEE
#: operation whose result is below 2^-1022 errs by at most 2^-1075 in gradual
#: underflow and by at most 2^-1022 if the process flushes subnormals to zero
#: (a library may switch that on); at most 2^23 * 64 operations feed one
#: output, so 2^-960 per output covers either mode
_UF_BITS = 960
_PREC = 128


def _u() -> arb:
    return arb(2) ** -_UBITS


def _hi(x: arb) -> arb:
    """The exact upper end of a ball (a point)."""
    return endpoints(x)[1]


def _ceil_units(x: arb, K: int) -> int:
    """An integer >= 2^K x for every value of the ball (the scaling is exact
    at a precision that holds the upper end's mantissa and K more bits)."""
    hi = _hi(x)
    with working_precision(hi.mid().man_exp()[0].bit_length() + K + 64):
        return int((hi * arb(2) ** K).ceil().unique_fmpz())


class FourierDeclined(Exception):
    """The Fourier route cannot certify within the allowance; the caller
    falls back to exact products. ``factor`` estimates how much too large
    the error bound is (None: not a matter of the power's size)."""

    def __init__(self, why: str, factor: Optional[float] = None) -> None:
        super().__init__(why)
        self.factor = factor


#: twiddle tables by exact N. Never cut from a larger table: that table's entries and
#: its mu differ from N's own, and the certificate's bytes would depend on what the
#: process computed before (a worker process, or a long pytest run, gave other digits).
_TW: dict[int, tuple[np.ndarray, np.ndarray, arb]] = {}


def _table(n: int, N: int) -> tuple[np.ndarray, np.ndarray, arb]:
    """cos, sin of 2 pi k / N for k < n as doubles (arb at 128 bits, then the
    midpoint as a double), with a proven bound of |w^ - w| over the table (an
    exact point: the maximum of exact upper ends, compared exactly)."""
    c = np.empty(n)
    s = np.empty(n)
    worst = arb(0)
    with working_precision(_PREC):
        for k in range(n):
            s_, c_ = arb.sin_cos_pi_fmpq(fmpq(2 * k, N))
            fc, fs = float(c_.mid()), float(s_.mid())
            c[k], s[k] = fc, fs
            err = _hi((arb(fc) - c_).abs_upper() + (arb(fs) - s_).abs_upper())
            if err > worst:
                worst = err
    return c, s, worst


def _twiddles(N: int) -> tuple[np.ndarray, np.ndarray, arb]:
    """cos(2 pi k / N), sin(2 pi k / N) for k < N/2 as doubles, and mu: a
    proven bound of |w^_k - w_k| over all k.

    Two tables of about sqrt(N/2) entries each are computed in arb (errors
    mu_h, mu_l measured there); entry k = k_h B + k_l is the binary64 complex
    product of w_h(k_h) and w_l(k_l) (standard formula, one rounding per real
    operation), so |w^_k - w_k| <= mu_h (1 + mu_l) + mu_l
    + sqrt2 gamma_2 (1 + mu_h)(1 + mu_l) (Higham Lemma 3.5 for the product).
    Cached by N (the same N always gives the same table and mu)."""
    hit = _TW.get(N)
    if hit is not None:
        return hit
    half = max(1, N // 2)
    B = 1 << (((half - 1).bit_length() + 1) // 2)
    if B == 1:  # N <= 2: one entry
        c, s, mu = _table(half, N)
    else:
        ch, sh, mh = _table((half + B - 1) // B, N // B)
        cl, sl, ml = _table(B, N)
        c = (np.outer(ch, cl) - np.outer(sh, sl)).ravel()[:half]
        s = (np.outer(sh, cl) + np.outer(ch, sl)).ravel()[:half]
        with working_precision(_PREC):
            gamma2 = 2 * _u() / (1 - 2 * _u())
            mu = _hi(mh * (1 + ml) + ml + arb(2).sqrt() * gamma2 * (1 + mh) * (1 + ml))
    if len(_TW) >= 4:
        _TW.pop(next(iter(_TW)))
    _TW[N] = (c, s, mu)
    return c, s, mu


_REV: dict = {}


def _bitrev(L: int) -> np.ndarray:
    r = _REV.get(L)
    if r is None:
        r = np.zeros(1, dtype=np.int64)
        for _ in range(L):
            r = np.concatenate([2 * r, 2 * r + 1])
        _REV.clear()
        _REV[L] = r
    return r


_TPERM: dict[tuple[int, int], np.ndarray] = {}


def _transposed_bitrev(L: int, p: int) -> np.ndarray:
    """The bit-reversal permutation read into the (2^p, 2^(L-p)) transposed layout of
    :func:`_fft`: entry k * 2^(L-p) + r is the input index that lands at position
    r 2^p + k after the bit reversal."""
    r = _TPERM.get((L, p))
    if r is None:
        r = np.ascontiguousarray(_bitrev(L).reshape(-1, 1 << p).T).ravel()
        _TPERM.clear()
        _TPERM[(L, p)] = r
    return r


def _stage(ar: np.ndarray, ai: np.ndarray, br: np.ndarray, bi: np.ndarray, wr: np.ndarray, wi: np.ndarray,
           buf: np.ndarray) -> None:
    """One radix-2 butterfly stage in place: (a, b) <- (a + w b, a - w b), w b by the
    standard complex product, one IEEE operation each (module docstring 3). ``w``
    broadcasts against ``b``; ``buf`` holds four scratch rows of b's size."""
    shape = br.shape
    T1, T2, TR, TI = (row[: br.size].reshape(shape) for row in buf)
    np.multiply(wr, br, out=T1)
    np.multiply(wi, bi, out=T2)
    np.subtract(T1, T2, out=TR)  # Re(w b)
    np.multiply(wr, bi, out=T1)
    np.multiply(wi, br, out=T2)
    np.add(T1, T2, out=TI)  # Im(w b)
    np.subtract(ar, TR, out=br)
    np.subtract(ai, TI, out=bi)
    ar += TR
    ai += TI


def _fft(re: np.ndarray, im: np.ndarray, support: Optional[int] = None) -> tuple[np.ndarray, np.ndarray, arb]:
    """Forward DFT sum_i x_i e^{-2 pi i k f / N}, radix 2, in binary64
    (module docstring 3). Returns (re, im, mu).

    Layout and order only, never arithmetic: the stages whose butterflies span at most 2^p
    (p = ceil(L/2), at least 2, at most 8) run on the transposed (2^p, 2^(L-p)) view,
    whose rows are long and contiguous, and the later ones on the natural one (a stage
    of small span on the natural layout runs numpy's inner loop on rows of 2^(s-1)
    entries; the transposed early stages take 10-25% less CPU per transform at
    N = 2^16..2^22, measured; the stages that fit run slice by slice, a cache-sized slice
    through all of them, which the independence of a stage's butterflies allows, and the
    stages of larger span column slab by column slab, :func:`_column_stages`: at N = 2^21 the
    transform took 0.55 CPU s before the slabs, contiguous twiddles and contiguous early
    slices, 0.26 after). Every output is the same sequence of IEEE operations on
    the same operands as the textbook in-place loop, so the doubles are bit-identical
    to it (tests/pld/test_fourier.py checks it against that loop, signed zeros included).

    ``support``: every entry at index >= support is +0.0 and none is -0.0 (a zero-padded
    vector of masses). After the bit reversal such an input is nonzero only at positions
    that are multiples of 2^z, z = L - bitlength(support - 1), so in each of stages 1..z
    every butterfly has b = +0: w b is +-0 and a +- (+-0) is a exactly (+0 where a is +0:
    round to nearest gives +0 + -0 = +0 - +0 = +0), i.e. the stage copies a into both
    halves. Those stages (at most the transposed ones) are done as that copy: the same
    doubles, signed zeros included."""
    N = re.size
    L = N.bit_length() - 1
    cos, sin, mu = _twiddles(N)
    if L == 0:
        return re[[0]], im[[0]], mu
    # stages 1 and 2 (exact products) always transposed; at most 2^8 rows: a transpose of
    # two power-of-two sides near 2^9 and beyond thrashes the cache (measured 4.8 ms at 2^9 x 2^9)
    p = max(min(L, 2), min(8, (L + 1) // 2))
    P, M = 1 << p, N >> p
    # the butterflies of a stage are independent, so their order is free: a cache-sized
    # slice (2^_CHUNK_BITS points) goes through every stage it holds before the next slice
    # (the stages ran over the whole arrays, memory-bound beyond the cache)
    C = max(1, min(M, (1 << _CHUNK_BITS) >> p))
    perm = _transposed_bitrev(L, p)
    Xr = re[perm].reshape(P, M)  # row k: position k of each block of 2^p (column: the block)
    Xi = im[perm].reshape(P, M)
    # scratch of one slice: every stage below runs on at most 2^_CHUNK_BITS points at a time
    # (a buffer of N / 2 per row took 128 MB at N = 2^23); rows padded off a power-of-two stride
    half_slice = max(1, min(N, 1 << _CHUNK_BITS) // 2)
    buf = np.empty((4, half_slice + 8))[:, :half_slice]
    exact2 = bool(cos[N // 4] == 0.0 and sin[N // 4] == 1.0) if L >= 2 else False
    zero = 0 if support is None else max(0, min(p, L - max(1, support - 1).bit_length()))
    # a slice's columns are copied into a contiguous (2^p, C) block first: in place, its 2^p
    # rows lay 2^(L-p) doubles apart, and rows at one power-of-two stride share cache sets
    # (2^21: 14 ms a stage against 9); its result goes straight to its rows of the natural
    # layout (the transpose of the block), which are contiguous
    re = np.empty(N)
    im = np.empty(N)
    Rn, In = re.reshape(M, P), im.reshape(M, P)
    Br, Bi = (Xr, Xi) if C == M else (np.empty((P, C)), np.empty((P, C)))  # one slice: in place
    for c0 in range(0, M, C):
        if C < M:
            np.copyto(Br, Xr[:, c0:c0 + C])
            np.copyto(Bi, Xi[:, c0:c0 + C])
        _early_stages(Br, Bi, cos, sin, N, p, exact2, buf, zero)
        np.copyto(Rn[c0:c0 + C], Br.T)
        np.copyto(In[c0:c0 + C], Bi.T)
    q = min(L, max(p, _CHUNK_BITS))
    C = 1 << q
    # the slices' stages read the same twiddles in every slice: gathered once (at most 2^q)
    tw = {s: _stage_twiddles(cos, sin, N, s) for s in range(p + 1, q + 1)}
    for c0 in range(0, N, C):
        _late_stages(re[c0:c0 + C], im[c0:c0 + C], cos, sin, N, p + 1, q, buf, tw)
    if L > q:
        _column_stages(re, im, cos, sin, N, q, L, buf)
    return re, im, mu


#: points per slice of the stages that fit in the cache (:func:`_fft`): 2^15 complex
#: doubles and their scratch are about 1 MB
_CHUNK_BITS = 15


def _early_stages(Xr: np.ndarray, Xi: np.ndarray, cos: np.ndarray, sin: np.ndarray, N: int, p: int,
                  exact2: bool, buf: np.ndarray, zero: int = 0) -> None:
    """Stages 1..p of :func:`_fft` in place on columns of the transposed (2^p, cols)
    layout (row k: position k within each block of 2^p); the first ``zero`` of them have
    b = +0 in every butterfly (:func:`_fft`'s ``support``) and copy row k 2^zero into the
    rows k 2^zero + 1 .. (k + 1) 2^zero - 1."""
    P, W = Xr.shape
    n2 = P * W // 2
    if zero:
        for X in (Xr, Xi):
            R3 = X.reshape(P >> zero, 1 << zero, W)
            R3[:, 1:] = R3[:, :1]
        if zero >= 2 or (zero == 1 and not (p >= 2 and exact2)):
            _general_stages(Xr, Xi, cos, sin, N, p, buf, zero + 1)
            return
        _exact_stage2(Xr, Xi, P, W, n2, buf)  # zero == 1: stage 2 next, exact
        _general_stages(Xr, Xi, cos, sin, N, p, buf, 3)
        return
    # stage 1: w = 1, so w b = b exactly (1 * x and x - 0 * y are exact): a +- b only
    R, I = Xr.reshape(P // 2, 2, W), Xi.reshape(P // 2, 2, W)
    ar, ai, br, bi = (row[:n2].reshape(P // 2, W) for row in buf)
    np.copyto(ar, R[:, 0])
    np.copyto(ai, I[:, 0])
    np.copyto(br, R[:, 1])
    np.copyto(bi, I[:, 1])
    np.add(ar, br, out=R[:, 0])
    np.add(ai, bi, out=I[:, 0])
    np.subtract(ar, br, out=R[:, 1])
    np.subtract(ai, bi, out=I[:, 1])
    s0 = 2
    if p >= 2 and exact2:
        _exact_stage2(Xr, Xi, P, W, n2, buf)
        s0 = 3
    _general_stages(Xr, Xi, cos, sin, N, p, buf, s0)


def _exact_stage2(Xr: np.ndarray, Xi: np.ndarray, P: int, W: int, n2: int, buf: np.ndarray) -> None:
    """Stage 2 of :func:`_early_stages`: w = 1 and w = -i exactly (the table's entry N/4 is
    (0, 1): checked by the caller), so w b = b and (b_i, -b_r) with no rounding; the general
    stage computes the same doubles."""
    R, I = Xr.reshape(P // 4, 4, W), Xi.reshape(P // 4, 4, W)
    q = n2 // 2
    a0r, a0i, b0r, b0i = (buf[k, :q].reshape(P // 4, W) for k in range(4))
    a1r, a1i, b1r, b1i = (buf[k, q:2 * q].reshape(P // 4, W) for k in range(4))
    for dst, col, src in ((a0r, 0, R), (a0i, 0, I), (b0r, 2, R), (b0i, 2, I),
                          (a1r, 1, R), (a1i, 1, I), (b1r, 3, R), (b1i, 3, I)):
        np.copyto(dst, src[:, col])
    np.add(a0r, b0r, out=R[:, 0])
    np.add(a0i, b0i, out=I[:, 0])
    np.subtract(a0r, b0r, out=R[:, 2])
    np.subtract(a0i, b0i, out=I[:, 2])
    np.add(a1r, b1i, out=R[:, 1])
    np.subtract(a1i, b1r, out=I[:, 1])
    np.subtract(a1r, b1i, out=R[:, 3])
    np.add(a1i, b1r, out=I[:, 3])


def _general_stages(Xr: np.ndarray, Xi: np.ndarray, cos: np.ndarray, sin: np.ndarray, N: int, p: int,
                    buf: np.ndarray, s0: int) -> None:
    """Stages s0..p of :func:`_early_stages` by the general butterfly."""
    P, W = Xr.shape
    for s in range(s0, p + 1):
        half = 1 << (s - 1)
        stride = N >> s
        wr = cos[::stride][:half].reshape(1, half, 1)
        wi = -sin[::stride][:half].reshape(1, half, 1)  # w = e^{-2 pi i j / 2^s}
        R4 = Xr.reshape(P // (2 * half), 2, half, W)
        I4 = Xi.reshape(P // (2 * half), 2, half, W)
        _stage(R4[:, 0], I4[:, 0], R4[:, 1], I4[:, 1], wr, wi, buf)


def _stage_twiddles(cos: np.ndarray, sin: np.ndarray, N: int, s: int) -> tuple[np.ndarray, np.ndarray]:
    """(Re w, Im w) of stage s, w = e^{-2 pi i j / 2^s} for j < 2^(s-1): the table's doubles
    (the sine negated, exact), gathered into contiguous arrays. A strided view of the table
    gives the same doubles, but a stage broadcasts it over every row of its slice and re-read
    it strided each time: the stages past the transposed ones took 2-3x their arithmetic's
    time at N = 2^21 (measured, 9.6 ms against 28.7 ms for stage 15)."""
    half = 1 << (s - 1)
    stride = N >> s
    return np.ascontiguousarray(cos[::stride][:half]), -sin[::stride][:half]


def _late_stages(re: np.ndarray, im: np.ndarray, cos: np.ndarray, sin: np.ndarray, N: int, s_lo: int,
                 s_hi: int, buf: np.ndarray, tw: Optional[dict[int, tuple[np.ndarray, np.ndarray]]] = None) -> None:
    """Stages s_lo..s_hi of :func:`_fft` in place on a contiguous slice of the natural
    layout (a whole number of blocks of 2^s_hi points); ``tw``: the stages' twiddles
    (:func:`_stage_twiddles`) when the caller gathered them already."""
    for s in range(s_lo, s_hi + 1):
        half = 1 << (s - 1)
        wr, wi = tw[s] if tw is not None else _stage_twiddles(cos, sin, N, s)
        R = re.reshape(-1, 2 * half)
        I = im.reshape(-1, 2 * half)
        _stage(R[:, :half], I[:, :half], R[:, half:], I[:, half:], wr, wi, buf)


def _column_stages(re: np.ndarray, im: np.ndarray, cos: np.ndarray, sin: np.ndarray, N: int, q: int, L: int,
                   buf: np.ndarray) -> None:
    """Stages q+1..L of :func:`_fft` in place on the natural layout, read as a (2^(L-q), 2^q)
    matrix: such a stage pairs entries of one column (indices differing in bits q and up
    only), so a slab of columns goes through all of them before the next slab (the same
    butterflies, in another order). The stages ran over the whole arrays one after the
    other, memory-bound beyond the cache: 26 ms a stage against 8 ms in a slice at N = 2^21
    (measured). Entry (r, j) of a stage of span 2^s, half = 2^(s-1) = hr 2^q, has twiddle
    index (r mod hr) 2^q + j. From _COPY_ROWS rows on, a slab is copied into a contiguous
    block and back: its rows lie 2^q doubles apart and share cache sets (2^23, 256 rows:
    0.56 -> 0.43 CPU s for the eight stages; at 64 rows and fewer the copies cost about what
    they save, measured)."""
    rows = 1 << (L - q)
    R = re.reshape(rows, 1 << q)
    I = im.reshape(rows, 1 << q)
    C = max(1 << 6, (1 << _CHUNK_BITS) >> (L - q))  # columns per slab: about 2^_CHUNK_BITS points
    copy = rows >= _COPY_ROWS
    Br, Bi = (np.empty((rows, C)), np.empty((rows, C))) if copy else (R, I)
    for c0 in range(0, 1 << q, C):
        if copy:
            np.copyto(Br, R[:, c0:c0 + C])
            np.copyto(Bi, I[:, c0:c0 + C])
            Rs, Is = Br, Bi
        else:
            Rs, Is = R[:, c0:c0 + C], I[:, c0:c0 + C]
        width = Rs.shape[1]
        for s in range(q + 1, L + 1):
            hr = 1 << (s - 1 - q)
            stride = N >> s
            wr = cos[::stride][: hr << q].reshape(hr, 1 << q)[:, c0:c0 + C]
            wi = -sin[::stride][: hr << q].reshape(hr, 1 << q)[:, c0:c0 + C]  # w = e^{-2 pi i j / 2^s}
            R4 = Rs.reshape(rows // (2 * hr), 2, hr, width)
            I4 = Is.reshape(rows // (2 * hr), 2, hr, width)
            _stage(R4[:, 0], I4[:, 0], R4[:, 1], I4[:, 1], wr, wi, buf)
        if copy:
            np.copyto(R[:, c0:c0 + C], Br)
            np.copyto(I[:, c0:c0 + C], Bi)


#: rows of :func:`_column_stages`' matrix from which a slab is worked on as a contiguous copy
_COPY_ROWS = 1 << 7


def _pass_error(mu: arb) -> arb:
    """kappa of module docstring 7: the rounding error of one pre- or post-pass butterfly
    fl(fl(a) + fl(v^ fl(b))) relative to the moduli it reads (u, sqrt2 gamma_2: Higham Lemma 3.5;
    mu bounds |v^ - v|)."""
    u = _u()
    nu = arb(2).sqrt() * 2 * u / (1 - 2 * u)  # sqrt2 gamma_2
    return _hi(u + nu * (1 + mu) * (1 + u) + (1 + mu) * u + mu + u * (1 + u) * (1 + (1 + mu) * (1 + nu)))


def _rfft(x: np.ndarray, N: int, mass: arb) -> tuple[np.ndarray, np.ndarray, arb]:
    """The DFT of the real vector x (zero-padded to N = 2^L, entries >= +0) from ONE complex
    transform of length N/2 and a post-pass (module docstring 7), Hermitian-extended to all N
    frequencies: (re, im, e), every value within e of the exact DFT; ``mass`` >= ||x||_1."""
    N2 = N >> 1
    zr = np.zeros(N2)
    zi = np.zeros(N2)
    ev, od = x[0::2], x[1::2]
    zr[: ev.size] = ev
    zi[: od.size] = od
    Zr, Zi, mu_h = _fft(zr, zi, max(1, ev.size))
    cos, sin, mu = _twiddles(N)  # e^{-2 pi i f / N} for f < N/2
    # the values at N/2 - f (at 0 for f = 0): a reversed view, not a gather
    Zr_j = np.concatenate((Zr[:1], Zr[:0:-1]))
    Zi_j = np.concatenate((Zi[:1], Zi[:0:-1]))
    Ar, Ai = Zr + Zr_j, Zi - Zi_j  # Z_f + conj Z_j = 2 E_f
    Br, Bi = Zr - Zr_j, Zi + Zi_j  # Z_f - conj Z_j = 2 i O_f
    # v = -i w_f = -sin - i cos (exact negations of the table's doubles); the standard product
    Tr = (-sin) * Br - (-cos) * Bi
    Ti = (-sin) * Bi + (-cos) * Br
    re = np.empty(N)
    im = np.empty(N)
    re[:N2] = (Ar + Tr) * 0.5
    im[:N2] = (Ai + Ti) * 0.5
    re[N2] = Zr[0] - Zi[0]  # X_{N/2} = E_0 - O_0
    im[N2] = 0.0
    re[N2 + 1:] = re[1:N2][::-1]  # X_{N-f} = conj X_f (exact)
    im[N2 + 1:] = -im[1:N2][::-1]
    L1 = N2.bit_length() - 1
    with working_precision(_PREC):
        e_z = _hi((1 + mu_h + 5 * _u()) ** L1 - 1) * mass + arb(2) ** -_UF_BITS
        e = _hi(arb(2).sqrt() * (1 + mu) * e_z + _pass_error(mu) * (mass + e_z) + 2 * arb(2) ** -_UF_BITS)
    return re, im, e


def _hermitian(pr: np.ndarray, pi: np.ndarray) -> bool:
    """p_{N-f} = conj p_f for every f, exactly (p_0 and p_{N/2} real)."""
    N2 = pr.size >> 1
    return bool(np.array_equal(pr[1:], pr[:0:-1]) and np.array_equal(pi[1:], -pi[:0:-1])
                and pi[0] == 0 and pi[N2] == 0)


def _irfft(pr: np.ndarray, pi: np.ndarray) -> np.ndarray:
    """The real part of IFFT_N(p) read as y_{2m} + i y_{2m+1} = c_m, c = IFFT_{N/2}(Y) / 2, from
    ONE complex transform of length N/2 after a pre-pass (module docstring 7); its error is
    :func:`_irfft_error`'s."""
    N = pr.size
    N2 = N >> 1
    cos, sin, _ = _twiddles(N)
    Gr, Gi = pr[:N2] + pr[N2:], pi[:N2] + pi[N2:]
    Hr, Hi = pr[:N2] - pr[N2:], pi[:N2] - pi[N2:]
    # v = i e^{+2 pi i k / N} = -sin + i cos; the standard product
    Yr = Gr + ((-sin) * Hr - cos * Hi)
    Yi = Gi + ((-sin) * Hi + cos * Hr)
    Fr, Fi, _ = _fft(Yr, -Yi)
    out = np.empty(N)
    out[0::2] = Fr / N  # c = conj(FFT(conj Y)) / N; division by 2^L exact
    out[1::2] = -Fi / N
    return out


def _irfft_error(N: int, S1: arb, SE: arb, hermitian: bool) -> arb:
    """Err of :func:`_irfft` against the exact y_c (module docstring 7), given S1 >= sum_f |p_f|
    and SE >= sum_f |p_f - z_f^a| over all N frequencies."""
    _, _, mu = _twiddles(N)
    _, _, mu_h = _twiddles(N >> 1)
    L1 = (N >> 1).bit_length() - 1
    with working_precision(_PREC):
        kappa = _pass_error(mu)
        grow = (1 + mu_h + 5 * _u()) ** L1 - 1
        return _hi((grow * (2 + kappa) * S1 + kappa * S1 + (1 if hermitian else 2) * SE) / N
                   + 3 * arb(2) ** -_UF_BITS)


def _floats(p: fmpz_poly, K: int, up: bool) -> np.ndarray:
    """c_i 2^-K as doubles rounded up (``up``) or down: one nextafter from the
    converted value, which is within 1 ulp whatever the conversion's rounding
    (module docstring 1); K <= MAX_K."""
    f = np.array(p.coeffs(), dtype=np.float64)
    nz = f != 0
    f = np.where(nz, np.nextafter(f, np.inf if up else 0.0), 0.0)
    return np.ldexp(f, -K)


def _bins(r2: np.ndarray, a: int) -> tuple[list, list]:
    """Bins of the values |z^|^2: edges e_0 = max > e_1 > ... > e_J > 0
    (exact doubles, chosen so that r^a falls by about 2^-1/4 per bin near the
    top; floats choose, counting is exact). Bin j < J holds the values in
    (e_{j+1}, e_j], bin J those <= e_J; every value is <= its bin's edge."""
    srt = np.sort(r2)
    top = float(srt[-1])
    if not top > 0:
        return [0.0], [r2.size]
    edges = [top]
    j = 1
    while j / 4.0 <= 1100:
        e = top * 2.0 ** (-j / (2.0 * a))
        if not e > 0:
            break
        if e < edges[-1]:
            edges.append(e)
        j = j + 1 if j < 64 else int(j * 1.25)
    le = np.searchsorted(srt, np.array(edges), side="right")  # values <= e_j
    counts = [int(le[i] - le[i + 1]) for i in range(len(edges) - 1)] + [int(le[-1])]
    return edges, counts


def _power_bounds(r2: np.ndarray, a: int, e: arb, c: int) -> tuple[arb, arb]:
    """(S1, SE): upper bounds of sum_f |p_f| and sum_f |p_f - z_f^a| (module
    docstring 4) over the frequencies whose r2 = fl(|z^_f|^2) are given
    (|z^|^2 <= (r2 + 2^-1000) (1 + 3u), flush-to-zero included), with
    |z^_f - z_f| <= e and c the multiplication-chain count."""
    if r2.size == 0:
        return arb(0), arb(0)
    edges, counts = _bins(r2, a)
    S1 = arb(0)
    SE = arb(0)
    with working_precision(_PREC):
        growth = (1 + 3 * _u()) ** c  # nu = sqrt2 gamma_2 < 3u
        slack = 1 + 3 * _u()
        tiny = arb(2) ** -1000
        for edge, n in zip(edges, counts):
            if n == 0:
                continue
            r = ((arb(edge) + tiny) * slack).sqrt()
            ra = r ** a
            S1 += n * growth * ra
            SE += n * ((growth - 1) * ra + (r + e) ** a - ra)
        base = ((arb(edges[0]) + tiny) * slack).sqrt() + e
        grow_uf = arb(1) if base <= 1 else base ** (c + 1)
        uf = r2.size * (c + 1) * arb(2) ** -_UF_BITS * grow_uf
        return _hi(S1 + uf), _hi(SE + uf)


def _zeroed_bound(r2: np.ndarray, a: int, e: arb) -> arb:
    """An upper bound of sum_f |z_f|^a over the frequencies left at p_f = 0 (module
    docstring 4), given their r2 = fl(|z^_f|^2) and |z^_f - z_f| <= e: each |z_f| <=
    |z^_f| + e <= sqrt((max r2 + 2^-1000)(1 + 3u)) + e, as in :func:`_power_bounds`."""
    if r2.size == 0:
        return arb(0)
    with working_precision(_PREC):
        r = ((arb(float(r2.max())) + arb(2) ** -1000) * (1 + 3 * _u())).sqrt()
        return _hi(r2.size * (r + e) ** a)


def _pow(re: np.ndarray, im: np.ndarray, a: int) -> tuple[np.ndarray, np.ndarray, int]:
    """z^a element-wise by binary powering with the standard complex product
    (module docstring 4); returns the chain count c."""
    rr, ri, rc = None, None, 0
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
        br, bi = br * br - bi * bi, 2.0 * (br * bi)  # 2 x is exact
        bc = 2 * bc + 1
    assert rr is not None and ri is not None
    return rr, ri, rc


#: at most this many frequencies are evaluated in arb (:meth:`_Transform.power`)
MAX_EXACT_FREQUENCIES = 4096


class _Transform:
    """One vector's forward transform on a length-N window, its a-th power
    and the proven error of each step (module docstring 3-4)."""

    def __init__(self, poly: fmpz_poly, K: int, up: bool, N: int,
                 x: Optional[np.ndarray] = None) -> None:
        """``x``: ``_floats(poly, K, up)`` when the caller already has it."""
        x = _floats(poly, K, up) if x is None else x
        self.x, self.K = x, K
        with working_precision(_PREC + K):
            # up: nearest (or toward zero) then one ulp up: x <= c 2^-K (1 + 4u)
            mass = _hi(arb(int(poly(1))) / arb(2) ** K * (1 + 4 * _u() if up else 1))
        # a real input: half-length transform and a post-pass (module docstring 7)
        self.re, self.im, self.e = _rfft(x, N, mass)

    def _exact_poly(self) -> fmpz_poly:
        """The input doubles times 2^(K + 53), as exact integers: each nonzero
        entry is 2^-K times a double >= 1 - 2^-53, whose ulp is >= 2^-53. (The tests'
        exact route; :meth:`power` evaluates the same polynomial with the doubles as its
        arb coefficients.)"""
        v = np.ldexp(self.x, self.K + 53)
        if not bool(np.all(np.floor(v) == v)):
            raise FourierDeclined("inputs not on the expected binary grid")
        return fmpz_poly([int(t) for t in v.tolist()])

    def power(self, a: int, target: float) -> arb:
        """Computes p ~ z^a and returns Err, the bound per output coefficient
        (module docstring 4). The frequencies where |z|^a is not negligible
        (a few dozen: those below about N / (2 pi sd) of the composed law)
        carry nearly all of the float bound a e |z|^(a-1), so they are
        recomputed in arb: z_f is the exact input polynomial evaluated at the
        ball e^{-2 pi i f / N}, raised to the a-th power in acb, and p_f is
        the double nearest its midpoint, with |p_f - z_f^a| taken from the
        ball. The remaining frequencies keep the binned float bound."""
        N = self.re.size
        r2 = self.re * self.re + self.im * self.im
        # floats choose the frequencies left at p_f = 0 (module docstring 4): r^a below
        # 2^-60 target / N, one comparison per frequency (no transcendental over N)
        with np.errstate(over="ignore", divide="ignore"):
            r2_cut = math.exp(2.0 * (math.log(max(target, 1e-300)) - 60 * math.log(2) - math.log(N)) / a)
        live = np.flatnonzero(r2 > r2_cut)
        pr = np.zeros(N)
        pi = np.zeros(N)
        with np.errstate(over="ignore", invalid="ignore"):  # overflow: the bound is inf, declined
            lr, li, c = _pow(self.re[live], self.im[live], a)
        pr[live], pi[live] = lr, li
        # floats choose the set: the fewest largest |z| whose removal leaves
        # the float estimate (a e + 3 u c) |z|^(a-1) of the others' sum
        # below target (at most the cap)
        # a stable sort: equal |z|^2 (conjugate frequencies) keep index order on every
        # CPU (the default sort is a vectorised one on AVX-512, and ties could land apart);
        # ``live`` is increasing, so ties keep index order within it too
        order = live[np.argsort(-r2[live], kind="stable")]
        with np.errstate(divide="ignore", over="ignore"):
            est = (a * float(self.e.mid()) + 3 * 2.0 ** -53 * c) * \
                np.exp(0.5 * (a - 1) * np.log(np.maximum(r2[order], 1e-300)))
        rest_sum = np.cumsum(est[::-1])[::-1]  # rest_sum[k] = sum of est[k:]
        k = int(np.searchsorted(-rest_sum, -target, side="left"))
        S = order[: min(k, MAX_EXACT_FREQUENCIES)]
        # with its conjugate twins (z_{N-f} = conj z_f for a real input, the same r2 to the bit):
        # p stays exactly Hermitian, y = IFFT(p) real, and the real inverse is charged SE once
        # (module docstring 7); the twins cost no evaluation (below)
        S = np.union1d(S, (N - S) % N)
        rest = np.zeros(N, dtype=bool)
        rest[live] = True
        rest[S] = False
        dead = np.ones(N, dtype=bool)
        dead[live] = False
        SE_S = arb(0)
        S1_S = arb(0)
        if S.size:
            # any precision gives a rigorous ball (arb); it only sets how much of |p_f - z_f^a|
            # is the ball's radius rather than the rounding to a double (2^-53 of |z|^a): a
            # relative radius of about (n + a) 2^-prec on z_f^a at unit |z_f|, below 2^-64
            # from this precision on. 128 bits (two limbs) evaluate P in about half the time of
            # the 220 used before, and the bounds stay the same to the output's 2^-60 grid
            prec = max(_PREC, 64 + 2 * a.bit_length() + self.x.size.bit_length())
            with working_precision(prec):
                # the input doubles themselves as the coefficients: a double is an exact arb
                # (53 bits < prec), so this is the same exact polynomial as
                # _exact_poly() / 2^(K + 53), built without 120-bit integers (a tenth of the
                # time: 558 GMP integers cost 0.15 ms a power)
                P = arb_poly(self.x.tolist())
                # the input is real, so z_{N-f} = conj(z_f): where S holds both (equal
                # |z^|, they sort side by side) the second is the conjugate of the first,
                # p_{N-f} = conj(p_f) (exact) and |p_{N-f} - z_{N-f}^a| = |p_f - z_f^a|,
                # so its bounds are the first's; half of the arb evaluations go
                done: dict[int, tuple[float, float, arb, arb]] = {}
                for f in S.tolist():
                    twin = done.get((N - f) % N)
                    if twin is not None:
                        fr, fi, se, s1 = twin[0], -twin[1], twin[2], twin[3]
                    else:
                        sn, cs = arb.sin_cos_pi_fmpq(fmpq(2 * f, N))
                        w = acb(cs, -sn)  # e^{-2 pi i f / N}
                        za = P(w) ** a
                        fr, fi = float(za.real.mid()), float(za.imag.mid())
                        se = _hi((acb(fr, fi) - za).abs_upper())
                        s1 = _hi(acb(fr, fi).abs_upper())
                        done[f] = (fr, fi, se, s1)
                    pr[f], pi[f] = fr, fi
                    SE_S += se
                    S1_S += s1
        S1, SE = _power_bounds(r2[rest], a, self.e, c)
        SE_0 = _zeroed_bound(r2[dead], a, self.e)
        self.pr, self.pi = pr, pi
        with working_precision(_PREC):
            #: upper bounds of sum_f |p_f| and sum_f |p_f - z_f^a| (for a shared inverse)
            self.S1 = _hi(S1 + S1_S)
            self.SE = _hi(SE + SE_S + SE_0)
        return _irfft_error(N, self.S1, self.SE, _hermitian(pr, pi))

    def inverse(self) -> np.ndarray:
        """y ~ IFFT(p), within the error :meth:`power` returned (module docstring 7)."""
        return _irfft(self.pr, self.pi)

    @classmethod
    def pair(cls, P: fmpz_poly, xP: np.ndarray, Q: fmpz_poly, xQ: np.ndarray, K: int,
             N: int) -> tuple["_Transform", "_Transform"]:
        """The transforms of two real vectors (optimistic P rounded down, tilted Q rounded
        up) from ONE complex transform of x = xP + i xQ (module docstring 6)."""
        re = np.zeros(N)
        im = np.zeros(N)
        re[: xP.size] = xP
        im[: xQ.size] = xQ
        zr, zi, mu = _fft(re, im, max(xP.size, xQ.size))
        # the values at N - k (at 0 for k = 0): a reversed view, not a gather
        zr_r = np.concatenate((zr[:1], zr[:0:-1]))
        zi_r = np.concatenate((zi[:1], zi[:0:-1]))
        L = N.bit_length() - 1
        with working_precision(_PREC + K):
            mass = (arb(int(P(1))) + arb(int(Q(1))) * (1 + 4 * _u())) / arb(2) ** K
            grow = _hi((1 + mu + 5 * _u()) ** L - 1)
            e_z = grow * mass + arb(2) ** -_UF_BITS
            e = _hi(e_z + _u() * (mass + e_z) + arb(2) ** -1074)
        out = []
        for poly, x, fr, fi in ((P, xP, (zr + zr_r) * 0.5, (zi - zi_r) * 0.5),
                                (Q, xQ, (zi + zi_r) * 0.5, (zr_r - zr) * 0.5)):
            t = cls.__new__(cls)
            t.x, t.K, t.re, t.im, t.grow, t.e = x, K, fr, fi, grow, e
            out.append(t)
        return out[0], out[1]


def _pair_error(tP: _Transform, tQ: _Transform) -> arb:
    """Err of :func:`_inverse_pair`'s outputs, after both powers (module docstring 6)."""
    N = tP.re.size
    with working_precision(_PREC):
        S1 = tP.S1 + tQ.S1
        return _hi(((tP.grow * (1 + _u()) + _u()) * S1 + tP.SE + tQ.SE) / N + 4 * arb(2) ** -_UF_BITS)


def _inverse_pair(tP: _Transform, tQ: _Transform) -> tuple[np.ndarray, np.ndarray]:
    """Both inverses from ONE complex transform of c = p_P + i p_Q, after both powers
    (module docstring 6): (y_P, y_Q), each within :func:`_pair_error`."""
    N = tP.re.size
    cr = tP.pr - tQ.pi  # c = (pP_r - pQ_i) + i (pP_i + pQ_r)
    ci = tP.pi + tQ.pr
    re, im, _ = _fft(cr, -ci)
    # conj(FFT(conj c)) / N = y_P + i y_Q up to Err: its real part, and minus the
    # imaginary part of FFT(conj c); division by 2^L exact
    return re / N, -im / N


def _tail_point(xf: np.ndarray, a: int, log_target: float, above: bool) -> tuple[int, float]:
    """(t, lambda): a float estimate of the nearest composed index t beyond
    which (``above``: at or above; else at or below) the Chernoff bound
    e^{-+lambda t} M(+-lambda)^a is below e^log_target: for each lambda on a
    geometric grid the required t is (a log M(+-lambda) - log_target) / lambda
    (above; mirrored below), and the best lambda is kept. (The tilted mean
    a E_lambda[i] is not used: on a vector with a long thin tail it jumps
    from the bulk to the end of the support between neighbouring lambdas.)
    Floats choose; :func:`_chernoff_at` proves."""
    idx = np.arange(xf.size, dtype=np.float64)
    with np.errstate(divide="ignore"):
        logx = np.where(xf > 0, np.log(np.where(xf > 0, xf, 1.0)), -np.inf)
    sgn = 1.0 if above else -1.0

    def required(lams: np.ndarray) -> list[int]:
        # every lambda of a scan in one (len(lams), n) array: row by row the same IEEE
        # operations as one lambda at a time (a contiguous row is summed pairwise as a 1-d
        # array is), so the same t; the per-lambda Python loop over numpy calls was most of
        # a short step's window choice (sigma 4, q 0.01, T 1e4: 128 scans per power)
        # (in row blocks of about 2^14 entries, 128 KB: blocks of 2^20 ran out of the cache and
        # cost 2-3x the per-lambda passes from 1200 knots on; at 2^14 none is slower, measured)
        rows = max(1, (1 << 14) // max(1, idx.size))
        zmax, sums = [], []
        for r0 in range(0, lams.size, rows):
            # in place, the same IEEE operations as logx + lam idx, exp(z - max) (addition
            # commutes exactly): no temporaries of the block's size
            z = np.multiply.outer(sgn * lams[r0:r0 + rows], idx)
            z += logx
            zm = z.max(axis=1)
            zmax += zm.tolist()
            z -= zm[:, None]
            np.exp(z, out=z)
            sums += z.sum(axis=1).tolist()
        out = []
        for lam, zm, sm in zip(lams.tolist(), zmax, sums):
            logM = zm + math.log(sm)
            if above:
                out.append(math.ceil((a * logM - log_target) / lam))
            else:
                out.append(-math.floor((log_target - a * logM) / lam))  # negated: smaller is better
        return out

    # a coarse geometric scan, then two finer ones, each between the neighbours of the best point
    # so far: t(lambda) = (a log M(lambda) - log target) / lambda is unimodal (log M is convex, so
    # lambda g' - g grows: t' changes sign once), and steps of 1.045 at the end as the single fine
    # scan of 48 + 16 points had (1.037) in 40 evaluations (a third of a short step's window choice)
    lams = np.geomspace(1e-7, 50.0, 16)
    cand = [(t, float(v)) for t, v in zip(required(lams), lams)]
    for _ in range(2):
        i = int(np.argmin([t for t, _ in cand[-len(lams):]]))
        lams = np.geomspace(lams[max(0, i - 1)], lams[min(len(lams) - 1, i + 1)], 12)
        cand += [(t, float(v)) for t, v in zip(required(lams), lams)]
    t, lam = min(cand)
    return (t, lam) if above else (-t, lam)


def _chernoff_at(p: fmpz_poly, K: int, a: int, t: int, above: bool, lam: float) -> arb:
    """A proven upper bound of the mass of (c 2^-K)^{*a} at indices >= t
    (``above``) or <= t, c = the integer polynomial ``p`` (module docstring 5);
    lambda comes from the floats."""
    lam_q = Fraction(lam).limit_denominator(1 << 40)
    if lam_q <= 0:
        raise FourierDeclined("no usable Chernoff parameter")
    sgn = 1 if above else -1
    with working_precision(_PREC + K + a.bit_length()):
        L = arb(fmpq(lam_q.numerator, lam_q.denominator)) * sgn
        M = p(L.exp()) / arb(2) ** K
        return _hi((a * M.log() - L * t).exp())


def _inf_power(inf: fmpz, K: int, a: int, up: bool) -> fmpz:
    """2^K (1 - (1 - alpha)^a) for alpha = inf / 2^K, rounded in the given
    direction (it increases with alpha)."""
    if inf == 0:
        return fmpz(0)
    with working_precision(K + 64 + a.bit_length()):
        v = (1 - (1 - arb(inf) / arb(2) ** K) ** a) * arb(2) ** K
        lo, hi = endpoints(v)
        return fmpz(hi.ceil().unique_fmpz()) if up else max(fmpz(0), lo.floor().unique_fmpz())


def _scaled(vals: np.ndarray, err: arb, K: int, up: bool) -> fmpz_poly:
    """ceil(2^K (v + err)) (``up``) or floor(2^K (v - err))_+ for doubles
    0 <= v < 7: exact in int64 at 2^-60 first (scaling by 2^60 is exact,
    ceil/floor of a double is exact), then rescaled in the same direction."""
    e = _ceil_units(err, _S)
    s = np.ldexp(vals, _S)
    ints = np.ceil(s).astype(np.int64) + e if up else np.floor(s).astype(np.int64) - e
    p = fmpz_poly(np.maximum(ints, 0).tolist())
    if K >= _S:
        return p * (fmpz(1) << (K - _S))
    return ceil_shift(p, _S - K) if up else floor_shift(p, _S - K)


def _units_float(v: int, K: int) -> float:
    """v 2^-K as a double, for a choice: from v's top 64 bits, so that an allowance past the double
    range (sigma 1e100: "int too large to convert to float", an internal error) is read too; past
    2^1000 it is 2^1000, a target no mass reaches."""
    s = max(0, v.bit_length() - 64)
    return math.ldexp(float(v >> s), min(s - K, 1000 - 64))


def _window(main: fmpz_poly, xf: np.ndarray, K: int, a: int, allowance: int,
            limit: arb) -> tuple[int, int, arb, arb]:
    """(N, W, lo_m, hi_m): the transform length, the first composed index of
    the window [W, W + N), and proven bounds of the mass of the a-fold power
    below and above it (module docstring 5). The step's vector is split into
    a main part [c_lo, c_hi) and thin ends whose mass, times a, is below the
    target; sequences with a step in an end are union-bounded (counted in
    hi_m, wherever they land), the main-only ones by Chernoff (a floor of one
    unit on every knot of a long tail makes a single Chernoff bound far too
    loose). Floats choose c_lo, c_hi, lambda and the window."""
    n = main.length()
    full = a * (n - 1) + 1
    target = _units_float(max(allowance, 1), K + 4)
    cum = np.cumsum(xf)
    c_lo = int(np.searchsorted(cum, target / (4 * a), side="right"))  # a * mass[:c_lo] <= target/4
    rcum = np.cumsum(xf[::-1])
    c_hi = n - int(np.searchsorted(rcum, target / (4 * a), side="right"))
    if c_hi <= c_lo:
        c_lo, c_hi = 0, n
    xm = xf[c_lo:c_hi]
    log_target = math.log(target / 2)
    t_hi, lam_hi = _tail_point(xm, a, log_target, True)
    t_lo, lam_lo = _tail_point(xm, a, log_target, False)
    t_hi, t_lo = t_hi + a * c_lo, t_lo + a * c_lo
    whole = (max(2, 1 << (full - 1).bit_length()), 0, arb(0), arb(0))
    if t_lo < 0 and t_hi >= full:
        return whole
    t_lo, t_hi = max(t_lo, -1), min(t_hi, full)
    N = max(2, 1 << (t_hi - t_lo - 1).bit_length())
    if N >= full:
        return whole
    W = max(0, min(full - N, t_lo + 1 - (N - (t_hi - t_lo - 1)) // 2))
    pm = main.truncate(c_hi).right_shift(c_lo) if c_lo else main.truncate(c_hi)
    with working_precision(_PREC + K + a.bit_length()):
        total = arb(int(main(1)))
        ends = total - arb(int(pm(1)))  # exact integers
        # sequences with at least one step in an end: a * ends * total^(a-1)
        union = a * ends / arb(2) ** K * (total / arb(2) ** K) ** (a - 1)
    # main-only sequences: indices (a c_lo + sum of main-relative indices)
    hi_m = _chernoff_at(pm, K, a, W + N - a * c_lo, True, lam_hi) if W + N < full else arb(0)
    lo_m = _chernoff_at(pm, K, a, W - 1 - a * c_lo, False, lam_lo) if W > 0 else arb(0)
    hi_m = _hi(hi_m + union)
    if not hi_m + lo_m <= limit / 4:
        raise FourierDeclined("the mass outside the window exceeds the allowance")
    return N, W, lo_m, hi_m


def _window_of(out: np.ndarray, W: int) -> np.ndarray:
    """The composed indices [W, W + N) of a cyclic output of length N: out[(W + i) % N], as
    one rotation (W may exceed N) instead of a gather through an index array."""
    w = W % out.size
    return np.concatenate((out[w:], out[:w]))


def fourier_power(D: Dist, a: int, allowance: int, tick: Optional[Callable[[], None]] = None,
                  read_above: Optional[float] = None) -> Dist:
    """D^{*a} (a >= 2) as a rigorous bound of the same kind (module docstring),
    or FourierDeclined when the proven float error plus the mass outside the
    window exceeds ``allowance`` units of 2^-K (for each polynomial).

    ``read_above`` (a float loss in nats; a :class:`.discretise.LowerDist` only): the caller's
    queries read the result's suffixes only from about the first class whose effective loss
    s_k + tilt + log(P_k / Qt_k) exceeds it (:meth:`.queries.ComposedBounds._j_star`, less its
    window), so the classes more than :func:`_read_floor`'s margin below that class (found on the
    float outputs) are dropped from P and Q together before they are rounded to integers (most
    of the conversion's cost). Sound for any cut: every lower bound the queries form is
    sum_S (P_k - e^eps Q_k) over a set S of classes, and dropping classes from both P and Q only
    removes them from S (a dropped class loses its (P_k - e^eps Q_k)_+ >= 0, module docstring
    of :mod:`.queries`). Floats choose the cut; a suffix read below it is only looser."""
    K = D.K
    if K > MAX_K:
        raise FourierDeclined("unit below the binary64 range")
    if not ieee_round_to_nearest():
        raise FourierDeclined("binary64 arithmetic does not round to nearest in this process")
    upper = isinstance(D, UpperDist)
    if not upper and D.deficit != 0:  # type: ignore[union-attr]
        # a missing mass d would become up to about a d in the power; the
        # inputs here are discretised steps and their exact squares (d = 0)
        raise FourierDeclined("the input already carries a wrap deficit")
    main = D.poly if isinstance(D, UpperDist) else D.P
    n = main.length()
    if n == 0:
        raise FourierDeclined("empty distribution")
    xf = _floats(main, K, upper)
    with working_precision(_PREC + K):
        limit = arb(allowance) / arb(2) ** K
    N, W, lo_m, hi_m = _window(main, xf, K, a, allowance, limit)
    # the error floor no retry can lower: the inverse transform alone errs by
    # about L * eta * mass^a in total (the zero frequency), and the 2^-60
    # output grid adds N / 2^60; a tiny delta (allowance) is the exact
    # products' job (floats choose here: a wrong guess only costs the try)
    mass = float(xf.sum())
    L_est = max(1, (N - 1).bit_length())
    floor = L_est * 12 * 2.0 ** -53 * (math.exp(min(700.0, a * math.log(mass))) if mass > 0 else 0.0)
    if floor + 2.0 ** -60 * N > float(limit.mid()) / 2:
        raise FourierDeclined("the target is below the binary64 error floor")
    if N > MAX_N:
        raise FourierDeclined("transform longer than the memory budget")
    def within(err: arb) -> bool:
        with working_precision(_PREC + K):
            return bool(N * err + arb(N) / arb(2) ** _S + hi_m + lo_m <= limit)

    def declined(err: arb) -> FourierDeclined:
        with working_precision(_PREC + K):
            spent = N * err + arb(N) / arb(2) ** _S + hi_m + lo_m
        ratio = float(spent.mid()) / max(float(limit.mid()), 1e-300)
        return FourierDeclined("the float error bound exceeds the allowance",
                               ratio if math.isfinite(ratio) else None)

    def keep(out: np.ndarray, err: arb, up: bool) -> None:
        if not (np.all(np.isfinite(out)) and float(np.max(np.abs(out))) + float(err.mid()) < 6.0):
            raise FourierDeclined("transform out of range")
        outs.append((_window_of(out, W), err, up))

    outs: list = []
    if max(main.length(), 0 if upper else D.Q.length()) > N:
        raise FourierDeclined("distribution longer than the window")
    if upper:
        tr = _Transform(main, K, True, N, xf)
        if tick:
            tick()  # the caller's deadline, between transforms
        err = tr.power(a, float(limit.mid()) / 8)
        if not within(err):
            raise declined(err)
        keep(tr.inverse(), err, True)
    else:
        # P and tilted Q share one forward and (when the summed bound fits) one
        # inverse transform (module docstring 6)
        tP, tQ = _Transform.pair(main, xf, D.Q, _floats(D.Q, K, True), K, N)
        if tick:
            tick()
        eP = tP.power(a, float(limit.mid()) / 8)
        eQ = tQ.power(a, float(limit.mid()) / 8)
        for e_ in (eP, eQ):
            if not within(e_):
                raise declined(e_)
        err = _pair_error(tP, tQ)
        if within(err):
            yP, yQ = _inverse_pair(tP, tQ)
            keep(yP, err, False)
            keep(yQ, err, True)
        else:  # the summed bound is too wide: one inverse each
            keep(tP.inverse(), eP, False)
            keep(tQ.inverse(), eQ, True)
        if tick:
            tick()
    offset = a * D.offset + W
    if isinstance(D, UpperDist):
        vals, err, _ = outs[0]
        p = _scaled(vals, err, K, True)
        low = _ceil_units(lo_m, K)
        if low:
            p = p + fmpz_poly([low])  # mass below the window, moved up to its start
        inf = _inf_power(D.inf, K, a, True) + _ceil_units(hi_m, K)
        return UpperDist(D.m, K, offset, p, fmpz(inf))
    (pv, perr, _), (qv, qerr, _) = outs
    tilt = D.tilt * a
    if read_above is not None:
        cut = _read_floor(pv, qv, offset, D.m, float(tilt), read_above)
        pv, qv, offset = pv[cut:], qv[cut:], offset + cut
    P = _scaled(pv, perr, K, False)
    Q = _scaled(qv, qerr, K, True)
    deficit = _ceil_units(hi_m + lo_m, K)
    return LowerDist(D.m, K, offset, P, Q, _inf_power(D.inf, K, a, False), tilt,
                     fmpz(deficit))


#: knots below the float crossing that :func:`_read_floor` keeps, besides an eighth of a nat
_READ_MARGIN = 64


def _read_floor(pv: np.ndarray, qv: np.ndarray, offset: int, m: int, tilt: float, eps: float) -> int:
    """The first class of a composed lower pair (floats ``pv``, ``qv`` of P and tilted Q, class k
    at loss (offset + k) 2^-m, tilt ``tilt``) worth rounding to integers when the queries read
    suffixes from about the first class whose effective loss exceeds ``eps`` (the binary search
    of :meth:`.queries.ComposedBounds._j_star`, on the floats): that class less an eighth of a
    nat and _READ_MARGIN knots (the query's window starts 6 below its own j*, found on the
    integers). A choice only (:func:`fourier_power`)."""
    n = pv.size
    h = 2.0 ** -m

    def above(k: int) -> bool:
        p, q = float(pv[k]), float(qv[k])
        if not p > 0:
            return k > n // 2
        if not q > 0:
            return True
        return (offset + k) * h + tilt + math.log(p / q) > eps

    first = bisect.bisect_left(range(n), True, key=above)  # the decisions of _j_star's search
    return max(0, min(n - 1, first - _READ_MARGIN - (1 << max(0, m - 3))))
