"""Genuine certificates at the edges of the documented input ranges: each is written through
the CLI, must verify (exit 0), and its value is checked against a route of its own.

Each case answered exit 3 before (the producer could not finish, or the second route could
not re-prove what the producer proved); the docstring of each test names what failed.
"""

from __future__ import annotations

import json

import mpmath
import pytest
from mpmath import mpf

from dpverify.cli import main

from ..certs import outcome


def _cert(capsys, argv: list) -> dict:
    assert main(argv + ["--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("alpha,steps", [("2", "1"), ("1/2", "3"), ("20000", "1")])
def test_pure_dp_at_eps0_zero_is_exactly_zero(alpha, steps, capsys):
    """At eps0 = 0 the worst pair of pure DP is randomized response at p = 1/2, P = Q, so
    every Renyi divergence is exactly 0. The producer's formula subtracted two balls of
    log 2 that never cancel, and no precision reached a relative width around 0 (exit 3)."""
    c = _cert(capsys, ["rdp", "divergence", "--mechanism", "pure", "--eps0", "0",
                       "--alpha", alpha, "--steps", steps])
    assert c["result"]["enclosure"] == {"lo": "0", "hi": "0"}
    assert outcome(c) == 0


@pytest.mark.parametrize("q,alpha", [("0.5", 2), ("1e-3000", 3), ("0.5", 20)])
def test_subsampled_gaussian_with_an_exponent_of_1e6000(q, alpha, capsys):
    """sigma = 1e-3000: the integer-order sum A_n = sum_k C(n,k) q^k (1-q)^(n-k)
    e^((k^2 - k) / (2 sigma^2)) (Mironov, Talwar, Zhang 2019 Sec 3.2) has exponents of order
    1e6000. The second route's log-sum-exp took one interval point M for both ends, so at
    any precision below 20000 bits its lower sum underflowed to 0 (exit 3, "log of an
    interval that reaches 0"). Reference: mpmath at 6100 digits sums the terms exactly as
    written, log(A_n) / (n - 1)."""
    c = _cert(capsys, ["rdp", "divergence", "--mechanism", "subsampled-gaussian",
                       "--noise-multiplier", "1e-3000", "--sampling-rate", q, "--alpha", str(alpha)])
    assert outcome(c) == 0
    with mpmath.workdps(6100):
        s, Q = mpf("1e-3000"), mpf(q)
        total = mpmath.fsum(mpmath.binomial(alpha, k) * Q**k * (1 - Q) ** (alpha - k)
                            * mpmath.exp((k * k - k) / (2 * s * s)) for k in range(alpha + 1))
        ref = mpmath.log(total) / (alpha - 1)
        assert mpf(c["result"]["enclosure"]["lo"]) <= ref <= mpf(c["result"]["enclosure"]["hi"])
