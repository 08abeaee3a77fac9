"""The E-epoch balls-in-bins re-check first works in a coarser unit (2^-64 .. 2^-127, chosen from the
certificate, :func:`dpverify.recheck.bins._coarse_unit`) and redoes a point at 2^-128 when the coarse
bounds do not decide it (:func:`._epochs_route`).

* Coarse against fine: both enclose delta (every product rounds outward at either unit). The coarse
  ends are expected outside the fine ones (a coefficient rounded down to a multiple of 2^-64 is at
  most the same one rounded down to a multiple of 2^-128, up: at least, and the products are monotone
  in nonnegative coefficients; the tracked excess, put at +inf, only grows), and within the looseness
  count x 2^-u the unit is chosen by: both checked on the frozen two-epoch fixture.
* Both around an exact value: with T = 1 batch per epoch, E epochs are the Gaussian mechanism with
  mu = sqrt(E) / sigma, whose delta(eps) (GDPT eq. 2) is computed in mpmath at 30 digits.
* The fallback: a delta certificate (written by the CLI, its ends edited) whose recorded ends lie
  between the coarse and the fine bounds is confirmed (only the fine bounds decide it), one whose
  lower end lies inside the fine bounds is not.
"""

import json
from fractions import Fraction
from pathlib import Path

import mpmath
import pytest

from dpverify.cli import main
from dpverify.recheck import bins as RB
from dpverify.relation import Relation
from dpverify.sampling import balls as B
from dpverify.sampling import balls_epochs as BE

from ..certs import outcome, reseal

FIX = Path(__file__).parents[1] / "certificate" / "format2"
EPS = [Fraction("1.471"), Fraction(1, 2), Fraction(3)]


def _fixture():
    cert = json.loads((FIX / "bins-epsilon-epochs.json").read_text())
    r = RB._run(cert["inputs"])
    grids, loss = RB._epochs_hints(cert["result"], r["dirs"])
    return cert, r, grids, loss


def _count(r, grids, loss):
    """The looseness count of :func:`.bins._coarse_unit` (in units of the coarse unit)."""
    E, T = r["E"], r["T"]
    keep = max(g["keep"] for g in grids.values())
    window = max(loss[f"{d}_hi"] - loss[f"{d}_lo"] + 1 for d in r["dirs"])
    return E * (T + 2 * T.bit_length()) * keep + 2 * E.bit_length() * E * window


@pytest.fixture(scope="module")
def fine():
    _, r, grids, loss = _fixture()
    return r, grids, loss, RB._Epochs(r, grids, loss)


@pytest.mark.parametrize("unit", [64, 80])
def test_coarse_bounds_enclose_the_fine_ones(fine, unit):
    r, grids, loss, F = fine
    coarse = RB._Epochs(r, grids, loss, unit=unit)
    slack = Fraction(_count(r, grids, loss), 2**unit)
    for eps in EPS:
        (lo_c, hi_c), (lo_f, hi_f) = coarse.delta(eps), F.delta(eps)
        assert lo_f - slack <= lo_c <= lo_f, (eps, float(lo_f - lo_c))
        assert hi_f <= hi_c <= hi_f + slack, (eps, float(hi_c - hi_f))
    # the coarse unit is really coarser: the bounds are not the fine ones
    assert coarse.delta(EPS[0]) != F.delta(EPS[0])


def _gauss_delta(mu, eps):
    with mpmath.workdps(30):
        mu, e = mpmath.mpf(mu), mpmath.mpf(eps)
        return mpmath.ncdf(-e / mu + mu / 2) - mpmath.exp(e) * mpmath.ncdf(-e / mu - mu / 2)


@pytest.mark.parametrize("E,eps,rel", [(2, Fraction(1, 2), Relation.ADD_REMOVE), (3, Fraction(3, 2), Relation.REMOVE)])
def test_both_units_enclose_the_gaussian_mechanism(E, eps, rel):
    # T = 1 (below what a certificate may state; the route takes it): one batch per epoch
    br = B.BinsRun(Fraction(3, 2), 1, 1, E, rel)
    L = BE.laws(br, BE.choose_grids(br, 1 << 13), None, points=1 << 15)
    dirs = {"add-remove": ("remove", "add"), "remove": ("remove",)}[rel.value]
    r = {"sig": Fraction(3, 2), "T": 1, "dirs": dirs, "E": E}
    grids = {d: L.grids[d].to_json() for d in dirs}
    loss = L.loss.to_json()
    with mpmath.workdps(30):
        ref = _gauss_delta(mpmath.sqrt(E) / mpmath.mpf(1.5), mpmath.mpf(eps.numerator) / eps.denominator)
    got = {u: RB._Epochs(r, grids, loss, unit=u).delta(eps) for u in (64, 128)}
    for lo, hi in got.values():
        assert mpmath.mpf(lo.numerator) / lo.denominator <= ref <= mpmath.mpf(hi.numerator) / hi.denominator
    assert got[64][0] <= got[128][0] <= got[128][1] <= got[64][1]


def test_coarse_unit_is_chosen_from_the_certificate():
    _, r, grids, loss = _fixture()
    n = _count(r, grids, loss)
    assert RB._coarse_unit(r, grids, loss, Fraction(1, 2**20)) == 64  # 2^-20 is far above n 2^-64
    u = RB._coarse_unit(r, grids, loss, Fraction(1, 2**70))
    assert 64 < u < 128 and n * Fraction(1, 2**u) <= Fraction(1, 2**70)
    assert RB._coarse_unit(r, grids, loss, Fraction(1, 2**120)) == 128  # no coarse attempt
    assert RB._coarse_unit(r, grids, loss, Fraction(0)) == 128


def _delta_cert(tmp_path, lo: str, hi: str) -> dict:
    """The fixture's run (sigma 2, T = 4, two epochs) as a bins.delta certificate at eps 1.5, written by
    the CLI, with the given recorded ends."""
    path = tmp_path / "delta.json"
    if not path.exists():
        argv = ["audit", "dpsgd", "--sampling", "balls-in-bins", "--noise-multiplier", "2", "--dataset-size", "4",
                "--batch-size", "1", "--epochs", "2", "--eps", "1.5", "--certificate", str(path)]
        assert main(argv) == 0
    c = json.loads(path.read_text())
    c["result"]["enclosure"] = {"lo": lo, "hi": hi}
    return c


def _decimal_between(a: Fraction, b: Fraction) -> str:
    """A short decimal strictly between a and b."""
    for k in range(1, 80):
        x = Fraction(round((a + b) / 2 * 10**k), 10**k)
        if a < x < b:
            return _dec(x)
    raise AssertionError("no decimal between")


def _dec(x: Fraction) -> str:
    # x = n / 10^k exactly: written out in full
    k = 0
    while (x * 10**k).denominator != 1:
        k += 1
    n = int(x * 10**k)
    return f"{n}e-{k}"


def test_a_point_the_coarse_bounds_cannot_decide_is_redone_at_the_fine_unit(tmp_path, capsys):
    written = _delta_cert(tmp_path, "0", "1")
    r = RB._run(written["inputs"])
    grids, loss = RB._epochs_hints(written["result"], r["dirs"])
    eps = Fraction(3, 2)
    lo_f, hi_f = RB._Epochs(r, grids, loss).delta(eps)
    # recorded ends within 2^-100 outside the fine bounds: the unit the route tries first for them
    # (looseness 2^-16 of the lower end) is coarser than 2^-128 and its bounds do not reach them
    lo_rec = _decimal_between(lo_f - Fraction(1, 2**100), lo_f)
    hi_rec = _decimal_between(hi_f, hi_f + Fraction(1, 2**100))
    u = RB._coarse_unit(r, grids, loss, Fraction(lo_rec) / 2**16)
    assert u < 128
    lo_c, hi_c = RB._Epochs(r, grids, loss, unit=u).delta(eps)
    assert lo_c < Fraction(lo_rec) and Fraction(hi_rec) < hi_c
    # so only the fine bounds prove them: confirmed
    assert outcome(reseal(_delta_cert(tmp_path, lo_rec, hi_rec))) == 0
    # ends inside the fine bounds: not proved by either unit (a tighter claim than any bound here)
    lo_in = _decimal_between(lo_f, lo_f + (hi_f - lo_f) / 4)
    assert outcome(reseal(_delta_cert(tmp_path, lo_in, hi_rec))) != 0
