"""The sweep's progress display: dpverify.progress.Progress (tqdm) counting
finished configurations; silent when stderr is not a terminal."""

import io

from dpverify.cli import main
from dpverify.progress import Progress
from dpverify.sweep import SequentialExecutor, load_grid, run_sweep
from dpverify.sweep.engine import row_progress

GRID = """
task = "audit"
[fixed]
delta = "1e-5"
digits = 2
steps = 20
sampling_rate = "0.01"
[product]
noise_multiplier = ["1", "2"]
"""


class _Tty(io.StringIO):
    def isatty(self):
        return True


def test_sweep_prints_nothing_on_stderr_off_a_terminal(tmp_path, capsys):
    (tmp_path / "g.toml").write_text(GRID)
    code = main(["sweep", str(tmp_path / "g.toml"), "--workers", "1", "--no-cache", "--out", str(tmp_path / "o")])
    assert code == 0
    assert capsys.readouterr().err == ""  # pytest's stderr is not a terminal


def test_sweep_progress_counts_every_row_once_and_only_grows(tmp_path):
    (tmp_path / "g.toml").write_text(GRID)
    stream = _Tty()
    seen = []
    with Progress("sweep", total=2, unit="cfg", stream=stream) as bar:
        cb = row_progress(bar)

        def on_row(row, done, total):
            cb(row, done, total)
            seen.append(bar._bar.n)

        run_sweep(load_grid(tmp_path / "g.toml"), SequentialExecutor(), tmp_path / "o", cache=None, on_row=on_row)
        # tqdm draws at most every 0.1 s, so the last count may not be on screen yet: draw it
        bar._bar.refresh()
    assert seen == [1, 2]
    text = stream.getvalue()
    assert "2/2" in text and "0 cached, 0 not certified" in text
