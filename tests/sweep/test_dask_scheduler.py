"""`--scheduler` against a real `dask scheduler` and `dask worker` (separate
processes on 127.0.0.1, random free ports, bounded time, always torn down)."""

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dpverify.cli import main

GRID = 'task = "audit"\n[fixed]\ndelta = "1e-5"\ndigits = 2\nsampling_rate = "0.02"\n' \
       '[product]\nnoise_multiplier = ["1", "1.5"]\nsteps = [20, 40]\n'


def _dask_cli():
    exe = Path(sys.executable).parent / "dask"
    return str(exe) if exe.exists() else shutil.which("dask")


@pytest.fixture
def cluster(tmp_path):
    dask = _dask_cli()
    if dask is None:
        pytest.skip("the dask command is not installed")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).parents[2]), os.environ.get("PYTHONPATH", "")])}
    sfile = tmp_path / "scheduler.json"
    procs = [subprocess.Popen([dask, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                               "--scheduler-file", str(sfile)], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    try:
        deadline = time.monotonic() + 60
        while not sfile.exists() or not sfile.read_text().strip():
            assert time.monotonic() < deadline, "the dask scheduler did not start within 60 s"
            time.sleep(0.2)
        address = json.loads(sfile.read_text())["address"]
        assert address.startswith("tcp://127.0.0.1:")
        procs.append(subprocess.Popen([dask, "worker", address, "--nthreads", "1", "--nworkers", "2",
                                       "--host", "127.0.0.1", "--no-dashboard", "--death-timeout", "60"],
                                      env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        from distributed import Client

        with Client(address, timeout=30) as c:
            c.wait_for_workers(2, timeout=60)
        yield address
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in reversed(procs):
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def test_scheduler_results_match_the_pool(tmp_path, cluster, capsys):
    g = tmp_path / "g.toml"
    g.write_text(GRID)
    assert main(["sweep", str(g), "--scheduler", cluster, "--out", str(tmp_path / "d"), "--no-cache"]) == 0
    assert "Dask scheduler tcp://127.0.0.1:" in capsys.readouterr().out
    assert main(["sweep", str(g), "--workers", "2", "--out", str(tmp_path / "p"), "--no-cache"]) == 0
    d, p = (sorted((tmp_path / x / "certificates").iterdir()) for x in ("d", "p"))
    assert [f.name for f in d] == [f.name for f in p] and len(d) == 4
    assert all(a.read_bytes() == b.read_bytes() for a, b in zip(d, p))


def test_unreachable_scheduler_exits_2(tmp_path, capsys):
    import socket

    with socket.socket() as s:  # a free port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    g = tmp_path / "g.toml"
    g.write_text(GRID)
    code = main(["sweep", str(g), "--scheduler", f"tcp://127.0.0.1:{port}", "--out", str(tmp_path / "o")])
    assert code == 2 and "cannot connect" in capsys.readouterr().err  # the connect timeout ended it
