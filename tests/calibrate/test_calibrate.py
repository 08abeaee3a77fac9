"""Certified calibration: brackets checked against an independent route.

The cheap case (sampling rate 1, 10 Gaussian steps) is mu-GDP with
mu = sqrt(10) / sigma exactly (composition of Gaussians), so delta(eps) has the
closed form of GDPT eq. (2), evaluated here on mpmath at 50 digits.
"""

import copy
import math
from fractions import Fraction

import mpmath
import pytest

from dpverify import calibrate
from dpverify.calibration import dpsgd_template
from dpverify.certificate import verify_certificate
from dpverify.cli import main
from dpverify.cli.calibrate import certificate
from dpverify.errors import CertificateRejected, InvalidParameter, MalformedCertificate

from ..certs import reseal


def delta_mu(eps, mu):
    with mpmath.workdps(50):
        return mpmath.ncdf(-eps / mu + mu / 2) - mpmath.exp(eps) * mpmath.ncdf(-eps / mu - mu / 2)


@pytest.fixture(scope="module")
def gauss():
    return calibrate(1, "1e-5", sampling_rate=1, steps=10, rel_width="1e-2")


def test_gaussian_bracket_against_closed_form(gauss):
    c = gauss
    assert c.parameter == "noise_multiplier" and c.safe.value == c.hi and c.unsafe.value == c.lo
    assert c.rel_width <= 1e-2
    with mpmath.workdps(50):
        D = mpmath.mpf(1) / 10**5
        safe = delta_mu(1, mpmath.sqrt(10) / mpmath.mpf(c.safe.value.numerator) * c.safe.value.denominator)
        unsafe = delta_mu(1, mpmath.sqrt(10) / mpmath.mpf(c.unsafe.value.numerator) * c.unsafe.value.denominator)
        assert safe <= D < unsafe
        # the recorded enclosures of delta(1) contain the closed form
        assert c.safe.delta_lo <= Fraction(str(safe)) * (1 + Fraction(1, 10**12)) and Fraction(str(safe)) <= c.safe.delta_hi * (1 + Fraction(1, 10**12))


def test_certificate_verifies_and_forgeries_are_rejected(gauss):
    cert = certificate(gauss)
    assert "confirmed" in verify_certificate(cert)

    swapped = copy.deepcopy(cert)
    e = swapped["result"]["ends"]
    e["safe"]["value"], e["unsafe"]["value"] = e["unsafe"]["value"], e["safe"]["value"]
    with pytest.raises(CertificateRejected):
        verify_certificate(reseal(swapped))
    # a "safe" end well below the optimum: the second route refutes it
    low = copy.deepcopy(cert)
    low["result"]["ends"]["safe"]["value"] = "11"
    low["result"]["ends"].pop("unsafe")  # with what names it: the statement's clause, the width
    low["result"].pop("relative_width", None)
    low["claim"]["statement"] = low["claim"]["statement"].split(" and fails at")[0]
    with pytest.raises(CertificateRejected):
        verify_certificate(reseal(low))
    extra = copy.deepcopy(cert)
    extra["inputs"]["stepz"] = 10
    with pytest.raises(MalformedCertificate):
        verify_certificate(reseal(extra))


@pytest.mark.parametrize("kw, name", [
    (dict(sampling_rate="0.01"), "noise_multiplier"),  # two parameters missing
    (dict(sampling_rate="0.01", steps=10, noise_multiplier=1), "noise_multiplier"),  # none missing
    (dict(sampling_rate="0.01", steps=10, epochs=1), "epochs"),
    (dict(noise_multiplier=1, sampling_rate="0.01", dataset_size=100), "dataset_size"),
    (dict(sampling_rate="0.01", steps=10, neighboring="replace-one"), "neighboring"),
    (dict(sampling_rate="1.5", steps=10), "sampling_rate"),
    (dict(sampling_rate="0.01", steps=10**9), "steps"),
])
def test_bad_templates_are_refused(kw, name):
    with pytest.raises(InvalidParameter) as exc:
        dpsgd_template(**kw)
    assert exc.value.name == name


@pytest.mark.parametrize("args", [
    ["--target-eps", "0", "--delta", "1e-5"],
    ["--target-eps", "abc", "--delta", "1e-5"],
    ["--target-eps", "1", "--delta", "1"],
    ["--target-eps", "1", "--delta", "0"],
    ["--target-eps", "1", "--delta", "1e-5", "--rel-width", "2"],
    ["--target-eps", "1", "--delta", "1e-5", "--digits", "7"],
    ["--target-eps", "1", "--delta", "1e-5", "--plot", "x.jpg"],
    ["--target-eps", "1", "--delta", "1e-5", "--plot", "/no/such/folder/x.png"],
])
def test_cli_refuses_bad_input(args, capsys):
    code = main(["calibrate", "dpsgd", "--sampling-rate", "1", "--steps", "10", *args])
    assert code == 2
    assert "error" in capsys.readouterr().err


def test_steps_bracket_is_exact_integers():
    # sigma = 40, q = 1: T steps are mu-GDP with mu = sqrt(T) / 40 (closed form)
    c = calibrate(1, "1e-5", noise_multiplier=40, sampling_rate=1, rel_width="0.05")
    assert c.parameter == "steps" and c.safe.value < c.unsafe.value
    D = mpmath.mpf(1) / 10**5
    assert delta_mu(1, mpmath.sqrt(int(c.safe.value)) / 40) <= D < delta_mu(1, mpmath.sqrt(int(c.unsafe.value)) / 40)
    assert (c.unsafe.value - c.safe.value) / c.safe.value <= Fraction(5, 100)


@pytest.mark.slow
def test_done_when_noise_bracket_and_audit_at_both_ends():
    """The MNIST calibration: (q, T, delta) = (256/60000, 14063, 1e-5), target eps 3."""
    c = calibrate(3, "1e-5", sampling_rate="256/60000", steps=14063)
    assert c.rel_width <= 1e-3
    base = ["audit", "dpsgd", "--sampling-rate", "256/60000", "--steps", "14063", "--delta", "1e-5",
            "--claimed-eps", "3", "--noise-multiplier"]
    assert main(base + [str(float(c.hi))]) == 0  # holds at sigma_hi
    assert main(base + [str(float(c.lo))]) == 1  # fails at sigma_lo


@pytest.mark.slow
def test_done_when_steps_bracket_and_audit_at_both_ends():
    c = calibrate(3, "1e-5", noise_multiplier="1.1", sampling_rate="256/60000")
    assert c.rel_width <= 1e-3
    base = ["audit", "dpsgd", "--sampling-rate", "256/60000", "--noise-multiplier", "1.1", "--delta", "1e-5",
            "--claimed-eps", "3", "--steps"]
    assert main(base + [str(int(c.safe.value))]) == 0
    assert main(base + [str(int(c.unsafe.value))]) == 1


def test_infeasible_target_is_proved_and_reported():
    # sigma = 2, q = 1, one step is 0.5-GDP: delta(1) = 0.0068... > 1e-5 (closed form)
    from dpverify.errors import Undecided

    assert delta_mu(1, mpmath.mpf("0.5")) > mpmath.mpf("1e-5")
    with pytest.raises(Undecided, match="proved that no steps"):
        calibrate(1, "1e-5", noise_multiplier=2, sampling_rate=1, rel_width="0.05")


def test_safe_epochs_never_run_more_than_the_safe_steps() -> None:
    """The epochs printed beside a safe step count, run under steps = ceil(E N / B), never exceed it
    (exact rationals, every S to 3000 at 256 of 60000 and 10 of 100). To nearest, 2761 steps printed
    11.7803 epochs, which is 2762 steps: proved to fail the target (adv47 H1)."""
    import math
    from fractions import Fraction

    from dpverify.cli.calibrate import safe_epochs

    assert safe_epochs(2761, 256, 60000) == "11.7802"
    for B, N in ((256, 60000), (10, 100), (7, 1000003)):
        for S in range(1, 3001):
            E = Fraction(safe_epochs(S, B, N))
            assert math.ceil(E * N / B) <= S
            assert E >= Fraction(S * B, N) * (1 - Fraction(1, 10**5))  # and only just below


def test_a_target_met_by_every_batch_size_is_answered_not_an_overflow(capsys):
    # adv47 L1b: the float extrapolation of the batch size passed e^709 and math.exp overflowed (exit 4).
    # One step of sigma = 2 at q = 1 is 0.5-GDP: delta(20) is about 1e-87 (closed form) << 1e-5, so the
    # whole domain [1, N] meets the target (eps nondecreasing in q), and that is the answer
    assert delta_mu(20, mpmath.mpf("0.5")) < mpmath.mpf("1e-80")
    code = main(["calibrate", "dpsgd", "--target-eps", "20", "--delta", "1e-5", "--dataset-size", "10",
                 "--noise-multiplier", "2", "--steps", "1"])
    assert code == 0
    assert "every value up to 10 meets" in capsys.readouterr().out


def test_a_rate_one_schedule_is_calibrated_in_closed_form(capsys):
    """Every step a Gaussian at sampling rate 1: the composition is the Gaussian pair of shift
    mu = sqrt(T) / sigma (GDPT Sec 1), so the producer answers each end in closed form. A grid took
    274 CPU s for T = 10^5 at 6 digits. The reference is mpmath at 60 digits: the safe end meets
    (2, 1e-5), the other does not, the bracket is 10^-6 wide, no grid is recorded, and verify
    re-proves both ends and the safe end's delta_at_target."""
    assert main(["calibrate", "dpsgd", "--target-eps", "2", "--delta", "1e-5", "--sampling-rate", "1",
                 "--steps", "100000", "--digits", "6", "--json"]) == 0
    import json

    cert = json.loads(capsys.readouterr().out)
    ends = cert["result"]["ends"]
    assert "grid" not in ends["safe"] and "grid" not in ends["unsafe"]
    assert "closed form" in cert["method"]["algorithm"]
    safe, unsafe = (Fraction(ends[k]["value"]) for k in ("safe", "unsafe"))
    assert unsafe < safe and (safe - unsafe) / unsafe <= Fraction(1, 10**6)
    with mpmath.workdps(60):
        D = mpmath.mpf(1) / 10**5
        at = {k: delta_mu(2, mpmath.sqrt(10**5) * mpmath.mpf(v.denominator) / v.numerator)
              for k, v in (("safe", safe), ("unsafe", unsafe))}
        assert at["safe"] <= D < at["unsafe"]
        assert at["safe"] <= mpmath.mpf(ends["safe"]["delta_at_target"]["hi"])
    assert "confirmed" in verify_certificate(cert)


@pytest.mark.parametrize("args", [
    # sigma 10^10 at rate 1: every steps value up to 10^7 is safe, delta(2) near e^(-2e13); the grid took
    # 31 s and verify could not re-prove its 3.5e-16 (exit 3)
    ["--target-eps", "2", "--sampling-rate", "1", "--noise-multiplier", "1e10"],
    # eps 10^8: the float model started where delta is e^(-5e14) and ran the grid for 10 minutes
    ["--target-eps", "1e8", "--sampling-rate", "1", "--steps", "10"],
])
def test_rate_one_extremes_are_answered_and_re_proved(args, capsys):
    """Where delta underflows the closed form, the producer's model answers [0, 2^-12000] (arb proves
    delta below it; pld.refine.gaussian_closed_ends) and verify re-proves the recorded bound by the
    Chernoff tail (recheck.gdp.composed_gaussian_delta_tail). The ends are checked against mpmath."""
    import json

    assert main(["calibrate", "dpsgd", "--delta", "1e-5", *args, "--json"]) == 0
    cert = json.loads(capsys.readouterr().out)
    assert "confirmed" in verify_certificate(cert)
    ends = cert["result"]["ends"]
    free = cert["inputs"]["parameter"]
    eps = mpmath.mpf(cert["inputs"]["target_eps"])
    with mpmath.workdps(60):
        for name, end in ends.items():
            v = mpmath.mpf(Fraction(str(end["value"])).numerator) / Fraction(str(end["value"])).denominator
            sigma, steps = (v, 10) if free == "noise_multiplier" else (mpmath.mpf(10) ** 10, v)
            d = delta_mu(eps, mpmath.sqrt(steps) / sigma)
            assert (d <= mpmath.mpf(10) ** -5) == (name == "safe")


def test_a_whole_domain_safe_far_below_delta_is_re_proved_by_the_renyi_tail(capsys):
    """Poisson rate 0.01 at sigma 10^10: every steps value up to 10^7 is safe. The producer's grid
    records delta(2) <= 4.3e-22 at 10^7 steps, which the re-check's grids could not re-prove (exit 3 on
    the grid 2^-16); its Renyi tail bound (recheck.events.tail_upper, Mironov 2017 Prop 1, 7) is near
    1.2e-3561 there (its orders are capped) and proves both the end and its delta_at_target. By hand: the RDP of one step is
    at most about q^2 a / sigma^2 = 10^-24 a, so T = 10^7 steps give 10^-17 a, and
    delta <= e^(10^-17 a (a - 1) - (a - 1) 2) is tiny at a = 6000."""
    import json

    assert main(["calibrate", "dpsgd", "--target-eps", "2", "--delta", "1e-5", "--sampling-rate", "0.01",
                 "--noise-multiplier", "1e10", "--json"]) == 0
    cert = json.loads(capsys.readouterr().out)
    safe = cert["result"]["ends"]["safe"]
    assert safe["value"] == 10**7 and "unsafe" not in cert["result"]["ends"]
    assert "confirmed" in verify_certificate(cert)
    from dpverify.recheck.calibrate import _tail_upper

    assert _tail_upper(cert["inputs"], "steps", 10**7) < mpmath.mpf(10) ** -3000


@pytest.mark.parametrize("args", [
    # a float proposal of sigma underflowed to 0.0 and _snap took its log10 (adv49 #2)
    ["--sampling-rate", "1", "--steps", "1", "--target-eps", "1e59", "--delta", "1e-5"],
    ["--sampling-rate", "1", "--steps", "1", "--target-eps", "1e30", "--delta", "0.999"],
    # the extrapolated proposal e^v overflowed (v past 709)
    ["--sampling-rate", "1", "--steps", "10000000", "--target-eps", "1e-300", "--delta", "1e-300"],
])
def test_extreme_targets_end_in_an_answer_or_a_named_refusal_never_exit_4(args, tmp_path, capsys):
    """Float proposals are kept where they are normal floats (solve.FLOAT_FLOOR, FLOAT_CEIL): these
    ended in ValueError / OverflowError, exit 4. Now a certificate verify re-proves, or exit 3 with
    the calibration's words."""
    from dpverify.recheck.verify import verify_file

    cert = tmp_path / "c.json"
    code = main(["calibrate", "dpsgd", *args, "--time-budget", "60", "--certificate", str(cert)])
    err = capsys.readouterr().err
    assert code in (0, 3), err
    if code == 0:
        assert verify_file(cert)[0] == 0
    else:
        assert "calibrate" in err and "internal error" not in err and not cert.exists()


def test_a_target_no_noise_meets_is_proved_at_the_accountants_limit(capsys):
    """T = 10^7 Gaussian steps at rate 1 are mu-GDP with mu = sqrt(T) / sigma; at the largest sigma
    the accountant takes (10^100, limits.MAX_NOISE_MULTIPLIER, now the template's upper end)
    delta_mu(1e-300) is about mu / sqrt(2 pi) = 1.26e-97 > 1e-300 (mpmath below), so no sigma meets
    (1e-300, 1e-300)-DP: exit 3 with that proof, the numbers short (the exact 1e-300 is 300 digits)."""
    with mpmath.workdps(400):  # delta is 0.5 + 1.3e-97 minus about 0.5: 100 digits cancel
        eps, mu = mpmath.mpf(10) ** -300, mpmath.sqrt(10**7) / mpmath.mpf(10) ** 100
        d = mpmath.ncdf(-eps / mu + mu / 2) - mpmath.exp(eps) * mpmath.ncdf(-eps / mu - mu / 2)
        assert mpmath.mpf("1.26156e-97") <= d < mpmath.mpf("1.26157e-97")
    code = main(["calibrate", "dpsgd", "--sampling-rate", "1", "--steps", "10000000", "--target-eps", "1e-300",
                 "--delta", "1e-300"])
    err = capsys.readouterr().err
    assert code == 3
    assert "proved that no noise_multiplier meets (1e-300, 1e-300)-DP: even noise_multiplier=1e100 fails" in err
    assert "1.26156e-97" in err and "000000000" not in err


@pytest.mark.parametrize("x", [0.0, 5e-324, 1e-310, math.inf, -math.inf, math.nan, 1e308])
@pytest.mark.parametrize("free", ["noise_multiplier", "sampling_rate", "steps"])
def test_snap_keeps_any_float_proposal_in_the_domain(free, x):
    """_snap turns a float proposal into an exact value of the template's domain, whatever the float
    (0.0 had ended in log10's math domain error)."""
    from dpverify.calibration.solve import _snap

    given = {"noise_multiplier": "1", "sampling_rate": "0.5", "steps": 10}
    t = dpsgd_template(**{k: v for k, v in given.items() if k != free})
    for up in (True, False):
        v = _snap(t, x, up, 1e-3)
        assert v > t.lower or (t.integer and v == t.lower)
        assert t.upper is None or v <= t.upper
        t.check_value(v)


def test_a_proposal_the_accountant_cannot_serve_is_declined_for_the_domains_end(tmp_path, capsys):
    """Target eps 1e59: the float model's first probe (rate 0.01) is past the grid's loss support
    and the accountant refuses it (exit 3 before). The proposal is declined and the domain's
    unsafe end, rate 1, checked: one Gaussian step of mu = 1 in closed form, delta(1e59) far below
    1e-300 (mpmath: delta_mu(eps) <= Phi(mu/2 - eps/mu)), so every rate meets the target; the
    certificate verifies."""
    from dpverify.recheck.verify import verify_file

    with mpmath.workdps(50):
        assert mpmath.ncdf(mpmath.mpf("0.5") - mpmath.mpf(10) ** 59) < mpmath.mpf(10) ** -300
    cert = tmp_path / "c.json"
    assert main(["calibrate", "dpsgd", "--target-eps", "1e59", "--delta", "1e-300", "--steps", "1",
                 "--noise-multiplier", "1", "--certificate", str(cert)]) == 0
    assert "sampling_rate: every value up to 1 meets" in capsys.readouterr().out
    assert verify_file(cert)[0] == 0


def test_the_result_line_names_a_tiny_target_shortly(capsys):
    """The line restates the user's target and delta as short exact text: 1e-300 was printed with its 300
    zeros, three times (fix49's LOW 5). At sampling rate 1 every eps this small has the same bracket
    (delta_mu(eps) is the total variation distance near eps = 0)."""
    assert main(["calibrate", "dpsgd", "--target-eps", "1e-300", "--delta", "1e-5", "--sampling-rate", "1",
                 "--steps", "1"]) == 0
    out = capsys.readouterr().out
    assert "is proved to give eps <= 1e-300 (delta(1e-300) <= " in out and "0.000000000000" not in out, out
