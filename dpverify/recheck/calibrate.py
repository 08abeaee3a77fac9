"""Second route for ``calibrate.bracket`` certificates, on MPFR with directed
rounding (through :mod:`.pld` and :mod:`.wor`) and Python integers (nothing from
the arb side is imported); every end's verdict is decided against the exact delta.

The claim: (target_eps, delta)-DP holds at ``result.ends.safe.value`` and
fails at ``result.ends.unsafe.value`` of the template's free parameter (for
fixed batches, template ``dpsgd-wor``, also: the AFA Cor 32 pair's curve
exceeds delta at ``result.ends.pair_limit.value``). Every end is re-proved
independently with the PLD re-check route of :mod:`.pld` (its interval
tails, discretisation and bounds, a proof; the fixed-batch pair's tails from
:mod:`.wor`) on a grid finer than that module's fixed 2^-8 (the ends
lie within a fraction of a percent of the optimum): the grid starts at the
recorded hint (untrusted; clamped to 2^-10 .. 2^-16; one halving finer when the
recorded delta_at_target is tight, :func:`_start_grid`; a start finer than 2^-12 capped
by a probe at 2^-10, :func:`_justified_start`) and is refined until the
end is decided. A safe end needs only the upper curve (max over the
directions), an unsafe end only the lower curve (one direction above delta
suffices); the other side is computed only to tell a refuted end from an
undecided one. Ends that share a pair (a steps bracket) share its
discretisation (and add and remove share it for a Gaussian step at sampling rate 1,
whose two directions are one pair). Products are :mod:`.pld`'s (Kronecker substitution into one
GMP integer).

Shuffled (``dpsgd-shuffle``) and balls-in-bins (``dpsgd-bins``) brackets are
re-proved end by end by those schemes' own second routes (:mod:`.shuffle`:
the no-amplification Gaussian for the safe end and the pair limit, the
max-of-batch-sums pair at the recorded cells for the unsafe end; :mod:`.bins`:
the enclosure of Chua et al.'s pair at the recorded grid for both ends), see
:func:`_recheck_sampled`.

Every curve is priced before its work on one static budget for the certificate,
:data:`.limits.CALIBRATE_MAX_WORK` (:meth:`_Route._priced`, :class:`.pld._Meter`: its knots, the
discretisations it computes and its exact products by their bits); past it, exit 3, the same on every
machine (adv53 M1). An end that cannot be decided on the finest grid is not accepted ("could
not re-prove", fail closed). The order of the ends must agree with the
monotonicity of the bounds (for the noise multiplier the safe end is the
larger one; for steps, sampling rate and batch size the smaller one), else
the bracket is refused.
"""

from __future__ import annotations

import json
from fractions import Fraction
from typing import Any, Callable, Mapping, Optional

import mpmath
from mpmath import mpf

from ..errors import CertificateRejected, CouldNotReprove, MalformedCertificate
from ..numtext import is_digits
from . import pld as P
from .kinds import grid_exponent
from .limits import CALIBRATE_KNOT_WEIGHT, CALIBRATE_MAX_WORK, CALIBRATE_PRODUCT_BITS_PER_UNIT, PLD_PRODUCT_PREPAID
from . import wor as W
from .core import mpf_to_fraction
from .gdp import composed_gaussian_delta_tail, exact_input, fraction_to_mpf
from .decimals import exact_decimal
from .verify import Recheck, register

_DPS = 40
_ALLOWED = {"template", "parameter", "target_eps", "delta", "neighboring", "noise_multiplier",
            "sampling_rate", "steps", "epochs", "batch_size", "dataset_size", "sampling"}
#: template -> free parameter -> does eps increase with it
_FREE = {"dpsgd": {"noise_multiplier": False, "steps": True, "sampling_rate": True, "batch_size": True},
         "dpsgd-wor": {"noise_multiplier": False, "steps": True, "batch_size": True},
         "dpsgd-shuffle": {"noise_multiplier": False, "epochs": True},
         "dpsgd-bins": {"noise_multiplier": False, "epochs": True}}
#: the end names of each template (safe first)
_ENDS = {"dpsgd": ("safe", "unsafe"), "dpsgd-wor": ("safe", "unsafe", "pair_limit"),
         "dpsgd-shuffle": ("safe", "unsafe", "pair_limit"), "dpsgd-bins": ("safe", "unsafe")}
#: hint keys an end of a sampled template may carry (re-read by the scheme's own second route)
_END_HINTS = {"dpsgd-shuffle": {"unsafe": ("shuffle_lower",)},
              "dpsgd-bins": {"safe": ("bins_grid", "bins_epochs"), "unsafe": ("bins_grid", "bins_epochs")}}
_M_MIN, _M_MAX = 10, 16  # grids tried (the calibration itself goes up to 2^-16)
#: a start grid finer than this is first justified by a probe at 2^-_M_MIN (:func:`_justified_start`)
_PROBE_FROM = 12
_EMPTY_U = (0, [], 0)  # a zero upper curve / lower curve: stands in for the side not computed
_EMPTY_L = (0, [0], [0], 0)
#: the knot index range of a discretisation (recheck.pld._discretise's ``cap``: finer grids than its own)
_KNOT_RANGE = 10**8


def _count(v: Any) -> Any:
    """A count as an int: format 2 writes integers, format 1 wrote digit strings."""
    if isinstance(v, str) and is_digits(v) and len(v) <= 12:
        return int(v)
    return v


def _end_inputs(inputs: Mapping[str, Any], parameter: str, value: Any) -> dict[str, Any]:
    """The Poisson schedule at one end, in recheck.pld's input form."""
    ev = {k: inputs[k] for k in ("noise_multiplier", "sampling_rate", "steps") if k in inputs}
    if parameter == "batch_size":
        n, value = _count(inputs.get("dataset_size")), _count(value)
        if not isinstance(n, int) or not isinstance(value, int) or not 1 <= value <= n:
            raise MalformedCertificate("batch_size ends must be integers in [1, dataset_size]")
        ev["sampling_rate"] = f"{value}/{n}"
    else:
        ev[parameter] = value
    if "neighboring" not in inputs:
        raise MalformedCertificate("inputs.neighboring is missing (allowed: add-remove, add, remove, replace-one)")
    ev["neighboring"] = inputs["neighboring"]
    return ev


def _wor_schedule(inputs: Mapping[str, Any], parameter: str, value: Fraction) -> tuple[Fraction, int, int, int]:
    """(sigma, B, N, T) of a fixed-batch end."""
    if inputs.get("neighboring") != "replace-one" or inputs.get("sampling") != "without-replacement":
        raise MalformedCertificate("dpsgd-wor: inputs.neighboring must be 'replace-one' and "
                                   "inputs.sampling 'without-replacement'")
    vals: dict[str, Any] = {}
    for k in ("noise_multiplier", "batch_size", "steps", "dataset_size"):
        if k == parameter:
            continue
        if k not in inputs:
            raise MalformedCertificate(f"inputs.{k} is missing")
        vals[k] = exact_input(inputs, k) if k == "noise_multiplier" else _count(inputs[k])
    vals[parameter] = value if parameter == "noise_multiplier" else int(value)
    n, b, t = vals["dataset_size"], vals["batch_size"], vals["steps"]
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (n, b, t)):
        raise MalformedCertificate("dpsgd-wor: dataset_size, batch_size and steps must be integers")
    if not (1 <= b <= n and 1 <= t <= 10**7 and vals["noise_multiplier"] > 0):
        raise MalformedCertificate("dpsgd-wor: need 1 <= batch_size <= dataset_size, 1 <= steps <= 1e7, sigma > 0")
    return vals["noise_multiplier"], b, n, t


def _direction_keys(blocks: list, d: str) -> list:
    """(pair key, direction key, count) per block in direction ``d``: a Gaussian step at sampling rate 1
    is one pair for add and remove (:meth:`_Route.curve`), keyed "add|remove" so that both share it."""
    return [(key, "add|remove" if g is not None and d in ("add", "remove") else d, T) for key, _, T, g in blocks]


class _Route:
    """The PLD re-check at one (target_eps, delta): discretisations are cached
    per (pair, direction, grid), so ends that share a pair (a steps bracket)
    discretise it once; each end computes only the side it needs (the upper
    curve for a safe end, the lower curve for an unsafe one), the other side
    only when the first leaves the end undecided (to tell a refuted end from
    an undecided one)."""

    def __init__(self, E: mpf, D: mpf, total: int, Dx: Fraction, Ex: Fraction) -> None:
        self.E, self.D, self.Dx, self.Ex = E, D, Dx, Ex
        extra = int(mpmath.ceil(mpf("1.45") * min(E, mpf(2000)))) + 16
        self.K = max(64, int(-mpmath.log(D * mpf(10) ** -6, 2)) + 48 + extra)
        # tau and the trimming budget only set the width (truncated mass is
        # moved up for the upper curve and dropped for the lower one); both
        # use the longest schedule of the certificate so that ends share them
        self.tau = D * mpf(10) ** -8 / total
        self.budget = int(D * mpf(10) ** -8 * mpf(2) ** self.K / (4 * total.bit_length() + 4))
        self.cache: dict = {}
        self.composed: dict = {}
        #: (pair, direction, grid) -> (knots, bits) of its discretisation (:meth:`_priced`)
        self.knots: dict = {}

    def curve(self, blocks: list, d: str, m: int, side: str):
        # a Gaussian step at sampling rate 1 is one pair in both directions (remove: N(mu, 1)
        # against N(0, 1), add: the reverse; their privacy losses have one law, and
        # recheck.pld's tails for it do not read the direction): such blocks share one
        # discretisation and one composed curve for add and remove
        dk = _direction_keys(blocks, d)
        whole = (tuple(dk), m, side)
        got = self.composed.get(whole)
        if got is not None:  # the ends and their delta_at_target bounds ask for the same curve
            return got
        mul = self._priced(blocks, dk, d, m, side)
        acc = None
        for (key, make, T, _), (_, d_key, _) in zip(blocks, dk):
            ck = (key, d_key, m)
            if ck not in self.cache:
                tails, _ = make(d)
                self.cache[ck] = P._discretise(tails, self.K, self.tau, m, cap=_KNOT_RANGE)
            u, l = self.cache[ck]
            if side == "upper":  # packed between products (recheck.pld)
                X = P._power(P._pack_upper(u, self.K), T, mul, self.K, self.budget)
            else:
                X = P._power(P._pack_lower(l, self.K), T, mul, self.K, self.budget)
            acc = X if acc is None else mul(acc, X, self.K, self.budget)
        acc = self.composed[whole] = P._unpack(acc)
        return acc

    def _priced(self, blocks: list, dk: list, d: str, m: int, side: str) -> Callable:
        """Charge the curve's price to the certificate's meter (:func:`.pld.one_meter`, opened by
        :func:`recheck_bracket`) before any of its work, and return its product, metered: the PLD
        re-check's price (:class:`.pld._Meter`, the same units): per block, knots x (K + m + 32) bits x
        the bit length of the composition's step count x the sides (1 upper, 2 lower: P and Q), the
        knot ranges counted by a few tail evaluations (:func:`.pld._discretise`'s ``price`` hook, no
        mass computed); 1 / :data:`~.limits.PLD_PRODUCT_PREPAID` of it prepays the exact products,
        each charged its bits past that (:meth:`.pld._Meter.products`: this route has no Fourier
        powers, so its products are most of its work; their length is the composed support, which
        grows with T and with the unit K, about 1.45 bits a nat of target_eps). A discretisation
        remembered from an earlier curve is charged again (it is composed again). Past the meter's
        limit: :class:`.pld._OverCap` (exit 3) before the work; no clock (adv53 M1: a sampling-rate
        bracket forged to T = 10^7, target_eps 1014 ran 171 CPU s and 4.2 GB to the 300 s clock)."""
        meter = P._METER.get()
        if meter is None:  # not metered (a caller of the route outside recheck_bracket)
            return P._pmul_upper if side == "upper" else P._pmul_lower
        weight = sum(b[2] for b in blocks).bit_length()
        units = fresh = 0
        for (key, make, _, _), (_, d_key, _) in zip(blocks, dk):
            ck = (key, d_key, m)
            if ck not in self.knots:
                self.knots[ck] = _knots(make(d)[0], self.K, self.tau, m)
            knots, bits = self.knots[ck]
            units += knots * bits * weight
            if ck not in self.cache:  # its masses are computed for this curve
                fresh += knots * bits * max(0, CALIBRATE_KNOT_WEIGHT - weight)
        meter.charge(units, m, side)
        meter.charge(fresh, m, "upper")  # once, whichever side asks first
        if side == "upper":
            return P._metered(P._pmul_upper, meter, [units // PLD_PRODUCT_PREPAID, 0], m, 0, 0,
                              CALIBRATE_PRODUCT_BITS_PER_UNIT)
        return P._metered(P._pmul_lower, meter, [0, 2 * units // PLD_PRODUCT_PREPAID], m, 1, 0,
                          CALIBRATE_PRODUCT_BITS_PER_UNIT)

    def side(self, blocks: list, dirs: list, m: int, side: str) -> mpf:
        """Upper: max over directions of the upper bound of delta(E). Lower: a
        lower bound of the max (stops at the first direction above D). Blocks that are all Gaussian
        steps at sampling rate 1 are one Gaussian pair, answered in closed form on every grid
        (:func:`.pld.gaussian_bounds` at the exact target): the grid route could not prove a genuine
        end's delta_at_target at B = N (calibrate dpsgd --target-eps 10 --dataset-size 100
        --noise-multiplier 2 --steps 10: exit 3 after 42 CPU s, mend47)."""
        if all(b[3] is not None for b in blocks):
            shifts = [(b[3], b[2]) for b in blocks]
            closed = [P.gaussian_bounds(shifts, d, "delta", self.E, self.Ex) for d in dirs]
            if all(c is not None for c in closed):
                return max(c[1] if side == "upper" else c[0] for c in closed)
            if side == "upper":
                # a delta that underflows the closed form (a whole domain safe at sigma 10^10, T = 10^7:
                # the grid could not re-prove its 3.5e-16, exit 3): the Chernoff tail bound, where it decides
                tails = [composed_gaussian_delta_tail(P.gaussian_mu2(shifts, d), self.Ex) for d in dirs]
                if all(t is not None for t in tails) and _le(max(tails), self.Dx):
                    return max(tails)
        vals = []
        for d in dirs:
            acc = self.curve(blocks, d, m, side)
            if side == "upper":
                vals.append(P._delta_bounds(acc, _EMPTY_L, self.E, self.K, m)[1])
                if vals[-1] > self.D:
                    break  # the maximum is already above D: not decided at this grid
            else:
                vals.append(P._delta_bounds(_EMPTY_U, acc, self.E, self.K, m)[0])
                if vals[-1] > self.D:
                    break  # one direction above D proves the failure
        return max(vals)

    def prove(self, what: str, blocks: list, dirs: list, want: str, m: int) -> int:
        """Prove delta(E) <= D (``want`` "upper") or > D ("lower") for the
        composition of ``blocks``, from the grid 2^-m up to 2^-16; returns the
        grid that decided. Rejects on a contradiction, CouldNotReprove when no
        grid decides."""
        other = "lower" if want == "upper" else "upper"
        while True:
            v = self.side(blocks, dirs, m, want)
            if _le(v, self.Dx) if want == "upper" else not _le(v, self.Dx):
                return m
            w = self.side(blocks, dirs, m, other)
            if not _le(w, self.Dx) if want == "upper" else _le(w, self.Dx):
                lo, hi = (w, v) if want == "upper" else (v, w)
                raise CertificateRejected(
                    f"{what}: the re-derived delta({mpmath.nstr(self.E, 8)}) in [{mpmath.nstr(lo, 8)}, "
                    f"{mpmath.nstr(hi, 8)}] contradicts the recorded end")
            if m >= _M_MAX:
                raise CouldNotReprove(f"could not re-prove {what} on the grid 2^-{_M_MAX} "
                                      f"(delta({mpmath.nstr(self.E, 8)}) bound {mpmath.nstr(v, 8)})")
            m += 1


def price_ends(inputs: Mapping[str, Any], parameter: str, ends: "list[tuple[str, Any, int]]") -> tuple[Optional[int], int, str]:
    """(price, K, why): what :func:`recheck_bracket` charges at least, before any work, to re-prove a
    ``dpsgd`` calibrate.bracket of ``inputs`` (template, parameter, target_eps, delta and the fixed
    parameters, as a certificate records them) whose ends are ``ends``: each (name ``safe`` or
    ``unsafe``, the value as recorded, the grid exponent m it is decided on). The charge of
    :meth:`_Route._priced` for the safe end's upper curve and the unsafe end's lower curve, over their
    directions, on 2^-max(m, ``_M_MIN``) (no coarser grid is tried), in one route as
    :func:`recheck_bracket` builds it, so a steps bracket's ends share their discretisation; it
    leaves out the products, the delta_at_target bounds (the same curves, remembered) and finer grids,
    so it is at most what the meter charges such a certificate (issue 22: the producer refuses before
    its search what verify could not re-prove, :mod:`dpverify.calibration.price`). No charge for an
    end in closed form (every step a Gaussian at rate 1) or a safe end the Renyi tail proves
    (:func:`_prove_ends`). ``K``: the route's unit 2^-K. ``why``: a step whose loss spans more knots
    than the re-check discretises (price None: refused at any cost). Price None, why "" for ends
    this route does not read (not priced)."""
    with mpmath.workdps(_DPS):
        Dx, Ex = exact_input(inputs, "delta"), exact_input(inputs, "target_eps")
        try:
            plans = [(_plans("dpsgd", inputs, parameter, name, value, _end_value({"value": value})), max(m, _M_MIN))
                     for name, value, m in ends]
        except (CertificateRejected, MalformedCertificate):
            return None, 0, ""
        route = _Route(fraction_to_mpf(Ex), fraction_to_mpf(Dx), max(p[0][3] for p in plans), Dx, Ex)
        # a meter of its own whose limit cannot stop the count: the charges only
        with P.one_meter(1 << 200, "the calibration's price", per_query=False) as meter:
            for (name, value, _), ((blocks, dirs, want, _), m) in zip(ends, plans):
                if all(b[3] is not None for b in blocks):
                    continue  # closed form (Route.side)
                if name == "safe":
                    tail = _tail_upper(inputs, parameter, value)
                    if tail is not None and _le(tail, Dx):
                        continue  # the Renyi tail proves it without a grid
                for d in dirs:
                    dk = _direction_keys(blocks, d)
                    try:
                        route._priced(blocks, dk, d, m, want)  # charges the meter; its product is not used
                    except CertificateRejected as exc:  # a range past the knot cap
                        return None, route.K, str(exc)
                    # verify computes these masses next: a later end on the same pair and grid (a steps
                    # bracket) is not charged their discretisation again
                    for (key, _, _, _), (_, d_key, _) in zip(blocks, dk):
                        route.cache.setdefault((key, d_key, m), None)
        return meter.spent, route.K, ""


#: the finest grid 2^-m the re-check tries for a calibrate.bracket end
FINEST_GRID = _M_MAX


class _Counted(Exception):
    """Raised by :func:`_knots`'s price hook: the knots are counted, no mass is computed."""


def _knots(tails: Any, K: int, tau: mpf, m: int) -> tuple[int, int]:
    """(knots, bits) of one step law's discretisation on the grid 2^-m at unit 2^-K (what
    :func:`.pld._discretise` passes its ``price`` hook before its work: a few tail evaluations);
    a range it refuses (too many knots, past the knot-bit cap) is refused here the same way."""
    got: list = []

    def count(knots: int, bits: int) -> None:
        got.append((knots, bits))
        raise _Counted

    try:
        P._discretise(tails, K, tau, m, cap=_KNOT_RANGE, price=count)
    except _Counted:
        pass
    return got[0]


def _le(v: mpf, Dx: Fraction) -> bool:
    """v <= delta, decided exactly against the exact input (the mpf delta is rounded). Binary
    magnitudes decide first: v in [2^(e-1), 2^e) against Dx = p / q in (2^(|p| - |q| - 1), 2^(|p| -
    |q| + 1)) (|.| the bit length), so a tail bound 2^-(10^13) needs no exact rational of its size."""
    if mpmath.isnan(v):
        # neither side is proved: False here would read as a proof of delta > D where the caller
        # negates it (adv49, a hardening: no route is known to yield a NaN)
        raise CouldNotReprove("an evaluation of delta gave NaN: neither side of delta <= D is proved")
    if not mpmath.isfinite(v):
        return v < 0
    if v <= 0:
        return mpf_to_fraction(v) <= Dx
    if Dx <= 0:
        # v > 0: the magnitudes below hold for Dx > 0 only (a forged delta_at_target.hi = "0" was
        # confirmed through them, ref48 HIGH-1)
        return False
    sign, man, exp, bc = v._mpf_
    e, d = int(exp) + int(bc), Dx.numerator.bit_length() - Dx.denominator.bit_length()
    if e <= d - 1:
        return True
    if e - 1 >= d + 1:
        return False
    return mpf_to_fraction(v) <= Dx


def _grid_hint(end: Mapping[str, Any], name: str = "") -> int:
    """The recorded grid (untrusted: only where the search starts), clamped to 2^-10 .. 2^-16;
    absent: 2^-10. Text that is not 2^-N is refused (exit 2, naming the key)."""
    g = end.get("grid")
    if g is None:
        return _M_MIN
    n = grid_exponent(g)
    if n is None:
        raise MalformedCertificate(f"result.ends.{name}.grid={str(g)[:40]!r} is not a grid 2^-N (allowed: 2^-N, "
                                   f"N a whole number of at most 9 digits; the search starts within "
                                   f"2^-{_M_MIN} .. 2^-{_M_MAX})")
    return min(max(n, _M_MIN), _M_MAX)


def _justified_start(route: "_Route", blocks: list, dirs: list, m: int) -> int:
    """The start grid ``m`` (from the hint) clipped to what the end itself justifies. A start
    at or below :data:`_PROBE_FROM` is used as it is; a finer one (up to 2^-16, 30x the work of
    2^-11: a hint forged to 2^-2000 is clamped there) first probes both sides of delta(E) at
    2^-_M_MIN and starts at the grid at which the probe's width, shrinking about 4x per halving
    (the producer's width model, dpverify.calibration.solve), falls below the end's distance
    from delta, one halving finer for safety. A choice only: every grid's bounds are proved,
    and the search refines from there until the end is decided (a prediction that is too
    coarse costs the coarser grids, at most about the work of the grid that decides)."""
    if m <= _PROBE_FROM:
        return m
    up = route.side(blocks, dirs, _M_MIN, "upper")
    lo = route.side(blocks, dirs, _M_MIN, "lower")
    margin = abs((up + lo) / 2 - route.D)
    width = up - lo
    if not (mpmath.isfinite(width) and width > 0 and margin > 0):
        return min(m, _PROBE_FROM)
    need = _M_MIN + 1 + max(0, int(mpmath.ceil(mpmath.log(width / margin, 4))))
    return max(_M_MIN, min(m, need))


def _start_grid(end: Mapping[str, Any], name: str) -> int:
    """Where the search for a Poisson end starts (a choice only: every grid's bounds are
    proved, and the search refines until the end is decided): the recorded grid, one
    halving finer when the end's recorded delta_at_target is tight (relative width below
    10^-3). Such an enclosure is about as narrow as the producer's own grid allows, and
    the route's bounds on that grid (the same discretisations) then seldom fit inside
    it: the next grid is computed anyway, and starting there proves the end and its
    enclosure on one grid instead of two (a probe three halvings coarser predicted the
    recorded grid at the edge, log4 of the gap over half the width about 3.5, for fixtures
    that pass and fixtures that fail there). The recorded grid and enclosure are hints
    read as floats."""
    m = _grid_hint(end, name)
    enc = end.get("delta_at_target")
    try:
        lo, hi = float(enc["lo"]), float(enc["hi"])
    except (TypeError, KeyError, ValueError):
        return m
    if 0 < lo <= hi and (hi - lo) <= 1e-3 * hi:
        return min(m + 1, _M_MAX)
    return m


def _plans(template: str, inputs: Mapping[str, Any], parameter: str, name: str, value: Any,
           exact: Fraction) -> tuple[list, list, str, int]:
    """(blocks, directions, side wanted, steps) of one end: ``blocks`` are
    (pair key, make(direction) -> (tails, inf), count)."""
    want = "upper" if name == "safe" else "lower"
    if template == "dpsgd":
        ev = _end_inputs(inputs, parameter, value)
        dirs = P._directions(ev)
        if "replace" in dirs:
            raise MalformedCertificate("calibrate: replace-one is not certified for Poisson sampling")
        key = json.dumps({k: v for k, v in ev.items() if k != "steps"}, sort_keys=True)
        # the third field of recheck.pld's events: a Gaussian step at sampling rate 1 (its shift), else None
        blocks = [(key, make, T, g) for make, T, g in P._events(ev)]
        return blocks, dirs, want, sum(b[2] for b in blocks)
    sig, b, n, t = _wor_schedule(inputs, parameter, exact)
    if name == "unsafe":  # the realised pair: Poisson add-remove at (sigma/2, B/N, T)
        ev = W.lower_inputs(sig, b, n, t)
        key = json.dumps({k: v for k, v in ev.items() if k != "steps"}, sort_keys=True)
        return [(key, make, T, g) for make, T, g in P._events(ev)], P._directions(ev), want, t
    # safe: upper curve of the Cor 32 pair <= D; pair_limit: its lower curve > D
    return [(("wor", sig, b, n), W.wor_make(sig, b, n), t, None)], ["wor"], want, t


def _end_value(end: Mapping[str, Any]) -> Fraction:
    """An end's exact value: an integer as recorded, else its exact decimal or fraction text."""
    raw = end["value"]
    if isinstance(raw, int) and not isinstance(raw, bool):
        return Fraction(raw)
    return exact_input(end, "value")


@register("calibrate.bracket")
def recheck_bracket(inputs: Mapping[str, Any], result: Mapping[str, Any]) -> Recheck:
    unknown = sorted(set(inputs) - _ALLOWED)
    if unknown:
        raise MalformedCertificate(f"inputs.{unknown[0]}: unknown key; allowed: {', '.join(sorted(_ALLOWED))}")
    template = inputs.get("template")
    if template not in _FREE:
        raise MalformedCertificate(f"inputs.template={template!r}: allowed: {', '.join(_FREE)}")
    if template == "dpsgd" and "sampling" in inputs:
        raise MalformedCertificate("inputs.sampling: unknown key for template 'dpsgd' (Poisson)")
    parameter = inputs.get("parameter")
    if parameter not in _FREE[template]:
        raise MalformedCertificate(f"inputs.parameter={parameter!r}: allowed: {', '.join(_FREE[template])}")
    if template == "dpsgd":
        _check_dpsgd_schedule(inputs, parameter)
    if template in _END_HINTS:
        for key in ("steps", "sampling_rate", parameter):
            if key in inputs:
                raise MalformedCertificate(f"inputs.{key}: not an input of template {template!r} "
                                           + ("(its values are the ends)" if key == parameter else
                                              "(every example is in one batch per epoch)"))
    ends = result.get("ends")
    if not isinstance(ends, dict) or not isinstance(ends.get("safe"), dict):
        raise MalformedCertificate("result.ends.safe is missing")
    names = _ENDS[template]
    extra = sorted(set(ends) - set(names))
    if extra:
        raise MalformedCertificate(f"result.ends.{extra[0]}: unknown key; allowed: {', '.join(names)}")
    with mpmath.workdps(_DPS):
        E = fraction_to_mpf(exact_input(inputs, "target_eps"))
        D = fraction_to_mpf(exact_input(inputs, "delta"))
        if not (E > 0 and 0 < D < 1):
            raise MalformedCertificate("target_eps must be > 0 and delta in (0, 1)")
        todo = [(n, ends[n]) for n in names if n in ends]
        values = {}
        for name, end in todo:
            if not isinstance(end, dict) or "value" not in end:
                raise MalformedCertificate(f"result.ends.{name}.value is missing")
            values[name] = _end_value(end)
            if end.get("verdict") != ("holds" if name == "safe" else "fails"):
                raise CertificateRejected(f"result.ends.{name}.verdict must be "
                                          f"{'holds' if name == 'safe' else 'fails'}")
        increasing = _FREE[template][parameter]
        for name in ("unsafe", "pair_limit"):
            if name in values:
                bad = (values["safe"] >= values[name]) if increasing else (values["safe"] <= values[name])
                if bad:
                    raise CertificateRejected(f"the ends are in the wrong order for {parameter} "
                                              f"(safe vs {name}; the bounds are monotone in it)")
        if template in _END_HINTS:
            return _recheck_sampled(template, inputs, parameter, dict(todo), values)
        plans = {name: _plans(template, inputs, parameter, name, end["value"], values[name]) for name, end in todo}
        total = max(p[3] for p in plans.values())
        # one unit 2^-K for every bound proved (sized from the smallest), so that the
        # discretisations are shared by the ends and by their delta_at_target bounds
        from .verify import enclosure_of

        floor = D
        for _, end in todo:
            if template == "dpsgd" and isinstance(end.get("delta_at_target"), dict):
                a, _b = enclosure_of(end["delta_at_target"], "delta_at_target", _DPS)
                if 0 < a < floor:
                    floor = max(a, D * mpf(10) ** -6)
        Dx = exact_input(inputs, "delta")
        route = _Route(E, floor, total, Dx, exact_input(inputs, "target_eps"))
        route.D = D
        # every curve of the certificate (its ends, their delta_at_target bounds, the start probes) on
        # one static budget, each priced before its work (_Route._priced): past it, exit 3
        with P.one_meter(CALIBRATE_MAX_WORK, "one calibrate.bracket certificate", per_query=False):
            proved = _prove_ends(template, inputs, parameter, todo, plans, route, D, Dx)
        # a bracket's writers record 'holds' only (both ends decided, or no certificate): a
        # relabelled 'undecided' is refused (verdict_of_record; adv41 V1)
        return Recheck(value=None, err=mpf(0), dps=_DPS, verdict="holds", proved=frozenset(proved),
                       verdict_of_record=True)


def _prove_ends(template: str, inputs: Mapping[str, Any], parameter: str, todo: list, plans: dict,
                route: _Route, D: mpf, Dx: Fraction) -> set:
    """Re-prove each end of a Poisson or fixed-batch bracket and its delta_at_target on ``route``;
    the fields proved."""
    proved: set = set()
    for name, end in todo:
        blocks, dirs, want, _ = plans[name]
        # a safe end far below delta (sigma 10^10 at rate 0.01 makes every steps value safe, delta near
        # 4e-22): the Renyi tail bound proves it where no grid of the route can (exit 3)
        tail = _tail_upper(inputs, parameter, end["value"]) if template == "dpsgd" and want == "upper" else None
        m0 = _start_grid(end, name) if template == "dpsgd" else _grid_hint(end, name)
        if tail is None or not _le(tail, Dx):
            m0 = _justified_start(route, blocks, dirs, m0)
            route.prove(f"the {name} end {parameter}={end['value']}", blocks, dirs, want, m0)
        proved |= {f"ends.{name}.value", f"ends.{name}.verdict"}
        if "delta_at_target" in end:
            if template == "dpsgd":
                _prove_enclosure(f"result.ends.{name}.delta_at_target", end["delta_at_target"], route,
                                 blocks, dirs, m0, tail)
                proved.add(f"ends.{name}.delta_at_target")
            # fixed batches: not re-proved (the Cor 32 curve at the recorded width runs past
            # the budget), so it is not counted as proved and such a field answers exit 3
            route.D, route.Dx = D, Dx
    return proved


def _check_dpsgd_schedule(inputs: Mapping[str, Any], parameter: str) -> None:
    """The schedule keys of the Poisson template define the schedule exactly as the
    producer does (TF Privacy's convention): ``epochs`` needs ``batch_size`` and
    ``dataset_size`` and steps = ceil(epochs N / B); ``batch_size`` needs ``dataset_size``
    and sampling_rate = B / N; ``dataset_size`` alone defines nothing. A key that
    defines nothing is refused (exit 2), a mismatch is refused (exit 1)."""
    import math

    if parameter in inputs:
        raise MalformedCertificate(f"inputs.{parameter} is the free parameter: its values are the ends")
    n, b = _count(inputs.get("dataset_size")), _count(inputs.get("batch_size"))
    if "epochs" in inputs and ("batch_size" not in inputs or "dataset_size" not in inputs):
        raise MalformedCertificate("inputs.epochs needs inputs.batch_size and inputs.dataset_size "
                                   "(steps = ceil(epochs N / B)); it defines nothing alone")
    if "batch_size" in inputs and "dataset_size" not in inputs:
        raise MalformedCertificate("inputs.batch_size needs inputs.dataset_size (q = B / N)")
    if "dataset_size" in inputs and "batch_size" not in inputs and parameter != "batch_size":
        raise MalformedCertificate("inputs.dataset_size applies only with inputs.batch_size or to calibrate "
                                   "the batch size")
    if "batch_size" in inputs:
        if not (isinstance(n, int) and isinstance(b, int) and 1 <= b <= n):
            raise MalformedCertificate("inputs.batch_size and inputs.dataset_size must be integers, 1 <= B <= N")
        if "sampling_rate" in inputs and exact_input(inputs, "sampling_rate") != Fraction(b, n):
            raise CertificateRejected(f"inputs.sampling_rate is not batch_size / dataset_size = {Fraction(b, n)}")
        if "epochs" in inputs:
            t = exact_input(inputs, "epochs") * n / b
            if _count(inputs.get("steps")) != math.ceil(t):
                raise CertificateRejected(f"inputs.steps is not ceil(epochs N / B) = {math.ceil(t)}")


def _tail_upper(inputs: Mapping[str, Any], parameter: str, value: Any) -> "mpf | None":
    """The Renyi tail bound of delta(target_eps) of the Poisson schedule at one end
    (:func:`.events.tail_upper`, Mironov 2017 Prop 1, 7; the second route's own), or None."""
    from .events import _pld_leaves, tail_upper

    ev = _end_inputs(inputs, parameter, value)
    return tail_upper(_pld_leaves(ev), str(ev["neighboring"]), exact_input(inputs, "target_eps"))


def _prove_enclosure(where: str, enc: Any, route: "_Route", blocks: list, dirs: list, m: int,
                     tail: "mpf | None" = None) -> None:
    """Re-prove a recorded enclosure [lo, hi] of delta(E) at one end: the upper curve
    is <= hi and the lower curve is > lo (or lo = 0), by the same route as the ends
    (a route whose unit is sized from the bound it proves), or the upper end by ``tail``, an upper
    bound of delta(E), where it lies at or below it. A contradiction refutes the certificate; an
    undecided side answers exit 3."""
    from .verify import enclosure_of

    lo, hi = enclosure_of(enc, where, _DPS)
    if not (0 <= lo <= hi <= 1):
        raise CertificateRejected(f"{where} is not inside [0, 1]")
    # the comparisons are exact (route.Dx): against the recorded decimals themselves
    if hi < 1:
        route.D, route.Dx = hi, exact_decimal(enc["hi"], f"{where}.hi")
        if tail is None or not _le(tail, route.Dx):
            route.prove(f"{where}.hi", blocks, dirs, "upper", m)
    if lo > 0:
        route.D, route.Dx = lo, exact_decimal(enc["lo"], f"{where}.lo")
        route.prove(f"{where}.lo", blocks, dirs, "lower", m)


def _recheck_sampled(template: str, inputs: Mapping[str, Any], parameter: str, ends: Mapping[str, Any],
                     values: Mapping[str, Fraction]) -> Recheck:
    """Re-prove the ends of a shuffled (``dpsgd-shuffle``) or balls-in-bins (``dpsgd-bins``)
    calibration with those schemes' own second routes (:mod:`.shuffle`, :mod:`.bins`), at the
    exact end values, against the exact delta:

    * shuffle, safe: delta_mu(target) of the no-amplification Gaussian at mu+ >= Delta sqrt(E) /
      sigma is < delta (MPFR, directed); pair_limit: at mu- <= mu it is > delta; unsafe: the
      max-of-batch-sums pair at the recorded cells (a hint) has a class prefix J with
      A_J - e^target B_J > delta 2^128 (exact integers), i.e. the mechanism's delta(target) > delta;
    * balls-in-bins: the enclosure of delta(target) of Chua et al.'s pair at the recorded grid
      (a hint) is <= delta (safe) or > delta (unsafe).

    An end whose opposite bound is proved is refuted (exit 1); one that neither side decides
    is "could not re-prove" (exit 3). The monotonicity that extends each end to the values
    beyond it is stated in ``result.monotonicity`` (producer: dpverify.calibration.sampled)."""
    from . import bins as RB
    from . import shuffle as RS
    from .gdp import delta_mu_iv, side

    E, Dx = exact_input(inputs, "target_eps"), exact_input(inputs, "delta")
    if E > 50:
        raise MalformedCertificate("inputs.target_eps must be <= 50 for these templates")
    proved = set()
    for name, end in ends.items():
        allowed = {"value", "verdict"} | set(_END_HINTS[template].get(name, ()))
        extra = sorted(set(end) - allowed)
        if extra:
            raise MalformedCertificate(f"result.ends.{name}.{extra[0]}: not used by template {template!r} "
                                       f"(allowed: {', '.join(sorted(allowed))})")
        x = values[name]
        run_inputs = dict(inputs)
        if parameter == "epochs":
            if x.denominator != 1 or x < 1:
                raise MalformedCertificate(f"result.ends.{name}.value must be a whole number of epochs >= 1")
            run_inputs["epochs"] = str(x.numerator)
        else:
            run_inputs["noise_multiplier"] = f"{x.numerator}/{x.denominator}"
        what = f"the {name} end {parameter}={end['value']}"
        if template == "dpsgd-shuffle":
            r = RS._run(run_inputs)
            mu_lo, mu_hi = RS._mu_bracket(r)
            below = side(lambda A: delta_mu_iv(A, mu_hi, E), lambda A: A.q(Dx), 20) == -1
            above = side(lambda A: delta_mu_iv(A, mu_lo, E), lambda A: A.q(Dx), 20) == 1
            if name == "safe":
                ok, refuted = below, above
            elif name == "pair_limit":
                ok, refuted = above, below
            else:
                if "shuffle_lower" not in end:
                    raise MalformedCertificate(f"result.ends.{name}.shuffle_lower is missing")
                # a Gaussian upper bound below delta contradicts a failing end outright
                refuted = below
                ok = not refuted and RS._lower_eps_holds(r, {"shuffle_lower": end["shuffle_lower"]}, Dx, E)
        else:
            r = RB._run(run_inputs)
            # coarse mass units first (valid bounds, looser by about 2^-16 of delta), redone at the
            # fine unit only when they decide neither way; a refutation by them is a proof too
            lo, hi = RB._delta_route(r, end, (E,), scale=Dx / 2**16)(E, lambda b: b[1] <= Dx or b[0] > Dx)
            ok, refuted = (hi <= Dx, lo > Dx) if name == "safe" else (lo > Dx, hi <= Dx)
        if refuted:
            raise CertificateRejected(f"{what}: the re-derived bound of delta({inputs['target_eps']}) contradicts "
                                      f"the recorded verdict {end['verdict']}")
        if not ok:
            raise CouldNotReprove(f"could not re-prove {what} (delta({inputs['target_eps']}) against "
                                  f"{inputs['delta']})")
        proved |= {f"ends.{name}.value", f"ends.{name}.verdict"}
    return Recheck(value=None, err=mpf(0), dps=_DPS, verdict="holds", proved=frozenset(proved), verdict_of_record=True)
