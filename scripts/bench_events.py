"""Time of the certified event accountant on the events at T steps, as ratios
in one run, in-process: to the Poisson-subsampled Gaussian at the same T and
accuracy (goal: a mixture of Gaussians within 2x), to dp_accounting's PLD
accountant (value_discretization_interval 1e-4, pessimistic) on the same
event where it supports it, and to prv_accountant (eps_error 1e-2) where it
answers; then heterogeneous trees of about T steps (goal: priced by their
distinct kinds of step, not by their steps or leaves): three kinds repeated
T/3 times, one kind spread over 100 leaves of different counts, three kinds
over 30 leaves; plus a mixed tree (rel. width 1e-4) and the load average.
Times are CPU seconds of this process (time.process_time: every thread's,
so a multithreaded reference is not flattered by a loaded machine).

    PYTHONPATH=. python scripts/bench_events.py [--steps 10000] [--rel-width 1e-4] [--quick]

No timing asserts anywhere: numbers are printed, not checked."""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from fractions import Fraction as F
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dpverify.errors import InvalidParameter  # noqa: E402
from dpverify.events import epsilon, model as E  # noqa: E402

DELTA = 1e-5


def _load() -> str:
    return "load %.2f %.2f %.2f" % os.getloadavg()


def _dpa_event(kind: str, T: int, q: float, n: int, m: int):
    """The same event for dp_accounting, or None where it has no such event."""
    try:
        import dp_accounting as D
    except ImportError:
        return None
    base = {
        "poisson gaussian": lambda: D.PoissonSampledDpEvent(q, D.GaussianDpEvent(1.0)),
        "wor gaussian": lambda: D.SampledWithoutReplacementDpEvent(n, m, D.GaussianDpEvent(2.0)),
        "poisson laplace": lambda: D.PoissonSampledDpEvent(q, D.LaplaceDpEvent(2.0)),
    }.get(kind)
    return None if base is None else D.SelfComposedDpEvent(base(), T)


def dpa(ev, relation: str):
    """dp_accounting PLD eps and seconds, or None (unsupported event/relation)."""
    if ev is None:
        return None
    import dp_accounting as D

    nb = {"add-remove": D.NeighboringRelation.ADD_OR_REMOVE_ONE,
          "replace-one": D.NeighboringRelation.REPLACE_ONE}[relation]
    t = time.process_time()
    try:
        acc = D.pld.PLDAccountant(nb, value_discretization_interval=1e-4)
        if not acc.supports(ev):
            return None
        acc.compose(ev)
        val = acc.get_epsilon(DELTA)
    except Exception:
        return None
    return val, time.process_time() - t


def prv_gauss(T: int, q: float):
    try:
        from prv_accountant import PRVAccountant
        from prv_accountant.privacy_random_variables import PoissonSubsampledGaussianMechanism
    except ImportError:
        return None
    t = time.process_time()
    try:
        acc = PRVAccountant(prvs=[PoissonSubsampledGaussianMechanism(noise_multiplier=1.0, sampling_probability=q)],
                            max_self_compositions=[T], eps_error=1e-2, delta_error=DELTA / 1000)
        _, _, upper = acc.compute_epsilon(delta=DELTA, num_self_compositions=[T])
    except Exception:
        return None
    return float(upper), time.process_time() - t


def _counts(total: int, k: int) -> list:
    """k different counts summing to about ``total`` (leaves of one kind, each its own count)."""
    base = total // k - k // 2
    return [base + i for i in range(k)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=10_000)
    ap.add_argument("--rel-width", type=float, default=1e-4)
    ap.add_argument("--quick", action="store_true", help="T = 1000, fewer rows")
    a = ap.parse_args()
    warnings.filterwarnings("ignore")
    T = 1000 if a.quick else a.steps
    q, n, m = F(1, 100), 60000, 600
    rows = [
        ("poisson gaussian (baseline)", E.PoissonSampled(q, E.Gaussian(F(1))), "add-remove", "poisson gaussian"),
        ("WOR gaussian, add-remove", E.SampledWithoutReplacement(n, m, E.Gaussian(F(2))), "add-remove",
         "wor gaussian"),
        ("WOR gaussian, replace-one", E.SampledWithoutReplacement(n, m, E.Gaussian(F(2))), "replace-one",
         "wor gaussian"),
        # the same mechanism as the baseline, written as a mixture: the like-for-like MoG ratio
        ("MoG = the baseline (0/1, 0.99/0.01)", E.MixtureOfGaussians(F(1), (F(0), F(1)), (F(99, 100), F(1, 100))),
         "add-remove", "poisson gaussian"),
        ("MoG 3 components (BandMF-style)", E.MixtureOfGaussians(F(1), (F(0), F(1), F(2)),
                                                                 (F(98, 100), F(1, 100), F(1, 100))), "add-remove",
         None),
        ("poisson laplace", E.PoissonSampled(q, E.Laplace(F(2))), "add-remove", "poisson laplace"),
        ("poisson (eps,delta)", E.PoissonSampled(q, E.EpsilonDelta(F(1, 2), F(1, 10**9))), "add-remove", None),
    ]
    if a.quick:
        rows = rows[:5]
    base = None
    print(f"T = {T}, delta = {DELTA:g}, requested relative width {a.rel_width:g}   [{_load()}]")
    pv = prv_gauss(T, float(q))
    if pv is not None:
        print(f"{'prv_accountant, poisson gaussian':34s} eps <= {pv[0]:.6f} (eps_error 1e-2) {pv[1]:7.2f} s")
    print(f"{'event':34s} {'certified eps':28s} {'width':>8s}  {'dpverify':>9s}  {'/base':>6s}  "
          f"{'dp_accounting':>14s}  {'ratio':>6s}")
    for name, ev, rel, dkind in rows:
        ref = dpa(_dpa_event(dkind, T, float(q), n, m) if dkind else None, rel)
        t0 = time.process_time()
        ans = epsilon(E.SelfComposed(ev, T), str(DELTA), neighboring=rel, rel_width=a.rel_width)
        dt = time.process_time() - t0
        base = base or dt
        r = f"{ref[1]:12.2f} s  {dt / ref[1]:6.2f}" if ref else f"{'n/a':>14s}  {'':6s}"
        extra = ""
        if name.startswith("poisson gaussian") and pv is not None:
            extra = f"  (prv ratio {dt / pv[1]:.2f})"
        print(f"{name:34s} {ans.enclosure.short(8):28s} {ans.rel_width:8.2e}  {dt:7.2f} s  {dt / base:6.2f}  "
              f"{r}{extra}", flush=True)
    A, B, C = rows[0][1], E.PoissonSampled(F(1, 50), E.Gaussian(F(3, 2))), E.Laplace(F(50))
    k = T // 3
    trees = [
        (f"3 kinds x {k} (A,B,C repeated)", E.SelfComposed(E.Composed((A, B, C)), k)),
        ("1 kind in 100 leaves", E.Composed(tuple(E.SelfComposed(A, c) for c in _counts(T, 100)))),
        ("3 kinds in 30 leaves", E.Composed(tuple(E.SelfComposed(X, c) for X in (A, B, C)
                                                  for c in _counts(T // 3, 10)))),
    ]
    for name, ev in trees:
        t0 = time.process_time()
        try:
            ans = epsilon(ev, str(DELTA), rel_width=a.rel_width)
        except InvalidParameter as exc:  # a cap on leaves (before kinds were grouped) refuses it
            print(f"{name:34s} refused: {exc.message[:90]}")
            continue
        dt = time.process_time() - t0
        print(f"{name:34s} {ans.enclosure.short(8):28s} {ans.rel_width:8.2e}  {dt:7.2f} s  {dt / base:6.2f}",
              flush=True)
    tree = E.Composed((
        E.SelfComposed(E.PoissonSampled(q, E.Gaussian(F(1))), T // 2),
        E.SelfComposed(E.SampledWithoutReplacement(n, m, E.Gaussian(F(2))), T // 2),
        E.SelfComposed(E.Laplace(F(50)), 10),
        E.SelfComposed(E.MixtureOfGaussians(F(2), (F(0), F(1), F(2)), (F(98, 100), F(1, 100), F(1, 100))), 100),
    ))
    t0 = time.process_time()
    ans = epsilon(tree, str(DELTA), rel_width=1e-4)
    print(f"{'done-when mixed tree':34s} {ans.enclosure.short(8):28s} {ans.rel_width:8.2e}  "
          f"{time.process_time() - t0:7.2f} s")
    print(f"[{_load()}]")


if __name__ == "__main__":
    main()
