#!/usr/bin/env python3
"""DP-SGD benchmark: dpverify's certified PLD accountant against dp_accounting's
PLD accountant, in one run, in-process, as CPU-time ratios, with verify time against compute time.

Usage: python3 scripts/bench_dpsgd.py [--only A B ...] [--big] [--no-fine] [--no-verify] [--quick]
                                      [--budget S]

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
answers, with dpverify's width-1e-3 time as a ratio to it. Verify time against
compute time (unless --no-verify): the width-1e-3 eps certificate and the delta
certificate of each row (the bytes `audit dpsgd ... --digits 3 --certificate F`
writes) are written to a temporary folder and re-checked by `verify` in a fresh
child (the re-check alone: imports done, cold caches, python-flint not loaded);
a table of verify / compute closes the run. Times are CPU seconds
(time.process_time: every thread of the process, so a multithreaded reference
is not flattered by a loaded machine); the wall-time ratio is shown beside the
ratio to dp_accounting. The machine's load average (os.getloadavg) is printed
at the start, before and after every row and at the end: the ratios are taken
in one process, one after the other, so load moves both sides. Floats appear
here only for printing.

Examples:
  PYTHONPATH=. python scripts/bench_dpsgd.py --quick        # rows A and B at width 1e-3: under a minute
  PYTHONPATH=. python scripts/bench_dpsgd.py                # every row (minutes)
  PYTHONPATH=. python scripts/bench_dpsgd.py --only MNIST T1e5 --no-fine
"""

from __future__ import annotations

import argparse
import ast
import math
import os
import resource
import sys
import tempfile
import time
import warnings
from pathlib import Path

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _bench import end, start, verify_cpu, warm_up  # noqa: E402
from dpverify.certificate import write  # noqa: E402
from dpverify.certificate.build import pld_answer_certificate  # noqa: E402
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
    """dp_accounting PLD at vdi 1e-4, pessimistic: (value, CPU seconds, wall seconds) or None."""
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
    return val, time.process_time() - c, time.perf_counter() - t


#: prv_accountant's grid grows with T at a fixed eps_error: at T = 1e5 it
#: took 386 s and 3.2 GB (load 19 on 2 cores), at T = 1e7 it passed 14 GB
#: (killed); it is not run beyond this
PRV_MAX_STEPS = 10**4


def prv(sigma: str, q: str, T: int):
    """prv_accountant's eps at eps_error 1e-2: (upper, CPU seconds) or None."""
    if T > PRV_MAX_STEPS:
        return None
    try:
        from prv_accountant import PRVAccountant
        from prv_accountant.privacy_random_variables import PoissonSubsampledGaussianMechanism
    except ImportError:
        return None
    t = time.process_time()
    try:
        acc = PRVAccountant(prvs=[PoissonSubsampledGaussianMechanism(noise_multiplier=float(sigma),
                                                                      sampling_probability=_q(q))],
                            max_self_compositions=[T], eps_error=1e-2, delta_error=float(DELTA) / 1000)
        _, _, upper = acc.compute_epsilon(delta=float(DELTA), num_self_compositions=[T])
    except Exception:  # PRV does not answer everywhere (large eps, tiny delta)
        return None
    return float(upper), time.process_time() - t


def _load() -> str:
    return "load %.2f %.2f %.2f" % os.getloadavg()


def ours(fn, *args, width: float, budget: float):
    """(answer or None, CPU seconds, wall seconds, note) of one certified query."""
    t = time.perf_counter()
    c = time.process_time()
    try:
        ans = fn(*args, rel_width=width, time_budget=budget)
    except Exception as exc:  # reported, not fatal: the table shows what failed
        return None, time.process_time() - c, time.perf_counter() - t, f"{type(exc).__name__}: {str(exc)[:120]}"
    return ans, time.process_time() - c, time.perf_counter() - t, ans.note or ""


def _fmt_enc(ans) -> str:
    return f"[{float(ans.enclosure.lo_str()):.7g}, {float(ans.enclosure.hi_str()):.7g}]"


#: (row, eps CPU s, delta CPU s, ratio, delta grid exponent, delta relative width, same-precision
#: eps query or None) of each row at width 1e-3, printed as one table at the end
_SUMMARY: list = []

#: (row, query, compute CPU s, verify CPU s, verify exit code) of each certificate re-checked
_VERIFY: list = []


def _verify(tmp: "Path | None", name: str, what: str, quantity: str, inputs: dict, ans, cpu: float) -> str:
    """Write the certificate `audit dpsgd` writes for ``ans`` and time its re-check."""
    if tmp is None:
        return ""
    cert = tmp / f"{name}-{quantity}.json"
    write(pld_answer_certificate(quantity=quantity, inputs=inputs, answer=ans), cert)
    v, code, message = verify_cpu(cert)
    _VERIFY.append((name, what, cpu, v, code))
    return (f"  verify {v:.2f} s, verify/compute {v / cpu:.2f}, exit {code}"
            + (f" ({message[-120:]})" if code != 0 else ""))


def run_row(name: str, sigma: str, q: str, T: int, fine: bool, budget: float, tmp: "Path | None") -> list[str]:
    out = [f"{name} (sigma={sigma}, q={q}, T={T}), delta={DELTA}   [{_load()}]"]
    schedule = {"noise_multiplier": sigma, "sampling_rate": q, "steps": T, "neighboring": "add-remove"}
    ref = dpa(sigma, q, T)
    pv = prv(sigma, q, T)
    if ref is None:
        out.append("  dp_accounting not installed: no ratios")
        ref_eps = ref_cpu = ref_wall = None
    else:
        ref_eps, ref_cpu, ref_wall = ref
        out.append(f"  dp_accounting PLD 1e-4     eps = {ref_eps:.6f}                  {ref_cpu:8.2f} s")
    if pv is not None:
        out.append(f"  prv_accountant (1e-2)      eps <= {pv[0]:.6f}                 {pv[1]:8.2f} s")
    c_eps = None
    for w in ((1e-3, 1e-4) if fine else (1e-3,)):
        ans, cpu, wall, note = ours(S.dpsgd_epsilon, sigma, q, T, DELTA, width=w, budget=budget)
        ratio = f"ratio {cpu / ref_cpu:6.2f} (wall {wall / ref_wall:5.2f})" if ref_cpu else ""
        if ans is None:
            out.append(f"  dpverify eps width {w:g}  FAILED after {cpu:.2f} s: {note}")
            continue
        if w == 1e-3 and pv is not None:
            ratio += f" (prv {cpu / pv[1]:5.2f})"
        inside = ""
        if ref_eps is not None:
            inside = "  dpa >= lo" if ref_eps >= float(ans.enclosure.lo_str()) else "  dpa BELOW certified lo"
        out.append(f"  dpverify eps width {w:g}  {_fmt_enc(ans)} 2^-{ans.grid_exponent:<2d} {cpu:8.2f} s  "
                   f"{ratio}{inside}{'  note: ' + note if note else ''}")
        if w == 1e-3:
            c_eps = cpu
            out[-1] += _verify(tmp, name, "eps 1e-3", "pld.epsilon", {**schedule, "delta": DELTA, "digits": 3},
                               ans, cpu)
    if ref_eps is not None:
        e0 = round(ref_eps, 3)
        rd = dpa(sigma, q, T, eps=e0)
        ans, cpu, wall, note = ours(S.dpsgd_delta, sigma, q, T, str(e0), width=1e-3, budget=budget)
        if ans is None:
            out.append(f"  delta({e0}) dpverify FAILED after {cpu:.2f} s: {note}")
        else:
            r1 = f"ratio {cpu / rd[1]:6.2f}" if rd else ""
            r2 = f"delta/eps time {cpu / c_eps:5.2f}" if c_eps else ""
            dval = f"{rd[0]:.4e} {rd[1]:6.2f} s" if rd else ""
            out.append(f"  delta({e0}) dpa {dval}  dpverify {_fmt_enc(ans)} 2^-{ans.grid_exponent} {cpu:6.2f} s  "
                       f"{r1}  {r2}")
            out[-1] += _verify(tmp, name, f"delta({e0}) 1e-3", "pld.delta",
                               {**schedule, "eps": str(e0), "digits": 3}, ans, cpu)
            c_delta = cpu
            # the same precision on eps: a relative width w on delta is a width w / S on eps, with
            # S = eps |d ln delta / d eps| (from dp_accounting's deltas: floats, for this table only)
            rd2 = dpa(sigma, q, T, eps=e0 * (1 + 1e-3)) if rd else None
            fair = None
            if rd and rd2 and rd[0] > rd2[0] > 0:
                S_ = math.log(rd[0] / rd2[0]) / 1e-3
                a2, c2, _, _ = ours(S.dpsgd_epsilon, sigma, q, T, DELTA, width=1e-3 / S_, budget=budget)
                if a2 is not None:
                    fair = (S_, c2, a2.grid_exponent)
            if c_eps:
                _SUMMARY.append((name, c_eps, c_delta, c_delta / c_eps, ans.grid_exponent, ans.rel_width, fair))
    out.append(f"  [{_load()}]")
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__[__doc__.index("Examples:"):],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", nargs="+", help=f"rows among {', '.join(list(ROWS) + list(BIG))}")
    ap.add_argument("--big", action="store_true", help="add T = 1e7 (minutes; peak memory shown)")
    ap.add_argument("--no-fine", action="store_true", help="skip the width 1e-4 runs")
    ap.add_argument("--no-verify", action="store_true", help="do not write and re-check the certificates")
    ap.add_argument("--quick", action="store_true",
                    help="rows A and B, width 1e-3 only (under a minute; smoke use)")
    ap.add_argument("--budget", type=float, default=120.0, help="dpverify time budget per query (s)")
    args = ap.parse_args()
    warnings.filterwarnings("ignore")
    rows = dict(ROWS)
    if args.big:
        rows.update(BIG)
    names = args.only or (["A", "B"] if args.quick else list(rows))
    allrows = {**ROWS, **BIG}
    for name in names:
        if name not in allrows:
            print(f"unknown row {name!r}; choose from {', '.join(allrows)}", file=sys.stderr)
            return 2
    start(f"bench_dpsgd: rows {' '.join(names)}; dp_accounting PLD 1e-4 (pessimistic), prv_accountant 1e-2, "
          "dpverify at width 1e-3" + ("" if args.no_fine or args.quick else " and 1e-4 (T <= 1e5)"))
    warm_up()
    with tempfile.TemporaryDirectory(prefix="bench_dpsgd-") as d:
        tmp = None if args.no_verify else Path(d)
        for name in names:
            sigma, q, T = allrows[name]
            fine = not (args.no_fine or args.quick) and T <= 10**5
            if name in BIG:
                r, w = os.pipe()
                pid = os.fork()
                if pid == 0:  # child: run, send the lines, exit
                    os.close(r)
                    lines = run_row(name, sigma, q, T, False, max(args.budget, 120.0), tmp)
                    os.write(w, ("\n".join(lines) + "\n\x00" + repr(_VERIFY)).encode())
                    os._exit(0)
                os.close(w)
                data = b""
                while chunk := os.read(r, 65536):
                    data += chunk
                os.waitpid(pid, 0)
                text, _, verified = data.decode().partition("\n\x00")
                print(text)
                try:
                    _VERIFY[:] = ast.literal_eval(verified) if verified else []
                except (ValueError, SyntaxError):  # a nan time does not survive repr: the row says it
                    pass
                rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
                print(f"  peak memory of the child (largest so far): {rss:.0f} MB")
            else:
                print("\n".join(run_row(name, sigma, q, T, fine, args.budget, tmp)))
                rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
                print(f"  peak memory of this process so far: {rss:.0f} MB")
            sys.stdout.flush()
    if _SUMMARY:
        print(f"\ndelta(eps) query against the eps query, both at relative width 1e-3 (goal: <= 1.5), CPU s   "
              f"[{_load()}]")
        print("  same precision: the eps query at width 1e-3 / S, S = eps |d ln delta / d eps| (a width w on "
              "delta asks as much as w / S on eps)")
        print(f"  {'row':6s} {'eps s':>7s} {'delta s':>8s} {'ratio':>6s} {'grid':>5s} "
              f"{'delta width':>11s} {'S':>6s} {'eps(1e-3/S) s':>14s} {'grid':>5s} {'ratio':>6s}")
        for name, ce, cd, r, m, w, fair in _SUMMARY:
            width = f"{w:.3g}" if w is not None else "-"
            same = (f" {fair[0]:6.1f} {fair[1]:14.2f} {'2^-' + str(fair[2]):>5s} {cd / fair[1]:6.2f}"
                    if fair else "")
            print(f"  {name:6s} {ce:7.2f} {cd:8.2f} {r:6.2f} {'2^-' + str(m):>5s} {width:>11s}{same}")
    if _VERIFY:
        print("\nverify time against compute time (CPU s; verify: the re-check alone in a fresh child, imports "
              "done, cold caches; goal: <= 1)")
        print(f"  {'row':6s} {'query':18s} {'compute':>8s} {'verify':>8s} {'ratio':>6s}  exit")
        for name, what, c, v, code in _VERIFY:
            print(f"  {name:6s} {what:18s} {c:8.2f} {v:8.2f} {v / c:6.2f}  {code}")
        slower = [f"{n} {w}" for n, w, c, v, _ in _VERIFY if v > c]
        print(f"  verify slower than compute on {len(slower)} of {len(_VERIFY)}" + (": " + ", ".join(slower) if slower else ""))
    end()
    return 0


if __name__ == "__main__":
    sys.exit(main())
