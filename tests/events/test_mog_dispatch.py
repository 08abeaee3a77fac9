"""A mixture-of-Gaussians event that is, law for law, the Poisson-subsampled Gaussian (one shifted
mean beside weight at 0, components at one mean merged) is accounted with the Poisson Gaussian's
pair (dpverify.events.dispatch._mixture_pair, issue 24: "mixtures at Poisson cost"); every other
mixture keeps its own pair. Checked against routes that do not use the substitution: the
mixture's tails in mpmath at 40 digits (bisection on g, erfc: tests/pld/test_grid_tails._mp_tails),
the Poisson Gaussian event's own certified answer, and the re-check of the certificate."""

from __future__ import annotations

from fractions import Fraction as F

import mpmath
import pytest
from flint import arb

from dpverify.ball import arb_to_fraction, working_precision
from dpverify.certificate.events_cert import answer_certificate
from dpverify.events import epsilon, model as E
from dpverify.events.dispatch import _mixture_pair
from dpverify.events.pairs import MixtureGaussianPair
from dpverify.pld.pairs import SubsampledGaussianPair
from dpverify.recheck.verify import verify_certificate

from tests.pld.test_grid_tails import _mp_tails

#: (standard deviation, sensitivities, probabilities, the Poisson Gaussian's (sigma, q)) of mixtures
#: that are the Poisson Gaussian: the baseline, a mean split over two components, the rate-1 Gaussian
POISSON = [
    (F(1), (F(0), F(1)), (F(99, 100), F(1, 100)), (F(1), F(1, 100))),
    (F(3, 2), (F(0), F(3), F(3), F(0)), (F(1, 2), F(1, 8), F(1, 8), F(1, 4)), (F(1, 2), F(1, 4))),
    (F(2), (F(5),), (F(1),), (F(2, 5), F(1))),
    (F(1), (F(0), F(1), F(2)), (F(99, 100), F(1, 100), F(0)), (F(1), F(1, 100))),  # a weight-0 component
]
#: mixtures that keep their own pair: two shifted means, no weight at 0 beside two means, weights not
#: summing to 1 (a pair built directly), a mean below the Gaussian pair's noise cap (sigma 1e120)
OWN = [
    (F(1), (F(0), F(1), F(2)), (F(98, 100), F(1, 100), F(1, 100))),
    (F(3, 2), (F(1, 2), F(3)), (F(1, 2), F(1, 2))),
    (F(1), (F(0), F(1)), (F(99, 100), F(1, 200))),
    (F(10) ** 120, (F(0), F(1)), (F(1, 2), F(1, 2))),
]


@pytest.mark.parametrize("mix", POISSON)
@pytest.mark.parametrize("direction", ["remove", "add"])
def test_a_poisson_gaussian_mixture_gets_the_poisson_gaussian_pair(mix, direction):
    s, cs, ps, (sigma, q) = mix
    pair = _mixture_pair(s, cs, ps)(direction)
    assert isinstance(pair, SubsampledGaussianPair) and (pair.sigma, pair.q, pair.direction) == (sigma, q, direction)
    # the identity of laws, on the mixture's own tails in mpmath (not the pairs' code)
    with mpmath.workdps(40), working_precision(128):
        for eps in ("-1.5", "-0.004", "0", "0.3", "2.5"):
            ref = _mp_tails(cs, ps, mpmath.mpf(s.numerator) / s.denominator, direction, mpmath.mpf(eps))
            got = pair.tails(arb(eps))
            for ball_, r in zip(got, ref):
                lo, hi = ball_.lower(), ball_.upper()
                assert mpmath.mpf(lo.str(40, radius=False)) - mpmath.mpf(10) ** -30 <= r, (eps, ball_, r)
                assert r <= mpmath.mpf(hi.str(40, radius=False)) + mpmath.mpf(10) ** -30, (eps, ball_, r)


@pytest.mark.parametrize("mix", OWN)
def test_other_mixtures_keep_their_own_pair(mix):
    for direction in ("remove", "add"):
        assert isinstance(_mixture_pair(*mix)(direction), MixtureGaussianPair)


def test_the_baseline_mixture_answers_as_the_poisson_gaussian_and_its_certificate_verifies():
    # the same pair, so the same grid and the same enclosure to the last bit; the re-check (which
    # reduces the same mixture the same way, independently) confirms the certificate
    mog = E.SelfComposed(E.MixtureOfGaussians(F(1), (F(0), F(1)), (F(99, 100), F(1, 100))), 300)
    psg = E.SelfComposed(E.PoissonSampled(F(1, 100), E.Gaussian(F(1))), 300)
    a, b = (epsilon(ev, "1e-5", rel_width=1e-3) for ev in (mog, psg))
    assert [arb_to_fraction(x) for x in (a.enclosure.lo, a.enclosure.hi)] == \
        [arb_to_fraction(x) for x in (b.enclosure.lo, b.enclosure.hi)]
    assert a.details["grid"] == b.details["grid"]
    assert "confirmed" in verify_certificate(answer_certificate(mog, a, delta="1e-5", digits=3))


@pytest.mark.parametrize("sd, cs, ps, mu2", [
    ("1", ["1"], ["1"], 10),  # the Gaussian at rate 1: closed form, mu^2 = 10 (1/1)^2
    ("1", ["1", "1"], ["0.5", "0.5"], 10),  # the same, as two components at one mean
])
def test_a_rate_one_mixture_in_closed_form_verifies(tmp_path, sd, cs, ps, mu2):
    # ref54 MEDIUM: the producer answers a mixture that is the Gaussian at rate 1 in closed form, which
    # the re-check's tree did not read as a Gaussian (exit 3, "not inside"); it now reads it as the leaf
    # it is. The truth: delta_mu(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2) (GDPT eq. 2),
    # mu = sqrt(10), in mpmath at 40 digits
    import json

    from dpverify.cli import main

    doc = {"event": {"type": "self_composed", "count": 10, "event": {
        "type": "mixture_of_gaussians", "standard_deviation": sd, "sensitivities": cs, "sampling_probs": ps}}}
    src, out = tmp_path / "ev.json", tmp_path / "c.json"
    src.write_text(json.dumps(doc))
    assert main(["audit", "dpsgd", "--events", str(src), "--eps", "1", "--certificate", str(out)]) == 0
    cert = json.loads(out.read_text())
    with mpmath.workdps(40):
        mu = mpmath.sqrt(mu2)
        truth = mpmath.ncdf(-1 / mu + mu / 2) - mpmath.e * mpmath.ncdf(-1 / mu - mu / 2)
        enc = cert["result"]["enclosure"]
        assert mpmath.mpf(enc["lo"]) <= truth <= mpmath.mpf(enc["hi"])
    verify_certificate(cert)  # raises on a refusal (exit 3 before)


def test_a_mixture_of_a_tiny_shift_verifies(tmp_path):
    # ref54: sd 1e99 beside weight 1/2 at 0 is the Poisson Gaussian of noise 1e99 at rate 1/2, whose
    # eps(1e-5) is 0 (delta(0) <= q TV(N(0,1), N(1e-99,1)) ~ 2e-100 per step); the re-check's zero-eps
    # bound (the TV of its Renyi leaves) now reads the mixture as that leaf (exit 3 before)
    import json

    from dpverify.cli import main

    doc = {"event": {"type": "self_composed", "count": 10, "event": {
        "type": "mixture_of_gaussians", "standard_deviation": "1e99", "sensitivities": ["0", "1"],
        "sampling_probs": ["0.5", "0.5"]}}}
    src, out = tmp_path / "ev.json", tmp_path / "c.json"
    src.write_text(json.dumps(doc))
    assert main(["audit", "dpsgd", "--events", str(src), "--delta", "1e-5", "--certificate", str(out)]) == 0
    cert = json.loads(out.read_text())
    assert cert["result"]["enclosure"]["hi"] in ("0", 0)
    verify_certificate(cert)
