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

eps kinds: the recorded hi is accepted when the upper bound of delta(hi) is
<= delta, the recorded lo (> 0) when the lower bound of delta(lo) is > delta
(delta(eps) does not increase). delta kind: the re-derived [lo, hi] must lie in
the recorded one.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Mapping


from ..certificate.format import BINS_MAX_COMPOSED
from ..errors import CertificateRejected, CouldNotReprove, MalformedCertificate
from .core import arith, ceil_int, exact_enclosure, floor_int
from .gdp import exact_input
from .shuffle import _count, _kron, _power
from .verify import Recheck, parse_bound, register

_U = 128
_PREC = 320
_RELATIONS = {"add-remove": ("remove", "add"), "replace-special": ("remove", "add"), "remove": ("remove",),
              "add": ("add",)}
#: work caps (the same as the producer's; a grid beyond them is refused before any product)
_MAX_BATCHES = 100_000
_MAX_DEGREE = 1 << 21
_MAX_CELLS = 1 << 16
_MAX_EPOCHS = 10_000
_MAX_COMPOSED = BINS_MAX_COMPOSED  # the producer's cap (one constant, certificate.format)
_W_BITS = 200


def _run(inputs: Mapping[str, Any]) -> dict[str, Any]:
    sig = exact_input(inputs, "noise_multiplier")
    if not Fraction(1, 1000) <= sig <= 1000:
        raise MalformedCertificate("inputs.noise_multiplier must be in [0.001, 1000]")
    n = _count(inputs, "dataset_size", 10**12)
    b = _count(inputs, "batch_size", n)
    if n % b or not 2 <= n // b <= _MAX_BATCHES:
        raise MalformedCertificate(f"inputs.batch_size must divide dataset_size with 2 <= T <= {_MAX_BATCHES}")
    E = exact_input(inputs, "epochs")
    if E.denominator != 1 or not 1 <= E <= _MAX_EPOCHS:
        raise MalformedCertificate(f"inputs.epochs must be a whole number in [1, {_MAX_EPOCHS}]")
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


def place(ks: list[int], masses: list[int], shift: int, tail_units: int) -> list[int]:
    """Coefficients of sum_i masses[i] z^(ks[i + shift]) + tail_units z^(ks[-1]): cell i's mass
    at its upper edge (shift 1) or lower edge (shift 0), the tail at the top edge."""
    c = [0] * (ks[-1] + 1)
    for i, m in enumerate(masses):
        c[ks[i + shift]] += m
    c[ks[-1]] += tail_units
    return c


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

        def F(y: tuple[Any, Any]) -> tuple[Any, Any]:  # Phi(sigma log y + 1/(2 sigma)), increasing in y
            return A.ncdf(A.add(A.mul(s, A.log(y)), half))

        Fs = [A.q(0)] + [F(A.q(h * k)) for k in ks[1:]]
        w = [(max(dn.sub(Fs[i][0], Fs[i - 1][1]), 0), up.sub(Fs[i][1], Fs[i - 1][0])) for i in range(1, len(ks))]
        top = A.q(h * ks[-1])
        lt = A.mul(s, A.log(top))
        tail = A.ncdf(A.neg(A.add(lt, half)))
        tail_mean = A.ncdf(A.sub(half, lt))
        self.mean_up = A.add(A.fsum(A.mul(A.q(h * ks[i + 1]), w[i]) for i in range(len(w))), tail_mean)
        self.mean_dn = A.add(A.fsum(A.mul(A.q(h * ks[i]), w[i]) for i in range(len(w))), tail_mean)
        unit = 2**_U
        hi = [max(0, ceil_int(up.mul(x[1], unit))) for x in w]
        lo = [max(0, floor_int(dn.mul(x[0], unit))) for x in w]
        t_hi = max(0, ceil_int(up.mul(tail[1], unit)))

        def poly(masses: list[int], shift: int, tail_units: int) -> list[int]:
            return place(ks, masses, shift, tail_units)

        T, keep = self.T, self.keep
        self.up_hi = _power(poly(hi, 1, t_hi), T, True, _U, keep)
        self.dn_hi = _power(poly(hi, 0, t_hi), T, True, _U, keep)
        self.up_lo = _power(poly(lo, 1, 0), T, False, _U, keep)
        self.dn_lo = _power(poly(lo, 0, 0), T, False, _U, keep)

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


def _mul1(a: list[int], b: list[int], up: bool, keep: int) -> list[int]:
    z = _kron(a, b)[:keep]
    return [-((-v) >> _U) for v in z] if up else [v >> _U for v in z]


class _Epochs:
    """E epochs (see :mod:`dpverify.sampling.balls_epochs` for the argument): per direction the
    loss law of one epoch on 2^-m Z (super-measure with a +inf atom, sub-measure), composed E
    times by exact GMP products rounded to units 2^-128; delta = E[(1 - e^{eps - X})_+]."""

    def __init__(self, run: Mapping[str, Any], grids: Mapping[str, Mapping[str, int]], loss: Mapping[str, int]) -> None:
        self.A = arith(_PREC)
        self.m, self.E, self.T = loss["m"], run["E"], run["T"]
        self.parts = {}
        # the work of the E-fold products is about proportional to E x the window (repeated squaring:
        # the last products dominate); every direction is bounded before the first product
        for d in run["dirs"]:
            lo, hi = loss[f"{d}_lo"], loss[f"{d}_hi"]
            if self.E * (hi - lo + 1) > _MAX_COMPOSED:
                raise MalformedCertificate(f"result.bins_epochs.loss: inputs.epochs x the {d} window = "
                                           f"{self.E * (hi - lo + 1)} > {_MAX_COMPOSED} (the producer's work cap: "
                                           "it writes no certificate beyond it)")
        for d in run["dirs"]:
            lo, hi = loss[f"{d}_lo"], loss[f"{d}_hi"]
            self.parts[d] = self._compose(self._epoch(run, grids[d], d, lo, hi), lo)

    def _cells(self, run: Mapping[str, Any], g: Mapping[str, int], ks: list[int], tilt: bool):
        """Cell masses of Y (tilt: the P-coordinate, F_1(y) = Phi(sigma log y - 1/(2 sigma))) in
        units: (up, down, tail up)."""
        A = self.A
        h = Fraction(1, 2 ** g["g"]) if g["g"] >= 0 else Fraction(2 ** (-g["g"]))
        s = A.q(run["sig"])
        half = A.div(A.q(1), A.scale2(s, 1))
        if tilt:
            half = A.neg(half)
        # absolute accuracy 2^-320 is all a mass rounded to units 2^-128 needs (ncdf_abs: Taylor at anchors,
        # far faster than the relative-accuracy continued fraction in the tails)
        Fs = [A.q(0)] + [A.ncdf_abs(A.add(A.mul(s, A.log(A.q(h * k))), half)) for k in ks[1:]]
        w = [(max(A.dn.sub(Fs[i][0], Fs[i - 1][1]), 0), A.up.sub(Fs[i][1], Fs[i - 1][0])) for i in range(1, len(ks))]
        tail = A.ncdf_abs(A.neg(A.add(A.mul(s, A.log(A.q(h * ks[-1]))), half)))
        unit = 2**_U
        return ([max(0, ceil_int(A.up.mul(x[1], unit))) for x in w],
                [max(0, floor_int(A.dn.mul(x[0], unit))) for x in w],
                max(0, ceil_int(A.up.mul(tail[1], unit))))

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

    def _epoch(self, run: Mapping[str, Any], g: Mapping[str, int], d: str, lo: int, hi: int):
        T, keep = self.T, g["keep"]
        ks = edges(g)
        h = Fraction(1, 2 ** g["g"]) if g["g"] >= 0 else Fraction(2 ** (-g["g"]))
        hT = h / T
        q_hi, q_lo, q_tail = self._cells(run, g, ks, False)
        n = hi - lo + 1
        up, low, inf = [0] * n, [0] * n, 0
        one = 1 << _U
        cache: dict[int, tuple[int, int]] = {}

        def idx(j: int) -> tuple[int, int]:
            if j not in cache:
                cache[j] = self._index(j, hT)
            return cache[j]

        def put_up(i: "int | None", mass: int) -> None:
            nonlocal inf
            if mass > 0:
                if i is None or i > hi:
                    inf += mass
                else:
                    up[max(i, lo) - lo] += mass

        def put_low(i: int, mass: int) -> None:
            if mass > 0 and lo <= i <= hi:
                low[i - lo] += mass

        if d == "remove":  # P-law: one tilted coordinate, T - 1 as under Q
            p_hi, p_lo, _ = self._cells(run, g, ks, True)
            def rest(c: list[int], up_: bool) -> list[int]:  # the T - 1 coordinates as under Q
                return [1 << _U] if T == 1 else _power(c, T - 1, up_, _U, keep)

            up_hi = _mul1(place(ks, p_hi, 1, 0), rest(place(ks, q_hi, 1, 0), True), True, keep)
            up_lo = _mul1(place(ks, p_lo, 1, 0), rest(place(ks, q_lo, 1, 0), False), False, keep)
            dn_lo = _mul1(place(ks, p_lo, 0, 0), rest(place(ks, q_lo, 0, 0), False), False, keep)
            for j in range(1, len(up_hi)):
                put_up(idx(j)[1], up_hi[j])
            put_up(None, one - sum(up_lo))
            for j in range(1, len(dn_lo)):
                put_low(idx(j)[0], dn_lo[j])
        else:  # Q-law, loss Z = -log L
            dn_hi = _power(place(ks, q_hi, 0, q_tail), T, True, _U, keep)
            dn_lo = _power(place(ks, q_lo, 0, 0), T, False, _U, keep)
            up_lo = _power(place(ks, q_lo, 1, 0), T, False, _U, keep)
            if dn_hi:
                put_up(None, dn_hi[0])
            for j in range(1, len(dn_hi)):
                put_up(-idx(j)[0], dn_hi[j])
            far = min(keep, g["top"])
            put_up(-idx(far)[1], one - sum(dn_lo))
            for j in range(1, len(up_lo)):
                put_low(-idx(j)[1], up_lo[j])
        return up, inf, low

    def _compose(self, law, lo: int) -> dict[str, Any]:
        up, inf, low = law
        E = self.E
        fin = sum(up)
        tot = fin + inf
        return {"base": E * lo, "up": _power(up, E, True, _U), "low": _power(low, E, False, _U),
                "inf": Fraction(tot**E - fin**E, 1 << (_U * E))}

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
        val = A.scale2(A.sub(A.q(S0), A.mul(f, A.q(g))), -_U)
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
    try:
        return Fraction(text)
    except (ValueError, ZeroDivisionError):
        raise MalformedCertificate(f"{where} must be a decimal string, got {text[:40]!r}") from None


def _enclosure(result: Mapping[str, Any]) -> tuple[Fraction, Fraction]:
    enc = result.get("enclosure")
    if not isinstance(enc, Mapping):
        raise MalformedCertificate("result.enclosure is missing")
    lo, hi = _fraction(enc.get("lo"), "result.enclosure.lo"), _fraction(enc.get("hi"), "result.enclosure.hi")
    if not 0 <= lo <= hi <= 50:
        raise MalformedCertificate("result.enclosure must have 0 <= lo <= hi <= 50")
    return lo, hi


def _delta_route(r: Mapping[str, Any], result: Mapping[str, Any]):
    """eps -> (lo, hi) exact rationals bounding delta(eps) of the run: one epoch on the recorded
    ``bins_grid``, E >= 2 epochs on the recorded ``bins_epochs`` (the other hint must be absent)."""
    if r["E"] == 1:
        if "bins_epochs" in result:
            raise MalformedCertificate("result.bins_epochs is for E > 1 epochs; one epoch records bins_grid")
        L = _Laws(r, _grid(result))

        def one(eps: Fraction) -> tuple[Fraction, Fraction]:
            lo, hi = L.delta(r["dirs"], eps)
            return Fraction(*lo.as_integer_ratio()), Fraction(*hi.as_integer_ratio())
        return one
    if "bins_grid" in result:
        raise MalformedCertificate("result.bins_grid is for one epoch; E > 1 epochs record bins_epochs")
    grids, loss = _epochs_hints(result, r["dirs"])
    return _Epochs(r, grids, loss).delta


@register("bins.epsilon", explain="balls-in-bins DP-SGD (E epochs, each re-allocated), enclosure of epsilon(delta): the pair of "
          "Chua et al. 2025 re-derived on MPFR intervals and exact GMP products at the recorded grid; hi accepted "
          "when delta_upper(hi) <= delta, lo when delta_lower(lo) > delta")
def recheck_eps(inputs: Mapping[str, Any], result: Mapping[str, Any]) -> Recheck:
    r = _run(inputs)
    delta = exact_input(inputs, "delta")
    if not 0 < delta < 1:
        raise MalformedCertificate("inputs.delta must be in (0, 1)")
    lo, hi = _enclosure(result)
    bounds = _delta_route(r, result)
    if not bounds(hi)[1] <= delta:
        raise CouldNotReprove(f"the upper end {hi} is not re-proved: delta_upper(hi) > delta on the recorded grid")
    if lo > 0 and not bounds(lo)[0] > delta:
        raise CouldNotReprove(f"the lower end {lo} is not re-proved: delta_lower(lo) <= delta on the recorded grid")
    enc = result["enclosure"]  # the re-proved ends are the recorded ones, read as verify reads them
    return Recheck(lo=parse_bound(enc["lo"], "result.enclosure.lo", 60, "f"),
                   hi=parse_bound(enc["hi"], "result.enclosure.hi", 60, "c"), dps=60)


recheck_claim = register("bins.claim", explain="balls-in-bins DP-SGD (E epochs, each re-allocated), verdict on a claimed (eps, delta): "
                         "the epsilon enclosure re-proved as for bins.epsilon; holds iff its upper end <= claimed "
                         "eps, fails iff its lower end > claimed eps")(recheck_eps)


@register("bins.delta", explain="balls-in-bins DP-SGD (E epochs, each re-allocated), enclosure of delta(eps) re-derived on MPFR "
          "intervals and exact GMP products at the recorded grid")
def recheck_delta(inputs: Mapping[str, Any], result: Mapping[str, Any]) -> Recheck:
    r = _run(inputs)
    eps = exact_input(inputs, "eps")
    if not 0 <= eps <= 50:
        raise MalformedCertificate("inputs.eps must be in [0, 50]")
    lo, hi = _delta_route(r, result)(eps)
    if not lo <= hi:
        raise CertificateRejected("the re-derived bounds cross")
    return Recheck(lo=exact_enclosure(lo)[0], hi=exact_enclosure(hi)[1], dps=60)
