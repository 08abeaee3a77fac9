"""The producer answers a schedule of Gaussian steps at sampling rate 1 in closed form.

T steps of noise multiplier sigma compose to one Gaussian pair of shift mu = sqrt(T) / sigma
(2 sqrt(T) / sigma under replace-one): delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2).
A grid only approached it (sigma 1000, T = 10^6, delta(1) to 6 digits: 30 s, width 1.27e-6, a note).
References: mpmath at 60 digits (its own Phi, a bisection of its own for the root).
"""

from __future__ import annotations

from fractions import Fraction

import mpmath
import pytest

from dpverify.pld import dpsgd as S
from dpverify.ball import arb_to_fraction


def _ref_delta(mu, eps):
    return mpmath.ncdf(-eps / mu + mu / 2) - mpmath.exp(eps) * mpmath.ncdf(-eps / mu - mu / 2)


def _ref_eps(mu, delta):
    a, b = mpmath.mpf(0), mpmath.mpf(100)
    for _ in range(300):
        c = (a + b) / 2
        a, b = (c, b) if _ref_delta(mu, c) > delta else (a, c)
    return a


def _ends(enc):
    return arb_to_fraction(enc.lo), arb_to_fraction(enc.hi)


@pytest.mark.parametrize("sigma,T,rel,c", [("1000", 10**6, "add-remove", 1), ("30", 10**4, "add-remove", 1),
                                           ("5", 100, "replace-one", 2)])
def test_delta_and_eps_enclose_mpmath_and_meet_the_width(sigma, T, rel, c) -> None:
    with mpmath.workdps(60):
        mu = c * mpmath.sqrt(T) / mpmath.mpf(sigma)
        d_ref, e_ref = _ref_delta(mu, mpmath.mpf(1)), _ref_eps(mu, mpmath.mpf("1e-5"))
    a = S.delta([S.GaussianSteps.of(sigma, 1, T)], 1, neighboring=rel, digits=8)
    b = S.epsilon([S.GaussianSteps.of(sigma, 1, T)], "1e-5", neighboring=rel, digits=8)
    assert a.grid_exponent == 0 and b.grid_exponent == 0  # no grid
    for ans, ref in ((a, d_ref), (b, e_ref)):
        lo, hi = _ends(ans.enclosure)
        with mpmath.workdps(60):
            assert mpmath.mpf(lo.numerator) / lo.denominator <= ref <= mpmath.mpf(hi.numerator) / hi.denominator
        assert hi - lo <= hi * Fraction(1, 10**8)


def test_eps_is_zero_where_delta_at_zero_is_below_delta() -> None:
    """mu = 0.1: delta(0) = 2 Phi(0.05) - 1 = 0.0399 <= 0.05, so eps(0.05) = 0."""
    ans = S.epsilon([S.GaussianSteps.of(10, 1, 1)], "0.05", digits=6)
    assert _ends(ans.enclosure) == (0, 0)


def test_claims_are_decided_at_thirty_digits() -> None:
    """sigma 30, T = 100 (mu = 1/3): eps(1e-5) = 1.27108776694...; a claim 1e-5 above holds, one
    1e-5 below fails, each against delta decided from the closed form."""
    holds, _ = S.check_claim([S.GaussianSteps.of(30, 1, 100)], "1.27110", "1e-5")
    fails, _ = S.check_claim([S.GaussianSteps.of(30, 1, 100)], "1.27107", "1e-5")
    assert holds.outcome.value == "holds" and fails.outcome.value == "fails"


def test_a_delta_past_the_tail_floor_is_left_to_the_tail_answer() -> None:
    """delta_mu(10^6) at mu = 1 is about 10^(-2.2e11): as exact rationals its ends had denominators of
    2^(7e11) bits (the closed form hung converting them). Below 2^-12000 the closed form steps aside
    and the Renyi tail answer [0, U] serves the query, as before it."""
    from dpverify.relation import Relation

    steps = [S.GaussianSteps.of(1, 1, 1).step()]
    assert S._gaussian_closed(steps, Relation.ADD_REMOVE, ("remove", "add"), "delta", Fraction(10**6), 6) is None
    ans = S.delta([S.GaussianSteps.of(1, 1, 1)], 10**6, digits=6)
    lo, hi = _ends(ans.enclosure)
    assert lo == 0 and 0 < hi < Fraction(1, 10**300) and ans.tail


def test_a_claim_decided_at_thirty_digits_is_printed_so_that_its_decimals_decide_it(capsys) -> None:
    """sigma 2, T = 100 (mu = 5): the claim 33.1037323359224652543 lies about 4e-21 (relative) below
    eps(1e-5), so delta there is above 1e-5 by about 4e-20 relative. The closed form decides 'fails';
    printed at 17 digits its lower end was 1e-5 itself, and verify (which decides on the decimals)
    refused the certificate. Now it is printed with the digits that carry the decision, and verify
    confirms it. mpmath at 60 digits is the reference."""
    import json

    from dpverify.certificate import verify_certificate
    from dpverify.cli import main

    eps = "33.1037323359224652543"
    with mpmath.workdps(60):
        assert _ref_delta(mpmath.mpf(5), mpmath.mpf(eps)) > mpmath.mpf("1e-5")
    assert main(["audit", "dpsgd", "--noise-multiplier", "2", "--sampling-rate", "1", "--steps", "100",
                 "--delta", "1e-5", "--claimed-eps", eps, "--json"]) == 1
    cert = json.loads(capsys.readouterr().out)
    assert cert["result"]["verdict"] == "fails" and Fraction(cert["result"]["enclosure"]["lo"]) > Fraction(1, 10**5)
    assert "closed form" in cert["method"]["algorithm"]
    assert "confirmed" in verify_certificate(cert)


@pytest.mark.parametrize("args", [["--eps", "1"], ["--delta", "1e-5", "--claimed-eps", "1"]])
def test_a_noise_multiplier_past_4300_digits_is_answered_not_a_crash(args, capsys) -> None:
    """sigma 1e-2200 at rate 1: mu^2 = 10^4401, whose str() raises ValueError past 4300 digits; the
    closed form's messages formatted it, an internal error (exit 4). delta(1) is 1 - tiny (the
    pair is all but disjoint), and the claim fails."""
    from dpverify.cli import main

    code = main(["audit", "dpsgd", "--noise-multiplier", "1e-2200", "--sampling-rate", "1", "--steps", "10",
                 *args])
    assert code in (0, 1)


def test_an_events_claim_is_printed_so_that_its_decimals_decide_it(tmp_path, capsys) -> None:
    """The same claim through an --events tree (100 x gaussian sigma 2): the events producer decides
    rate-1 trees in closed form too, and prints the enclosure with the digits that carry 'fails'
    (dpverify.verdict.printed_to_decide); verify confirms it."""
    import json

    from dpverify.certificate import verify_certificate
    from dpverify.cli import main

    tree = {"neighboring": "add-remove", "event": {"type": "self_composed", "count": 100,
                                                   "event": {"type": "gaussian", "noise_multiplier": "2"}}}
    path = tmp_path / "tree.json"
    path.write_text(json.dumps(tree))
    assert main(["audit", "dpsgd", "--events", str(path), "--delta", "1e-5",
                 "--claimed-eps", "33.1037323359224652543", "--json"]) == 1
    cert = json.loads(capsys.readouterr().out)
    assert cert["result"]["verdict"] == "fails" and Fraction(cert["result"]["enclosure"]["lo"]) > Fraction(1, 10**5)
    assert "confirmed" in verify_certificate(cert)


@pytest.mark.parametrize("sigma", ["1e-12", "1e-16"])
def test_an_eps_past_2_to_the_80_is_answered_in_closed_form_and_verified(sigma, capsys) -> None:
    """eps(0.999) at rate 1 with sigma 1e-12 (1e-16): about mu^2/2 = 5e24 (5e32), past the closed
    form's old bracket 2^81, so the grid was asked and answered exit 3 (one step's loss spans 5e5
    nats, adv48 L4). Now the closed form answers, the enclosure holds 10 / sigma^2 / 2 to 5 digits
    (mu^2 = T / sigma^2, and eps - mu^2/2 is of order mu), and verify confirms it."""
    import json

    from dpverify.certificate import verify_certificate
    from dpverify.cli import main

    assert main(["audit", "dpsgd", "--noise-multiplier", sigma, "--sampling-rate", "1", "--steps", "10",
                 "--delta", "0.999", "--json"]) == 0
    cert = json.loads(capsys.readouterr().out)
    half_mu2 = 10 / Fraction(sigma) ** 2 / 2
    enc = cert["result"]["enclosure"]
    assert Fraction(enc["lo"]) <= half_mu2 * (1 + Fraction(1, 10**5)) and Fraction(enc["hi"]) >= half_mu2 * (1 - Fraction(1, 10**5))
    assert "closed form" in cert["method"]["algorithm"]
    assert "confirmed" in verify_certificate(cert)
