"""The producer's closed form of one Poisson-subsampled Gaussian step (T = 1, 0 < q < 1, add/remove):
pld.refine.poisson_closed_ends, in arb.

References independent of its algebra (the transformed eps of the Gaussian curve): delta(eps) =
int (p - e^eps q)_+ dx by mpmath quadrature at 60 digits on the half line past the loss's crossing
point, and far in the tail that half line's normal tails at 300 digits (the helpers of
tests/recheck/test_pld_poisson_step.py, one copy). Every answer the producer gives must be one verify's
own closed form (recheck.pld.poisson_step_bounds, MPFR) re-proves, since such a certificate records no
grid: the agreement is checked here on the edges where either might step aside.
"""

from __future__ import annotations

import json
from fractions import Fraction

import mpmath
import pytest

from dpverify.pld.dpsgd import GaussianSteps, delta as pld_delta, epsilon as pld_epsilon
from dpverify.pld.refine import closed_ends, poisson_closed_ends
from dpverify.recheck import pld as P

from ..certs import outcome, reseal
from ..recheck.test_pld_poisson_step import _quad_delta, _tails_delta

F = Fraction
_BOTH = ("remove", "add")


def _steps(sigma: str, q: str, count: int = 1) -> list:
    return [GaussianSteps.of(sigma, q, count).step()]


def _m(x: Fraction) -> mpmath.mpf:
    with mpmath.workdps(60):
        return mpmath.mpf(x.numerator) / x.denominator


def _recheck(sigma: Fraction, q: Fraction, dirs, kind: str, target: Fraction):
    with mpmath.workdps(60):
        t = mpmath.mpf(target.numerator) / target.denominator
        return P.poisson_step_bounds([("gaussian", sigma, q, 1)], list(dirs), kind, t, target)


CASES = [(s, q, e) for s in ("0.05", "0.15", "1") for q in ("0.000001", "0.01", "0.5")
         for e in (F(1, 10**12), F(1, 200), F(3))]


@pytest.mark.parametrize("sigma,q,eps", CASES)
def test_delta_encloses_the_quadrature_both_directions(sigma, q, eps) -> None:
    """delta(eps) to 10 digits per direction holds the quadrature (1e-40 relative slack, its own
    accuracy) and is at most 10^-10 wide; add at or past -log(1 - q) is [0, 0] exactly. At eps = 3
    (deltas down to 5e-67, where the quadrature keeps 8 digits) the reference is the half line's
    normal tails at 300 digits."""
    ends = poisson_closed_ends(_steps(sigma, q), _BOTH, "delta", eps, 10)
    assert ends is not None
    for d, (lo, hi) in ends.items():
        if d == "add" and eps >= 1 and float(eps) >= -mpmath.log(1 - mpmath.mpf(q)) + 0.001:
            ref = mpmath.mpf(0)  # past -log(1 - q): _tails_delta has no crossing there
        else:
            ref = (_quad_delta if eps < 1 else _tails_delta)(F(sigma), F(q), d, eps)
        with mpmath.workdps(60):
            if ref == 0:
                assert lo == hi == 0, (d, lo, hi)
                continue
            L, H = mpmath.mpf(lo.numerator) / lo.denominator, mpmath.mpf(hi.numerator) / hi.denominator
            assert L - ref * mpmath.mpf(10) ** -40 <= ref <= H + ref * mpmath.mpf(10) ** -40, (d, L, ref, H)
            assert H - L <= H * mpmath.mpf(10) ** -10


@pytest.mark.parametrize("sigma,q,d,eps", [
    ("0.15", "0.01", "remove", F(500)),  # delta about 1e-1900
    ("1", "0.000001", "remove", F(40)),
    ("0.05", "0.5", "remove", F(10**5)),  # huge eps: a delta far below 2^-12000, stepped aside
    ("0.5", "0.3333", "add", F(2, 5)),  # just below the add loss's bound 0.40542
])
def test_delta_far_in_the_tail_encloses_the_normal_tails(sigma, q, d, eps) -> None:
    """Far in the tail: the normal tails at 300 digits lie in the enclosure, or (a delta below
    2^-TAIL_FLOOR_BITS) the closed form steps aside for the tail bound and the grid."""
    ends = poisson_closed_ends(_steps(sigma, q), (d,), "delta", eps, 8)
    ref = _tails_delta(F(sigma), F(q), d, eps)
    with mpmath.workdps(300):
        if ref < mpmath.mpf(2) ** -12000:
            assert ends is None
            return
        assert ends is not None
        lo, hi = ends[d]
        assert mpmath.mpf(lo.numerator) / lo.denominator <= ref <= mpmath.mpf(hi.numerator) / hi.denominator


@pytest.mark.parametrize("sigma,q", [(s, q) for s in ("0.05", "0.15", "1") for q in ("0.000001", "0.01", "0.5")])
def test_eps_brackets_the_root_and_verify_agrees(sigma, q) -> None:
    """eps(1e-5) per direction: the quadrature a hair (1e-30 relative) past the upper end is below delta,
    and a hair below a positive lower end above it; every answer lies around verify's closed form."""
    D = F(1, 10**5)
    ends = poisson_closed_ends(_steps(sigma, q), _BOTH, "eps", D, 8)
    assert ends is not None
    for d, (lo, hi) in ends.items():
        assert hi - lo <= hi / 10**9
        if hi > 0:
            assert _quad_delta(F(sigma), F(q), d, hi * (1 + F(1, 10**30))) < _m(D)
        if lo > 0:
            assert _quad_delta(F(sigma), F(q), d, lo * (1 - F(1, 10**30))) > _m(D)
        got = _recheck(F(sigma), F(q), [d], "eps", D)
        with mpmath.workdps(60):
            assert got is not None and got[0] <= _m(hi) and _m(lo) <= got[1]


@pytest.mark.parametrize("sigma,q,dirs,kind,target", [
    ("1e50", "0.000001", _BOTH, "delta", F(1, 10**60)),  # cancellation: mu = 1e-50
    ("1e50", "0.5", _BOTH, "eps", F(1, 10**60)),
    ("0.05", "0.01", ("add",), "delta", F(1005033585350144, 10**17)),  # 3e-17 below the add bound
    ("0.05", "0.01", ("add",), "delta", F(2, 100)),  # past it: [0, 0]
    ("1", "0.01", ("add",), "eps", F(1, 10**300)),  # the root right under the add bound
    ("0.05", "0.000001", _BOTH, "delta", F(10**9)),  # eps / mu 5e7: just inside the range
    ("0.001", "0.5", ("remove",), "eps", F(1, 10**3000)),
])
def test_every_answer_is_one_verify_re_proves(sigma, q, dirs, kind, target) -> None:
    """On the edges (cancelling mu, the add loss's bound, the largest eps, the smallest delta) either
    the producer steps aside or verify's closed form answers inside the producer's ends."""
    ends = poisson_closed_ends(_steps(sigma, q), dirs, kind, target, 8)
    if ends is None:
        return
    lo, hi = max(v[0] for v in ends.values()), max(v[1] for v in ends.values())
    got = _recheck(F(sigma), F(q), dirs, kind, target)
    assert got is not None, (sigma, q, dirs, kind, target)
    with mpmath.workdps(60):
        # both hold the truth, so they meet; verify's is narrow (its 2^-100), so it lies inside any
        # enclosure the certificate prints from the producer's ends (rounded outward to its digits)
        assert got[0] <= _m(hi) and _m(lo) <= got[1]
        assert got[1] - got[0] <= got[1] * mpmath.mpf(2) ** -100


def test_steps_aside_where_verify_would() -> None:
    """Not one Poisson step (T = 2, replace-one has no pair, q = 1 is the Gaussian's form), eps / mu
    past 10^8, and the add direction within 2^-4096 of its loss bound (verify resolves this one at
    5120 bits, 2^-4313; the margin is the producer's): None, the grid answers."""
    assert poisson_closed_ends(_steps("0.5", "0.01", 2), _BOTH, "delta", F(1), 8) is None
    assert poisson_closed_ends(_steps("0.5", "1"), _BOTH, "delta", F(1), 8) is None
    assert closed_ends(_steps("0.5", "1"), _BOTH, "delta", F(1), 8).form == "gaussian"  # rate 1
    assert closed_ends(_steps("0.5", "0.01"), _BOTH, "delta", F(1), 8).form == "poisson"
    assert poisson_closed_ends(_steps("0.5", "0.01"), _BOTH, "delta", F(2 * 10**8 + 1), 8) is None
    # w = 1 + expm1(-eps)/q for eps a rational 1e-1300 off -log(1 - q): |w| < 2^-4096
    with mpmath.workdps(1400):
        b = -mpmath.log(1 - mpmath.mpf(1) / 100)
        near = F(int(mpmath.floor(b * mpmath.mpf(10) ** 1300)), 10**1300)
    assert poisson_closed_ends(_steps("0.5", "0.01"), ("add",), "delta", near, 8) is None


def test_the_front_ends_answer_without_a_grid() -> None:
    """epsilon / delta of one step are closed ("poisson"); an event tree of one Poisson-sampled
    Gaussian too, and sampling without replacement (the same pair, AFA Thm 11 (2)) keeps the grid,
    since verify's closed form reads Poisson leaves only."""
    from dpverify.events.api import CLOSED_POISSON_METHOD, _query
    from dpverify.events.dispatch import compile_event
    from dpverify.events.json_format import parse_document
    from dpverify.relation import Relation

    sched = [GaussianSteps.of("0.05", "0.01", 1)]
    a = pld_epsilon(sched, "1e-5", digits=8)
    assert a.closed == "poisson" and a.grid_exponent == 0
    assert pld_delta(sched, "1", digits=8).closed == "poisson"
    tree, _ = parse_document({"event": {"type": "poisson_sampled", "sampling_probability": "0.01",
                                        "event": {"type": "gaussian", "noise_multiplier": "0.05"}}})
    ans = _query(tree, "eps", F(1, 10**5), Relation.ADD_REMOVE, 8, None, 60)
    assert ans.method == CLOSED_POISSON_METHOD
    assert (ans.enclosure.lo, ans.enclosure.hi) == (a.enclosure.lo, a.enclosure.hi)
    wor, _ = parse_document({"event": {"type": "sampled_without_replacement", "source_dataset_size": 100,
                                       "sample_size": 1, "event": {"type": "gaussian", "noise_multiplier": "0.1"}}})
    p = compile_event(wor, Relation.ADD_REMOVE)
    assert poisson_closed_ends(p.steps(), p.directions, "eps", F(1, 10**5), 8) is not None
    assert closed_ends(p.steps(), p.directions, "eps", F(1, 10**5), 8, poisson=False) is None


def _cert(capsys, *args) -> dict:
    from dpverify.cli import main

    assert main([*args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("sigma", ["0.05", "0.15", "0.5"])
def test_certificates_verify_and_narrowed_forgeries_are_refused(sigma, capsys) -> None:
    """eps(1e-5) to 8 digits at T = 1, q = 0.01 (sigma 0.05: 246 CPU s and exit 3 on the grid before)
    is written from the closed form (no grid recorded) and confirmed; either end narrowed 1e-12
    relative past verify's value, resealed, is refused (exit 1)."""
    cert = _cert(capsys, "audit", "dpsgd", "--noise-multiplier", sigma, "--sampling-rate", "0.01", "--steps", "1",
                 "--delta", "1e-5", "--digits", "8")
    assert "grid" not in cert["result"] and cert["method"]["algorithm"].startswith("one Poisson-subsampled")
    assert outcome(cert) == 0
    enc = cert["result"]["enclosure"]
    lo, hi = F(enc["lo"]), F(enc["hi"])
    got = _recheck(F(sigma), F(1, 100), _BOTH, "eps", F(1, 10**5))
    truth = F(mpmath.nstr(got[0], 40))
    for a, b in ((lo, truth * (1 - F(1, 10**12))), (truth * (1 + F(1, 10**12)), hi)):
        forged = json.loads(json.dumps(cert))
        forged["result"]["enclosure"] = {"lo": repr(float(a)), "hi": repr(float(b))}
        assert outcome(reseal(forged)) == 1, (sigma, a, b)


def test_event_tree_certificate_verifies(tmp_path, capsys) -> None:
    """The events route writes the same closed answer, and verify confirms it."""
    f = tmp_path / "ev.json"
    f.write_text(json.dumps({"event": {"type": "poisson_sampled", "sampling_probability": "0.01",
                                       "event": {"type": "gaussian", "noise_multiplier": "0.15"}}}))
    cert = _cert(capsys, "audit", "dpsgd", "--events", str(f), "--delta", "1e-5", "--digits", "8")
    assert cert["method"]["algorithm"].startswith("one Poisson-subsampled") and outcome(cert) == 0
