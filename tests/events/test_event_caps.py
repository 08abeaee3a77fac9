"""Event trees with huge but well-formed numbers (issue 22 d): each is refused before any work,
exit 2 naming the event and the cap, or answered; never a traceback (exit 4) or a run past its
budget. Before: a discrete Gaussian of sigma 1e300 and a mixture of sd 1e-300 with a sensitivity
1e300 were OverflowErrors (exit 4); a mixture probability of 1e-400 a math domain error (exit 4);
a discrete Laplace of sensitivity 10^6 listed 10^6 atoms (20 CPU s, 1 GB, past a 5 s budget)."""

import json
import math
from fractions import Fraction as F

import mpmath
import pytest

from dpverify.cli import main
from dpverify.events.pairs import MixtureGaussianPair, discrete_gaussian_pair, discrete_laplace_pair
from dpverify.limits import MAX_EVENT_ATOMS


def _run(tmp_path, capsys, event):
    f = tmp_path / "e.json"
    f.write_text(json.dumps({"neighboring": "add-remove", "event": event}))
    code = main(["audit", "dpsgd", "--events", str(f), "--delta", "1e-5", "--time-budget", "5"])
    return code, capsys.readouterr().err


@pytest.mark.parametrize("event,words", [
    ({"type": "discrete_laplace", "noise_parameter": "1e-300", "sensitivity": 10**12}, "sensitivity=1000000000000"),
    ({"type": "discrete_laplace", "noise_parameter": "0.5", "sensitivity": MAX_EVENT_ATOMS}, "sensitivity="),
    ({"type": "discrete_gaussian", "sigma": "1e300", "sensitivity": 1}, "sigma=1e300"),
    ({"type": "discrete_gaussian", "sigma": "1e-300", "sensitivity": MAX_EVENT_ATOMS}, "sigma=1e-300"),
    ({"type": "mixture_of_gaussians", "standard_deviation": "1e-300", "sensitivities": ["0", "1e300"],
      "sampling_probs": ["0.5", "0.5"]}, "standard_deviation=1e-300"),
])
def test_a_huge_event_is_refused_before_any_work(tmp_path, capsys, event, words):
    code, err = _run(tmp_path, capsys, event)
    assert code == 2 and words in err and event["type"] in err, err
    assert "internal error" not in err and "Traceback" not in err


def test_the_atom_cap_is_the_pairs_own_count():
    """At the cap the pair is built, one atom more is refused: discrete Laplace lists x = D..0
    (D + 1 atoms, one per loss a (D - 2x)); the discrete Gaussian lists x in [-W, W + D]."""
    pair = discrete_laplace_pair(F(1, 2), MAX_EVENT_ATOMS - 1)
    assert len(pair.losses) == MAX_EVENT_ATOMS
    with pytest.raises(Exception, match="above the cap"):
        discrete_laplace_pair(F(1, 2), MAX_EVENT_ATOMS)
    g = discrete_gaussian_pair(F(10), 3)
    W = (len(g.losses) - 3 - 1) // 2
    # e^(-W^2 / (2 s^2)) <= 2^-440 at s = 10: W >= 10 sqrt(880 log 2), about 24.7 sigma each side
    assert len(g.losses) == 2 * W + 3 + 1 and W * W >= 2 * 100 * 440 * math.log(2)


def test_a_tiny_mixture_probability_has_an_exact_float_logarithm():
    """The float proposals took log(float(p)), and float(1e-400) is 0.0 (a math domain error,
    exit 4): the logarithm now comes from the exact rational; mpmath at 50 digits agrees."""
    p = F(1, 10**400)
    pair = MixtureGaussianPair(F(1), (F(0), F(1)), (1 - p, p), "remove")
    comps = pair._float_comps()
    with mpmath.workdps(50):
        for (lp, mu), (c, q) in zip(comps, ((F(0), 1 - p), (F(1), p))):
            ref = mpmath.log(mpmath.mpf(q.numerator) / q.denominator)
            assert math.isclose(lp, float(ref), rel_tol=1e-12, abs_tol=1e-300) and mu == float(c)


def test_a_tree_of_too_many_kinds_is_refused_at_the_first_one_too_many(tmp_path, capsys):
    """The walk refuses at kind EVENT_MAX_LEAVES + 1 (certificate.format, shared with verify), not after
    the whole tree: a 10 MB tree of 200,000 distinct Gaussian leaves was walked whole (6.2 CPU s on a 5 s
    budget). Shown by a leaf after the first kind too many that the walk would refuse for another reason
    (a Poisson-sampled zCDP event has no pair): it is never reached."""
    from dpverify.certificate.format import EVENT_MAX_LEAVES

    leaves = [{"type": "gaussian", "noise_multiplier": str(k + 1)} for k in range(EVENT_MAX_LEAVES + 1)]
    leaves.append({"type": "poisson_sampled", "sampling_probability": "0.5", "event": {"type": "zcdp", "rho": "1",
                                                                                      "xi": "0"}})
    code, err = _run(tmp_path, capsys, {"type": "composed", "events": leaves})
    assert code == 2 and f"more than {EVENT_MAX_LEAVES} distinct kinds" in err and "zCDP" not in err, err
    code, err = _run(tmp_path, capsys, {"type": "composed", "events": leaves[:EVENT_MAX_LEAVES] + leaves[-1:]})
    assert code == 2 and "zCDP" in err and "distinct kinds" not in err, err


@pytest.mark.parametrize("event", [
    {"type": "discrete_laplace", "noise_parameter": "0.5", "sensitivity": 10**6},
    {"type": "discrete_laplace", "noise_parameter": "0.5", "sensitivity": MAX_EVENT_ATOMS},
    {"type": "discrete_gaussian", "sigma": "1e300", "sensitivity": 1},
    {"type": "discrete_gaussian", "sigma": "1e-300", "sensitivity": MAX_EVENT_ATOMS},
])
def test_verify_refuses_an_event_the_producer_refuses_with_its_exit_code(tmp_path, capsys, event):
    """Issue 22 item 4: a forged events certificate whose discrete Laplace has sensitivity 10^6 was
    exit 3 in verify (its own cap of 200,000 atoms) where the producer answers exit 2 (MAX_EVENT_ATOMS,
    limits.py). Verify now applies the producer's count and cap (limits.discrete_event_atoms): exit 2
    naming inputs.event and the cap, before any work. Independent route: the producer itself on the
    same event, exit 2 (the pair's own atom count is checked in test_the_atom_cap_is_the_pairs_own_count)."""
    from dpverify.certificate import compute_digest

    produced, _ = _run(tmp_path, capsys, event)
    assert produced == 2
    f = tmp_path / "small.json"
    f.write_text(json.dumps({"neighboring": "add-remove",
                             "event": {"type": "discrete_laplace", "noise_parameter": "0.5", "sensitivity": 2}}))
    cert_path = tmp_path / "c.json"
    assert main(["audit", "dpsgd", "--events", str(f), "--delta", "1e-5", "--certificate", str(cert_path)]) == 0
    cert = json.loads(cert_path.read_text())
    cert["inputs"]["event"] = event
    cert["digest"] = compute_digest(cert)
    cert_path.write_text(json.dumps(cert))
    capsys.readouterr()
    assert main(["verify", "--time-budget", "20", str(cert_path)]) == 2
    out = "".join(capsys.readouterr())
    assert "inputs.event" in out and f"{MAX_EVENT_ATOMS:,}" in out and "MAX_EVENT_ATOMS" in out, out


@pytest.mark.parametrize("eps,words", [("1e400", "eps=a number above 1e300"), ("250", "eps=250")])
def test_an_eps_past_the_event_cap_is_refused_by_name(tmp_path, capsys, eps, words):
    """ref56: an eps past float's range (1e400) made the cap's message overflow (OverflowError,
    exit 4); both are refused, exit 2, naming the cap of 200."""
    f = tmp_path / "e.json"
    event = {"type": "poisson_sampled", "sampling_probability": "0.01", "event": {"type": "gaussian", "noise_multiplier": "1"}}
    f.write_text(json.dumps({"event": event}))
    code = main(["audit", "dpsgd", "--events", str(f), "--eps", eps])
    err = capsys.readouterr().err
    assert code == 2 and words in err and "beyond the cap of 200" in err, err
