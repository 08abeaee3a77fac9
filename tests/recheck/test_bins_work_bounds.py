"""Balls-in-bins certificates whose inputs were edited (digest recomputed): the re-check's work is
bounded before it starts.

Each forgery starts from a genuine frozen certificate (accepted first), edits what a forger
would (batches per epoch, epochs, sigma, delta, eps, the recorded grids and windows), reseals
the digest, and must be refused: exit 2 where the inputs and grids imply more product work
than the producer's cap (``BINS_MAX_WORK``, ``BINS_MAX_COMPOSED``: the producer writes no
certificate beyond them), exit 3 where the recorded grid cannot reach the run's inputs, 1 or
3 otherwise. Where the refusal must come before any polynomial product, the product routine
is replaced by one that fails the test if called (the proof that no work was done is then the
absence of that call, not a time). The work count itself is checked against a brute-force
count of the products that :func:`dpverify.recheck.bins._ppower` really makes.
"""

import copy
from fractions import Fraction
import json
from pathlib import Path

import pytest

from dpverify.certificate.format import BINS_MAX_COMPOSED, BINS_MAX_WORK
from dpverify.recheck import bins as RB

from ..certs import outcome, reseal, reword

FIX = Path(__file__).parents[1] / "certificate" / "format2"


def _load(name: str) -> dict:
    return json.loads((FIX / f"{name}.json").read_text())


def _forge(name: str, **edits) -> dict:
    """The frozen certificate ``name`` with ``edits`` (dotted path -> value) applied, resealed."""
    cert = copy.deepcopy(_load(name))
    for path, value in edits.items():
        *head, last = path.split("__")
        obj = cert
        for k in head:
            obj = obj[k]
        obj[last] = value
    return reseal(reword(cert))


@pytest.fixture
def no_products(monkeypatch):
    """Fail the test if the re-check makes any polynomial product."""
    def boom(*a, **k):
        raise AssertionError("a polynomial product was made before the work bound answered")
    monkeypatch.setattr(RB, "_pmul", boom)
    monkeypatch.setattr(RB, "_ppower", boom)


@pytest.mark.parametrize("name", ["bins-epsilon", "bins-delta", "bins-epsilon-epochs"])
def test_genuine_certificates_accepted(name):
    assert outcome(_load(name), budget=1800) == 0


def test_batches_edited_without_the_grid_answer_3_before_products(no_products):
    # T = 6 -> 100000 (the grid of T = 6 keeps degrees up to about 6 e^eps / h): the upper hinge at the
    # recorded eps needs about 10^5 e^2.2 / h degrees, beyond keep; decided on one enclosure of x = c T / h
    assert outcome(_forge("bins-epsilon", inputs__dataset_size=10_000_000)) == 3
    assert outcome(_forge("bins-delta", inputs__dataset_size=10_000_000)) == 3


def test_eps_edited_beyond_the_grid_is_refused_before_products(no_products):
    # refused by the statement check (it names eps = 2) or, past it, by the grid's reach
    assert outcome(_forge("bins-delta", inputs__eps="50")) in (1, 3)


def test_batches_and_grid_edited_together_answer_2_before_products(no_products):
    # a grid that would reach T = 100000 keeps 2^21 degrees: about 2 x 34 products of 2^21 coefficients
    # per direction, beyond the producer's work cap
    g = {"g": 0, "fine": 1 << 14, "per": 256, "top": 1 << 21, "keep": 1 << 21}
    cert = _forge("bins-epsilon", inputs__dataset_size=10_000_000, result__bins_grid=g)
    assert RB.work(100_000, 1, {"remove": g, "add": g}, {}) > BINS_MAX_WORK
    assert outcome(cert) == 2


def test_epochs_edited_answer_2_before_products(no_products):
    # E = 2 -> 10000 on the recorded loss windows: E x window beyond the composed-points cap
    assert outcome(_forge("bins-epsilon-epochs", inputs__epochs="10000")) == 2


def test_window_beyond_the_composed_cap_answers_2_before_products(no_products):
    half = BINS_MAX_COMPOSED // 4 + 1  # E = 2: 2 x (2 half + 1) > the cap
    cert = _forge("bins-epsilon-epochs", result__bins_epochs__loss__remove_lo=-half,
                  result__bins_epochs__loss__remove_hi=half)
    assert outcome(cert) == 2


def test_epochs_grid_edited_to_the_degree_cap_answers_2_before_products(no_products):
    g = {"g": 0, "fine": 1 << 14, "per": 256, "top": 1 << 21, "keep": 1 << 21}
    cert = _load("bins-epsilon-epochs")
    grids = {d: g for d in cert["result"]["bins_epochs"]["grids"]}
    assert outcome(_forge("bins-epsilon-epochs", inputs__dataset_size=240, result__bins_epochs__grids=grids)) == 2


@pytest.mark.parametrize("edits", [
    {"inputs__noise_multiplier": "0.001"},  # Y's cells at the grid of sigma = 1.1: nearly all mass in the tail
    {"inputs__noise_multiplier": "1000"},   # nearly all mass in one cell at 1
    {"inputs__delta": "1e-300"},            # far below what the recorded hi proves
    {"inputs__delta": "0.999999"},          # far above: the recorded lo is not re-proved
], ids=["sigma-tiny", "sigma-huge", "delta-tiny", "delta-near-1"])
def test_one_epoch_inputs_edited_are_refused(edits):
    assert outcome(_forge("bins-epsilon", **edits), budget=120) in (1, 3)


@pytest.mark.parametrize("edits,codes", [
    ({"inputs__noise_multiplier": "0.001"}, (1, 3)),
    # sigma 2 -> 1000: Y's law is a point mass near 1, and the producer's rule covers S only up to about
    # T + 1 = 5 (s_max), 2.6k degrees at h = 1/512, where the recorded grid keeps 36.8k (46.3k for add):
    # beyond 4x that reach, refused as a grid the inputs do not imply before any product
    ({"inputs__noise_multiplier": "1000"}, (2,)),
    ({"inputs__delta": "1e-300"}, (1, 3)),
    ({"inputs__dataset_size": 100_000}, (1, 3)),  # T = 4 -> 100000 on the grid of T = 4: within the work cap, refused
], ids=["sigma-tiny", "sigma-huge", "delta-tiny", "batches"])
def test_epochs_inputs_edited_are_refused(edits, codes):
    assert outcome(_forge("bins-epsilon-epochs", **edits), budget=120) in codes


def test_epochs_grid_forged_beyond_the_inputs_rule_answers_2_before_products(no_products):
    # T = 4, E = 2, sigma 2: the producer's rule keeps at most 2^16 + 3 degrees (base degree at E = 2; a
    # refined grid would have E h > 1/8, here h = 1/512) and covers S up to s_max ~ 72 (36.8k degrees).
    # Forged to the degree cap 2^21 (both grids; T also raised to 65, the most the work cap allows on that
    # grid): 30 CPU s (T = 4) and more (T = 65) of products before; now refused on the count alone
    g = {"g": 9, "fine": 4858, "per": 256, "top": 1 << 21, "keep": 1 << 21}
    grids = {"remove": g, "add": {**g, "g": 10, "fine": 9716}}
    for T in (4, 65):
        assert outcome(_forge("bins-epsilon-epochs", inputs__dataset_size=T, result__bins_epochs__grids=grids)) == 2
    # just inside the slack (2 x 2^16 + 8 degrees) is priced as the inputs' own work: not refused here
    # on the count (the grid then decides: it reaches, and the recorded ends are true)
    inside = {"remove": {**g, "top": 36784, "keep": 131080}, "add": {**g, "g": 10, "fine": 9716, "top": 46324,
                                                                       "keep": 131080}}
    r = RB._run(_load("bins-epsilon-epochs")["inputs"])
    RB._bound_grids(r, inside)
    from dpverify.errors import MalformedCertificate
    with pytest.raises(MalformedCertificate, match="grid rule"):
        RB._bound_grids(r, {d: {**x, "keep": x["keep"] + 1} for d, x in inside.items()})


def test_a_coarse_grid_in_one_direction_does_not_lift_the_others_cap(no_products):
    # adv35 B1: the refined-degree allowance (2^20) was chosen from the widest *recorded* grid, so a
    # remove grid forged to h = 2^30 let an add grid of 2^21 degrees through (22 CPU s of products, then
    # exit 3). The allowance is now priced from the inputs: sigma 2, T = 4, E = 2 never refines (its rule
    # grids have h = 2^-9, 2^-10: E h << 1/4), so 2^21 degrees is refused by count, as without the trick
    grids = {"remove": {"g": -30, "fine": 1, "per": 1, "top": 1, "keep": 1},
             "add": {"g": 20, "fine": 60000, "per": 256, "top": 1 << 21, "keep": 1 << 21}}
    assert outcome(_forge("bins-epsilon-epochs", result__bins_epochs__grids=grids)) == 2


def test_every_default_grid_is_within_the_cap():
    # the producer's own proposals (sigma x T x E over the range it accepts) against the cap verify applies:
    # the rule itself, not a copy of it, so a genuine certificate is never refused by the count
    from dpverify.recheck.bins_plan import keep_cap, refines
    from dpverify.sampling import balls as B, balls_epochs as BE

    for sig in ("0.3", "0.85", "2", "300"):
        for T in (2, 10, 240, 5000):
            for E in (2, 3, 9, 60, 1000):
                grids = BE.choose_grids(B.run(sig, T, 1, E, "add-remove"))
                refined = refines(float(sig), T, E, tuple(grids))
                for d, g in grids.items():
                    assert g.keep <= keep_cap(float(sig), T, E, d, float(g.h), refined) // 2


def _brute_lengths(n0: int, E: int, keep):
    """Output lengths of the products a plain repeated-squaring power makes (an independent count)."""
    out = []
    bits = bin(E)[2:][::-1]
    base, res = (min(n0, keep) if keep else n0), None
    for k, bit in enumerate(bits):
        if bit == "1":
            if res is None:
                res = base
            else:
                res = min(res + base - 1, keep) if keep else res + base - 1
                out.append(res)
        if k + 1 < len(bits):
            base = min(2 * base - 1, keep) if keep else 2 * base - 1
            out.append(base)
    return out


@pytest.mark.parametrize("n0,E,keep", [(5, 1, None), (5, 2, None), (7, 13, 20), (100, 239, 1000), (3, 64, None),
                                       (40, 100_000, 37)])
def test_power_products_counts_the_products_made(n0, E, keep, monkeypatch):
    assert RB.power_products(n0, E, keep) == _brute_lengths(n0, E, keep)
    if E <= 239:  # the real power, its products' lengths recorded
        seen = []
        real = RB._pmul

        def spy(a, b, up, k):
            r = real(a, b, up, k)
            seen.append(r.n)
            return r
        monkeypatch.setattr(RB, "_pmul", spy)
        RB._ppower([1 << 120] * n0, E, True, keep)
        assert seen == RB.power_products(n0, E, keep)


def test_packed_power_matches_schoolbook_rounding():
    # the packed product against a per-coefficient schoolbook product with the same rounding
    import random
    rng = random.Random(7)
    for up in (True, False):
        for _ in range(5):
            # sub-probability vectors in units 2^-128 (at most 30 entries below 2^123 each)
            a = [rng.randrange(1 << 123) for _ in range(rng.randrange(1, 30))]
            b = [rng.randrange(1 << 123) for _ in range(rng.randrange(1, 30))]
            keep = rng.choice([None, 5, 17])
            z = [0] * (len(a) + len(b) - 1)
            for i, u in enumerate(a):
                for j, v in enumerate(b):
                    z[i + j] += u * v
            z = z[:keep] if keep else z
            want = [-((-v) >> RB._U) if up else v >> RB._U for v in z]
            got = RB._pmul(RB._Poly.of(a), RB._Poly.of(b), up, keep).coeffs()
            assert got == want


def test_packed_product_refuses_masses_beyond_its_slots():
    from dpverify.errors import CouldNotReprove
    big = RB._Poly.of([1 << 129, 1 << 129])  # total 2^130: a product coefficient could overflow its slot
    with pytest.raises(CouldNotReprove):
        RB._pmul(big, big, True, None)


def test_tracked_excess_bounds_the_rounding():
    # x rounds up an exact measure mu (here: exact rationals); the tracked excess of the rounded-up power
    # must bound sum_j (x^n - mu^n)_j 2^-U, computed exactly with Fractions
    from fractions import Fraction
    mu = [Fraction(1, 3), Fraction(1, 7), Fraction(2, 5), Fraction(1, 11)]
    unit = 1 << RB._U
    hi = [-((-m.numerator * unit) // m.denominator) for m in mu]
    lo = [(m.numerator * unit) // m.denominator for m in mu]
    for n, keep in ((5, None), (6, 9), (13, 4)):
        P = RB._ppower(RB._Poly.of(hi, sum(hi) - sum(lo)), n, True, keep)
        exact = [Fraction(1)]
        for _ in range(n):
            z = [Fraction(0)] * (len(exact) + len(mu) - 1)
            for i, u in enumerate(exact):
                for j, v in enumerate(mu):
                    z[i + j] += u * v
            exact = z[:keep] if keep else z
        got = P.coeffs()
        assert all(Fraction(g, unit) >= e for g, e in zip(got, exact))
        assert Fraction(sum(got), unit) - sum(exact[:len(got)]) <= Fraction(P.err, unit)



@pytest.mark.parametrize("T,g,m", [(4, 9, 12), (240, 6, 11), (3, -2, 3), (1000, 7, 12)])
def test_cuts_give_each_degree_the_index_of_its_own_logarithm(T, g, m):
    # the cut map (one exponential per loss index, carried along by products) against the per-degree
    # rule it replaces: floor / ceil of log(j h / T) 2^m decided by MPFR for every j
    from fractions import Fraction
    E = RB._Epochs.__new__(RB._Epochs)
    E.m, E._th = m, {}
    h = Fraction(1, 2**g) if g >= 0 else Fraction(2**-g)
    hT, jmax = h / T, 3000
    lo = E._index(1, hT)[0] - 2
    hi = E._index(jmax, hT)[1] + 2
    cut = E._cuts(lo, hi, 1 / hT, jmax)
    for j in range(1, jmax + 1):
        f, c = E._index(j, hT)
        assert cut[c][0] >= j and (c - 1 < lo or cut[c - 1][0] < j)  # c(j) = i iff a_(i-1) < j <= a_i
        assert cut[f][1] <= j and (f + 1 > hi or cut[f + 1][1] > j)  # f(j) = i iff b_i <= j < b_(i+1)


@pytest.mark.parametrize("T,g,m,jmax", [(4, 9, 12, 3000), (240, 6, 11, 3000), (3, -2, 3, 50), (1000, 7, 12, 10**6),
                                         (10**6, 30, 20, 7), (1, -40, 40, 2**40)])
def test_clip_thresholds_are_proved_against_mpmath(T, g, m, jmax):
    # ref51 LOW-2: the clipped cut is decided past two integer thresholds. Against mpmath at 60 digits:
    # every i > I_over has log tau_i = i 2^-m + log(T / h) > log(jmax + 2), every i < I_under has it < 0
    # (the thresholds lie on the safe side), and each is within 2 indices of the exact one (so the
    # shortcut still saves the exponentials it is for)
    from fractions import Fraction

    import mpmath

    E = RB._Epochs.__new__(RB._Epochs)
    E.m = m
    h = Fraction(1, 2**g) if g >= 0 else Fraction(2**-g)
    Th = T / h
    over, under = E._clip_indices(Th, jmax)
    with mpmath.workdps(60):
        lg = mpmath.log(mpmath.mpf(Th.numerator)) - mpmath.log(mpmath.mpf(Th.denominator))
        exact_over = (mpmath.log(jmax + 2) - lg) * 2**m
        exact_under = -lg * 2**m
        assert exact_over <= over <= exact_over + 2
        assert exact_under - 2 <= under <= exact_under
        for i in (over + 1, over + 2):
            assert mpmath.exp(mpmath.mpf(i) / 2**m + lg) > jmax + 2
        for i in (under - 1, under - 2):
            assert mpmath.exp(mpmath.mpf(i) / 2**m + lg) < 1


def test_cuts_past_the_thresholds_are_the_clipped_exponentials():
    # a window far wider than the degrees [1, jmax] reach: every cut the walk decides by the thresholds
    # is the one the exponential gives (:meth:`_tau`, clipped), index by index around both thresholds
    from fractions import Fraction

    E = RB._Epochs.__new__(RB._Epochs)
    E.m, E._th = 6, {}
    Th, jmax = Fraction(240 * 2**6), 3000
    over, under = E._clip_indices(Th, jmax)
    cut = E._cuts(under - 40, over + 40, Th, jmax)
    for i in list(range(under - 40, under + 3)) + list(range(over - 3, over + 41)):
        a, b = E._tau(i, Th)
        assert cut[i] == (min(max(a, 0), jmax), min(max(b, 1), jmax + 1)), i


def test_a_forged_keep_costs_nothing_and_changes_no_bound():
    # One epoch: the hinges at the recorded ends read degrees below ceil(T e^eps / h) only, so the
    # re-check cuts its products there whatever keep the certificate records. Forged here: keep =
    # T top + 1, the whole T-fold product. The reference is the uncut route on that grid (Laws
    # built with every degree): at the recorded ends it must give the same exact rationals as the
    # cut route. A truncated product is exact below its cut (nonnegative coefficients, degrees
    # only add) and every coefficient is rounded on its own, so the two agree to the last bit.
    cert = _load("bins-epsilon")
    r, res = RB._run(cert["inputs"]), cert["result"]
    lo, hi = (RB._fraction(res["enclosure"][k], k) for k in ("lo", "hi"))
    g = RB._grid(res)
    whole = {**g, "keep": r["T"] * g["top"] + 1}
    assert whole["keep"] > 2 * g["keep"]  # the forgery asks for much more than the genuine grid
    uncut = RB._Laws(r, whole)
    cut = RB._delta_route(r, {**res, "bins_grid": whole}, (hi, lo))
    for eps in (hi, lo):
        want = tuple(Fraction(*x.as_integer_ratio()) for x in uncut.delta(r["dirs"], eps))
        assert cut(eps) == want
    # and the forged certificate verifies (its ends are true): the cut made it cheap, not lax
    assert outcome(_forge("bins-epsilon", result__bins_grid=whole)) == 0
