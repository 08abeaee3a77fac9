"""Certificates are a pure function of (claim, inputs, version): the same
MNIST-sized configurations give byte-identical certificates sequentially, on a
process pool, on a Dask LocalCluster, through ``--scheduler``, and with the CPU
saturated by busy child processes (started and stopped by PID here). Configurations
of examples/grid-mnist.toml at 3 digits: large enough that the PLD accountant's
algorithm choices (grid, Fourier or direct products) are made, so a choice that
depended on a timing would show as different bytes."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from dpverify.cli import main

from .test_dask_scheduler import cluster  # noqa: F401  (the fixture: a real scheduler and 2 workers)

# three rows of examples/grid-mnist.toml (the corners and the middle of the grid)
GRID = """
task = "audit"
[fixed]
dataset_size = 60000
delta = "1e-5"
digits = 3
neighboring = "add-remove"
[[zip]]
noise_multiplier = ["0.8", "1.0", "1.2"]
batch_size = [128, 256, 512]
epochs = [20, 10, 5]
"""


def _differences(a: dict, b: dict) -> list[str]:
    """The JSON paths where two sets of certificates differ (for the failure message)."""
    def walk(x, y, path, out):
        if isinstance(x, dict) and isinstance(y, dict):
            for k in sorted(set(x) | set(y)):
                walk(x.get(k), y.get(k), f"{path}.{k}", out)
        elif isinstance(x, list) and isinstance(y, list) and len(x) == len(y):
            for i, (u, v) in enumerate(zip(x, y)):
                walk(u, v, f"{path}[{i}]", out)
        elif x != y:
            out.append(f"{path}: {str(x)[:60]} != {str(y)[:60]}")
        return out

    out: list[str] = []
    for name in sorted(set(a) | set(b)):
        if a.get(name) != b.get(name):
            walk(json.loads(a.get(name) or b"null"), json.loads(b.get(name) or b"null"), name[:12], out)
    return out


def same(a: dict, b: dict) -> bool:
    assert a == b, _differences(a, b)[:12]
    return True


def _sweep(tmp_path: Path, name: str, *options: str) -> dict:
    grid = tmp_path / "g.toml"
    grid.write_text(GRID)
    out = tmp_path / name
    assert main(["sweep", str(grid), "--out", str(out), "--no-cache", *options]) == 0
    return {f.name: f.read_bytes() for f in sorted((out / "certificates").iterdir())}


@pytest.fixture(scope="module")
def sequential(tmp_path_factory):
    certs = _sweep(tmp_path_factory.mktemp("seq"), "out", "--workers", "1")
    assert len(certs) == 3
    return certs


# Worker processes once gave other digits than the sequential run: the Fourier
# route cut its twiddle table from the largest one the process had built, so a
# certificate depended on what ran before it (fixed in pld/fourier.py, _twiddles).
def test_process_pool_gives_the_same_bytes(tmp_path, sequential):
    assert same(_sweep(tmp_path, "pool", "--workers", "2"), sequential)


def test_dask_localcluster_gives_the_same_bytes(tmp_path, sequential):
    pytest.importorskip("distributed")
    assert same(_sweep(tmp_path, "dask", "--dask", "--workers", "2"), sequential)


def test_scheduler_gives_the_same_bytes(tmp_path, sequential, cluster):  # noqa: F811
    assert same(_sweep(tmp_path, "sched", "--scheduler", cluster), sequential)


def test_a_saturated_cpu_gives_the_same_bytes(tmp_path, sequential, capsys):
    """The same command with every core busy (two spinning child processes more than
    this machine's two cores can serve at once): a wall-clock-dependent choice would
    change here."""
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(3)]
    printed = []
    try:
        for sigma, b, e in (("0.8", "128", "20"), ("1.0", "256", "10"), ("1.2", "512", "5")):
            code = main(["audit", "dpsgd", "--noise-multiplier", sigma, "--dataset-size", "60000",
                         "--batch-size", b, "--epochs", e, "--delta", "1e-5", "--digits", "3",
                         "--neighboring", "add-remove", "--json"])
            printed.append((code, capsys.readouterr().out.encode()))
    finally:
        for h in hogs:
            h.kill()
            h.wait()
    assert [code for code, _ in printed] == [0, 0, 0]
    # `audit dpsgd --json` prints the bytes the sweep stores for the same configuration
    by_key = {json.loads(text)["inputs"]["noise_multiplier"]: text for _, text in printed}
    stored = {json.loads(text)["inputs"]["noise_multiplier"]: text for text in sequential.values()}
    assert same(by_key, stored)
