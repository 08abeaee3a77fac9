"""The Renyi tail bound of the events re-check (recheck.events.rdp_delta_upper): a proved upper
bound of delta(eps) that settles a recorded [0, hi] far in the tail at once. A forged
events.claim whose recorded upper end is 1e-300 kept `verify` walking the PLD route's unit
down for more than 150 s; the bound answers it in milliseconds. Checked against independent
routes: a 50-digit mpmath quadrature of the exact two-step mixture (the bound must lie above
it) and the MPFR PLD enclosure of the committed events certificate."""

import copy
import json
from fractions import Fraction as F
from pathlib import Path

import mpmath
import pytest

from dpverify.certificate.format import compute_digest
from dpverify.errors import CertificateRejected
from dpverify.recheck.events import _flat, rdp_delta_upper
from dpverify.recheck.verify import verify_certificate
from tests.pld.test_tiny_delta import _two_step_remove_delta

FORMAT2 = Path(__file__).resolve().parents[1] / "certificate" / "format2"
POISSON = {"type": "poisson_sampled", "sampling_probability": "0.01",
           "event": {"type": "gaussian", "noise_multiplier": "1.1"}}
#: the tree of the stalled forgeries: four Poisson-sampled Gaussian steps and one Laplace
TREE = {"type": "composed", "events": [POISSON, POISSON, POISSON, {"type": "laplace", "noise_multiplier": "20"},
                                       POISSON]}


@pytest.mark.parametrize("eps", [F(2), F(3)])
def test_bound_lies_above_the_quadrature(eps):
    """Two remove steps: the bound is an upper bound of the 50-digit reference, and a useful one
    (within 10^4: the Chernoff factor of a Poisson-Gaussian tail)."""
    ref = _two_step_remove_delta(F(11, 10), F(1, 100), eps)
    U = rdp_delta_upper({"type": "self_composed", "count": 2, "event": POISSON}, "remove", eps)
    assert U is not None and ref <= U <= ref * 10**4


@pytest.mark.parametrize("name", ["pld-delta.json", "pld-delta-remove.json"])
def test_bound_lies_above_the_committed_pld_enclosure(name):
    """The committed pld.delta certificates (sigma 2, q 0.1, T 10, eps 1): the same schedule as an
    event tree; the bound lies above their re-proved lower end."""
    cert = json.loads((FORMAT2 / name).read_text())
    inp = cert["inputs"]
    tree = {"type": "self_composed", "count": inp["steps"],
            "event": {"type": "poisson_sampled", "sampling_probability": inp["sampling_rate"],
                      "event": {"type": "gaussian", "noise_multiplier": inp["noise_multiplier"]}}}
    U = rdp_delta_upper(tree, inp["neighboring"], F(inp["eps"]))
    # (an upper bound, loose at moderate delta: 0.05 against 5.7e-7; it is tight only in the far tail)
    assert U is not None and mpmath.mpf(cert["result"]["enclosure"]["lo"]) <= U


def test_other_leaves_and_relations_have_no_bound():
    # a mixture with two shifted means has no Renyi bound here; one that is, law for law, the Gaussian
    # (one mean, all its weight) has the Gaussian leaf's own
    mog = {"type": "mixture_of_gaussians", "standard_deviation": "1", "sensitivities": ["1", "2"],
           "sampling_probs": ["0.5", "0.5"]}
    assert rdp_delta_upper(mog, "add-remove", F(1)) is None
    gauss = dict(mog, sensitivities=["1"], sampling_probs=["1"])
    assert rdp_delta_upper(gauss, "add-remove", F(1)) == rdp_delta_upper(
        {"type": "gaussian", "noise_multiplier": "1"}, "add-remove", F(1))
    assert rdp_delta_upper({"type": "gaussian", "noise_multiplier": "1"}, "replace-one", F(1)) is None
    lap = {"type": "poisson_sampled", "sampling_probability": "0.5", "event": {"type": "laplace", "noise_multiplier": "1"}}
    assert rdp_delta_upper(lap, "add-remove", F(1)) is None


def _forged(claimed_eps: str, lo: str, hi: str, kind: str = "events.claim") -> dict:
    base = json.loads((FORMAT2 / ("events-claim.json" if kind == "events.claim" else "events-delta.json")).read_text())
    cert = copy.deepcopy(base)
    cert["inputs"]["event"] = TREE
    cert["inputs"]["neighboring"] = "add-remove"
    key = "claimed_eps" if kind == "events.claim" else "eps"
    cert["inputs"][key] = claimed_eps
    cert["result"]["enclosure"] = {"lo": lo, "hi": hi}
    cert["result"]["quantity"] = f"delta(eps={claimed_eps})"
    # and the theorems this tree's steps cite (verify rebuilds them from inputs.event: issue 22)
    cert["result"]["theorems"] = _flat(TREE, "add-remove").theorems
    if kind == "events.claim":
        cert["result"]["verdict"] = "holds"
    # the fixture's reason names its own claim (delta(3) <= 1.0000000000055432e-8): a consistent forger
    # drops it (verify re-derives a reason and refuses a false one: certificate/comments.py)
    cert["result"].pop("reason", None)
    cert.pop("digest", None)
    cert["digest"] = compute_digest(cert)
    return cert


@pytest.mark.parametrize("claimed_eps", ["199", "50"])
def test_tail_enclosure_of_the_stalled_forgeries_is_settled_by_the_bound(claimed_eps):
    """[0, 1e-300] at claimed eps 199 or 50 is true (the bound proves delta below 1e-300): it is
    confirmed by the bound, without the PLD walk to a 1e-300 unit."""
    cert = _forged(claimed_eps, "0", "1e-300")
    U = rdp_delta_upper(TREE, "add-remove", F(claimed_eps))
    assert U is not None and U <= mpmath.mpf("1e-300")
    assert "confirmed" in verify_certificate(cert, budget_seconds=60)


def test_an_enclosure_above_the_bound_is_refused():
    """A recorded delta(50) in [1e-250, 2e-250]: the bound (below 1e-300) proves it false."""
    cert = _forged("50", "1e-250", "2e-250", kind="events.delta")
    with pytest.raises(CertificateRejected):
        verify_certificate(cert, budget_seconds=60)


def test_a_claim_verdict_comes_from_the_bound_only_when_it_proves_delta():
    """The bound settles a claim's enclosure [0, hi] and also its verdict only when it proves
    delta(eps) <= delta; otherwise the PLD route decides (None here)."""
    from dpverify.recheck.events import _settle_delta

    U = rdp_delta_upper(TREE, "add-remove", F(1))  # about 1.9e-6
    assert U is not None and mpmath.mpf("1e-7") < U < mpmath.mpf("1e-5")
    rec = {"lo": "0", "hi": "1"}
    held = _settle_delta(U, "claim", {"delta": "1e-5"}, rec)
    assert held is not None and held.verdict == "holds" and held.hi == U
    assert _settle_delta(U, "claim", {"delta": "1e-7"}, rec) is None
    assert _settle_delta(U, "delta", {}, {"lo": "1e-9", "hi": "1"}) is None  # neither inside nor below


def test_a_claim_forged_far_below_walks_the_screen_and_is_refused() -> None:
    """ref51b MEDIUM-1: an events.claim (T = 10^6, q 0.01, sigma 0.8, claimed eps 3, delta 1e-5; the
    truth is about 1) forged to [1e-29, 2e-29] "holds" with the hint 2^-15 skipped the screen (its
    upper end was above the second rung's 1e-30) and handed the search a unit sized from 2e-29 and a
    start at 2^-11: 39 CPU s to refuse. Below _CLAIM_SKIP_SCALE it walks the screen, whose first rung
    (2^-8 at scale 1) proves a lower end near 1 and refuses it (exit 1)."""
    from dpverify.recheck.events import _claim_scaled
    from tests.certs import outcome

    cert = json.loads((Path(__file__).parent / "data" / "events-claim-forged-1e-29-hint15.json").read_text())
    assert cert["claim"]["quantity"] == "events.claim" and cert["result"]["grid"] == "2^-15"
    assert not _claim_scaled("claim", cert["result"]["enclosure"])
    assert outcome(cert) == 1
