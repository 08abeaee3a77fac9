"""The PLD re-check just below a bounded composition's pure-DP eps (issue 24's leftover of issue 22).

Two Laplace steps of scales 20 and 2 (add-remove, sensitivity 1) have the pure-DP eps
1/20 + 1/2 = 0.55: delta(0.55) = 0 exactly. Just below it only the top of each step's law
reaches the query (the bounded-loss floors, :meth:`dpverify.recheck.pld.Support.floors`), and
the producer resolves the gap on grids of 2^-30 .. 2^-50. verify's grids stopped at 2^-24, where
the window of each step is below one cell, and a certificate 1e-13 below 0.55 answered exit 3.

The independent value: conditioned on the first step (AFA Lemma 37),
delta(eps) = int p_1(x) delta_2(eps - L_1(x)) dx, with the second step's divergence in closed
form (:func:`_laplace_delta`) and the integral by mpmath quadrature at 40 digits.
"""

from __future__ import annotations

import copy
import json
from fractions import Fraction as F

import mpmath
import pytest

from dpverify.cli import main
from dpverify.recheck import pld as P
from dpverify.recheck.core import arith
from dpverify.recheck.verify import RECHECKERS, _load_recheckers

from ..certs import outcome, reseal

LAP20_2 = {"neighboring": "add-remove", "event": {"type": "composed", "events": [
    {"type": "laplace", "noise_multiplier": "20"}, {"type": "laplace", "noise_multiplier": "2"}]}}


def _mp(x: F) -> mpmath.mpf:
    return mpmath.mpf(x.numerator) / x.denominator


def _laplace_delta(b: mpmath.mpf, t: mpmath.mpf) -> mpmath.mpf:
    """Hockey-stick divergence of (Lap(1, b), Lap(0, b)) at e^t: the loss is (|x| - |x-1|)/b in
    [-1/b, 1/b], so t >= 1/b gives 0 and t < -1/b gives 1 - e^t; in between p > e^t q iff
    x > x_t = (b t + 1)/2, where the two tails give 1 - e^((t - 1/b)/2)."""
    if t >= 1 / b:
        return mpmath.mpf(0)
    if t < -1 / b:
        return -mpmath.expm1(t)
    return -mpmath.expm1((t - 1 / b) / 2)


def _truth(eps: F) -> mpmath.mpf:
    b1, b2, e = mpmath.mpf(20), mpmath.mpf(2), _mp(eps)

    def integrand(x):
        return mpmath.exp(-abs(x - 1) / b1) / (2 * b1) * _laplace_delta(b2, e - (abs(x) - abs(x - 1)) / b1)

    # the kink where the second step's divergence starts, e - L_1(x) = 1/b2 with L_1 = (2x - 1)/b1 on
    # [0, 1]: at eps = 0.55 - 1e-13 it is 1 - 1e-12, and a quadrature over [0, 1] missed the sliver
    # past it (1.4e-17 of delta, below a re-check's lower end once its grid was fine enough, stop 50)
    xk = (b1 * (e - 1 / b2) + 1) / 2
    return mpmath.quad(integrand, [-mpmath.inf, 0] + ([xk] if 0 < xk < 1 else []) + [1, mpmath.inf])


#: the producer's certificates by their arguments: each is made once in this module (the 1e-13 one serves
#: five tests), every test takes a copy
_MADE: dict = {}


def _certificate(tmp_path, capsys, *args: str) -> dict:
    if args not in _MADE:
        f = tmp_path / "ev.json"
        f.write_text(json.dumps(LAP20_2))
        # the budget only stops the producer (about a second here); 60 s of wall time ran out under load,
        # where the next grid's time is estimated from the last one's
        code = main(["audit", "dpsgd", "--events", str(f), *args, "--time-budget", "600", "--json"])
        assert code == 0
        _MADE[args] = json.loads(capsys.readouterr().out)
    return copy.deepcopy(_MADE[args])


@pytest.mark.parametrize("gap", ["1e-13", "1e-9", "1e-6"])
def test_delta_just_below_the_pure_dp_eps_is_re_proved_around_the_truth(tmp_path, capsys, gap):
    """The independent enclosure holds the quadrature's value, is narrow (relative 1e-7: the
    floors bound each step's knots, so the grid may go past 2^-24), and the certificate verifies;
    before the fix the 1e-13 one answered exit 3 with an upper end of 0.76."""
    eps = F("0.55") - F(gap)
    cert = _certificate(tmp_path, capsys, "--eps", str(eps))
    with mpmath.workdps(40):
        _load_recheckers()
        re = RECHECKERS["events.delta"](cert["inputs"], cert["result"])
        truth = _truth(eps)
        assert truth > 0 and re.lo <= truth <= re.hi
        assert (re.hi - re.lo) / truth < mpmath.mpf(10) ** -7
    assert outcome(copy.deepcopy(cert)) == 0


@pytest.mark.parametrize("rel", ["1e-6", "1e-3"])
@pytest.mark.parametrize("sign", [1, -1])
def test_a_moved_enclosure_just_below_the_pure_dp_eps_is_refused(tmp_path, capsys, rel, sign):
    """The 1e-13 certificate with both ends moved by a relative 1e-6 or 1e-3 (up or down) and the
    digest recomputed: the moved enclosure excludes delta, and the fine grids that now re-prove
    the genuine one show it (exit 1), never an accept."""
    cert = _certificate(tmp_path, capsys, "--eps", str(F("0.55") - F("1e-13")))
    assert outcome(copy.deepcopy(cert)) == 0
    enc = cert["result"]["enclosure"]
    f = 1 + sign * F(rel)
    for k in ("lo", "hi"):
        enc[k] = f"{float(F(enc[k]) * f):.17g}"
    assert outcome(reseal(cert)) == 1


def test_a_flipped_claim_just_below_the_pure_dp_eps_is_refused(tmp_path, capsys):
    """(0.55 - 1e-13, 3e-14)-DP holds (delta = 2.5e-14 (1 - 5e-14) below 3e-14); recorded as
    'fails' (and the reason left as is) it is refused: the verdict is decided on the independent
    enclosure, which the fine grid now narrows to the recorded one."""
    cert = _certificate(tmp_path, capsys, "--delta", "3e-14", "--claimed-eps", str(F("0.55") - F("1e-13")))
    assert cert["result"]["verdict"] == "holds" and outcome(copy.deepcopy(cert)) == 0
    cert["result"]["verdict"] = "fails"
    assert outcome(reseal(cert)) in (1, 2)


@pytest.mark.parametrize("b", [F(2), F(1, 2), F(4)])
@pytest.mark.parametrize("direction", ["remove", "add"])
def test_laplace_tails_at_a_dyadic_support_end_are_exact(b, direction):
    """At q = 1 the loss support [-1/b, 1/b] has rational ends, compared exactly: at a knot on
    the end (1/2 for b = 2 lies on every grid) the tails are P(L > 1/b) = 0 exactly, and one
    knot below they enclose the mpmath value narrowly (they were [0, 1] there, which widened
    the connect-the-dots masses by 1/h)."""
    t = P.laplace_tails(b, F(1), direction)
    A = arith(200)
    for m in (8, 30):
        i = int(2**m / b)
        assert F(i, 2**m) == 1 / b
        assert t(A, A.dyadic(i, m)) == ((0, 0), (0, 0))
        (p0, p1), (q0, q1) = t(A, A.dyadic(i - 1, m))
        with mpmath.workprec(400):
            e = mpmath.mpf(i - 1) / 2**m
            bb = _mp(b)
            # remove: P = Lap(1, b), Q = Lap(0, b), L > e iff x > x_e = (b e + 1)/2 in [0, 1];
            # add: the mirror, L > e iff x < x_{-e}
            x = (bb * (e if direction == "remove" else -e) + 1) / 2
            s0, s1 = mpmath.exp(-x / bb) / 2, 1 - mpmath.exp((x - 1) / bb) / 2
            ref = (s1, s0) if direction == "remove" else (1 - s0, 1 - s1)
            for (lo, hi), r in zip(((p0, p1), (q0, q1)), ref):
                assert mpmath.mpf(lo) <= r <= mpmath.mpf(hi) and mpmath.mpf(hi) - mpmath.mpf(lo) < mpmath.mpf(2) ** -150


def test_a_grid_past_2_24_is_refused_where_no_floor_bounds_the_knots():
    """Past 2^-24 without a floor only a narrow loss is refined (at most _FINE_KNOTS points): a
    small-rate Gaussian (prv_accountant #17's sigma 4, q 0.00033, whose loss spans 6453 knots at
    2^-20 and would span 1.6M at 2^-28) is refused once its range is found, before its masses
    (exit 3 via the search, which keeps what coarser grids proved); the same step on a grid of
    2^-24 or coarser (2^-12 here) is discretised as before."""
    from dpverify.errors import CouldNotReprove

    tails = P.gauss_tails(F(4), F(33, 100000), "remove")
    with pytest.raises(CouldNotReprove, match="finer than 2\\^-24"):
        P._discretise(tails, 117, mpmath.mpf("1e-30"), 28)
    (i0, up, _), _ = P._discretise(tails, 117, mpmath.mpf("1e-30"), 12)
    assert len(up) > 10
