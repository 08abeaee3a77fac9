#!/usr/bin/env python3
"""Floating-point reference (NOT certified): the shuffled lower end that two concrete
dataset pairs give, beside the certified bracket dpverify prints.

    python scripts/shuffle_pair_reference.py            # the table of docs/guide/sampling.md
    python scripts/shuffle_pair_reference.py --quick    # the one-epoch row only

Both pairs use one-dimensional, model-independent gradients, the "max of the batch
sums" statistic M = max_t Y_t of one epoch (Chua et al., ICML 2024) and the add-remove
relation under dpverify's fixed-layout convention (the removed record's slot stays
empty: its contribution is 0, which is also replace-special):

* others 0 (the pair earlier releases of dpverify certified): x* has gradient +1,
  every other record 0; one epoch is MoG(1) against N(0).
* others -1 (the pair of Chua et al.'s released ShuffleAccountant, google-research
  dpsgd_batch_sampler_accounting/dpsgd_bounds.py, means 2 and 1, and the one
  dpverify/sampling/shuffle.py now certifies): x* has gradient +1,
  every other record -1. After subtracting the known batch sums -B, x*'s batch is
  shifted by +2 under D and by +1 under D' (its slot empty, B - 1 records of -1): one
  epoch is MoG(2) against MoG(1). The shift under D' sits in the same random batch, so
  the 1/T dilution of the first pair disappears.

M's law is exact under either dataset (Q(M <= x) = Phi((x - b)/s) Phi(x/s)^(T-1), and
a in place of b under P); this script cuts M into cells (masses in mpmath at 60
digits), rounds each cell's privacy loss down to a grid of width h and composes E
independent epochs (dynamic shuffling) by FFT products in binary64, both orientations
(remove: P against Q; add: Q against P), and reports the larger epsilon(delta).
Persistent shuffling sums x*'s batch over the epochs: one epoch at s / sqrt(E).
Rounding the losses down and binning M are post-processings or under-estimates, so
up to floating-point error each number is a lower bound of the mechanism's
epsilon(delta); it carries no proof: it is the floating-point check of the certified
lower ends (docs/guide/sampling.md). Run time: about two minutes.
"""

from __future__ import annotations

import argparse
import math

import mpmath as mp
import numpy as np

# (label, sigma, N, B, E, delta): the settings whose certified brackets the sampling guide lists
SETTINGS = [
    ("Chua et al.'s released example (T = 1000, one epoch)", "0.35", 100_000, 100, 1, "1e-6"),
    ("TF Privacy classification tutorial, 2020 (3 epochs)", "1.3", 60_000, 250, 3, "1e-5"),
    ("TF Privacy classification tutorial, 2019 (15 epochs)", "1.3", 60_000, 250, 15, "1e-5"),
    ("MNIST (256 of 60000, 60 epochs)", "1.1", 60_000, 256, 60, "1e-5"),
]
PAIRS = {"others 0": (1, 0), "others -1": (2, 1)}


def cell_masses(sigma: float, T: int, a: int, b: int,
                cells: int = 8000) -> tuple[np.ndarray, np.ndarray]:
    """P and Q masses of M cut at `cells` thresholds (gradient units), mpmath at 60 digits
    (the tail cells of a large epsilon are differences of numbers within 1e-40 of 1)."""
    with mp.workdps(60):
        s = mp.mpf(sigma)
        width = mp.mpf(2 + 12 * sigma)
        edges = [mp.mpf(-4 * sigma) + width * k / (cells - 1) for k in range(cells)]

        def cdf(x, shift):
            return mp.exp(mp.log(mp.ncdf((x - shift) / s)) + (T - 1) * mp.log(mp.ncdf(x / s)))

        fp = [mp.mpf(0)] + [cdf(x, a) for x in edges] + [mp.mpf(1)]
        fq = [mp.mpf(0)] + [cdf(x, b) for x in edges] + [mp.mpf(1)]
        p = np.array([float(fp[i + 1] - fp[i]) for i in range(len(fp) - 1)])
        q = np.array([float(fq[i + 1] - fq[i]) for i in range(len(fq) - 1)])
    keep = (p > 0) & (q > 0)
    return p[keep], q[keep]


def _fft_product(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    n = len(u) + len(v) - 1
    size = 1 << (n - 1).bit_length()
    w = np.fft.irfft(np.fft.rfft(u, size) * np.fft.rfft(v, size), size)[:n]
    return np.clip(w, 0.0, None)


def composed_losses(p: np.ndarray, q: np.ndarray, epochs: int,
                    h: float) -> tuple[np.ndarray, np.ndarray]:
    """The law under p of the E-epoch privacy loss, each epoch's loss rounded down to h."""
    idx = np.floor(np.log(p / q) / h).astype(np.int64)
    base_off = int(idx.min())
    base = np.bincount(idx - base_off, weights=p)
    dist, off, e = np.array([1.0]), 0, epochs
    while e:
        if e & 1:
            dist, off = _fft_product(dist, base), off + base_off
        e >>= 1
        if e:
            base, base_off = _fft_product(base, base), 2 * base_off
    return dist, (np.arange(len(dist)) + off) * h


def eps_of(dist: np.ndarray, grid: np.ndarray, delta: float) -> float:
    """Smallest eps with sum dist (1 - e^(eps - loss))_+ <= delta, by bisection."""
    lo, hi = 0.0, max(float(grid[-1]), 0.0)
    for _ in range(60):
        mid = (lo + hi) / 2
        if float(np.sum(dist * np.clip(1.0 - np.exp(mid - grid), 0.0, None))) > delta:
            lo = mid
        else:
            hi = mid
    return lo


def lower_eps(sigma: float, T: int, epochs: int, delta: float, pair: str, persistent: bool,
              h: float = 5e-4) -> float:
    a, b = PAIRS[pair]
    if persistent:
        sigma, epochs = sigma / math.sqrt(epochs), 1
    p, q = cell_masses(sigma, T, a, b)
    return max(eps_of(*composed_losses(u, v, epochs, h), delta) for u, v in ((p, q), (q, p)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="only the one-epoch row")
    args = ap.parse_args()
    print("| setting | sampling | others 0 (float) | others -1 (float) |")
    print("|---|---|---|---|")
    for label, s, n, bsz, e, d in SETTINGS[:1] if args.quick else SETTINGS:
        T = -(-n // bsz)
        for persistent in ((False,) if e == 1 else (False, True)):
            row = [lower_eps(float(s), T, e, float(d), pair, persistent) for pair in PAIRS]
            how = "shuffle-persistent" if persistent else "shuffle"
            print(f"| {label}, sigma {s}, T = {T}, delta {d} | {how} | {row[0]:.3f} "
                  f"| {row[1]:.3f} |", flush=True)


if __name__ == "__main__":
    main()
