"""Second route for balls-in-bins DP-SGD, one epoch (``bins.epsilon``,
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


from ..errors import CertificateRejected, CouldNotReprove, MalformedCertificate
from .core import arith, ceil_int, floor_int, mpfr_to_mpf
from .gdp import exact_input
from .shuffle import _count, _power
from .verify import Recheck, parse_bound, register

_U = 128
_PREC = 320
_RELATIONS = {"add-remove": ("remove", "add"), "replace-special": ("remove", "add"), "remove": ("remove",),
              "add": ("add",)}
#: work caps (the same as the producer's; a grid beyond them is refused before any product)
_MAX_BATCHES = 100_000
_MAX_DEGREE = 1 << 21
_MAX_CELLS = 1 << 16


def _run(inputs: Mapping[str, Any]) -> dict[str, Any]:
    sig = exact_input(inputs, "noise_multiplier")
    if not Fraction(1, 1000) <= sig <= 1000:
        raise MalformedCertificate("inputs.noise_multiplier must be in [0.001, 1000]")
    n = _count(inputs, "dataset_size", 10**12)
    b = _count(inputs, "batch_size", n)
    if n % b or not 2 <= n // b <= _MAX_BATCHES:
        raise MalformedCertificate(f"inputs.batch_size must divide dataset_size with 2 <= T <= {_MAX_BATCHES}")
    if exact_input(inputs, "epochs") != 1:
        raise MalformedCertificate("inputs.epochs must be 1 (one balls-in-bins epoch)")
    if inputs.get("sampling") != "balls-in-bins":
        raise MalformedCertificate(f"inputs.sampling={inputs.get('sampling')!r} (allowed: balls-in-bins)")
    rel = inputs.get("neighboring")
    if rel not in _RELATIONS:
        raise MalformedCertificate(f"inputs.neighboring={rel!r} (allowed: {', '.join(_RELATIONS)})")
    return {"sig": sig, "T": n // b, "dirs": _RELATIONS[rel]}


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


@register("bins.epsilon", explain="balls-in-bins DP-SGD (one epoch), enclosure of epsilon(delta): the pair of "
          "Chua et al. 2025 re-derived on MPFR intervals and exact GMP products at the recorded grid; hi accepted "
          "when delta_upper(hi) <= delta, lo when delta_lower(lo) > delta")
def recheck_eps(inputs: Mapping[str, Any], result: Mapping[str, Any]) -> Recheck:
    r = _run(inputs)
    delta = exact_input(inputs, "delta")
    if not 0 < delta < 1:
        raise MalformedCertificate("inputs.delta must be in (0, 1)")
    lo, hi = _enclosure(result)
    L = _Laws(r, _grid(result))
    A = L.A
    dl = A.q(delta)
    if not L.delta(r["dirs"], hi)[1] <= dl[0]:
        raise CouldNotReprove(f"the upper end {hi} is not re-proved: delta_upper(hi) > delta on the recorded grid")
    if lo > 0 and not L.delta(r["dirs"], lo)[0] > dl[1]:
        raise CouldNotReprove(f"the lower end {lo} is not re-proved: delta_lower(lo) <= delta on the recorded grid")
    enc = result["enclosure"]  # the re-proved ends are the recorded ones, read as verify reads them
    return Recheck(lo=parse_bound(enc["lo"], "result.enclosure.lo", 60, "f"),
                   hi=parse_bound(enc["hi"], "result.enclosure.hi", 60, "c"), dps=60)


recheck_claim = register("bins.claim", explain="balls-in-bins DP-SGD (one epoch), verdict on a claimed (eps, delta): "
                         "the epsilon enclosure re-proved as for bins.epsilon; holds iff its upper end <= claimed "
                         "eps, fails iff its lower end > claimed eps")(recheck_eps)


@register("bins.delta", explain="balls-in-bins DP-SGD (one epoch), enclosure of delta(eps) re-derived on MPFR "
          "intervals and exact GMP products at the recorded grid")
def recheck_delta(inputs: Mapping[str, Any], result: Mapping[str, Any]) -> Recheck:
    r = _run(inputs)
    eps = exact_input(inputs, "eps")
    if not 0 <= eps <= 50:
        raise MalformedCertificate("inputs.eps must be in [0, 50]")
    L = _Laws(r, _grid(result))
    lo, hi = L.delta(r["dirs"], eps)
    if not lo <= hi:
        raise CertificateRejected("the re-derived bounds cross")
    return Recheck(lo=mpfr_to_mpf(lo), hi=mpfr_to_mpf(hi), dps=60)
