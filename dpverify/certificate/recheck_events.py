"""Second route for event-tree certificates (``events.epsilon``,
``events.delta``, ``events.claim``), on mpmath only (nothing from the arb
side, not even the event parser: the canonical JSON tree is walked here).

Covered: gaussian, laplace, their poisson_sampled and (add/remove)
sampled_without_replacement versions (AFA Thm 11 (2): the Poisson pair at
the replace-one shift 2C), epsilon_delta (LT Thm 4.5 pair, also Poisson-
sampled), randomized_response (exact finite laws), no_op, self_composed,
composed. The same coarse-grid mpmath PLD as ``pld.*`` (recheck_pld) gives
[lo', hi']. Anything else (mixtures of Gaussians, discrete Laplace/Gaussian,
replace-one without-replacement, zCDP, non-private) is not re-derived: the
certificate is refused with "could not re-prove" (fail closed).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Mapping

import mpmath
from mpmath import mpf

from ..errors import CertificateRejected, CouldNotReprove, MalformedCertificate
from .recheck_gdp import exact_input, to_mpf
from .recheck_pld import _compose, _delta_bounds, _eps_bounds, _finite, _laplace_tails, _tails, register_queries

_DIRS = {"add-remove": ["remove", "add"], "add": ["add"], "remove": ["remove"],
         "replace-one": ["replace"], "replace-special": ["remove", "add"]}


def _num(obj: Mapping[str, Any], key: str) -> Fraction:
    return exact_input(obj, key)


def _cannot(what: str) -> CouldNotReprove:
    return CouldNotReprove(f"could not re-prove: the independent route does not cover {what}")


def _leaf(ev: Mapping[str, Any], q: Fraction, rel: str):
    t = ev.get("type")
    qm = to_mpf(q)
    if t in ("gaussian", "laplace"):
        s = _num(ev, "noise_multiplier")
        if s <= 0:
            raise CertificateRejected("noise_multiplier must be > 0")
        if rel == "replace-one":
            if q != 1:
                raise CertificateRejected("Poisson sampling under replace-one is not certified")
            if t == "gaussian":
                return lambda d: ((lambda x: _tails(to_mpf(s), mpf(1), "replace", x)), mpf(0))
            return lambda d: ((lambda x: _laplace_tails(to_mpf(s) / 2, mpf(1), "remove", x)), mpf(0))
        f = _tails if t == "gaussian" else _laplace_tails
        return lambda d: ((lambda x: f(to_mpf(s), qm, d if q != 1 else "remove", x)), mpf(0))
    if t == "epsilon_delta":
        e0, d0 = to_mpf(_num(ev, "epsilon")), to_mpf(_num(ev, "delta"))
        ex = mpmath.exp(e0)
        P = [d0, (1 - d0) * ex / (1 + ex), (1 - d0) / (1 + ex), mpf(0)]
        Q = list(reversed(P))

        def make(d: str):
            if q == 1:
                return _finite(P, Q)
            if d == "add":
                return _finite(P, [(1 - qm) * p + qm * r for p, r in zip(P, Q)])
            return _finite([(1 - qm) * r + qm * p for p, r in zip(P, Q)], Q)
        return make
    if t == "randomized_response" and q == 1:
        p, k = to_mpf(_num(ev, "noise_parameter")), int(ev["num_buckets"])
        keep, other = 1 - p + p / k, p / k
        if rel == "replace-one":
            P, Q = [keep, other, (k - 2) * other], [other, keep, (k - 2) * other]
            return lambda d: _finite(P, Q)
        if rel == "replace-special":
            P, Q = [keep, (k - 1) * other], [mpf(1) / k, mpf(k - 1) / k]
            return lambda d: _finite(P, Q) if d == "remove" else _finite(Q, P)
    raise _cannot(f"{t} (sampling {q}) under {rel}")


def _flatten(ev: Any, times: int, rel: str, out: list, depth: int = 0) -> None:
    if depth > 64 or not isinstance(ev, dict):
        raise MalformedCertificate("inputs.event is not an event tree")
    t = ev.get("type")
    if times > 10**7:
        raise CertificateRejected("more than 1e7 steps")
    if t == "no_op" or times == 0:
        return
    if t == "self_composed":
        _flatten(ev.get("event"), times * int(ev.get("count", -1)), rel, out, depth + 1)
    elif t == "composed":
        for e in ev.get("events", []):
            _flatten(e, times, rel, out, depth + 1)
    elif t == "poisson_sampled":
        q = _num(ev, "sampling_probability")
        if q != 0:
            out.append((_leaf(ev.get("event", {}), q, rel), times))
    elif t == "sampled_without_replacement":
        n, m = int(ev["source_dataset_size"]), int(ev["sample_size"])
        inner = ev.get("event", {})
        if rel not in ("add-remove", "add", "remove") or inner.get("type") not in ("gaussian", "laplace") or not 0 < m < n:
            raise _cannot(f"sampled_without_replacement under {rel}")
        s = _num(inner, "noise_multiplier") / 2  # replace-one base pair: shift 2C
        f = _tails if inner["type"] == "gaussian" else _laplace_tails
        g = to_mpf(Fraction(m, n))
        out.append(((lambda d, s=s, f=f, g=g: ((lambda x: f(to_mpf(s), g, d, x)), mpf(0))), times))
    else:
        out.append((_leaf(ev, Fraction(1), rel), times))


def _bounds(inputs: Mapping[str, Any], kind: str, target: mpf, scale: mpf, hint: mpf, m: int = 8) -> tuple[mpf, mpf]:
    rel = inputs.get("neighboring")
    if rel not in _DIRS:
        raise MalformedCertificate(f"inputs.neighboring={rel!r} is not a relation")
    events: list = []
    _flatten(inputs.get("event"), 1, rel, events)
    if not events:
        return mpf(0), mpf(0)
    total = sum(t for _, t in events)
    extra = int(mpmath.ceil(mpf("1.45") * min(max(hint, mpf(0)), mpf(2000)))) + 16
    K = max(64, int(-mpmath.log(scale * mpf(10) ** -4, 2)) + 48 + extra)
    tau = scale * mpf(10) ** -7 / total
    budget = int(scale * mpf(10) ** -7 * mpf(2) ** K / (4 * total.bit_length() + 4))
    los, his = [], []
    for d in _DIRS[rel]:
        U, L = _compose(events, d, K, tau, budget, m)
        lo, hi = _eps_bounds(U, L, target, K, m) if kind == "eps" else _delta_bounds(U, L, target, K, m)
        los.append(lo)
        his.append(hi)
    return max(los), max(his)


register_queries("events", _bounds)
