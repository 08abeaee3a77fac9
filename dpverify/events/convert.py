"""Conversion of real dp_accounting DpEvent objects (dp_accounting 0.6,
``dp_event.py``) into the event model. Floats in a DpEvent are taken at their
exact binary value (0.1 is 0.1000000000000000055...); the certificate records
that exact value. dp_accounting is imported lazily (optional extra)."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from ..ball import parse_exact
from ..errors import InvalidParameter
from . import model as E
from .dispatch import Unsupported

__all__ = ["from_dp_event", "is_dp_event"]


def is_dp_event(obj: Any) -> bool:
    """Is ``obj`` a dp_accounting DpEvent (checked without importing it)?"""
    return any(c.__module__.startswith("dp_accounting") and c.__name__ == "DpEvent" for c in type(obj).__mro__)


def _num(name: str, v: Any) -> Fraction:
    return parse_exact(v, name)


def _int(name: str, v: Any) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        if isinstance(v, float) and v.is_integer():
            return int(v)
        raise InvalidParameter(name, f"{name}={v!r} must be an integer")
    return int(v)


def from_dp_event(ev: Any, path: str = "event") -> Any:
    """The model event of a dp_accounting DpEvent tree. Unknown or
    unsupported DpEvent classes raise :class:`Unsupported` naming the class;
    bad parameters raise InvalidParameter naming the path in the tree."""
    from dp_accounting import dp_event as dpa

    if not isinstance(ev, dpa.DpEvent):
        raise InvalidParameter("event", f"{path}: {type(ev).__name__} is not a dp_accounting DpEvent")

    def pos(name: str, v: Any) -> Fraction:
        x = _num(f"{path}.{name}", v)
        if x < 0:
            raise InvalidParameter(name, f"{path}.{name}={v!r} must be >= 0")
        return x

    def count(name: str, v: Any, least: int) -> int:
        k = _int(f"{path}.{name}", v)
        if k < least:
            raise InvalidParameter(name, f"{path}.{name}={k} must be >= {least}")
        return k

    if isinstance(ev, dpa.NoOpDpEvent):
        return E.NoOp()
    if isinstance(ev, dpa.NonPrivateDpEvent):
        return E.NonPrivate()
    if isinstance(ev, dpa.GaussianDpEvent):
        z = pos("noise_multiplier", ev.noise_multiplier)
        return E.NonPrivate() if z == 0 else E.Gaussian(z)
    if isinstance(ev, dpa.LaplaceDpEvent):
        b = pos("noise_multiplier", ev.noise_multiplier)
        return E.NonPrivate() if b == 0 else E.Laplace(b)
    if isinstance(ev, dpa.DiscreteLaplaceDpEvent):
        a = pos("noise_parameter", ev.noise_parameter)
        s = count("sensitivity", ev.sensitivity, 0)
        if s == 0:
            return E.NoOp()
        return E.NonPrivate() if a == 0 else E.DiscreteLaplace(a, s)
    if isinstance(ev, dpa.RandomizedResponseDpEvent):
        p = pos("noise_parameter", ev.noise_parameter)
        if p > 1:
            raise InvalidParameter("noise_parameter", f"{path}.noise_parameter={ev.noise_parameter!r} must be in [0, 1]")
        k = count("num_buckets", ev.num_buckets, 1)
        if k == 1:
            return E.NoOp()
        return E.NonPrivate() if p == 0 else E.RandomizedResponse(p, k)
    if isinstance(ev, dpa.MixtureOfGaussiansDpEvent):
        s = pos("standard_deviation", ev.standard_deviation)
        cs = tuple(pos("sensitivities", c) for c in ev.sensitivities)
        ps = tuple(pos("sampling_probs", p) for p in ev.sampling_probs)
        if len(cs) != len(ps) or not cs:
            raise InvalidParameter("sensitivities", f"{path}: sensitivities and sampling_probs need the same nonzero length")
        if sum(ps) != 1:
            raise InvalidParameter("sampling_probs", f"{path}.sampling_probs sum to {float(sum(ps))!r} at their exact "
                                   "binary values, not exactly 1 (give exact probabilities, e.g. dyadic ones, "
                                   "or use the JSON format with exact decimals)")
        if all(c == 0 for c, p in zip(cs, ps) if p > 0):
            return E.NoOp()
        return E.NonPrivate() if s == 0 else E.MixtureOfGaussians(s, cs, ps)
    if isinstance(ev, dpa.ZCDpEvent):
        return E.ZCDp(pos("rho", ev.rho), pos("xi", ev.xi))
    if isinstance(ev, dpa.PoissonSampledDpEvent):
        q = pos("sampling_probability", ev.sampling_probability)
        if q > 1:
            raise InvalidParameter("sampling_probability", f"{path}.sampling_probability={ev.sampling_probability!r} must be in [0, 1]")
        return E.PoissonSampled(q, from_dp_event(ev.event, f"{path}.event"))
    if isinstance(ev, dpa.SampledWithoutReplacementDpEvent):
        n = _int(f"{path}.source_dataset_size", ev.source_dataset_size)
        m = _int(f"{path}.sample_size", ev.sample_size)
        if not 0 <= m <= n or n < 1:
            raise InvalidParameter("sample_size", f"{path}: need 0 <= sample_size <= source_dataset_size, n >= 1")
        return E.SampledWithoutReplacement(n, m, from_dp_event(ev.event, f"{path}.event"))
    if isinstance(ev, dpa.SelfComposedDpEvent):
        return E.SelfComposed(from_dp_event(ev.event, f"{path}.event"), count("count", ev.count, 0))
    if isinstance(ev, dpa.ComposedDpEvent):
        return E.Composed(tuple(from_dp_event(e, f"{path}.events[{i}]") for i, e in enumerate(ev.events)))
    reasons = {
        "SampledWithReplacementDpEvent": "sampling with replacement has no dominating pair implemented",
        "SingleEpochTreeAggregationDpEvent": "tree aggregation has no proved dominating pair here (only RDP bounds)",
        "RepeatAndSelectDpEvent": "repeat-and-select is only bounded through RDP (Papernot, Steinke 2022)",
        "TruncatedSubsampledGaussianDpEvent": "truncated Poisson sampling has no certified pair here",
        "UnsupportedDpEvent": "the event is marked unsupported",
    }
    name = type(ev).__name__
    raise Unsupported(f"{path}: {name} is not supported: {reasons.get(name, 'unknown DpEvent class')}")
