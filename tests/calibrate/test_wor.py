"""Fixed-batch (sampling without replacement, replace-one) calibration,
checked against routes that share no code with it: numerical quadrature of
the hockey-stick integrals on mpmath (kinks located by findroot), exact
enumeration of the batches of a tiny dataset, and the CLI's refusals.
"""

import copy
import itertools
from fractions import Fraction

import mpmath
import pytest

from dpverify import calibrate
from dpverify.certificate import verify_certificate
from dpverify.recheck.core import arith
from dpverify.recheck.wor import wor_make
from dpverify.cli import main
from dpverify.cli.calibrate import certificate
from dpverify.errors import CertificateRejected, InvalidParameter

from ..certs import reseal


def hockey(p, q, eps):
    """int (p - e^eps q)_+ dx by quadrature, split at the kink of the
    integrand (the root of the monotone log p - log q - eps, by bisection)."""
    f = lambda x: p(x) - mpmath.exp(eps) * q(x)  # noqa: E731
    g = lambda x: mpmath.log(p(x)) - mpmath.log(q(x)) - eps  # noqa: E731
    lo, hi = mpmath.mpf(-40), mpmath.mpf(40)
    pts = [-mpmath.inf, mpmath.inf]
    if g(lo) * g(hi) < 0:
        for _ in range(200):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if g(mid) * g(lo) > 0 else (lo, mid)
        pts = [-mpmath.inf, lo, mpmath.inf]
    return sum(mpmath.quad(lambda x: max(f(x), 0), [u, v]) for u, v in zip(pts, pts[1:]))


def one_step_delta(sigma, g, eps):
    """delta(eps) of one fixed-batch step under replace-one (the Cor 32 pair
    is tight for one step): the larger of the two realised orientations."""
    a = 2 / mpmath.mpf(sigma)
    mix = lambda x: (1 - g) * mpmath.npdf(x) + g * mpmath.npdf(x - a)  # noqa: E731
    return max(hockey(mix, mpmath.npdf, eps), hockey(mpmath.npdf, mix, eps))


def test_cor32_tails_against_quadrature():
    """The re-check's directed-rounding Cor 32 tails (the maximum of the two Poisson
    curves at sigma/2, rate B/N) enclose the one-step delta found by quadrature."""
    tails, _ = wor_make(Fraction(3), 1, 10)("remove")  # sigma/2 = 3/2, g = 1/10
    A = arith(120)
    with mpmath.workdps(30):
        for e in (Fraction(0), Fraction(3, 10), Fraction(1)):
            (p0, p1), (q0, q1) = tails(A, A.q(e))
            x = mpmath.exp(mpmath.mpf(e.numerator) / e.denominator)
            lo = mpmath.mpf(p0) - x * mpmath.mpf(q1)
            hi = mpmath.mpf(p1) - x * mpmath.mpf(q0)
            ref = one_step_delta(mpmath.mpf(3), mpmath.mpf(1) / 10, mpmath.mpf(e.numerator) / e.denominator)
            assert hi - lo < mpmath.mpf(10) ** -25
            assert lo - mpmath.mpf(10) ** -12 < ref < hi + mpmath.mpf(10) ** -12


def test_realised_pair_by_enumerating_batches():
    # N = 5, B = 2: the gradient sum is -B C under x' always, and -B C + 2C under x
    # exactly when x (index 0) is in the batch: probability C(4,1)/C(5,2) = 2/5 = B/N
    N, B = 5, 2
    grads_x = [1] + [-1] * (N - 1)
    grads_xp = [-1] * N
    sums_x, sums_xp = {}, {}
    batches = list(itertools.combinations(range(N), B))
    for S in batches:
        for sums, gr in ((sums_x, grads_x), (sums_xp, grads_xp)):
            k = sum(gr[i] for i in S)
            sums[k] = sums.get(k, Fraction(0)) + Fraction(1, len(batches))
    assert sums_xp == {-B: 1}
    assert sums_x == {-B: 1 - Fraction(B, N), -B + 2: Fraction(B, N)}


@pytest.fixture(scope="module")
def one_step():
    return calibrate(1, "1e-5", sampling="without-replacement", steps=1, batch_size=10, dataset_size=100,
                     rel_width="1e-2")


def test_one_step_ends_against_quadrature(one_step):
    c = one_step
    assert c.parameter == "noise_multiplier" and not c.tight and c.rel_width <= 1e-2
    assert c.mechanism_unsafe is not None and c.mechanism_unsafe.value <= c.unsafe.value < c.safe.value
    with mpmath.workdps(30):
        D = mpmath.mpf(10) ** -5
        g = mpmath.mpf(1) / 10
        val = lambda v: mpmath.mpf(v.numerator) / v.denominator  # noqa: E731
        assert one_step_delta(val(c.safe.value), g, 1) <= D
        # one step: the pair is tight, so its limit and the realised pair's end both fail
        assert one_step_delta(val(c.unsafe.value), g, 1) > D
        assert one_step_delta(val(c.mechanism_unsafe.value), g, 1) > D


def test_wor_certificate_verifies_and_forgeries_are_rejected(one_step):
    cert = certificate(one_step)
    assert set(cert["result"]["ends"]) == {"safe", "unsafe", "pair_limit"}
    assert cert["inputs"]["sampling"] == "without-replacement" and cert["inputs"]["neighboring"] == "replace-one"
    assert "confirmed" in verify_certificate(cert)

    def consistent(c, cut):
        # a forger deletes an end with what names it (the statement's clause, the widths), so
        # that only the second route's re-proof of the remaining ends can refuse the forgery
        c["claim"]["statement"] = c["claim"]["statement"].split(cut)[0]
        for k in ("relative_width", "mechanism_relative_width"):
            c["result"].pop(k, None)
        return c

    low = copy.deepcopy(cert)  # a safe end where one step already fails
    low["result"]["ends"]["safe"]["value"] = "2"
    for k in ("unsafe", "pair_limit"):
        low["result"]["ends"].pop(k)
    with pytest.raises(CertificateRejected):
        verify_certificate(reseal(consistent(low, " and fails at")))
    high = copy.deepcopy(cert)  # an "unsafe" end that is safe
    high["result"]["ends"]["unsafe"]["value"] = high["result"]["ends"]["safe"]["value"]
    high["result"]["ends"]["safe"]["value"] = "4"
    high["result"]["ends"].pop("pair_limit")
    high = consistent(high, "; the Cor 32 pair")
    with pytest.raises(CertificateRejected):
        verify_certificate(reseal(high))


def test_batch_size_bracket_is_ordered():
    c = calibrate(1, "1e-5", sampling="without-replacement", noise_multiplier=4, steps=20, dataset_size=100)
    assert c.parameter == "batch_size" and c.safe.value < c.unsafe.value
    assert c.mechanism_unsafe is not None and c.mechanism_unsafe.value >= c.unsafe.value
    assert "confirmed" in verify_certificate(certificate(c))


@pytest.mark.parametrize("kw, name", [
    (dict(steps=1, batch_size=10, dataset_size=100, neighboring="add-remove"), "neighboring"),
    (dict(steps=1, batch_size=10), "dataset_size"),
    (dict(steps=1, sampling_rate="0.1", dataset_size=100), "sampling_rate"),
    (dict(batch_size=10, dataset_size=100), "noise_multiplier"),
    (dict(steps=1, batch_size=101, dataset_size=100), "batch_size"),
])
def test_bad_wor_templates_are_refused(kw, name):
    with pytest.raises(InvalidParameter) as e:
        calibrate(1, "1e-5", sampling="without-replacement", **kw)
    assert e.value.name == name


@pytest.mark.parametrize("args", [
    ["--sampling", "without-replacement", "--steps", "1", "--batch-size", "10"],
    ["--sampling", "without-replacement", "--steps", "1", "--batch-size", "10", "--dataset-size", "100",
     "--neighboring", "add"],
    ["--sampling", "without-replacement", "--steps", "1", "--sampling-rate", "0.1", "--dataset-size", "100"],
])
def test_cli_refuses_bad_wor_input(args, capsys):
    assert main(["calibrate", "dpsgd", "--target-eps", "1", "--delta", "1e-5", *args]) == 2
    assert "Traceback" not in capsys.readouterr().err


@pytest.mark.slow
def test_done_when_wor_bracket_and_audit_at_the_ends(tmp_path, capsys):
    """The MNIST calibration for fixed batches: B = 256 of N = 60000, T = 14063, target (3, 1e-5).
    The accountant's bracket has relative width <= 1e-3; audit --events (the Cor 32
    pair) certifies eps <= 3 at the safe end; at the pair's limit the pair's delta exceeds
    1e-5 but, bounding the mechanism from above only, gives no verdict (exit 3); the
    realised pair (Poisson add-remove at sigma/2) proves the mechanism fails at the
    unsafe end."""
    import json

    c = calibrate(3, "1e-5", sampling="without-replacement", batch_size=256, dataset_size=60000, steps=14063)
    assert c.rel_width <= 1e-3 and c.mechanism_unsafe is not None

    def events_file(sigma):
        p = tmp_path / f"{sigma.numerator}-{sigma.denominator}.json"
        p.write_text(json.dumps({"neighboring": "replace-one", "event": {
            "type": "self_composed", "count": 14063, "event": {
                "type": "sampled_without_replacement", "source_dataset_size": 60000, "sample_size": 256,
                "event": {"type": "gaussian", "noise_multiplier": str(sigma)}}}}))
        return str(p)

    claim = ["--delta", "1e-5", "--claimed-eps", "3"]
    assert main(["audit", "dpsgd", "--events", events_file(c.safe.value), *claim]) == 0
    # the pair's curve exceeds delta at its limit, but the pair bounds the mechanism from
    # above only: undecided (exit 3), settled at once instead of refining to the memory budget
    capsys.readouterr()
    assert main(["audit", "dpsgd", "--events", events_file(c.unsafe.value), *claim]) == 3
    assert "memory budget" not in capsys.readouterr().err
    half = c.mechanism_unsafe.value / 2
    assert main(["audit", "dpsgd", "--noise-multiplier", f"{half.numerator}/{half.denominator}",
                 "--sampling-rate", "256/60000", "--steps", "14063", *claim]) == 1  # the mechanism fails


def test_the_whole_dataset_every_step_is_one_pair_without_a_tie_at_zero():
    """adv47 L1b: with the batch size free, a probe at B = N built AFA Cor 32's max of two curves, which
    at g = 1 are the same Gaussian curve: MaxCurvePair could not order two equal balls at eps = 0 and the
    calibration ended in exit 3 ("tie at eps = 0"). At B = N the template now uses the base pair under
    replace-one (as an event tree does); its delta against quadrature of the one-step pair at g = 1."""
    from flint import arb

    from dpverify.ball import working_precision
    from dpverify.calibration.template import wor_template

    t = wor_template(noise_multiplier=2, steps=1, dataset_size=10)
    [st] = t.build(Fraction(10))
    pair = st.make_pair("remove")
    with working_precision(128):
        pair.tails(arb(0))  # decided, no Undecided
        for eps in (0, 1, 3):
            p, q = pair.tails(arb(eps))
            got = p - arb(eps).exp() * q + pair.inf_mass()
            want = one_step_delta(2, 1, eps)
            assert abs(float(got.mid()) - float(want)) <= 1e-12 + float(got.rad()), (eps, got, want)
