"""The directed-rounding second route for event certificates (recheck/events) on the
events it used to leave to "could not re-prove": mixtures of Gaussians, discrete
Laplace, discrete Gaussian, without-replacement under replace-one. Each T = 1 tail /
curve is an MPFR enclosure, checked to contain the arb pair's value (an independent
implementation) and brute force (enumeration over the integers, quadrature of the
densities at 40 digits), and to be narrow; genuine certificates are confirmed and
enclosures moved 1e-6 (relative) outside the second route's bracket are refused."""

import copy
from fractions import Fraction as F

import mpmath
import pytest
from flint import arb

from dpverify.ball import working_precision
from dpverify.recheck import events as R
from dpverify.recheck.core import arith, mpf_to_fraction, mpfr_to_mpf
from dpverify.recheck.verify import verify_certificate
from dpverify.certificate.writer import compute_digest
from dpverify.errors import CertificateRejected
from dpverify.events import api
from dpverify.events.pairs import MixtureGaussianPair, discrete_gaussian_pair, discrete_laplace_pair
from dpverify.certificate.events_cert import answer_certificate

MOG = {"type": "mixture_of_gaussians", "standard_deviation": "3/2", "sensitivities": ["0", "1", "5/2"],
       "sampling_probs": ["1/2", "1/4", "1/4"]}


def _in_ball(b: arb, x) -> bool:
    """Does the arb ball meet the enclosure x = (lo, hi) (both contain the truth)?"""
    lo_x, hi_x = x if isinstance(x, tuple) else (x, x)
    with mpmath.workdps(60):
        lo = mpmath.mpf(b.lower().str(60, radius=False))
        hi = mpmath.mpf(b.upper().str(60, radius=False))
        tol = mpmath.mpf(10) ** -35
        return lo - tol <= hi_x and lo_x <= hi + tol


A200 = arith(200)


def _iv_tails(tails, eps: str):
    """The interval tails at the exact point eps (a dyadic here), as mpmath pairs."""
    e = A200.q(F(eps))  # exact for a dyadic eps, else outward
    (p0, p1), (q0, q1) = tails(A200, e)
    with mpmath.workprec(400):
        return (mpfr_to_mpf(p0), mpfr_to_mpf(p1)), (mpfr_to_mpf(q0), mpfr_to_mpf(q1))


def _curve(tails, eps: str):
    """[lo, hi] of P(L > eps) - e^eps Q(L > eps) + P(L = +inf) from the interval tails."""
    (p0, p1), (q0, q1) = _iv_tails(tails, eps)
    with mpmath.workprec(400):
        e = mpmath.exp(mpmath.mpf(F(eps).numerator) / F(eps).denominator)
        inf = mpmath.mpf(tails.inf.numerator) / tails.inf.denominator
        return p0 - e * q1 + inf, p1 - e * q0 + inf


@pytest.mark.parametrize("direction", ["remove", "add"])
@pytest.mark.parametrize("eps", ["-1", "-0.69140625", "0", "0.5", "2.25"])
def test_mog_tails_agree_with_the_arb_pair(direction, eps):
    tails = R._mog(F(3, 2), [F(0), F(1), F(5, 2)], [F(1, 2), F(1, 4), F(1, 4)], direction)
    p, q = _iv_tails(tails, eps)
    pair = MixtureGaussianPair(F(3, 2), (F(0), F(1), F(5, 2)), (F(1, 2), F(1, 4), F(1, 4)), direction)
    with working_precision(200):
        bp, bq = pair.tails(arb(eps))
    assert tails.inf == 0 and _in_ball(bp, p) and _in_ball(bq, q)
    for lo, hi in (p, q):  # narrow: the proved root bracket costs a few bits, not digits
        assert hi - lo <= mpmath.mpf(10) ** -50


@pytest.mark.parametrize("eps", ["0", "0.75", "1.5"])
def test_mog_curve_against_quadrature(eps):
    # H_{e^eps}(mix || N(0, s^2)) = int (mix - e^eps base)_+ ; the integrand is
    # positive exactly right of the loss root (g increasing), found here by
    # mpmath.findroot on the densities themselves, not on the log-sum-exp
    with mpmath.workdps(40):
        s = mpmath.mpf(3) / 2
        mix = lambda x: (mpmath.npdf(x, 0, s) / 2 + mpmath.npdf(x, 1, s) / 4  # noqa: E731
                         + mpmath.npdf(x, mpmath.mpf(5) / 2, s) / 4)
        e = mpmath.exp(mpmath.mpf(eps))
        f = lambda x: mix(x) - e * mpmath.npdf(x, 0, s)  # noqa: E731
        a, b = mpmath.mpf(-20), mpmath.mpf(40)  # f < 0 at a, > 0 at b: plain bisection
        for _ in range(160):
            a, b = ((a + b) / 2, b) if f((a + b) / 2) < 0 else (a, (a + b) / 2)
        x0 = (a + b) / 2
        truth = mpmath.quad(f, [x0, x0 + 10, mpmath.inf])
        lo, hi = _curve(R._mog(F(3, 2), [F(0), F(1), F(5, 2)], [F(1, 2), F(1, 4), F(1, 4)], "remove"), eps)
        tol = mpmath.mpf(10) ** -25  # the quadrature's accuracy at 40 digits
        assert lo - tol <= truth <= hi + tol and hi - lo <= mpmath.mpf(10) ** -50


def _mog_truth(s, cs, ps, y):
    """At mpmath's working precision (the callers: 50 digits or more): the root x of log S(x) = y,
    S(x) = sum p_i e^{mu_i x - mu_i^2/2} (mu_i = c_i / s), by bisection on S itself (increasing, to
    2^-(prec + 11) of the root), and the remove tails
    sum p_i Phi(mu_i - x), Phi(-x) there."""
    mus = [mpmath.mpf(c.numerator) / c.denominator / (mpmath.mpf(s.numerator) / s.denominator) for c in cs]
    pm = [mpmath.mpf(p.numerator) / p.denominator for p in ps]
    S = lambda x: mpmath.fsum(p * mpmath.exp(mu * x - mu * mu / 2) for mu, p in zip(mus, pm))  # noqa: E731
    ey = mpmath.exp(y)
    a, b = mpmath.mpf(-200), mpmath.mpf(200)  # S(a) < e^y < S(b) for every y below
    for _ in range(max(260, mpmath.mp.prec + 20)):
        a, b = ((a + b) / 2, b) if S((a + b) / 2) < ey else (a, (a + b) / 2)
    x = (a + b) / 2
    return x, (mpmath.fsum(p * mpmath.ncdf(mu - x) for mu, p in zip(mus, pm)), mpmath.ncdf(-x))


MOG_ROUTES = [
    # mu_i = 0, 2/3, 4/3: the polynomial route in z = e^(2x/3), degree 2 (not dyadic)
    (F(3, 2), [F(0), F(1), F(2)], [F(3, 5), F(3, 10), F(1, 10)], 2),
    # mu_i = 0, 2/3, 5/3: z = e^(x/3), powers 0, 2, 5
    (F(3, 2), [F(0), F(1), F(5, 2)], [F(1, 2), F(1, 4), F(1, 4)], 5),
    # no component at 0 (p_0 = 0: every y has a root), mu_i = 1, 3: z = e^x, powers 1, 3
    (F(1), [F(1), F(3)], [F(1, 2), F(1, 2)], 3),
    # mu_i = 0, 1, 1.01: degree 101 > _MOG_MAX_DEGREE, so the root is sought in x (log-sum-exp Newton)
    (F(1), [F(0), F(1), F(101, 100)], [F(3, 5), F(3, 10), F(1, 10)], None),
]


@pytest.mark.parametrize("s, cs, ps, degree", MOG_ROUTES)
@pytest.mark.parametrize("prec", [128, 191, 300])
@pytest.mark.parametrize("eps", ["-0.1875", "-0.0078125", "0.001953125", "0.5", "3.25", "52.0703125"])
def test_mog_root_and_tails_contain_the_50_digit_truth(s, cs, ps, degree, prec, eps):
    # the root proposal (Newton at doubling precisions) and the one-sided bracket ends
    # (_mog_sum_end, or _mog_poly_end in z): every tail still contains mpmath's 50-digit value,
    # the mixture's mu_i are not dyadic, and the loss at eps near log p_0 puts the
    # root far left (x < 0: mu_i's other end is taken)
    got_degrees = R._mog_degrees(sorted((c / s, p) for c, p in zip(cs, ps)))
    assert (got_degrees and max(got_degrees[1])) == degree  # the route this case is meant to test
    A = arith(prec)
    with mpmath.workdps(50):
        x, (tp, tq) = _mog_truth(s, cs, ps, mpmath.mpf(F(eps).numerator) / F(eps).denominator)
        tol = mpmath.mpf(10) ** -45
        for direction in ("remove", "add"):
            e = A.q(F(eps) if direction == "remove" else -F(eps))
            (p0, p1), (q0, q1) = R._mog(s, cs, ps, direction)(A, e)
            got = [(mpfr_to_mpf(p0), mpfr_to_mpf(p1)), (mpfr_to_mpf(q0), mpfr_to_mpf(q1))]
            # add: P = N(0,1), Q = the mixture, L > -y iff x < x_y: P-tail Phi(x), Q-tail 1 - sum p_i Phi(mu_i - x)
            want = [tp, tq] if direction == "remove" else [1 - tq, 1 - tp]
            for (lo, hi), w in zip(got, want):
                assert lo - tol <= w <= hi + tol
                assert hi - lo <= mpmath.mpf(2) ** -(prec - 40)  # narrow: the bracket costs bits, not digits


@pytest.mark.parametrize("s, cs, ps, degree", MOG_ROUTES[:2])
@pytest.mark.parametrize("y", ["-0.5", "0.5", "3.25", "52.0703125"])
def test_mog_poly_bracket_proves_the_root_and_refuses_one_moved_by_1e_20(s, cs, ps, degree, y):
    # the bracket test of the route in z against the root found by mpmath's bisection on S at 50
    # digits: a bracket of relative half-width 2^-116 around z* = e^(g x*) is proved, the same
    # bracket around z* (1 +- 1e-20) is refused (it excludes the root), whatever the proposal
    A = arith(128)
    mus = sorted((c / s, p) for c, p in zip(cs, ps))
    g, ns = R._mog_degrees(mus)
    a = [A.mul(A.q(p), A.exp(A.neg(A.q(mu * mu / 2)))) for mu, p in mus]
    a_dn, a_up = [x[0] for x in a], [x[1] for x in a]
    yq = A.q(F(y))
    c = A.exp(yq)
    with mpmath.workdps(50):
        x, _ = _mog_truth(s, cs, ps, mpmath.mpf(F(y).numerator) / F(y).denominator)
        z = mpmath.exp(mpmath.mpf(g.numerator) / g.denominator * x)
        d = mpmath.mpf(2) ** -116

        def bracket(centre):
            lo, hi = A.q(mpf_to_fraction(centre * (1 - d))), A.q(mpf_to_fraction(centre * (1 + d)))
            return R._mog_poly_brackets(A, a_dn, a_up, ns, lo[1], hi[0], c)

        assert bracket(z)
        for moved in (z * (1 + mpmath.mpf("1e-20")), z * (1 - mpmath.mpf("1e-20"))):
            assert not bracket(moved)


@pytest.mark.parametrize("s, cs, ps", [
    (F(1), [F(0), F(1)], [F(99, 100), F(1, 100)]),  # dp_accounting's baseline: the Poisson Gaussian
    (F(3, 2), [F(1), F(0), F(1), F(0)], [F(1, 8), F(1, 2), F(1, 8), F(1, 4)]),  # repeated mus merge
    (F(7, 5), [F(2)], [F(1)]),  # one component: the shifted Gaussian (rate 1)
])
@pytest.mark.parametrize("eps", ["-0.1875", "0.001953125", "0.5", "3.25", "19.0625"])
def test_mog_with_one_positive_mu_is_the_gaussian_pair_and_contains_the_truth(s, cs, ps, eps):
    # the mixture is the Poisson Gaussian pair law for law, so its tails come from gauss_tails
    # (closed-form root); they must still contain the mixture's own 50-digit tails, found by
    # bisection on S = sum p_i e^{mu_i x - mu_i^2/2} (no Gaussian formula involved), and the
    # comparison is sharp enough that a weight off by 1e-20 relative is caught
    A = arith(200)
    with mpmath.workdps(50):
        x, (tp, tq) = _mog_truth(s, cs, ps, mpmath.mpf(F(eps).numerator) / F(eps).denominator)
        tol = mpmath.mpf(10) ** -45
        for direction in ("remove", "add"):
            tails = R._mog(s, cs, ps, direction)
            assert (tails.many is not None) == (ps != [F(1)])  # the Gaussian pair's route (blocks where q < 1)
            e = A.q(F(eps) if direction == "remove" else -F(eps))
            want = [tp, tq] if direction == "remove" else [1 - tq, 1 - tp]
            got = [(mpfr_to_mpf(a), mpfr_to_mpf(b)) for a, b in tails(A, e)]
            for (lo, hi), w in zip(got, want):
                assert lo - tol <= w <= hi + tol and hi - lo <= mpmath.mpf(2) ** -150
            if len(cs) > 1 and all(mpmath.mpf(10) ** -10 < w < 1 - tol for w in want):  # a tail that can move
                mu = max(cs) / s
                q = sum((p for c, p in zip(cs, ps) if c != 0), F(0))
                off = R.gauss_tails(1 / mu, q * (1 + F(1, 10**20)), direction)(A, e)
                assert not all(mpfr_to_mpf(a) - tol <= w <= mpfr_to_mpf(b) + tol for (a, b), w in zip(off, want))


@pytest.mark.parametrize("x", ["-7.25", "-0.3", "0", "1.1", "9.5"])
def test_mog_sum_ends_are_the_interval_sums_ends(x):
    # the one-sided ends are the interval evaluation's ends bit for bit, and contain S(x) at 50 digits
    A = arith(160)
    comps = [(F(0), F(1, 2)), (F(2, 3), F(1, 3)), (F(5, 3), F(1, 6))]
    iv = [(A.q(mu), A.q(mu * mu / 2), A.q(p)) for mu, p in comps]
    xp = A.q(F(x))[0]
    X = (xp, xp)
    both = A.fsum([A.mul(P, A.exp(A.sub(A.mul(M, X), H))) for M, H, P in iv])
    lo, hi = R._mog_sum_end(A, iv, xp, False), R._mog_sum_end(A, iv, xp, True)
    assert (lo, hi) == both and lo < hi
    with mpmath.workdps(50):
        xm = mpfr_to_mpf(xp)
        truth = mpmath.fsum(mpmath.mpf(p.numerator) / p.denominator
                            * mpmath.exp(mpmath.mpf(mu.numerator) / mu.denominator * xm
                                         - mpmath.mpf((mu * mu).numerator) / (2 * (mu * mu).denominator))
                            for mu, p in comps)
        assert mpfr_to_mpf(lo) <= truth <= mpfr_to_mpf(hi)


def _enumerate(pmf_p, pmf_q, eps, lo, hi):
    """H_{e^eps}(P || Q) by brute force over the integers lo..hi."""
    e = mpmath.exp(eps)
    return mpmath.fsum(max(mpmath.mpf(0), pmf_p(x) - e * pmf_q(x)) for x in range(lo, hi + 1))


@pytest.mark.parametrize("eps", ["0", "0.3", "1"])
def test_discrete_laplace_curve_by_enumeration_and_arb(eps):
    a, D = F(1, 2), 3
    with mpmath.workdps(40):
        am = mpmath.mpf(1) / 2
        Z = mpmath.fsum(mpmath.exp(-am * abs(x)) for x in range(-400, 401))
        pmf = lambda x: mpmath.exp(-am * abs(x)) / Z  # noqa: E731
        truth = _enumerate(pmf, lambda x: pmf(x - D), mpmath.mpf(eps), -400, 400)
        mine = _curve(R._dlap(a, D), eps)
        tol = mpmath.mpf(10) ** -30  # the enumeration's truncation and 40 digits
        assert mine[0] - tol <= truth <= mine[1] + tol and mine[1] - mine[0] <= mpmath.mpf(10) ** -50
    with working_precision(200):
        assert _in_ball(discrete_laplace_pair(a, D).delta(arb(eps)), mine)


@pytest.mark.parametrize("eps", ["0", "0.125", "0.7"])
def test_discrete_gaussian_curve_by_enumeration_and_arb(eps):
    s, D = F(5, 2), 2
    with mpmath.workdps(40):
        s2 = mpmath.mpf(25) / 4
        Z = mpmath.fsum(mpmath.exp(-mpmath.mpf(x * x) / (2 * s2)) for x in range(-300, 301))
        pmf = lambda x: mpmath.exp(-mpmath.mpf(x * x) / (2 * s2)) / Z  # noqa: E731
        truth = _enumerate(pmf, lambda x: pmf(x - D), mpmath.mpf(eps), -300, 300)
        mine = _curve(R._dgauss(s, D), eps)
        tol = mpmath.mpf(10) ** -30  # the enumeration's truncation and 40 digits
        assert mine[0] - tol <= truth <= mine[1] + tol and mine[1] - mine[0] <= mpmath.mpf(10) ** -50
    with working_precision(200):
        assert _in_ball(discrete_gaussian_pair(s, D).delta(arb(eps)), mine)


def _cert(doc, **query):
    ans = (api.epsilon if "delta" in query else api.delta)(doc, *query.values(), digits=4)
    return answer_certificate(api.as_event(doc)[0], ans, **query, digits=4)


def _moved(cert, lo, hi):
    bad = copy.deepcopy(cert)
    bad["result"]["enclosure"] = {"lo": mpmath.nstr(lo, 25), "hi": mpmath.nstr(hi, 25)}
    bad["digest"] = compute_digest(bad)
    return bad


def _second_route(cert, kind, target):
    with mpmath.workdps(40):
        hint = mpmath.mpf(cert["result"]["enclosure"]["hi"])
        t = mpmath.mpf(target)
        return R._bounds(cert["inputs"], kind, t, t if kind == "eps" else min(hint, 1), hint if kind == "eps" else t)


@pytest.mark.parametrize("doc, query", [
    ({"neighboring": "remove", "event": {"type": "self_composed", "count": 3, "event": MOG}}, {"delta": "1e-5"}),
    ({"neighboring": "add", "event": MOG}, {"eps": "0.5"}),
    # one positive mu (as dp_accounting's baseline mixture): re-checked as the Poisson Gaussian pair
    ({"neighboring": "add-remove", "event": {"type": "self_composed", "count": 3, "event": {
        "type": "mixture_of_gaussians", "standard_deviation": "3/2", "sensitivities": ["0", "1", "1"],
        "sampling_probs": ["1/2", "1/4", "1/4"]}}}, {"delta": "1e-5"}),
    ({"neighboring": "add-remove", "events": [{"type": "discrete_laplace", "noise_parameter": "0.3", "sensitivity": 2},
                                              {"type": "discrete_gaussian", "sigma": "2", "sensitivity": 1}]},
     {"delta": "1e-6"}),
    ({"neighboring": "replace-one", "event": {"type": "self_composed", "count": 4, "event":
        {"type": "discrete_gaussian", "sigma": "4", "sensitivity": 1}}}, {"eps": "1"}),
    ({"neighboring": "replace-one", "event": {"type": "self_composed", "count": 3, "event":
        {"type": "sampled_without_replacement", "source_dataset_size": 10, "sample_size": 3,
         "event": {"type": "gaussian", "noise_multiplier": "1"}}}}, {"delta": "1e-5"}),
])
def test_genuine_certificates_confirm_and_moved_enclosures_are_refused(doc, query):
    cert = _cert(doc, **query)
    assert "confirmed" in verify_certificate(cert)
    kind, target = ("eps", query["delta"]) if "delta" in query else ("delta", query["eps"])
    lo, hi = _second_route(cert, kind, target)
    with mpmath.workdps(40):
        rec_lo, rec_hi = (mpmath.mpf(cert["result"]["enclosure"][k]) for k in ("lo", "hi"))
        assert lo <= rec_hi and rec_lo <= hi  # the two routes overlap (the truth is in both)
        w = mpmath.mpf("1e-6")
        forged = [_moved(cert, hi * (1 + w), hi * (1 + 2 * w))]
        if "why_upper_only" in cert["result"] and not cert["result"].get("upper_bound_only"):
            # WOR under replace-one: the lower end is the realised dataset pair's, the upper
            # the Cor 32 pair's: a bracket, not a narrow enclosure
            assert 0 < rec_lo <= lo
        elif cert["result"].get("upper_bound_only"):
            # WOR under replace-one: the Cor 32 pair bounds the mechanism from above only,
            # so both routes report 0 as the lower end
            assert lo == 0 and rec_lo == 0
        else:
            assert hi - lo <= mpmath.mpf("1e-3") * hi  # and the second route is not vacuous
            forged.append(_moved(cert, lo * (1 - 2 * w), lo * (1 - w)))
    for bad in forged:
        with pytest.raises(CertificateRejected):
            verify_certificate(bad)


def test_fixed_batches_under_replace_one_two_sided_certificate_verifies(tmp_path):
    """The lower end of fixed batches under replace-one is a realised dataset pair; verify
    re-proves it on its own tails (a merge once left it calling removed helpers, so every such
    certificate answered "could not re-prove")."""
    import json

    from dpverify.cli import main
    from dpverify.recheck.verify import verify_certificate

    events = tmp_path / "wor.json"
    events.write_text(json.dumps({"neighboring": "replace-one", "event": {
        "type": "self_composed", "count": 20, "event": {
            "type": "sampled_without_replacement", "source_dataset_size": 1000, "sample_size": 10,
            "event": {"type": "gaussian", "noise_multiplier": "1"}}}}))
    out = tmp_path / "c.json"
    assert main(["audit", "dpsgd", "--events", str(events), "--delta", "1e-5", "--digits", "2",
                 "--certificate", str(out)]) == 0
    cert = json.loads(out.read_text())
    assert float(cert["result"]["enclosure"]["lo"]) > 0  # two-sided: no [0, hi] answer
    assert "confirmed" in verify_certificate(cert)


def _brute_tails(P, Q, losses, eps: F):
    """P(L > eps), Q(L > eps) of a finite pair by listing its atoms (mpmath, 300 bits); the
    losses are given exactly where they are rational (None: compared as p > e^eps r)."""
    with mpmath.workprec(300):
        e = mpmath.exp(mpmath.mpf(eps.numerator) / eps.denominator)
        sp = sq = mpmath.mpf(0)
        for p, r, L in zip(P, Q, losses):
            if r == 0 or p == 0:
                continue
            if (L > eps) if L is not None else (p > e * r):
                sp, sq = sp + p, sq + r
        return sp, sq


@pytest.mark.parametrize("q", [F(1), F(1, 10)])
@pytest.mark.parametrize("direction", ["remove", "add"])
@pytest.mark.parametrize("eps", [F(-1), F(-1, 3), F(0), F(1, 5), F(1), F(9, 8)])
def test_epsilon_delta_tails_enclose_the_listed_pair(q, direction, eps):
    """The (eps0, delta0) pair (LT Thm 4.5), Poisson-sampled (AFA Thm 11 (1)), against its
    four atoms listed in mpmath at 300 bits; eps = eps0 = 1 is a tie that must not count."""
    e0, d0 = F(1), F(1, 1000)
    with mpmath.workprec(300):
        ex = mpmath.exp(mpmath.mpf(1))
        P = [mpmath.mpf(d0.numerator) / d0.denominator, (1 - mpmath.mpf(1) / 1000) * ex / (1 + ex),
             (1 - mpmath.mpf(1) / 1000) / (1 + ex), mpmath.mpf(0)]
        Q = list(reversed(P))
        qm = mpmath.mpf(q.numerator) / q.denominator
        losses = [None, e0, -e0, None] if q == 1 else [None] * 4
        if direction == "remove":
            P = [(1 - qm) * r + qm * p for p, r in zip(P, Q)]
        elif q != 1:
            Q = [(1 - qm) * p + qm * r for p, r in zip(P, Q)]
        sp, sq = _brute_tails(P, Q, losses, eps)
        inf = sum(p for p, r in zip(P, Q) if r == 0)
    tails = R._eps_delta(e0, d0, q, direction)
    (p0, p1), (q0, q1) = _iv_tails(tails, str(eps))
    with mpmath.workprec(300):
        tol = mpmath.mpf(2) ** -280  # the listing's own rounding at 300 bits
        assert p0 - tol <= sp <= p1 + tol and q0 - tol <= sq <= q1 + tol
        assert p1 - p0 <= mpmath.mpf(2) ** -150 and q1 - q0 <= mpmath.mpf(2) ** -150
        assert abs(mpmath.mpf(tails.inf.numerator) / tails.inf.denominator - inf) <= mpmath.mpf(2) ** -280


# --------------------------------------------------------------------------- bounded losses

# three Poisson-subsampled Laplace steps (q = 0.2, b = 1/2): each loss is at most
# lmax = log(1 - q + q e^(1/b)) under P, so the composed loss is at most 3 lmax and
# delta(eps) = E_P[(1 - e^(eps - L))_+] is exactly 0 from 3 lmax on
LAP3 = {"neighboring": "add-remove", "event": {"type": "self_composed", "count": 3, "event": {
    "type": "poisson_sampled", "sampling_probability": "0.2", "event": {"type": "laplace", "noise_multiplier": "1/2"}}}}


def _support_end_mpmath() -> mpmath.mpf:
    with mpmath.workdps(50):
        q = mpmath.mpf("0.2")
        return 3 * mpmath.log(1 - q + q * mpmath.exp(2))  # 2.46964497...


def test_laplace_loss_bound_is_proved_just_above_the_true_supremum():
    from dpverify.recheck.events import _flatten, _Tree
    from dpverify.recheck.pld import loss_sup as _loss_sup

    tree = _Tree()
    _flatten(LAP3["event"], 1, "add-remove", tree)
    (make, times), = tree.blocks
    s = _loss_sup(make, "remove")
    with mpmath.workdps(50):
        lmax = _support_end_mpmath() / 3
        assert lmax <= mpmath.mpf(s.numerator) / s.denominator <= lmax + mpmath.mpf(2) ** -38
    gauss = {"type": "gaussian", "noise_multiplier": "1"}
    tree = _Tree()
    _flatten(gauss, 1, "add-remove", tree)
    assert _loss_sup(tree.blocks[0][0], "remove") is None  # the Gaussian's loss is unbounded


@pytest.mark.parametrize("eps", ["2.46965", "2.4697", "3"])
def test_delta_zero_past_the_support_end_is_confirmed(eps):
    """A genuine certificate of delta = 0 exactly (eps above 3 lmax) used to answer exit 3:
    no grid's top knot reaches the end. The re-check now proves the support bound."""
    assert mpmath.mpf(eps) > _support_end_mpmath()
    cert = _cert(LAP3, eps=eps)
    assert cert["result"]["enclosure"] == {"lo": "0", "hi": "0"}
    assert "confirmed (independent enclosure [0.0, 0.0])" in verify_certificate(cert)


def test_forged_delta_zero_below_the_support_end_is_refused():
    eps = "2.4696"  # below 3 lmax = 2.469645: delta(eps) > 0
    assert mpmath.mpf(eps) < _support_end_mpmath()
    bad = copy.deepcopy(_cert(LAP3, eps=eps))
    bad["result"]["enclosure"] = {"lo": "0", "hi": "0"}
    bad["digest"] = compute_digest(bad)
    with pytest.raises(CertificateRejected):
        verify_certificate(bad, budget_seconds=300)


def _lap3_delta_mpmath(eps: str) -> mpmath.mpf:
    """delta(eps) of LAP3 (remove direction; the add direction's loss ends at 3 log(1/(1 - q + q
    e^-2)) = 0.59, far below) within 1e-30 absolute, by quadrature near the end. One step under
    P = (1-q) Lap(0, b) + q Lap(1, b), Q = Lap(0, b), b = 1/2: L(x) = log(1 - q + q e^((|x| - |x-1|)/b)),
    an atom at z = log(1 - q + q e^2) of mass p = P(x >= 1) = (1-q) e^-2 / 2 + q / 2, and for x in
    (0, 1) L(x) = log(1 - q + q e^((2x-1)/b)) with the mixture density of x. delta(eps) =
    E[(1 - e^(eps - L1 - L2 - L3))_+] (AFA Lemma 37) splits by the number k of steps at the atom:
    k = 3 in closed form, k = 2 and k = 1 by (nested) quadrature over the x above the inverse of
    L; k = 0 needs all three continuous losses within g = 3z - eps of z: at most (dens g)^3 g,
    below 1e-30 for g < 1e-3."""
    with mpmath.workdps(40):
        q, b, E = mpmath.mpf("0.2"), mpmath.mpf("0.5"), mpmath.mpf(eps)
        z = mpmath.log(1 - q + q * mpmath.e ** 2)
        p = (1 - q) * mpmath.exp(-2) / 2 + q / 2

        def L(x):
            return mpmath.log(1 - q + q * mpmath.exp((2 * x - 1) / b))

        def dens(x):
            return (1 - q) * mpmath.exp(-x / b) / (2 * b) + q * mpmath.exp(-(1 - x) / b) / (2 * b)

        def inv(v):  # the x in (0, 1) with L(x) = v
            return (b * mpmath.log((mpmath.exp(v) - 1 + q) / q) + 1) / 2

        def inner(x1):
            lo = inv(E - z - L(x1))
            return mpmath.quad(lambda x2: (1 - mpmath.exp(E - z - L(x1) - L(x2))) * dens(x2), [lo, 1]) if lo < 1 else 0

        a = inv(E - 2 * z)
        k3 = p**3 * (1 - mpmath.exp(E - 3 * z))
        k2 = 3 * p**2 * mpmath.quad(lambda x: (1 - mpmath.exp(E - 2 * z - L(x))) * dens(x), [a, 1])
        k1 = 3 * p * mpmath.quad(lambda x1: inner(x1) * dens(x1), [a, 1])
        return k3 + k2 + k1


@pytest.mark.parametrize("eps", ["2.469", "2.4696"])
def test_delta_just_below_the_support_end_verifies_and_a_moved_one_is_refused(eps, tmp_path, capsys):
    """Three Poisson Laplace steps at eps 4.5e-5 below the composed loss's end: the producer's
    certificate took verify 74 s of CPU (the atom at the top of each step's loss, spread over a
    cell per step, asked for grids of a million knots). Only the top g = end - eps of each step's
    law can reach delta(eps), so the re-check's knots start there (a window of g, not the whole
    range): verify accepts it, and an enclosure moved off the truth by relative 1e-6 is refused."""
    import json

    from dpverify.cli import main

    doc = tmp_path / "lap3.json"
    doc.write_text(json.dumps(LAP3))
    assert main(["audit", "dpsgd", "--events", str(doc), "--eps", eps, "--json"]) == 0
    cert = json.loads(capsys.readouterr().out)
    truth = _lap3_delta_mpmath(eps)
    enc = cert["result"]["enclosure"]
    assert mpmath.mpf(enc["lo"]) <= truth <= mpmath.mpf(enc["hi"])
    path = tmp_path / "c.json"
    path.write_text(json.dumps(cert))
    assert main(["verify", str(path)]) == 0
    capsys.readouterr()
    for factor in (1 + mpmath.mpf(10) ** -6, 1 - mpmath.mpf(10) ** -6):  # off the truth, as wide as recorded
        lo = truth * factor if factor > 1 else truth * factor - (mpmath.mpf(enc["hi"]) - mpmath.mpf(enc["lo"]))
        hi = lo + (mpmath.mpf(enc["hi"]) - mpmath.mpf(enc["lo"])) if factor > 1 else truth * factor
        path.write_text(json.dumps(_moved(cert, lo, hi)))
        assert main(["verify", str(path)]) == 1, factor
        assert "REFUSED" in capsys.readouterr().err


# a Poisson Gaussian under add: each loss is below -log(1 - q) (never attained), and an
# (eps0, delta0) step sampled under add has a finite loss even at its +inf atom (Q' = (1-q) P > 0
# there): -log(1 - q) again. So 100 + 10 such steps have composed loss < 110 (-log 0.99) = 1.1055
ADD_TREE = {"neighboring": "add", "event": {"type": "composed", "events": [
    {"type": "self_composed", "count": 100, "event": {
        "type": "poisson_sampled", "sampling_probability": "0.01", "event": {"type": "gaussian", "noise_multiplier": "1.1"}}},
    {"type": "self_composed", "count": 10, "event": {
        "type": "poisson_sampled", "sampling_probability": "0.01",
        "event": {"type": "epsilon_delta", "epsilon": "1", "delta": "1e-6"}}}]}}


def test_event_tree_past_its_loss_bound_is_zero_and_verifies():
    with mpmath.workdps(30):
        assert mpmath.mpf("1.2") > 110 * -mpmath.log(mpmath.mpf("0.99"))
    cert = _cert(ADD_TREE, eps="1.2")
    assert cert["result"]["enclosure"] == {"lo": "0", "hi": "0"} and "grid" not in cert["result"]
    assert "confirmed (independent enclosure [0.0, 0.0])" in verify_certificate(cert)
    bad = copy.deepcopy(cert)
    bad["inputs"]["eps"] = "1.1"  # below the bound: delta > 0 (the product-event bound proves it)
    bad["result"]["quantity"] = "delta(eps=1.1)"
    bad["digest"] = compute_digest(bad)
    with pytest.raises(CertificateRejected):
        verify_certificate(bad, budget_seconds=120)
