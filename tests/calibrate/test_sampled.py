"""Calibration with shuffled and balls-in-bins batches (dpverify.calibration.sampled).

Independent routes: the Gaussian ends against GDPT eq. (2) in mpmath at 50 digits; the
shuffled failing end against the exact divergence of the max statistic by mpmath
quadrature (the binned bound must lie below it, and the Gaussian above it); the
balls-in-bins ends against a two-dimensional mpmath quadrature of Chua et al.'s pair
(T = 2); the certificates against the second route (verify)."""

from __future__ import annotations

import json
from fractions import Fraction

import mpmath
import pytest

from dpverify.calibration.sampled import calibrate_sampled
from dpverify.cli import main
from dpverify.errors import InvalidParameter, Undecided
from tests.certs import reseal

SHUFFLE = dict(dataset_size=100, batch_size=10, rel_width="1e-2")


def _delta_mu(mu, eps):
    mu, eps = mpmath.mpf(mu), mpmath.mpf(eps)
    return mpmath.ncdf(-eps / mu + mu / 2) - mpmath.exp(eps) * mpmath.ncdf(-eps / mu - mu / 2)


def _max_stat_delta(m, T, eps, a=2, b=1):
    """max(delta_remove, delta_add) of the max statistic of one epoch, by quadrature:
    P(M <= x) = Phi(x - a m) Phi(x)^(T-1), Q(M <= x) = Phi(x - b m) Phi(x)^(T-1) (exact laws,
    no binning; the add-remove pair: others -1, x* +1 against an empty slot, shifts 2m and m)."""
    m, c = mpmath.mpf(m), mpmath.exp(eps)

    def dens(k):  # d/dx of Phi(x - k m) Phi(x)^(T-1)
        return lambda x: (mpmath.npdf(x - k * m) * mpmath.ncdf(x) ** (T - 1)
                          + (T - 1) * mpmath.ncdf(x - k * m) * mpmath.npdf(x) * mpmath.ncdf(x) ** (T - 2))

    p, q = dens(a), dens(b)
    cuts = [-8, 0, b * m, a * m, a * m + 10]
    rem = mpmath.quad(lambda x: max(p(x) - c * q(x), 0), cuts)
    add = mpmath.quad(lambda x: max(q(x) - c * p(x), 0), cuts)
    return max(rem, add)


def test_shuffle_sigma_ends_against_the_gaussian_and_the_max_statistic():
    with mpmath.workdps(50):
        c = calibrate_sampled(2, "1e-5", sampling="shuffle-persistent", epochs=2, **SHUFFLE)
        assert c.template == "dpsgd-shuffle" and c.parameter == "noise_multiplier" and not c.integer
        D = mpmath.mpf("1e-5")
        mu = lambda s: mpmath.sqrt(2) / mpmath.mpf(s.numerator) * s.denominator  # noqa: E731
        assert _delta_mu(mu(c.safe.value), 2) <= D < _delta_mu(mu(c.pair_limit.value), 2)
        assert (c.safe.value - c.pair_limit.value) / c.pair_limit.value <= Fraction(1, 50)
    # persistent shuffling: one epoch of the max statistic with mu sqrt(E); the binned bound proved
    # delta > 1e-5 at the unsafe end, so the exact max statistic's divergence is above it too
    with mpmath.workdps(20):
        u = c.unsafe.value
        exact = _max_stat_delta(mpmath.sqrt(2) / mpmath.mpf(u.numerator) * u.denominator, 10, 2)
        assert exact > mpmath.mpf("1e-5")
        assert exact <= _delta_mu(mpmath.sqrt(2) / mpmath.mpf(u.numerator) * u.denominator, 2)
    assert c.unsafe.value < c.pair_limit.value < c.safe.value


def test_shuffle_epochs_ends_are_adjacent_to_the_gaussian_root():
    c = calibrate_sampled(2, "1e-5", sampling="shuffle", noise_multiplier="3", **SHUFFLE)
    assert c.integer and c.parameter == "epochs"
    with mpmath.workdps(50):
        D = mpmath.mpf("1e-5")
        # the safe end is the largest E the Gaussian proves (E + 1 is the pair limit)
        assert _delta_mu(mpmath.sqrt(c.safe.value) / 3, 2) <= D < _delta_mu(mpmath.sqrt(c.safe.value + 1) / 3, 2)
    assert c.pair_limit.value == c.safe.value + 1 and c.unsafe.value > c.safe.value


def test_dynamic_shuffling_lower_end_is_below_persistent():
    # persistent shuffling sums the epochs (mu sqrt(E)); dynamic composes E one-epoch statistics:
    # the persistent pair is easier to distinguish, so it fails at a larger sigma
    dyn = calibrate_sampled(2, "1e-5", sampling="shuffle", epochs=4, **SHUFFLE)
    per = calibrate_sampled(2, "1e-5", sampling="shuffle-persistent", epochs=4, **SHUFFLE)
    assert dyn.safe.value == per.safe.value  # the same upper bound
    assert dyn.unsafe.value < per.unsafe.value


def _bins_delta(sigma, eps):
    """Chua et al.'s pair for T = 2 under Q: L = (Y1 + Y2) / 2, log Y ~ N(-m^2/2, m^2), m = 1/sigma;
    delta_remove = E[(L - c)_+], delta_add = E[(1 - cL)_+]. Given Y1 = a the inner expectation over
    Y2 is the log-normal call / put price (closed form); the outer one is a 1-d quadrature."""
    m, c = mpmath.mpf(sigma.denominator) / sigma.numerator, mpmath.exp(eps)

    def call(k):  # E[(Y - k)_+]
        if k <= 0:
            return 1 - k
        d1 = (-mpmath.log(k) + m**2 / 2) / m
        return mpmath.ncdf(d1) - k * mpmath.ncdf(d1 - m)

    def put(k):  # E[(k - Y)_+]
        if k <= 0:
            return mpmath.mpf(0)
        d1 = (-mpmath.log(k) + m**2 / 2) / m
        return k * mpmath.ncdf(m - d1) - mpmath.ncdf(-d1)

    def outer(f):  # E over log Y1 = z ~ N(-m^2/2, m^2)
        return mpmath.quad(lambda z: f(mpmath.exp(z)) * mpmath.npdf(z, -m**2 / 2, m),
                           [-m**2 / 2 - 12 * m, -m**2 / 2, -m**2 / 2 + 12 * m])

    rem = outer(lambda a: call(2 * c - a) / 2)
    add = outer(lambda a: c / 2 * put(2 / c - a))
    return max(rem, add)


def test_balls_in_bins_sigma_ends_against_quadrature():
    c = calibrate_sampled(1, "1e-2", sampling="balls-in-bins", epochs=1, dataset_size=4, batch_size=2,
                          rel_width="1e-2")
    assert c.template == "dpsgd-bins" and c.pair_limit is None
    assert c.unsafe.value < c.safe.value
    with mpmath.workdps(15):
        assert _bins_delta(c.safe.value, 1) <= mpmath.mpf("1e-2") < _bins_delta(c.unsafe.value, 1)
    assert "bins_grid" in c.safe.hints and "bins_grid" in c.unsafe.hints


@pytest.mark.parametrize("kw, match", [
    (dict(sampling="shuffle", noise_multiplier="1", epochs=2, dataset_size=100, batch_size=10), "exactly one"),
    (dict(sampling="shuffle", dataset_size=100, epochs=2), "batch size cannot be calibrated"),
    (dict(sampling="shuffle", dataset_size=100, batch_size=10, epochs=2, steps=20), "steps"),
    (dict(sampling="shuffle", dataset_size=100, batch_size=10, noise_multiplier="1", sampling_rate="0.1"),
     "sampling-rate"),
    (dict(sampling="shuffle", dataset_size=101, batch_size=10, epochs=2), "ambiguous"),
    (dict(sampling="shuffle", dataset_size=100, batch_size=10, epochs="1.5"), "whole number"),
    (dict(sampling="balls-in-bins", dataset_size=100, batch_size=7, epochs=1), "divide"),
    (dict(sampling="balls-in-bins", dataset_size=100, batch_size=10, epochs=1, neighboring="replace-one"),
     "add/remove and zeroing-out"),
    (dict(sampling="poisson-ish", dataset_size=100, batch_size=10, epochs=1), "allowed"),
])
def test_bad_inputs_are_refused_with_the_reason(kw, match):
    with pytest.raises(InvalidParameter, match=match):
        calibrate_sampled(2, "1e-5", **kw)


def test_no_safe_epochs_is_undecided_with_the_reason():
    with pytest.raises(Undecided, match="even one epoch"):
        calibrate_sampled("0.1", "1e-5", sampling="shuffle", noise_multiplier="1", dataset_size=100, batch_size=10)


@pytest.mark.parametrize("argv, word", [
    (["--sampling", "shuffle", "--dataset-size", "100", "--epochs", "2"], "--batch-size"),
    (["--sampling", "shuffle", "--dataset-size", "100", "--batch-size", "10", "--steps", "20"], "--steps"),
    (["--sampling", "balls-in-bins", "--dataset-size", "100", "--batch-size", "7", "--epochs", "1"], "divide"),
    (["--sampling", "shuffle", "--dataset-size", "100", "--batch-size", "10", "--epochs", "2", "--plot", "x.png"],
     "--plot"),
])
def test_cli_refuses_bad_inputs_with_exit_2(argv, word, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code = main(["calibrate", "dpsgd", "--target-eps", "2", "--delta", "1e-5", *argv])
    assert code == 2
    err = capsys.readouterr().err
    assert word in err and "Traceback" not in err


@pytest.mark.parametrize("fixture", ["calibrate-shuffle-sigma", "calibrate-bins-sigma"])
def test_verify_refuses_false_ends(fixture, tmp_path):
    """A safe end moved below the failing end, a failing end moved to a safe value, and a hint on
    an end that takes none are refused (1, 1 or 3, 2); the genuine fixture is confirmed."""
    from pathlib import Path

    from dpverify.recheck.verify import verify_file

    src = Path(__file__).resolve().parents[1] / "certificate" / "format2" / f"{fixture}.json"
    cert = json.loads(src.read_text())
    assert verify_file(src)[0] == 0
    ends = cert["result"]["ends"]

    def outcome(change):
        c = json.loads(json.dumps(cert))
        change(c["result"]["ends"])
        p = tmp_path / "c.json"
        p.write_text(json.dumps(reseal(c)))
        return verify_file(p)[0]

    unsafe = Fraction(ends["unsafe"]["value"])
    # the safe end moved onto a value the failing end's pair refutes: the ends' order or the bound refutes it
    assert outcome(lambda e: e["safe"].update(value=str(unsafe * Fraction(9, 10)))) == 1
    # a failing end moved to the safe value: the upper bound there is <= delta, so it is refuted
    assert outcome(lambda e: e["unsafe"].update(value=e["safe"]["value"])) == 1
    # a hint an end does not take
    assert outcome(lambda e: e["safe"].update(grid="2^-10")) == 2
