"""Opacus accountant under the name ``"dpverify"`` (``import dpverify.accountants``
registers it whenever Opacus is installed): ``PrivacyEngine(accountant="dpverify")``,
``make_private_with_epsilon`` and ``opacus.accountants.utils.get_noise_multiplier(...,
accountant="dpverify")`` then run on certified enclosures.

Poisson sampling. History has Opacus' own shape [(noise_multiplier, sample_rate,
steps)], merged as Opacus' RDP and PRV accountants merge it, so ``state_dict``
works unchanged. Each entry is ``steps`` Poisson-subsampled Gaussian steps
under add-remove (Opacus' noise multiplier = sigma / max_grad_norm, the
per-record bound); ``get_epsilon`` returns the upper end of a certified
enclosure, rounded up. ``get_noise_multiplier(..., accountant="dpverify")``
(also what ``make_private_with_epsilon`` calls) keeps Opacus' contract with
fewer certified evaluations (:func:`get_noise_multiplier`): a float model
proposes the multiplier, and it is returned only once this accountant's
``get_epsilon`` at it, a certified upper end, is below the target and within
the tolerance of it: the noise multiplier certainly meets the target.

Shuffling. ``make_private(poisson_sampling=False)`` keeps the caller's
DataLoader: a permutation per epoch cut into fixed batches (RandomSampler), or
a fixed order (SequentialSampler). Opacus tells its accountant only a sample
rate, so registering the accountant also wraps ``PrivacyEngine.make_private``
(for engines whose accountant is this one; other engines are untouched): the
data loader make_private *returns* is handed to the accountant. An Opacus
``DPDataLoader`` is Poisson sampling; a plain DataLoader is read for its
dataset size n, batch size B and sampler, and its optimizer steps are recorded
in :attr:`shuffled`, never as Poisson steps, with the passes over the loader
they were taken in (its batch sampler counts the passes started). ``get_epsilon`` then returns the
upper end of the certified shuffle bracket of :func:`dpverify.sampling.shuffle_bracket`
(no amplification: every record is in exactly one batch per epoch, AFA Thm 10;
see :mod:`dpverify.sampling.shuffle`), never the Poisson number, which does not
bound a shuffled run (Chua et al., ICML 2024). :meth:`bracket` gives both ends
and their certificates. A pass over the loader (a new permutation) puts a
record in at most one of its batches, so a run whose steps fell into P passes
is bounded above by P epochs (dropping the batches a pass did not reach is a
post-processing); its F complete passes (T = ceil(n / B) steps each) are a
part of its transcript, so the F-epoch lower end bounds it below. A pass with
more than T steps (batches of several passes interleaved) is refused.

The relation of a shuffled run is replace-special by default (one record's
clipped gradient replaced by 0; n and the batch layout unchanged, sensitivity
C): a DataLoader re-cuts its batches when a record is removed, which the
add-remove bound of :mod:`dpverify.sampling.shuffle` does not cover (it assumes
a fixed layout). Set :attr:`shuffle_neighboring` to "replace-one"
(sensitivity 2C) or "add-remove" (fixed-layout convention) to choose another.

A run with both Poisson steps (a DPDataLoader) and shuffled steps (one shuffled
configuration) is answered by a bracket too (:data:`MIXED_THEOREMS`): the upper
end is the certified epsilon of the tree [the Poisson steps, one Gaussian step
per shuffled pass] (AFA Thm 10 after conditioning on the permutations, joint
convexity for the mixture), the lower end the larger of the Poisson part's and
the complete shuffled passes' certified lower ends (dropping the other part's
outputs is a post-processing); relation replace-special or add-remove.

Refused, with the reason (InvalidParameter, a ValueError as Opacus raises):
a sampler other than RandomSampler without replacement or SequentialSampler,
``drop_last`` with a partial last batch, gradient accumulation over shuffled
batches, several shuffled configurations, Poisson and shuffled steps under
replace-one. ``make_private_with_epsilon(poisson_sampling=False)`` calibrates
the noise on the certified shuffle upper end, not on Opacus' Poisson rate.
"""

from __future__ import annotations

import functools
import numbers
from fractions import Fraction
from typing import Any, Callable, Optional

from opacus.accountants import IAccountant, register_accountant

from ..ball import arb_to_fraction, lower_decimal, parse_exact, upper_decimal, working_precision
from .. import _validate as V
from ..errors import InvalidParameter, shown
from ..limits import MAX_STEPS
from ..events import api as A
from ..events import model as E
from .dp_accounting_adapter import _float_up, _fraction_float

__all__ = ["DpverifyOpacusAccountant", "MIXED_THEOREMS", "get_noise_multiplier", "register_opacus",
           "data_loader_sampling", "shuffle_noise_multiplier"]

#: Opacus' PRV accountant's default accuracy, used here too (absolute width of eps).
DEFAULT_EPS_ERROR = 0.01
#: relative width of the first (cheap) enclosure; a finer one follows only when
#: this one is wider than eps_error in absolute terms
_COARSE_REL_WIDTH = 1e-1
#: shuffled runs' schemes: DataLoader sampler -> dpverify.sampling scheme whose bracket applies
_SCHEMES = {"shuffle": "shuffle", "fixed-order": "shuffle-persistent"}
_SHUFFLE_RELATIONS = ("replace-special", "replace-one", "add-remove")

_CACHE_SIZE = 256


def _poisson_tree(history: Any) -> Any:
    """The event tree of a Poisson history [(noise_multiplier, sample_rate, steps)], exact values."""
    parts = []
    for z, q, n in history:
        zz, qq = parse_exact(z, "noise_multiplier"), parse_exact(q, "sample_rate")
        inner = E.NonPrivate() if zz == 0 else E.Gaussian(zz)
        parts.append(E.SelfComposed(inner if qq == 1 else E.PoissonSampled(qq, inner), int(n)))
    return E.Composed(tuple(parts))


@functools.lru_cache(maxsize=_CACHE_SIZE)
def _poisson_enclosure(history: tuple, delta: float, rel_width: float) -> Any:
    """Certified enclosure for a Poisson history (a pure function of exact inputs:
    Opacus' bisection asks the same history twice, and the answer is deterministic)."""
    return A.epsilon(_poisson_tree(history), delta, neighboring="add-remove", rel_width=rel_width)


#: the relative width of the mixed run's enclosures (their width is far below the gap between the ends)
_MIXED_REL_WIDTH = 1e-3

#: the theorems behind the bracket of a run with Poisson and shuffled steps (:meth:`DpverifyOpacusAccountant.bracket`)
MIXED_THEOREMS = (
    "upper end: condition on the permutations of the passes (drawn independently of the data and of the "
    "outputs). Given them the run is an adaptive sequence of steps: each Poisson step is dominated by the "
    "Poisson-subsampled Gaussian pair (AFA Thm 11 (1), per direction); a shuffled step whose batch does not "
    "hold the differing record has the same law under both datasets given the past; the record is in at most "
    "one batch of each pass, and that step is a Gaussian mechanism of sensitivity C, dominated by "
    "(N(0, 1), N(1/z, 1)) (replace-special, or add/remove in the fixed-layout convention). Adaptive composition "
    "of dominating pairs (AFA Thm 10) bounds the conditional run by the product pair of the tree "
    "[the Poisson steps, P x Gaussian(z)] under the same relation, per direction; the hockey-stick divergence "
    "is jointly convex, so the mixture over permutations is bounded by the same pair",
    "lower end: dropping outputs is a post-processing (DP's post-processing inequality), so the run's "
    "epsilon(delta) is at least that of its Poisson steps alone (a tight pair: AFA Thm 11 Remark, realised by "
    "a record of gradient +1 at every step against a zero-gradient one) and at least that of its F complete "
    "shuffled passes alone (the concrete max-of-batch-sums pair, Chua et al. 2024); the larger of the two "
    "certified lower ends",
)


class _Passes:
    """Passes started over one batch sampler (``iter`` calls)."""

    def __init__(self) -> None:
        self.started = 0


def _count_passes(bs: Any) -> _Passes:
    """Make a BatchSampler count its passes (idempotent): its class becomes a
    subclass whose ``__iter__`` counts, then iterates as before."""
    counter = getattr(bs, "_dpverify_passes", None)
    if counter is None:
        counter = _Passes()
        base = type(bs)

        def __iter__(self: Any) -> Any:
            counter.started += 1
            return base.__iter__(self)

        bs.__class__ = type("PassCountingBatchSampler", (base,), {"__iter__": __iter__})
        bs._dpverify_passes = counter
    return counter


def _plain_type(bs: Any) -> type:
    return type(bs).__mro__[1] if hasattr(bs, "_dpverify_passes") else type(bs)


def data_loader_sampling(loader: Any) -> tuple:
    """How a data loader samples its batches, from its objects:
    ("poisson", q) for Opacus' DPDataLoader; ("shuffle" | "fixed-order", n, B)
    for a plain DataLoader whose batch sampler is torch's BatchSampler over a
    RandomSampler without replacement (a new permutation each epoch) or a
    SequentialSampler. Anything else raises InvalidParameter with the reason."""
    from opacus.data_loader import DPDataLoader
    from torch.utils.data import BatchSampler, IterableDataset, RandomSampler, SequentialSampler

    if isinstance(loader, DPDataLoader):
        return ("poisson", loader.sample_rate)
    what = "poisson_sampling=False"
    if isinstance(getattr(loader, "dataset", None), IterableDataset):
        raise InvalidParameter(what, "an IterableDataset has no fixed size: no bound on its batches is proved")
    bs = getattr(loader, "batch_sampler", None)
    if _plain_type(bs) is not BatchSampler:
        raise InvalidParameter(what, f"the data loader's batch sampler is {type(bs).__name__}; the shuffle "
                                     "bracket covers torch's BatchSampler (fixed batch size) only")
    s = bs.sampler
    n = len(loader.dataset)
    if type(s) is RandomSampler:
        if s.replacement or s.num_samples != n:
            raise InvalidParameter(what, "a RandomSampler with replacement or num_samples != len(dataset) does "
                                         "not put every record in exactly one batch per epoch, which the shuffle "
                                         "bracket assumes")
        scheme = "shuffle"
    elif type(s) is SequentialSampler:
        scheme = "fixed-order"
    else:
        raise InvalidParameter(what, f"the sampler is {type(s).__name__}; the shuffle bracket covers "
                                     "RandomSampler (shuffle=True) and SequentialSampler (shuffle=False)")
    B = int(bs.batch_size)
    if bs.drop_last and n % B:
        raise InvalidParameter(what, f"drop_last=True drops {n % B} records per epoch (n={n}, batch size {B}): "
                                     "a record may be in no batch of an epoch, which the shuffle bracket does "
                                     "not cover; use drop_last=False")
    return (scheme, n, B)


class _Stream:
    """One optimizer hook from make_private, and what the returned loader says."""

    def __init__(self, sample_rate: float) -> None:
        self.sample_rate = sample_rate
        self.sampling: Optional[tuple] = None
        self.passes: Optional[_Passes] = None
        self.last_pass = -1  # the pass of the previous step
        self.in_pass = 0  # steps so far in that pass


class DpverifyOpacusAccountant(IAccountant):
    """Certified accountant for Opacus: Poisson sampling (add-remove) as a
    certified PLD enclosure, shuffled batches as the certified shuffle bracket's
    upper end (see the module docstring)."""

    #: relation of shuffled runs (see the module docstring)
    shuffle_neighboring: str = "replace-special"

    def __init__(self) -> None:
        super().__init__()
        #: shuffled steps: [noise_multiplier, dataset_size, batch_size, scheme, accumulated, steps,
        #: passes with a step, complete passes, most steps in one pass]
        self.shuffled: list[list] = []
        self._streams: list[_Stream] = []

    def step(self, *, noise_multiplier: float, sample_rate: float) -> None:
        if self.history and self.history[-1][0] == noise_multiplier and self.history[-1][1] == sample_rate:
            z, q, n = self.history.pop()
            self.history.append((z, q, n + 1))
        else:
            self.history.append((noise_multiplier, sample_rate, 1))

    def _shuffled_step(self, noise_multiplier: float, stream: _Stream, accumulated: int) -> None:
        scheme, n, B = stream.sampling  # type: ignore[misc]
        key = [noise_multiplier, n, B, scheme, int(accumulated)]
        if not (self.shuffled and self.shuffled[-1][:5] == key):
            self.shuffled.append(key + [0, 0, 0, 0])
            stream.last_pass = -1  # a new entry counts its passes afresh
        e = self.shuffled[-1]
        e[5] += 1
        p = stream.passes.started  # type: ignore[union-attr]
        if p != stream.last_pass:
            stream.last_pass, stream.in_pass = p, 0
            e[6] += 1
        stream.in_pass += 1
        e[8] = max(e[8], stream.in_pass)
        if stream.in_pass == -(-n // B):
            e[7] += 1

    def answer(self, delta: float, rel_width: float = 1e-4) -> A.EventAnswer:
        """The certified answer (enclosure, theorems) for the Poisson history at a relative width."""
        if self.shuffled:
            raise InvalidParameter("history", "this run has shuffled batches: use bracket(delta)")
        return _poisson_enclosure(tuple(tuple(h) for h in self.history), delta, rel_width)

    # ----------------------------------------------------------------- shuffled runs

    def _shuffle_runs(self) -> tuple[Any, int, int]:
        """(the entry, epochs above, epochs below) of the one shuffled configuration."""
        if len(self.shuffled) > 1:
            raise InvalidParameter("poisson_sampling", "shuffled steps with several noise multipliers or data "
                                   "loaders; the shuffle bracket covers one configuration per run")
        z, n, B, scheme, acc, steps, passes, full, most = self.shuffled[0]
        if acc != 1:
            raise InvalidParameter("poisson_sampling", f"gradient accumulation over {acc} shuffled batches: one "
                                   "noisy step then sums several batches, and across epochs a record's batches "
                                   "may fall into one step, which the shuffle bracket does not cover")
        if most > -(-n // B):
            raise InvalidParameter("poisson_sampling", f"{most} steps in one pass over a loader of "
                                   f"{-(-n // B)} batches: batches of several passes were interleaved, so a "
                                   "record may be in more batches than passes, which the bound counts")
        return self.shuffled[0], passes, full

    def bracket(self, delta: Any) -> dict[str, Any]:
        """Certified bracket {lo, hi} of epsilon(delta) of the shuffled run so far
        (decimal strings: lo rounded down, hi rounded up), with the scheme, the
        relation, the epochs each end is for, and the certificates that
        ``dpverify verify`` re-checks. ``lo`` is attained by a concrete dataset
        pair (Chua et al. 2024): a claimed epsilon below it is false for this run.
        For "shuffle" it assumes each pass draws a fresh permutation (the sampler's
        own randomness); a generator re-seeded to one state every epoch runs
        persistent shuffling, for which ``hi`` (and get_epsilon) still holds.
        A run that also has Poisson steps answers :meth:`_mixed_bracket`'s bracket
        (sampling "poisson+shuffle", theorems in ``b["theorems"]``)."""
        from ..sampling import shuffle_bracket

        if self.history:
            return self._mixed_bracket(delta)
        (z, n, B, scheme, _, steps, *_), e_hi, e_lo = self._shuffle_runs()
        kw = dict(delta=delta, persistent=_SCHEMES[scheme] == "shuffle-persistent",
                  neighboring=self.shuffle_neighboring)
        hi = shuffle_bracket(z, n, B, e_hi, **kw)
        lo = hi if e_lo == e_hi else (shuffle_bracket(z, n, B, e_lo, **kw) if e_lo >= 1 else None)
        return {"lo": "0" if lo is None else lo["lo"], "hi": hi["hi"], "sampling": hi["sampling"],
                "neighboring": hi["neighboring"], "steps": steps, "epochs_hi": e_hi, "epochs_lo": e_lo,
                "certificates": [hi["certificate"]] + ([] if lo is None or lo is hi else [lo["certificate"]])}

    def _mixed_tree(self) -> tuple[Any, Any, str]:
        """(the tree that dominates the run, its Poisson part, the relation) for a run with
        Poisson and shuffled steps (MIXED_THEOREMS): the Poisson history's steps and one
        unsampled Gaussian step per pass of the shuffled configuration."""
        from ..sampling import shuffle as S

        (z, n, B, scheme, *_), e_hi, _ = self._shuffle_runs()
        rel = self.shuffle_neighboring
        if rel not in ("replace-special", "add-remove"):
            raise InvalidParameter("shuffle_neighboring", f"shuffle_neighboring={rel!r} with Poisson steps in the "
                                   "same run: no dominating pair of a Poisson-sampled step is proved under "
                                   "replace-one, so the run's bracket covers replace-special and add-remove only "
                                   "(allowed: 'replace-special', 'add-remove')")
        S.run(z, n, B, e_hi, _SCHEMES[scheme], rel)  # the shuffled part's own conditions (n, B, the relation)
        poisson = _poisson_tree(self.history)
        shuffled = E.SelfComposed(E.Gaussian(parse_exact(z, "noise_multiplier")), e_hi)
        return E.Composed(poisson.events + (shuffled,)), poisson, rel

    def _mixed_bracket(self, delta: Any) -> dict[str, Any]:
        """The bracket of a run with Poisson and shuffled steps (MIXED_THEOREMS): the upper
        end is the dominating tree's certified epsilon (kind events.epsilon, the tree in
        inputs.event), the lower end the larger of the Poisson part's certified lower end
        (events.epsilon of that part) and the complete passes' shuffle lower end
        (shuffle.epsilon); every certificate is re-checked by ``dpverify verify``."""
        from ..certificate.events_cert import answer_certificate
        from ..certificate.writer import handed_out
        from ..sampling import shuffle_bracket

        tree, poisson, rel = self._mixed_tree()
        (z, n, B, scheme, _, steps, *_), e_hi, e_lo = self._shuffle_runs()
        up = A.epsilon(tree, delta, neighboring=rel, rel_width=_MIXED_REL_WIDTH)
        low_p = A.epsilon(poisson, delta, neighboring=rel, rel_width=_MIXED_REL_WIDTH)
        certs = [handed_out(answer_certificate(tree, up, delta=delta)),
                 handed_out(answer_certificate(poisson, low_p, delta=delta))]
        out = {"sampling": f"poisson+{_SCHEMES[scheme]}", "neighboring": rel,
               "steps": steps + sum(int(h[2]) for h in self.history),
               "poisson_steps": sum(int(h[2]) for h in self.history), "shuffled_steps": steps,
               "epochs_hi": e_hi, "epochs_lo": e_lo, "theorems": list(MIXED_THEOREMS), "certificates": certs}
        if not low_p.enclosure.lo.is_finite():  # a non-private Poisson step (noise 0): epsilon is inf
            return {"lo": "inf", "hi": "inf", "lower_end": "poisson", **out}
        with working_precision(256):
            hi = upper_decimal(up.enclosure.hi, 10)
            lo_p = lower_decimal(low_p.enclosure.lo, 10)
        lo, which = lo_p, "poisson"
        if e_lo >= 1:
            sb = shuffle_bracket(z, n, B, e_lo, delta=delta, persistent=_SCHEMES[scheme] == "shuffle-persistent",
                                 neighboring=rel)
            certs.append(sb["certificate"])
            if Fraction(sb["lo"]) > Fraction(lo):
                lo, which = sb["lo"], "shuffle"
        return {"lo": lo, "hi": hi, "lower_end": which, **out}

    def _shuffled_epsilon(self, delta: Any) -> float:
        """Upper end of the shuffle bracket (the same number as ``bracket(delta)["hi"]``,
        without computing the lower end), rounded up to a float."""
        from ..sampling import shuffle as S

        if self.history:
            tree, _, rel = self._mixed_tree()
            enc = A.epsilon(tree, delta, neighboring=rel, rel_width=_MIXED_REL_WIDTH).enclosure
            if not enc.hi.is_finite():  # a non-private Poisson step (noise 0)
                return float("inf")
            with working_precision(256):  # the same decimal as bracket(delta)["hi"], rounded up to a float
                return _fraction_float(Fraction(upper_decimal(enc.hi, 10)), up=True)

        (z, n, B, scheme, *_), e_hi, _ = self._shuffle_runs()
        r = S.run(z, n, B, e_hi, _SCHEMES[scheme], self.shuffle_neighboring)
        hi, _ = S.upper_eps(r, parse_exact(delta, "delta"))
        with working_precision(256):
            return _fraction_float(Fraction(upper_decimal(hi, 10)), up=True)

    # ----------------------------------------------------------------- Opacus' interface

    def get_epsilon(self, delta: float, eps_error: Optional[float] = None, rel_width: Optional[float] = None,
                    alphas: Any = None, delta_error: Any = None, **kwargs: Any) -> float:
        """Certified upper bound of epsilon(delta) so far, rounded up (0 before any step).

        Poisson history: the upper end of a certified enclosure at most
        ``eps_error`` wide (absolute, as Opacus' PRV accountant; default 0.01)
        or ``rel_width`` wide (relative). Shuffled run: the upper end of the
        certified shuffle bracket (its width is the gap between the proved
        ends, not an accuracy; eps_error and rel_width do not change it).
        ``alphas`` (RDP orders) and ``delta_error`` have no meaning for a
        certified answer and are refused rather than ignored, as is any other
        keyword."""
        if alphas is not None:
            raise InvalidParameter("alphas", "alphas are RDP orders; the dpverify accountant composes privacy "
                                   "loss distributions with certified error and has no orders to choose: "
                                   "drop alphas (use the 'rdp' accountant for an RDP bound)")
        if delta_error is not None:
            raise InvalidParameter("delta_error", "delta_error trades delta for speed in the PRV accountant; "
                                   "the dpverify accountant answers for the exact delta given: drop "
                                   "delta_error (eps_error or rel_width set the accuracy)")
        if kwargs:
            raise InvalidParameter(next(iter(kwargs)), f"unknown argument(s) {sorted(kwargs)} for the dpverify "
                                   "accountant's get_epsilon (allowed: delta, eps_error, rel_width)")
        if eps_error is not None and rel_width is not None:
            raise InvalidParameter("eps_error", "give eps_error or rel_width, not both")
        # rounded down: the coarse enclosure is accepted only when it is at most eps_error wide
        err = DEFAULT_EPS_ERROR if eps_error is None else _fraction_float(V.positive("eps_error", eps_error), up=False)
        if rel_width is not None:  # the range the event API reads it in (pld.dpsgd), checked before any work
            rel_width = V.relative_width(rel_width, "1e-8", "1", hi_open=True)
        if self.shuffled:
            return self._shuffled_epsilon(delta)
        if not self.history:
            return 0.0
        if rel_width is not None:
            return _float_up(self.answer(delta, rel_width).enclosure.hi)
        # a coarse enclosure first: when epsilon is small its absolute width is already
        # below eps_error (a relative 1e-2 on eps = 0.05 cost minutes at 10^5 steps)
        enc = self.answer(delta, _COARSE_REL_WIDTH).enclosure
        hi = _float_up(enc.hi)
        # the width against the lower end rounded down: never below the true width
        if hi == float("inf") or hi - _fraction_float(arb_to_fraction(enc.lo), up=False) <= err:
            return hi
        # relative width err / hi suffices: the fine enclosure's absolute width is at most
        # rel * (its lower end) <= rel * (true eps) <= rel * hi = err
        return _float_up(self.answer(delta, max(1e-8, min(1e-2, err / hi))).enclosure.hi)

    def __len__(self) -> int:
        """Number of history entries (Poisson and shuffled), as Opacus' RDP and PRV accountants count."""
        return len(self.history) + len(self.shuffled)

    @classmethod
    def mechanism(cls) -> str:
        return "dpverify"

    def get_optimizer_hook_fn(self, sample_rate: float) -> Callable:
        """Opacus' hook. A hook from make_private learns the data loader make_private
        returned (see :func:`register_opacus`): shuffled batches are recorded as a
        shuffled run, never as Poisson steps. A hook whose loader is unknown (built
        outside make_private) records Poisson steps at ``sample_rate``, Opacus'
        contract for this hook."""
        stream = _Stream(sample_rate)
        self._streams.append(stream)

        def hook_fn(optim: Any) -> None:
            k = optim.accumulated_iterations
            if stream.sampling is not None and stream.sampling[0] != "poisson":
                self._shuffled_step(optim.noise_multiplier, stream, k)
            else:
                self.step(noise_multiplier=optim.noise_multiplier, sample_rate=sample_rate * k)

        return hook_fn

    def _bind(self, stream: _Stream, loader: Any) -> None:
        stream.sampling = data_loader_sampling(loader)
        if stream.sampling[0] != "poisson":
            stream.passes = _count_passes(loader.batch_sampler)

    def state_dict(self, destination: Any = None) -> Any:
        destination = super().state_dict(destination)
        destination["shuffled"] = [list(e) for e in self.shuffled]
        return destination

    def load_state_dict(self, state_dict: Any) -> None:
        """Opacus' checks, and the shuffled entries checked one by one (ValueError
        naming the entry): a checkpoint is input, not trusted."""
        super().load_state_dict(state_dict)
        shuffled = state_dict.get("shuffled", [])
        if not isinstance(shuffled, list):
            raise InvalidParameter("shuffled", "state_dict['shuffled'] must be a list")
        out = []
        for i, e in enumerate(shuffled):
            ok = (isinstance(e, (list, tuple)) and len(e) == 9 and isinstance(e[0], (int, float))
                  and not isinstance(e[0], bool) and e[0] > 0
                  and all(type(v) is int and v >= 1 for v in (e[1], e[2], e[4], e[5], e[6], e[8]))
                  and type(e[7]) is int and e[2] <= e[1] and e[3] in _SCHEMES
                  and 0 <= e[7] <= e[6] <= e[5] and e[8] <= e[5])
            if not ok:
                raise InvalidParameter(f"shuffled[{i}]", f"state_dict['shuffled'][{i}]={e!r} is not "
                                       "[noise_multiplier > 0, dataset_size, batch_size <= dataset_size, "
                                       f"scheme in {sorted(_SCHEMES)}, accumulated >= 1, steps >= 1, "
                                       "passes in [1, steps], complete passes in [0, passes], "
                                       "most steps in a pass in [1, steps]]")
            out.append(list(e))
        self.shuffled = out


def shuffle_noise_multiplier(target_epsilon: Any, target_delta: Any, sampling: tuple, epochs: Any,
                             neighboring: str = "replace-special", epsilon_tolerance: float = 0.01) -> float:
    """A noise multiplier whose certified shuffle upper end for ``epochs`` full
    epochs is <= target_epsilon, within epsilon_tolerance of it (Opacus'
    bisection, on certified upper ends: the upper end is the Gaussian eps of
    mu = Delta sqrt(E) / sigma, decreasing in sigma, so the float bisection only
    chooses; each kept value is proved to meet the target). Every option is checked before any
    work (InvalidParameter naming it); a tolerance finer than the certified upper ends resolve
    is refused once no float z is left between the bisection's ends."""
    from ..sampling import shuffle as S

    if not (isinstance(sampling, tuple) and len(sampling) == 3 and isinstance(sampling[0], str)
            and sampling[0] in _SCHEMES):
        raise InvalidParameter("sampling", f"sampling={shown(sampling)} must be (scheme, dataset_size, batch_size) "
                                           f"with scheme in {sorted(_SCHEMES)} (data_loader_sampling's answer)")
    scheme, n, B = sampling
    # every option checked before any work (a NaN target or tolerance stopped nothing, a negative
    # tolerance never ended the bisection); the floats rounded down: a z kept below the float
    # target meets the exact one
    target = _fraction_float(V.positive("target_epsilon", target_epsilon), up=False)
    D = V.open_unit("target_delta", target_delta)
    tolerance = _fraction_float(V.positive("epsilon_tolerance", epsilon_tolerance), up=False)
    S.run(1, n, B, epochs, _SCHEMES[scheme], neighboring)  # dataset_size, batch_size, epochs, neighboring

    def upper(z: float) -> float:
        hi, _ = S.upper_eps(S.run(z, n, B, epochs, _SCHEMES[scheme], neighboring), D)
        with working_precision(256):
            return _fraction_float(Fraction(upper_decimal(hi, 10)), up=True)

    low, high, eps_high = 0.0, 10.0, upper(10.0)
    while eps_high > target:
        high *= 2
        if high > 1e6:
            raise InvalidParameter("target_epsilon", f"target_epsilon={target_epsilon!r} needs a noise "
                                   "multiplier above 1e6 for this shuffled run (Opacus' limit)")
        eps_high = upper(high)
    while target - eps_high > tolerance:
        mid = (low + high) / 2
        if not low < mid < high:  # no float z left between them: at most ~1100 halvings, then refused
            raise InvalidParameter("epsilon_tolerance", f"epsilon_tolerance={shown(epsilon_tolerance)} cannot be "
                                   f"met: no float lies between z={low!r} (certified epsilon above the target) and "
                                   f"z={high!r} (certified epsilon {eps_high!r}, further below the target); "
                                   "give a larger tolerance")
        e = upper(mid)
        if e <= target:
            high, eps_high = mid, e
        else:
            low = mid
    return high


def get_noise_multiplier(*, target_epsilon: float, target_delta: float, sample_rate: float,
                         epochs: Optional[int] = None, steps: Optional[int] = None,
                         epsilon_tolerance: float = 0.01, **kwargs: Any) -> float:
    """Opacus' ``get_noise_multiplier(..., accountant="dpverify")`` (registering the
    accountant routes that call here): the same contract, a noise multiplier z
    whose epsilon, as this accountant's ``get_epsilon(target_delta, **kwargs)``
    returns it at history [(z, sample_rate, steps)] (a certified upper end), is
    below ``target_epsilon`` and within ``epsilon_tolerance`` of it. Opacus'
    bisection spends about a dozen certified evaluations; here a float model of
    the same discretisation proposes z and certified evaluations only confirm
    it (:func:`dpverify.calibration.tolerance.noise_to_tolerance`: one or two). Every option,
    and the keywords of get_epsilon, is checked before any work (InvalidParameter naming it:
    finite, > 0, target_delta in (0, 1), sample_rate in (0, 1], 1 <= steps <= MAX_STEPS)."""
    from ..calibration.tolerance import FloatModel, noise_to_tolerance

    if (steps is None) == (epochs is None):
        raise ValueError("get_noise_multiplier takes as input EITHER a number of steps or a number of epochs")
    # every option checked before any work (a NaN target was reported as a bad epsilon_tolerance);
    # the floats rounded down: a z kept below the float target meets the exact one
    target = _fraction_float(V.positive("target_epsilon", target_epsilon), up=False)
    delta = V.open_unit("target_delta", target_delta)
    q = V.half_open_unit("sample_rate", sample_rate)
    tolerance = _fraction_float(V.positive("epsilon_tolerance", epsilon_tolerance), up=False)
    if epochs is not None:  # (then steps is None)
        # Opacus' rule, steps = int(epochs / sample_rate) in floats (exact for float inputs; others
        # rounded toward more steps); 0.001 epochs gave 0 steps silently
        ratio = _fraction_float(V.positive("epochs", epochs), up=True) / _fraction_float(q, up=False)
        if not 1 <= ratio < MAX_STEPS + 1:
            raise InvalidParameter("epochs", f"epochs={shown(epochs)} at sample_rate={shown(sample_rate)} gives "
                                   f"steps = int(epochs / sample_rate) = int({ratio:.6g}); allowed 1..{MAX_STEPS}")
        steps = int(ratio)
    # a NumPy integer as its value (V.integer reads Python ints and decimal strings)
    if isinstance(steps, numbers.Integral) and not isinstance(steps, bool):
        steps = int(steps)
    steps = V.integer("steps", steps, lo=1, hi=MAX_STEPS)
    acc = DpverifyOpacusAccountant()
    acc.get_epsilon(delta=target_delta, **kwargs)  # the keywords checked on an empty history (no work: 0.0)

    def upper(z: float) -> float:
        acc.history = [(z, sample_rate, steps)]
        return acc.get_epsilon(delta=target_delta, **kwargs)

    model: Any = None
    try:
        model = FloatModel(_fraction_float(q, up=False), steps, _fraction_float(delta, up=False), target)
    except (ValueError, ArithmeticError, OverflowError):  # no proposals: the search bisects
        model = None
    return noise_to_tolerance(upper, target, tolerance, model=model,
                              guess=model.guess if model is not None else 1.0)


def _route_get_noise_multiplier() -> None:
    """Route ``opacus.accountants.utils.get_noise_multiplier`` (and the name
    ``opacus.privacy_engine`` imported, which make_private_with_epsilon calls) to
    :func:`get_noise_multiplier` when ``accountant == "dpverify"``; every other
    accountant runs Opacus' own function (idempotent). A caller that bound the
    name before this package was imported keeps Opacus' bisection, which is as
    sound with this accountant (each comparison is a certified upper end), only
    slower."""
    import opacus.accountants.utils as utils
    import opacus.privacy_engine as engine

    original = utils.get_noise_multiplier
    if getattr(original, "_dpverify_routed", False):
        return

    @functools.wraps(original)
    def routed(*args: Any, accountant: str = "rdp", **kwargs: Any) -> float:
        if accountant == "dpverify" and not args:
            return get_noise_multiplier(**kwargs)
        return original(*args, accountant=accountant, **kwargs)

    routed._dpverify_routed = True  # type: ignore[attr-defined]
    utils.get_noise_multiplier = routed
    if engine.get_noise_multiplier is original:
        engine.get_noise_multiplier = routed


def _engine_wrappers() -> None:
    """Wrap PrivacyEngine.make_private and make_private_with_epsilon (idempotent).

    make_private: after Opacus' own body, the data loader it returns is handed to
    the hooks it created on this accountant (the only honest witness of the
    sampling: DPDataLoader or the caller's loader). make_private_with_epsilon
    with poisson_sampling=False and a shuffling loader calibrates on the
    certified shuffle upper end (:func:`shuffle_noise_multiplier`) instead of
    Opacus' Poisson bisection, whose multiplier would not meet the target."""
    from opacus import PrivacyEngine

    if getattr(PrivacyEngine.make_private, "_dpverify_wrapped", False):
        return
    make_private, with_epsilon = PrivacyEngine.make_private, PrivacyEngine.make_private_with_epsilon

    @functools.wraps(make_private)
    def wrapped(self: Any, *args: Any, **kwargs: Any) -> Any:
        acc = getattr(self, "accountant", None)
        if not isinstance(acc, DpverifyOpacusAccountant):
            return make_private(self, *args, **kwargs)
        start = len(acc._streams)
        out = make_private(self, *args, **kwargs)
        for stream in acc._streams[start:]:
            acc._bind(stream, out[-1])
        return out

    @functools.wraps(with_epsilon)
    def wrapped_eps(self: Any, *args: Any, **kwargs: Any) -> Any:
        acc = getattr(self, "accountant", None)
        if not isinstance(acc, DpverifyOpacusAccountant) or kwargs.get("poisson_sampling", True) is not False \
                or args or "data_loader" not in kwargs:
            return with_epsilon(self, *args, **kwargs)
        sampling = data_loader_sampling(kwargs["data_loader"])
        if sampling[0] == "poisson":  # a DPDataLoader handed in: Opacus' Poisson calibration applies
            return with_epsilon(self, *args, **kwargs)
        rest = dict(kwargs)
        target_epsilon, target_delta, epochs = rest.pop("target_epsilon"), rest.pop("target_delta"), rest.pop("epochs")
        z = shuffle_noise_multiplier(target_epsilon, target_delta, sampling, epochs, acc.shuffle_neighboring,
                                     rest.pop("epsilon_tolerance", 0.01))
        return self.make_private(noise_multiplier=z, **rest)

    wrapped._dpverify_wrapped = True  # type: ignore[attr-defined]
    PrivacyEngine.make_private = wrapped
    PrivacyEngine.make_private_with_epsilon = wrapped_eps


def register_opacus() -> None:
    """Register the accountant in Opacus' registry, hand make_private's data
    loader to it and route get_noise_multiplier(accountant="dpverify") to
    :func:`get_noise_multiplier` (all idempotent)."""
    register_accountant("dpverify", DpverifyOpacusAccountant, force=True)
    _engine_wrappers()
    _route_get_noise_multiplier()


register_opacus()
