"""From an event tree and a neighbouring relation to dominating pairs per
direction (AFA Def 7), composed by the PLD accountant (AFA Thm 10).

Relations and their directions (the relation's curve is the pointwise maximum
of its directions' composed curves, AFA Sec 4.1 after Thm 11):

* ``add-remove``: directions "remove" and "add", composed separately;
* ``add`` / ``remove``: one direction;
* ``replace-one``: one symmetric direction "replace";
* ``replace-special``: a record x is replaced by a special record that
  contributes nothing (dp_accounting REPLACE_SPECIAL). For the additive
  mechanisms here (a sum of records plus noise, possibly Poisson-sampled)
  M(S + {bot}) has the law of M(S), so every replace-special pair of
  neighbours is an add/remove pair and the add/remove pairs dominate; directions
  "remove" (x -> bot) and "add" (bot -> x). Randomized response has its own
  replace-special pair (dp_accounting: the special input outputs uniformly).

Which pair for which event (theorem at each line of :func:`_leaf_pair` and
:func:`_compile`); anything else raises :class:`Unsupported` with the reason.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable, Optional, Sequence, Union

from ..errors import InvalidParameter
from ..relation import DIRECTIONS, Relation, relation
from ..pld.pairs import (
    FinitePair,
    SubsampledGaussianPair,
    SubsampledLaplacePair,
    approx_dp_pair_exp,
    subsample_finite,
)
from . import model as E
from .json_format import ApproxDpExp
from .pairs import (
    MaxCurvePair,
    MixtureGaussianPair,
    discrete_gaussian_pair,
    discrete_laplace_pair,
    epsilon_delta_pair,
)
from ..certificate.format import EVENT_MAX_LEAVES
from ..certificate.prose import ADDITIVE_WORDS, WOR_UPPER_ONLY, event_theorem
from ..limits import MAX_NOISE_MULTIPLIER, MAX_STEPS

__all__ = ["Plan", "Block", "Unsupported", "compile_event"]

#: Longest schedule (sum of counts) accepted, as for DP-SGD.

#: why a balls_in_bins event inside a tree is refused (the whole document is answered, by its own kinds)
BALLS_IN_BINS_WHOLE = (
    "balls_in_bins: its dominating pair is proved for the whole epoch structure only (Chua et al., AISTATS "
    "2025, one epoch; E independently re-allocated epochs by AFA Thm 10), and it is enclosed on its own grid, "
    "not as a pair of the PLD composition: give it as the document's whole event (epochs in the node), not "
    "composed, repeated or sampled with other events")


class Unsupported(InvalidParameter):
    """The event (or this event under this relation) has no proved dominating
    pair in dpverify; ``reason`` says why. Never approximated."""

    def __init__(self, reason: str) -> None:
        super().__init__("event", reason)
        self.reason = reason


@dataclass(frozen=True)
class Block:
    """``count`` repetitions of one step: ``make_pair(direction)`` gives its
    dominating pair; ``theorem`` cites why it dominates."""

    make_pair: Callable[[str], Any]
    count: int
    label: str
    theorem: str
    #: under replace-one: the pair per direction ("remove", "add") realised by one concrete
    #: dataset pair for every block at once (see :meth:`Plan.realised_steps`); None: not known
    realised: Optional[Callable[[str], Any]] = None


@dataclass
class Plan:
    """What an event tree amounts to under a relation."""

    relation: Relation
    blocks: list = field(default_factory=list)
    non_private: bool = False
    zcdp: Optional[tuple] = None  # (rho, xi) when the tree is accounted through RDP
    rdp_only: list = field(default_factory=list)  # labels of events that need RDP
    #: why the composed pair only bounds the mechanism from above (empty: the pairs are tight,
    #: so the pair's lower end is a lower end for the mechanism too)
    upper_only: list = field(default_factory=list)
    #: source_dataset_size of every sampled_without_replacement event (the realised pair needs one dataset)
    wor_sizes: set = field(default_factory=set)

    @property
    def directions(self) -> tuple:
        return DIRECTIONS[self.relation]

    @property
    def total_steps(self) -> int:
        return sum(b.count for b in self.blocks)

    def realised_steps(self) -> Optional[list]:
        """(pair factory, count) per block of a lower bound for the mechanism under replace-one,
        or None. The dataset pair: x with clipped gradient +1 (a unit vector e), x' and every
        other record -e, at every model (a linear loss). Under D' a batch of b records sums to
        -b e (known); under D to -b e + 2e when x is in it. A sampled_without_replacement step
        (m of n) then releases (1-g) N(-m e) + g N(-m e + 2e) against N(-m e), g = m/n: after
        the known shift, the Poisson "remove" pair at rate g and noise z/2 (sensitivity 2C);
        a step on the whole dataset the pair (N(0), N(2/z)). Steps draw their batches
        independently and the gradients do not depend on the model, so the run's laws are the
        products of these pairs, attained by (D, D') ("remove") and (D', D) ("add"); so their
        composed curves are lower bounds of the mechanism's (AFA Thm 11 Remark, exact
        optimality, for the single pairs; products of attained laws for the composition).
        One dataset needs one n for every without-replacement event."""
        if self.relation is not Relation.REPLACE_ONE or len(self.wor_sizes) > 1:
            return None
        if not self.blocks or any(b.realised is None for b in self.blocks):
            return None
        return [(b.realised, b.count) for b in self.blocks]

    def steps(self) -> list:
        """The blocks as the accountant's steps (:class:`dpverify.pld.refine.Step`), blocks whose
        pairs are equal in every direction joined into one step with the summed count: two event
        kinds can have one pair (sampling without replacement under add/remove is the Poisson
        pair at rate m/n and half the noise, AFA Thm 11 (2); a Poisson rate of 1 is no
        sampling), and the composition of equal pairs is one power (AFA Thm 10; the order does
        not matter). Pairs are frozen value objects, equal when the parameters that define
        them are; a pair that cannot be compared so stays a step of its own."""
        from ..pld.refine import Step

        out: list = []
        at: dict = {}
        for b in self.blocks:
            try:
                key: Any = tuple(b.make_pair(d) for d in self.directions)
                hash(key)
            except TypeError:
                key = None
            if key is None or key not in at:
                if key is not None:
                    at[key] = len(out)
                out.append(Step(b.make_pair, b.count))
            else:
                out[at[key]] = Step(out[at[key]].make_pair, out[at[key]].count + b.count)
        return out

    def theorems(self) -> list:
        seen: list = []
        for b in self.blocks:
            if b.theorem not in seen:
                seen.append(b.theorem)
        return seen


# --------------------------------------------------------------------------- leaves

#: Gaussian and Laplace leaves: (pair class, the event's type; its words: certificate.prose.ADDITIVE_WORDS)
_ADDITIVE = {
    E.Gaussian: (SubsampledGaussianPair, "gaussian"),
    E.Laplace: (SubsampledLaplacePair, "laplace"),
}


def _additive(ev: Any, q: Fraction, rel: Relation) -> tuple[Callable[[str], Any], str]:
    """A Gaussian or Laplace leaf (noise multiplier z = sigma/C, or scale b/C),
    Poisson-sampled at rate q (q = 1: not sampled)."""
    Pair, step = _ADDITIVE[type(ev)]
    name = ADDITIVE_WORDS[step][0]
    z = ev.noise_multiplier
    if rel is Relation.REPLACE_ONE:
        if q != 1:
            raise Unsupported(
                f"Poisson-sampled {name} under replace-one (sampling probability < 1): no dominating pair is "
                "proved (AFA App. C.4 leaves it open; dp_accounting's REPLACE_ONE Poisson pair has no "
                "published proof); a tree of Gaussian and Laplace steps has a certified bracket by group "
                "privacy instead: dpverify.epsilon / dpverify.delta / dpverify.check_claim with "
                "neighboring='replace-one' answer it (an EventAnswer whose lower_end and upper_end name each "
                "end's theorem), as does `dpverify audit dpsgd --events FILE`; or use add-remove, or sampling "
                "without replacement for fixed batches")
        # sensitivity 2C at noise z is sensitivity C at noise z/2 (rescale the output by 1/2)
        return (lambda d: Pair(z / 2, Fraction(1), "remove"), event_theorem(step, rel.value))
    if q == 1:
        return (lambda d: Pair(z, Fraction(1), "remove"), event_theorem(step, rel.value))
    return (lambda d: Pair(z, q, d), event_theorem(step, rel.value, sampled=True))


def _rr(p: Fraction, k: int, rel: Relation) -> tuple[Callable[[str], Any], str]:
    keep = 1 - p + p / k
    other = p / k
    if rel is Relation.REPLACE_ONE:
        # outputs x, x', the rest (merged: same loss 0); a post-processing-
        # complete description of R(x) vs R(x'), the worst case by symmetry
        P = (keep, other, (k - 2) * other) if k > 2 else (keep, other)
        Q = (other, keep, (k - 2) * other) if k > 2 else (other, keep)
        pair = FinitePair(P, Q, "randomized-response")
        return (lambda d: pair, event_theorem("randomized_response", rel.value))
    if rel is Relation.REPLACE_SPECIAL:
        # dp_accounting: the special input outputs a uniform bucket
        P = (keep, (k - 1) * other)
        Q = (Fraction(1, k), Fraction(k - 1, k))
        pair = FinitePair(P, Q, "randomized-response-special")
        return (lambda d: pair if d == "remove" else pair.swapped(), event_theorem("randomized_response", rel.value))
    raise Unsupported("randomized response is a local randomiser of one record's value: it has a pair for "
                      "replace-one and replace-special only (as in dp_accounting), not for add/remove")


def _leaf_pair(ev: Any, q: Fraction, rel: Relation) -> Optional[tuple[Callable[[str], Any], str]]:
    """Pair factory and theorem of a leaf, Poisson-sampled at rate q (q = 1:
    not sampled); None for a no-op."""
    if isinstance(ev, (E.Gaussian, E.Laplace)):
        return _additive(ev, q, rel)
    if isinstance(ev, (E.DiscreteLaplace, E.DiscreteGaussian)):
        if q != 1:
            raise Unsupported(f"Poisson sampling of {type(ev).__name__} is not implemented (only Gaussian, "
                              "Laplace and EpsilonDelta events can be Poisson-sampled)")
        sens = ev.sensitivity * (2 if rel is Relation.REPLACE_ONE else 1)
        if isinstance(ev, E.DiscreteLaplace):
            pair = discrete_laplace_pair(ev.noise_parameter, sens)
        else:
            pair = discrete_gaussian_pair(ev.sigma, sens)
        step = "discrete_laplace" if isinstance(ev, E.DiscreteLaplace) else "discrete_gaussian"
        return (lambda d: pair, event_theorem(step, rel.value))
    if isinstance(ev, E.RandomizedResponse):
        if q != 1:
            raise Unsupported("Poisson-sampled randomized response is not supported")
        if ev.num_buckets == 1:
            return None
        return _rr(ev.noise_parameter, ev.num_buckets, rel)
    if isinstance(ev, (E.EpsilonDelta, ApproxDpExp)):
        if isinstance(ev, E.EpsilonDelta):
            base: Any = epsilon_delta_pair(ev.epsilon, ev.delta)
            sample: Callable[[str], Any] = lambda d: base.subsampled(q, d)  # noqa: E731
        else:  # legacy item: e^eps0 given exactly, rational masses
            base = approx_dp_pair_exp(ev.exp_eps0, ev.delta0)
            sample = lambda d: subsample_finite(base, q, d)  # noqa: E731
        if q == 1:
            return (lambda d: base, event_theorem("epsilon_delta", rel.value))
        if rel not in (Relation.ADD_REMOVE, Relation.ADD, Relation.REMOVE):
            raise Unsupported(f"Poisson-sampled (eps, delta)-DP events under {rel.value}: AFA Thm 11 (1) "
                              "needs a guarantee for add/remove neighbours")
        return (sample, event_theorem("epsilon_delta", rel.value, sampled=True))
    if isinstance(ev, E.MixtureOfGaussians):
        if q != 1:
            raise Unsupported("Poisson sampling of a MixtureOfGaussians event is not supported "
                              "(put the sampling into the mixture)")
        if rel is Relation.REPLACE_ONE:
            raise Unsupported("MixtureOfGaussians defines its pair for add/remove (and replace-special) "
                              "neighbours only (Choquette-Choo et al. 2023, arXiv 2310.15526, state it for "
                              "adding or removing a record, as dp_accounting does); no replace-one pair is proved")
        return (_mixture_pair(ev.standard_deviation, ev.sensitivities, ev.sampling_probs),
                event_theorem("mixture_of_gaussians", rel.value))
    raise Unsupported(f"{type(ev).__name__} cannot be the inner event here")


def _mixture_pair(s: Fraction, cs: Sequence[Fraction], ps: Sequence[Fraction]) -> Callable[[str], Any]:
    """The pair factory of a mixture-of-Gaussians event: :class:`.pairs.MixtureGaussianPair`, except
    where the mixture is, law for law, the Poisson-subsampled Gaussian pair, which then stands in
    for it (:class:`dpverify.pld.pairs.SubsampledGaussianPair`: a closed-form crossing point and
    Taylor blocks without a proved root per block, about a third of the mixture's discretisation).

    Proof of the identity. Scaled by s, the remove pair is P = sum_i p_i N(c_i / s, 1) against
    Q = N(0, 1) and the add pair the same swapped (Choquette-Choo et al. 2023; the class docstring
    of MixtureGaussianPair). Components at one mean are one component of their summed weight. When
    the weights sum to exactly 1 and one mean mu = c / s > 0 is left beside weight 1 - q > 0 at 0
    (or alone, q = 1), P = (1 - q) N(0, 1) + q N(mu, 1): the remove pair of the Poisson-subsampled
    Gaussian at rate q and noise multiplier 1 / mu (AFA Thm 11 (1)), whose add pair is again the
    swap. Same laws, so the same tails, curves and composition. The re-check reduces the same
    mixtures the same way (:func:`dpverify.recheck.events._mog`). The mixture's pair is built
    first all the same, so that its checks refuse what they refused (sd 1e-300 beside a sensitivity
    1e300: a shift past 1e100). Weights not summing to 1 (a pair built directly), a noise multiplier
    1 / mu above the Gaussian pair's cap, or a direction other than remove / add keep the mixture's
    pair."""
    mixture = lambda d: MixtureGaussianPair(s, cs, ps, d)  # noqa: E731
    if not (s > 0 and all(c >= 0 for c in cs) and all(p >= 0 for p in ps) and sum(ps, Fraction(0)) == 1):
        return mixture
    weight: dict[Fraction, Fraction] = {}
    for c, p in zip(cs, ps):
        if p != 0:
            mu = Fraction(c) / Fraction(s)
            weight[mu] = weight.get(mu, Fraction(0)) + Fraction(p)
    shifted = [(mu, q) for mu, q in weight.items() if mu != 0]
    if len(shifted) != 1 or shifted[0][0] * MAX_NOISE_MULTIPLIER < 1:
        return mixture
    mu, q = shifted[0]
    sigma = 1 / mu

    def pair(d: str) -> Any:
        own = mixture(d)  # the mixture's own checks first (its refusals and their words stay the event's)
        return SubsampledGaussianPair(sigma, q, d) if str(d) in ("remove", "add") else own

    return pair


def _realised_wor(ev: E.SampledWithoutReplacement) -> Callable[[str], Any]:
    """Replace-one, m of n records without replacement: the Poisson pair at rate m/n and half
    the noise, per direction, that the dataset pair of :meth:`Plan.realised_steps` attains."""
    Pair = _ADDITIVE[type(ev.event)][0]
    half, g = ev.event.noise_multiplier / 2, Fraction(ev.sample_size, ev.source_dataset_size)
    return lambda d: Pair(half, g, d)


def _wor(ev: E.SampledWithoutReplacement, rel: Relation) -> tuple[Callable[[str], Any], str]:
    n, m, inner = ev.source_dataset_size, ev.sample_size, ev.event
    if not isinstance(inner, (E.Gaussian, E.Laplace)):
        raise Unsupported("SampledWithoutReplacement is supported around a Gaussian or Laplace event only "
                          f"(found {type(inner).__name__})")
    g = Fraction(m, n)
    # base pair under replace-one: shift 2 (sensitivity 2C) = sensitivity 1 at half the noise
    Pair, step = _ADDITIVE[type(inner)]
    half = inner.noise_multiplier / 2

    def base(d: str, gamma: Fraction = g) -> Any:
        return Pair(half, gamma, d)

    if rel is Relation.REPLACE_ONE:
        if m == n:
            # the whole dataset: the base mechanism under replace-one
            return (lambda d: base("remove", Fraction(1)),
                    event_theorem("sampled_without_replacement", rel.value, inner=step, whole=True))
        # AFA Prop 30 (second part) bounds the profile of the subset-sampled
        # mechanism under replace-one by H((1-g)P+gQ || P) for alpha >= 1 and
        # H(P || (1-g)P+gQ) for alpha < 1, (P, Q) the replace-one base pair;
        # AFA Cor 32 (via Lemma 9) gives a pair whose curve is the maximum of
        # the two for every alpha >= 0: a dominating pair that composes
        # (AFA Thm 10). With (P, Q) = (N(0,1), N(2/z,1)) the two orientations
        # are the "remove" and "add" Poisson pairs at rate g and shift 2/z.
        return (lambda d: MaxCurvePair(base("remove"), base("add"), tie_at_zero=True),
                event_theorem("sampled_without_replacement", rel.value, inner=step))
    if rel in (Relation.ADD_REMOVE, Relation.ADD, Relation.REMOVE):
        if m >= n:
            raise Unsupported("sampling without replacement under add/remove needs sample_size < "
                              "source_dataset_size (AFA Thm 11 (2): subsets of size m < n)")
        # AFA Thm 11 (2): (P, (1-g)P + gQ) for add, ((1-g)P + gQ, P) for remove,
        # (P, Q) dominating the base mechanism under replace-one
        return (lambda d: base(d), event_theorem("sampled_without_replacement", rel.value, inner=step))
    raise Unsupported("sampling without replacement under replace-special: no dominating pair is proved (AFA "
                      "Thm 11 (2) is stated for add/remove and Prop 30 / Cor 32 for replacing a record by "
                      "another; the replacement by dp_accounting's special record is not covered here)")


# --------------------------------------------------------------------------- tree walk


def _too_many_kinds() -> None:
    """Refuse a tree of more than EVENT_MAX_LEAVES distinct kinds of step (certificate.format, the cap
    verify shares), before any step is discretised: as the walk meets the first one too many (a
    10 MB tree of 200,000 distinct Gaussian leaves was walked whole, then refused)."""
    raise InvalidParameter("events", f"the event tree has more than {EVENT_MAX_LEAVES} distinct kinds of step "
                                     "(mechanisms of their own kind or parameters, each discretised and composed "
                                     f"separately); at most {EVENT_MAX_LEAVES} are supported")


def compile_event(event: Any, rel: Union[str, Relation]) -> Plan:
    """The :class:`Plan` of an event tree (model objects) under a relation;
    raises :class:`Unsupported` with the reason for anything without a proved
    pair."""
    r = relation(rel)
    plan = Plan(r)
    zc = [Fraction(0), Fraction(0)]
    has_zc = False
    gauss_for_rdp: list = []
    #: block index per step kind: one node (a leaf, or its sampling wrapper) met again anywhere in the
    #: tree is the same step, so its count joins the block already made (composition commutes: the
    #: product of the steps' pairs does not depend on their order, AFA Thm 10), and the work is per
    #: distinct step kind, not per leaf (model events are frozen value objects, equal when their
    #: parameters are; the pair is a function of the node, the rate and the relation alone)
    kinds: dict = {}

    def add_block(key: Any, make: Callable[[str], Any], times: int, label: str, theorem: str,
                  realised: Optional[Callable[[str], Any]] = None) -> None:
        at = kinds.get(key)
        if at is None:
            if len(plan.blocks) >= EVENT_MAX_LEAVES:  # refused at the first kind too many, not after the walk
                _too_many_kinds()
            kinds[key] = len(plan.blocks)
            plan.blocks.append(Block(make, times, label, theorem, realised))
        else:
            b = plan.blocks[at]
            plan.blocks[at] = Block(b.make_pair, b.count + times, b.label, b.theorem, b.realised)

    def walk(ev: Any, times: int) -> None:
        nonlocal has_zc
        if times > MAX_STEPS:
            raise InvalidParameter("events", f"the event tree repeats a mechanism {times} times (the counts multiplied along its nesting); at most {MAX_STEPS} are supported")
        if times == 0 or isinstance(ev, E.NoOp):
            return
        if isinstance(ev, E.NonPrivate):
            plan.non_private = True
            return
        if isinstance(ev, E.SelfComposed):
            walk(ev.event, times * ev.count)
            return
        if isinstance(ev, E.Composed):
            # equal events are one leaf repeated (composition commutes: the product of the
            # steps' pairs does not depend on their order), so a per-step compose of one
            # event, dp_accounting's usual loop, is one leaf and not one per step (model events
            # are frozen value objects, equal when their parameters are)
            for e, c in Counter(ev.events).items():
                walk(e, times * c)
            return
        if isinstance(ev, E.ZCDp):
            has_zc = True
            zc[0] += times * ev.rho
            zc[1] += times * ev.xi
            return
        if isinstance(ev, E.PoissonSampled):
            q = ev.sampling_probability
            if q == 0:
                return  # nothing is ever sampled: no privacy cost
            inner = ev.event
            if isinstance(inner, (E.PoissonSampled, E.SampledWithoutReplacement, E.SelfComposed, E.Composed)):
                raise Unsupported("PoissonSampled must wrap a single mechanism event (sampling once and "
                                  "composing several mechanisms on the same batch has no pair here)")
            if isinstance(inner, E.BallsInBins):
                raise Unsupported(BALLS_IN_BINS_WHOLE)
            if isinstance(inner, E.NoOp):
                return
            if isinstance(inner, E.NonPrivate):
                plan.non_private = True
                return
            if isinstance(inner, E.ZCDp):
                raise Unsupported("a Poisson-sampled zCDP event has no dominating pair (RDP does not give one)")
            got = _leaf_pair(inner, q, r)
            if got is not None:
                add_block(ev, got[0], times, f"poisson({q}) {type(inner).__name__}", got[1])
                if isinstance(inner, E.Gaussian) and q == 1:
                    gauss_for_rdp.append((inner.noise_multiplier, times))
                else:
                    plan.rdp_only.append(type(inner).__name__)
            return
        if isinstance(ev, E.BallsInBins):
            raise Unsupported(BALLS_IN_BINS_WHOLE)
        if isinstance(ev, E.SampledWithoutReplacement):
            if ev.sample_size == 0:
                return
            mk, th = _wor(ev, r)
            if r is Relation.REPLACE_ONE and ev.sample_size < ev.source_dataset_size:
                # AFA Cor 32's pair has the curve max(H_remove, H_add): tight for one step
                # alone, but the maximum of two curves realised by different neighbours, so
                # its composition is not known to be attained by any pair of datasets
                plan.upper_only.append(WOR_UPPER_ONLY)
            realised = None
            if r is Relation.REPLACE_ONE and isinstance(ev.event, (E.Gaussian, E.Laplace)):
                plan.wor_sizes.add(ev.source_dataset_size)
                realised = _realised_wor(ev)
            add_block(ev, mk, times, f"wor({ev.sample_size}/{ev.source_dataset_size}) {type(ev.event).__name__}",
                      th, realised)
            plan.rdp_only.append("SampledWithoutReplacement")
            return
        got = _leaf_pair(ev, Fraction(1), r)
        if got is not None:
            # a Gaussian or Laplace step on the whole dataset: its replace-one pair is attained by
            # the same dataset pair as the without-replacement steps (Plan.realised_steps)
            tight = got[0] if isinstance(ev, (E.Gaussian, E.Laplace)) else None
            add_block(ev, got[0], times, type(ev).__name__, got[1], tight)
            if isinstance(ev, E.Gaussian):
                gauss_for_rdp.append((ev.noise_multiplier, times))
            else:
                plan.rdp_only.append(type(ev).__name__)

    walk(event, 1)
    if plan.total_steps > MAX_STEPS:
        raise InvalidParameter("count", f"count: {plan.total_steps} steps in total; at most {MAX_STEPS} are supported")
    if has_zc:
        if plan.rdp_only:
            raise Unsupported(
                "a zCDP event can only be composed with zCDP and plain Gaussian events: an RDP bound does not "
                "give a dominating pair (AFA Fig. 1), so it cannot enter the PLD composition with "
                + ", ".join(sorted(set(plan.rdp_only))))
        if r is Relation.REPLACE_SPECIAL:
            raise Unsupported("zCDP events under replace-special are not supported: a ZCDpEvent states its "
                              "Renyi bound for the neighbours of its author (Bun, Steinke 2016 Def 1.1), and no "
                              "theorem carries it to the replace-special relation")
        # Gaussian with shift mu is (mu^2/2)-zCDP exactly (Mironov 2017 Prop 7)
        for z, t in gauss_for_rdp:
            mu = (2 if r is Relation.REPLACE_ONE else 1) / z
            zc[0] += t * mu * mu / 2
        plan.zcdp = (zc[0], zc[1])
        plan.blocks = []
    return plan
