"""Time of the certified event accountant on the events at T steps, as ratios in one
run, in-process: to the Poisson-subsampled Gaussian at the same T and accuracy (goal: a
mixture of Gaussians within 2x), to dp_accounting's PLD accountant
(value_discretization_interval 1e-4, pessimistic) on the same event where it supports it,
to prv_accountant (eps_error 1e-2) where it answers (trees of Poisson Gaussian and
Laplace leaves of at most 10^4 steps in all), and verify time against compute time:
each row's certificate (the bytes `audit dpsgd --events FILE --delta 1e-5 --digits 4`
writes) is written to a temporary folder and re-checked by `verify` in a fresh child
(the re-check alone: imports done, cold caches, python-flint not loaded). Then
heterogeneous trees of about T steps (goal: priced by their distinct kinds of step, not
by their steps or leaves): three kinds repeated T/3 times, one kind spread over 100
leaves of different counts, three kinds over 30 leaves; and a mixed tree. At T = 10^4
(the default) the rows include the event certificates of issue 24: the Poisson Gaussian,
one kind in 100 leaves, the mixture of Gaussians equal to the baseline (one positive
mu: accounted with the Poisson Gaussian's own pair, the same law) and a 3-component mixture (the
mixture's own route: a proved root per knot or per block). Times are CPU seconds (time.process_time: every
thread's, so a multithreaded reference is not flattered by a loaded machine); the load
average is printed at the start and the end.

No timing asserts anywhere: numbers are printed, not checked."""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time
import warnings
from fractions import Fraction as F
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bench import end, start, verify_cpu, warm_up  # noqa: E402
from dpverify.certificate import write  # noqa: E402
from dpverify.certificate.events_cert import answer_certificate  # noqa: E402
from dpverify.errors import DpverifyError  # noqa: E402
from dpverify.events import epsilon, model as E  # noqa: E402

DELTA = "1e-5"

EXAMPLES = """examples:
  PYTHONPATH=. python scripts/bench_events.py --quick      # T = 1000, five rows: about a minute
  PYTHONPATH=. python scripts/bench_events.py              # T = 10^4, every row (a few minutes)
  PYTHONPATH=. python scripts/bench_events.py --steps 100000 --rel-width 1e-3 --no-verify
  PYTHONPATH=. python scripts/bench_events.py --rows "MoG 3"   # the baseline and the 3-component mixture"""

#: prv_accountant's grid grows with the steps at a fixed eps_error (scripts/bench_dpsgd.py:
#: 386 s and 3.2 GB at T = 1e5): it is not run on trees of more steps than this
PRV_MAX_STEPS = 10**4


def dpa_event(ev):
    """The same event for dp_accounting, or None where it has no such event."""
    try:
        import dp_accounting as D
        from dp_accounting import dp_event as DE
    except ImportError:
        return None
    if isinstance(ev, E.Gaussian):
        return D.GaussianDpEvent(float(ev.noise_multiplier))
    if isinstance(ev, E.Laplace):
        return D.LaplaceDpEvent(float(ev.noise_multiplier))
    if isinstance(ev, E.MixtureOfGaussians):
        return DE.MixtureOfGaussiansDpEvent(float(ev.standard_deviation), [float(s) for s in ev.sensitivities],
                                            [float(p) for p in ev.sampling_probs])
    inner = dpa_event(ev.event) if hasattr(ev, "event") else None
    if isinstance(ev, E.PoissonSampled):
        return None if inner is None else D.PoissonSampledDpEvent(float(ev.sampling_probability), inner)
    if isinstance(ev, E.SampledWithoutReplacement):
        return None if inner is None else D.SampledWithoutReplacementDpEvent(ev.source_dataset_size,
                                                                              ev.sample_size, inner)
    if isinstance(ev, E.SelfComposed):
        return None if inner is None else D.SelfComposedDpEvent(inner, ev.count)
    if isinstance(ev, E.Composed):
        parts = [dpa_event(e) for e in ev.events]
        return None if any(p is None for p in parts) else D.ComposedDpEvent(parts)
    return None


def dpa(ev, relation: str):
    """dp_accounting PLD (eps, CPU seconds), or None (unsupported event or relation)."""
    dev = dpa_event(ev)
    if dev is None:
        return None
    import dp_accounting as D

    nb = {"add-remove": D.NeighboringRelation.ADD_OR_REMOVE_ONE,
          "replace-one": D.NeighboringRelation.REPLACE_ONE}[relation]
    t = time.process_time()
    try:
        acc = D.pld.PLDAccountant(nb, value_discretization_interval=1e-4)
        if not acc.supports(dev):
            return None
        acc.compose(dev)
        val = acc.get_epsilon(float(DELTA))
    except Exception:  # a reference that does not answer is a missing ratio, not a failed run
        return None
    return val, time.process_time() - t


def prv_leaves(ev, times: int = 1, out: "dict | None" = None):
    """{leaf key: total count} of a tree of Poisson Gaussian and Laplace leaves (a two-point
    mixture (0, s) / (1 - q, q) is the Poisson Gaussian at sigma / s, q), or None."""
    out = {} if out is None else out
    if isinstance(ev, E.SelfComposed):
        return prv_leaves(ev.event, times * ev.count, out)
    if isinstance(ev, E.Composed):
        for e in ev.events:
            if prv_leaves(e, times, out) is None:
                return None
        return out
    if isinstance(ev, E.PoissonSampled) and isinstance(ev.event, E.Gaussian):
        key = ("psg", float(ev.event.noise_multiplier), float(ev.sampling_probability))
    elif (isinstance(ev, E.MixtureOfGaussians) and len(ev.sensitivities) == 2 and ev.sensitivities[0] == 0
          and ev.sensitivities[1] > 0):
        key = ("psg", float(ev.standard_deviation / ev.sensitivities[1]), float(ev.sampling_probs[1]))
    elif isinstance(ev, E.Laplace):
        key = ("laplace", 1 / float(ev.noise_multiplier))
    else:
        return None
    out[key] = out.get(key, 0) + times
    return out


def prv(ev, relation: str):
    """prv_accountant's eps upper end at eps_error 1e-2 (CPU seconds), or None."""
    leaves = prv_leaves(ev) if relation == "add-remove" else None
    if not leaves or sum(leaves.values()) > PRV_MAX_STEPS:
        return None
    try:
        from prv_accountant import PRVAccountant
        from prv_accountant.privacy_random_variables import LaplaceMechanism, PoissonSubsampledGaussianMechanism
    except ImportError:
        return None
    prvs = [PoissonSubsampledGaussianMechanism(noise_multiplier=k[1], sampling_probability=k[2]) if k[0] == "psg"
            else LaplaceMechanism(mu=k[1]) for k in leaves]
    counts = list(leaves.values())
    t = time.process_time()
    try:
        acc = PRVAccountant(prvs=prvs, max_self_compositions=counts, eps_error=1e-2,
                            delta_error=float(DELTA) / 1000)
        _, _, upper = acc.compute_epsilon(delta=float(DELTA), num_self_compositions=counts)
    except Exception:  # PRV does not answer everywhere (large eps, tiny delta)
        return None
    return float(upper), time.process_time() - t


def _counts(total: int, k: int) -> list:
    """k different counts summing to about ``total`` (leaves of one kind, each its own count);
    fewer leaves (counts 1..k) where ``total`` is too small for k different counts around total / k."""
    if total // k - k // 2 < 1:
        return list(range(1, (math.isqrt(8 * total + 1) - 1) // 2 + 1))  # the largest k with 1 + ... + k <= total
    base = total // k - k // 2
    return [base + i for i in range(k)]


def _digits(rel_width: float) -> "int | None":
    """The --digits the CLI would be given for this width (None when it is not a power of ten)."""
    d = max(1, round(-math.log10(rel_width)))
    return d if math.isclose(10.0 ** -d, rel_width) else None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=EXAMPLES,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=10_000, help="T (default 10^4)")
    ap.add_argument("--rel-width", type=float, default=1e-4, help="relative width asked (default 1e-4)")
    ap.add_argument("--quick", action="store_true", help="T = 1000, five rows (about a minute at load 4 on 2 cores; smoke use)")
    ap.add_argument("--no-verify", action="store_true", help="do not write and re-check the certificates")
    ap.add_argument("--rows", nargs="+", metavar="PREFIX",
                    help="only the rows whose names start with one of these (the baseline row is always "
                         "run: the /base column reads it)")
    a = ap.parse_args()
    warnings.filterwarnings("ignore")
    T = 1000 if a.quick else a.steps
    digits = _digits(a.rel_width)
    q, n, m = F(1, 100), 60000, 600
    A = E.PoissonSampled(q, E.Gaussian(F(1)))
    rows = [
        ("poisson gaussian (baseline)", E.SelfComposed(A, T), "add-remove"),
        ("WOR gaussian, add-remove", E.SelfComposed(E.SampledWithoutReplacement(n, m, E.Gaussian(F(2))), T),
         "add-remove"),
        ("WOR gaussian, replace-one", E.SelfComposed(E.SampledWithoutReplacement(n, m, E.Gaussian(F(2))), T),
         "replace-one"),
        # the same mechanism as the baseline, written as a mixture: since it is, law for law, the Poisson
        # Gaussian, it takes the Poisson Gaussian's pair (events.dispatch._mixture_pair, as the re-check
        # does), so this row times the dispatch; the mixture's own route is the 3-component row's
        ("MoG = the baseline (0/1, .99/.01)",
         E.SelfComposed(E.MixtureOfGaussians(F(1), (F(0), F(1)), (F(99, 100), F(1, 100))), T), "add-remove"),
        ("MoG 3 components (BandMF-style)",
         E.SelfComposed(E.MixtureOfGaussians(F(1), (F(0), F(1), F(2)), (F(98, 100), F(1, 100), F(1, 100))), T),
         "add-remove"),
        ("poisson laplace", E.SelfComposed(E.PoissonSampled(q, E.Laplace(F(2))), T), "add-remove"),
        ("poisson (eps,delta)", E.SelfComposed(E.PoissonSampled(q, E.EpsilonDelta(F(1, 2), F(1, 10**9))), T),
         "add-remove"),
    ]
    B, C = E.PoissonSampled(F(1, 50), E.Gaussian(F(3, 2))), E.Laplace(F(50))
    k = T // 3
    leaves = _counts(T, 100)
    rows += [
        (f"3 kinds x {k} (A,B,C repeated)", E.SelfComposed(E.Composed((A, B, C)), k), "add-remove"),
        (f"1 kind in {len(leaves)} leaves", E.Composed(tuple(E.SelfComposed(A, c) for c in leaves)), "add-remove"),
        ("3 kinds in 30 leaves", E.Composed(tuple(E.SelfComposed(X, c) for X in (A, B, C)
                                                  for c in _counts(T // 3, 10))), "add-remove"),
        ("done-when mixed tree", E.Composed((
            E.SelfComposed(A, T // 2),
            E.SelfComposed(E.SampledWithoutReplacement(n, m, E.Gaussian(F(2))), T // 2),
            E.SelfComposed(E.Laplace(F(50)), 10),
            E.SelfComposed(E.MixtureOfGaussians(F(2), (F(0), F(1), F(2)), (F(98, 100), F(1, 100), F(1, 100))), 100),
        )), "add-remove"),
    ]
    if a.quick:  # one row of each sort whose references cost seconds, not tens of seconds
        keep = ("poisson gaussian (baseline)", "WOR gaussian, replace-one", "MoG = the baseline", "3 kinds x",
                "done-when mixed tree")
        rows = [r for r in rows if r[0].startswith(keep)]
    if a.rows:
        rows = [r for i, r in enumerate(rows) if i == 0 or r[0].startswith(tuple(a.rows))]
    start(f"bench_events: T = {T}, delta = {DELTA}, requested relative width {a.rel_width:g}"
          f"{'' if digits else ' (not a power of ten: certificates record no digits)'}")
    print("columns: dpverify CPU s (each side warmed up by one small untimed query) and its ratio to the "
          "baseline row; dp_accounting PLD 1e-4 CPU s and dpverify / it; prv_accountant (eps_error 1e-2) CPU s "
          "and dpverify / it; verify CPU s of the re-check alone in a fresh child (imports done, cold caches) "
          "and verify / compute; verify's exit code")
    warm_up()
    print(f"{'event':34s} {'certified eps':26s} {'width':>8s} {'cpu s':>7s} {'/base':>6s} {'dpa s':>7s} "
          f"{'ratio':>6s} {'prv s':>7s} {'ratio':>6s} {'verify':>7s} {'v/c':>6s}  exit", flush=True)
    base = None
    slower = []
    with tempfile.TemporaryDirectory(prefix="bench_events-") as tmp:
        for i, (name, ev, rel) in enumerate(rows):
            ref, pv = dpa(ev, rel), prv(ev, rel)
            t0 = time.process_time()
            try:
                ans = epsilon(ev, DELTA, neighboring=rel, rel_width=a.rel_width)
            except DpverifyError as exc:  # reported, not fatal: the table shows what failed
                print(f"{name:34s} {type(exc).__name__}: {str(exc)[:100]}", flush=True)
                continue
            dt = time.process_time() - t0
            base = base or dt
            cells = [f"{name:34s} {ans.enclosure.short(8):26s} {ans.rel_width:8.2e} {dt:7.2f} {dt / base:6.2f}"]
            for r in (ref, pv):
                cells.append(f"{r[1]:7.2f} {dt / r[1]:6.2f}" if r else f"{'n/a':>7s} {'':6s}")
            if a.no_verify:
                cells.append(f"{'-':>7s} {'-':>6s}  -")
            else:
                cert = Path(tmp) / f"row{i}.json"
                write(answer_certificate(ev, ans, delta=DELTA, digits=digits), cert)
                v, code, message = verify_cpu(cert)
                cells.append(f"{v:7.2f} {v / dt:6.2f}  {code}" + (f" ({message[-120:]})" if code != 0 else ""))
                if v > dt:
                    slower.append(f"{name} ({v / dt:.2f}x)")
            print(" ".join(cells), flush=True)
    if not a.no_verify:
        print(f"verify slower than compute (CPU) on {len(slower)} of {len(rows)} rows"
              + (": " + ", ".join(slower) if slower else ""))
    end()


if __name__ == "__main__":
    main()
