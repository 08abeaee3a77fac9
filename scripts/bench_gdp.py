#!/usr/bin/env python3
"""Throughput of certified delta_mu(eps) next to plain mpmath at the same digits.

One run, fixed grid (mu in {0.1, 0.5, 1, 2, 6}, eps in {-10, 0, 1, 5, 50, 100}),
at 15 and 50 digits. dpverify returns a certified enclosure with relative
width <= 10^-digits (including the precision escalation that guarantees it);
mpmath returns one uncertified number at that working precision. The ratio
is dpverify evaluations/s divided by mpmath evaluations/s (> 1: dpverify faster).

    python scripts/bench_gdp.py [--repeat N]
"""

from __future__ import annotations

import argparse
import time
from fractions import Fraction

import sys
from pathlib import Path

import mpmath

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout too
from dpverify import delta_mu  # noqa: E402

MUS = ["0.1", "0.5", "1", "2", "6"]
EPSS = ["-10", "0", "1", "5", "50", "100"]


def _mpmath_delta(mu: str, eps: str, dps: int) -> mpmath.mpf:
    with mpmath.workdps(dps):
        m, e = mpmath.mpf(Fraction(mu).numerator) / Fraction(mu).denominator, mpmath.mpf(eps)
        return mpmath.ncdf(-e / m + m / 2) - mpmath.exp(e) * mpmath.ncdf(-e / m - m / 2)


def _rate(fn, repeat: int) -> float:
    n = 0
    start = time.perf_counter()
    for _ in range(repeat):
        for mu in MUS:
            for eps in EPSS:
                fn(mu, eps)
                n += 1
    return n / (time.perf_counter() - start)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=20)
    args = ap.parse_args()
    print(f"grid: {len(MUS)} mu x {len(EPSS)} eps, repeated {args.repeat} times")
    print(f"{'digits':>6}  {'dpverify eval/s':>16}  {'mpmath eval/s':>14}  {'ratio':>6}")
    for digits in (15, 50):
        ours = _rate(lambda m, e: delta_mu(m, e, digits), args.repeat)
        theirs = _rate(lambda m, e: _mpmath_delta(m, e, digits), args.repeat)
        print(f"{digits:>6}  {ours:>16.0f}  {theirs:>14.0f}  {ours / theirs:>6.2f}")


if __name__ == "__main__":
    main()
