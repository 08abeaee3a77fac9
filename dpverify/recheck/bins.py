"""Second route for balls-in-bins DP-SGD, one epoch or E independently re-allocated epochs (``bins.epsilon``,
``bins.delta``, ``bins.claim``), on MPFR intervals with directed rounding
(:mod:`.core`) and GMP integers only: nothing from the arb side is imported.

The mathematics is stated in the producer's module
(``dpverify.sampling.balls``); this is a second implementation of it. The pair
of one epoch (Chua et al., AISTATS 2025): P = (1/T) sum_t N(e_t, sigma^2 I),
Q = N(0, sigma^2 I); under Q, L = dP/dQ = (1/T) sum_t Y_t with Y_t i.i.d.
log-normal, F(y) = Phi(sigma log y + 1/(2 sigma)), E[Y; Y > a] =
Phi(1/(2 sigma) - sigma log a). With c = e^eps:

  remove: E[Y_up] - c + E[(c - S_up/T)_+] >= delta >= E[Y_dn] - c + E[(c - S_dn/T)_+]
  add:    E[(1 - c S_dn/T)_+] >= delta >= E[(1 - c S_up/T)_+]

where Y_up / Y_dn round Y to the upper / lower edge of its cell (the recorded
grid, a hint: any grid gives valid bounds; re-derived here from its five
integers), the expectations of the hinge terms are taken under the T-fold
integer powers of the cell masses rounded up (tail moved to the top edge) or
down (tail dropped), every product rounded the same way to units 2^-128. Masses,
means, e^eps and the hinge sums are MPFR intervals; the polynomials are exact
GMP products (Kronecker substitution).

E >= 2 epochs (:class:`_Epochs`): per direction one super-measure (upper end) and one
sub-measure (lower end) of the linear law, mapped to the loss grid by cuts (one exponential
per loss index, not one logarithm per degree), composed E times. The mass the super-measure's
window does not represent (+inf for remove, the far end for add) is 1 less a lower bound of the
law's mass below keep h; that bound is the super-measure's own mass less its tracked excess
(:func:`_pmul`: exact integer bookkeeping of how much rounding up can have added), where the
producer spends a third power on a sub-measure of the same law. Its products are made first in a
coarser unit 2^-u, 64 <= u < 128, chosen from the certificate (:func:`_coarse_unit`), rounded outward
as at 2^-128, so those bounds hold too; a point they do not decide is redone at 2^-128
(:func:`_epochs_route`).

Work is bounded before it starts: :func:`work` counts the coefficients every product will make
from T, E and the recorded grids (exit 2 beyond BINS_MAX_WORK, the producer's cap too), and a
one-epoch grid that cannot reach the eps asked about is answered (exit 3) before any product
(:func:`_reach`). Products are single GMP multiplications of packed integers, the rounding
done on the packed integer (:func:`_pmul`).

eps kinds: the recorded hi is accepted when the upper bound of delta(hi) is
<= delta, the recorded lo (> 0) when the lower bound of delta(lo) is > delta
(delta(eps) does not increase). delta kind: the re-derived [lo, hi] must lie in
the recorded one.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache
from itertools import accumulate
from typing import Any, Mapping, Optional

import gmpy2

from ..certificate.format import (BINS_ENCLOSURE_RANGE, BINS_MAX_COMPOSED, BINS_MAX_EPS, BINS_MAX_WORK, BINS_ONE_EPOCH_DEGREE,
                                  MAX_BINS_EPOCHS)
from ..errors import CertificateRejected, CouldNotReprove, MalformedCertificate
from ..numtext import is_digits, log_fraction
from .core import arith, ceil_int, exact_enclosure, floor_int, round_slots
from .bins_plan import GRID_SLACK, keep_cap, refines
from .gdp import exact_input
from .pld import _power as _square_multiply
from .decimals import exact_decimal
from .verify import BudgetExceeded, Recheck, register, root_enclosure

_U = 128
_PREC = 320
_RELATIONS = {"add-remove": ("remove", "add"), "replace-special": ("remove", "add"), "remove": ("remove",),
              "add": ("add",)}
#: work caps (the same as the producer's; a grid beyond them is refused before any product)
_MAX_BATCHES = 100_000
_MAX_DEGREE = 1 << 21
_MAX_CELLS = 1 << 16
_W_BITS = 200


def _count(inputs: Mapping[str, Any], key: str, hi: int) -> int:
    """inputs[key] as an integer in [1, hi] (a digit string is read as one, as format 1 wrote counts);
    else exit 2 naming the key. Shared with :mod:`.shuffle`."""
    v = inputs.get(key)
    if isinstance(v, str) and is_digits(v):
        v = int(v)
    if not isinstance(v, int) or isinstance(v, bool) or not 1 <= v <= hi:
        raise MalformedCertificate(f"inputs.{key} must be an integer in [1, {hi}]")
    return v


def _run(inputs: Mapping[str, Any]) -> dict[str, Any]:
    sig = exact_input(inputs, "noise_multiplier")
    if not Fraction(1, 1000) <= sig <= 1000:
        raise MalformedCertificate("inputs.noise_multiplier must be in [0.001, 1000]")
    n = _count(inputs, "dataset_size", 10**12)
    b = _count(inputs, "batch_size", n)
    if n % b or not 2 <= n // b <= _MAX_BATCHES:
        raise MalformedCertificate(f"inputs.batch_size must divide dataset_size with 2 <= T <= {_MAX_BATCHES}")
    E = exact_input(inputs, "epochs")
    if E.denominator != 1 or not 1 <= E <= MAX_BINS_EPOCHS:
        raise MalformedCertificate(f"inputs.epochs must be a whole number in [1, {MAX_BINS_EPOCHS}]")
    if inputs.get("sampling") != "balls-in-bins":
        raise MalformedCertificate(f"inputs.sampling={inputs.get('sampling')!r} (allowed: balls-in-bins)")
    rel = inputs.get("neighboring")
    if rel not in _RELATIONS:
        raise MalformedCertificate(f"inputs.neighboring={rel!r} (allowed: {', '.join(_RELATIONS)})")
    return {"sig": sig, "T": n // b, "dirs": _RELATIONS[rel], "E": int(E)}


def _grid(result: Mapping[str, Any]) -> dict[str, int]:
    g = result.get("bins_grid")
    if not isinstance(g, Mapping) or set(g) != {"g", "fine", "per", "top", "keep"}:
        raise MalformedCertificate("result.bins_grid must be an object with g, fine, per, top, keep")
    for k, v in g.items():
        if not isinstance(v, int) or isinstance(v, bool):
            raise MalformedCertificate(f"result.bins_grid.{k} must be an integer")
    if not (-30 <= g["g"] <= 40 and 1 <= g["fine"] <= g["top"] and 1 <= g["per"] <= 4096
            and g["top"] <= _MAX_DEGREE and 1 <= g["keep"] <= _MAX_DEGREE):
        raise MalformedCertificate(f"result.bins_grid out of range (g in [-30, 40], 1 <= fine <= top <= "
                                   f"{_MAX_DEGREE}, per in [1, 4096], keep in [1, {_MAX_DEGREE}])")
    return dict(g)


def edges(g: Mapping[str, int]) -> list[int]:
    """0 = k_0 < ... < k_m = top: unit steps for the first ``fine`` cells, then the
    width doubles every ``per`` cells (the producer reads its grid by this rule too)."""
    ks, width, k, i = [0], 1, 0, 0
    while k < g["top"]:
        if i > g["fine"] and (i - g["fine"]) % g["per"] == 0:
            width *= 2
        k = min(k + width, g["top"])
        ks.append(k)
        i += 1
        if len(ks) > _MAX_CELLS:
            raise MalformedCertificate(f"result.bins_grid gives more than {_MAX_CELLS} cells")
    return ks


# --------------------------------------------------------------------------- packed products


#: bits of one coefficient's slot in a packed polynomial: every exact product coefficient is at most
#: the product of the two factors' coefficient totals (nonnegative coefficients), and a total is
#: checked to stay below 2^(U + 1) (a measure of mass about 1 in units 2^-U), so a slot of 2U + 4
#: bits holds a coefficient plus the 2^U - 1 of a rounding up without a carry into the next slot
_S = 2 * _U + 4


class _Poly:
    """A polynomial with nonnegative integer coefficients (units 2^-u, u = :data:`_U` unless
    given) packed in slots of 2 u + 4 bits (:data:`_S` at the default unit; coefficient i in bits
    [S i, S (i + 1))), its length and an upper bound of its coefficient total (exact integer
    bookkeeping)."""

    __slots__ = ("x", "n", "tot", "err", "u")

    def __init__(self, x: Any, n: int, tot: int, err: Optional[int] = None, u: int = _U) -> None:
        self.x, self.n, self.tot, self.err, self.u = x, n, tot, err, u

    @classmethod
    def of(cls, c: list[int], err: Optional[int] = None, u: int = _U) -> "_Poly":
        """``err`` (super-measures only): an upper bound, in units, of sum_j (c_j - mu_j) over the
        coefficients kept, mu the exact measure c rounds up (None: not tracked)."""
        if any(v < 0 for v in c):
            raise ValueError("negative coefficient")
        return cls(gmpy2.pack(c, 2 * u + 4) if c else gmpy2.mpz(0), len(c), sum(c), err, u)

    def coeffs(self) -> list[int]:
        out = [int(v) for v in gmpy2.unpack(self.x, 2 * self.u + 4)] if self.x else []
        return out + [0] * (self.n - len(out))


def _pmul(a: _Poly, b: _Poly, up: bool, keep: Optional[int]) -> _Poly:
    """The product rounded to units 2^-U, every coefficient up (``up``) or down, degrees
    < ``keep`` only (exact for them: nonnegative coefficients, degrees only add).

    One GMP product of the packed integers gives every exact coefficient in its own slot
    (each is <= a.tot b.tot < 2^S - 2^U, checked, so no slot carries into the next); the
    rounding is then done on the packed integer (:func:`.core.round_slots`), with no
    per-coefficient Python work. The total of the result is bounded by a.tot b.tot / 2^U (+ one unit per
    coefficient when rounding up).

    Excess of a super-measure (``err``, rounding up, both factors tracked): with x >= mu_x and
    y >= mu_y coefficientwise, sum_(k < n) (x y - mu_x mu_y)_k = sum_(k < n) ((x - mu_x) y +
    mu_x (y - mu_y))_k <= err_x tot_y + tot_x err_y (for nonnegative f, g the truncated sum of
    f g is at most the product of the truncated sums; mu_x's total is at most x's), in units
    2^-2U, so ceil(. / 2^U) units, plus less than one unit per coefficient for the rounding up."""
    u = a.u
    if b.u != u:
        raise ValueError("factors in different units")
    S = 2 * u + 4
    if a.tot * b.tot + (1 << u) >= 1 << S:
        raise CouldNotReprove("a composed balls-in-bins mass exceeds the packed products' range")
    n = a.n + b.n - 1
    if keep is not None:
        n = min(n, keep)
    if n <= 0:
        return _Poly(gmpy2.mpz(0), 0, 0, None, u)
    z = round_slots(a.x * a.x if a is b else a.x * b.x, n, u, S, up)
    err = None
    if up and a.err is not None and b.err is not None:
        err = -((-(a.err * b.tot + a.tot * b.err)) >> u) + n
    return _Poly(z, n, ((a.tot * b.tot) >> u) + (n if up else 0), err, u)


def _ppower(c: "list[int] | _Poly", E: int, up: bool, keep: Optional[int] = None, u: int = _U) -> _Poly:
    """E-th power (E >= 1) by repeated squaring (:func:`.pld._power`), every product rounded as
    :func:`_pmul` (units 2^-u: those of ``c`` when it is a :class:`_Poly`)."""
    base = c if isinstance(c, _Poly) else _Poly.of(c[:keep] if keep is not None else c, None, u)
    return _square_multiply(base, E, lambda x, y, _k, _b: _pmul(x, y, up, keep), 0, 0)


def _power(c: list[int], E: int, up: bool, keep: Optional[int] = None, u: int = _U) -> list[int]:
    return _ppower(c, E, up, keep, u).coeffs()


def power_products(n0: int, E: int, keep: Optional[int]) -> list[int]:
    """Output lengths of the products :func:`_ppower` makes for the E-th power of a
    polynomial of length n0, degrees < keep (None: all): the same repeated squaring run on
    lengths alone, a static count, no product made."""
    out: list[int] = []

    def mul(x: int, y: int, _k: int, _b: int) -> int:
        out.append(min(x + y - 1, keep) if keep else x + y - 1)
        return out[-1]

    _square_multiply(min(n0, keep) if keep else n0, E, mul, 0, 0)
    return out


def work(T: int, E: int, grids: Mapping[str, Mapping[str, int]], windows: Mapping[str, tuple[int, int]]) -> int:
    """Coefficients produced by every polynomial product the second route makes for a run of T
    batches and E epochs on the given linear grids (one per direction) and, for E > 1, loss
    windows (per direction (lo, hi)): the work measure capped by BINS_MAX_WORK (products
    dominate; the cell masses are capped by the cell count, the hinge sums by the composed
    lengths). The producer sizes its grids by the same count, so both sides refuse alike."""
    total = 0
    for d, g in grids.items():
        top, keep = g["top"], g["keep"]
        if E == 1:  # per direction two laws: remove S_up above, S_dn below; add the reverse
            total += 2 * sum(power_products(top + 1, T, keep))
            continue
        if d == "remove":  # one tilted factor times the (T - 1)-th power: the S_up law above, S_dn below
            rest = sum(power_products(top + 1, T - 1, keep)) if T > 1 else 0
            rest_len = min((T - 1) * top + 1, keep)  # the (T - 1)-th power's length (1 at T = 1)
            total += 2 * (rest + min(min(top + 1, keep) + rest_len - 1, keep))
        else:  # the S_dn law above, the S_up law below
            total += 2 * sum(power_products(top + 1, T, keep))
        if d in windows:  # the E-fold powers of the epoch's loss law (absent: the linear part alone)
            lo, hi = windows[d]
            total += 2 * sum(power_products(hi - lo + 1, E, None))
    return total


def place(ks: list[int], masses: list[int], shift: int, tail_units: int) -> list[int]:
    """Coefficients of sum_i masses[i] z^(ks[i + shift]) + tail_units z^(ks[-1]): cell i's mass
    at its upper edge (shift 1) or lower edge (shift 0), the tail at the top edge."""
    c = [0] * (ks[-1] + 1)
    for i, m in enumerate(masses):
        c[ks[i + shift]] += m
    c[ks[-1]] += tail_units
    return c


def _reach(run: Mapping[str, Any], g: Mapping[str, int], eps: Fraction) -> int:
    """The degrees the hinges at ``eps`` read (the largest ceil of x = a / b over the directions,
    the same enclosure :meth:`_Laws.hinge` decides later); refused (exit 3) before any product
    when that is beyond the recorded ``keep``, so the answer is the one the full re-check would
    give, made first. A certificate whose T (or eps) was edited without its grid is answered here
    in milliseconds."""
    A = arith(_PREC)
    h = Fraction(1, 2 ** g["g"]) if g["g"] >= 0 else Fraction(2 ** (-g["g"]))
    c, b = A.exp(A.q(eps)), A.q(h / run["T"])
    need = 0
    for d in run["dirs"]:
        x = A.div(c, b) if d == "remove" else A.div(A.q(1), A.mul(c, b))
        need = max(need, ceil_int(x[1]))
        if need > g["keep"]:
            raise CouldNotReprove(f"eps = {float(eps):.6g} needs degrees beyond the recorded grid's keep = "
                                  f"{g['keep']} at T = {run['T']} (the grid does not fit the run's inputs)")
    return need


@lru_cache(maxsize=4)
def _log_edges(prec: int, g: int, fine: int, per: int, top: int) -> tuple:
    """log(h k) at every edge k >= 1 of the grid (:func:`edges`), h = 2^-g, rounded outward at ``prec``
    bits: h k is formed exactly (k < 2^22 and h a power of two: a dyadic of fewer bits than the
    precision). A function of the grid alone, so the ends of a calibration on one grid, and the
    directions of one run, share it (cached)."""
    A = arith(prec)
    out = []
    for k in edges({"g": g, "fine": fine, "per": per, "top": top})[1:]:
        y = A.dyadic(k, g) if g >= 0 else A.q(k << -g)
        out.append((A.dn.log(y[0]), A.up.log(y[1])))
    return tuple(out)


def _edge_logs(A: Any, s: tuple[Any, Any], g: Mapping[str, int]) -> list:
    """[None] + [sigma log(h k) for the edges k >= 1 of the grid ``g``] (:func:`_log_edges`), s an
    enclosure of sigma > 0: the product ordered by the logarithm's sign, for s in [s0, s1], s0 > 0, a
    logarithm in [l0, l1] with l0 >= 0 gives [s0 l0, s1 l1] and one with l1 <= 0 gives [s1 l0, s0 l1]
    (two directed products where the general interval product takes eight)."""
    dn, up = A.dn, A.up
    s0, s1 = s
    if not s0 > 0:
        raise ValueError("sigma must be enclosed away from 0")
    out: list = [None]
    for l0, l1 in _log_edges(A.prec, g["g"], g["fine"], g["per"], g["top"]):
        if l0 >= 0:
            out.append((dn.mul(s0, l0), up.mul(s1, l1)))
        elif l1 <= 0:
            out.append((dn.mul(s1, l0), up.mul(s0, l1)))
        else:
            out.append(A.mul(s, (l0, l1)))
    return out


class _Laws:
    def __init__(self, run: Mapping[str, Any], g: Mapping[str, int]) -> None:
        A = arith(_PREC)
        dn, up = A.dn, A.up
        self.A, self.T, self.keep = A, run["T"], g["keep"]
        h = Fraction(1, 2 ** g["g"]) if g["g"] >= 0 else Fraction(2 ** (-g["g"]))
        self.h = h
        ks = edges(g)
        s = A.q(run["sig"])
        half = A.div(A.q(1), A.scale2(s, 1))

        # Phi(sigma log y + 1/(2 sigma)) at every edge y = h k, increasing in y, to absolute accuracy about
        # 2^-320 (ncdf_abs: Taylor at anchors, several times faster than the relative-accuracy erfc route):
        # the masses are rounded to units 2^-128 and the means are absolute terms of delta, so 2^-320 is
        # far below both (as in the E-epoch route)
        slog = _edge_logs(A, s, g)
        Fs = [A.q(0)] + [A.ncdf_abs(A.add(x, half)) for x in slog[1:]]
        w = [(max(dn.sub(Fs[i][0], Fs[i - 1][1]), 0), up.sub(Fs[i][1], Fs[i - 1][0])) for i in range(1, len(ks))]
        lt = slog[-1]
        tail = A.ncdf_abs(A.neg(A.add(lt, half)))
        tail_mean = A.ncdf_abs(A.sub(half, lt))
        # sum_i (h k_i) w_i = h sum_i k_i w_i: each k_i w_i one directed product by the integer k_i (w_i >= 0),
        # the factor h = 2^-g exact at the end; the same roundings as multiplying by the exact h k_i (a power
        # of two commutes with rounding), without forming a rational per cell
        self.mean_up = A.add(A.scale2(A.fsum((dn.mul(w[i][0], ks[i + 1]), up.mul(w[i][1], ks[i + 1]))
                                             for i in range(len(w))), -g["g"]), tail_mean)
        self.mean_dn = A.add(A.scale2(A.fsum((dn.mul(w[i][0], ks[i]), up.mul(w[i][1], ks[i]))
                                             for i in range(len(w))), -g["g"]), tail_mean)
        unit = 2**_U
        hi = [max(0, ceil_int(up.mul(x[1], unit))) for x in w]
        lo = [max(0, floor_int(dn.mul(x[0], unit))) for x in w]
        t_hi = max(0, ceil_int(up.mul(tail[1], unit)))

        def poly(masses: list[int], shift: int, tail_units: int) -> list[int]:
            return place(ks, masses, shift, tail_units)

        T, keep = self.T, self.keep
        if "remove" in run["dirs"]:  # only the laws the directions' hinges read
            self.up_hi = _power(poly(hi, 1, t_hi), T, True, keep)
            self.dn_lo = _power(poly(lo, 0, 0), T, False, keep)
        if "add" in run["dirs"]:
            self.dn_hi = _power(poly(hi, 0, t_hi), T, True, keep)
            self.up_lo = _power(poly(lo, 1, 0), T, False, keep)

    def hinge(self, C: list[int], a: tuple[Any, Any], b: tuple[Any, Any], up: bool) -> tuple[Any, Any]:
        """sum_j C_j (a - b j)_+ 2^-U: exact over the j with a - b j > 0 proved (j < x.lo,
        x = a / b); the undecided j add their positive part to the upper end only."""
        A = self.A
        x = A.div(a, b)
        sure = max(0, ceil_int(x[0]))
        maybe = max(sure, ceil_int(x[1]))
        if up and maybe > self.keep:
            raise CouldNotReprove("the recorded eps lies beyond the degrees the recorded grid keeps")
        n = min(sure, len(C))
        s0 = sum(C[:n])
        s1 = sum(j * C[j] for j in range(n))
        val = A.sub(A.mul(a, A.q(s0)), A.mul(b, A.q(s1)))
        if up:
            for j in range(sure, min(maybe, len(C))):
                t = A.up.sub(a[1], A.dn.mul(b[0], j))  # >= a - b j
                if t > 0:
                    val = (val[0], A.up.add(val[1], A.up.mul(C[j], t)))
        return A.scale2(val, -_U)

    def delta(self, dirs: tuple[str, ...], eps: Fraction) -> tuple[Any, Any]:
        """(lo, hi) mpfr: lo <= delta(eps) <= hi."""
        A = self.A
        c = A.exp(A.q(eps))
        b = A.q(self.h / self.T)
        his, los = [], []
        for d in dirs:
            if d == "remove":
                hi = A.add(A.sub(self.mean_up, c), self.hinge(self.up_hi, c, b, True))
                lo = A.add(A.sub(self.mean_dn, c), self.hinge(self.dn_lo, c, b, False))
            else:
                cb = A.mul(c, b)
                hi = self.hinge(self.dn_hi, A.q(1), cb, True)
                lo = self.hinge(self.up_lo, A.q(1), cb, False)
            his.append(hi[1])
            los.append(lo[0])
        return max(max(los), 0), max(his)


# --------------------------------------------------------------------------- E >= 2 epochs


def _epochs_hints(result: Mapping[str, Any], dirs: tuple[str, ...]) -> tuple[dict[str, dict[str, int]], dict[str, int]]:
    """The recorded linear grid of each direction and the loss grid (hints, range-checked)."""
    h = result.get("bins_epochs")
    if not isinstance(h, Mapping) or set(h) != {"grids", "loss"}:
        raise MalformedCertificate("result.bins_epochs must be an object with grids and loss (E > 1)")
    grids = h["grids"]
    if not isinstance(grids, Mapping) or set(grids) != set(dirs):
        raise MalformedCertificate(f"result.bins_epochs.grids must have exactly the keys {', '.join(dirs)}")
    out = {d: _grid({"bins_grid": grids[d]}) for d in dirs}
    loss = h["loss"]
    keys = {"m", "remove_lo", "remove_hi", "add_lo", "add_hi"}
    if not isinstance(loss, Mapping) or set(loss) != keys or not all(
            isinstance(loss[k], int) and not isinstance(loss[k], bool) for k in keys):
        raise MalformedCertificate(f"result.bins_epochs.loss must have the integers {', '.join(sorted(keys))}")
    if not 1 <= loss["m"] <= 24 or any(abs(loss[k]) > 1 << 30 for k in keys - {"m"}):
        raise MalformedCertificate("result.bins_epochs.loss out of range (m in [1, 24], |window| <= 2^30)")
    for d in ("remove", "add"):
        if loss[f"{d}_lo"] > loss[f"{d}_hi"]:
            raise MalformedCertificate(f"result.bins_epochs.loss: {d}_lo > {d}_hi")
    return out, dict(loss)


def _mul1(a: list[int], b: _Poly, up: bool, keep: int) -> list[int]:
    return _pmul(_Poly.of(a[:keep], None, b.u), b, up, keep).coeffs()


class _Epochs:
    """E epochs (see :mod:`dpverify.sampling.balls_epochs` for the argument): per direction the
    loss law of one epoch on 2^-m Z (super-measure with a +inf atom, sub-measure), composed E
    times by exact GMP products rounded to units 2^-128; delta = E[(1 - e^{eps - X})_+]."""

    def __init__(self, run: Mapping[str, Any], grids: Mapping[str, Mapping[str, int]], loss: Mapping[str, int],
                 cut: bool = True, unit: int = _U) -> None:
        """``cut`` False: the recorded windows and ``keep`` as they are (the reference the tests compare
        the cut route with; the bounds agree, :meth:`_reach`). ``unit``: every mass and every product
        in units 2^-unit, each rounded outward as at 2^-128 (:func:`_pmul`), so the bounds hold at any
        unit; a coarser one is faster (the packed slots are 2 unit + 4 bits) and looser by about
        E x products x keep x 2^-unit (:func:`_epochs_route` tries 2^-64 first)."""
        self.A = arith(_PREC)
        self.cut = cut
        self.U = unit
        self.m, self.E, self.T = loss["m"], run["E"], run["T"]
        self._th: dict[Fraction, Any] = {}
        self._slog: dict[tuple[int, ...], list] = {}
        self.parts = {}
        # the work of the E-fold products is about proportional to E x the window (repeated squaring:
        # the last products dominate); every direction is bounded before the first product
        for d in run["dirs"]:
            lo, hi = loss[f"{d}_lo"], loss[f"{d}_hi"]
            if self.E * (hi - lo + 1) > BINS_MAX_COMPOSED:
                raise MalformedCertificate(f"result.bins_epochs.loss: inputs.epochs x the {d} window = "
                                           f"{self.E * (hi - lo + 1)} > {BINS_MAX_COMPOSED} (the producer's work cap: "
                                           "it writes no certificate beyond it)")
        for d in run["dirs"]:
            lo, hi = loss[f"{d}_lo"], loss[f"{d}_hi"]
            if cut:
                lo, hi = self._window(grids[d], d, lo, hi)
            self.parts[d] = self._compose(self._epoch(run, grids[d], d, lo, hi), lo)

    def _window(self, g: Mapping[str, int], d: str, lo: int, hi: int) -> tuple[int, int]:
        """The recorded window [lo, hi] clipped to the loss indices the linear law can reach, kept
        nonempty. Its degrees j lie in [1, J), J = min(keep, T top + 1) (S = 0 is +inf or dropped, by
        rule, not by index), so every index the route assigns, rounded either way, lies in
        [floor(log(h / T) 2^m) - 1, ceil(log(J h / T) 2^m) + 1] (negated for add, where the mass not
        represented also goes to the index of a degree <= J). Outside that range the recorded window
        holds only zeros: clipping drops them and moves no mass (a window wholly beyond the range keeps
        its end nearest to it, where the raised or lumped mass lands as before), and zero coefficients
        stay zero under products rounded either way. So the composed laws, and every bound, are
        the same; a window forged wide costs nothing beyond the grid's reach."""
        A = self.A
        h = Fraction(1, 2 ** g["g"]) if g["g"] >= 0 else Fraction(2 ** (-g["g"]))
        J = min(g["keep"], self.T * g["top"] + 1)
        lmin = floor_int(A.scale2(A.log(A.q(h / self.T)), self.m)[0]) - 1
        lmax = ceil_int(A.scale2(A.log(A.q(J * h / self.T)), self.m)[1]) + 1
        if d == "add":
            lmin, lmax = -lmax, -lmin
        lo2 = min(max(lo, lmin), hi)
        return lo2, max(min(hi, lmax), lo2)

    def _reach(self, i: int, Th: Fraction, J: int) -> Optional[tuple[int, int]]:
        """:meth:`_tau` of index i, (0, 1) when tau_i < 1 is proved, None when tau_i > J + 2 is (by
        :meth:`_clip_indices`' thresholds, as the walk of :meth:`_cuts` clips): the degrees a hinge
        reads through index i, so that the products can stop there. Any stopping degree is sound
        (the mass not represented goes to +inf or to the window's end, :meth:`_epoch`, or is dropped
        from a sub-measure); this one only drops degrees the route does not read."""
        over, under = self._clip_indices(Th, J)
        if i > over:
            return None
        if i < under:
            return 0, 1
        return self._tau(i, Th)

    def _cells(self, run: Mapping[str, Any], g: Mapping[str, int], ks: list[int], tilt: bool):
        """Cell masses of Y (tilt: the P-coordinate, F_1(y) = Phi(sigma log y - 1/(2 sigma))) in
        units: (up, down, tail up, tail down); each exact mass lies between its down and up value."""
        A = self.A
        s = A.q(run["sig"])
        half = A.div(A.q(1), A.scale2(s, 1))
        if tilt:
            half = A.neg(half)
        # sigma log(h k) at every edge, shared by the Q and the tilted P cells of one grid (they differ
        # by the shift only)
        key = (g["g"], g["fine"], g["per"], g["top"])
        if key not in self._slog:
            self._slog[key] = _edge_logs(A, s, g)
        slog = self._slog[key]
        # absolute accuracy 2^-320 is all a mass rounded to units 2^-128 needs (ncdf_abs: Taylor at anchors,
        # far faster than the relative-accuracy continued fraction in the tails)
        Fs = [A.q(0)] + [A.ncdf_abs(A.add(x, half)) for x in slog[1:]]
        w = [(max(A.dn.sub(Fs[i][0], Fs[i - 1][1]), 0), A.up.sub(Fs[i][1], Fs[i - 1][0])) for i in range(1, len(ks))]
        tail = A.ncdf_abs(A.neg(A.add(slog[-1], half)))
        unit = 2**self.U
        return ([max(0, ceil_int(A.up.mul(x[1], unit))) for x in w],
                [max(0, floor_int(A.dn.mul(x[0], unit))) for x in w],
                max(0, ceil_int(A.up.mul(tail[1], unit))), max(0, floor_int(A.dn.mul(tail[0], unit))))

    def _index(self, j: int, hT: Fraction) -> tuple[int, int]:
        """floor and ceil of log(j h / T) 2^m, exact where MPFR decides them."""
        x = hT * j
        if x == 1:
            return 0, 0
        for prec in (64, _PREC, 1024, 4096):
            A = arith(prec)
            v = A.scale2(A.log(A.q(x)), self.m)
            f, c = floor_int(v[0]), ceil_int(v[1])
            if c - f == 1:
                return f, c
        return f, c  # undecided: the sound sides (floor of the lower end, ceil of the upper)

    def _tau(self, i: int, Th: Fraction) -> tuple[int, int]:
        """(a, b) for tau_i = (T / h) e^(i 2^-m), the S / h at which log(S h / T) 2^m = i:
        ceil(log(j h / T) 2^m) <= i for the j <= a, floor(log(j h / T) 2^m) >= i for the j >= b.
        Decided exactly where MPFR decides floor(tau_i) (a = floor(tau_i), b = a + 1: tau_i is
        irrational for i != 0, Lindemann; tau_0 = T / h is exact); undecided at 4096 bits (never
        seen), the sound sides a = floor(lower end), b = ceil(upper end): a j between them gets the
        larger ceil index and the smaller floor index, as the per-j rule's fallback does."""
        if i == 0:
            return Th.numerator // Th.denominator, -((-Th.numerator) // Th.denominator)
        if abs(i) < 1 << 100:  # the common case, inline at 128 bits: i 2^-m is exact there
            A = arith(128)
            th = self._th.get(Th) or self._th.setdefault(Th, A.q(Th))
            x = A.dn.div(gmpy2.mpz(i), 1 << self.m)
            a, a1 = gmpy2.floor(A.dn.mul(A.dn.exp(x), th[0])), gmpy2.floor(A.up.mul(A.up.exp(x), th[1]))
            if a == a1:
                return int(a), int(a) + 1
        for prec in (_PREC, 1024, 4096):
            A = arith(prec)
            t = A.mul(A.exp(A.dyadic(i, self.m)), A.q(Th))
            a, a1 = floor_int(t[0]), floor_int(t[1])
            if a == a1:
                return a, a + 1
        return floor_int(t[0]), ceil_int(t[1])

    def _clip_indices(self, Th: Fraction, jmax: int) -> tuple[int, int]:
        """(I_over, I_under), integers with tau_i > jmax + 2 for every i > I_over and tau_i < 1 for
        every i < I_under (tau_i = (T / h) e^(i 2^-m), :meth:`_tau`), so that the clipped cut of such
        an i is (jmax, jmax + 1) or (0, 1) without an exponential (:meth:`_cuts`).

        Proof: with log(T / h) in [l0, l1] and log(jmax + 2) <= t1 (MPFR, 128 bits, directed),
        I_over = ceil((t1 - l0) 2^m) and I_under = floor(-l1 2^m) (the products rounded up and down).
        For i > I_over, i 2^-m > t1 - l0 >= log(jmax + 2) - log(T / h), so log tau_i > log(jmax + 2):
        floor(tau_i) >= jmax + 2, clipped to (jmax, jmax + 1). For i < I_under, i 2^-m < -l1 <=
        -log(T / h), so tau_i < 1: floor(tau_i) = 0, clipped to (0, 1). Each threshold lies on the safe
        side of the exact one, by the rounding (a few 2^-128 relative of the logarithms, times 2^m) plus
        one: an index between them takes the walk's exponential, which decides the same cut. Exact
        integer comparisons, where a float test (log tau_i past log(jmax + 2) + 1 or below -1) stood,
        sound only by its 1-nat margin over the float error (ref51 LOW-2)."""
        A = arith(128)
        lg = A.log(A.q(Th))
        top = A.log(A.q(jmax + 2))
        over = ceil_int(A.up.mul_2exp(A.up.sub(top[1], lg[0]), self.m))
        under = floor_int(A.dn.mul_2exp(A.neg(lg)[0], self.m))
        return over, under

    def _cuts(self, i0: int, i1: int, Th: Fraction, jmax: int) -> dict[int, tuple[int, int]]:
        """:meth:`_tau` for i0 <= i <= i1, clipped to [0, jmax + 1]: only the j in [1, jmax] are
        mapped, so a tau_i below 1 or above jmax acts as (0, 1) or (jmax, jmax + 1) and the i
        beyond the first such (proved on its enclosure) need no exponential."""
        out: dict[int, tuple[int, int]] = {}

        lg = log_fraction(Th)
        f = 2.0 ** self.m
        i_over, i_under = self._clip_indices(Th, jmax)

        # tau_(i +- 1) = tau_i e^(+-2^-m): one 128-bit enclosure carried along the walk, each step two
        # directed products (its relative width grows by about 2^-127 a step, so floor(tau) stays
        # decided); an undecided floor, and i = 0 (tau_0 = T / h may be an integer), go to :meth:`_tau`
        A = arith(128)
        th = A.q(Th)
        two_m = 1 << self.m
        step = {1: A.exp(A.dyadic(1, self.m)), -1: A.exp(A.neg(A.dyadic(1, self.m)))}
        state: dict[str, Any] = {"t": None}

        def clip(i: int, d: int) -> tuple[int, int]:
            # past the proved integer thresholds the clipped cut is decided without an exponential (and
            # without leaving MPFR's exponent range on a forged window): :meth:`_clip_indices`
            if i > i_over:
                state["t"] = None
                return jmax, jmax + 1
            if i < i_under:
                state["t"] = None
                return 0, 1
            t = state["t"]
            if t is None:
                e = A.dn.div(gmpy2.mpz(i), two_m)  # exact: a dyadic of fewer than 128 bits (|x| small)
                t = (A.dn.mul(A.dn.exp(e), th[0]), A.up.mul(A.up.exp(e), th[1]))
            else:
                t = A.mul(t, step[d])
            a, a1 = gmpy2.floor(t[0]), gmpy2.floor(t[1])
            if i != 0 and a == a1:
                state["t"] = t
                ab = (int(a), int(a) + 1)
            else:
                state["t"] = None
                ab = self._tau(i, Th)
            return min(max(ab[0], 0), jmax), min(max(ab[1], 1), jmax + 1)

        # the i whose tau_i lies in [1, jmax] are about [-log(T / h), log(jmax h / T)] 2^m: start there
        # (floats only choose where to start; every cut used is proved or implied by monotonicity)
        c0 = max(i0, min(i1, math.floor(-lg * f)))
        i = c0
        while i >= i0:  # downward until tau_i < 1 (then every lower i maps to (0, 1): tau increases in i)
            out[i] = ab = clip(i, -1)
            if ab == (0, 1):
                for k in range(i0, i):
                    out[k] = ab
                break
            i -= 1
        i = c0 + 1
        state["t"] = None
        while i <= i1:  # upward until tau_i > jmax (then every higher i maps to (jmax, jmax + 1))
            out[i] = ab = clip(i, 1)
            if ab == (jmax, jmax + 1):
                for k in range(i + 1, i1 + 1):
                    out[k] = ab
                break
            i += 1
        return out

    def _epoch(self, run: Mapping[str, Any], g: Mapping[str, int], d: str, lo: int, hi: int):
        """One epoch's loss law on the window [lo, hi] of 2^-m Z: (upper super-measure, its +inf
        mass, lower sub-measure), in units 2^-U.

        The linear law's degree j (S = j h) has the loss log(j h / T) (remove) or -log(j h / T)
        (add), rounded up or down to 2^-m Z. These indices are monotone in j, so instead of one
        logarithm per degree the cuts tau_i (:meth:`_tau`) between consecutive indices are
        computed once per index of the window and each index receives the sum of a run of
        consecutive coefficients: the same assignment as rounding each j's logarithm (exactly
        where the cuts are decided)."""
        T, keep = self.T, g["keep"]
        ks = edges(g)
        h = Fraction(1, 2 ** g["g"]) if g["g"] >= 0 else Fraction(2 ** (-g["g"]))
        hT = h / T
        Th = 1 / hT
        q_hi, q_lo, q_tail, q_tail_lo = self._cells(run, g, ks, False)
        e_q = sum(q_hi) - sum(q_lo)  # >= sum of (rounded up - exact) over the cells
        n = hi - lo + 1
        one, U = 1 << self.U, self.U

        def prefix(C: list[int]) -> list[int]:
            return [0, *accumulate(C)]

        def seg(P: list[int], a: int, b: int) -> int:
            """sum of C_j over 1 <= a <= j <= b (clipped to the coefficients there are)."""
            a, b = max(a, 1), min(b, len(P) - 2)
            return P[b + 1] - P[a] if b >= a else 0

        # the degrees each law is read at (:meth:`_reach`): the upper laws stop where the window's far end
        # stops reading (remove: the last j with ceil index <= hi; add: the first j whose floor index is
        # raised to lo, when that is below top, so that the mass beyond lands at lo as before), the lower
        # laws where the window drops every further degree; the bounds are those of the recorded keep
        # (lower ends identical, upper ends the same up to a smaller tracked excess)
        k_up = k_lo = keep
        if self.cut:
            J = min(keep, T * g["top"] + 1)
            if d == "remove":
                a, b = self._reach(hi, Th, J), self._reach(hi + 1, Th, J)
                k_up = keep if a is None else max(1, min(keep, a[0] + 1))
                k_lo = keep if b is None else max(1, min(keep, b[1]))
            else:
                a = self._reach(-lo, Th, J)
                if a is not None and a[1] <= min(keep, g["top"]):
                    k_up = max(1, a[1])
                k_lo = keep if a is None else max(1, min(keep, a[0] + 1))
        if d == "remove":  # P-law: one tilted coordinate, T - 1 as under Q
            p_hi, p_lo, _, _ = self._cells(run, g, ks, True)
            def rest(c: list[int], up_: bool, k: int) -> _Poly:  # the T - 1 coordinates as under Q
                if T == 1:
                    return _Poly.of([one], 0, U)
                return _ppower(_Poly.of(c[:k], e_q if up_ else None, U), T - 1, up_, k)

            hi_law = _pmul(_Poly.of(place(ks, p_hi, 1, 0)[:k_up], sum(p_hi) - sum(p_lo), U),
                           rest(place(ks, q_hi, 1, 0), True, k_up), True, k_up)
            up_hi = hi_law.coeffs()
            dn_lo = _mul1(place(ks, p_lo, 0, 0), rest(place(ks, q_lo, 0, 0), False, k_lo), False, k_lo)
            jmax = max(len(up_hi), len(dn_lo))
            cut = self._cuts(lo - 1, hi + 1, Th, jmax)
            P, Q = prefix(up_hi), prefix(dn_lo)
            # upper: ceil index c(j) <= i iff j <= a_i; c(j) <= lo raised to lo, c(j) > hi at +inf
            up = [seg(P, 1, cut[lo][0])] + [seg(P, cut[i - 1][0] + 1, cut[i][0]) for i in range(lo + 1, hi + 1)]
            # the outcomes not represented (S_up >= keep h or a tail coordinate): 1 - (a lower bound of
            # the S_up law's mass below keep h), that bound being the super-measure's mass less its
            # tracked excess (:func:`_pmul`); the producer's sub-measure of the same law gives the same
            # up to that excess (a few units 2^-128 per coefficient), at one power less here
            inf = seg(P, cut[hi][0] + 1, jmax) + max(0, one - (sum(up_hi) - hi_law.err))
            # lower: floor index f(j) = i for b_i <= j < b_(i+1); outside the window dropped
            low = [seg(Q, cut[i][1], cut[i + 1][1] - 1) for i in range(lo, hi + 1)]
        else:  # Q-law, loss Z = -log L
            hi_law = _ppower(_Poly.of(place(ks, q_hi, 0, q_tail)[:k_up], e_q + q_tail - q_tail_lo, U), T, True, k_up)
            dn_hi = hi_law.coeffs()
            up_lo = _power(place(ks, q_lo, 1, 0), T, False, k_lo, U)
            jmax = max(len(dn_hi), len(up_lo))
            cut = self._cuts(-hi - 1, -lo + 1, Th, jmax)
            P, Q = prefix(dn_hi), prefix(up_lo)
            # upper: Z index -f(j); -f(j) > hi (j < b_(-hi)) and S = 0 at +inf, -f(j) <= lo
            # (j >= b_(-lo)) raised to lo, -f(j) = k for b_(-k) <= j < b_(-k+1)
            inf = (dn_hi[0] if dn_hi else 0) + seg(P, 1, cut[-hi][1] - 1)
            up = [seg(P, cut[-lo][1], jmax)] + [seg(P, cut[-k][1], cut[-k + 1][1] - 1) for k in range(lo + 1, hi + 1)]
            # every outcome not represented has S >= far h: S'' (lower edges, a tail coordinate at the top
            # edge, S'' <= S) is >= keep h there; the mass is 1 - (a lower bound of the S'' law's mass below
            # keep h: the super-measure less its tracked excess, as for remove)
            far = min(k_up, g["top"])
            rest_mass = one - (sum(dn_hi) - hi_law.err)
            if rest_mass > 0:
                i = -self._index(far, hT)[1]
                if i > hi:
                    inf += rest_mass
                else:
                    up[max(i, lo) - lo] += rest_mass
            # lower: -c(j) = k for a_(-k-1) < j <= a_(-k), k in the window
            low = [seg(Q, cut[-k - 1][0] + 1, cut[-k][0]) for k in range(lo, hi + 1)]
        assert len(up) == n and len(low) == n
        return up, inf, low

    def _compose(self, law, lo: int) -> dict[str, Any]:
        up, inf, low = law
        E = self.E
        fin = sum(up)
        tot = fin + inf
        return {"base": E * lo, "up": _power(up, E, True, None, self.U), "low": _power(low, E, False, None, self.U),
                "inf": Fraction(tot**E - fin**E, 1 << (self.U * E))}

    def _w(self, up: bool) -> int:
        """floor (up) or ceil of e^{-2^-m} 2^W."""
        A = self.A
        w = A.scale2(A.exp(A.neg(A.dyadic(1, self.m))), _W_BITS)
        return floor_int(w[0]) if up else ceil_int(w[1])

    def _hinge(self, C: list[int], base: int, eps: Fraction, w: int, up: bool) -> Fraction:
        m = self.m
        k0 = max(0, (eps * 2**m).__floor__() - base + 1)
        if k0 >= len(C):
            return Fraction(0)
        tail = C[k0:]
        S0 = sum(tail)
        g = 0
        for c in reversed(tail):
            g = ((g * w) >> _W_BITS if up else -((-g * w) >> _W_BITS)) + c
        A = self.A
        f = A.exp(A.neg(A.q(Fraction(base + k0, 2**m) - eps)))
        val = A.scale2(A.sub(A.q(S0), A.mul(f, A.q(g))), -self.U)
        return Fraction(*(val[1] if up else val[0]).as_integer_ratio())

    def delta(self, eps: Fraction) -> tuple[Fraction, Fraction]:
        wu, wl = self._w(True), self._w(False)
        his, los = [], []
        for c in self.parts.values():
            his.append(self._hinge(c["up"], c["base"], eps, wu, True) + c["inf"])
            los.append(max(Fraction(0), self._hinge(c["low"], c["base"], eps, wl, False)))
        return max(los), max(his)


def _fraction(text: Any, where: str) -> Fraction:
    if not isinstance(text, str) or len(text) > 200:
        raise MalformedCertificate(f"{where} must be a decimal string")
    return exact_decimal(text, where)


def _enclosure(result: Mapping[str, Any]) -> tuple[Fraction, Fraction]:
    enc = result.get("enclosure")
    if not isinstance(enc, Mapping):
        raise MalformedCertificate("result.enclosure is missing")
    lo, hi = _fraction(enc.get("lo"), "result.enclosure.lo"), _fraction(enc.get("hi"), "result.enclosure.hi")
    if not 0 <= lo <= hi <= BINS_MAX_EPS:
        raise MalformedCertificate(BINS_ENCLOSURE_RANGE)
    return lo, hi


def _bound_work(r: Mapping[str, Any], grids: Mapping[str, Mapping[str, int]],
                windows: Mapping[str, tuple[int, int]]) -> None:
    """Refuse (exit 2) before any product a certificate whose inputs and recorded grids imply
    more than BINS_MAX_WORK coefficients of products (:func:`work`): the producer refuses such
    a run, so no certificate it writes is beyond it."""
    w = work(r["T"], r["E"], grids, windows)
    if w > BINS_MAX_WORK:
        raise MalformedCertificate(f"inputs (T = {r['T']}, epochs = {r['E']}) and the recorded balls-in-bins grids imply "
                                   f"{w:,} coefficients of polynomial products > {BINS_MAX_WORK:,} (the producer's work "
                                   "cap: it writes no certificate beyond it)")


def _bound_grids(r: Mapping[str, Any], grids: Mapping[str, Mapping[str, int]]) -> None:
    """Refuse (exit 2) before any product an E-epoch certificate whose recorded grid keeps more degrees
    than the producer's rule writes for its inputs, with slack (:func:`.bins_plan.keep_cap`): the
    products' cost is about proportional to keep, and a grid is a hint, so a forged one must not buy
    more work than the inputs imply (a two-epoch certificate of T = 4 with its grids forged to 2^21
    degrees kept verify busy for 30-80 CPU s). Floats only price the work; they prove nothing."""
    sig = float(r["sig"])
    refined = refines(sig, r["T"], r["E"], r["dirs"])
    for d, g in grids.items():
        cap = keep_cap(sig, r["T"], r["E"], d, 2.0 ** -g["g"], refined)
        if g["keep"] > cap:
            raise MalformedCertificate(
                f"result.bins_epochs.grids.{d}.keep = {g['keep']:,} > {cap:,}: the producer's grid rule writes at "
                f"most about {cap // (2 * GRID_SLACK):,} degrees for sigma = {float(r['sig']):.6g}, T = {r['T']}, "
                f"E = {r['E']} at this cell width (allowed: up to {GRID_SLACK}x its degree and {2 * GRID_SLACK}x "
                "its reach)")


#: the coarsest unit of the E-epoch route's first attempt (:func:`_epochs_route`)
_U_COARSE = 64


def _coarse_unit(r: Mapping[str, Any], grids: Mapping[str, Mapping[str, int]], loss: Mapping[str, int],
                 scale: Fraction) -> int:
    """The unit 2^-u of the first attempt: the least u >= 64 at which the route's looseness is at most
    ``scale``, or 128 (no coarse attempt). The looseness is about (E (T + 2 bits(T)) keep + 2 bits(E) E
    window) units: each product moves every coefficient it keeps by less than a unit, the tracked excess
    of the T-fold power (:func:`_pmul`, the mass put at +inf or the window's end) grows with T, and the
    linear law's error is composed E times (measured: 4.2e-10 of the upper end, 7e-16 of the lower at
    2^-64 on an MNIST-sized certificate, T = 240, E = 60, keep 786,930, where this gives 6.5e-10).
    A function of the certificate's contents alone: it chooses where to start, never what a bound is."""
    if scale <= 0:
        return _U
    E, T = r["E"], r["T"]
    keep = max(g["keep"] for g in grids.values())
    window = max(loss[f"{d}_hi"] - loss[f"{d}_lo"] + 1 for d in r["dirs"])
    count = E * (T + 2 * T.bit_length()) * keep + 2 * E.bit_length() * E * window
    # 2^-(den bits) < scale: so count 2^-u <= scale once u >= bits(count) + bits(den) - bits(num) + 1
    u = count.bit_length() + scale.denominator.bit_length() - scale.numerator.bit_length() + 1
    return max(_U_COARSE, u) if u < _U else _U


def _epochs_route(r: Mapping[str, Any], grids: Mapping[str, Mapping[str, int]], loss: Mapping[str, int],
                  scale: Fraction):
    """eps, enough -> (lo, hi) bounding delta(eps) of E >= 2 epochs: first at a coarser unit
    (:func:`_coarse_unit`: 2^-64 where ``scale``, how close the caller's bounds must come, allows), then,
    for a point where those bounds do not do what the caller needs (``enough`` false), at 2^-128,
    returning the intersection of both (each encloses delta(eps): every product at either unit rounds
    outward, :meth:`_Epochs.__init__`). So a certificate that verifies at 2^-128 verifies, only slower
    when the coarse bounds fail; the packed products at 2^-64 are about 2.3x faster (132- instead of
    260-bit slots)."""
    coarse = _coarse_unit(r, grids, loss, scale)
    made: dict[int, _Epochs] = {}

    def at(unit: int) -> _Epochs:
        if unit not in made:
            made[unit] = _Epochs(r, grids, loss, unit=unit)
        return made[unit]

    def bounds(eps: Fraction, enough: "Optional[Any]" = None) -> tuple[Fraction, Fraction]:
        c = at(coarse).delta(eps)
        if coarse == _U or enough is None or enough(c):
            return c
        f = at(_U).delta(eps)
        return max(c[0], f[0]), min(c[1], f[1])
    return bounds


def _delta_route(r: Mapping[str, Any], result: Mapping[str, Any], evals: "tuple[Fraction, ...]" = (),
                 near: "tuple[Fraction, ...]" = (), scale: Fraction = Fraction(0)):
    """eps[, enough] -> (lo, hi) exact rationals bounding delta(eps) of the run: one epoch on the recorded
    ``bins_grid``, E >= 2 epochs on the recorded ``bins_epochs`` (the other hint must be absent; coarse
    units first where they may do, ``scale`` and ``enough`` as in :func:`_epochs_route`).
    The work is bounded before any product (:func:`_bound_work`); for one epoch, the eps values
    ``evals`` the caller will ask about are checked against the grid's reach first (:func:`_reach`),
    and the products stop at the degrees those eps read, or those of the eps ``near`` them (the points
    just past a recorded end where a refutation is sought) when the grid reaches those."""
    if r["E"] == 1:
        if "bins_epochs" in result:
            raise MalformedCertificate("result.bins_epochs is for E > 1 epochs; one epoch records bins_grid")
        g = _grid(result)
        cap = GRID_SLACK * BINS_ONE_EPOCH_DEGREE + 8  # the rule keeps <= T c_max / h + 2 <= degree + 2
        if max(g["keep"], g["top"]) > cap:
            raise MalformedCertificate(f"result.bins_grid keeps or tops {max(g['keep'], g['top']):,} degrees: the "
                                       f"producer's one-epoch grid rule writes at most about {BINS_ONE_EPOCH_DEGREE:,} "
                                       f"(allowed: up to {cap:,})")
        _bound_work(r, {d: g for d in r["dirs"]}, {})
        if evals:
            # The hinges at these eps read degrees below `need` only, and a truncated power is exact
            # (and rounded identically) below its cut: nonnegative coefficients, degrees only add.
            # So the products stop there, whatever `keep` the certificate records: a genuine grid
            # keeps about that many, and a forged keep far above it costs nothing. Any other eps is
            # still sound on the cut laws: the upper hinge refuses degrees beyond it (exit 3), the
            # lower one only drops nonnegative terms.
            need = max(_reach(r, g, eps) for eps in evals)
            for eps in near:
                try:
                    need = max(need, _reach(r, g, eps))
                except CouldNotReprove:  # beyond the recorded grid: its whole keep, no more
                    need = g["keep"]
            g = {**g, "keep": max(1, min(g["keep"], need))}
        L = _Laws(r, g)

        def one(eps: Fraction, enough: "Optional[Any]" = None) -> tuple[Fraction, Fraction]:
            lo, hi = L.delta(r["dirs"], eps)
            return Fraction(*lo.as_integer_ratio()), Fraction(*hi.as_integer_ratio())
        return one
    if "bins_grid" in result:
        raise MalformedCertificate("result.bins_grid is for one epoch; E > 1 epochs record bins_epochs")
    grids, loss = _epochs_hints(result, r["dirs"])
    _bound_grids(r, grids)
    _bound_work(r, grids, {d: (loss[f"{d}_lo"], loss[f"{d}_hi"]) for d in r["dirs"]})
    return _epochs_route(r, grids, loss, scale)


#: how far past the recorded ends the products of an eps kind reach (relative; see recheck_eps)
_NEAR = Fraction(1, 2**32)


@register("bins.epsilon", explain="balls-in-bins DP-SGD (E epochs, each re-allocated), enclosure of epsilon(delta): the pair of "
          "Chua et al. 2025 re-derived on MPFR intervals and exact GMP products at the recorded grid; hi accepted "
          "when delta_upper(hi) <= delta, lo when delta_lower(lo) > delta")
def recheck_eps(inputs: Mapping[str, Any], result: Mapping[str, Any]) -> Recheck:
    r = _run(inputs)
    delta = exact_input(inputs, "delta")
    if not 0 < delta < 1:
        raise MalformedCertificate("inputs.delta must be in (0, 1)")
    lo, hi = _enclosure(result)
    # the refuting points of root_enclosure lie within 2^-64 (relative) past the recorded ends: the
    # products reach 2^-32 past them, when the grid does (the degrees the hinges read are monotone in eps)
    wider = (hi * (1 + _NEAR),) + ((lo * (1 - _NEAR),) if lo > 0 else ())
    # coarse units first, looser than delta by about 2^-16 of it (a recorded eps end 10^-(digits + 1)
    # inside moves delta by more; where it does not, the point is redone at 2^-128)
    bounds = _delta_route(r, result, (hi, lo) if lo > 0 else (hi,), wider, delta / 2**16)

    def proves(x: Fraction, which: int) -> bool:
        """delta_lower(x) > delta (which 0: eps >= x) or delta_upper(x) <= delta (which 1: eps <= x),
        delta(eps) non-increasing; a point the recorded grid cannot reach proves nothing."""
        try:
            b = bounds(x, lambda b: b[0] > delta if which == 0 else b[1] <= delta)
        except BudgetExceeded:
            raise
        except CouldNotReprove:
            return False
        return b[0] > delta if which == 0 else b[1] <= delta

    # the one rule for roots: the recorded ends first, then (to refute) a point just past them
    lo_i, hi_i = root_enclosure(result["enclosure"], lambda x: proves(x, 0), lambda x: proves(x, 1))
    return Recheck(lo=lo_i, hi=hi_i, dps=60)


recheck_claim = register("bins.claim", explain="balls-in-bins DP-SGD (E epochs, each re-allocated), verdict on a claimed (eps, delta): "
                         "the epsilon enclosure re-proved as for bins.epsilon; holds iff its upper end <= claimed "
                         "eps, fails iff its lower end > claimed eps")(recheck_eps)


@register("bins.delta", explain="balls-in-bins DP-SGD (E epochs, each re-allocated), enclosure of delta(eps) re-derived on MPFR "
          "intervals and exact GMP products at the recorded grid")
def recheck_delta(inputs: Mapping[str, Any], result: Mapping[str, Any]) -> Recheck:
    r = _run(inputs)
    eps = exact_input(inputs, "eps")
    if not 0 <= eps <= BINS_MAX_EPS:
        raise MalformedCertificate(f"inputs.eps must be in [0, {BINS_MAX_EPS}]")
    # the recorded ends, exact: bounds inside them are inside them as the rule reads them (a recorded
    # end rounded outward, a bound at 512 bits outward)
    try:
        rlo, rhi = _enclosure(result)
    except MalformedCertificate:  # judged by the rule as before (no coarse attempt)
        rlo, rhi = Fraction(1), Fraction(0)
    # coarse units first, looser by about 2^-16 of the recorded lower end (on an MNIST-sized certificate
    # the recorded ends are about 1e-5 of delta outside the re-derived bounds; a certificate whose ends
    # are closer than the coarse bounds come is redone at 2^-128: slower, the same verdict)
    lo, hi = _delta_route(r, result, (eps,), scale=(rlo or rhi) / 2**16)(eps, lambda b: rlo <= b[0] and b[1] <= rhi)
    if not lo <= hi:
        raise CertificateRejected("the re-derived bounds cross")
    return Recheck(lo=exact_enclosure(lo)[0], hi=exact_enclosure(hi)[1], dps=60)
