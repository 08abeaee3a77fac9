#!/usr/bin/env python3
"""DP-SGD benchmark: dpverify's certified PLD accountant against dp_accounting's
PLD accountant, in one run, in-process, as time ratios.

Usage: python3 scripts/bench_dpsgd.py [--only A B ...] [--big] [--no-fine] [--budget S]

Rows: A (1, 0.01, 1000), B (4, 0.01, 1e4), C (0.8, 0.004, 2e4),
D (3, 4096/50000, 2500), MNIST (1.1, 256/60000, 14063) and the series
T1e3..T1e6 of (1, 0.01, T); ``--big`` adds T1e7 (in a forked child so that
its peak memory can be reported; minutes, not seconds).

For each row at delta = 1e-5: dp_accounting PLD (value_discretization_interval
1e-4, pessimistic_estimate=True) eps and its compute time; dpverify's
certified eps at relative width 1e-3 and (unless --no-fine, or for T >= 1e5)
1e-4 with time and ratio to dp_accounting; then the delta query
delta(eps0) at eps0 = dp_accounting's eps rounded to 3 digits, both
accountants, width 1e-3, with the ratio of dpverify's delta time to its own
eps time (goal: <= 1.5; a table of these ratios, with the delta query's grid
and width, closes the run, beside the eps query at the same precision: relative
width 1e-3 / S on eps, S = eps |d ln delta / d eps| from dp_accounting's deltas,
since a relative width on delta asks S times more than the same one on eps). "inside" checks dp_accounting's float eps against the
certified enclosure (a pessimistic estimate should be >= the certified lower
end). prv_accountant (eps_error 1e-2, its default use) is timed too where it
answers, with dpverify's width-1e-3 time as a ratio to it. The machine's load
average (os.getloadavg) is printed before and after every row: the ratios
are taken in one process, one after the other, so load moves both sides.
Floats appear here only for printing.
"""

from __future__ import annotations

import argparse
import math
import os
import resource
import sys
import time
import warnings

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from dpverify.pld import dpsgd as S  # noqa: E402

DELTA = "1e-5"
ROWS = {
    "A": ("1", "0.01", 1000),
    "B": ("4", "0.01", 10000),
    "C": ("0.8", "0.004", 20000),
    "D": ("3", "4096/50000", 2500),
    "MNIST": ("1.1", "256/60000", 14063),
    "T1e3": ("1", "0.01", 10**3),
    "T1e4": ("1", "0.01", 10**4),
    "T1e5": ("1", "0.01", 10**5),
    "T1e6": ("1", "0.01", 10**6),
}
BIG = {"T1e7": ("1", "0.01", 10**7)}


def _q(text: str) -> float:
    if "/" in text:
        a, b = text.split("/")
        return int(a) / int(b)
    return float(text)


def dpa(sigma: str, q: str, T: int, *, eps: float | None = None):
    """dp_accounting PLD at vdi 1e-4, pessimistic: (value, seconds) or None."""
    try:
        import dp_accounting as D
    except ImportError:
        return None
    ev = D.SelfComposedDpEvent(D.PoissonSampledDpEvent(_q(q), D.GaussianDpEvent(float(sigma))), T)
    t = time.perf_counter()
    c = time.process_time()
    acc = D.pld.PLDAccountant(value_discretization_interval=1e-4)
    acc.compose(ev)
    val = acc.get_epsilon(float(DELTA)) if eps is None else acc.get_delta(eps)
    _CPU["dpa"] = time.process_time() - c
    return val, time.perf_counter() - t


#: prv_accountant's grid grows with T at a fixed eps_error: at T = 1e5 it
#: took 386 s and 3.2 GB (load 19 on 2 cores), at T = 1e7 it passed 14 GB
#: (killed); it is not run beyond this
PRV_MAX_STEPS = 10**4


def prv(sigma: str, q: str, T: int):
    """prv_accountant's eps at eps_error 1e-2: (upper, seconds) or None."""
    if T > PRV_MAX_STEPS:
        return None
    try:
        from prv_accountant import PRVAccountant
        from prv_accountant.privacy_random_variables import PoissonSubsampledGaussianMechanism
    except ImportError:
        return None
    t = time.perf_counter()
    try:
        acc = PRVAccountant(prvs=[PoissonSubsampledGaussianMechanism(noise_multiplier=float(sigma),
                                                                      sampling_probability=_q(q))],
                            max_self_compositions=[T], eps_error=1e-2, delta_error=float(DELTA) / 1000)
        _, _, upper = acc.compute_epsilon(delta=float(DELTA), num_self_compositions=[T])
    except Exception:  # PRV does not answer everywhere (large eps, tiny delta)
        return None
    return float(upper), time.perf_counter() - t


def _load() -> str:
    return "load %.2f %.2f %.2f" % os.getloadavg()


#: CPU seconds of the last run of each side: a second ratio that load moves
#: less than wall time (both sides are single-threaded here)
_CPU: dict = {}


def ours(fn, *args, width: float, budget: float):
    t = time.perf_counter()
    c = time.process_time()
    try:
        ans = fn(*args, rel_width=width, time_budget=budget)
    except Exception as exc:  # reported, not fatal: the table shows what failed
        _CPU["ours"] = time.process_time() - c
        return None, time.perf_counter() - t, f"{type(exc).__name__}: {str(exc)[:120]}"
    _CPU["ours"] = time.process_time() - c
    return ans, time.perf_counter() - t, ans.note or ""


def _fmt_enc(ans) -> str:
    return f"[{float(ans.enclosure.lo_str()):.7g}, {float(ans.enclosure.hi_str()):.7g}]"


#: (row, eps seconds, delta seconds, ratio, CPU-time ratio, delta grid exponent, delta
#: relative width) of
#: each row at width 1e-3, printed as one table at the end
_SUMMARY: list = []


def run_row(name: str, sigma: str, q: str, T: int, fine: bool, budget: float) -> list[str]:
    out = [f"{name} (sigma={sigma}, q={q}, T={T}), delta={DELTA}   [{_load()}]"]
    ref = dpa(sigma, q, T)
    ref_cpu = _CPU.get("dpa")
    pv = prv(sigma, q, T)
    if ref is None:
        out.append("  dp_accounting not installed: no ratios")
        ref_eps, ref_t = None, None
    else:
        ref_eps, ref_t = ref
        out.append(f"  dp_accounting PLD 1e-4     eps = {ref_eps:.6f}                  {ref_t:8.2f} s")
    if pv is not None:
        out.append(f"  prv_accountant (1e-2)      eps <= {pv[0]:.6f}                 {pv[1]:8.2f} s")
    t_eps = c_eps = None
    for w in ((1e-3, 1e-4) if fine else (1e-3,)):
        ans, tt, note = ours(S.dpsgd_epsilon, sigma, q, T, DELTA, width=w, budget=budget)
        ratio = f"ratio {tt / ref_t:6.2f} (cpu {_CPU['ours'] / ref_cpu:5.2f})" if ref_t and ref_cpu else ""
        if ans is None:
            out.append(f"  dpverify eps width {w:g}  FAILED after {tt:.2f} s: {note}")
            continue
        if w == 1e-3:
            t_eps, c_eps = tt, _CPU["ours"]
            if pv is not None:
                ratio += f" (prv {tt / pv[1]:5.2f})"
        inside = ""
        if ref_eps is not None:
            inside = "  dpa >= lo" if ref_eps >= float(ans.enclosure.lo_str()) else "  dpa BELOW certified lo"
        out.append(f"  dpverify eps width {w:g}  {_fmt_enc(ans)} 2^-{ans.grid_exponent:<2d} {tt:8.2f} s  "
                   f"{ratio}{inside}{'  note: ' + note if note else ''}")
    if ref_eps is not None:
        e0 = round(ref_eps, 3)
        rd = dpa(sigma, q, T, eps=e0)
        ans, tt, note = ours(S.dpsgd_delta, sigma, q, T, str(e0), width=1e-3, budget=budget)
        if ans is None:
            out.append(f"  delta({e0}) dpverify FAILED after {tt:.2f} s: {note}")
        else:
            r1 = f"ratio {tt / rd[1]:6.2f}" if rd else ""
            r2 = f"delta/eps time {tt / t_eps:5.2f}" if t_eps else ""
            dval = f"{rd[0]:.4e} {rd[1]:6.2f} s" if rd else ""
            out.append(f"  delta({e0}) dpa {dval}  dpverify {_fmt_enc(ans)} 2^-{ans.grid_exponent} {tt:6.2f} s  "
                       f"{r1}  {r2}")
            c_delta = _CPU["ours"]
            # the same precision on eps: a relative width w on delta is a width w / S on eps, with
            # S = eps |d ln delta / d eps| (from dp_accounting's deltas: floats, for this table only)
            rd2 = dpa(sigma, q, T, eps=e0 * (1 + 1e-3)) if rd else None
            fair = None
            if rd and rd2 and rd[0] > rd2[0] > 0:
                S_ = math.log(rd[0] / rd2[0]) / 1e-3
                a2, t2, _ = ours(S.dpsgd_epsilon, sigma, q, T, DELTA, width=1e-3 / S_, budget=budget)
                if a2 is not None:
                    fair = (S_, _CPU["ours"], a2.grid_exponent)
            if t_eps and c_eps:
                _SUMMARY.append((name, t_eps, tt, tt / t_eps, c_delta / c_eps, ans.grid_exponent,
                                 ans.rel_width, fair, c_delta))
    out.append(f"  [{_load()}]")
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="+", help=f"rows among {', '.join(list(ROWS) + list(BIG))}")
    ap.add_argument("--big", action="store_true", help="add T = 1e7 (minutes; peak memory shown)")
    ap.add_argument("--no-fine", action="store_true", help="skip the width 1e-4 runs")
    ap.add_argument("--budget", type=float, default=120.0, help="dpverify time budget per query (s)")
    args = ap.parse_args()
    warnings.filterwarnings("ignore")
    rows = dict(ROWS)
    if args.big:
        rows.update(BIG)
    names = args.only or list(rows)
    allrows = {**ROWS, **BIG}
    for name in names:
        if name not in allrows:
            print(f"unknown row {name!r}; choose from {', '.join(allrows)}", file=sys.stderr)
            return 2
        sigma, q, T = allrows[name]
        fine = not args.no_fine and T <= 10**5
        if name in BIG:
            r, w = os.pipe()
            pid = os.fork()
            if pid == 0:  # child: run, send the lines, exit
                os.close(r)
                lines = run_row(name, sigma, q, T, False, max(args.budget, 120.0))
                os.write(w, "\n".join(lines).encode())
                os._exit(0)
            os.close(w)
            data = b""
            while chunk := os.read(r, 65536):
                data += chunk
            os.waitpid(pid, 0)
            print(data.decode())
            rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
            print(f"  peak memory of the child (largest so far): {rss:.0f} MB")
        else:
            print("\n".join(run_row(name, sigma, q, T, fine, args.budget)))
            rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            print(f"  peak memory of this process so far: {rss:.0f} MB")
        sys.stdout.flush()
    if _SUMMARY:
        print(f"\ndelta(eps) query against the eps query, both at relative width 1e-3 (goal: <= 1.5)   [{_load()}]")
        print("  same precision: the eps query at width 1e-3 / S, S = eps |d ln delta / d eps| (a width w on "
              "delta asks as much as w / S on eps)")
        print(f"  {'row':6s} {'eps s':>7s} {'delta s':>8s} {'ratio':>6s} {'cpu ratio':>9s} {'grid':>5s} "
              f"{'delta width':>11s} {'S':>6s} {'eps(1e-3/S) cpu':>15s} {'grid':>5s} {'cpu ratio':>9s}")
        for name, te, td, r, rc, m, w, fair, cd in _SUMMARY:
            width = f"{w:.3g}" if w is not None else "-"
            same = (f" {fair[0]:6.1f} {fair[1]:15.2f} {'2^-' + str(fair[2]):>5s} {cd / fair[1]:9.2f}"
                    if fair else "")
            print(f"  {name:6s} {te:7.2f} {td:8.2f} {r:6.2f} {rc:9.2f} {'2^-' + str(m):>5s} {width:>11s}{same}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
