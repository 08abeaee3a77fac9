"""Second route for ``calibrate.bracket`` certificates, on mpmath and Python
integers only (nothing from the arb side is imported).

The claim: (target_eps, delta)-DP holds at ``result.ends.safe.value`` and
fails at ``result.ends.unsafe.value`` of the template's free parameter. Both
ends are re-proved independently: delta(target_eps) at the safe end is
bounded above by at most delta and at the unsafe end bounded below by more
than delta, with the PLD re-check route of :mod:`.recheck_pld` (its mpmath
tails and events, its square-and-multiply) on a finer grid than that
module's fixed 2^-8 (the ends lie within a fraction of a percent of the
optimum, so the coarse grid cannot separate them): the grid starts at the
recorded hint (untrusted; clamped to 2^-10 .. 2^-13) and is refined until
both ends are decided. Products use Kronecker substitution into Python's
``decimal`` integers (libmpdec's number-theoretic transform), exact like the
Python-int route and much faster for long sequences.

An end that cannot be decided on the finest grid is not accepted: the
certificate is rejected as "could not re-prove" (fail closed). The order of
the ends must agree with the template's monotonicity (for the noise multiplier
the safe end is the larger one; for steps, sampling rate and batch size the
smaller one), else the bracket is not a bracket and is refused.
"""

from __future__ import annotations

import decimal
from fractions import Fraction
from typing import Any, Mapping

import mpmath
from mpmath import mpf

from ..errors import CertificateRejected, CouldNotReprove, MalformedCertificate
from . import recheck_pld as P
from .recheck_gdp import exact_input, to_mpf
from .verify import Recheck, register

_DPS = 40
_ALLOWED = {"template", "parameter", "target_eps", "delta", "neighboring", "noise_multiplier",
            "sampling_rate", "steps", "epochs", "batch_size", "dataset_size"}
_FREE = {"noise_multiplier": False, "steps": True, "sampling_rate": True, "batch_size": True}
_CTX = decimal.Context(prec=decimal.MAX_PREC, Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN)


def _kron(a: list[int], b: list[int]) -> list[int]:
    """Exact product of two nonnegative integer sequences (decimal Kronecker substitution)."""
    if not a or not b:
        return []
    W = len(str(max(a) * max(b) * min(len(a), len(b)))) + 1

    def pack(v: list[int]) -> decimal.Decimal:
        return decimal.Decimal("".join(str(x).zfill(W) for x in reversed(v)))

    n = len(a) + len(b) - 1
    with decimal.localcontext(_CTX):
        s = str(pack(a) * pack(b))
    s = s.zfill(n * W)
    L = len(s)
    return [int(s[L - (i + 1) * W:L - i * W]) for i in range(n)]


def _mul_upper(x, y, K: int, budget: int):
    v = [-((-c) >> K) for c in _kron(x[1], y[1])]  # ceiling of c / 2^K
    a, s, b, t = P._trim(v, budget)
    v = v[a:b]
    v[0] += s
    return (x[0] + y[0] + a, v, x[2] + y[2] + t)


def _mul_lower(x, y, K: int, budget: int):
    Pm = [c >> K for c in _kron(x[1], y[1])]
    Qm = [-((-c) >> K) for c in _kron(x[2], y[2])]
    a, _, b, _ = P._trim(Pm, budget)
    inf = max(0, x[3] + y[3] - (-((-x[3] * y[3]) >> K)))
    return (x[0] + y[0] + a, Pm[a:b], Qm[a:b], inf)


def _end_inputs(inputs: Mapping[str, Any], parameter: str, value: Any) -> dict[str, Any]:
    """The schedule at one end, in recheck_pld's input form."""
    ev = {k: inputs[k] for k in ("noise_multiplier", "sampling_rate", "steps") if k in inputs}
    if parameter == "batch_size":
        n = inputs.get("dataset_size")
        if not isinstance(n, int) or not isinstance(value, int) or not 1 <= value <= n:
            raise CertificateRejected("batch_size ends must be integers in [1, dataset_size]")
        ev["sampling_rate"] = f"{value}/{n}"
    else:
        ev[parameter] = value
    ev["neighboring"] = inputs.get("neighboring", "add-remove")
    return ev


def _delta_at(ev: Mapping[str, Any], eps: mpf, D: mpf, m: int) -> tuple[mpf, mpf]:
    events = P._events(ev)
    total = sum(t for _, t, _ in events)
    extra = int(mpmath.ceil(mpf("1.45") * min(eps, mpf(2000)))) + 16
    K = max(64, int(-mpmath.log(D * mpf(10) ** -6, 2)) + 48 + extra)
    tau = D * mpf(10) ** -8 / total
    budget = int(D * mpf(10) ** -8 * mpf(2) ** K / (4 * total.bit_length() + 4))
    los, his = [], []
    for d in P._directions(ev):
        if d == "replace":
            raise CertificateRejected("calibrate: replace-one is not certified")
        ups = lows = None
        for make, T, _ in events:
            tails, inf = make(d)
            u, l = P._discretise(tails, inf, K, tau, m, cap=10**8)
            U, L = P._power(u, T, _mul_upper, K, budget), P._power(l, T, _mul_lower, K, budget)
            ups, lows = (U, L) if ups is None else (_mul_upper(ups, U, K, budget), _mul_lower(lows, L, K, budget))
        lo, hi = P._delta_bounds(ups, lows, eps, K, m)
        los.append(lo)
        his.append(hi)
    return max(los), max(his)


def _grid_hint(end: Mapping[str, Any]) -> int:
    g = end.get("grid")
    if isinstance(g, str) and g.startswith("2^-") and g[3:].isdigit():
        return min(max(int(g[3:]), 10), 13)
    return 10


@register("calibrate.bracket")
def recheck_bracket(inputs: Mapping[str, Any], result: Mapping[str, Any]) -> Recheck:
    unknown = sorted(set(inputs) - _ALLOWED)
    if unknown:
        raise MalformedCertificate(f"inputs.{unknown[0]}: unknown key; allowed: {', '.join(sorted(_ALLOWED))}")
    if inputs.get("template") != "dpsgd":
        raise MalformedCertificate(f"inputs.template={inputs.get('template')!r}: allowed: 'dpsgd'")
    parameter = inputs.get("parameter")
    if parameter not in _FREE:
        raise MalformedCertificate(f"inputs.parameter={parameter!r}: allowed: {', '.join(_FREE)}")
    ends = result.get("ends")
    if not isinstance(ends, dict) or not isinstance(ends.get("safe"), dict):
        raise MalformedCertificate("result.ends.safe is missing")
    with mpmath.workdps(_DPS):
        E = to_mpf(exact_input(inputs, "target_eps"))
        D = to_mpf(exact_input(inputs, "delta"))
        if not (E > 0 and 0 < D < 1):
            raise CertificateRejected("target_eps must be > 0 and delta in (0, 1)")
        todo = [("safe", ends["safe"])] + ([("unsafe", ends["unsafe"])] if "unsafe" in ends else [])
        values = {}
        for name, end in todo:
            if not isinstance(end, dict) or "value" not in end:
                raise MalformedCertificate(f"result.ends.{name}.value is missing")
            raw = end["value"]
            if isinstance(raw, int) and not isinstance(raw, bool):
                values[name] = Fraction(raw)
            else:
                values[name] = exact_input(end, "value")
            if end.get("verdict") != ("holds" if name == "safe" else "fails"):
                raise CertificateRejected(f"result.ends.{name}.verdict must be "
                                          f"{'holds' if name == 'safe' else 'fails'}")
        if "unsafe" in values:
            increasing = _FREE[parameter]
            if (values["safe"] >= values["unsafe"]) if increasing else (values["safe"] <= values["unsafe"]):
                raise CertificateRejected(f"the ends are in the wrong order for {parameter} "
                                          "(eps is monotone in it)")
        for name, end in todo:
            value: Any = end["value"]
            ev = _end_inputs(inputs, parameter, value)
            m = _grid_hint(end)
            while True:
                lo, hi = _delta_at(ev, E, D, m)
                decided = hi <= D if name == "safe" else lo > D
                refuted = lo > D if name == "safe" else hi <= D
                if refuted:
                    raise CertificateRejected(
                        f"{parameter}={value}: the re-derived delta({mpmath.nstr(E, 8)}) in "
                        f"[{mpmath.nstr(lo, 8)}, {mpmath.nstr(hi, 8)}] contradicts the recorded "
                        f"{'safe' if name == 'safe' else 'unsafe'} end")
                if decided:
                    break
                if m >= 13:
                    raise CouldNotReprove(
                        f"could not re-prove the {name} end {parameter}={value} on the grid 2^-13 "
                        f"(delta in [{mpmath.nstr(lo, 8)}, {mpmath.nstr(hi, 8)}])")
                m += 1
        return Recheck(value=None, err=mpf(0), dps=_DPS, verdict="holds")
