"""GDP transformation, staircase head bounds, tails and full certificates."""

import copy
import json
import math
from fractions import Fraction

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mpmath import mpf

from flint import arb

from dpverify.ball import working_precision
from dpverify.certificate import compute_digest, verify_certificate
from dpverify.cli import main
from dpverify.errors import CertificateRejected, InvalidParameter
from dpverify.gdp.certify import certify_gdp
from dpverify.gdp.staircase import SQRT_2PI_UPPER, head_bound
from dpverify.gdp.transform import gdpt
from dpverify.mechanisms import MechanismSpec, build_profile


def _p(name, **opts):
    return build_profile(MechanismSpec(name, {k: str(v) for k, v in opts.items()}))


def _mu_ref(eps: mpf, delta: mpf) -> mpf:
    """mu_GDP by mpmath findroot (reference)."""
    return mpmath.findroot(
        lambda m: mpmath.ncdf(-eps / m + m / 2) - mpmath.exp(eps) * mpmath.ncdf(-eps / m - m / 2) - delta, 1.5
    )


def _inside(x: mpf, enc) -> bool:
    j = enc.to_json()
    return mpf(j["lo"]) <= x <= mpf(j["hi"])


@pytest.mark.parametrize("eps", ["0", "0.5", "3", "40"])
def test_gaussian_gdpt_is_constant_mu(eps):
    # GDPT Sec 4: the GDPT of delta_mu is the constant mu
    enc = gdpt(_p("gaussian", mu="1.5"), eps, 12)
    with mpmath.workdps(40):
        assert _inside(mpf("1.5"), enc)


@pytest.mark.parametrize("eps0", ["0.5", "1", "3"])
def test_pure_gdpt_at_zero_is_thm51(eps0):
    # GDPT Thm 5.1: mu = -2 Phi^-1(1/(1+e^eps0)) = G_f(0) for the worst case of eps0-DP
    enc = gdpt(_p("pure", eps0=eps0), "0", 12)
    with mpmath.workdps(40):
        e = mpf(eps0)
        mu = -2 * mpmath.sqrt(2) * mpmath.erfinv(2 / (1 + mpmath.exp(e)) - 1)
        assert _inside(mu, enc)


def test_laplace_gdpt_matches_reference_inverse():
    p = _p("laplace", scale="0.5")
    for eps in ["0", "0.7", "1.5"]:
        enc = gdpt(p, eps, 10)
        with mpmath.workdps(40):
            e = mpf(eps)
            ref = _mu_ref(e, 1 - mpmath.exp((e - 2) / 2))
            assert _inside(ref, enc)


@settings(max_examples=15)
@given(
    st.fractions(min_value=0, max_value=5, max_denominator=50),
    st.fractions(min_value=Fraction(1, 10), max_value=3, max_denominator=20),
    st.fractions(min_value=Fraction(1, 10), max_value=1, max_denominator=20),
)
def test_order_preservation(eps, eps0, extra):
    # GDPT Def 4.1 / Thm 4.5: f <= g pointwise => G_f <= G_g. The worst case of
    # eps0-DP lies below that of (eps0 + extra)-DP (GDPT Thm 3.1, Cor 3.2).
    f = gdpt(_p("pure", eps0=eps0), eps, 8) if eps < eps0 else None
    g = gdpt(_p("pure", eps0=eps0 + extra), eps, 8)
    if f is not None:
        assert f.lo <= g.hi


def _dense_sup_ref(fun, eh: float, n: int = 200) -> float:
    with mpmath.workdps(30):
        return max(float(fun(mpf(eh) * i / n)) for i in range(n + 1))


CASES = [
    ("pure", {"eps0": "1"}, "4", lambda x: _mu_ref(x, max(mpf(0), (mpmath.e - mpmath.exp(x)) / (1 + mpmath.e))) if x < 1 else 0),
    ("laplace", {"scale": "0.5"}, "4", lambda x: _mu_ref(x, 1 - mpmath.exp((x - 2) / 2)) if x < 2 else 0),
]


@pytest.mark.parametrize("name,opts,eh,ref", CASES)
def test_three_algorithms_overlap_contain_dense_values_and_meet_the_gap(name, opts, eh, ref):
    p = _p(name, **opts)
    encs = {}
    for alg, margin in (("adaptive", "1e-4"), ("shuffled", "1e-2"), ("naive", "1e-2")):
        h = head_bound(p, eh, margin, alg)
        encs[alg] = h.enclosure
        assert h.enclosure.hi - h.enclosure.lo <= float(Fraction(margin)) * (1 + 1e-12)
        if h.grid_step is not None:
            # GDPT Thm 4.6, eq. (3): the staircases are at most sqrt(2 pi) D apart
            assert Fraction(str(h.enclosure.hi - h.enclosure.lo).split(" ")[0].strip("[")) <= SQRT_2PI_UPPER * h.grid_step
            assert h.profile_evaluations == math.ceil(2 * SQRT_2PI_UPPER * Fraction(eh) / Fraction(margin)) + 1
        # a dense high-precision evaluation of G_f never exceeds the certified upper bound
        dense = _dense_sup_ref(ref, float(eh))
        assert dense <= float(h.enclosure.hi.mid()) + 1e-12
        assert float(h.enclosure.lo.mid()) <= dense + 1e-9  # argmax is a grid point here (eps = 0)
    lo = max(e.lo for e in encs.values())
    hi = min(e.hi for e in encs.values())
    assert lo <= hi


def test_adaptive_needs_far_fewer_evaluations_than_alg3():
    p = _p("pure", eps0="1")
    h = head_bound(p, "100", "1e-6", "adaptive")
    n_alg3 = math.ceil(2 * SQRT_2PI_UPPER * 100 / Fraction(1, 10**6)) + 1
    assert h.profile_evaluations * 100 <= n_alg3


def test_head_bound_input_validation():
    p = _p("pure", eps0="1")
    for kwargs, name in (({"eps_h": "-1"}, "eps_h"), ({"margin": "0"}, "margin"), ({"margin": "2"}, "margin"),
                         ({"eps_h": "1e9"}, "eps_h"), ({"algorithm": "magic"}, "algorithm")):
        args = {"eps_h": "1", "margin": "1e-3", "algorithm": "adaptive", **kwargs}
        with pytest.raises(InvalidParameter) as exc:
            head_bound(p, args["eps_h"], args["margin"], args["algorithm"])
        assert exc.value.name == name
    with pytest.raises(InvalidParameter, match="adaptive"):
        head_bound(p, "100", "1e-9", "shuffled")


def test_full_certificates():
    for name, opts, eh in [("pure", {"eps0": "1"}, "2"), ("laplace", {"scale": "0.5"}, "3"),
                           ("sgd-example", {"refined": "true"}, "100"), ("gaussian", {"mu": "1"}, "0")]:
        c = certify_gdp(_p(name, **opts), eh, "1e-6")
        assert c.status == "GDP", (name, c.tail.reason)
        assert c.head.enclosure.hi - c.head.enclosure.lo <= 1e-6 * (1 + 1e-12)
    c = certify_gdp(_p("icea-example", refined="true"), "10", "1e-6")
    assert c.status == "not GDP"
    c = certify_gdp(_p("sgd-example"), "10", "1e-6")
    assert c.status == "not GDP" and c.head.unbounded  # naive profile is 1 at eps = 0
    # eps_h below the end of Laplace's support: the bridge [1, 2] is closed by staircase cells
    c = certify_gdp(_p("laplace", scale="0.5"), "1", "1e-4")
    assert c.status == "GDP" and c.tail.bridge_to == 2 and c.tail.bridge_breakpoints[0] == 1
    c = certify_gdp(_p("expr", profile="0.5*exp(-eps**2)"), "2", "1e-4")
    assert c.status == "head only" and c.tail.gap is not None


def test_tail_of_sgd_holds_and_small_mu_is_refused():
    from dpverify.gdp.tail import certify_tail

    p = _p("sgd-example", refined="true")
    assert certify_tail(p, Fraction(100), Fraction(2)).status == "certified"
    # below Thm 4.4's limit sqrt(1/2) the tail cannot be certified
    assert certify_tail(p, Fraction(100), Fraction(7, 10)).status == "unknown"


def _cert(capsys, *argv):
    code = main([*argv, "--json"])
    return code, json.loads(capsys.readouterr().out)


def test_certify_cli_and_verify(capsys):
    code, cert = _cert(capsys, "gdp", "certify", "--mechanism", "laplace", "--scale", "0.5", "--eps-h", "5",
                       "--margin", "1e-5")
    assert code == 0 and cert["result"]["status"] == "GDP"
    assert cert["result"]["tail"]["status"] == "certified"
    assert cert["result"]["head"]["profile_evaluations"] > 0
    assert "confirmed" in verify_certificate(cert)
    # forged: a smaller mu with a consistent digest
    forged = copy.deepcopy(cert)
    forged["result"]["enclosure"] = {"lo": "1.7", "hi": "1.70001"}
    forged["result"]["head"]["enclosure"] = {"lo": "1.7", "hi": "1.70001"}
    forged["result"]["head"]["mu_hi_exact"] = "1.70001"
    forged["digest"] = compute_digest(forged)
    with pytest.raises(CertificateRejected):
        verify_certificate(forged)
    # forged: upper end lowered below the truth (the cell re-check catches it)
    forged = copy.deepcopy(cert)
    lo = cert["result"]["head"]["enclosure"]["lo"]
    forged["result"]["head"]["mu_hi_exact"] = lo
    forged["result"]["head"]["enclosure"]["hi"] = lo
    forged["result"]["enclosure"]["hi"] = lo
    forged["digest"] = compute_digest(forged)
    with pytest.raises(CertificateRejected):
        verify_certificate(forged)
    # forged: icea claimed GDP
    code, icea = _cert(capsys, "gdp", "certify", "--mechanism", "icea-example", "--refined", "--eps-h", "5",
                       "--margin", "1e-3")
    assert code == 0 and icea["result"]["status"] == "not GDP"
    assert "confirmed" in verify_certificate(icea)
    forged = copy.deepcopy(icea)
    forged["result"]["status"] = "GDP"
    forged["result"]["verdict"] = "holds"
    forged["result"]["tail"]["status"] = "certified"
    forged["result"]["enclosure"] = forged["result"]["head"]["enclosure"]
    forged["digest"] = compute_digest(forged)
    with pytest.raises(CertificateRejected):
        verify_certificate(forged)


@pytest.mark.parametrize(
    "argv",
    [["--mechanism", "laplace", "--scale", "-1", "--eps-h", "1"],
     ["--mechanism", "pure", "--eps0", "1", "--eps-h", "-1"],
     ["--mechanism", "pure", "--eps0", "1", "--eps-h", "1", "--margin", "0"],
     ["--mechanism", "pure", "--eps0", "1", "--eps-h", "inf"],
     ["--mechanism", "expr", "--profile", "__import__('os')", "--eps-h", "1"],
     ["--mechanism", "nope", "--eps-h", "1"]],
)
def test_certify_cli_bad_input_exit_2(argv, capsys):
    assert main(["gdp", "certify", *argv]) == 2
    err = capsys.readouterr().err
    assert "error" in err and "Traceback" not in err


def test_expr_reaching_one_inside_the_head_is_not_gdp(capsys):
    # 1/(eps - 1) >= 1 on (1, 2]: G_f = +inf there
    assert main(["gdp", "certify", "--mechanism", "expr", "--profile", "min(0.5, 1/abs(eps-1))", "--eps-h", "5",
                 "--margin", "1e-3"]) in (0, 3)
    # reaches 1 on an interval around eps = 2 (the min keeps it a profile: without it the
    # expression exceeds 1, which no profile does, and is refused, see the next test)
    assert main(["gdp", "certify", "--mechanism", "expr", "--profile", "min(1, 0.5 + 0.6*exp(-(eps-2)**2))",
                 "--eps-h", "5", "--margin", "1e-3"]) == 0
    assert "not GDP" in capsys.readouterr().out


def test_expr_above_one_is_refused_where_used(capsys):
    # 0.5 + 0.6 e^{-(eps-2)^2} = 1.1 at eps = 2: not a privacy profile, refused where it is used
    assert main(["gdp", "certify", "--mechanism", "expr", "--profile", "0.5 + 0.6*exp(-(eps-2)**2)",
                 "--eps-h", "5", "--margin", "1e-3"]) == 2
    assert "outside [0, 1]" in capsys.readouterr().err


def test_expr_head_only_exit_3(capsys):
    code = main(["gdp", "certify", "--mechanism", "expr", "--profile", "0.5*exp(-eps**2)", "--eps-h", "3",
                 "--margin", "1e-3"])
    assert code == 3


def test_plot_without_matplotlib_exits_2(monkeypatch, capsys, tmp_path):
    import sys

    monkeypatch.setitem(sys.modules, "matplotlib", None)
    code = main(["gdp", "plot", "--mechanism", "pure", "--eps0", "1", "--eps-h", "1", "--margin", "1e-3",
                 "--out", str(tmp_path / "g.png")])
    assert code == 2
    assert "matplotlib" in capsys.readouterr().err


def test_plot_writes_png(tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "g.png"
    assert main(["gdp", "plot", "--mechanism", "pure", "--eps0", "1", "--eps-h", "2", "--margin", "1e-3",
                 "--points", "16", "--out", str(out)]) == 0
    assert out.stat().st_size > 1000


def test_thm51_check_holds_and_is_tight():
    from dpverify.gdp.thm51 import check_thm51

    for eps0 in ("0.5", "2"):
        v = check_thm51(eps0, "1e-5")
        assert v.holds, v.reason


def test_clip_and_rectify_certificate():
    # GDPT Thm 4.7: b = (y+ - y-)/eps_h, exact; its certificate is re-checked in rationals
    from dpverify.certificate import quantity_certificate
    from dpverify.gdp.tail import clip_and_rectify_scale
    from dpverify.verdict import Enclosure
    from dpverify.ball import ball

    b = clip_and_rectify_scale(Fraction(-1), Fraction(3), Fraction(128))
    assert b == Fraction(1, 32)
    with working_precision(64):
        enc = Enclosure(ball(b), ball(b), 15, 64)
    inputs = {"y_minus": "-1", "y_plus": "3", "eps_h": "128", "mu": "1.5"}
    cert = quantity_certificate(quantity="gdp.clip_rectify", source="GDPT Thm 4.7",
                                inputs=inputs, enclosure=enc, algorithm="exact")
    assert "confirmed" in verify_certificate(cert)
    forged = copy.deepcopy(cert)
    forged["result"]["enclosure"] = {"lo": "0.05", "hi": "0.05"}  # true b = 1/32
    forged["digest"] = compute_digest(forged)
    with pytest.raises(CertificateRejected):
        verify_certificate(forged)
    with pytest.raises(InvalidParameter):
        clip_and_rectify_scale(Fraction(1), Fraction(1), Fraction(1))
    with pytest.raises(InvalidParameter):
        clip_and_rectify_scale(Fraction(0), Fraction(1), Fraction(0))


def test_forged_bridge_is_rejected(capsys):
    code, cert = _cert(capsys, "gdp", "certify", "--mechanism", "laplace", "--scale", "0.5", "--eps-h", "1",
                       "--margin", "1e-4")
    assert code == 0 and cert["result"]["tail"]["bridge_to"] == "2"
    assert "confirmed" in verify_certificate(cert)
    forged = copy.deepcopy(cert)
    forged["result"]["tail"]["bridge_breakpoints"] = ["1", "2"]  # one coarse cell: f(1) > delta_mu(2)
    forged["digest"] = compute_digest(forged)
    # breakpoints are a hint (format 2 rule): the bridge is re-proved on verify's own cells,
    # so a bad hint cannot change the outcome of a true certificate ...
    assert "confirmed" in verify_certificate(forged)
    # ... and a false upper end is refused whatever the hint
    forged["result"]["enclosure"]["hi"] = forged["result"]["enclosure"]["lo"] = "1.7"
    forged["digest"] = compute_digest(forged)
    with pytest.raises(CertificateRejected):
        verify_certificate(forged)


def test_expr_certificate_verifies_or_its_margin_is_refused(capsys, tmp_path):
    # what the producer writes, verify accepts: an expression profile's head proof is re-done cell by
    # cell (first-order test: an expression is not known to be convex in e^eps), so the producer
    # refuses a --margin whose proof needs more cells than verify's cap allows (exit 2, naming
    # --margin), and what it writes verifies (exit 0)
    prof = "0.5*exp(-eps**2)"
    argv = ["gdp", "certify", "--mechanism", "expr", "--profile", prof, "--eps-h", "2"]
    code, cert = _cert(capsys, *argv, "--margin", "1e-6")
    assert code == 3 and cert["result"]["status"] == "head only"  # the tail of an expression is not proved
    path = tmp_path / "c.json"
    path.write_text(json.dumps(cert))
    assert main(["verify", str(path)]) == 0
    capsys.readouterr()
    # independent route: G_f at the recorded argmax by mpmath at 50 digits (the mu with
    # delta_mu(x) = f(x), GDPT eq. 2) lies in the enclosure, whose lower end is recorded to 17
    # digits (the re-check's interval evaluation of the expression must resolve them)
    with mpmath.workdps(50):
        x = mpf(Fraction(cert["result"]["head"]["argmax"]).numerator) / Fraction(cert["result"]["head"]["argmax"]).denominator
        fx = mpf("0.5") * mpmath.exp(-x**2)
        dmu = lambda m: mpmath.ncdf(-x / m + m / 2) - mpmath.exp(x) * mpmath.ncdf(-x / m - m / 2)
        g = mpmath.findroot(lambda m: dmu(m) - fx, mpf("1.44"))
        enc = cert["result"]["head"]["enclosure"]
        assert mpf(enc["lo"]) <= g <= mpf(enc["hi"])
    assert main([*argv, "--margin", "1e-7", "--json"]) == 2
    err = capsys.readouterr().err
    assert "--margin" in err and "verify" in err and "cells" in err


@pytest.mark.parametrize("name, opts, eh", [
    ("approx", {"eps0": "0.1", "delta0": "0.01"}, "3.86"),  # G_f increasing past eps0: the max at the end
    ("laplace", {"scale": "0.5"}, "3"),  # the max at 0, f = 0 past 2 (roots at the range end)
    ("expr", {"profile": "Phi(1 - eps) - 0.05"}, "2"),  # not known monotone: f over each whole cell
    ("rr", {"p": "3/4"}, "2"),
])
def test_naive_reports_what_isolating_every_root_from_scratch_reports(name, opts, eh):
    """GDPT App D Alg 2 written out as a plain loop (every root isolated from scratch, the
    running maxima of the pre-neighbour staircase) gives the same ends, argmax and counts as
    the naive head bound, which isolates from scratch only the cells that may hold a maximum."""
    from dpverify.gdp.staircase import _Core, grid_size

    margin = Fraction(1, 8)
    p = _p(name, **opts)
    h = head_bound(p, eh, margin, "naive")
    core, eh_ = _Core(p, margin), Fraction(eh)
    n = grid_size(eh_, margin)
    xs = [eh_ * i / n for i in range(n + 1)]
    lo, hi, best = arb(0), arb(0), Fraction(0)
    with working_precision(128):
        for a, b in zip(xs, xs[1:]):
            v = core.g_lower(a)
            if v > lo:
                lo, best = v, a
            u = core.cell_upper(a, b)
            if u > hi:
                hi = u
        v = core.g_lower(eh_)
        if v > lo:
            lo, best = v, eh_
    assert (h.enclosure.lo, h.enclosure.hi) == (lo, max(hi, lo)), name
    assert h.argmax == best and h.cells == n
    assert (h.root_isolations, h.profile_evaluations) == (core.root_isolations, core.profile_evaluations)
