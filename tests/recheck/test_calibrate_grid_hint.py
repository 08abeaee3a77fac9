"""A calibrate.bracket end's ``grid`` is a hint: malformed text is refused (exit 2, naming the
key), and a forged fine one (2^-2000, clamped to 2^-16: 30x the work of the recorded 2^-11)
is clipped by a probe at 2^-10 to the grid the end itself justifies. The verdicts stay those
of the independent route; the test checks where the search starts and that it decides there."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import mpmath
import pytest

from dpverify.recheck import calibrate as RC
from dpverify.recheck.gdp import exact_input, fraction_to_mpf

from ..certs import outcome, reseal

GENUINE = Path(__file__).resolve().parents[1] / "certificate" / "format2" / "calibrate-bracket.json"


def _load() -> dict:
    return json.loads(GENUINE.read_text())


def _forged(grid: str) -> dict:
    cert = _load()
    for end in cert["result"]["ends"].values():
        end["grid"] = grid
    return reseal(cert)


def test_forged_fine_hint_is_clipped_and_the_end_decided_there():
    cert = _load()
    inputs, ends = cert["inputs"], cert["result"]["ends"]
    with mpmath.workdps(RC._DPS):
        D = fraction_to_mpf(exact_input(inputs, "delta"))
        E = fraction_to_mpf(exact_input(inputs, "target_eps"))
        for name in ("safe", "unsafe"):
            x = exact_input(ends[name], "value")
            blocks, dirs, want, total = RC._plans("dpsgd", inputs, "noise_multiplier", name, ends[name]["value"], x)
            # the grid route, whose start the hint chooses: this rate-1 schedule would otherwise take the
            # closed form (_Route.side), which no grid hint reaches
            blocks = [b[:3] + (None,) for b in blocks]
            route = RC._Route(E, D, total, exact_input(inputs, "delta"), exact_input(inputs, "target_eps"))
            start = RC._justified_start(route, blocks, dirs, RC._M_MAX)
            assert start <= 12  # the recorded grid is 2^-11; the hint asked for 2^-16
            # the route decides the end at the clipped start or one halving finer, never at 2^-16
            assert route.prove(name, blocks, dirs, want, start) <= start + 1 < RC._M_MAX
            assert all(m < RC._M_MAX for (_, _, m) in route.cache)


def test_forged_fine_hint_still_verifies_and_a_false_end_is_still_refused():
    assert outcome(_forged("2^-2000")) == 0
    bad = _forged("2^-2000")
    # 6.2795 is within 0.01% of the failing end 6.279, where delta(2) is about 1.08e-5 > 1e-5
    bad["result"]["ends"]["safe"]["value"] = "6.2795"
    assert outcome(reseal(bad)) == 1


def test_malformed_grid_text_is_refused_naming_the_key():
    from dpverify.errors import MalformedCertificate
    from dpverify.recheck.verify import verify_certificate

    for text in ("fine", "2^-", "2^-1e9", "2^-" + "9" * 20):
        cert = _forged(text)
        assert outcome(copy.deepcopy(cert)) == 2
        with pytest.raises(MalformedCertificate, match=r"result\.ends\.safe\.grid=.*2\^-N"):
            verify_certificate(cert)


@pytest.mark.parametrize("end,value", [("unsafe", "1e-3000"), ("safe", "1e3000"), ("unsafe", "1e400")])
def test_an_end_whose_width_passes_any_float_is_refused_not_a_crash(end, value):
    # adv47 L2: |a - b| / min(a, b) of such ends has no float; the width check crashed (OverflowError,
    # exit 3). No writer states such a width (it aims at <= 0.5): refused, exit 1
    cert = _load()
    cert["result"]["ends"][end]["value"] = value
    assert outcome(reseal(cert)) == 1
