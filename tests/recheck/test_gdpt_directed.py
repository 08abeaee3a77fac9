"""The GDP-transformation re-check's directed-rounding parts (recheck/gdpt.py) against
independent routes: mpmath at 100 digits (profiles, delta_mu, mu_GDP by bisection) and a
brute-force sign scan of App B's k on a grid."""

from __future__ import annotations

import re
from fractions import Fraction as F

import mpmath
import pytest

from dpverify.errors import CertificateRejected, CouldNotReprove, MalformedCertificate
from dpverify.recheck import gdpt as G
from dpverify.recheck.core import arith, mpfr_to_mpf
from dpverify.recheck.verify import _load_recheckers

_load_recheckers()  # the randomized-response profile registers from recheck.dp
DPS = 100


def _mp(x: F) -> mpmath.mpf:
    return mpmath.mpf(x.numerator) / x.denominator


def _k_mp(name: str, x: mpmath.mpf) -> mpmath.mpf:
    """App B's k(x) = f'(x)(1 + e^x) + e^x (1 - f(x)) written out (SGD: f = e^{-x^2};
    ICEA: f = K/x, K = 4 e^-2, for x > K)."""
    if name == "sgd-example":
        f, fd = mpmath.exp(-x * x), -2 * x * mpmath.exp(-x * x)
    else:
        K = 4 * mpmath.exp(-2)
        f, fd = K / x, -K / (x * x)
    return fd * (1 + mpmath.exp(x)) + mpmath.exp(x) * (1 - f)


@pytest.mark.parametrize("name", ["sgd-example", "icea-example"])
def test_refinement_bracket_holds_the_unique_positive_zero(name: str) -> None:
    lo, hi = G.refinement_bracket(name, 200)
    assert hi - lo <= lo * F(1, 2**150)
    with mpmath.workdps(DPS):
        # bisection on k itself at 100 digits (no findroot): the zero is inside the bracket
        a, b = _mp(lo) - mpmath.mpf("0.5"), _mp(hi) + mpmath.mpf("0.5")
        assert _k_mp(name, a) < 0 < _k_mp(name, b)
        for _ in range(300):
            m = (a + b) / 2
            a, b = (m, b) if _k_mp(name, m) < 0 else (a, m)
        assert _mp(lo) <= a and b <= _mp(hi)
        # brute force: k < 0 left of the bracket and > 0 right of it on a grid of (0, 8]
        start = 4 * mpmath.exp(-2) if name == "icea-example" else mpmath.mpf(0)
        for i in range(1, 801):
            x = start + (8 - start) * mpmath.mpf(i) / 800
            if x < _mp(lo):
                assert _k_mp(name, x) < 0
            elif x > _mp(hi):
                assert _k_mp(name, x) > 0


PROFILES = [
    ("laplace", {"scale": "1/2"}), ("laplace", {"scale": "3", "sensitivity": "2"}),
    ("pure", {"eps0": "1"}), ("approx", {"eps0": "1", "delta0": "1/10"}), ("rr", {"p": "3/4"}),
    ("subsampled", {"rate": "1/10", "eps0": "1", "delta0": "1/100000"}),
    ("sgd-example", {}), ("icea-example", {}), ("sgd-example", {"refined": "true"}),
    ("icea-example", {"refined": "true"}), ("expr", {"profile": "0.5*exp(-eps)"}),
    ("expr", {"profile": "Phi(-eps) + erfc(eps + 1)/4"}),
]


@pytest.mark.parametrize("name, opts", PROFILES)
@pytest.mark.parametrize("eps", [F(-1, 2), F(0), F(1, 3), F(1), F(2), F(17, 4)])
def test_directed_profiles_enclose_the_mpmath_profiles(name: str, opts: dict, eps: F) -> None:
    """Each directed profile encloses the mpmath profile of the same mechanism at 100 digits
    (written differently: cdfs instead of the closed form, findroot for the App B point)."""
    from dpverify.recheck.profiles import PROFILE_RECHECKS

    inputs = {"mechanism": name, **opts}
    lo, hi = G._iv_profile(name, inputs, 240)(arith(240), eps)
    with mpmath.workdps(DPS):
        ref = PROFILE_RECHECKS[name](inputs)(eps)
        tol = abs(ref) * mpmath.mpf(10) ** -(DPS - 15) + mpmath.mpf(10) ** -(DPS - 10)
        a, b = mpfr_to_mpf(lo), mpfr_to_mpf(hi)
        assert a - tol <= ref <= b + tol, (a, ref, b)
        # narrow (expr runs in mpmath.iv at 53 bits: a double's width)
        width = mpmath.mpf(10) ** -12 if name == "expr" else mpmath.mpf(10) ** -60
        assert b - a <= width * max(abs(ref), mpmath.mpf(10) ** -20) + mpmath.mpf(10) ** -70


@pytest.mark.parametrize("mu", [F(9, 5), F(1, 3), F(7), F(1, 1000), F(30)])
@pytest.mark.parametrize("eps", [F(0), F(1, 7), F(3), F(-2), F(40), F(201, 10), F(-1, 1000)])
def test_delta_mu_ends_enclose_mpmath(mu: F, eps: F) -> None:
    d = G._DeltaMuEnds(arith(220), mu)
    lo, hi = mpfr_to_mpf(d.lower(eps)), mpfr_to_mpf(d.upper(eps))
    with mpmath.workdps(DPS):
        m, e = _mp(mu), _mp(eps)
        ref = mpmath.ncdf(-e / m + m / 2) - mpmath.exp(e) * mpmath.ncdf(-e / m - m / 2)
        assert lo <= ref <= hi
        assert hi - lo <= ref * mpmath.mpf(10) ** -55 + mpmath.mpf(10) ** -300


@pytest.mark.parametrize("name, opts, x", [("laplace", {"scale": "1/2"}, F(0)), ("laplace", {"scale": "1/2"}, F(1)),
                                           ("pure", {"eps0": "1"}, F(1, 2)), ("sgd-example", {"refined": "true"}, F(1))])
def test_g_lower_is_below_and_near_mu_gdp(name: str, opts: dict, x: F) -> None:
    """G_f(x) = mu_GDP(x, f(x)) by bisection on mpmath at 100 digits: the proved lower end is
    below it and within 1e-40 (relative)."""
    from dpverify.recheck.profiles import PROFILE_RECHECKS

    inputs = {"mechanism": name, **opts}
    g_lo, _ = G._g_lower(G._iv_profile(name, inputs, G._bits(50)), x, 50)
    with mpmath.workdps(DPS):
        fx = PROFILE_RECHECKS[name](inputs)(x)
        lo, hi = mpmath.mpf(0), mpmath.mpf(64)
        for _ in range(400):
            m = (lo + hi) / 2
            lo, hi = (m, hi) if G.delta_mu_mp(m, _mp(x)) < fx else (lo, m)
        assert g_lo <= lo and g_lo >= lo * (1 - mpmath.mpf(10) ** -40)


@pytest.mark.parametrize("algorithm", ["naive", "shuffled"])
def test_a_grid_staircase_with_more_hints_than_cells_verifies(tmp_path, algorithm) -> None:
    # The naive and shuffled staircases record n = 2 sqrt(2 pi) eps_h / margin breakpoints: here
    # 19,352, which at one cell each spent verify's whole cell budget, so this genuine certificate
    # answered exit 3. Every k-th hint now seeds the proof and failing cells are halved.
    # Independent check of the head it confirms: the profile is delta0 = 1/100 for eps >= eps0,
    # so G_f increases on [eps0, eps_h] and sup G_f over the head is the mu with
    # delta_mu(3.86) = 1/100 (GDPT eq. 2, solved by mpmath at 40 digits).
    import json

    from dpverify.cli import main
    from dpverify.recheck.verify import verify_file
    from tests.reference import delta_mu_ref

    path = tmp_path / "g.json"
    assert main(["gdp", "certify", "--mechanism", "approx", "--eps0", "0.1", "--delta0", "0.01", "--eps-h",
                 "3.86", "--margin", "1e-3", "--algorithm", algorithm, "--certificate", str(path)]) == 0
    code, message = verify_file(path)
    assert code == 0, message
    head = json.loads(path.read_text())["result"]["head"]["enclosure"]
    with mpmath.workdps(40):
        mu = mpmath.findroot(lambda m: delta_mu_ref(F(mpmath.nstr(m, 45)), F("3.86"), 40) - mpmath.mpf("0.01"),
                             mpmath.mpf("1.45"))
        assert mpmath.mpf(head["lo"]) <= mu <= mpmath.mpf(head["hi"]), (mu, head)


@pytest.mark.parametrize("profile", ["exp(-eps)", "0.5*exp(-eps**2) + 0.1*erfc(eps)", "Phi(1 - eps) - 0.05",
                                     "1/(1 + eps)**1.5", "max(0.1, log1p(1/(1 + eps)))", "abs(cos_free - 1)"])
@pytest.mark.parametrize("cell", [(F(0), F(1, 3)), (F(1, 7), F(2)), (F(5, 2), F(5, 2))])
def test_expr_cell_bound_encloses_the_profile_on_the_whole_cell(profile: str, cell: tuple) -> None:
    """gdp.certify's expr cells (the MPFR walker of dp.profile over an interval of eps) hold
    f at every point of the cell, f evaluated by mpmath at 100 digits on a grid of points
    (ends and 15 interior ones); an expression with a name the walker does not know is refused."""
    inputs = {"mechanism": "expr", "profile": profile}
    a, b = cell
    if "cos_free" in profile:
        with pytest.raises((CertificateRejected, CouldNotReprove, MalformedCertificate)):
            G._expr_cells(inputs)(arith(200), a, b)
        return
    lo, hi = G._expr_cells(inputs)(arith(200), a, b)
    env = {"exp": mpmath.exp, "erfc": mpmath.erfc, "Phi": mpmath.ncdf, "log1p": mpmath.log1p, "max": max,
           "mpf": mpmath.mpf}
    # the walker reads the literals as the exact decimals written: so does the reference
    exact = re.sub(r"(?<![\w.])(\d+(?:\.\d+)?)", r"mpf('\1')", profile)
    with mpmath.workdps(DPS):
        for i in range(17):
            x = _mp(a + (b - a) * F(i, 16))
            v = eval(exact, {"__builtins__": {}}, {**env, "eps": x})  # noqa: S307 (fixed test strings)
            assert mpfr_to_mpf(lo) <= v <= mpfr_to_mpf(hi), (profile, float(x))
