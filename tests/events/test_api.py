"""Composed event trees (T > 1) against independent routes: dp_accounting's
float PLD (pessimistic and optimistic), dp_accounting's RDP upper bound for
sampling without replacement, and order relations proved in the comments."""

from fractions import Fraction as F

import dp_accounting as dpa
import pytest
from dp_accounting import dp_event as dpe
from dp_accounting.pld import privacy_loss_distribution as PLD

from dpverify.events import check_claim, delta, epsilon, model as E, supports
from dpverify.ball import ball
from dpverify.verdict import Outcome

D = "1e-5"


def _f(x):
    return float(x.mid()) if x.is_finite() else float("inf")


def test_poisson_gaussian_inside_dp_accounting_bracket():
    ev = dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(0.05, dpa.GaussianDpEvent(1.5)), 60)
    ans = epsilon(ev, D, rel_width=1e-5)
    hi = PLD.from_gaussian_mechanism(1.5, sampling_prob=0.05, value_discretization_interval=1e-4).self_compose(60)
    lo = PLD.from_gaussian_mechanism(1.5, sampling_prob=0.05, value_discretization_interval=1e-4,
                                     pessimistic_estimate=False).self_compose(60)
    e_hi, e_lo = hi.get_epsilon_for_delta(1e-5), lo.get_epsilon_for_delta(1e-5)
    # dp_accounting's pessimistic / optimistic brackets enclose the truth; so does ours
    assert _f(ans.enclosure.lo) <= e_hi * (1 + 1e-9) and _f(ans.enclosure.hi) >= e_lo * (1 - 1e-9)


@pytest.mark.slow  # dp_accounting's own MoG PLD takes ~25 s
def test_mog_inside_dp_accounting_bracket():
    mog = dpe.MixtureOfGaussiansDpEvent(2.0, [0.0, 1.0, 2.0], [0.5, 0.25, 0.25])
    ans = epsilon(dpa.SelfComposedDpEvent(mog, 8), D)
    mk = lambda pess: PLD.from_mixture_gaussian_mechanism(2.0, [0.0, 1.0, 2.0], [0.5, 0.25, 0.25],  # noqa: E731
                                                        pessimistic_estimate=pess,
                                                        value_discretization_interval=1e-3).self_compose(8)
    e_hi, e_lo = mk(True).get_epsilon_for_delta(1e-5), mk(False).get_epsilon_for_delta(1e-5)
    assert _f(ans.enclosure.lo) <= e_hi * (1 + 1e-9) and _f(ans.enclosure.hi) >= e_lo * (1 - 1e-9)


def test_discrete_laplace_matches_dp_accounting():
    ev = dpa.SelfComposedDpEvent(dpe.DiscreteLaplaceDpEvent(0.5, 2), 10)
    ans = epsilon(ev, D, rel_width=1e-6)
    acc = dpa.pld.PLDAccountant(value_discretization_interval=1e-5)
    acc.compose(ev)
    assert abs(_f(ans.enclosure.hi) - acc.get_epsilon(1e-5)) < 1e-4


def test_wor_certified_below_dp_accounting_rdp():
    """dp_accounting 0.6's RDP for WOR uses alpha/(2 z^2) at q = 1, i.e. the noise
    multiplier relative to the replace-one sensitivity; with ours (relative to C,
    sensitivity 2C) the same mechanism is its noise multiplier z/2 (#378)."""
    z, n, m, T = 2.0, 1000, 20, 50
    ours = epsilon(dpa.SelfComposedDpEvent(dpe.SampledWithoutReplacementDpEvent(n, m, dpa.GaussianDpEvent(z)), T),
                   D, neighboring="replace-one", rel_width=1e-3)
    rdp = dpa.rdp.RdpAccountant(neighboring_relation=dpa.NeighboringRelation.REPLACE_ONE)
    rdp.compose(dpa.SelfComposedDpEvent(dpe.SampledWithoutReplacementDpEvent(n, m, dpa.GaussianDpEvent(z / 2)), T))
    assert _f(ours.enclosure.hi) <= rdp.get_epsilon(1e-5)


def test_wor_replace_one_dominates_poisson_add_remove():
    """Which must be larger, and why: WOR under replace-one composes the pair with
    curve max(H_R, H_A) of the Poisson pairs at shift 2/z (AFA Cor 32), Poisson
    add-remove composes H_R and H_A at shift 1/z separately and takes the max.
    A shift-2/z pair is Blackwell-above the shift-1/z pair (N(0,1) vs N(2/z,1)
    post-processed by x -> x/2 + noise N(0, 3/4) gives N(0,1) vs N(1/z,1)), mixtures
    preserve it, a max-curve pair is above each of its two pairs, and composition
    preserves the order (AFA Thm 10). So eps_WOR,replace >= eps_Poisson,add-remove;
    WOR add-remove (AFA Thm 11 (2)) sits between them."""
    z, n, m, T = F(3, 2), 1000, 10, 40
    wor = E.SelfComposed(E.SampledWithoutReplacement(n, m, E.Gaussian(z)), T)
    poi = E.SelfComposed(E.PoissonSampled(F(m, n), E.Gaussian(z)), T)
    wa = epsilon(wor, D, neighboring="replace-one", rel_width=1e-3)
    b = epsilon(poi, D, neighboring="add-remove", rel_width=1e-3).enclosure
    c = epsilon(wor, D, neighboring="add-remove", rel_width=1e-3).enclosure
    # the Cor 32 pair bounds the mechanism from above only; the reported lower end is the
    # realised dataset pair's (Poisson add-remove at noise z/2, rate m/n), the pair's own
    # lower end is kept in the details
    assert ball(F(wa.details["dominating_pair_lower_end"])) >= c.lo and c.lo >= b.hi
    half = epsilon(E.SelfComposed(E.PoissonSampled(F(m, n), E.Gaussian(z / 2)), T), D,
                   neighboring="add-remove", rel_width=1e-3).enclosure
    assert half.lo <= wa.enclosure.lo <= half.hi  # the realised pair's curve, by the arb route
    assert wa.enclosure.lo <= ball(F(wa.details["dominating_pair_lower_end"]))


def test_wor_replace_one_fails_only_below_the_realised_pair():
    """A claim the composed Cor 32 pair violates is shown false for the mechanism only
    when the realised dataset pair (Poisson add-remove at z/2) violates it too: a claim
    between the realised eps and the pair's eps is undecided; far below, it fails. The
    same tree under add/remove (a tight pair, AFA Thm 11 (2)) fails as well."""
    z, n, m, T = F(3, 2), 1000, 10, 40
    wor = E.SelfComposed(E.SampledWithoutReplacement(n, m, E.Gaussian(z)), T)
    v, _ = check_claim(wor, "0.01", D, neighboring="replace-one")
    assert v.outcome is Outcome.FAILS
    wa = epsilon(wor, D, neighboring="replace-one", rel_width=1e-3)
    mid = (F(wa.enclosure.lo_str()) + F(wa.details["dominating_pair_lower_end"])) / 2
    v, _ = check_claim(wor, str(mid), D, neighboring="replace-one")
    assert v.outcome is Outcome.UNDECIDED
    v, _ = check_claim(wor, "0.01", D, neighboring="add-remove")
    assert v.outcome is Outcome.FAILS


def test_group_of_size_one_is_no_group():
    """Ganesh 2024 (arXiv 2401.10294): a group of k records under Poisson rate q is
    the MoG with Binomial(k, q) sensitivities 0..k; k = 1 is the plain subsampled
    Gaussian."""
    q, z = F(1, 20), F(1)
    grp = E.SelfComposed(E.MixtureOfGaussians(z, (F(0), F(1)), (1 - q, q)), 30)
    one = E.SelfComposed(E.PoissonSampled(q, E.Gaussian(z)), 30)
    a, b = epsilon(grp, D).enclosure, epsilon(one, D).enclosure
    assert a.lo <= b.hi and b.lo <= a.hi


def test_mixed_tree_two_sided_rel_width():
    tree = E.Composed((
        E.SelfComposed(E.PoissonSampled(F(1, 100), E.Gaussian(F(1))), 200),
        E.SelfComposed(E.SampledWithoutReplacement(10000, 100, E.Gaussian(F(2))), 100),
        E.SelfComposed(E.Laplace(F(20)), 5),
        E.SelfComposed(E.MixtureOfGaussians(F(2), (F(0), F(1), F(2)), (F(9, 10), F(1, 20), F(1, 20))), 20),
    ))
    ans = epsilon(tree, D, rel_width=1e-4)
    assert ans.rel_width is not None and ans.rel_width <= 1e-4 and ans.enclosure.lo > 0


def test_special_events_and_refusals():
    assert not epsilon(E.Composed((E.Gaussian(F(1)), E.NonPrivate())), D).enclosure.hi.is_finite()
    assert delta(E.NonPrivate(), "1").enclosure.lo == 1
    assert epsilon(E.NoOp(), D).enclosure.hi == 0
    # zCDP: certified optimal conversion <= the classic rho + 2 sqrt(rho log(1/delta))
    z = epsilon(E.ZCDp(F(1, 10), F(0)), D).enclosure
    assert _f(z.hi) <= 0.1 + 2 * (0.1 * 11.512925465) ** 0.5
    # Poisson sampling under replace-one: no dominating pair, but a certified bracket, and supports says which
    ok, why = supports(E.PoissonSampled(F(1, 10), E.Gaussian(F(1))), "replace-one")
    assert ok and "bracket" in why and "Dwork and Roth 2014 Thm 2.2" in why
    ok, why = supports(E.PoissonSampled(F(1, 10), E.Gaussian(F(1))), "add-remove")
    assert ok and why == ""
    ok, why = supports(E.Composed((E.PoissonSampled(F(1, 10), E.Gaussian(F(1))), E.RandomizedResponse(F(1, 2), 4))),
                       "replace-one")
    assert not ok and "does not cover the tree either" in why and "randomized response" in why
    ok, why = supports(E.RandomizedResponse(F(1, 2), 4), "add-remove")
    assert not ok and "replace-one and replace-special" in why
    ok, why = supports(dpe.SingleEpochTreeAggregationDpEvent(1.0, 4))
    assert not ok and "tree aggregation" in why
    ok, why = supports(E.Composed((E.ZCDp(F(1), F(0)), E.Laplace(F(1)))))
    assert not ok and "zCDP" in why


def test_randomized_response_replace_one_counts_every_step():
    """10 steps of RR(p=1/2, k=4): the loss of one step is log 5 on the atom
    P = 5/8 (x stays x), so eps(1e-5) = 10 log 5 - log(...) ... computed exactly by
    enumeration of the binomial law of the number of 'x' outputs."""
    import math
    ans = epsilon(E.SelfComposed(E.RandomizedResponse(F(1, 2), 4), 10), D, neighboring="replace-one", rel_width=1e-6)
    # brute force: losses are (a - b) log 5 with a ~ #x, b ~ #x' outputs; delta(eps) by enumeration
    P, _Q = [F(5, 8), F(1, 8), F(1, 4)], [F(1, 8), F(5, 8), F(1, 4)]
    from collections import Counter
    law = Counter({(0, 0): F(1)})
    for _ in range(10):
        new = Counter()
        for (lp, lq), m in law.items():
            for i in range(3):
                new[(lp, lq) if i == 2 else ((lp + 1, lq) if i == 0 else (lp, lq + 1))] += m * P[i]
        law = new

    def dlt(eps):
        return sum(float(m) * max(0.0, 1 - math.exp(eps - (a - b) * math.log(5))) for (a, b), m in law.items())
    assert dlt(_f(ans.enclosure.hi)) <= 1e-5 * (1 + 1e-6) and dlt(_f(ans.enclosure.lo)) >= 1e-5 * (1 - 1e-6)


def test_check_claim_verdicts():
    ev = E.SelfComposed(E.PoissonSampled(F(1, 10), E.Gaussian(F(2))), 10)
    e = epsilon(ev, D).enclosure
    assert check_claim(ev, str(_f(e.hi) * 1.01), D)[0].outcome is Outcome.HOLDS
    assert check_claim(ev, str(_f(e.lo) * 0.99), D)[0].outcome is Outcome.FAILS


def test_an_upper_only_undecided_claim_names_the_users_numbers_as_decimals():
    """Two without-replacement steps on datasets of different sizes under replace-one: no realised
    dataset pair (one dataset has one size), so a claim the Cor 32 pair violates is undecided,
    its reason naming the claimed eps and delta as the other claim reasons do
    (pld.refine.claim_verdict: ball.exact_str), not as fractions ("delta(1/4) ... > 1/100000" before)."""
    tree = E.Composed([E.SampledWithoutReplacement(100, 10, E.Gaussian(F(1))),
                       E.SampledWithoutReplacement(200, 10, E.Gaussian(F(1)))])
    v, _ = check_claim(tree, "0.25", D, neighboring="replace-one")
    assert v.outcome is Outcome.UNDECIDED
    assert v.reason.startswith("the dominating pair's delta(0.25) >= ") and " > 0.00001, but the pair" in v.reason
    assert "/" not in v.reason.split(", but")[0], v.reason
