"""The lower pair composed with its Q loss-tilted (issue 22 / 24, T = 10^7; pld-speed.md, "The tilted
lower pair at T = 10^7"): each step's Q-mass is stored as Q~_i >= Q_i e^(h i + gamma)
(:func:`pld._tilt_q`), composed by the same exact products, and read back by
Q'_k >= Q~_k e^-(h k + T gamma) (:func:`pld._untilt_q`). Checked against an independent route: the
exact composition of the same step pair in rationals (integer convolutions), compared exactly, and
mpmath at 400 bits for the per-step tilt; a tilt claimed one step of 2^-(m + 4) larger than the one
applied is caught. End to end: the T = 10^7 certificate (slow)."""

from __future__ import annotations

import json
import subprocess
import sys
from fractions import Fraction

import mpmath
import pytest
from mpmath import mpf

from dpverify.recheck import pld as P


def _step(m: int, K: int, sigma: str = "1", q: str = "0.1", direction: str = "remove") -> tuple:
    """One step's lower pair (i0, P, Q, inf) of the subsampled Gaussian, in units 2^-K."""
    tails = P.gauss_tails(Fraction(sigma), Fraction(q), direction)
    with mpmath.workdps(P._DPS):
        _, low = P._discretise(tails, K, mpf(10) ** -30, m)
    return low


def _conv(a: list, b: list) -> list:
    out = [0] * (len(a) + len(b) - 1)
    for i, x in enumerate(a):
        if x:
            for j, y in enumerate(b):
                out[i + j] += x * y
    return out


def test_a_steps_tilt_bounds_its_masses_from_above_by_less_than_a_unit() -> None:
    m, K = 4, 80
    i0, Pm, Qm, _ = _step(m, K)
    Qt, G = P._tilt_q(i0, Pm, Qm, K, m)
    assert len(Qt) == len(Qm) and G != 0
    with mpmath.workprec(400):
        gamma = mpf(G) / mpf(2) ** (m + P._TILT_G_BITS)
        assert abs(gamma) < mpf(2) ** -m  # the tilted Q sums to about the P-mass: gamma is within a cell
        for j, (q, qt) in enumerate(zip(Qm, Qt)):
            exact = q * mpmath.exp(mpf(i0 + j) / mpf(2) ** m + gamma)
            assert qt >= exact and qt - exact < 1 + mpf(2) ** -300, j
        # the tilted masses are near the P-masses: the unit needs no bits of e^-eps
        tot_t, tot_p = sum(Qt), sum(Pm)
        assert abs(tot_t - tot_p) < tot_p * mpf(10) ** -3


def _composed(m: int, K: int, T: int, monkeypatch, budget: int = 0):
    """The T-fold lower pair of :func:`_step` through :func:`pld._compose` with ``tilt``, read back by
    :func:`pld._untilt_q`, and the exact composition of the step's pair (integers in units 2^-(T K)).
    The products' trims are switched off: a trimmed class is dropped, P and Q together (a sound
    restriction of the pair, but then the full exact composition is no reference)."""
    monkeypatch.setattr(P, "_trim", lambda v, budget: (0, 0, v.n, 0))
    event = (lambda d: (P.gauss_tails(Fraction(1), Fraction("0.1"), d), mpf(0)), T)
    with mpmath.workdps(P._DPS):
        _, Lt = P._compose([event], "remove", K, mpf(10) ** -30, budget, m, "lower", tilt=True)
    i0, Pm, Qm, _ = _step(m, K)
    Pe, Qe = Pm, Qm
    for _ in range(T - 1):
        Pe, Qe = _conv(Pe, Pm), _conv(Qe, Qm)
    return Lt, (T * i0, Pe, Qe)


@pytest.mark.parametrize("T", [2, 5, 8])
def test_the_untilted_composition_bounds_the_exact_one_from_above(T: int, monkeypatch) -> None:
    m, K = 4, 80
    Lt, (off_e, Pe, Qe) = _composed(m, K, T, monkeypatch)
    L, K2 = P._untilt_q(Lt, K, m, None)
    off, P2, Q2, inf = L
    assert K2 > K and inf == 0
    Ke = T * K
    excess = 0  # sum of Q'_k 2^-K2 - Q_k 2^-(T K), in units 2^-(K2 + T K)
    for j, q in enumerate(Q2):
        k = off + j - off_e
        exact = Qe[k] if 0 <= k < len(Qe) else 0
        # exactly: Q'_k 2^-K2 >= Q_k 2^-(T K), compared as integers
        assert q << Ke >= exact << K2, (T, j)
        excess += (q << Ke) - (exact << K2)
        # P is the exact composition rounded down (each product floors), shifted exactly
        pe = Pe[k] if 0 <= k < len(Pe) else 0
        assert P2[j] << Ke <= pe << K2
    # and tight: the roundings of the 80-bit units only (a few units 2^-80 a class)
    assert Fraction(excess, 1 << (K2 + Ke)) < Fraction(len(Q2) * T * 64, 1 << K)


def test_a_tilt_claimed_larger_than_the_one_applied_is_caught(monkeypatch) -> None:
    m, K, T = 4, 80, 5
    Lt, (off_e, _, Qe) = _composed(m, K, T, monkeypatch)
    # one step's gamma taken 2^-(m + 4) nats too large: Gamma grows by T 2^44 units of 2^-(m + 48)
    wrong = (*Lt[:4], Lt[4] + T * (1 << (P._TILT_G_BITS - 4)))
    L, K2 = P._untilt_q(wrong, K, m, None)
    off, _, Q2, _ = L
    below = [j for j, q in enumerate(Q2) if 0 <= off + j - off_e < len(Qe) and q << (T * K) < Qe[off + j - off_e] << K2]
    assert below  # the wrongly untilted masses fall below the exact ones: the check above fails on them


def test_the_tilted_and_untilted_routes_give_the_same_bounds(monkeypatch) -> None:
    """eps(delta) and delta(eps) at sigma 1, q 0.1, T = 64 on 2^-6: the tilted lower pair against the
    untilted one (both lower bounds; they differ by the units' rounding only) and the upper end. Both
    through the exact products: the untilted delta query's lower pair would otherwise take the tilted
    Fourier lower power (asked since for any base of an event alone), which loses up to its allowance,
    1e-11 of delta here, and the tilted Q takes none."""
    inputs = {"noise_multiplier": "1", "sampling_rate": "0.1", "steps": 64, "neighboring": "remove"}
    monkeypatch.setattr(P, "FOURIER_MIN_STEPS", 1 << 62)
    with mpmath.workdps(P._DPS):
        D = mpf("1e-5")
        untilted = P._bounds(inputs, "eps", D, D, mpf(3), 6, "both", "remove")
        delta_u = P._bounds(inputs, "delta", mpf(3), mpf("1e-3"), mpf(3), 6, "both", "remove")
        monkeypatch.setattr(P, "TILT_Q_MIN_STEPS", 2)
        tilted = P._bounds(inputs, "eps", D, D, mpf(3), 6, "both", "remove")
        delta_t = P._bounds(inputs, "delta", mpf(3), mpf("1e-3"), mpf(3), 6, "both", "remove")
    assert tilted[0] <= untilted[1] and delta_t[0] <= delta_u[1]
    assert abs(tilted[0] - untilted[0]) < mpf(10) ** -12 * untilted[0]
    assert abs(delta_t[0] - delta_u[0]) < mpf(10) ** -12 * delta_u[0]
    assert tilted[1] == untilted[1]  # the same upper pair
    assert abs(delta_t[1] - delta_u[1]) < mpf(10) ** -10 * delta_u[1]


def test_the_wide_ratio_order_chooses_the_full_sorts_prefix() -> None:
    """Masses past 2^1000 (units 2^-2000, eps near 1000): the wide float choice against the exact full
    sort, which is what :func:`pld._ratio_order` does past 2^1000 without ``wide``."""
    K, m, n = 2000, 4, 1 << 14
    with mpmath.workprec(200):
        xs = [mpf(940) + mpf(k) / 2**m for k in range(n)]
        Pm = [int(mpmath.exp(-((x - 980) / 30) ** 2 / 2) / (30 * 2**m) * mpf(2) ** K * mpf("0.4")) for x in xs]
        Qm = [int(p * mpmath.exp(-x + mpf("0.3") * mpmath.sin(x))) + 1 for p, x in zip(Pm, xs)]
    L = (0, Pm, Qm, 0)
    delta = mpf("1e-5")
    wide = P._lower_eps(L, delta, K, True)
    full = P._lower_eps(L, delta, K, False)
    assert 900 < full < 1200  # past the double range of e^eps (709.8)
    assert abs(wide - full) <= mpf(10) ** -25 * full


@pytest.mark.slow
@pytest.mark.parametrize("steps,grid", [(10**7, "2^-11"), (1_500_000, None)])
def test_a_tilted_certificate_is_written_and_verified(tmp_path, steps: int, grid: "str | None") -> None:
    """`audit dpsgd` at sigma 1, q 0.01, delta 1e-5, digits 3. T = 10^7 (eps 1014.07): refused before
    (certificate/writer.unverifiable, exit 2: verify's re-check could not re-prove it); now written at
    2^-11 after the writer's own re-check, and verified, exit 0. T = 1.5 x 10^6 (adv52 M2): with the
    tilt from 2^22 steps it was written (the writer's price, 2.5e8, skipped its re-proof) and verify
    answered exit 3, its untilted lower pair past the cap below 2^-14; tilted from 2^20 it verifies."""
    assert steps >= P.TILT_Q_MIN_STEPS
    cert = tmp_path / "tilted.json"
    run = [sys.executable, "-m", "dpverify"]
    made = subprocess.run(run + ["audit", "dpsgd", "--noise-multiplier", "1", "--sampling-rate", "0.01", "--steps",
                                 str(steps), "--delta", "1e-5", "--digits", "3", "--certificate", str(cert)],
                          capture_output=True, text=True)
    assert made.returncode == 0, made.stderr
    if grid is not None:
        assert json.loads(cert.read_text())["result"]["grid"] == grid
    got = subprocess.run(run + ["verify", str(cert)], capture_output=True, text=True)
    assert got.returncode == 0, got.stdout + got.stderr
    assert "confirmed" in got.stdout


@pytest.mark.parametrize("T", [10**7, 10**6])
def test_an_event_tree_sizes_its_unit_as_its_pld_twin(T: int, monkeypatch) -> None:
    """adv52 M1: the events route sized the tilted lower pair's unit for the recorded eps (1014 at
    T = 10^7: about 1544 bits, which _untilt_q widened to 3000; verify took 130 CPU s and 4.4 GB where
    the pld.epsilon twin takes 13 s). Both routes now hand direction_bounds the same unit and the same
    price: the unit below TILT_Q_MIN_STEPS is the untilted one (T = 10^6), and tilted steps keep the
    untilted price through price_bits. Stopped before any work (the sentinel)."""
    from dpverify.recheck import events as EV

    class Stop(Exception):
        pass

    seen: dict = {}

    def spy(where):
        def direction_bounds(events, d, kind, target, exact, K, tau, budget, m, sides, *a, price_bits=0, **k):
            seen[where] = (K, price_bits)
            raise Stop
        return direction_bounds

    monkeypatch.setattr(P, "direction_bounds", spy("pld"))
    monkeypatch.setattr(EV, "direction_bounds", spy("events"))
    with mpmath.workdps(40):
        D, hint = mpf("1e-5"), mpf(1014) if T == 10**7 else mpf(161)
        pld_inputs = {"noise_multiplier": "1", "sampling_rate": "0.01", "steps": T, "delta": "1e-5",
                      "neighboring": "add-remove"}
        ev_inputs = {"neighboring": "add-remove", "delta": "1e-5",
                     "event": {"type": "self_composed", "count": T, "event": {
                         "type": "poisson_sampled", "sampling_probability": "0.01",
                         "event": {"type": "gaussian", "noise_multiplier": "1"}}}}
        with pytest.raises(Stop):
            P._bounds(pld_inputs, "eps", D, D, hint, 11, "both", "remove")
        with pytest.raises(Stop):
            EV._bounds(ev_inputs, "eps", D, D, hint, 11, "both", "remove")
    assert seen["pld"] == seen["events"]
    K, price_bits = seen["events"]
    full = P._units(D, hint, T)[0]
    assert K + price_bits == full  # the price is the untilted one's
    assert (price_bits > 1000) == (T >= P.TILT_Q_MIN_STEPS)  # 1544 -> 97 bits where tilted


@pytest.mark.slow
@pytest.mark.parametrize("events", [False, True])
def test_a_large_eps_certificate_below_2_20_steps_is_written_and_verified(tmp_path, events: bool) -> None:
    """adv53 M2: sigma 0.9, q 0.01, T = 2^20 - 1, delta 1e-5, digits 2 (eps 190.42 .. 190.60), as options
    and as an event tree. Written, exit 0 (the writer's price 1.46e8 is below 1/16 of the cap: no
    re-proof); verify's untilted probe, its unit sized for eps 64 at most, proved about 105.8 for both
    directions, refined add's lower side (add's upper end 183.97 is below 190.42, which it cannot reach)
    up to 2^-15, past the cap: exit 3 in 12 CPU s. The grid search now refines a direction whose upper
    end reaches the recorded lower end (remove, 2^-13): exit 0, about 10 CPU s. Fails on the code before
    tlt53."""
    cert = tmp_path / "large-eps.json"
    run = [sys.executable, "-m", "dpverify"]
    if events:
        tree = {"neighboring": "add-remove", "event": {"type": "self_composed", "count": (1 << 20) - 1, "event": {
            "type": "poisson_sampled", "sampling_probability": "0.01",
            "event": {"type": "gaussian", "noise_multiplier": "0.9"}}}}
        (tmp_path / "tree.json").write_text(json.dumps(tree))
        schedule = ["--events", str(tmp_path / "tree.json")]
    else:
        schedule = ["--noise-multiplier", "0.9", "--sampling-rate", "0.01", "--steps", str((1 << 20) - 1)]
    made = subprocess.run(run + ["audit", "dpsgd", *schedule, "--delta", "1e-5", "--digits", "2", "--certificate",
                                 str(cert)], capture_output=True, text=True)
    assert made.returncode == 0, made.stderr
    assert json.loads(cert.read_text())["result"]["grid"] == "2^-10"
    got = subprocess.run(run + ["verify", str(cert)], capture_output=True, text=True)
    assert got.returncode == 0, got.stdout + got.stderr
    assert "confirmed" in got.stdout
