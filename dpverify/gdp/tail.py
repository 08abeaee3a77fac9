"""Tail certification: delta(eps) <= delta_mu(eps) for every eps > eps_h.

A full mu-GDP certificate is head (:mod:`dpverify.gdp.staircase`) plus tail
(GDPT Def 3.2, Thm 4.2). The tail is decided from a closed-form *tail model*
of the profile, an upper bound f(eps) <= model(eps) valid from ``valid_from``
on (and an equality from ``exact_from`` on, which is what a "not GDP"
conclusion needs):

* ``zero`` (f = 0 from a point, e.g. pure eps0-DP, Laplace, randomized
  response ``rr --p P`` past log(p/(1-p)), LT Thm 3.4): certified when
  eps_h >= that point (delta_mu > 0); Thm 4.4 limit 0.
* ``gaussian`` (f = delta_mu0): certified when mu >= mu0 (delta_mu is
  increasing in mu, GDPT App A.5); limit mu0.
* ``gauss_exp`` (f <= C exp(-alpha eps^2), e.g. sgd-example): certified by
  explicit Mills-ratio bounds (GDPT App A Lemma 3 / Lemma A.1:
  2/(p + sqrt(p^2+4)) < Phi(-p)/phi(p) < 2/(p + sqrt(p^2 + 8/pi)), p > 0).
  With p = eps/mu - mu/2, q = p + mu and e^eps phi(q) = phi(p):
  delta_mu(eps) = phi(p)[R(p) - R(q)] >= phi(p)(p mu - 1)/((p^2+1)(p+mu))
  (R(p) >= p/(p^2+1), R(q) <= 1/q). Hence the tail holds on [eps_h, inf) if
  (i) beta = alpha - 1/(2 mu^2) > 0, (ii) p(eps_h) > 1/mu,
  (iii) 2 beta eps_h >= (1 + 1/mu)/mu - 1/2 and (iv) Psi(eps_h) <= 0 for
  Psi(eps) = log C - alpha eps^2 + eps^2/(2mu^2) - eps/2 + mu^2/8
             + log(2 pi)/2 + log(p^2+1) + log(p+mu) - log(p mu - 1):
  Psi >= log(model/delta_mu-lower-bound), and (iii) makes
  Psi' <= -2 beta eps - 1/2 + (1 + 1/mu)/mu <= 0 on [eps_h, inf).
  If (ii)-(iv) fail at eps_h, the bridge [eps_h, eps_t] to the first
  eps_t = 2^k eps_h where they hold is closed with staircase cells at the same
  mu. Thm 4.4 limit sqrt(1/(2 alpha)).
* ``power`` (f = K eps^-k, ICEA) and ``constant`` (f = c > 0, approx DP with
  delta0 > 0): *not GDP*. For every mu, delta_mu(eps) <= Phi(-p) <= phi(p)/p
  decays like exp(-eps^2/(2 mu^2)) (Lemma A.1), so it falls below the model
  for large eps; Thm 4.4's limit is +inf (Thm 4.3).
* anything else: status unknown; GDPT Sec 4.2's quantified gap
  delta_mu(eps_h) is reported instead.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Mapping, Optional

from flint import arb

from ..ball import ball, endpoints, exact_str, lower_decimal, upper_decimal, working_precision
from ..certificate.prose import GDP_TAIL_REASONS
from ..mechanisms.base import Profile
from ..mechanisms.gaussian import delta_mu_ball

__all__ = ["TailModel", "TailResult", "tail_model", "certify_tail", "clip_and_rectify_scale"]

_BITS = 256


@dataclass(frozen=True)
class TailModel:
    """Closed-form tail of a profile: f(eps) <= model for eps >= valid_from."""

    kind: str
    params: Mapping[str, arb] = field(default_factory=dict)
    valid_from: arb = field(default_factory=lambda: arb(0))
    exact_from: Optional[arb] = None
    description: str = ""
    #: exact start of a ``zero`` tail when it is rational (compared exactly)
    zero_from_exact: Optional[Fraction] = None

    def limit(self) -> Optional[arb]:
        """GDPT Thm 4.4: lim G_f = sqrt(limsup eps^2 / (-2 log f)); None if unknown."""
        if self.kind == "zero":
            return arb(0)
        if self.kind == "gaussian":
            return self.params["mu"]
        if self.kind == "gauss_exp":
            return (1 / (2 * self.params["alpha"])).sqrt()
        if self.kind in ("power", "constant"):
            return arb("inf")
        return None


@dataclass(frozen=True)
class TailResult:
    """Verdict on the tail: ``certified`` / ``not GDP`` / ``unknown``."""

    status: str
    kind: str
    reason: str
    limit: Optional[arb] = None
    gap: Optional[arb] = None
    bridge_to: Optional[Fraction] = None
    #: partition of [eps_h, bridge_to] whose cells [a, b] have f(a) <= delta_mu(b)
    bridge_breakpoints: Optional[tuple[Fraction, ...]] = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"status": self.status, "kind": self.kind, "reason": self.reason}
        if self.limit is not None:
            with working_precision(_BITS):
                if self.limit.is_finite():
                    out["limit"] = {"lo": lower_decimal(self.limit, 17), "hi": upper_decimal(self.limit, 17)}
                else:
                    out["limit"] = {"lo": "inf", "hi": "inf"}
        if self.bridge_to is not None:
            out["bridge_to"] = exact_str(self.bridge_to)
        if self.bridge_breakpoints is not None:
            out["bridge_breakpoints"] = [exact_str(x) for x in self.bridge_breakpoints]
        return out


def tail_model(profile: Profile) -> TailModel:
    """The closed-form tail of a known profile (``unknown`` otherwise)."""
    from ..mechanisms.approx_dp import ApproxDPProfile
    from ..mechanisms.examples import ExampleProfile, SGD_A, SGD_B, SGD_SIGMA, icea_k
    from ..mechanisms.gaussian import GaussianProfile
    from ..mechanisms.laplace import LaplaceProfile
    from ..mechanisms.randomized_response import _RRProfile
    from ..mechanisms.subsampled import SubsampledProfile

    with working_precision(_BITS):
        if isinstance(profile, GaussianProfile):
            return TailModel("gaussian", {"mu": ball(profile.mu)}, arb(0), arb(0),
                             f"delta_mu0 with mu0 = {exact_str(profile.mu)}")
        if isinstance(profile, LaplaceProfile):
            e0 = ball(profile.eps0)
            return TailModel("zero", {"from": e0}, e0, e0, f"0 for eps >= D/b = {exact_str(profile.eps0)}",
                             profile.eps0)
        if isinstance(profile, ApproxDPProfile):
            e0 = ball(profile.eps0)
            if profile.delta0 == 0:
                return TailModel("zero", {"from": e0}, e0, e0, f"0 for eps >= eps0 = {exact_str(profile.eps0)}",
                                 profile.eps0)
            return TailModel("constant", {"c": ball(profile.delta0)}, e0, e0,
                             f"delta0 = {exact_str(profile.delta0)} for eps >= eps0")
        if isinstance(profile, SubsampledProfile):
            z = profile.zero_from()
            if profile.delta0 == 0:
                return TailModel("zero", {"from": z}, z, z, "0 for eps >= log(1 - q + q e^eps0)")
            c = ball(profile.rate * profile.delta0)
            return TailModel("constant", {"c": c}, z, z, "q delta0 for eps >= log(1 - q + q e^eps0)")
        if isinstance(profile, _RRProfile):
            # LT Thm 3.4: RR(eps, delta) has profile delta for t > eps, i.e. 0 past
            # eps = log(e^eps) when delta = 0 (``--mechanism rr --p P``: log(p/(1-p)))
            rr = profile.rr
            z = rr._exp_eps_ball().log()
            if rr.delta == 0:
                return TailModel("zero", {"from": z}, z, z, "0 for eps >= log(p / (1 - p))",
                                 rr.eps if rr.exp_eps is None else None)
            return TailModel("constant", {"c": ball(rr.delta)}, z, z, "delta for eps > eps0")
        if isinstance(profile, ExampleProfile):
            exact = endpoints(profile.refinement()[0])[1] if profile.refined else None
            if profile.name == "sgd-example":
                alpha = ball((SGD_SIGMA / SGD_A) ** 2)
                return TailModel("gauss_exp", {"C": ball(SGD_B), "alpha": alpha}, arb(0),
                                 exact if exact is not None else arb(0), "B exp(-(sigma eps/A)^2) = exp(-eps^2)")
            k = icea_k()
            return TailModel("power", {"K": k, "k": arb(1)}, endpoints(k)[1],
                             exact if exact is not None else endpoints(k)[1], "K/eps, K = 4 e^-2")
    return TailModel("unknown", description="no closed-form tail known for this profile")


def _gauss_exp_conditions(c: arb, alpha: arb, mu: arb, eps: arb) -> Optional[bool]:
    """True if (i)-(iv) of the module docstring are proved at eps, False if
    (i) fails (no eps_t helps), None if (ii)-(iv) are not proved at eps."""
    beta = alpha - 1 / (2 * mu * mu)
    if not beta > 0:
        return False
    p = eps / mu - mu / 2
    if not p * mu > 1:
        return None
    if not 2 * beta * eps >= (1 + 1 / mu) / mu - arb(1) / 2:
        return None
    psi = (c.log() - alpha * eps * eps + eps * eps / (2 * mu * mu) - eps / 2 + mu * mu / 8
           + (2 * arb.pi()).log() / 2 + (p * p + 1).log() + (p + mu).log() - (p * mu - 1).log())
    if psi <= 0:
        return True
    return None


def certify_tail(profile: Profile, eps_h: Fraction, mu_hi: Fraction, *, max_bridge_cells: int = 20_000) -> TailResult:
    """Decide delta(eps) <= delta_{mu_hi}(eps) for all eps > eps_h (module docstring)."""
    model = tail_model(profile)
    lim = model.limit()
    with working_precision(_BITS):
        eh, mu = ball(eps_h), ball(mu_hi)
        gap = delta_mu_ball(mu, eh) if mu_hi > 0 else None
        if model.kind == "zero":
            z = model.params["from"]
            if (eps_h >= model.zero_from_exact) if model.zero_from_exact is not None else bool(eh >= z):
                return TailResult("certified", "zero", f"the profile is 0 for eps >= {upper_decimal(z, 8)} <= eps_h "
                                  "and delta_mu(eps) > 0", lim)
            t = model.zero_from_exact
            if t is None:

                t = Fraction(upper_decimal(z, 17))  # a short exact point >= the zero point
            cells = _bridge(profile, eps_h, t, mu_hi, max_bridge_cells) if mu_hi > 0 else None
            if cells is not None:
                return TailResult("certified", "zero", f"staircase cells at mu on [eps_h, {exact_str(t)}] "
                                  "(GDPT Thm 4.6), then the profile is 0", lim, None, t, cells)
            return TailResult("unknown", "zero", f"the profile vanishes only from eps = {upper_decimal(z, 8)} and "
                              "the bridge from eps_h could not be closed at mu", lim, gap)
        if model.kind == "gaussian":
            if mu >= model.params["mu"]:
                return TailResult("certified", "gaussian", GDP_TAIL_REASONS["gaussian"], lim)
            # the ball comparison failed: mu >= mu0 is not proved (mu may still be >= mu0), so the
            # reason says that, not "mu is below mu0"
            return TailResult("unknown", "gaussian", GDP_TAIL_REASONS["below_mu0"], lim, gap)
        if model.kind in ("power", "constant"):
            return TailResult("not GDP", model.kind, f"the profile is {model.description} for large eps, "
                              "which delta_mu(eps) ~ exp(-eps^2/(2 mu^2)) falls below for every mu "
                              "(GDPT Lemma A.1); Thm 4.4 limit = +inf, so not GDP (Thm 4.3)", lim)
        if model.kind == "gauss_exp":
            if not eh >= model.valid_from:
                return TailResult("unknown", "gauss_exp", GDP_TAIL_REASONS["before_model"], lim, gap)
            c, alpha = model.params["C"], model.params["alpha"]
            t = eps_h if eps_h > 0 else Fraction(1)
            for _ in range(20):
                ok = _gauss_exp_conditions(c, alpha, mu, ball(t))
                if ok is False:
                    return TailResult("unknown", "gauss_exp", GDP_TAIL_REASONS["thm44"], lim, gap)
                if ok:
                    break
                t *= 2
            else:
                return TailResult("unknown", "gauss_exp", GDP_TAIL_REASONS["mills_search"], lim, gap)
            if t == eps_h:
                return TailResult("certified", "gauss_exp", GDP_TAIL_REASONS["mills"], lim)
            cells = _bridge(profile, eps_h, t, mu_hi, max_bridge_cells)
            if cells is not None:
                return TailResult("certified", "gauss_exp", f"staircase cells at mu on [eps_h, {exact_str(t)}], "
                                  "then the Mills-ratio bounds (GDPT App A Lemma 3)", lim, None, t, cells)
            return TailResult("unknown", "gauss_exp", f"could not close the bridge [eps_h, {exact_str(t)}] at mu",
                              lim, gap)
    return TailResult("unknown", model.kind, GDP_TAIL_REASONS["no_model"], None, gap)


def _bridge(profile: Profile, a: Fraction, b: Fraction, mu: Fraction,
            max_cells: int) -> Optional[tuple[Fraction, ...]]:
    """Prove sup_{[a, b]} G_f <= mu with staircase cells (GDPT Thm 4.6);
    returns the partition of [a, b] into proved cells, or None."""
    from .staircase import _Core

    core = _Core(profile, Fraction(1, 10**6))
    cells = [(a, b)]
    done: list[tuple[Fraction, Fraction]] = []
    count = 0
    while cells:
        a0, b0 = cells.pop()
        if core.cell_le(a0, b0, mu, taylor=False):  # bridge cells are re-checked as staircase cells
            done.append((a0, b0))
            continue
        count += 1
        if count > max_cells:
            return None
        m = (a0 + b0) / 2
        cells += [(a0, m), (m, b0)]
    return tuple(sorted({x for c in done for x in c}))


def clip_and_rectify_scale(y_minus: Fraction, y_plus: Fraction, eps_h: Fraction) -> Fraction:
    """GDPT Thm 4.7: clip to [y-, y+] and add Laplace(b) noise with
    b = (y+ - y-)/eps_h. The result is eps_h-DP (sensitivity <= y+ - y-), so
    its profile is 0 beyond eps_h, and by post-processing it stays below the
    (eps_h, mu)-head-GDP bound before: a (eps_h, mu)-head GDP algorithm becomes
    mu-GDP. Returns b exactly.

    Raises InvalidParameter unless y_minus < y_plus and eps_h > 0."""
    from .. import _validate as V
    from ..errors import InvalidParameter

    lo, hi = V.real("y_minus", y_minus), V.real("y_plus", y_plus)
    eh = V.positive("eps_h", eps_h)
    if not lo < hi:
        raise InvalidParameter("y_plus", f"y_plus={exact_str(hi)} must be > y_minus={exact_str(lo)}")
    return (hi - lo) / eh
