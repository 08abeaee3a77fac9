"""hypothesis strategies for the configurations where accountants are known to
go wrong: tiny delta, large epsilon (little noise), many steps, sampling rates
near 1, and replace-one neighbours (opt-in: the accountant under test must be
told the relation, ``cfg.neighboring``).

:func:`dpsgd_configs` draws :class:`DpsgdConfig` (Opacus / PRV style
(noise multiplier, sampling rate, steps, delta)); :func:`event_trees` draws
dp_accounting DpEvent trees of Poisson-subsampled Gaussian and Laplace steps,
plain Gaussian and Laplace events, self-composed and composed. Every drawn
configuration is one dpverify certifies (its lower end decides
:func:`dpverify.testing.assert_sound`) within seconds: the ranges are bounded
so that a maintainer's suite stays fast (at most 10^5 steps, delta >= 1e-14).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

__all__ = ["DEFAULT_REGIONS", "DpsgdConfig", "dpsgd_configs", "event_trees", "HARD_REGIONS"]

#: The regions and what goes wrong there (for the docs and for ``region=``).
HARD_REGIONS = {
    "tiny-delta": "delta 1e-14 .. 1e-10: tails discretised or truncated too coarsely",
    "large-eps": "noise multiplier 0.3 .. 0.6: epsilon in the tens, loss ranges of many nats",
    "many-steps": "10^4 .. 10^5 steps: discretisation error accumulated over the composition",
    "q-near-1": "sampling rate 0.9 .. 1: the subsampled loss is nearly the Gaussian one, heavy right tail",
    "ordinary": "noise 0.8 .. 4, rate 1e-3 .. 0.1, 1 .. 2000 steps, delta 1e-5 .. 1e-8",
    "replace-one": "replace-one neighbours (sensitivity 2C): a relation the accountant ignores or "
                   "treats as add/remove under-reports; no sampling, or Poisson rate 1e-3 .. 0.1",
}

#: The regions :func:`dpsgd_configs` draws from by default: those whose configurations
#: are add/remove, so that ``assert_sound(eps_fn, cfg.event(), cfg.delta)`` checks the
#: relation every accountant supports. "replace-one" is drawn when asked for.
DEFAULT_REGIONS = ("tiny-delta", "large-eps", "many-steps", "q-near-1", "ordinary")


@dataclass(frozen=True)
class DpsgdConfig:
    """``steps`` Poisson-subsampled Gaussian steps (Opacus' history entry; rate 1 is
    no sampling) for neighbours under ``neighboring`` (dpverify's name, as
    :func:`dpverify.testing.assert_sound` takes it; :meth:`host_relation` gives
    dp_accounting's)."""

    noise_multiplier: float
    sampling_rate: float
    steps: int
    delta: float
    region: str
    neighboring: str = "add-remove"

    def host_relation(self) -> Any:
        """dp_accounting's ``NeighboringRelation`` for :attr:`neighboring`."""
        from dp_accounting.privacy_accountant import NeighboringRelation as NR

        return {"add-remove": NR.ADD_OR_REMOVE_ONE, "replace-one": NR.REPLACE_ONE}[self.neighboring]

    def event(self) -> Any:
        """The dp_accounting DpEvent of the schedule."""
        from dp_accounting import dp_event as d

        inner = d.GaussianDpEvent(self.noise_multiplier)
        step = inner if self.sampling_rate == 1 else d.PoissonSampledDpEvent(self.sampling_rate, inner)
        return d.SelfComposedDpEvent(step, self.steps)

    def history(self) -> list:
        """Opacus' accountant history for the schedule."""
        return [(self.noise_multiplier, self.sampling_rate, self.steps)]


def _round(x: float) -> float:
    return float(f"{x:.3g}")  # short decimals: a failure is easy to read and to replay


def _config(region: str, z: Any, q: Any, t: Any, d: Any, neighboring: str = "add-remove") -> st.SearchStrategy:
    return st.builds(lambda a, b, c, e: DpsgdConfig(_round(a), _round(b), c, e, region, neighboring), z, q, t, d)


def dpsgd_configs(regions: Any = None) -> st.SearchStrategy:
    """DP-SGD schedules drawn from the hard regions (:data:`HARD_REGIONS`),
    one region per draw: ``regions`` names them, by default
    :data:`DEFAULT_REGIONS` (every add/remove region). With "replace-one" pass
    the relation on: ``assert_sound(eps_fn, cfg.event(), cfg.delta,
    neighboring=cfg.neighboring)``, ``eps_fn`` building its accountant for
    ``cfg.host_relation()``."""
    floats = st.floats
    parts = {
        "tiny-delta": _config("tiny-delta", floats(0.8, 4), floats(1e-3, 0.1), st.integers(1, 1000),
                              st.sampled_from([1e-10, 1e-12, 1e-14])),
        "large-eps": _config("large-eps", floats(0.3, 0.6), floats(0.01, 0.2), st.integers(1, 200),
                             st.sampled_from([1e-5, 1e-6])),
        "many-steps": _config("many-steps", floats(1, 4), floats(1e-3, 1e-2), st.integers(10_000, 100_000),
                              st.sampled_from([1e-5, 1e-6])),
        "q-near-1": _config("q-near-1", floats(0.7, 3), floats(0.9, 1.0), st.integers(1, 100),
                            st.sampled_from([1e-5, 1e-7])),
        "ordinary": _config("ordinary", floats(0.8, 4), floats(1e-3, 0.1), st.integers(1, 2000),
                            st.sampled_from([1e-5, 1e-6, 1e-8])),
        # rates near 1 are left out: the replace-one bracket's upper end (group privacy over the
        # add/remove curves) is not certified there within the budget, and the check needs it
        "replace-one": _config("replace-one", floats(0.8, 4), st.one_of(st.just(1.0), floats(1e-3, 0.1)),
                               st.integers(1, 500), st.sampled_from([1e-5, 1e-6]), "replace-one"),
    }
    names = list(DEFAULT_REGIONS) if regions is None else list(regions)
    for n in names:
        if n not in parts:
            raise ValueError(f"region {n!r} is not one of {sorted(parts)}")
    return st.one_of([parts[n] for n in names])


def event_trees(max_leaves: int = 3) -> st.SearchStrategy:
    """dp_accounting DpEvent trees: Poisson-subsampled Gaussian / Laplace
    leaves (rates up to 1), plain Gaussian / Laplace leaves, self-composed up
    to 500 times, composed by up to ``max_leaves`` parts."""
    from dp_accounting import dp_event as d

    z = st.floats(0.5, 4).map(_round)
    q = st.one_of(st.floats(1e-3, 0.1), st.floats(0.9, 1.0)).map(_round)
    leaf = st.one_of(
        z.map(d.GaussianDpEvent),
        st.floats(0.5, 4).map(_round).map(d.LaplaceDpEvent),
        st.builds(lambda a, b: d.PoissonSampledDpEvent(a, d.GaussianDpEvent(b)), q, z),
        st.builds(lambda a, b: d.PoissonSampledDpEvent(a, d.LaplaceDpEvent(b)), q, z),
    )
    block = st.builds(d.SelfComposedDpEvent, leaf, st.integers(1, 500))
    return st.lists(block, min_size=1, max_size=max_leaves).map(
        lambda xs: xs[0] if len(xs) == 1 else d.ComposedDpEvent(xs))
