"""Second route for the GDP-transformation quantities (GDPT), on MPFR with
directed rounding (gmpy2) and exact rationals.

Shares no code with :mod:`dpverify.gdp` or :mod:`dpverify.mechanisms`:
profiles are re-implemented here as enclosures at exact eps (:func:`_iv_profile`:
Laplace in the closed form 1 - e^((eps - D/b)/2), the 4-output mechanism summed
output by output, the App B refinement point bracketed by proved signs of k,
subsampling through e^eb = 1 + (e^eps - 1)/q, user expressions walked on MPFR
intervals, :func:`.profiles.expr_over`). The mpmath profiles above are the tests'
reference values, and mpmath serves the proposals (mu_GDP by bisection on its ncdf),
each proved or refused on the enclosures.

What the ``gdp.certify`` re-check proves (every comparison on directed enclosures):

* lower end: G_f(x*) >= m at the recorded argmax x* (a hint), m proposed by
  mpmath bisection and proved by delta_m(x*) < f(x*) (delta_mu increases in mu);
  so sup G_f >= m;
* upper end: every cell [a, b] of [0, eps_h] (an adaptive partition seeded by
  ``head.breakpoints``) is proved by sup_[a,b] f <= delta_{mu_hi}(b), which by
  monotonicity of mu_GDP in both arguments (GDPT Thm 4.5, App A.5) proves
  sup_{[0, eps_h]} G_f <= mu_hi;
* tail: the status is re-derived from the mechanism in exact rationals or directed
  rounding (zero beyond the largest privacy loss, Gaussian mu0 <= mu_hi, the
  Mills-ratio conditions (i)-(iv) of :mod:`dpverify.gdp.tail` for sgd-example, not
  GDP for infinite-loss outputs and ICEA's K/eps tail); a recorded "certified" that
  the re-derivation cannot confirm is rejected. A bridge [eps_h, eps_t]
  (tail.bridge_breakpoints) is proved cell by cell like the head.
"""

from __future__ import annotations

import ast
import re
from fractions import Fraction
from typing import Any, Callable, Mapping, Optional

import mpmath
from gmpy2 import mpfr
from mpmath import mpf

from ..errors import CertificateRejected, CouldNotReprove, MalformedCertificate
from .core import CF_FROM, Arith, Iv, arith, exact_enclosure, exact_point, mpfr_to_mpf, mpf_to_fraction
from .gdp import exact_input, side, start_bits, fraction_to_mpf
from .profiles import PROFILE_RECHECKS, _four_output, expr_over, register_profile_recheck
from ..certificate.format import gdp_cell_weight
from ..certificate.format import GDP_CELL_WORK_CAP
from ..certificate.prose import GDP_TAIL_REASONS
from .limits import check_expression, guard_exponent
from .kinds import CERTIFY_VERDICTS
from .verify import VERDICTS, BudgetExceeded, Recheck, needed_digits, register

__all__ = ["mu_gdp_mp", "delta_mu_mp"]

Fn = Callable[[Fraction], mpf]


# --------------------------------------------------------------------------- profiles


@register_profile_recheck("laplace")
def _laplace(inputs: Mapping[str, Any]) -> Fn:
    b = exact_input(inputs, "scale")
    d = exact_input(inputs, "sensitivity") if "sensitivity" in inputs else Fraction(1)

    def cdf(x: mpf, loc: mpf, s: mpf) -> mpf:
        z = (x - loc) / s
        return mpmath.exp(z) / 2 if z < 0 else 1 - mpmath.exp(-z) / 2

    def f(eps: Fraction) -> mpf:
        # loss (|x - D| - |x|)/b > eps  <=>  x < x0 = (D - b eps)/2 when |eps| < D/b
        B, D, e = fraction_to_mpf(b), fraction_to_mpf(d), fraction_to_mpf(eps)
        if e >= D / B:
            return mpf(0)
        if e < -D / B:
            return 1 - mpmath.exp(e)
        x0 = (D - B * e) / 2
        return cdf(x0, mpf(0), B) - mpmath.exp(e) * cdf(x0, D, B)

    return f


def _below_zero(nonneg: Callable[[mpf], mpf]) -> Fn:
    """A guarantee's profile: nonneg for eps >= 0, the worst case of
    (0, delta(0))-DP, delta0 + (1 - delta0)(1 - e^eps), below 0."""

    def f(eps: Fraction) -> mpf:
        e = fraction_to_mpf(eps)
        if e >= 0:
            return nonneg(e)
        d0 = nonneg(mpf(0))
        return d0 + (1 - d0) * (1 - mpmath.exp(e))

    return f


_K_ROOT: dict[tuple[str, int], mpf] = {}


def _naive(name: str) -> tuple[Callable[[mpf], mpf], Callable[[mpf], mpf]]:
    if name == "sgd-example":
        return (lambda x: mpmath.exp(-x * x)), (lambda x: -2 * x * mpmath.exp(-x * x))
    # K = 4 e^-2 at the precision of each call (not of the builder)
    return (
        (lambda x: min(mpf(1), 4 * mpmath.exp(-2) / x) if x > 0 else mpf(1)),
        (lambda x: -4 * mpmath.exp(-2) / (x * x)),
    )


def refinement_point_mp(name: str) -> mpf:
    """eps_i: zero of k(x) = f'(x)(1 + e^x) + e^x (1 - f(x)) (GDPT App B), by findroot."""
    key = (name, mpmath.mp.dps)
    if key not in _K_ROOT:
        f, fd = _naive(name)
        _K_ROOT[key] = mpmath.findroot(
            lambda x: fd(x) * (1 + mpmath.exp(x)) + mpmath.exp(x) * (1 - f(x)), mpf("1.17")
        )
    return _K_ROOT[key]


def _example(name: str) -> Callable[[Mapping[str, Any]], Fn]:
    def build(inputs: Mapping[str, Any]) -> Fn:
        refined = str(inputs.get("refined", "")).lower() == "true"
        naive, _ = _naive(name)

        def nonneg(e: mpf) -> mpf:
            if not refined:
                return naive(e)
            ei = refinement_point_mp(name)
            di = naive(ei)
            # the 4-output worst case of (eps_i, delta_i), output by output
            e0 = mpmath.exp(ei)
            P = [di, (1 - di) * e0 / (1 + e0), (1 - di) / (1 + e0), mpf(0)]
            Q = [mpf(0), (1 - di) / (1 + e0), (1 - di) * e0 / (1 + e0), di]
            worst = mpmath.fsum(max(p - mpmath.exp(e) * q, 0) for p, q in zip(P, Q))
            return min(worst, naive(e))

        return _below_zero(nonneg)

    return build


register_profile_recheck("sgd-example")(_example("sgd-example"))
register_profile_recheck("icea-example")(_example("icea-example"))


@register_profile_recheck("subsampled")
def _subsampled(inputs: Mapping[str, Any]) -> Fn:
    q = exact_input(inputs, "rate")
    base = _four_output(exact_input(inputs, "eps0"), exact_input(inputs, "delta0"))

    def at(e: mpf) -> mpf:
        eb = mpmath.log(1 + mpmath.expm1(e) / fraction_to_mpf(q))
        # base() takes an exact Fraction: hand it a high-precision rational of eb
        return fraction_to_mpf(q) * _base_at(base, eb)

    return _below_zero(at)


def _base_at(base: Fn, e: mpf) -> mpf:
    man, exp = mpmath.mpf(e).man_exp
    x = Fraction(int(man)) * (Fraction(2) ** int(exp)) if man else Fraction(0)
    return base(x)


_MP_FUNCS: dict[str, Callable[..., mpf]] = {
    "exp": mpmath.exp, "expm1": mpmath.expm1, "log": mpmath.log, "log1p": mpmath.log1p,
    "sqrt": mpmath.sqrt, "erfc": mpmath.erfc, "Phi": mpmath.ncdf, "abs": abs, "min": min, "max": max,
}


@register_profile_recheck("expr")
def _expr(inputs: Mapping[str, Any]) -> Fn:
    text = inputs.get("profile")
    tree = check_expression(text)
    src = text.strip()

    def ev(node: ast.AST, e: mpf) -> mpf:
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
            seg = ast.get_source_segment(src, node) or repr(node.value)
            return mpf(seg)
        if isinstance(node, ast.Name):
            # check_expression admits only these names, operators and EXPR_FUNCS (all in _MP_FUNCS)
            return {"eps": e, "e": mpmath.e, "pi": mpmath.pi}[node.id]
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            v = ev(node.operand, e)
            return -v if isinstance(node.op, ast.USub) else v
        if isinstance(node, ast.BinOp):
            a, b = ev(node.left, e), ev(node.right, e)
            if isinstance(node.op, ast.Add):
                return a + b
            if isinstance(node.op, ast.Sub):
                return a - b
            if isinstance(node.op, ast.Mult):
                return a * b
            if isinstance(node.op, ast.Div):
                return a / b
            if isinstance(node.op, ast.Pow):
                guard_exponent(abs(b) * mpmath.log(max(abs(a), mpf(2))))
                return a**b
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _MP_FUNCS:
            args = [ev(a, e) for a in node.args]
            if node.func.id in ("exp", "expm1"):
                guard_exponent(args[0])
            return _MP_FUNCS[node.func.id](*args)
        raise AssertionError(f"check_expression admitted {type(node).__name__}")

    return lambda eps: ev(tree.body, fraction_to_mpf(eps))


# --------------------------------------------------------------------------- GDP


def delta_mu_mp(mu: mpf, eps: mpf) -> mpf:
    return mpmath.ncdf(-eps / mu + mu / 2) - mpmath.exp(eps) * mpmath.ncdf(-eps / mu - mu / 2)


def mu_gdp_mp(eps: mpf, delta: mpf, steps: Optional[int] = None) -> mpf:
    """mu with delta_mu(eps) = delta by bisection (increasing in mu); 0 / inf at the ends.
    ``steps`` bisection steps (default: the working precision's bits + 10)."""
    if delta <= 0:
        return mpf(0)
    if delta >= 1:
        return mpmath.inf
    lo, hi = mpf(0), mpf(1)
    while delta_mu_mp(hi, eps) < delta:
        lo, hi = hi, 2 * hi
        if hi > 2**60:
            return mpmath.inf
    for _ in range(mpmath.mp.prec + 10 if steps is None else min(steps, mpmath.mp.prec + 10)):
        mid = (lo + hi) / 2
        if delta_mu_mp(mid, eps) < delta:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


_MONOTONE = {"gaussian", "laplace", "pure", "approx", "sgd-example", "icea-example", "subsampled", "rr"}
#: profiles that are the hockey-stick divergence of a pair of distributions, f(eps) =
#: sup_S P(S) - e^eps Q(S): a supremum of affine functions of t = e^eps, so convex in t (the
#: subsampled one is q g(1 + (t - 1)/q), g such a profile: convex too). The App B examples and
#: expressions are formulas, not known to be convex in t: they get only the first-order cell test
_CONVEX_IN_T = {"laplace", "pure", "approx", "subsampled", "rr"}


def _gaussian_mu0(inputs: Mapping[str, Any]) -> Fraction:
    if ("mu" in inputs) == ("noise_multiplier" in inputs) or ("mu" in inputs and "sensitivity" in inputs):
        raise MalformedCertificate("the Gaussian mechanism takes either inputs.mu or inputs.noise_multiplier "
                                   "(with an optional inputs.sensitivity), not both")
    if "sensitivity" in inputs and exact_input(inputs, "sensitivity") <= 0:
        raise MalformedCertificate("the Gaussian mechanism needs sensitivity > 0")
    mu0 = exact_input(inputs, "mu") if "mu" in inputs else (
        (exact_input(inputs, "sensitivity") if "sensitivity" in inputs else Fraction(1))
        / exact_input(inputs, "noise_multiplier"))
    if mu0 <= 0:
        raise MalformedCertificate("the Gaussian mechanism needs mu > 0")
    return mu0


_GDPT_EXPLAIN = (
    "All comparisons on MPFR directed-rounding enclosures. "
    "Lower end: G_f at head.argmax (a hint) >= m, m proposed by mpmath bisection and proved by "
    "delta_m(argmax) < f(argmax); G_f(x) <= sup. "
    "Upper end: every cell of [0, eps_h] re-proved by a streamed adaptive partition of the "
    "second route's own (the recorded breakpoints only seed it): a cell [a, b] is proved when "
    "sup_[a,b] f <= delta_mu(b) with mu the least recorded upper end (f non-increasing: f(a); expr: "
    "the expression walked on MPFR intervals over the cell), or, for the profiles of a pair (Laplace, pure, "
    "approx, rr, subsampled: convex in t = e^eps, as delta_mu is), when f's chord lies below "
    "delta_mu's tangent at the cell's midpoint at both ends, so sup G_f <= mu by monotonicity of mu_GDP "
    "(GDPT Thm 4.5, App A.5); a cell that cannot be proved down to 2^-40, or the cell cap "
    "(GDP_CELL_WORK_CAP units, counted, not timed) running out, refutes the upper end if G_f > mu "
    "is proved at that cell or at the next pending ones, else the certificate is undecided (exit 3). Tail beyond eps_h re-derived per mechanism "
    "(support end, Gaussian mu0, Mills conditions, power tails); a bridge is re-proved cell by cell. "
    "Verdict: holds = GDP (tail certified), fails = not GDP (profile >= 1 somewhere or a not-GDP "
    "tail), undecided = head only."
)


def _one_at(name: str, inputs: Mapping[str, Any], at: Fraction) -> Optional[bool]:
    """Is f(at) = 1 (the head is unbounded there: delta_mu < 1 for every finite mu)?
    Decided exactly where the mechanism's parameters decide it; None where they do not.
    Non-increasing profiles are at most f(0) for at >= 0, and f(0) < 1 unless an output
    has infinite privacy loss with probability 1: Gaussian, Laplace and pure eps0 never
    (f(0) = 2 Phi(mu/2) - 1, 1 - e^(-D/(2b)), tanh(eps0/2)); approx iff delta0 = 1;
    subsampled iff rate = 1 and delta0 = 1; randomized response iff p = 1; the App B
    examples (not refined) at 0: exp(-0) = min(1, K/0) = 1. An expression: its
    interval enclosure at the point must be >= 1."""
    if name in ("gaussian", "laplace", "pure"):
        return False
    if name == "approx":
        return exact_input(inputs, "delta0") == 1
    if name == "subsampled":
        return exact_input(inputs, "delta0") == 1 and exact_input(inputs, "rate") == 1
    if name == "rr":
        return exact_input(inputs, "p") == 1
    if name in ("sgd-example", "icea-example"):
        if str(inputs.get("refined", "")).lower() == "true":
            return None
        return at == 0 or None
    if name == "expr":
        return True if _expr_cells(inputs)(arith(160), at, at)[0] >= 1 else None
    return None


def _bits_needed(lo: mpf, hi: mpf) -> Optional[int]:
    """Bits of a proposal of the lower end: the recorded enclosure's relative width and 60
    more (the producer's lower end can sit far closer to the truth than the width), at least
    100; None (the working precision) when the enclosure is not finite and positive."""
    if not (mpmath.isfinite(lo) and mpmath.isfinite(hi) and 0 < lo < hi):
        return None
    return max(100, int(mpmath.log(hi / (hi - lo), 2)) + 60)


def _head_dps(lo: mpf, hi: mpf) -> int:
    """:func:`_certify_dps` for an enclosure [lo, hi]: the precision follows the recorded
    upper end, but not beyond lo + 2 (a genuine enclosure is at most the producer's margin 1
    wide; a forged upper end of hundreds would ask for thousands of digits, the cost of a
    cell growing about like their 1.6th power). Too few digits can only leave a cell
    unproved (exit 3), never prove a false one."""
    if mpmath.isfinite(lo) and lo >= 0:
        return _certify_dps(min(hi, lo + 2))
    return _certify_dps(hi)


def _certify_dps(hi: mpf) -> int:
    """Working digits for the head proof at mu = hi: near eps = 0 both f and delta_mu
    are within 2 Phi(-mu/2) ~ e^(-mu^2/8) of 1, and the comparison must resolve that gap
    (Laplace of scale 1/140 has mu* = 23.2: 1 - f(0) = e^-70)."""
    if not mpmath.isfinite(hi) or hi <= 0:
        return 40
    return min(40 + int(hi * hi / 18) + 10, 4000)


@register("gdp.certify", explain=_GDPT_EXPLAIN)
def recheck_certify(inputs: Mapping[str, Any], result: Mapping[str, Any]) -> Recheck:
    name = inputs.get("mechanism")
    if name not in PROFILE_RECHECKS:
        raise MalformedCertificate(f"no independent re-check for mechanism {name!r}")
    head, tail = result.get("head"), result.get("tail")
    if not isinstance(head, dict) or not isinstance(tail, dict):
        raise MalformedCertificate("gdp.certify needs result.head and result.tail")
    eps_h = exact_input(inputs, "eps_h")
    if not 0 <= eps_h <= 10**6:
        raise MalformedCertificate("eps_h must be in [0, 1e6]")
    from .verify import enclosure_of

    ends = enclosure_of(result.get("enclosure"), "result.enclosure", 40)
    lo, hi = ends
    dps = _head_dps(lo, hi)
    f = _iv_profile(name, inputs, _bits(dps))
    with mpmath.workdps(dps):
        re = _certify(name, inputs, result, head, tail, f, eps_h, lo, hi, ends.inner[1], dps)
    return _certify_details(name, inputs, result, head, tail, eps_h, re)


def _tail_of_record(name: str, inputs: Mapping[str, Any], head: Mapping[str, Any], tail: Mapping[str, Any],
                    eps_h: Fraction) -> Optional[str]:
    """The tail status the producer writes beside the recorded ``tail.kind`` whatever else it
    computes (gdp/tail.py ``certify_tail``), or None where it depends on the producer's own
    search: ``power`` and ``constant`` (and ``head``, an unbounded head) are "not GDP" always;
    ``zero`` is "certified" when eps_h is at or past the zero point and that point is an exact
    rational of the inputs (Laplace D/b, pure and (eps0, 0)-DP eps0: an exact comparison; the
    logarithms of randomized response and subsampling are compared on balls, then bridged, and
    are left to the producer); ``gaussian`` is "certified" when the head's recorded upper end
    ``head.mu_hi_exact`` (the producer's mu) exceeds mu0 by more than 2^-200 mu0 (its comparison
    of 256-bit balls then succeeds). ``tail.kind`` is re-derived from the mechanism before this
    is read (:func:`_certify_details`), "unknown" only beside an unknown status."""
    kind = tail.get("kind")
    if kind in ("head", "power", "constant"):
        return "not GDP"
    if kind == "zero":
        z = _exact_loss_end(name, inputs)
        return "certified" if z is not None and eps_h >= z else None
    if kind == "gaussian" and "mu_hi_exact" in head:
        mu0 = _gaussian_mu0(inputs)
        return "certified" if exact_input(head, "mu_hi_exact") - mu0 > mu0 / 2**200 else None
    return None


def _status_of_record(name: str, inputs: Mapping[str, Any], head: Mapping[str, Any], tail: Mapping[str, Any],
                      eps_h: Fraction) -> str:
    """The status the producer writes from the recorded head and tail (gdp/certify.py
    ``GdpCertificate.status``): "not GDP" for an unbounded head or a not-GDP tail, "GDP" for a
    certified tail, else "head only". The recorded tail status must be the one its kind decides
    (:func:`_tail_of_record`): a "certified" or "not GDP" relabelled "unknown" would make a decided
    certificate read "head only" (issue 22). The producer's rule, not this route's: a 0.1.0
    certificate records "unknown" where its tail model was weaker than this route (randomized
    response, expressions), and its "head only" is what its own numbers decide."""
    ts = tail.get("status")
    forced = None if head.get("unbounded") is True else _tail_of_record(name, inputs, head, tail, eps_h)
    if forced is not None and ts != forced:
        raise CertificateRejected(f"result.tail.status={str(ts)[:20]!r}, but a {tail.get('kind')!r} tail with these "
                                  f"inputs is {forced!r} (the producer decides it from the recorded kind)")
    if head.get("unbounded") is True or ts == "not GDP":
        return "not GDP"
    return "GDP" if ts == "certified" else "head only"


_NUM = r"(?P<{}>[0-9][0-9.eE+/-]{{0,200}})"
_MILLS = "the Mills-ratio bounds (GDPT App A Lemma 3)"
#: the large-eps models of the not-GDP tails, by mechanism (gdp/tail.py ``tail_model``'s descriptions)
_NOT_GDP_MODELS = {"approx": "delta0 = " + _NUM.format("delta0") + re.escape(" for eps >= eps0"),
                   "subsampled": re.escape("q delta0 for eps >= log(1 - q + q e^eps0)"),
                   "icea-example": re.escape("K/eps, K = 4 e^-2")}
#: the writer's tail reasons (gdp/tail.py ``certify_tail``, gdp/certify.py for an unbounded head): (form,
#: the tail kinds it is written for, None for any, the tail status it states). Groups: z (a point from
#: which the profile is 0), t (tail.bridge_to), a (head.argmax), delta0 (inputs.delta0).
_TAIL_REASONS: tuple[tuple[str, Optional[frozenset], str], ...] = (
    (re.escape("the profile is 0 for eps >= ") + _NUM.format("z") + re.escape(" <= eps_h and delta_mu(eps) > 0"),
     frozenset({"zero"}), "certified"),
    (re.escape("staircase cells at mu on [eps_h, ") + _NUM.format("t") + re.escape("] (GDPT Thm 4.6), then the "
                                                                                     "profile is 0"),
     frozenset({"zero"}), "certified"),
    (re.escape("the profile vanishes only from eps = ") + _NUM.format("z")
     + re.escape(" and the bridge from eps_h could not be closed at mu"), frozenset({"zero"}), "unknown"),
    (re.escape(GDP_TAIL_REASONS["gaussian"]), frozenset({"gaussian"}), "certified"),
    (re.escape(GDP_TAIL_REASONS["below_mu0"]), frozenset({"gaussian"}), "unknown"),
    (re.escape(GDP_TAIL_REASONS["below_mu0_v010"]), frozenset({"gaussian"}), "unknown"),
    (re.escape("the profile is ") + "(?P<model>.{1,200}?)" + re.escape(
        " for large eps, which delta_mu(eps) ~ exp(-eps^2/(2 mu^2)) falls below for every mu (GDPT Lemma A.1); "
        "Thm 4.4 limit = +inf, so not GDP (Thm 4.3)"), frozenset({"constant", "power"}), "not GDP"),
    (re.escape(GDP_TAIL_REASONS["mills"]), frozenset({"gauss_exp"}), "certified"),
    (re.escape("staircase cells at mu on [eps_h, ") + _NUM.format("t") + re.escape("], then " + _MILLS),
     frozenset({"gauss_exp"}), "certified"),
    (re.escape(GDP_TAIL_REASONS["before_model"]), frozenset({"gauss_exp"}), "unknown"),
    (re.escape(GDP_TAIL_REASONS["thm44"]), frozenset({"gauss_exp"}), "unknown"),
    (re.escape(GDP_TAIL_REASONS["mills_search"]), frozenset({"gauss_exp"}), "unknown"),
    (re.escape("could not close the bridge [eps_h, ") + _NUM.format("t") + re.escape("] at mu"),
     frozenset({"gauss_exp"}), "unknown"),
    (re.escape(GDP_TAIL_REASONS["no_model"]), None, "unknown"),
    (re.escape("the profile is >= 1 at eps = ") + _NUM.format("a")
     + re.escape(": no mu-GDP bound holds there (delta_mu < 1)"), frozenset({"head"}), "not GDP"),
)


#: the mechanisms whose largest privacy loss is an exact rational of the inputs
_EXACT_LOSS_END = ("laplace", "pure", "approx")


def _exact_loss_end(name: str, inputs: Mapping[str, Any]) -> Optional[Fraction]:
    """The largest privacy loss L where the inputs give it exactly (Laplace D/b, pure eps0,
    (eps0, 0)-DP eps0, from which the profile is 0), else None: one reading for the tail status
    the producer is forced to and for a tail reason's zero point."""
    if name == "approx":
        return exact_input(inputs, "eps0")
    return _support_end_upper(name, inputs) if name in _EXACT_LOSS_END else None


def _zero_from(name: str, inputs: Mapping[str, Any], z: Fraction) -> Optional[bool]:
    """Is the profile 0 for every eps >= z, i.e. z >= the largest privacy loss L
    (:func:`_support_end`)? Exact for Laplace, pure and (eps0, 0)-DP; e^z against e^L on directed
    enclosures for randomized response and subsampling (None where they overlap)."""
    if name in _EXACT_LOSS_END:
        end = _exact_loss_end(name, inputs)
        return None if end is None else z >= end
    A = arith(160)
    if name == "rr":
        p = exact_input(inputs, "p")
        return _le_exp(A, A.q(max(p, 1 - p) / min(p, 1 - p)), z) if 0 < p < 1 else None
    if name == "subsampled":
        q, e0 = exact_input(inputs, "rate"), exact_input(inputs, "eps0")
        return _le_exp(A, A.add(A.q(1 - q), A.mul(A.q(q), A.exp(A.q(e0)))), z)
    return None


def _tail_reason_bound(name: str, inputs: Mapping[str, Any], head: Mapping[str, Any], tail: Mapping[str, Any],
                       eps_h: Fraction) -> bool:
    """True when ``tail.reason`` is one of the writer's forms (:data:`_TAIL_REASONS`) and every
    statement in it follows from the re-proved tail and the inputs: the tail kind and status it
    states are the recorded ones (both re-derived before this is read), a point z from which it
    calls the profile 0 is at or past the largest privacy loss (and at most eps_h where it says
    so), a bridge end is tail.bridge_to, an argmax head.argmax, a delta0 the input's, a
    large-eps model the mechanism's. CertificateRejected when it is a form and says something
    else; False when it is no form (verify names it as the writer's text)."""
    from ..certificate.prose import _value

    text = tail.get("reason")
    if not isinstance(text, str):
        return False
    for form, kinds, status in _TAIL_REASONS:
        m = re.fullmatch(form, text)
        if m is None:
            continue
        what = f"result.tail.reason={text[:80]!r}"
        if kinds is not None and tail.get("kind") not in kinds or tail.get("status") != status:
            of_kind = f" of kind {'/'.join(sorted(kinds))}" if kinds else ""
            raise CertificateRejected(f"{what} states a {status!r} tail{of_kind}; the re-proved tail is "
                                      f"{tail.get('status')!r} of kind {tail.get('kind')!r}")
        if status == "unknown" and text == GDP_TAIL_REASONS["no_model"]:
            # a function of the mechanism alone: bound where it has no tail model (the kind re-derived
            # "unknown"); a 0.1.0 certificate wrote it for mechanisms that have one now (randomized
            # response): that older writer's text is named
            return _tail_kind(name, inputs, head) == "unknown"
        if status == "unknown":
            # why the writer's route stopped ("could not close the bridge", "mu is below mu0",
            # "vanishes only from z"): a statement about that run, which no number here re-proves
            # (adv40 T1: "vanishes only from eps = 1000" on Laplace, whose profile is 0 from 1, was
            # confirmed on a relabelled certificate): named as the writer's text
            return False
        got = {k: _value(v) for k, v in m.groupdict().items() if k != "model"}
        if any(v is None for v in got.values()):
            return False  # a number this reader cannot read exactly: named, not confirmed
        if "model" in m.groupdict():
            model = _NOT_GDP_MODELS.get(name)
            mm = None if model is None else re.fullmatch(model, m.group("model"))
            if mm is None:
                raise CertificateRejected(f"{what} is not the large-eps model of the {name} mechanism")
            if "delta0" in mm.groupdict() and _value(mm.group("delta0")) != exact_input(inputs, "delta0"):
                raise CertificateRejected(f"{what} names delta0 = {mm.group('delta0')}, not inputs.delta0")
        if "z" in got:
            zero = _zero_from(name, inputs, got["z"])
            if zero is None:
                return False
            if not zero or not got["z"] <= eps_h:  # only certified forms name z here ("unknown" returned above)
                raise CertificateRejected(f"{what}: the profile is not 0 from eps = {m.group('z')} on, or that point "
                                          "is past eps_h")
        if "t" in got and ("bridge_to" not in tail or got["t"] != exact_input(tail, "bridge_to")):
            raise CertificateRejected(f"{what} names the bridge end {m.group('t')}, not result.tail.bridge_to")
        if "a" in got and ("argmax" not in head or got["a"] != exact_input(head, "argmax")):
            raise CertificateRejected(f"{what} names eps = {m.group('a')}, not result.head.argmax")
        return True
    return False


def _certify_details(name: str, inputs: Mapping[str, Any], result: Mapping[str, Any], head: Mapping[str, Any],
                     tail: Mapping[str, Any], eps_h: Fraction, re: Recheck) -> Recheck:
    """The detail fields of a gdp.certify result, each re-proved against the
    independent answer ``re``: status / tail.status follow the verdict, head.unbounded
    the head's finiteness, tail.limit GDPT Thm 4.4's limit per mechanism. The recorded
    status and verdict must be the ones the recorded head and tail decide
    (:func:`_status_of_record`): a decided certificate relabelled "head only" / "undecided"
    is refused (exit 1), as a claim's verdict must be what its recorded enclosure decides."""
    proved = set(re.proved)
    v = re.verdict
    kind, model = tail.get("kind"), _tail_kind(name, inputs, head)
    if kind == model or kind == "unknown" and tail.get("status") == "unknown":
        # "unknown" with an unknown status asserts nothing (0.1.0 knew fewer tail models)
        proved.add("tail.kind")
    elif kind is not None:
        raise CertificateRejected(f"result.tail.kind={str(kind)[:40]!r}, but the {name} mechanism's tail is "
                                  f"{model!r} (the label follows from the mechanism and its inputs)")
    own = _status_of_record(name, inputs, head, tail, eps_h)
    for key, want, forms in (("status", own, CERTIFY_VERDICTS), ("verdict", CERTIFY_VERDICTS[own], VERDICTS)):
        # a malformed value is left to the schema and accept_verdict (exit 2)
        if result.get(key) in forms and result[key] != want:
            raise CertificateRejected(f"result.{key}={result[key]!r}, but the recorded head and tail decide {want!r}")
    status = {w: st for st, w in CERTIFY_VERDICTS.items()}[v or "undecided"]
    if "status" in result:
        if result["status"] == "head only":
            # asserts neither GDP nor not GDP (the 0.1.0 writer's answer where its tail
            # bound was weaker than this route's), so it is never false
            proved.add("status")
        elif result["status"] != status and v != "undecided":
            raise CertificateRejected(f"result.status={result['status']!r}, the independent route decides {status!r}")
        elif result["status"] == status:
            proved.add("status")
    ts = tail.get("status")
    if v == "holds" and ts == "certified" or v == "fails" and ts == "not GDP" or ts not in (
            "certified", "not GDP"):
        # a tail status other than certified / not GDP ("unknown", "head only") asserts nothing
        proved.add("tail.status")
    if _tail_reason_bound(name, inputs, head, tail, eps_h):
        proved.add("tail.reason")  # re-derived here: not named as the writer's text (issue 22)
    if "limit" in tail:
        lim = _tail_limit(name, inputs, v)
        if lim is not None:
            proved.discard("tail.limit")
            details = dict(re.details)
            details["tail.limit"] = lim
            re = Recheck(lo=re.lo, hi=re.hi, exact=re.exact, dps=re.dps, verdict=re.verdict, proved=frozenset(proved),
                         details=details)
    return Recheck(lo=re.lo, hi=re.hi, exact=re.exact, dps=re.dps, verdict=re.verdict, proved=frozenset(proved),
                   details=re.details)


def _tail_kind(name: str, inputs: Mapping[str, Any], head: Mapping[str, Any]) -> str:
    """The label of the tail model the writer uses for ``name`` (gdp/tail.py ``tail_model``):
    "head" where the head alone decides not GDP (head.unbounded, re-proved), "zero" past the
    largest privacy loss (:func:`_support_end`), "constant" for a positive delta0 (approx,
    subsampled), the closed forms of the Gaussian and GDPT's two examples, else "unknown"."""
    if head.get("unbounded"):
        return "head"
    fixed = {"gaussian": "gaussian", "sgd-example": "gauss_exp", "icea-example": "power"}
    if name in fixed:
        return fixed[name]
    if name in ("approx", "subsampled") and exact_input(inputs, "delta0") > 0:
        return "constant"
    if name == "laplace" or _support_end(name, inputs) is not None:
        return "zero"
    return "unknown"


def _tail_limit(name: str, inputs: Mapping[str, Any], verdict: Optional[str]) -> Optional[tuple[mpf, mpf]]:
    """GDPT Thm 4.4's limit sqrt(limsup eps^2 / (-2 log f(eps))): 0 for a profile that
    vanishes beyond the largest privacy loss (Laplace, pure, approx and subsampled with
    delta0 = 0, randomized response with p < 1), mu0 for the Gaussian (f = delta_mu0)."""
    if name == "gaussian":
        return exact_point(_gaussian_mu0(inputs))
    if name == "laplace" or _support_end(name, inputs) is not None:
        return mpf(0), mpf(0)
    if name == "sgd-example":
        # naive f = exp(-eps^2), so eps^2 / (-2 log f) = 1/2 for every eps > 0. The refined
        # profile (GDPT App B) is min(worst case of (eps_i, delta_i)-DP, naive); past eps_i
        # the first term is the constant delta_i = exp(-eps_i^2) >= exp(-eps^2), so the
        # refined profile equals the naive one there and the limit is the same: 1/sqrt(2),
        # enclosed here with MPFR's directed rounding.
        A = arith(160)
        lo, hi = A.sqrt(A.q(Fraction(1, 2)))
        return mpfr_to_mpf(lo), mpfr_to_mpf(hi)
    if verdict == "fails" and name in ("icea-example", "approx", "subsampled", "rr"):
        # an output of infinite loss with positive mass (or ICEA's K/eps tail): f stays
        # above a positive level or decays like 1/eps, so eps^2 / (-2 log f) -> inf
        return mpmath.inf, mpmath.inf
    return None


def _certify(name: str, inputs: Mapping[str, Any], result: Mapping[str, Any], head: Mapping[str, Any],
             tail: Mapping[str, Any], f: IvFn, eps_h: Fraction, lo: mpf, hi: mpf, hi_in: mpf, dps: int) -> Recheck:
    """The head and tail of a gdp.certify / gdp.optimal_mu result, re-proved in directed
    rounding (``f`` the profile's enclosure, :func:`_iv_profile`). ``lo``, ``hi`` are the
    recorded ends read outward (a refusal must be past them) and ``hi_in`` the upper end read
    inward (rounded down, at most the recorded decimal): the sup is proved <= ``hi_in``, so that
    the proof is one of the recorded decimal (:class:`.decimals.Ends`)."""
    if head.get("unbounded"):
        at = exact_input(head, "argmax")
        if not 0 <= at <= eps_h:
            raise CertificateRejected("head.unbounded: head.argmax is outside the head [0, eps_h]")
        one = _one_at(name, inputs, at)
        if one is False:
            raise CertificateRejected(
                f"head.unbounded recorded, but the {name} profile is < 1 everywhere (exactly, from its "
                "parameters): G_f is finite on the head")
        if one is None:
            raise CouldNotReprove("head.unbounded recorded, but f(head.argmax) = 1 is not proved here")
        inf = (mpmath.inf, mpmath.inf)
        return Recheck(lo=mpmath.inf, hi=mpmath.inf, dps=dps, verdict="fails",
                       proved=frozenset({"head.unbounded"}), details={"head.enclosure": inf})
    if lo == mpmath.inf:
        if _tail_status_iv(name, inputs, eps_h, mpmath.inf) == "not GDP":
            details, proved = {}, set()
            henc = head.get("enclosure")
            if isinstance(henc, dict):
                # a not-GDP tail with a bounded head: the head's own enclosure is re-proved
                # like a GDP head (G_f at the argmax, cells at its upper end)
                from .verify import enclosure_of

                h_ends = enclosure_of(henc, "result.head.enclosure", dps)
                h_lo, h_hi = h_ends
                if mpmath.isfinite(h_hi):
                    with mpmath.workdps(_head_dps(h_lo, h_hi)):
                        h = _certify(name, inputs, {"enclosure": henc}, head, {}, f, eps_h, h_lo, h_hi,
                                     h_ends.inner[1], _head_dps(h_lo, h_hi))
                    details = {k: v for k, v in h.details.items() if k == "head.enclosure"}
                    proved = set(h.proved)
            return Recheck(lo=mpmath.inf, hi=mpmath.inf, dps=dps, verdict="fails", details=details,
                           proved=frozenset(proved))
        raise CouldNotReprove("an infinite optimal mu: the tail is not re-proved 'not GDP' here")
    if name == "gaussian":
        # f = delta_mu0 exactly, so G_f(x) = mu_GDP(x, delta_mu0(x)) = mu0 for every x
        # (GDPT Def 4.1; delta_mu(x) is strictly increasing in mu, App A.5): the sup
        # is mu0, whatever the head's cells, and the tail is mu0 as well
        m0 = _gaussian_mu0(inputs)
        enc0 = exact_point(m0)  # mu0 rounded outward, and mu0 itself for the exact comparison
        proved = {"head.unbounded"}
        if "mu_hi_exact" in head:
            if exact_input(head, "mu_hi_exact") < m0:
                raise CertificateRejected("head.mu_hi_exact is below the Gaussian's mu0 = sup G_f")
            proved.add("head.mu_hi_exact")
        return Recheck(lo=enc0[0], hi=enc0[1], exact=m0, dps=dps, verdict="holds", proved=frozenset(proved),
                       details={"head.enclosure": enc0})
    xs = exact_input(head, "argmax") if "argmax" in head else Fraction(0)
    if not 0 <= xs <= eps_h:
        xs = Fraction(0)  # a hint outside the head is ignored
    # lower end: G_f at the (hinted) argmax, proved from below in directed rounding; G_f(x) <= sup
    dps = _proposal_dps(f, xs, hi, dps)
    with mpmath.workdps(dps):
        return _certify_head(name, inputs, head, tail, f, eps_h, lo, hi, hi_in, dps, xs)


def _proposal_dps(f: "IvFn", x: Fraction, hi: mpf, dps: int) -> int:
    """The head's working digits: :func:`_certify_dps` of min(hi, G + 2), G a proposal of
    G_f at the argmax (untrusted) from rising precision starting at 60 digits, never above
    ``dps``. The digits resolve 1 - f near eps = 0, about e^(-G^2/8): a forged upper end far
    above the truth does not make every cell cost thousands of digits. Too few digits can
    only leave a cell unproved (exit 3), never prove a false one."""
    d = min(60, dps)
    while True:
        g = _g_lower(f, x, d, 100)[1]
        need = _certify_dps(min(hi, g + 2)) if mpmath.isfinite(g) and g > 0 else dps
        if need <= d or d >= dps:
            return min(need, dps)
        d = min(dps, max(need, 2 * d))


def _certify_head(name: str, inputs: Mapping[str, Any], head: Mapping[str, Any], tail: Mapping[str, Any], f: "IvFn",
                  eps_h: Fraction, lo: mpf, hi: mpf, hi_in: mpf, dps: int, xs: Fraction) -> Recheck:
    """:func:`_certify` for a finite head: lower end at the argmax ``xs``, upper end by cells."""
    g_lo, g_prop = _g_lower(f, xs, dps, _bits_needed(lo, hi))
    if g_lo > hi:
        raise CertificateRejected(
            f"G_f(argmax) >= {mpmath.nstr(g_lo, 15)} is above the recorded upper end: sup G_f > hi"
        )
    if hi == mpmath.inf:
        raise CouldNotReprove("a finite lower end with an infinite upper end: the sup is not re-proved infinite")
    fbound = _cell_bound_iv(name, inputs, f)
    convex = name in _CONVEX_IN_T
    hints = head.get("breakpoints") if isinstance(head.get("breakpoints"), list) else None
    work = CellWork(weight=_cell_weight(name, inputs))
    mu = hi_in
    if mpmath.isfinite(g_prop) and g_lo < lo and g_prop < lo:
        # the lower end is not proved at the argmax, and the proposal of G_f there is below
        # it: try to refute it by proving sup over the head <= a value between the two (a
        # quarter of the cell budget; it only guides: on failure the recorded upper end is
        # proved and the lower end is answered by the acceptance rule, exit 3)
        tight = g_prop + (lo - g_prop) / 2
        share = work.share(0.25)
        start = share.left
        try:
            _prove_cells_iv(f, fbound, Fraction(0), eps_h, tight, hints, "head", dps, share, convex,
                            monotone=name in _MONOTONE)
            mu = tight
        except BudgetExceeded:
            raise
        except (CouldNotReprove, CertificateRejected):
            pass
        work.charge(start - share.left)
    # the head is proved once, at the least upper end the certificate records (the recorded
    # upper end, head.mu_hi_exact, head.enclosure.hi): sup <= that value implies the larger
    # ones by monotonicity of mu_GDP in mu, so genuine certificates pay for one proof. Each is
    # read inward (rounded down): a proof at a binary reading above the decimal proved only that
    # reading, and a sup between the decimal and it was confirmed (the reading slack). A refusal
    # is sought past the reading outward (rounded up), as before
    targets = [(hi_in, hi, "head")]
    if "mu_hi_exact" in head:
        x_dn, x_up = exact_enclosure(exact_input(head, "mu_hi_exact"))
        targets.append((x_dn, x_up, "head (head.mu_hi_exact)"))
    henc = head.get("enclosure")
    if isinstance(henc, dict):
        from .verify import enclosure_of

        h_ends = enclosure_of(henc, "result.head.enclosure", dps)
        if mpmath.isfinite(h_ends[1]):
            targets.append((h_ends.inner[1], h_ends[1], "head (head.enclosure)"))
    least, least_out, where = min(targets, key=lambda t: t[0])
    if mu < hi_in and least >= mu:
        head_hi = mu  # the refutation attempt proved sup over the head <= mu already
    else:
        _prove_cells_iv(f, fbound, Fraction(0), eps_h, least, hints, where, dps, work, convex,
                        monotone=name in _MONOTONE, refute_above=least_out)
        head_hi = least  # sup over the head <= head_hi, proved
    proved = {"head.unbounded", "head.mu_hi_exact"} if "mu_hi_exact" in head else {"head.unbounded"}
    # tail
    recorded = tail.get("status")

    def tail_at(m: mpf) -> Optional[str]:
        again = _tail_status_iv(name, inputs, eps_h, m)
        if recorded == "certified" and again != "certified" and "bridge_to" in tail:
            eps_t = exact_input(tail, "bridge_to")
            if not eps_h <= eps_t <= 10**6:
                raise CouldNotReprove("tail.bridge_to outside [eps_h, 1e6]")
            bb = tail.get("bridge_breakpoints") if isinstance(tail.get("bridge_breakpoints"), list) else None
            # beyond eps_h > 0 neither f nor delta_mu is near 1: the head's extra digits
            # (sized for eps = 0) are not needed, the slack follows the working precision
            _prove_cells_iv(f, fbound, eps_h, eps_t, m, bb, "tail bridge", min(dps, 50), work, convex,
                            monotone=name in _MONOTONE, refute_above=hi if m == hi_in else m)
            again = _tail_status_iv(name, inputs, eps_t, m)
        return again

    if mu < hi_in:
        # the refutation attempt bounded the head below lo; the sup over every eps is below
        # lo only if the tail is proved at that value too. A bridge cell failing there
        # refutes our own proposal, not the certificate: fall back to the recorded upper end
        try:
            again = tail_at(mu)
        except BudgetExceeded:
            raise
        except (CouldNotReprove, CertificateRejected):
            again = None
        if again not in ("certified", "not GDP"):
            mu = hi_in
            again = tail_at(mu)
    else:
        again = tail_at(mu)
    verdict = {"certified": "holds", "not GDP": "fails"}.get(again or "", "undecided")
    if verdict == "fails":
        return Recheck(lo=mpmath.inf, hi=mpmath.inf, dps=dps, verdict=verdict, proved=frozenset(proved),
                       details={"head.enclosure": (g_lo, head_hi)})
    return Recheck(lo=g_lo, hi=mu, dps=dps, verdict=verdict, proved=frozenset(proved),
                   details={"head.enclosure": (g_lo, head_hi)})


def _support_end(name: str, inputs: Mapping[str, Any]) -> Optional[mpf]:
    """The loss bound L with f(eps) = 0 for eps >= L (the largest privacy loss), or None:
    pure and (eps0, 0): eps0; randomized response: |log(p / (1 - p))| (LT Thm 3.4);
    subsampled (eps0, 0): log(1 - q + q e^eps0) (amplification by subsampling); Laplace
    of scale b and sensitivity D: D / b (the loss (|x - D| - |x|) / b lies in [-D/b, D/b],
    so f(eps) = 0 for eps >= D/b, GDPT Sec 4, Laplace example). Without it a head longer than
    D/b could not be proved where delta_mu(eps) falls below the cell bound's 1e-35 term."""
    if name == "laplace":
        d = exact_input(inputs, "sensitivity") if "sensitivity" in inputs else Fraction(1)
        return fraction_to_mpf(d / exact_input(inputs, "scale"))
    if name in ("pure", "approx") and (name == "pure" or exact_input(inputs, "delta0") <= 0):
        return fraction_to_mpf(exact_input(inputs, "eps0"))
    if name == "rr":
        p = exact_input(inputs, "p")
        if not 0 <= p <= 1:
            raise MalformedCertificate(f"randomized response needs p in [0, 1], not {inputs['p']}")
        return abs(mpmath.log(fraction_to_mpf(p) / (1 - fraction_to_mpf(p)))) if 0 < p < 1 else None
    if name == "subsampled" and exact_input(inputs, "delta0") <= 0:
        q, e0 = fraction_to_mpf(exact_input(inputs, "rate")), fraction_to_mpf(exact_input(inputs, "eps0"))
        return mpmath.log(1 - q + q * mpmath.exp(e0))
    return None


def _support_end_upper(name: str, inputs: Mapping[str, Any]) -> Optional[Fraction]:
    """An exact rational at or above :func:`_support_end` (the loss bound L, exact for
    Laplace and pure; a logarithm rounded up to 2^-32 otherwise, +2^-32 so that a float
    proposal of L cannot land below it), or None without a finite L. Only a proposal for
    where a bridge ends: :func:`_tail_status_iv` re-proves the tail there."""
    if name == "laplace":
        d = exact_input(inputs, "sensitivity") if "sensitivity" in inputs else Fraction(1)
        return d / exact_input(inputs, "scale")
    if name == "pure":
        return exact_input(inputs, "eps0")
    z = _support_end(name, inputs)
    if z is None or not mpmath.isfinite(z) or z > 10**6:
        return None
    return Fraction(int(mpmath.ceil(z * 2**32)) + 1, 2**32)


def _dyadic_mid(a: Fraction, b: Fraction) -> Fraction:
    m = (a + b) / 2
    if m.denominator > 2**80:  # keep the rationals short
        m = Fraction(int(m * 2**60), 2**60)
        if not a < m < b:
            m = (a + b) / 2
    return m


def _expr_cells(inputs: Mapping[str, Any]) -> Callable[[Arith, Fraction, Fraction], Iv]:
    """An enclosure of f over every eps in [a, b] for an ``expr`` profile: the expression
    walked on MPFR intervals in directed rounding (:func:`.profiles.expr_over`, the walker
    ``dp.profile`` uses), with eps the cell rounded outward. An operation undefined on the
    cell (a log reaching 0, a division by an interval holding 0) answers exit 3."""
    over = expr_over(inputs)

    def cell(A: Arith, a: Fraction, b: Fraction) -> Iv:
        try:
            return over(A, (A.q(a)[0], A.q(b)[1]))
        except (ValueError, ZeroDivisionError) as exc:
            raise CouldNotReprove(f"the expr profile has no interval bound on [{float(a):.6g}, "
                                  f"{float(b):.6g}] ({exc})") from None

    return cell


# --------------------------------------------------------------------------- directed profiles
# The gdp.certify / gdp.optimal_mu route evaluates every profile as an enclosure in MPFR
# directed rounding at the exact eps (IvFn), so that every comparison it makes is a proof.

IvFn = Callable[[Arith, Fraction], Iv]
_ZERO = (mpfr(0), mpfr(0))


def _pos(A: Arith, x: Iv) -> Iv:
    """max(0, x), monotone: applied to both ends."""
    return (max(mpfr(0), x[0]), max(mpfr(0), x[1]))


def _pair_profile(A: Arith, P: list, Q: list, E: Iv) -> Iv:
    """sum_i (p_i - E q_i)_+ of a finite pair with interval masses (the hockey-stick
    divergence at e^eps = E; an atom whose sign the intervals do not decide contributes
    [0, its upper end])."""
    return A.fsum([_pos(A, A.sub(p, A.mul(E, q))) for p, q in zip(P, Q)])


def _four_output_iv(A: Arith, E0: Iv, D0: Iv, E: Iv) -> Iv:
    """GDPT's 4-output mechanism of (eps0, delta0)-DP (LT Thm 4.5 pair), E0 = e^eps0,
    E = e^eps, summed output by output."""
    one = A.q(1)
    s = A.div(E0, A.add(one, E0))
    t = A.div(one, A.add(one, E0))
    c = A.sub(one, D0)
    P = [D0, A.mul(c, s), A.mul(c, t), _ZERO]
    Q = [_ZERO, A.mul(c, t), A.mul(c, s), D0]
    return _pair_profile(A, P, Q, E)


def _below_zero_iv(nonneg: IvFn) -> IvFn:
    """nonneg for eps >= 0; below 0 the worst case of (0, f(0))-DP, f(0) + (1 - f(0))(1 - e^eps)."""

    def f(A: Arith, eps: Fraction) -> Iv:
        if eps >= 0:
            return nonneg(A, eps)
        d0 = nonneg(A, Fraction(0))
        one = A.q(1)
        return A.add(d0, A.mul(A.sub(one, d0), A.neg(A.expm1(A.q(eps)))))

    return f


def _icea_k(A: Arith) -> Iv:
    """K = 4 e^-2 of the ICEA example (GDPT App B)."""
    return A.scale2(A.exp(A.q(-2)), 2)


def _naive_iv(name: str) -> IvFn:
    """The App B examples' naive profiles at eps >= 0: exp(-eps^2) (SGD) and min(1, K/eps) (ICEA)."""
    if name == "sgd-example":
        return lambda A, e: A.exp(A.neg(A.q(e * e)))

    def icea(A: Arith, e: Fraction) -> Iv:
        if e <= 0:
            return (mpfr(1), mpfr(1))
        v = A.div(_icea_k(A), A.q(e))
        return (min(v[0], mpfr(1)), min(v[1], mpfr(1)))

    return icea


def _k_sign(A: Arith, name: str, x: Fraction) -> Iv:
    """h(x) = k(x) e^-x, k the App B function f'(x)(1 + e^x) + e^x (1 - f(x)), in directed
    rounding: SGD 1 - e^{-x^2} - 2x e^{-x^2}(1 + e^-x); ICEA (x > K) -K/x^2 (1 + e^-x) + 1 - K/x."""
    X, one = A.q(x), A.q(1)
    emx = A.exp(A.neg(X))
    if name == "sgd-example":
        g = A.exp(A.neg(A.q(x * x)))
        return A.sub(A.sub(one, g), A.mul(A.scale2(A.mul(X, g), 1), A.add(one, emx)))
    K = _icea_k(A)
    return A.sub(A.sub(one, A.div(K, X)), A.mul(A.div(K, A.q(x * x)), A.add(one, emx)))


_REF_BRACKET: dict = {}


def refinement_bracket(name: str, bits: int) -> tuple[Fraction, Fraction]:
    """[lo, hi] holding eps_i, the positive zero of App B's k (GDPT App B), proved: h = k e^-x has
    h(lo) < 0 < h(hi) in directed rounding, and the positive zero is unique:

    * ICEA: for x > K, h(x) = 1 - K/x - K(1 + e^-x)/x^2 is strictly increasing (its derivative
      K/x^2 + 2K(1 + e^-x)/x^3 + K e^-x/x^2 is positive), and on (0, K] (f = 1, f' taken as
      -K/x^2) h = -K(1 + e^-x)/x^2 < 0; lo > K is proved (e^2 lo > 4).
    * SGD: h' = 2 e^{-x^2} g(x), g(x) = x - 1 - e^-x + 2x^2 (1 + e^-x) + x e^-x, with
      g' = 1 + 2e^-x + 4x + e^-x (3x - 2x^2) >= 1 + 4x - 2x^2 e^-x > 1 (x e^-x <= 1/e < 2), so
      g increases from g(0) = -2: h decreases then increases, h(0) = 0, h -> 1: exactly one
      positive zero, where h changes sign from - to +.

    The zero is proposed by mpmath's findroot from 1.17 (untrusted) and widened until the
    signs are proved."""
    key = (name, bits)
    if key in _REF_BRACKET:
        return _REF_BRACKET[key]
    with mpmath.workprec(bits + 20):
        m = mpf_to_fraction(refinement_point_mp(name))
    A = arith(bits + 16)
    for widen in (8, 24, 48):
        w = m * Fraction(1, 2 ** max(bits - widen, 8))
        lo, hi = m - w, m + w
        if name == "icea-example":
            e2 = A.mul(A.exp(A.q(2)), A.q(lo))
            if not e2[0] > 4:
                continue
        if _k_sign(A, name, lo)[1] < 0 < _k_sign(A, name, hi)[0]:
            _REF_BRACKET[key] = (lo, hi)
            return lo, hi
    raise CouldNotReprove(f"the App B refinement point of {name} could not be bracketed in directed rounding")


def _example_iv(name: str, refined: bool, bits: int) -> IvFn:
    naive = _naive_iv(name)
    if not refined:
        return _below_zero_iv(naive)
    lo, hi = refinement_bracket(name, bits)

    def nonneg(A: Arith, e: Fraction) -> Iv:
        # the 4-output worst case of (eps_i, delta_i), eps_i in [lo, hi] (interval arithmetic
        # over it encloses the value at the exact eps_i); delta_i = naive(eps_i), decreasing
        EI = (A.q(lo)[0], A.q(hi)[1])
        d_hi, d_lo = naive(A, lo), naive(A, hi)
        DI = (d_lo[0], d_hi[1])
        worst = _four_output_iv(A, A.exp(EI), DI, A.exp(A.q(e)))
        nv = naive(A, e)
        return (min(worst[0], nv[0]), min(worst[1], nv[1]))

    return _below_zero_iv(nonneg)


def _iv_profile(name: str, inputs: Mapping[str, Any], bits: int) -> IvFn:
    """The mechanism's privacy profile as an enclosure at exact eps (directed rounding), the
    same profiles as the mpmath ones above (re-derived in closed form where one exists)."""
    if name == "laplace":
        b = exact_input(inputs, "scale")
        d = exact_input(inputs, "sensitivity") if "sensitivity" in inputs else Fraction(1)
        if b <= 0 or d <= 0:
            raise MalformedCertificate("the Laplace mechanism needs scale > 0 and sensitivity > 0")

        def lap(A: Arith, e: Fraction) -> Iv:
            # loss (|x - D| - |x|)/b in [-D/b, D/b]; inside, L > e iff x < x0 = (D - b e)/2, and
            # F0(x0) - e^e F_D(x0) = 1 - e^{-x0/b}/2 - e^{e + (x0 - D)/b}/2 = 1 - e^{(e - D/b)/2}
            if e >= d / b:
                return _ZERO
            if e < -d / b:
                return A.neg(A.expm1(A.q(e)))
            return A.neg(A.expm1(A.q((e - d / b) / 2)))

        return lap
    if name in ("pure", "approx"):
        e0 = exact_input(inputs, "eps0")
        d0 = exact_input(inputs, "delta0") if name == "approx" else Fraction(0)

        def four(A: Arith, e: Fraction) -> Iv:
            # delta(eps) = delta0 + (1 - delta0)(e^eps0 - e^eps)_+ / (1 + e^eps0) (the four-output
            # pair): exactly 0 from eps0 on when delta0 = 0. The interval route leaves a rounding
            # residue there, which no cell can prove below delta_mu's e^-(eps/mu)^2 tail
            if d0 == 0 and e >= e0:
                return _ZERO
            return _four_output_iv(A, A.exp(A.q(e0)), A.q(d0), A.exp(A.q(e)))

        return four
    if name == "rr":
        p = exact_input(inputs, "p")
        if not 0 <= p <= 1:
            raise MalformedCertificate(f"randomized response needs p in [0, 1], not {inputs['p']}")
        return lambda A, t: _pair_profile(A, [A.q(p), A.q(1 - p)], [A.q(1 - p), A.q(p)], A.exp(A.q(t)))
    if name == "subsampled":
        q = exact_input(inputs, "rate")
        e0, d0 = exact_input(inputs, "eps0"), exact_input(inputs, "delta0")
        if not 0 < q <= 1:
            raise MalformedCertificate("subsampled needs rate in (0, 1]")

        def sub(A: Arith, e: Fraction) -> Iv:
            # q base(eb), e^eb = 1 + (e^e - 1)/q (amplification by subsampling)
            X = A.add(A.q(1), A.div(A.expm1(A.q(e)), A.q(q)))
            return A.mul(A.q(q), _four_output_iv(A, A.exp(A.q(e0)), A.q(d0), X))

        return _below_zero_iv(sub)
    if name in ("sgd-example", "icea-example"):
        return _example_iv(name, str(inputs.get("refined", "")).lower() == "true", bits)
    if name == "gaussian":
        mu0 = _gaussian_mu0(inputs)
        from .gdp import delta_mu_iv

        return lambda A, e: delta_mu_iv(A, mu0, e)
    if name == "expr":
        cells = _expr_cells(inputs)
        return lambda A, e: cells(A, e, e)
    raise CouldNotReprove(f"no directed-rounding profile for mechanism {name!r}")


def _bits(dps: int) -> int:
    """Working bits of the directed route for the head's working digits."""
    return int(dps * 3.33) + 32


def _frac(x: mpf) -> Fraction:
    """A recorded (or proposed) binary number, exactly (not rounded to the ambient precision)."""
    return mpf_to_fraction(x)


def _g_lower(fiv: IvFn, x: Fraction, dps: int, bits_needed: Optional[int] = None) -> tuple[mpf, mpf]:
    """(a proved lower bound of G_f(x), the proposal it came from): G_f(x) = mu_GDP(x, f(x))
    >= m as soon as delta_m(x) < f(x) is proved (delta_mu(x) increases in mu, GDPT App A.5):
    the upper end of delta_m(x) below the lower end of f(x), both in directed rounding. m is
    proposed by mpmath bisection (untrusted) and nudged down until that holds; f(x) >= 1
    (proved) gives +inf, f(x) <= 0 gives 0. ``bits_needed`` caps the proposal's bisection
    steps (the working precision can be thousands of bits, where each step costs two erfc
    at that precision; the lower end needs only the recorded enclosure's relative width)."""
    from .gdp import delta_mu_iv

    A = arith(_bits(dps))
    fx = fiv(A, x)
    if fx[0] >= 1:
        return mpmath.inf, mpmath.inf
    if not fx[0] > 0:
        return mpf(0), mpf(0)
    with mpmath.workdps(dps):
        steps = None if bits_needed is None else bits_needed + 64  # (the bracket reaches up to 2^60)
        m = mu_gdp_mp(fraction_to_mpf(x), mpfr_to_mpf(fx[0]), steps)
        if not mpmath.isfinite(m) or m <= 0:
            return mpf(0), mpf(0)
        mf = _frac(m)
    good = int(dps * 3.32)  # the proposal's correct bits, about (bisection at dps digits)
    if bits_needed is not None:
        good = min(good, bits_needed)
    for k in (good - 12, good // 2, 40, 20, 8):
        cand = mf * (1 - Fraction(1, 2 ** max(k, 4)))
        if cand > 0 and delta_mu_iv(A, cand, x)[1] < fx[0]:
            return mpfr_to_mpf(A.q(cand)[0]), m
    return mpf(0), m


def _cell_bound_iv(name: str, inputs: Mapping[str, Any], fiv: IvFn) -> Callable[[Arith, Fraction, Fraction], mpfr]:
    """An upper bound (directed) of sup_[a, b] f: f(a)'s upper end for the non-increasing
    profiles, the MPFR interval walk over the cell for ``expr``."""
    if name in _MONOTONE:
        return lambda A, a, b: fiv(A, a)[1]
    if name == "expr":
        cells = _expr_cells(inputs)
        return lambda A, a, b: cells(A, a, b)[1]
    raise CouldNotReprove(f"no cell bound for mechanism {name!r}")


class _DeltaMuEnds:
    """delta_mu(eps) = Phi(u) - e^eps Phi(u - mu), u = mu/2 - eps/mu (GDPT Thm 3.2), at one
    fixed mu, one end at a time (a cell needs only the lower end at b): Phi increasing and
    erfc decreasing, each end takes one directed erfc (or the Mills ratio's continued
    fraction beyond |x| = 5, :meth:`Arith.ncdf`) at the matching end of its argument's
    enclosure; the arguments are formed in interval arithmetic from eps rounded outward."""

    def __init__(self, A: Arith, mu: Fraction) -> None:
        self.A = A
        self.inv = A.q(1 / mu)
        self.half = A.q(mu / 2)
        self.M = A.q(mu)

    def _phi(self, x: mpfr, end: int) -> mpfr:
        A = self.A
        if x >= CF_FROM or x <= -CF_FROM:
            return A.ncdf((x, x))[end]
        r = A._rsqrt2
        # Phi(x) = erfc(-x / sqrt 2) / 2; -x / sqrt 2 rounded against the wanted end (erfc decreases)
        nx = A.dn.minus(x)  # exact at x's precision (Python's unary minus would round to 53 bits)
        ctx = A.up if end == 0 else A.dn
        t = ctx.mul(nx, r[1] if (nx >= 0) == (end == 0) else r[0])
        e = A.dn.erfc(t) if end == 0 else A.up.erfc(t)
        return (A.dn if end == 0 else A.up).mul_2exp(e, -1)

    def _args(self, eps: Fraction) -> tuple:
        A = self.A
        E = A.q(eps)
        u = A.sub(self.half, A.mul(E, self.inv))
        return E, u, A.sub(u, self.M)

    def lower(self, eps: Fraction) -> mpfr:
        A = self.A
        E, u, v = self._args(eps)
        return max(mpfr(0), A.dn.sub(self._phi(u[0], 0), A.up.mul(A.up.exp(E[1]), self._phi(v[1], 1))))

    def tangent_lower(self, c: Fraction, xs: tuple) -> tuple:
        """Lower ends of delta_mu's tangent in t = e^eps at eps = c (a lower bound of the convex
        delta_mu everywhere), evaluated at t = e^x for each x of ``xs``: delta_mu(c) +
        s (e^x - e^c), s = -Phi(-c/mu - mu/2) enclosed, each product's lower end."""
        A = self.A
        E, u, v = self._args(c)
        d_lo = self.lower(c)
        slope = (-self._phi(v[1], 1), -self._phi(v[0], 0))
        ec = A.exp(E)
        return tuple(A.dn.add(d_lo, A.mul(slope, A.sub(A.exp(A.q(x)), ec))[0]) for x in xs)

    def upper(self, eps: Fraction) -> mpfr:
        A = self.A
        E, u, v = self._args(eps)
        return min(mpfr(1), A.up.sub(self._phi(u[1], 1), A.dn.mul(A.dn.exp(E[0]), self._phi(v[0], 0))))


class CellWork:
    """The work units left for one certificate's cell proofs (:data:`.limits.GDP_CELL_WORK_CAP`).
    Counted, not timed: the same certificate gets the same answer on any machine and load.
    ``weight``: the units of one cell of this profile at 200 bits (:func:`_cell_weight`)."""

    def __init__(self, units: float = GDP_CELL_WORK_CAP, weight: float = 1.0) -> None:
        self.left = float(units)
        self.weight = weight

    def share(self, fraction: float) -> "CellWork":
        """A sub-budget of at most ``fraction`` of what is left (its spending is charged back
        with :meth:`charge`)."""
        return CellWork(self.left * fraction, self.weight)

    def charge(self, spent: float) -> None:
        self.left -= spent


def _cell_weight(name: str, inputs: Mapping[str, Any]) -> float:
    """Units of one cell of the mechanism's profile (:func:`dpverify.certificate.format.gdp_cell_weight`,
    the estimate the producer counts its own cells with)."""
    return gdp_cell_weight(name, str(inputs.get("refined", "")).lower() == "true", inputs.get("profile"))


class CellsExhausted(CouldNotReprove):
    """The cell budget ran out before every cell was proved (exit 3 with the reason)."""


def _cell_cost(bits: int) -> float:
    """Work units of one cell at ``bits`` (one erfc pair and one exp; MPFR's cost grows
    about like bits^1.6 in this range)."""
    return max(1.0, (bits / 200) ** 1.6)


def _prove_cells_iv(fiv: IvFn, fbound: Callable[[Arith, Fraction, Fraction], mpfr], a0: Fraction, b0: Fraction,
                    mu: mpf, hints: Any, where: str, dps: int, work: Optional[CellWork] = None,
                    convex: bool = False, monotone: bool = False, refute_above: Optional[mpf] = None) -> None:
    """Prove sup_[a0, b0] G_f <= mu on a streamed adaptive partition: cell [a, b] is proved
    by sup f <= delta_mu(b) (then f(x) <= delta_mu(b) <= delta_mu(x) on the cell: delta_mu
    decreases in eps, so G_f(x) <= mu), the upper end of the cell bound against the lower
    end of delta_mu(b), both in directed rounding. Hinted points seed it; unproved cells
    are halved down to 2^-40 (relative to the head).

    A refusal needs a point x with f(x) > delta_mu(x) (proved: G_f(x) > mu); it is looked
    for at the cell that stops the proof and at the left ends of the cells still pending
    (:func:`_refute_near`), so a false upper end whose excess lies inside the head is
    refused rather than left undecided. ``refute_above`` (default ``mu``) is the level a
    refusal must prove G_f above: a recorded decimal end is proved at its reading rounded down
    (``mu``) and refused only past its reading rounded up, so neither decides the binary number
    in place of the decimal. The cells are charged to ``work``; when it runs out
    the answer is exit 3 (CellsExhausted) naming the cell width reached.

    ``convex``: f is convex in t = e^eps (:data:`_CONVEX_IN_T`). So is delta_mu (the
    hockey-stick divergence of N(0, 1) and N(mu, 1)), with d delta_mu / dt = -Phi(-eps/mu - mu/2)
    (d delta_mu / d eps = -e^eps Phi(-eps/mu - mu/2), GDPT eq. 2 differentiated: the density
    terms cancel). A cell that fails the first-order test is then tried by a second-order one:
    on [t_a, t_b], f lies below its chord (through the upper ends of f(a), f(b)) and delta_mu
    above its tangent at the cell's midpoint c; chord minus tangent is affine in t, so chord <=
    tangent at t_a and at t_b proves f <= delta_mu on the whole cell. Its error is of the order
    of the width squared, so near a flat argmax (Laplace at eps = 0, where G_f'(0) = 0) cells of
    width sqrt(hi - sup G_f) suffice where the first-order test needs width hi - sup G_f."""
    A = arith(_bits(dps))
    MU = _frac(mu)
    if MU <= 0:
        raise CouldNotReprove(f"{where}: a non-positive upper end")
    work = work if work is not None else CellWork()
    cost = _cell_cost(_bits(dps)) * work.weight
    dm = _DeltaMuEnds(A, MU)
    dm_ref = dm if refute_above is None or refute_above == mu else _DeltaMuEnds(A, _frac(refute_above))
    pts = [a0, b0]
    if hints:
        seeds = []
        for h in hints[:10**6]:
            try:
                x = exact_input({"x": h}, "x")
            except (MalformedCertificate, CertificateRejected):
                continue
            if a0 < x < b0:
                seeds.append(x)
        seeds = sorted(set(seeds))
        if (len(seeds) + 1) * cost > work.left:
            # One cell per hint would spend the whole budget before any proof (the naive and
            # shuffled staircases record n = 2 sqrt(2 pi) eps_h / margin breakpoints): such a
            # certificate could only answer exit 3 on its hints. Every k-th hint seeds it
            # instead, within a quarter of the budget; a cell that fails is halved as any other,
            # so a recorded end with slack is proved on coarser cells, one without is refused
            # or left undecided exactly as before. Hints are hints: any partition is sound.
            k = -(-(len(seeds) + 1) * 4 * cost // max(work.left, cost))
            seeds = seeds[int(k) - 1::int(k)]
        pts = [a0, *seeds, b0]
    elif b0 > a0:
        pts = [a0 + (b0 - a0) * Fraction(i, 64) for i in range(65)]
    min_w = (b0 - a0 + 1) / Fraction(2**40)
    stack = [(a, b) for a, b in zip(pts, pts[1:])][::-1]
    spent = 0.0
    try:
        while stack:
            a, b = stack.pop()
            spent += cost
            if spent > work.left:
                _refute_near(fiv, dm_ref, A, a, b, stack, where)
                raise CellsExhausted(
                    f"{where}: the recorded upper end {mpmath.nstr(mu, 17)} is closer to sup G_f than the re-check "
                    f"can prove within its cap of {GDP_CELL_WORK_CAP} cell units (cells of width "
                    f"{mpmath.nstr(fraction_to_mpf(b - a), 3)} at eps = {mpmath.nstr(fraction_to_mpf(a), 12)} were "
                    "still unproved); a wider recorded enclosure (the producer's --margin) verifies")
            fb = fbound(A, a, b)
            if fb <= 0 and monotone:
                # f >= 0 does not increase, so f = 0 from a on; every pending cell lies to the
                # right of a (cells are taken left to right): all proved at once (0 <= delta_mu).
                # Hinted breakpoints past a support end had cost one cell each, past the cap
                break
            if fb <= 0 or fb <= dm.lower(b):
                continue  # (0 <= delta_mu(x) for every x: a zero profile needs no comparison)
            if convex:
                spent += cost
                ta, tb = dm.tangent_lower(_dyadic_mid(a, b), (a, b))
                if fiv(A, a)[1] <= ta and fiv(A, b)[1] <= tb:
                    continue
            if b - a < min_w:
                _refute_near(fiv, dm_ref, A, a, b, stack, where)
                raise CouldNotReprove(
                    f"{where}: the cell at eps = {mpmath.nstr(fraction_to_mpf(a), 12)} cannot be proved")
            m = _dyadic_mid(a, b)
            stack.append((m, b))
            stack.append((a, m))
    finally:
        work.charge(spent)


#: how many pending cells :func:`_refute_near` probes (each probe is one point evaluation)
_REFUTE_PROBES = 64


def _refute_near(fiv: IvFn, dm: "_DeltaMuEnds", A: Arith, a: Fraction, b: Fraction, stack: list, where: str) -> None:
    """Raise CertificateRejected when G_f(x) > mu is proved at a, b or the left end of one of
    the next pending cells (the cells to the right of the one that stopped the proof: where
    a false upper end is exceeded, the excess is an interval that starts there): f(x)'s lower
    end above delta_mu(x)'s upper end, both in directed rounding. Otherwise return."""
    n = max(2, int(_REFUTE_PROBES / _cell_cost(A.prec)))  # (at most about 64 cells' work)
    probes = [a, b] + [c for c, _ in stack[::-1][:n]]
    for x in probes:
        if fiv(A, x)[0] > dm.upper(x):
            raise CertificateRejected(
                f"{where}: G_f({mpmath.nstr(fraction_to_mpf(x), 12)}) exceeds the recorded upper end: sup G_f > hi")


def _le_exp(A: Arith, x: Iv, eps: Fraction) -> Optional[bool]:
    """Is x <= e^eps (decided on the enclosures; None when they overlap)?"""
    e = A.exp(A.q(eps))
    if x[1] <= e[0]:
        return True
    if x[0] > e[1]:
        return False
    return None


def _tail_status_iv(name: str, inputs: Mapping[str, Any], eps_h: Fraction, mu: mpf) -> Optional[str]:
    """Independent tail status, decided in exact rationals or directed rounding; None when
    it is not decided here. Gaussian: certified iff mu >= mu0 (f = delta_mu0, GDPT Thm 4.4).
    Laplace, pure, approx / subsampled with delta0 = 0, randomized response with 0 < p < 1:
    f = 0 beyond the largest privacy loss z (D/b; eps0; log(1 - q + q e^eps0); |log(p/(1-p))|,
    LT Thm 3.4), where every delta_mu > 0, so certified iff eps_h >= z (else unknown); with an
    output of infinite loss (delta0 > 0, p in {0, 1}) or ICEA's K/eps tail: not GDP. SGD:
    the Mills-ratio conditions (i)-(iv) (:func:`_mills_conditions_iv`)."""
    A = arith(160)
    if name == "gaussian":
        return "certified" if mpmath.isfinite(mu) and _frac(mu) >= _gaussian_mu0(inputs) else None
    if name == "laplace":
        d = exact_input(inputs, "sensitivity") if "sensitivity" in inputs else Fraction(1)
        return "certified" if eps_h >= d / exact_input(inputs, "scale") else "unknown"
    if name == "icea-example":
        return "not GDP"
    if name in ("pure", "approx"):
        if name == "approx" and exact_input(inputs, "delta0") > 0:
            return "not GDP"
        return "certified" if eps_h >= exact_input(inputs, "eps0") else "unknown"
    if name == "rr":
        p = exact_input(inputs, "p")
        if not 0 < p < 1:
            return "not GDP"
        r = max(p, 1 - p) / min(p, 1 - p)  # e^z
        ok = _le_exp(A, A.q(r), eps_h)
        return None if ok is None else ("certified" if ok else "unknown")
    if name == "subsampled":
        if exact_input(inputs, "delta0") > 0:
            return "not GDP"
        q, e0 = exact_input(inputs, "rate"), exact_input(inputs, "eps0")
        ok = _le_exp(A, A.add(A.q(1 - q), A.mul(A.q(q), A.exp(A.q(e0)))), eps_h)
        return None if ok is None else ("certified" if ok else "unknown")
    if name == "sgd-example":
        return "certified" if mpmath.isfinite(mu) and _mills_conditions_iv(A, _frac(mu), eps_h) else None
    return None


def _mills_conditions_iv(A: Arith, mu: Fraction, eps: Fraction) -> bool:
    """Conditions (i)-(iv) of dpverify.gdp.tail at c = alpha = 1 (the SGD example's
    exp(-eps^2) tail): beta = 1 - 1/(2 mu^2) > 0, p mu > 1 with p = eps/mu - mu/2, and
    2 beta eps >= (1 + 1/mu)/mu - 1/2 in exact rationals; psi <= 0 (its upper end, directed)."""
    if mu <= 0:
        return False
    beta = 1 - 1 / (2 * mu * mu)
    p = eps / mu - mu / 2
    if not (beta > 0 and p * mu > 1 and 2 * beta * eps >= (1 + 1 / mu) / mu - Fraction(1, 2)):
        return False
    rat = -eps * eps + eps * eps / (2 * mu * mu) - eps / 2 + mu * mu / 8
    logs = A.add(A.add(A.log(A._sqrt2pi), A.log(A.q(p * p + 1))), A.sub(A.log(A.q(p + mu)), A.log(A.q(p * mu - 1))))
    return A.add(A.q(rat), logs)[1] <= 0


# --------------------------------------------------------------------------- claim quantities


@register("gdp.refinement_point")
def recheck_refinement_point(inputs: Mapping[str, Any], result: Mapping[str, Any]) -> Recheck:
    """eps_i (what = eps) or delta^(eps_i) (what = delta) of GDPT App B: eps_i the unique
    positive zero of k, bracketed by signs proved in directed rounding
    (:func:`refinement_bracket`); delta^ = the naive profile at eps_i, decreasing in eps, so
    its enclosure is [naive(hi), naive(lo)] (directed)."""
    name, what = inputs.get("example"), inputs.get("what")
    if name not in ("sgd-example", "icea-example") or what not in ("eps", "delta"):
        raise MalformedCertificate("inputs.example / inputs.what not recognised")
    digits = needed_digits(result)
    bits = start_bits(digits)
    lo, hi = refinement_bracket(name, bits)
    A = arith(bits)
    if what == "eps":
        v = (A.q(lo)[0], A.q(hi)[1])
    else:
        naive = _naive_iv(name)
        v = (naive(A, hi)[0], naive(A, lo)[1])
    return Recheck(lo=mpfr_to_mpf(v[0]), hi=mpfr_to_mpf(v[1]), dps=digits + 20)


@register("gdp.tail_limit")
def recheck_tail_limit(inputs: Mapping[str, Any], result: Mapping[str, Any]) -> Recheck:
    """Thm 4.4 limit sqrt(limsup eps^2 / (-2 log f)), per mechanism in closed form: 0 for
    Laplace and pure (f vanishes beyond the largest privacy loss), +inf for the ICEA example
    (f decays like 1/eps), 1/sqrt(2) for the SGD example (f = exp(-eps^2) there), enclosed
    in MPFR directed rounding, and the exact mu for the Gaussian, rounded outward."""
    name = inputs.get("mechanism")
    if name in ("laplace", "pure"):
        return Recheck(lo=mpf(0), hi=mpf(0), dps=40)
    if name == "sgd-example":
        lo, hi = _tail_limit("sgd-example", inputs, None)
        return Recheck(lo=lo, hi=hi, dps=40)
    if name == "icea-example":
        return Recheck(lo=mpmath.inf, hi=mpmath.inf, dps=40)
    if name == "gaussian":
        m = exact_input(inputs, "mu")
        return Recheck.of_exact(m, dps=40)
    raise MalformedCertificate(f"no tail limit for mechanism {name!r}")


@register("gdp.optimal_mu")
def recheck_optimal_mu(inputs: Mapping[str, Any], result: Mapping[str, Any]) -> Recheck:
    """Optimal mu of a mechanism (claims), both ends: the lower end is G_f at the
    recorded argmax (a hint; G_f(x) <= sup), the upper end is proved as in
    ``gdp.certify``: every cell of the head [0, eps_h] at mu = hi, and the tail
    beyond eps_h re-derived per mechanism (a tail that is not certified at hi leaves
    the upper end unproved: exit 3). An infinite recorded upper end needs a
    not-GDP tail re-derived from the mechanism."""
    name = inputs.get("mechanism")
    if name not in PROFILE_RECHECKS:
        raise MalformedCertificate(f"no independent re-check for mechanism {name!r}")
    from .verify import enclosure_of

    ends = enclosure_of(result.get("enclosure"), "result.enclosure", 40)
    lo, hi = ends
    eps_h = exact_input(inputs, "eps_h")
    if not 0 <= eps_h <= 10**6:
        raise MalformedCertificate("eps_h must be in [0, 1e6]")
    head = {"argmax": inputs["argmax"]} if "argmax" in inputs else {}
    dps = _head_dps(lo, hi)
    f = _iv_profile(name, inputs, _bits(dps))
    if hi == mpmath.inf:
        with mpmath.workdps(dps):
            if _tail_status_iv(name, inputs, eps_h, mpmath.inf) != "not GDP":
                raise CouldNotReprove("an infinite optimal mu: the mechanism is not re-proved 'not GDP' here")
            if lo > 0 and lo < mpmath.inf:
                return Recheck(lo=mpmath.inf, hi=mpmath.inf, dps=dps)
            raise CouldNotReprove("an infinite optimal mu needs a finite recorded lower end")
    tail: dict = {"status": "certified"}
    end = _support_end_upper(name, inputs)
    if end is not None and end > eps_h:
        # f = 0 beyond the largest privacy loss z, so the tail is certified from z on; the
        # claim records no bridge, so [eps_h, z] is proved cell by cell as gdp.certify's
        # recorded bridge is (without its breakpoint hints)
        tail["bridge_to"] = str(end)
    with mpmath.workdps(dps):
        re = _certify(name, inputs, {"enclosure": result.get("enclosure")}, head, tail, f,
                      eps_h, lo, hi, ends.inner[1], dps)
    if re.verdict != "holds":
        raise CouldNotReprove("the tail beyond eps_h is not re-proved at the recorded upper end: "
                              "the sup over all eps is not bounded")
    return Recheck(lo=re.lo, hi=re.hi, exact=re.exact, dps=re.dps)


@register("gdp.thm51")
def recheck_thm51(inputs: Mapping[str, Any], result: Mapping[str, Any]) -> Recheck:
    """mu = -2 Phi^-1(1/(1+e^eps)) (GDPT Thm 5.1) in MPFR directed rounding: a proposal
    2 sqrt(2) erfinv(tanh(eps/2)) (mpmath, not trusted) is widened to [m-, m+] and proved
    to bracket the root by Phi(-m-/2) > 1/(1+e^eps) > Phi(-m+/2) (Phi(-mu/2) is
    decreasing in mu), each side enclosed with directed rounding; that bracket is the
    independent enclosure. eps = 0 gives mu = 0 exactly."""
    eps = exact_input(inputs, "eps0")
    if eps < 0:
        # no mechanism is eps0-DP for eps0 < 0 (take S = everything: 1 <= e^eps0 < 1), and
        # mu-GDP needs mu >= 0: the theorem states nothing there (the producer refuses it)
        raise CertificateRejected(f"gdp.thm51: eps0 = {inputs.get('eps0')} < 0 is outside GDPT Thm 5.1 "
                                  "(eps0-DP needs eps0 >= 0)")
    if eps == 0:
        return Recheck(lo=mpf(0), hi=mpf(0), dps=30)
    if abs(eps) > 10**6:
        raise CouldNotReprove("gdp.thm51: |eps0| > 1e6 is beyond the second route's range")
    digits = needed_digits(result)
    bits = start_bits(digits)
    dps = digits + 30 + int(abs(eps) / 2)  # 1 - tanh(eps/2) ~ 2 e^-eps cancels eps / ln 10 digits
    with mpmath.workdps(dps):
        m = mpf_to_fraction(2 * mpmath.sqrt(2) * mpmath.erfinv(mpmath.tanh(fraction_to_mpf(eps) / 2)))

    def p(A: Arith) -> Iv:  # 1 / (1 + e^eps)
        return A.div(A.q(1), A.add(A.q(1), A.exp(A.q(eps))))

    def g(x: Fraction) -> "Any":
        return lambda A: A.ncdf(A.q(-x / 2))

    for widen in (16, 64, 256):
        w = abs(m) * Fraction(1, 2 ** max(bits - widen, 8))
        lo, hi = m - w, m + w
        if side(g(lo), p, digits) == 1 and side(g(hi), p, digits) == -1:
            with mpmath.workdps(digits + 30):
                A = arith(bits)
                return Recheck(lo=mpfr_to_mpf(A.q(lo)[0]), hi=mpfr_to_mpf(A.q(hi)[1]), dps=digits + 30)
    raise CouldNotReprove("gdp.thm51: the root could not be bracketed in directed rounding")


@register("gdp.clip_rectify")
def recheck_clip_rectify(inputs: Mapping[str, Any], result: Mapping[str, Any]) -> Recheck:
    """Laplace scale b = (y+ - y-)/eps_h of GDPT Thm 4.7, in exact rationals."""
    ym, yp, eh = (exact_input(inputs, k) for k in ("y_minus", "y_plus", "eps_h"))
    if not (yp > ym and eh > 0):
        raise MalformedCertificate("Thm 4.7 needs y- < y+ and eps_h > 0")
    return Recheck.of_exact((yp - ym) / eh, dps=40)
