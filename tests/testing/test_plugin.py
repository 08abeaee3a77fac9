"""dpverify.testing against real accountants (dp_accounting PLD and RDP, PRV,
Opacus' RDP and PRV accountants: one configuration each, all sound) and against
a deliberately under-reporting accountant, run as a maintainer would, through
pytester with the plugin loaded by name."""

import importlib.metadata
import json
import subprocess
import sys

from pathlib import Path

import numpy as np
import pytest
from dp_accounting import dp_event as d
from dp_accounting.pld import PLDAccountant
from dp_accounting.rdp import RdpAccountant
from hypothesis import given, settings

from dpverify.testing import UnsoundEpsilon, assert_sound
from dpverify.testing.strategies import HARD_REGIONS, dpsgd_configs, event_trees

pytest_plugins = ["pytester"]
ROOT = Path(__file__).resolve().parents[2]

Z, Q, T, DELTA = 1.1, 0.01, 1000, 1e-6


def pld_eps(event, delta):
    return PLDAccountant().compose(event).get_epsilon(delta)


def rdp_eps(event, delta):
    return RdpAccountant().compose(event).get_epsilon(delta)


def _schedule():
    return d.SelfComposedDpEvent(d.PoissonSampledDpEvent(Q, d.GaussianDpEvent(Z)), T)


@pytest.mark.parametrize("name", ["dp_accounting-pld", "dp_accounting-rdp", "prv", "opacus-rdp", "opacus-prv"])
def test_real_accountants_pass(name):
    def prv_eps(event, delta):
        from prv_accountant import PRVAccountant
        from prv_accountant.privacy_random_variables import PoissonSubsampledGaussianMechanism

        acc = PRVAccountant(prvs=PoissonSubsampledGaussianMechanism(noise_multiplier=Z, sampling_probability=Q),
                            max_self_compositions=T, eps_error=0.01, delta_error=delta / 1000)
        return acc.compute_epsilon(delta=delta, num_self_compositions=[T])[2]

    def opacus_eps(mech):
        def f(event, delta):
            from opacus.accountants import create_accountant

            acc = create_accountant(mech)
            acc.history = [(Z, Q, T)]
            return acc.get_epsilon(delta=delta)
        return f

    fn = {"dp_accounting-pld": pld_eps, "dp_accounting-rdp": rdp_eps, "prv": prv_eps,
          "opacus-rdp": opacus_eps("rdp"), "opacus-prv": opacus_eps("prv")}[name]
    ans = assert_sound(fn, _schedule(), DELTA)
    assert float(ans.enclosure.lo.mid()) > 0


def test_an_under_reporting_accountant_fails_with_the_lower_end():
    ans = assert_sound(pld_eps, _schedule(), DELTA)
    lo = float(ans.enclosure.lo.mid())
    with pytest.raises(UnsoundEpsilon, match="below the certified lower end " + ans.enclosure.lo_str()[:6]):
        assert_sound(lambda e, dl: 0.99 * lo, _schedule(), DELTA)
    with pytest.raises(UnsoundEpsilon):
        assert_sound(lambda e, dl: float("nan"), _schedule(), DELTA)
    with pytest.raises(UnsoundEpsilon):
        assert_sound(lambda e, dl: np.float32(0.5 * lo), _schedule(), DELTA)
    assert_sound(lambda e, dl: float("inf"), _schedule(), DELTA)  # no guarantee claimed: sound


MAINTAINER_SUITE = '''
from dp_accounting import dp_event as d
from dp_accounting.pld import PLDAccountant
from hypothesis import Phase, given, settings
from dpverify.testing import assert_sound
from dpverify.testing.strategies import dpsgd_configs

def halved(event, delta):   # a bug: reports half of a sound accountant's epsilon
    return PLDAccountant().compose(event).get_epsilon(delta) / 2

@settings(max_examples=2, deadline=None, derandomize=True, phases=[Phase.generate])  # no shrinking
@given(dpsgd_configs(["ordinary"]))
def test_halved_is_sound(cfg):
    assert_sound(halved, cfg.event(), cfg.delta)

def test_recorded(dpverify_certificates):
    ev = d.SelfComposedDpEvent(d.PoissonSampledDpEvent(0.01, d.GaussianDpEvent(1.1)), 100)
    dpverify_certificates.check(lambda e, dl: PLDAccountant().compose(e).get_epsilon(dl), ev, 1e-6)
    dpverify_certificates.check(halved, ev, 1e-5)
'''


def test_a_maintainers_suite_fails_on_the_under_reporting_accountant(pytester, tmp_path):
    pytester.makepyfile(test_maintainer=MAINTAINER_SUITE)
    out = tmp_path / "certs"
    # an installed dpverify loads the plugin through its pytest11 entry point; a
    # source tree on PYTHONPATH names it (naming it twice would register it twice)
    installed = any(ep.value == "dpverify.testing.plugin"
                    for ep in importlib.metadata.entry_points(group="pytest11", name="dpverify"))
    load = [] if installed else ["-p", "dpverify.testing.plugin"]
    res = pytester.runpytest_subprocess(*load, "-p", "no:cacheprovider", f"--dpverify-certificates={out}", "-q")
    res.assert_outcomes(failed=2)
    res.stdout.fnmatch_lines(["*UnsoundEpsilon: reported epsilon * is below the certified lower end *"])
    files = sorted(out.glob("*.json"))
    assert len(files) == 2  # the sound check and the failing one, both recorded
    for f in files:
        assert json.loads(f.read_text())["claim"]["quantity"] == "events.epsilon"
    # the certificates are accepted by the independent re-check
    v = subprocess.run([sys.executable, "-m", "dpverify", "verify", *map(str, files)], capture_output=True,
                       text=True, timeout=600)
    assert v.returncode == 0, v.stdout + v.stderr


def test_the_plugin_is_registered_as_a_pytest11_entry_point():
    tomllib = pytest.importorskip("tomllib")  # stdlib from Python 3.11
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert meta["project"]["entry-points"]["pytest11"] == {"dpverify": "dpverify.testing.plugin"}


@settings(max_examples=len(HARD_REGIONS), deadline=None, derandomize=True)
@given(dpsgd_configs())
def test_dp_accounting_pld_is_sound_on_the_default_examples(cfg):
    assert_sound(pld_eps, cfg.event(), cfg.delta)


@settings(max_examples=3, deadline=None, derandomize=True)
@given(event_trees())
def test_dp_accounting_pld_is_sound_on_event_trees(tree):
    assert_sound(pld_eps, tree, 1e-6)
