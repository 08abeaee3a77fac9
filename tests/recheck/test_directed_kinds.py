"""The directed-rounding re-checks of the Gaussian-DP kinds, the closed-form RDP
conversions, the shuffle kinds' upper end and the replace kinds' group-privacy
factor, each against an independent route: mpmath at 120+ digits (a different
implementation of erfc / ncdf / exp / erfinv, at a precision far beyond the
enclosures' width). Each enclosure must contain the high-precision value and be
narrow (relative width below 1e-25 at 30 requested digits)."""

from __future__ import annotations

from fractions import Fraction

from pathlib import Path

import mpmath
import pytest

from dpverify.errors import CertificateRejected, CouldNotReprove, MalformedCertificate
from dpverify.recheck import gdp, gdpt, rdp, shuffle
from dpverify.recheck.core import arith, mpfr_to_mpf

REF_DPS = 130


def _mp(x: Fraction) -> mpmath.mpf:
    return mpmath.mpf(x.numerator) / x.denominator


def _delta_ref(mu: Fraction, eps: Fraction) -> mpmath.mpf:
    """GDPT eq. 2 on mpmath at REF_DPS digits (ncdf, not MPFR's erfc)."""
    with mpmath.workdps(REF_DPS):
        m, e = _mp(mu), _mp(eps)
        return mpmath.ncdf(-e / m + m / 2) - mpmath.exp(e) * mpmath.ncdf(-e / m - m / 2)


def _inside_and_narrow(lo, hi, ref, rel: float = 1e-25) -> None:
    with mpmath.workdps(REF_DPS):
        assert lo <= ref <= hi, (lo, ref, hi)
        assert hi - lo <= abs(ref) * mpmath.mpf(rel), (lo, hi, ref)


def _enc(lo, hi) -> dict:
    """A recorded enclosure that asks for 30 digits (what needed_digits reads)."""
    return {"enclosure": {"lo": str(lo), "hi": str(hi)}}


_THIRTY = _enc("1", "1.000000000000000000000000000001")

DELTA_CASES = [("1", "1"), ("0.5", "50"), ("1/3", "-2"), ("3", "0"), ("1e-3", "1e-4"), ("20", "5"),
               ("1", "30"), ("7/10", "-1/1000")]


@pytest.mark.parametrize("mu,eps", DELTA_CASES)
def test_delta_mu_encloses_the_high_precision_value(mu: str, eps: str) -> None:
    m, e = Fraction(mu), Fraction(eps)
    r = gdp.recheck_delta({"mu": mu, "eps": eps}, _THIRTY)
    _inside_and_narrow(r.lo, r.hi, _delta_ref(m, e))


def test_delta_mu_underflow_is_never_a_floor() -> None:
    """delta_mu(1e6) at mu = 1 is about e^(-5 10^11), below MPFR's exponent range: the
    directed enclosure's lower end is 0 (RoundDown underflows to 0) and its upper end a
    tiny positive number, never a positive floor."""
    lo, hi = gdp.delta_mu_iv(arith(120), Fraction(1), Fraction(10**6))
    assert lo == 0 and 0 < hi < mpmath.mpf(10) ** -300000


@pytest.mark.parametrize("mu,eps", [("1", "1000000"), ("6", "1000000"), ("1/3", "20000"),
                                    ("1/1000", "50"), ("2", "77777777/3"),
                                    ("1", "39000")])
def test_delta_mu_below_mpfr_range_is_enclosed_in_log_space(mu: str, eps: str) -> None:
    """Below MPFR's exponent range recheck_delta encloses log delta_mu through the Mills
    ratios (directed) and exponentiates by an exact power of two: the enclosure must hold
    mpmath's value at 130 digits (mpmath's exponent is unbounded: Phi(a) - e^eps Phi(b)
    written out, an independent route) and be narrow."""
    m, e = Fraction(mu), Fraction(eps)
    r = gdp.recheck_delta({"mu": mu, "eps": eps}, _THIRTY)
    with mpmath.workdps(REF_DPS):
        ref = _delta_ref(m, e)
        assert 0 < r.lo <= ref <= r.hi, (r.lo, ref, r.hi)
        assert r.hi - r.lo <= ref * mpmath.mpf(10) ** -28


def test_delta_mu_overflowing_exp_stays_a_sound_enclosure() -> None:
    """e^eps beyond MPFR's range (eps = 1e10): the enclosure is clamped to [0, x], never NaN."""
    A = arith(120)
    lo, hi = gdp.delta_mu_iv(A, Fraction(1, 10**6), Fraction(10**10))
    assert lo == 0 and 0 <= hi <= 1


def _mu_root(eps: Fraction, delta: Fraction) -> mpmath.mpf:
    """mu_GDP by plain bisection at REF_DPS digits (delta_mu increases in mu)."""
    with mpmath.workdps(REF_DPS):
        e, t = _mp(eps), _mp(delta)

        def f(m: mpmath.mpf) -> mpmath.mpf:
            return mpmath.ncdf(-e / m + m / 2) - mpmath.exp(e) * mpmath.ncdf(-e / m - m / 2)

        lo, hi = mpmath.mpf(2) ** -40, mpmath.mpf(64)
        assert f(lo) < t < f(hi)
        for _ in range(460):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if f(mid) < t else (lo, mid)
        return (lo + hi) / 2


def _bracket(x: mpmath.mpf, rel: str) -> dict:
    with mpmath.workdps(REF_DPS):
        w = abs(x) * mpmath.mpf(rel)
        return _enc(mpmath.nstr(x - w, 60), mpmath.nstr(x + w, 60))


def test_mu_bracket_accepts_the_root_and_refuses_a_shifted_one() -> None:
    eps, delta = Fraction(1), Fraction(1, 1000)
    root = _mu_root(eps, delta)
    r = gdp.recheck_mu({"eps": "1", "delta": "1/1000"}, _bracket(root, "1e-30"))
    with mpmath.workdps(REF_DPS):
        assert r.lo <= root <= r.hi
    for shift in ("1e-12", "1e-6"):
        with mpmath.workdps(REF_DPS):
            moved = root * (1 + mpmath.mpf(shift) * 3)
        with pytest.raises(CertificateRejected):
            gdp.recheck_mu({"eps": "1", "delta": "1/1000"}, _bracket(moved, shift))


def test_eps_bracket_accepts_the_root_and_refuses_a_shifted_one() -> None:
    mu, delta = Fraction(1), Fraction(1, 10**5)
    with mpmath.workdps(REF_DPS):
        root = mpmath.findroot(lambda e: _delta_ref(mu, Fraction(mpmath.nstr(e, REF_DPS - 5))) - _mp(delta),
                               mpmath.mpf("4.377"), tol=mpmath.mpf(10) ** -(REF_DPS - 20))
    gdp.recheck_eps({"mu": "1", "delta": "1e-5"}, _bracket(root, "1e-28"))
    with mpmath.workdps(REF_DPS):
        moved = root * (1 - mpmath.mpf("3e-12"))
    with pytest.raises(CertificateRejected):
        gdp.recheck_eps({"mu": "1", "delta": "1e-5"}, _bracket(moved, "1e-12"))


@pytest.mark.parametrize("eps,delta", [("1", "1e-5"), ("0", "1/10"), ("5", "1e-9"), ("1/10", "1/2")])
def test_thm45_slope_encloses_the_high_precision_value(eps: str, delta: str) -> None:
    e, d = Fraction(eps), Fraction(delta)
    m = _mu_root(e, d)
    with mpmath.workdps(REF_DPS):
        x = _mp(e)
        ref = mpmath.exp(x) * mpmath.ncdf(-x / m - m / 2) / mpmath.npdf(x / m - m / 2)
    r = gdp.recheck_thm45({"eps": eps, "delta": delta}, _THIRTY)
    _inside_and_narrow(r.lo, r.hi, ref)
    assert r.verdict == "holds"  # 0 <= slope <= sqrt(2 pi)/2 (GDPT Thm 4.5)


@pytest.mark.parametrize("t", ["-1000", "-20", "-3", "-1", "-1/2", "0", "1", "3", "10"])
def test_mills_scaled_encloses_the_high_precision_value(t: str) -> None:
    x = Fraction(t)
    with mpmath.workdps(REF_DPS):
        v = _mp(x)
        ref = mpmath.sqrt(mpmath.pi / 2) * mpmath.exp(v * v / 2) * mpmath.ncdf(v)
    r = gdp.recheck_mills({"t": t}, _THIRTY)
    _inside_and_narrow(r.lo, r.hi, ref)


@pytest.mark.parametrize("eps", ["1", "1/100", "10", "40"])
def test_thm51_encloses_the_high_precision_value(eps: str) -> None:
    with mpmath.workdps(REF_DPS + 40):
        ref = 2 * mpmath.sqrt(2) * mpmath.erfinv(mpmath.tanh(_mp(Fraction(eps)) / 2))
    r = gdpt.recheck_thm51({"eps0": eps}, _THIRTY)
    _inside_and_narrow(r.lo, r.hi, ref)


def test_thm51_below_zero_is_refused() -> None:
    # no mechanism is eps0-DP for eps0 < 0 and mu-GDP needs mu >= 0: the formula's negative
    # value there states nothing (the producer refuses eps0 <= 0 too)
    from dpverify.errors import CertificateRejected

    with pytest.raises(CertificateRejected, match="outside GDPT Thm 5.1"):
        gdpt.recheck_thm51({"eps0": "-2"}, _THIRTY)


def test_thm51_at_zero_is_exactly_zero() -> None:
    r = gdpt.recheck_thm51({"eps0": "0"}, _THIRTY)
    assert r.lo == 0 and r.hi == 0


@pytest.mark.parametrize("conv,a,g,d", [("classic", "2", "1/2", "1e-5"), ("classic", "64", "3", "1e-300"),
                                        ("balle", "2", "1/2", "1e-5"), ("balle", "33/2", "7/5", "1e-9")])
def test_to_dp_eps_encloses_the_closed_form(conv: str, a: str, g: str, d: str) -> None:
    with mpmath.workdps(REF_DPS):
        am, gm, dm = (_mp(Fraction(v)) for v in (a, g, d))
        if conv == "classic":
            ref = gm + mpmath.log(1 / dm) / (am - 1)
        else:
            ref = max(0, gm + mpmath.log(1 - 1 / am) - (mpmath.log(dm) + mpmath.log(am)) / (am - 1))
    r = rdp.recheck_to_dp_eps({"alpha": a, "rdp": g, "delta": d, "conversion": conv}, _THIRTY)
    _inside_and_narrow(r.lo, r.hi, ref)


@pytest.mark.parametrize("conv,a,g,e", [("classic", "5", "1/10", "1"), ("classic", "801", "0", "1"),
                                        ("balle", "5", "3/10", "2"), ("balle", "3", "1", "2/5")])
def test_to_dp_delta_encloses_the_closed_form(conv: str, a: str, g: str, e: str) -> None:
    with mpmath.workdps(REF_DPS):
        am, gm, em = (_mp(Fraction(v)) for v in (a, g, e))
        if conv == "classic":
            ref = min(1, mpmath.exp(-(am - 1) * (em - gm)))
        else:
            ref = min(1, (1 / am) * (1 - 1 / am) ** (am - 1) * mpmath.exp((am - 1) * (gm - em)))
    r = rdp.recheck_to_dp_delta({"alpha": a, "rdp": g, "eps": e, "conversion": conv}, _THIRTY)
    if ref == 1:
        assert r.lo == 1 and r.hi == 1
    else:
        _inside_and_narrow(r.lo, r.hi, ref)


def test_to_dp_delta_deep_value_is_enclosed_not_floored() -> None:
    """exp(-800 * 1) ~ 1e-348 (below a double's range) is enclosed tightly, not floored at 1e-300."""
    r = rdp.recheck_to_dp_delta({"alpha": "801", "rdp": "0", "eps": "1", "conversion": "classic"}, _THIRTY)
    with mpmath.workdps(REF_DPS):
        ref = mpmath.exp(-800)
    _inside_and_narrow(r.lo, r.hi, ref)


def test_shuffle_upper_end_uses_a_mu_bracket_that_encloses_sqrt() -> None:
    """The rational bracket of mu = Delta sqrt(E) / sigma contains the 130-digit value."""
    r = {"Delta": 2, "E": 7, "sig": Fraction(9, 10), "persistent": False}
    lo, hi = shuffle._mu_bracket(r)
    with mpmath.workdps(REF_DPS):
        ref = 2 * mpmath.sqrt(7) / mpmath.mpf("0.9")
        assert _mp(lo) <= ref <= _mp(hi) and _mp(hi - lo) < mpmath.mpf(10) ** -55


@pytest.mark.parametrize("pair", [(2, 1), (1, 0), (2, 0)])
def test_shuffle_cell_masses_enclose_the_high_precision_masses(pair) -> None:
    """The directed-rounding cell masses of the max-of-batch-sums pairs contain mpmath's
    120-digit masses (P: Phi(x - a m) Phi(x)^(T-1) differences, Q: Phi(x - b m) Phi(x)^(T-1),
    m = 1/sigma; (a, b) = (2, 1) the add-remove pair, (1, 0) the earlier one, (2, 0) replace-one)."""
    r = {"T": 10, "Delta": 1, "sig": Fraction(9, 10), "persistent": False, "E": 5}
    a, s, K = Fraction(-37, 32), Fraction(145, 2048), 40
    p, q = shuffle._cells(r, a, s, K, pair)
    with mpmath.workdps(REF_DPS):
        m = 1 / mpmath.mpf("0.9")
        Fp, Fq = [mpmath.mpf(0)], [mpmath.mpf(0)]
        for i in range(K - 1):
            x = _mp(a + i * s)
            Fq.append(mpmath.ncdf(x - pair[1] * m) * mpmath.ncdf(x) ** 9)
            Fp.append(mpmath.ncdf(x - pair[0] * m) * mpmath.ncdf(x) ** 9)
        Fp.append(mpmath.mpf(1))
        Fq.append(mpmath.mpf(1))
        P, Q = shuffle._units(p, q)
        unit = mpmath.mpf(2) ** shuffle._K
        for k in range(K):
            for iv, F in ((p[k], Fp), (q[k], Fq)):
                lo, hi = mpfr_to_mpf(iv[0]), mpfr_to_mpf(iv[1])
                assert lo <= F[k + 1] - F[k] <= hi
                assert hi - lo < mpmath.mpf(2) ** -150
            # units: P at most one below floor(mass 2^K), Q at most one above ceil(mass 2^K)
            assert 0 <= int(mpmath.floor((Fp[k + 1] - Fp[k]) * unit)) - P[k] <= 1
            assert 0 <= Q[k] - int(mpmath.ceil((Fq[k + 1] - Fq[k]) * unit)) <= 1


def test_thm45_refuses_inputs_outside_the_theorem() -> None:
    # outside the producer's domain: malformed (exit 2), not false (adv35 X2)
    with pytest.raises(MalformedCertificate):
        gdp.recheck_thm45({"eps": "-1", "delta": "1e-5"}, _THIRTY)


def test_mu_bracket_reaching_zero_uses_the_limit() -> None:
    """An end mu <= 0 stands for the infimum (1 - e^eps)_+: at eps = -1 and delta below
    1 - e^-1 there is no root above 0 (the bracket's lower end is already past it)."""
    with pytest.raises((CertificateRejected, CouldNotReprove)):
        gdp.recheck_mu({"eps": "-1", "delta": "1/2"}, _enc("0", "1"))


def test_a_negative_recorded_end_keeps_its_sign() -> None:
    """eps(delta) for mu = 1, delta = 1/2 is negative (delta_mu(0) = 2 Phi(1/2) - 1 < 1/2): a
    bracket around the 130-digit root is accepted, and the same bracket with its signs
    flipped is refused (the recorded ends are read with their signs)."""
    with mpmath.workdps(REF_DPS):
        root = mpmath.findroot(lambda e: _delta_ref(Fraction(1), Fraction(mpmath.nstr(e, REF_DPS - 5))) - mpmath.mpf(1) / 2,
                               mpmath.mpf("-0.5"), tol=mpmath.mpf(10) ** -(REF_DPS - 20))
        assert root < 0
    gdp.recheck_eps({"mu": "1", "delta": "1/2"}, _bracket(root, "1e-28"))
    with pytest.raises(CertificateRejected):
        gdp.recheck_eps({"mu": "1", "delta": "1/2"}, _bracket(-root, "1e-28"))


def test_tail_limit_and_clip_rectify_are_outward_enclosures() -> None:
    """Exact rationals and 1/sqrt(2) are enclosed, not rounded to nearest: 3/10, 1/3 and
    1/sqrt(2) are not binary numbers, so lo < value < hi, decided in exact rationals
    (for 1/sqrt(2): lo^2 < 1/2 < hi^2)."""
    q = gdp.mpf_to_fraction
    r = gdpt.recheck_tail_limit({"mechanism": "gaussian", "mu": "3/10"}, {})
    assert q(r.lo) < Fraction(3, 10) < q(r.hi)
    r = gdpt.recheck_tail_limit({"mechanism": "sgd-example"}, {})
    assert q(r.lo) ** 2 < Fraction(1, 2) < q(r.hi) ** 2 and q(r.hi) - q(r.lo) < Fraction(1, 10**40)
    r = gdpt.recheck_clip_rectify({"y_minus": "0", "y_plus": "1", "eps_h": "3"}, {})
    assert q(r.lo) < Fraction(1, 3) < q(r.hi)


def test_delta_mu_below_mpfr_exponent_range_is_accepted_not_exit_3(tmp_path):
    """gmpy2 caps MPFR's exponent near 2^-(2^30), so delta_mu(1e5) at mu = 1 (about
    10^-2171450706) underflowed the directed route to [0, 2^-(2^30)] and a genuine
    certificate answered exit 3 (found by CI's property certificates). Below that range
    the second route is mpmath at rising precision (classified an estimate in kinds.STEPS).
    Independent route: with x = eps - 1/2 and mu = 1, e^eps phi(x + 1) = phi(x), so the
    Mills-ratio bounds t/(t^2+1) phi(t) < Phi(-t) < phi(t)/t give
    phi(x)(x-1)/((x^2+1)(x+1)) < delta < phi(x)(x+2)/(x((x+1)^2+1)), a relative gap of
    about 3/x = 3e-5, evaluated in mpmath at 40 digits."""
    import json

    import mpmath

    from dpverify.cli import main
    from dpverify.recheck.verify import verify_file

    path = tmp_path / "d.json"
    assert main(["gdp", "delta", "--mu", "1", "--eps", "100000", "--certificate", str(path)]) == 0
    code, message = verify_file(path)
    assert code == 0, message
    with mpmath.workdps(40):
        x = mpmath.mpf(100000) - mpmath.mpf(1) / 2
        below = mpmath.npdf(x) * (x - 1) / ((x * x + 1) * (x + 1))
        above = mpmath.npdf(x) * (x + 2) / (x * ((x + 1) ** 2 + 1))
        enc = json.loads(path.read_text())["result"]["enclosure"]
        assert below <= mpmath.mpf(enc["lo"]) <= mpmath.mpf(enc["hi"]) <= above


def test_thm45_at_eps_zero_with_a_tiny_delta_is_re_proved(tmp_path):
    """At eps = 0, delta = 1e-77 gives mu ~ 2.5e-77, and delta_mu(0) = Phi(mu/2) - Phi(-mu/2)
    cancels 77 digits: the 20-digit proposal of mu found nothing ('no positive proposal')
    and a genuine property certificate answered exit 3. Independent route: the slope at
    eps = 0 is sqrt(pi/2) exactly (GDPT Thm 4.5: e^0 Phi(-mu/2) / phi(mu/2) -> sqrt(2 pi)/2
    as mu -> 0), compared with the certified enclosure."""
    import json

    import mpmath

    from dpverify.recheck.verify import verify_file

    src = Path(__file__).resolve().parents[2] / "tests" / "recheck" / "data"
    cert = json.loads((src / "gdp-thm45-tiny-delta.json").read_text())
    path = tmp_path / "t.json"
    path.write_text(json.dumps(cert))
    code, message = verify_file(path)
    assert code == 0, message
    enc = cert["result"]["enclosure"]
    with mpmath.workdps(40):
        assert mpmath.mpf(enc["lo"]) <= mpmath.sqrt(mpmath.pi / 2) <= mpmath.mpf(enc["hi"])
