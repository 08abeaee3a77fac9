"""The tilted certified Fourier power of the lower pair (:func:`fourier.fourier_lower_tilted`,
design pld-speed "The re-check's tilted Fourier power") against an independent route: the exact
a-fold convolutions of the same integer masses in Python integers (numpy object arrays, no
floats), and, through :func:`pld._power`, the exact products of the re-check itself."""

from __future__ import annotations

import math
import random
from fractions import Fraction

import numpy as np
import pytest
from mpmath import mpf

from dpverify.recheck import fourier as F
from dpverify.recheck import pld as P_


def _exact(c: list, a: int) -> list:
    """(c)^{*a} in exact integers (binary powering of object-array convolutions)."""
    r = np.array([1], dtype=object)
    b = np.array(c, dtype=object)
    while a:
        if a & 1:
            r = np.convolve(r, b)
        a >>= 1
        if a:
            b = np.convolve(b, b)
    return [int(v) for v in r.tolist()]


def _pair(rng: random.Random, n: int, K: int, m: int, off: int) -> tuple[list, list]:
    """Random P-masses (total below 1) and Q-masses about P e^-loss (class i holds losses in
    ((off + i) h, (off + i + 1) h]), with random slack either way: any nonnegative integers are a
    valid input, the likeness only keeps the tilted Q near P's size."""
    w = [rng.random() ** 3 for _ in range(n)]
    s = sum(w)
    P = [int(v / s * (1 << K)) for v in w]
    Q = [int(p * math.exp(-(off + i + rng.random()) / (1 << m)) * rng.uniform(0.5, 1.5)) for i, p in enumerate(P)]
    return P, Q


def _check(out: tuple, eP: list, eQ: list, off: int, a: int, K: int) -> tuple[int, int]:
    """Asserts every returned P-mass is at most the exact composed one and every Q-mass at least
    it (units 2^-K; the exact ones are in units 2^-(K a)). Returns (how many classes the window
    has inside the support, how many of them keep a positive P)."""
    o, Pn, Qn, _ = out
    sh = K * (a - 1)
    W = o - a * off
    inside = positive = 0
    for t, (p, q) in enumerate(zip(Pn, Qn)):
        k = W + t
        ep = eP[k] if k < len(eP) else 0
        eq = eQ[k] if k < len(eQ) else 0
        assert p << sh <= ep, ("P above the exact mass", t, p, ep >> sh)
        assert q << sh >= eq, ("Q below the exact mass", t, q, eq >> sh)
        inside += k < len(eP)
        positive += p > 0
    return inside, positive


_CASES = [(5, 2, 30, 3), (17, 7, 50, 5), (33, 12, 64, 8), (40, 24, 64, 10), (9, 40, 50, 4), (28, 19, 30, 2),
          (12, 33, 64, 6), (36, 16, 50, 7)]


def _run(no_wrap: bool = False) -> tuple[int, int, int, int]:
    """Every case of :data:`_CASES`, six random pairs each, a random read floor inside the
    support and allowances from huge (the smallest windows: their circular power wraps from above,
    amplified by e^(mu N) once untilted, and from below, damped) to tight. ``no_wrap``: the wrap
    bound R of step 4 replaced by 0 (what the test must catch). Returns (taken, wrapped, tight,
    violations): the counts of results, of windows shorter than the support above them, of results
    within 1e-6 of the exact mass on a class of at least 2^24 units, and (no_wrap only) of P-masses
    above the exact ones."""
    real = F._wrap_in
    if no_wrap:
        def zero(x, a, K, J, s, W, N, Ts):  # type: ignore[no-untyped-def]
            return np.zeros(N), real(x, a, K, J, s, W, N, Ts)[1]

        F._wrap_in = zero  # type: ignore[assignment]
    taken = wrapped = tight = bad = 0
    try:
        for seed, (n, a, K, m) in enumerate(_CASES):
            rng = random.Random(2000 + seed)
            for trial in range(6):
                off = rng.randint(-30, 30)
                P, Q = _pair(rng, n, K, m, off)
                inf = rng.randint(0, 1 << (K - 12))
                eP, eQ = _exact(P, a), _exact(Q, a)
                W = rng.randint(1, len(eP) - 3)
                allowance = 1 << (K + rng.choice([-12, 0, 30]))
                try:
                    out = F.fourier_lower_tilted((off, P, Q, inf), a, K, allowance, a * off + W, m, 1)
                except F.Declined:
                    continue
                taken += 1
                if no_wrap:
                    try:
                        _check(out, eP, eQ, off, a, K)
                    except AssertionError:
                        bad += 1
                    continue
                _check(out, eP, eQ, off, a, K)
                assert out[3] == F._inf_power(inf, K, a, False)
                N = len(out[1])
                if W + N < len(eP) and sum(eP[W + N:]) > 0:
                    wrapped += 1
                sh = K * (a - 1)
                big = [t for t in range(N) if W + t < len(eP) and eP[W + t] >> sh > 1 << 24]
                if big and max(Fraction(out[1][t] << sh, eP[W + t]) for t in big) > 1 - Fraction(1, 10**6):
                    tight += 1
    finally:
        F._wrap_in = real  # type: ignore[assignment]
    return taken, wrapped, tight, bad


def test_the_tilted_lower_power_is_below_p_and_above_q() -> None:
    # Fails if a tilt or untilt factor is on the wrong side of its exact value, if the float error
    # E_P is added instead of subtracted (or E_Q left out), if the wrap bound R is too small, or if
    # +inf is not the exact rounded-down composed mass; the counts make sure that windows did wrap
    # and that the bound is not vacuous.
    taken, wrapped, tight, _ = _run()
    assert taken >= 30 and wrapped >= 10 and tight >= 10, (taken, wrapped, tight)


def test_without_the_wrap_bound_p_comes_out_above_the_exact_masses() -> None:
    # the same cases with the wrapped-in mass not subtracted (R = 0): the circular power's wrap
    # (above all the amplified one from above) then lifts P above the exact composed masses in
    # several of them. Fails if step 4 were not needed, i.e. if the cases above did not test it.
    taken, _, _, bad = _run(no_wrap=True)
    assert taken >= 30 and bad >= 5, (taken, bad)


def _bell(n: int, K: int, m: int, off: int, centre: float, width: float) -> tuple[list, list]:
    """P: a bell of n classes (total just below 1), Q = P e^-loss at the class's midpoint."""
    w = [math.exp(-((i - centre) / width) ** 2 / 2) for i in range(n)]
    s = math.fsum(w)
    P = [int(v / s * (1 << K) * 0.999) for v in w]
    return P, [int(p * math.exp(-(off + i + 0.5) / (1 << m))) for i, p in enumerate(P)]


def test_the_tilt_passes_where_the_untilted_power_declines_and_loses_less_than_it_charged() -> None:
    # a bell of 48 classes to the 32nd power, read above class 900 (delta there 2e-7 at
    # eps = (need + a + 1) h, the eps the charge assumes): the untilted lower power declines (its
    # error is absolute, of the whole mass), the tilted one passes, and what the returned pair
    # loses against the exact composition, sum over the read classes of the exact
    # (P - e^eps Q)+ minus the returned one, is within the allowance. Fails if the tilt is not
    # applied, or if the charge is not honest.
    n, K, a, m, off, W, allowance = 48, 90, 32, 4, -20, 900, 1 << 36
    P, Q = _bell(n, K, m, off, 24, math.sqrt(30))
    eP, eQ = _exact(P, a), _exact(Q, a)
    with pytest.raises(F.Declined):
        F.fourier_lower((off, P, Q, 0), a, K, allowance, m)
    need = a * off + W
    out = F.fourier_lower_tilted((off, P, Q, 0), a, K, allowance, need, m, 1)
    _check(out, eP, eQ, off, a, K)
    assert out[0] == need
    sh = K * (a - 1)
    E = Fraction(math.exp((need + a + 1) / (1 << m)))
    exact = sum(max(Fraction(eP[k], 1 << sh) - E * Fraction(eQ[k], 1 << sh), 0) for k in range(W + 1, len(eP)))
    got = sum(max(p - E * q, 0) for p, q in zip(out[1][1:], out[2][1:]))
    assert exact > 1 << (K - 24)  # delta above 6e-8: not an empty read region
    assert 0 <= exact - got <= allowance


def test_the_power_route_takes_the_tilted_lower_power_and_agrees_with_the_exact_products() -> None:
    # pld._power of a lower pair of 40,000 classes (a Gaussian mechanism's PLD, eta = 0.02, on
    # 2^-14) to T = 64, read above the classes of delta(5) (the Reader of the lower pair), with the
    # lower Fourier kernel: the whole d^T by the tilted power. Its delta(5) lower bound must agree
    # with the exact products' (each of them rounds P down and Q up by less than a unit a
    # coefficient, a Q unit counting e^5 times) within the kernel's allowance plus those
    # roundings. Fails if the kernel does not take the tilted route (its first class is the read
    # floor itself), or if it is off by more. (Measured: the two differ by 2.1e7 units of 2^-64,
    # against an allowance of 8.2e7.)
    n, K, T, m = 40000, 64, 64, 14
    eta = 0.02
    off = -n // 2 + int(eta * (1 << m))
    sd = math.sqrt(2 * eta) * (1 << m)
    P, Q = _bell(n, K, m, off, eta * (1 << m) - off, sd)
    budget = 1 << 8
    eps = mpf(5)
    need = int(eps * (1 << m)) - 1 - T  # the lower pair's floor (pld._compose: need - total)
    kernel = P_._fourier_kernel(False, K, budget, T, m)
    packed = P_._pack_lower((off, P, Q, 0), K)
    L_t = P_._unpack(P_._power(packed, T, P_._pmul_lower, K, budget, P_._Reader(need, False), kernel))
    L_e = P_._unpack(P_._power(packed, T, P_._pmul_lower, K, budget, P_._Reader(need, False)))
    assert L_t[0] == need and L_e[0] < need
    lo_t, lo_e = P_._lower_delta(L_t, eps), P_._lower_delta(L_e, eps)
    allowance = budget * (4 * T.bit_length() + 4) * P_.FOURIER_SHARE
    rounding = 6 * len(L_e[1]) * (1 + 149)  # units: six squarings, P and Q rounded, e^5 < 149
    assert abs(lo_t - lo_e) <= allowance + rounding, (lo_t, lo_e)
    assert lo_e > 1 << (K - 20)  # delta(5) about 1e-3: the read classes hold mass


_SPY = """
import json, sys
from dpverify.recheck import fourier as F
from dpverify.recheck.verify import verify_file
real, taken = F.fourier_lower_tilted, []
def spy(*args):
    out = real(*args)
    taken.append(len(out[1]))
    return out
F.fourier_lower_tilted = spy
code, msg = verify_file(sys.argv[1])
print(code, len(taken))
print(msg)
"""


@pytest.mark.slow
@pytest.mark.parametrize("name", ["pld-dpsgd-t1000-sigma1.1-delta1.5.json", "pld-dpsgd-t100000-sigma1-delta25.5.json"])
def test_genuine_certificates_through_the_tilted_lower_power_are_confirmed(name: str) -> None:
    # two genuine certificates (dpverify audit dpsgd --noise-multiplier 1.1 --sampling-rate 0.01
    # --steps 1000 --eps 1.5 --digits 6, and --noise-multiplier 1 --steps 100000 --eps 25.5
    # --digits 4), whose lower pairs were composed by the exact products before: re-proved with
    # the lower pair from the tilted power (the spy counts the real function's results; a fresh
    # process, as the re-check remembers its queries within one), confirmed, and the
    # independent enclosure inside the recorded one. Fails if the route is not taken, or if its
    # pair is below the truth or too loose for the recorded enclosure (exit 1 or 3).
    import json
    import re
    import subprocess
    import sys
    from pathlib import Path

    path = Path(__file__).parent / "data" / name
    run = subprocess.run([sys.executable, "-c", _SPY, str(path)], capture_output=True, text=True, check=True)
    head, msg = run.stdout.split("\n", 1)
    code, taken = head.split()
    assert code == "0" and int(taken) >= 1, run.stdout
    lo, hi = (Fraction(v) for v in re.search(r"enclosure \[([^,]+), ([^\]]+)\]", msg).groups())  # type: ignore[union-attr]
    rec = json.loads(path.read_text())["result"]["enclosure"]
    assert Fraction(rec["lo"]) <= lo <= hi <= Fraction(rec["hi"])


def test_the_exact_integer_sum_is_an_upper_bound_and_close() -> None:
    # _sum_up_exact against the exact rational sum of the same doubles: wide exponent ranges,
    # subnormals (np.ldexp rounds them; floor + 1 must still cover), exact zeros and one-element
    # arrays. Fails if a term is truncated without the +1, or if the shift overflows int64 (the
    # sum then wraps to a negative number).
    rng = np.random.default_rng(7)
    for trial in range(40):
        n = int(rng.integers(1, 5000))
        e = rng.integers(-1074, 300, size=n) if trial % 3 == 0 else rng.integers(-60, 10, size=n)
        t = np.ldexp(rng.random(n), e)
        t[rng.random(n) < 0.1] = 0.0
        if trial % 5 == 0:
            t[0] = 5e-324
        exact = sum((Fraction(float(v)) for v in t.tolist()), Fraction(0))
        got = Fraction(*F._sum_up_exact(t).as_integer_ratio())
        assert got >= exact
        top = Fraction(float(t.max()))
        assert got - exact <= n * top * Fraction(1, 1 << 48) + n * Fraction(1, 1 << 1000)
    with pytest.raises(F.Declined):
        F._sum_up_exact(np.array([1.0, np.inf]))


@pytest.mark.parametrize("j0,step,m,sign", [(-5000, 37, 10, 1), (123456, -64, 12, -1), (0, 61 << 7, 27, -1),
                                            (-(61 * 12345), 61 << 7, 27, 1)])
def test_the_exp_tables_round_each_way(j0: int, step: int, m: int, sign: int) -> None:
    # _exp_table rounded up and down against MPFR at 300 bits, and _exp_mp: up >= e^x >= down for
    # every entry. Fails if a direction is swapped anywhere in the chain (the factors, the
    # product's correction, or the exponent's formation).
    import gmpy2

    count = 3000
    up, dn = F._exp_table(j0, count, m, sign, step), F._exp_table(j0, count, m, sign, step, False)
    ctx = gmpy2.context(precision=300)
    for t in range(0, count, 7):
        j = sign * (j0 + t * step)
        x = ctx.exp(ctx.div(gmpy2.mpz(j), gmpy2.mpz(1) << m))
        assert dn[t] <= x <= up[t], (t, dn[t], x, up[t])
        assert F._exp_mp(j, m) >= x


def test_a_round_down_table_that_overflows_declines() -> None:
    """reftilt L2: a round-down table's second factor can pass the double range (count 5, cap 600:
    e^720) and came back inf where the exact value is e^120; inf is no lower bound, so it declines."""
    import pytest

    from dpverify.recheck import fourier as F

    with pytest.raises(F.Declined):
        F._exp_table(-600, 5, 0, 1, 240, False)
    g = F._exp_table(-60, 5, 0, 1, 24, False)  # in range: every entry at most e^(-60 + 24 t)
    import mpmath

    for t, v in enumerate(g.tolist()):
        assert mpmath.mpf(v) <= mpmath.exp(-60 + 24 * t)
