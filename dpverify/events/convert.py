"""Conversion of real dp_accounting DpEvent objects (dp_accounting 0.6,
``dp_event.py``) into the event model. Floats in a DpEvent are taken at their
exact binary value (0.1 is 0.1000000000000000055...); the certificate records
that exact value. One stated exception, for probability vectors (the
``sampling_probs`` of a mixture of Gaussians), see :func:`probability_vector`.
dp_accounting is imported lazily (optional extra).

Every DpEvent class of dp_accounting 0.6 is either converted or refused with
:class:`~.dispatch.Unsupported` naming the theorem that is missing
(:data:`MISSING_THEOREM`; the table in docs/guide/ecosystem.md)."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from ..ball import parse_exact
from ..errors import InvalidParameter
from . import model as E
from .dispatch import Unsupported

__all__ = ["MISSING_THEOREM", "from_dp_event", "is_dp_event", "probability_vector"]

#: DpEvent classes no theorem in dpverify covers, with the theorem that is missing.
MISSING_THEOREM = {
    "SampledWithReplacementDpEvent": (
        "no dominating pair is proved for sampling a fixed-size batch with replacement (a record can "
        "enter the batch several times; AFA Thm 11 covers Poisson sampling and sampling without "
        "replacement only)"),
    "SingleEpochTreeAggregationDpEvent": (
        "no dominating pair is implemented for tree aggregation (the online tree release): dp_accounting "
        "accounts it through its Renyi curve under REPLACE_SPECIAL only (Kairouz et al. 2021, arXiv 2103.00039, "
        "App. D: a record enters ceil(log2(n + 1)) nodes), and a Renyi bound is not a dominating pair "
        "(AFA Fig. 1)"),
    "RepeatAndSelectDpEvent": (
        "repeat-and-select with a random number of runs is bounded through its Renyi curve only "
        "(Papernot, Steinke 2022, arXiv 2110.03620, Thm 2); no dominating pair is proved"),
    "TruncatedSubsampledGaussianDpEvent": (
        "no dominating pair is proved for truncated Poisson sampling: dp_accounting mixes the "
        "sensitivity-1 Poisson pair with a replace-one pair at a conditional rate (arXiv 2508.15089, "
        "Sec. 4.3 of its supplement), and that mixture theorem is not implemented in certified "
        "arithmetic here"),
    "UnsupportedDpEvent": "the event is marked unsupported by its author (dp_accounting UnsupportedDpEvent)",
}


def is_dp_event(obj: Any) -> bool:
    """Is ``obj`` a dp_accounting DpEvent (checked without importing it)?"""
    return any(c.__module__.startswith("dp_accounting") and c.__name__ == "DpEvent" for c in type(obj).__mro__)


def _num(name: str, v: Any) -> Fraction:
    if _is_numpy_float(v):
        v = Fraction(*v.as_integer_ratio())  # exact value of a numpy scalar of any width
    return parse_exact(v, name)


def _is_numpy_float(v: Any) -> bool:
    return type(v).__module__ == "numpy" and hasattr(v, "as_integer_ratio") and not isinstance(v, float)


def _shortest(v: Any) -> Fraction:
    """The shortest decimal that reads back as the same float of ``v``'s own
    format (binary64 for a Python float, binary32 for np.float32, ...)."""
    if isinstance(v, float) or _is_numpy_float(v):
        import numpy as np

        return Fraction(np.format_float_positional(v, unique=True, trim="0"))
    return parse_exact(v, "sampling_probs")


def _rounds_to_one(total: Fraction, values: Any) -> bool:
    """Does the exact sum round to 1 in the narrowest float format among the values?"""
    import numpy as np

    kinds = [np.dtype(type(v)) for v in values if isinstance(v, float) or _is_numpy_float(v)]
    if not kinds:
        return False
    narrow = min(kinds, key=lambda k: np.finfo(k).nmant)
    # float(Fraction) rounds correctly to binary64; a narrower format then rounds
    # that (a double rounding could only differ at an exact tie; either way this
    # only decides how the floats are read, and the certificate shows the reading)
    return bool(narrow.type(float(total)) == 1)


def probability_vector(values: Any, path: str) -> tuple:
    """The exact probabilities a float probability vector stands for.

    Rule (stated, so that a certificate shows what was certified): a float
    vector whose exact values sum to 1 after rounding to its own format
    (binary64, or binary32 for np.float32) is read as its shortest round-trip
    decimals when those sum to exactly 1 ([0.33, 0.34, 0.33] is read as
    33/100, 34/100, 33/100); otherwise it is taken at its exact binary values
    if those sum to exactly 1 (dyadic probabilities); anything else is refused.
    The event's other parameters keep their exact binary values. The
    certificate's ``inputs.event`` records the exact values used."""
    exact = tuple(_num(f"{path}[{i}]", p) for i, p in enumerate(values))
    for i, p in enumerate(exact):
        if p < 0 or p > 1:
            raise InvalidParameter("sampling_probs", f"{path}[{i}]={values[i]!r} must be in [0, 1]")
    total = sum(exact, Fraction(0))
    near_one = _rounds_to_one(total, values)
    if near_one:
        dec = tuple(_shortest(p) for p in values)
        if sum(dec) == 1:
            return dec
    if total == 1:
        return exact
    if not near_one:
        raise InvalidParameter("sampling_probs", f"{path} sum to {float(total)!r}, not 1")
    # the float sum prints as 1.0, so say how far each reading is from 1 (3 x float(1/3) is
    # 1 - 2^-54 exactly and its decimals 0.3333333333333333 sum to 1 - 10^-16)
    off = total - 1
    shown = ", ".join(str(float(x)) for x in dec[:4]) + (", ..." if len(dec) > 4 else "")
    raise InvalidParameter(
        "sampling_probs", f"{path} do not sum to exactly 1: their exact binary values sum to "
        f"1 {'-' if off < 0 else '+'} {float(abs(off)):.3g} (the float sum rounds it to 1.0), and their shortest "
        f"decimals ({shown}) sum to {_decimal(sum(dec))}; a probability such as 1/3 has no exact float: "
        "give probabilities whose decimals sum to 1 (e.g. [0.25, 0.75] or [0.33, 0.34, 0.33]), or the JSON "
        "event format, where \"1/3\" is exact")


def _decimal(f: Fraction) -> str:
    """A terminating decimal fraction written out (the sum of shortest decimals is one)."""
    import decimal

    with decimal.localcontext() as c:
        c.prec = 60
        return str(decimal.Decimal(f.numerator) / decimal.Decimal(f.denominator))


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
        if len(cs) != len(ev.sampling_probs) or not cs:
            raise InvalidParameter("sensitivities", f"{path}: sensitivities and sampling_probs need the same nonzero length")
        ps = probability_vector(list(ev.sampling_probs), f"{path}.sampling_probs")
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
    name = type(ev).__name__
    if name == "TruncatedSubsampledGaussianDpEvent":
        # the degenerate cases need no pair: nothing is sampled (no privacy cost), or
        # no noise (no guarantee; the host's convention, eps = inf is a sound upper end)
        if _num(f"{path}.sampling_probability", ev.sampling_probability) == 0 \
                or count("truncated_batch_size", ev.truncated_batch_size, 0) == 0 \
                or count("dataset_size", ev.dataset_size, 0) == 0:
            return E.NoOp()
        if pos("noise_multiplier", ev.noise_multiplier) == 0:
            return E.NonPrivate()
    why = MISSING_THEOREM.get(name, "not a DpEvent class of dp_accounting 0.6: nothing is known about it")
    raise Unsupported(f"{path}: {name} is not supported: {why}")
