"""What the bench scripts (scripts/bench_dpsgd.py, bench_events.py, bench_verify.py) share:
the load line, the statement that times are CPU seconds, and the re-check time of one
certificate (``verify_file`` alone, in a fresh child with the re-check modules imported,
so that neither interpreter start, imports nor the compute side's caches are counted,
and python-flint is not loaded, as in ``dpverify verify``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: printed at the start of every run
CPU_NOTE = ("times are CPU seconds (time.process_time: user + system of every thread of the process; "
            "wall time is not used: the machine is shared)")

#: seconds a re-check may take before it stops with exit 3 (generous: a loaded machine
#: should report CPU seconds, not the budget)
VERIFY_BUDGET = 3000.0


def load() -> str:
    """The machine's load average now, for the run's first and last line."""
    return "load average %.2f %.2f %.2f" % os.getloadavg()


def start(title: str, note: str = CPU_NOTE) -> None:
    """The run's first lines: what it measures, how it counts time, the load at the start."""
    print(f"{title}\n{note}\n[start: {load()}; python {sys.executable}; "
          f"PYTHONPATH={os.environ.get('PYTHONPATH', '')}]", flush=True)


def end() -> None:
    print(f"[end: {load()}]", flush=True)


_CHILD = r"""
import json, sys, time
from dpverify.recheck.verify import _load_recheckers, verify_file
_load_recheckers()  # the imports are not the re-check's time: nor jsonschema's (the schema check)
from dpverify.certificate.format import _validator_class
_validator_class()
import dpverify.recheck.fourier  # nor numpy's (the PLD powers' Fourier kernel imports it on first use)
t = time.process_time()
code, message = verify_file(sys.argv[1], budget_seconds=float(sys.argv[2]))
cpu = time.process_time() - t
print(json.dumps({"cpu": cpu, "code": code, "message": message[-300:], "flint": "flint" in sys.modules}))
"""


def verify_cpu(cert: Path, budget: float = VERIFY_BUDGET) -> tuple[float, "int | str", str]:
    """(CPU seconds, exit code, message) of one ``verify_file`` of ``cert`` in a fresh child
    (cold caches: a second call in the same child answers from verify's own memo in ~0 s, so
    only the first is a measurement)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run([sys.executable, "-c", _CHILD, str(cert), str(budget)], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=4 * budget)
    try:
        r = json.loads(out.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        return float("nan"), "child failed", out.stderr.strip()[-200:]
    if r["flint"]:  # verify must not load the arb side; say so if it ever does
        r["message"] += " [python-flint was loaded by verify]"
    return r["cpu"], r["code"], r["message"]


def warm_up() -> None:
    """One small query of each side, untimed, so that the first row does not pay for lazy
    imports (dp_accounting's PLD module, prv_accountant, python-flint's first calls)."""
    import warnings

    warnings.filterwarnings("ignore")
    from fractions import Fraction

    from dpverify.events import epsilon, model as E
    from dpverify.pld import dpsgd

    dpsgd.dpsgd_epsilon("1", "1/10", 10, "1e-5", rel_width=1e-2)
    epsilon(E.SelfComposed(E.PoissonSampled(Fraction(1, 10), E.Gaussian(Fraction(1))), 10), "1e-5", rel_width=1e-2)
    try:
        import dp_accounting as D

        acc = D.pld.PLDAccountant(value_discretization_interval=1e-2)
        acc.compose(D.SelfComposedDpEvent(D.PoissonSampledDpEvent(0.1, D.GaussianDpEvent(1.0)), 10))
        acc.get_epsilon(1e-5)
    except ImportError:
        pass
    try:
        from prv_accountant import PRVAccountant
        from prv_accountant.privacy_random_variables import PoissonSubsampledGaussianMechanism

        PRVAccountant(prvs=[PoissonSubsampledGaussianMechanism(noise_multiplier=1.0, sampling_probability=0.1)],
                      max_self_compositions=[10], eps_error=1e-1, delta_error=1e-8).compute_epsilon(
            delta=1e-5, num_self_compositions=[10])
    except ImportError:
        pass
