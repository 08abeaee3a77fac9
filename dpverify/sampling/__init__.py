"""Certified accounting for the batch sampling that training code runs beyond
Poisson subsampling: shuffle-and-iterate (:mod:`.shuffle`) and Poisson sampling
under replace-one (:mod:`.replace`). Entry point for adapters:
:func:`shuffle_bracket`."""

from __future__ import annotations

from typing import Any, Optional

__all__ = ["shuffle_bracket"]


def shuffle_bracket(noise_multiplier: Any, dataset_size: Any, batch_size: Any, epochs: Any, *,
                    delta: Optional[Any] = None, eps: Optional[Any] = None, persistent: bool = False,
                    neighboring: Any = "add-remove", time_budget: Optional[float] = None) -> dict[str, Any]:
    """Certified bracket for DP-SGD with shuffled batches (Opacus
    ``poisson_sampling=False``, a shuffling DataLoader): with ``delta``,
    {"lo", "hi"} of epsilon(delta); with ``eps``, of delta(eps). ``lo`` is attained
    by a concrete dataset pair (a claim below it is false for the run), ``hi``
    bounds every pair (no amplification). Also "certificate": the format-2
    certificate (kind shuffle.epsilon / shuffle.delta) that ``dpverify verify``
    re-checks. Raises InvalidParameter for bad or ambiguous input; ``time_budget`` (seconds,
    None: none) may only stop the run (PrecisionExhausted), never change its answer."""
    from ..certificate import shuffle_cert as C
    from ..certificate.writer import handed_out
    from ..errors import InvalidParameter
    from . import shuffle as S

    if (delta is None) == (eps is None):
        raise InvalidParameter("delta", "give exactly one of delta (epsilon bracket) or eps (delta bracket)")
    r = S.run(noise_multiplier, dataset_size, batch_size, epochs,
              "shuffle-persistent" if persistent else "shuffle", neighboring)
    if delta is not None:
        b = S.bracket_eps(r, delta, time_budget=time_budget)
        cert = C.bracket_certificate(r, b, delta=delta)
    else:
        b = S.bracket_delta(r, eps, time_budget=time_budget)
        cert = C.bracket_certificate(r, b, eps=eps)
    return {"lo": b["lo"], "hi": b["hi"], "sampling": r.sampling, "neighboring": r.relation.value,
            "certificate": handed_out(cert)}
