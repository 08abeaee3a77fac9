"""A large eps at few steps: the re-check's lower pair composed loss-tilted below 64 steps (issue 22, adv55
M2; pld-speed.md, "A large eps at few steps").

sigma 0.07, q 0.5, T = 10, eps(1e-5) = 1117.2: the untilted lower pair resolves e^-eps in its unit
(1.45 bits a nat: 1693 bits), and its MPFR tails and exact products at that precision took `verify` of the
genuine digits-4 certificate 32 CPU s and forgeries of the digits-2 one 60 CPU s and 1 GB. Tilted, each
step's Q-mass is rounded in a unit that resolves e^-s for one step's top loss s (217 nats here: 389 bits)
and the composition carries no e^eps (:func:`pld._tilt_hint`). Checked against the producer (the arb
route): the tilted and untilted bounds both enclose its enclosure and agree to the units' rounding; its
certificate at sigma 0.1 (eps 565.6, written in about 2 CPU s) is accepted, and a forged upper end next
to the truth is refuted in seconds on grids of the tilted unit (a spy: the code before took the untilted
one, about 900 bits)."""

from __future__ import annotations

import copy
import json
from fractions import Fraction

import mpmath
import pytest
from mpmath import mpf

from dpverify.cli import main
from dpverify.recheck import pld as P

from ..certs import outcome, reseal

SCHEDULE = {"noise_multiplier": "0.07", "sampling_rate": "0.5", "steps": 10, "neighboring": "add-remove",
            "delta": "1e-5"}
AUDIT = ["audit", "dpsgd", "--noise-multiplier", "0.1", "--sampling-rate", "0.5", "--steps", "10",
         "--delta", "1e-5", "--digits", "3"]


def _laws(sigma: str = "0.07", q: str = "0.5", T: int = 10) -> list:
    return [(lambda d: (P.gauss_tails(Fraction(sigma), Fraction(q), d), None), T)]


def test_the_unit_is_sized_for_one_steps_top_loss() -> None:
    """One step's loss reaches about (1 + 8.5 sigma - 1/2) / sigma^2 + log q = 217 nats before its P-tail
    falls below the tail budget (x = 1 + 8.5 sigma under the shifted component): the tilted unit is sized
    for that, 1300 bits fewer than for eps; where that saves too little, or from 64 steps, or for an
    upper-only tree, the unit stays the untilted one."""
    D = mpf("1e-5")
    with mpmath.workdps(P._DPS):
        top = P._tilt_hint(_laws(), ["add", "remove"], D, mpf(1117), 7)
        assert top is not None and 200 < top < 230
        with mpmath.workprec(200):
            x = mpf(1) + mpf("8.5") * mpf("0.07")
            assert abs(top - ((x - mpf("0.5")) / mpf("0.07") ** 2 + mpmath.log(mpf("0.5")))) < 6
        K, Kt = P._units(D, mpf(1117), 10)[0], P._units(D, top, 10)[0]
        assert K - Kt > 1200 and Kt < 400
        assert P._tilt_hint(_laws(), ["add", "remove"], D, mpf(64), 7) is None  # 93 bits of e^eps: not worth it
        assert P._tilt_hint(_laws(T=64), ["add", "remove"], D, mpf(1117), 7) is None  # the Fourier lower power
        assert P._tilt_hint(_laws(), ["add", "remove"], D, mpf(1117), 7, few=False) is None
        # the add direction's loss is bounded by -log(1 - q): its top is about 0.7 nats
        assert P._tilt_hint(_laws(), ["add"], D, mpf(1117), 7) < 1


def test_the_tilted_and_untilted_lower_ends_agree_and_enclose_the_producers(monkeypatch) -> None:
    """sigma 0.1, q 0.5, T = 10, eps(1e-5) of the remove direction on 2^-3 (about 540 knots a step), both
    sides, tilted (a 263-bit unit) and untilted (about 900 bits): both enclose the producer's digits-4
    enclosure [565.613425, 565.613512] (arb, 2^-7), and the tilted ends are the untilted ones to 1e-12
    (they differ by the units' rounding only)."""
    inputs = dict(SCHEDULE, noise_multiplier="0.1")
    hint = mpf("565.6144")
    with mpmath.workdps(P._DPS):
        D = mpf("1e-5")
        assert P._tilt_hint(_laws("0.1"), ["remove"], D, hint, 3) is not None
        tilted = P._bounds(inputs, "eps", D, D, hint, 3, "both", "remove")
        monkeypatch.setattr(P, "TILT_Q_SAVE_BITS", 10**9)
        untilted = P._bounds(inputs, "eps", D, D, hint, 3, "both", "remove")
    for lo, hi in (tilted, untilted):
        assert lo < mpf("565.61342511764801") and mpf("565.61351134863493") < hi
    assert abs(tilted[0] - untilted[0]) < mpf(10) ** -12 * untilted[0]
    assert abs(tilted[1] - untilted[1]) < mpf(10) ** -12 * untilted[1]


@pytest.fixture(scope="module")
def cert(tmp_path_factory) -> dict:
    """The producer's digits-3 certificate of sigma 0.1 (eps 565.6, recorded on 2^-5; about 2 CPU s)."""
    out = tmp_path_factory.mktemp("big") / "cert.json"
    assert main([*AUDIT, "--certificate", str(out)]) == 0
    c = json.loads(out.read_text())
    lo, hi = (mpf(c["result"]["enclosure"][k]) for k in ("lo", "hi"))
    assert 565.6 < lo < 565.61343 and 565.61352 < hi < 565.62
    return c


def _units(monkeypatch) -> list:
    """(K, tilt) of every grid the queries compute or price."""
    seen: list = []
    real = P.direction_bounds

    def spy(events, d, kind, target, exact, K, *args, **kw):
        seen.append((K, kw.get("tilt")))
        return real(events, d, kind, target, exact, K, *args, **kw)

    monkeypatch.setattr(P, "direction_bounds", spy)
    return seen


def _forged(c: dict, lo: str, hi: str) -> dict:
    f = copy.deepcopy(c)
    f["result"]["enclosure"] = {"lo": lo, "hi": hi}
    f["result"].pop("relative_width", None)
    return reseal(f)


def test_the_genuine_certificate_is_accepted(cert) -> None:
    assert outcome(cert) == 0


def test_a_forged_upper_end_below_the_truth_is_refuted_at_the_tilted_unit(cert, monkeypatch) -> None:
    """The truth is within [565.613425, 565.613512] (the producer's digits-4 enclosure): an upper end
    565.6133 is refuted, exit 1, on grids whose unit is the tilted one (about 263 bits; the probe's,
    sized for eps 64 at most, is untilted and smaller; the code before took about 900 bits there)."""
    seen = _units(monkeypatch)
    assert outcome(_forged(cert, cert["result"]["enclosure"]["lo"], "565.6133")) == 1
    assert any(t for _, t in seen) and all(K < 300 for K, _ in seen)


def test_an_event_tree_takes_the_unit_and_route_of_its_pld_twin(monkeypatch) -> None:
    """The events route chooses as pld._bounds does (:func:`pld._tilt_hint`): the same unit, price and
    tilt for the same schedule as a tree, stopped before any work (a sentinel)."""
    from dpverify.recheck import events as EV

    class Stop(Exception):
        pass

    seen: dict = {}

    def spy(where):
        def direction_bounds(events, d, kind, target, exact, K, tau, budget, m, sides, *a, price_bits=0, tilt=None,
                             **k):
            seen[where] = (K, price_bits, tilt)
            raise Stop
        return direction_bounds

    monkeypatch.setattr(P, "direction_bounds", spy("pld"))
    monkeypatch.setattr(EV, "direction_bounds", spy("events"))
    tree = {"neighboring": "add-remove", "delta": "1e-5",
            "event": {"type": "self_composed", "count": 10, "event": {
                "type": "poisson_sampled", "sampling_probability": "0.5",
                "event": {"type": "gaussian", "noise_multiplier": "0.07"}}}}
    with mpmath.workdps(40):
        D, hint = mpf("1e-5"), mpf(1117)
        with pytest.raises(Stop):
            P._bounds(SCHEDULE, "eps", D, D, hint, 7, "both", "remove")
        with pytest.raises(Stop):
            EV._bounds(tree, "eps", D, D, hint, 7, "both", "remove")
    assert seen["pld"] == seen["events"]
    K, price_bits, tilt = seen["events"]
    assert tilt is True and K < 400 and K + price_bits == P._units(D, hint, 10)[0]
