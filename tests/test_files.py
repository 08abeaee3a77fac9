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
