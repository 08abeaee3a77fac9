"""Every reader of a named file refuses what is not a small regular file, before reading
(adv34 S2: a FIFO hung verify, --events, --input, the sweep grid; /dev/zero was read until
memory ran out). A FIFO with no writer blocks any read for ever, so an answer at all shows
it was never read."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dpverify.cli import main
from dpverify.files import NotARegularFile, TooLarge, read_regular

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")


@pytest.fixture
def fifo(tmp_path) -> Path:
    p = tmp_path / "in.json"
    os.mkfifo(p, 0o600)
    return p


def test_read_regular_reads_a_file_and_refuses_the_rest(tmp_path, fifo):
    f = tmp_path / "a.txt"
    f.write_bytes(b"x" * 100)
    assert read_regular(f, 100) == b"x" * 100
    with pytest.raises(TooLarge):
        read_regular(f, 99)
    with pytest.raises(NotARegularFile):
        read_regular(fifo, 100)
    with pytest.raises(NotARegularFile):
        read_regular(tmp_path, 100)
    if Path("/dev/zero").exists():
        with pytest.raises(NotARegularFile):
            read_regular("/dev/zero", 100)
    with pytest.raises(FileNotFoundError):
        read_regular(tmp_path / "missing", 100)


@pytest.mark.parametrize("argv, option", [
    (["verify", "{F}"], "not a regular file"),
    (["audit", "dpsgd", "--events", "{F}", "--delta", "1e-5"], "--events"),
    (["oracle", "--input", "{F}"], "--input"),
    (["compose", "--mechs-file", "{F}", "--eps", "1"], "--mechs-file"),
    (["sweep", "{F}", "--out", "{OUT}", "--no-cache"], "not a regular file"),
    (["audit", "corpus", "{F}"], "not a regular file"),
])
def test_a_fifo_given_as_a_file_is_refused_at_once(argv, option, fifo, tmp_path, capsys):
    args = [a.replace("{F}", str(fifo)).replace("{OUT}", str(tmp_path / "out")) for a in argv]
    try:
        code = main(args)
    except SystemExit as exc:
        code = int(exc.code)
    err = capsys.readouterr()
    assert code == 2, err
    assert option in err.err + err.out


# --------------------------------------------------------------------------- writers
# adv: an output path that is a FIFO with no reader blocked ``open`` until one appeared (the
# certificate, a report, a picture: after all the work). Each call that could block runs in a
# daemon thread or a subprocess with a timeout, so a regression fails instead of hanging.


def _in_thread(fn, timeout: float = 20.0):
    """fn()'s result or exception; AssertionError when it does not return within ``timeout``."""
    import threading

    box: dict = {}

    def run():
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            box["error"] = exc

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(timeout)
    assert not t.is_alive(), f"{fn} blocked for {timeout} s"
    if "error" in box:
        raise box["error"]
    return box.get("value")


def test_check_writable_refuses_a_fifo_without_reader_a_folder_and_a_socket(tmp_path, fifo):
    import socket

    from dpverify.files import check_writable

    with pytest.raises(NotARegularFile, match="FIFO with no reader"):
        _in_thread(lambda: check_writable(fifo))
    with pytest.raises(NotARegularFile, match="folder"):
        check_writable(tmp_path)
    sock_path = tmp_path / "s"
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(sock_path))
        with pytest.raises(NotARegularFile, match="socket"):
            check_writable(sock_path)
    check_writable(tmp_path / "new.json")  # missing: created by the writer
    (tmp_path / "old.json").write_text("x")
    check_writable(tmp_path / "old.json")
    assert (tmp_path / "old.json").read_text() == "x"  # the check truncates nothing
    if Path("/dev/null").exists():
        check_writable("/dev/null")


def test_open_output_refuses_a_fifo_without_reader_at_once_and_truncates_a_file(tmp_path, fifo):
    from dpverify.files import open_output

    with pytest.raises(NotARegularFile, match="FIFO with no reader") as err:
        _in_thread(lambda: open_output(fifo))
    assert err.value.filename == str(fifo)
    f = tmp_path / "a.txt"
    f.write_text("a much longer old content")
    with open_output(f, encoding="utf-8") as fh:
        fh.write("new")
    assert f.read_text() == "new"


def test_a_fifo_with_a_reader_receives_the_bytes(fifo):
    """The descriptor the check opened is the one written (closing it would end the reader's input)."""
    from dpverify.files import check_writable, open_output

    got: dict = {}

    def reader():
        with open(fifo, "rb") as fh:  # blocks until the check opens the write end
            got["bytes"] = fh.read()

    import threading

    t = threading.Thread(target=reader, daemon=True)
    t.start()
    payload = b"x" * 200_000  # more than a pipe buffer: the writes block until read, not fail

    def write():
        import time

        for _ in range(200):  # the reader's open must come first; retry until it has
            try:
                check_writable(fifo)
                break
            except NotARegularFile:
                time.sleep(0.05)
        with open_output(fifo, binary=True) as fh:
            fh.write(payload)

    _in_thread(write)
    t.join(20)
    assert got.get("bytes") == payload


def _have_matplotlib() -> bool:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


SWEEP_GRID = ('task = "audit"\n[fixed]\ndelta = "1e-5"\ndigits = 2\nsampling_rate = "0.01"\n'
              '[product]\nnoise_multiplier = ["1"]\nsteps = [30]\n')


@pytest.mark.parametrize("argv, option, picture", [
    (["gdp", "delta", "--mu", "1", "--eps", "1", "--certificate", "{F}"], "--certificate", False),
    (["audit", "dpsgd", "--noise-multiplier", "1", "--sampling-rate", "0.01", "--steps", "10", "--delta", "1e-5",
      "--certificate", "{F}"], "--certificate", False),
    (["oracle", "--battery", "readme", "--report", "{F}.md"], "--report", False),
    (["audit", "corpus", "{CORPUS}", "--report", "{F}.md"], "--report", False),
    (["audit", "corpus", "{CORPUS}", "--plot", "{F}.png"], "--plot", True),
    (["gdp", "plot", "--mechanism", "gaussian", "--mu", "1", "--eps-h", "2", "--out", "{F}.png"], "--out", True),
    (["audit", "dpsgd", "--noise-multiplier", "1", "--sampling-rate", "0.01", "--steps", "10", "--delta", "1e-5",
      "--plot-eps", "{F}.png"], "--plot-eps", True),
    (["calibrate", "dpsgd", "--target-eps", "2", "--delta", "1e-5", "--sampling-rate", "1", "--steps", "10",
      "--plot", "{F}.png"], "--plot", True),
    (["sweep", "{GRID}", "--out", "{OUT}", "--no-cache", "--workers", "1"], "results.csv", False),
])
def test_an_output_fifo_without_reader_is_refused_before_the_work(argv, option, picture, tmp_path):
    import subprocess
    import sys

    if picture and not _have_matplotlib():
        pytest.skip("needs matplotlib")
    root = Path(__file__).resolve().parents[1]
    f = tmp_path / "out"
    grid = tmp_path / "g.toml"
    grid.write_text(SWEEP_GRID)
    sweep_out = tmp_path / "sweep"
    sweep_out.mkdir()
    args = [a.replace("{F}", str(f)).replace("{CORPUS}", str(root / "corpus" / "dpsgd.jsonl"))
            .replace("{GRID}", str(grid)).replace("{OUT}", str(sweep_out)) for a in argv]
    target = sweep_out / "results.csv" if option == "results.csv" else Path(next(a for a in args if a.startswith(str(f))))
    os.mkfifo(target, 0o600)
    env = dict(os.environ, PYTHONPATH=str(root))
    # a blocking open would wait for a reader for ever: the timeout turns that into a failure
    r = subprocess.run([sys.executable, "-m", "dpverify", *args], capture_output=True, text=True, timeout=120,
                       env=env, cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    assert option in r.stderr and str(target) in r.stderr and "FIFO with no reader" in r.stderr


@pytest.mark.parametrize("text,needle", [('{"a": 1, "a": 2}', "appears twice"), ('{"a": NaN}', "NaN is not a number"),
                                         ('[Infinity]', "Infinity is not a number"), ('{"a": [1, {"b": 1, "b": 1}]}',
                                                                                      "appears twice")])
def test_json_loads_refuses_what_parsers_read_differently(text, needle):
    """json.loads keeps the last of a repeated key and reads NaN and Infinity as floats; the one parse of
    a text somebody else wrote refuses both, nested or not (ValueError, as a decode error is)."""
    from dpverify.files import json_loads

    with pytest.raises(ValueError, match=needle):
        json_loads(text, parse_int=int, parse_float=str)
    assert json_loads('{"a": 0.1, "b": [2]}', parse_int=int, parse_float=str) == {"a": "0.1", "b": [2]}
