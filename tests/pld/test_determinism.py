"""A certificate is a pure function of its inputs and the version: the PLD
accountant's choices (grid, unit, kernel) come from static operation counts
and the width model, never from a clock, the load or the core count.

Independent route: the same command in fresh processes, once on an idle
machine and once with the CPU saturated by busy child processes this test
starts and stops itself; the certificate bytes must be identical (a timed
cost model - a probed product rate, a deadline-shortened refinement step -
changes grids and therefore enclosures, which this comparison catches)."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PLD = ROOT / "dpverify" / "pld"

# one Fourier-route eps query (T >= 64), one delta query, one exact-route query
QUERIES = [
    ["audit", "dpsgd", "--noise-multiplier", "1", "--sampling-rate", "0.01", "--steps", "1000",
     "--delta", "1e-5", "--digits", "4", "--json"],
    ["audit", "dpsgd", "--noise-multiplier", "1.1", "--sampling-rate", "0.02", "--steps", "300",
     "--eps", "1.5", "--digits", "3", "--json"],
    ["audit", "dpsgd", "--noise-multiplier", "2", "--sampling-rate", "0.1", "--steps", "20",
     "--delta", "1e-6", "--digits", "4", "--json"],
]


def _run_all() -> list[bytes]:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    outs = []
    for argv in QUERIES:
        r = subprocess.run([sys.executable, "-m", "dpverify", *argv], capture_output=True, env=env,
                           timeout=600)
        assert r.returncode == 0, r.stderr.decode()
        outs.append(r.stdout)
    return outs


@pytest.mark.slow
def test_same_certificate_bytes_idle_and_under_a_cpu_hog():
    idle = _run_all()
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
            for _ in range(max(2, os.cpu_count() or 2))]
    try:
        loaded = _run_all()
    finally:
        for p in hogs:  # only the processes started above, by their own handle
            p.kill()
            p.wait()
    for a, b, argv in zip(idle, loaded, QUERIES):
        assert a == b, f"different certificates for {' '.join(argv)}"


def test_no_clock_in_the_accountants_choices():
    """Only the refinement loop (its deadline: a stop, never a choice) may
    read a clock; the kernels, queries, plan and composition may not import
    ``time`` at all (an AST scan, so a timed cost model cannot come back)."""
    offenders = []
    for path in sorted(PLD.glob("*.py")):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            if any(n.split(".")[0] in ("time", "timeit", "resource") for n in names) \
                    or any(n == "os" for n in names):
                if path.name != "refine.py" or names != ["time"]:
                    offenders.append(f"{path.name}: {names}")
    assert not offenders, offenders


def test_kernel_modules_are_leaves():
    """convolve.py and fourier.py do not import each other (compose.py
    chooses between them), and the planning module imports no kernel at
    module level."""
    def imports(name: str) -> set[str]:
        tree = ast.parse((PLD / name).read_text())
        out = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
                out.add(node.module)
        return out

    assert "fourier" not in imports("convolve.py")
    assert "convolve" not in imports("fourier.py")
    assert {"convolve", "fourier"} <= imports("compose.py")


def test_an_answer_does_not_depend_on_what_the_process_computed_before():
    """The Fourier route caches twiddle tables; once it cut a table for N from the
    largest one built so far, so the same query gave other digits after a bigger one
    (a worker process, or the corpus report late in a pytest run: the 10th digit of
    TF's 60-epoch MNIST eps moved). Route: the same query before and after building
    a 2^21-point table, compared as exact decimals."""
    from fractions import Fraction

    from dpverify.pld import dpsgd, fourier

    def query() -> tuple:
        a = dpsgd.dpsgd_epsilon(Fraction(1), Fraction(1, 100), 1000, Fraction(1, 10**5),
                                neighboring="add-remove", digits=4)
        return a.enclosure.lo.str(30, radius=False), a.enclosure.hi.str(30, radius=False)

    fourier._TW.clear()
    first = query()
    fourier._twiddles(1 << 21)
    assert query() == first
