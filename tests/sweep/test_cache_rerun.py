"""The cache serves re-runs, end to end through the CLI: a second run of the
shipped example grid computes nothing (every row a cache hit), and the entries
this release writes are used by the next release once the independent verifier
has confirmed them; entries of a newer release, forged older ones, and entries
without a valid tag, are not.

Work is counted (computed configurations, cache hits in results.json), never timed.
"""

import json
import os
from pathlib import Path

import pytest

from dpverify import _version
from dpverify.certificate import compute_digest, dumps
from dpverify.cli import main
from dpverify.sweep import cache as cache_module

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "grid-mnist.toml"

# two fast configurations (a second each)
GRID = 'task = "audit"\n[fixed]\ndelta = "1e-5"\ndigits = 2\nsampling_rate = "0.01"\n' \
       '[product]\nnoise_multiplier = ["1", "2"]\nsteps = [30]\n'


def sweep(grid: Path, out: Path, cache: Path, *extra: str) -> dict:
    code = main(["sweep", str(grid), "--out", str(out), "--cache", str(cache), *extra])
    assert code == 0, code
    return json.loads((out / "results.json").read_text())["summary"]


def certs(out: Path) -> dict:
    return {f.name: f.read_bytes() for f in sorted((out / "certificates").iterdir())}


def test_grid_mnist_rerun_is_served_from_the_cache(tmp_path, capsys):
    first = sweep(EXAMPLE, tmp_path / "a", tmp_path / "cache", "--workers", "2")
    assert first["configurations"] == 27 and first["computed"] == 27 and first["cache_hits"] == 0
    again = sweep(EXAMPLE, tmp_path / "b", tmp_path / "cache", "--workers", "2")
    assert again["cache_refused"] == [] and again["cache_rechecked"] == []  # every entry's tag verified
    assert again["cache_hits"] == 27
    assert again["computed"] <= first["computed"] // 10  # under 10% of the first run's work (here: none)
    assert certs(tmp_path / "b") == certs(tmp_path / "a")


@pytest.fixture
def grid(tmp_path):
    p = tmp_path / "g.toml"
    p.write_text(GRID)
    return p


def _entries(cache: Path) -> list[Path]:
    return sorted(cache.glob("*/*.json"))


def _next_release(monkeypatch) -> str:
    """Run the cache as the next release would: this version's entries are then 'older'."""
    major, minor, patch = (int(x) for x in _version.__version__.split("."))
    nxt = f"{major}.{minor + 1}.0"
    monkeypatch.setattr(cache_module, "__version__", nxt)
    return nxt


def _first_run_then_forge(grid: Path, tmp_path: Path, hi: str, *, retag: bool = False) -> None:
    """Sweep into ``a``, then move the first entry's enclosure to [0.01, hi] and
    recompute its digest (what anyone with write access to the cache can do), and with
    ``retag`` its tag (what only a holder of the key can do)."""
    sweep(grid, tmp_path / "a", tmp_path / "cache", "--workers", "1")
    entry = _entries(tmp_path / "cache")[0]
    forged = json.loads(entry.read_text())
    forged["result"]["enclosure"] = {"lo": "0.01", "hi": hi}
    forged["digest"] = compute_digest(forged)
    entry.write_text(dumps(forged))
    if retag:
        cache = cache_module.Cache(str(tmp_path / "cache"))
        Path(str(entry) + ".tag").write_text(cache._tag(entry.stem, entry.read_bytes()))


def test_forged_entry_with_recomputed_digest_is_not_served(tmp_path, grid):
    """The forger rewrites the enclosure and recomputes the digest, but cannot
    compute the tag: the entry is refused and the row shows the
    enclosure computed afresh (the first run's, byte for byte)."""
    _first_run_then_forge(grid, tmp_path, "0.02")
    again = sweep(grid, tmp_path / "b", tmp_path / "cache", "--workers", "1")
    assert (again["cache_hits"], again["computed"]) == (1, 1)
    assert "no valid tag" in again["cache_refused"][0]
    assert _rows(tmp_path / "b") == _rows(tmp_path / "a")
    assert certs(tmp_path / "b") == certs(tmp_path / "a")
    assert b'"0.02"' not in b"".join(certs(tmp_path / "b").values())


def _rows(out: Path) -> list[tuple]:
    return [(r["lo"], r["hi"], r["verdict"]) for r in json.loads((out / "results.json").read_text())["rows"]]


def test_an_entry_confirmed_only_in_part_is_recomputed(tmp_path, grid, monkeypatch):
    """adv39 C2: an entry whose free text verify names as not confirmed (here a reason in no
    writer's form) was served once verify accepted its numbers, so the text passed into the
    sweep's own output certificate. An entry that goes through the verifier (an older
    release's, here tagged by this user's key as that release would have) is served only
    when verify confirms all of it (its structured answer, verify.confirm, names nothing);
    otherwise it is recomputed and the output is the first run's, byte for byte."""
    sweep(grid, tmp_path / "a", tmp_path / "cache", "--workers", "1")
    entry = _entries(tmp_path / "cache")[0]
    forged = json.loads(entry.read_text())
    forged["result"]["reason"] = "so this run is (0.01, 1e-9)-DP"
    forged["digest"] = compute_digest(forged)
    entry.write_text(dumps(forged))
    cache = cache_module.Cache(str(tmp_path / "cache"))
    Path(str(entry) + ".tag").write_text(cache._tag(entry.stem, entry.read_bytes()))
    _next_release(monkeypatch)
    again = sweep(grid, tmp_path / "b", tmp_path / "cache", "--workers", "1")
    assert (again["cache_hits"], again["computed"]) == (1, 1)
    assert "confirmed it only in part" in again["cache_refused"][0]
    assert certs(tmp_path / "b") == certs(tmp_path / "a")


@pytest.mark.parametrize("workers", ["1", "2"])
def test_an_untagged_genuine_entry_is_recomputed_and_tagged(tmp_path, grid, workers):
    """A genuine entry without its tag (as from another machine's cache) is not served: only
    the tag vouches for the fields no verifier re-proves (the method block). It is recomputed,
    byte for byte the same, and stored with its tag: the run after serves it directly."""
    first = sweep(grid, tmp_path / "a", tmp_path / "cache", "--workers", "1")
    assert first["computed"] == 2
    tag = Path(str(_entries(tmp_path / "cache")[0]) + ".tag")
    tag.unlink()
    again = sweep(grid, tmp_path / "b", tmp_path / "cache", "--workers", workers)
    assert (again["cache_hits"], again["computed"], again["cache_rechecked"]) == (1, 1, [])
    assert len(again["cache_refused"]) == 1 and "no valid tag" in again["cache_refused"][0]
    assert tag.is_file()
    third = sweep(grid, tmp_path / "c", tmp_path / "cache", "--workers", "1")
    assert (third["cache_hits"], third["computed"], third["cache_rechecked"]) == (2, 0, [])
    assert certs(tmp_path / "c") == certs(tmp_path / "b") == certs(tmp_path / "a")


def test_an_untagged_entry_with_a_forged_method_block_is_not_served(tmp_path, grid):
    """adv40 W1: an untagged entry whose method block was rewritten (backend, algorithm,
    precision_bits: fields verify neither re-proves nor names) was confirmed by the verifier,
    served into the sweep's output and tagged. Independent route: the first run's certificate,
    which this version writes for these inputs byte for byte (rule 3); the forged words appear
    nowhere in the output."""
    sweep(grid, tmp_path / "a", tmp_path / "cache", "--workers", "1")
    entry = _entries(tmp_path / "cache")[0]
    Path(str(entry) + ".tag").unlink()
    forged = json.loads(entry.read_text())
    forged["method"].update(backend="hand-checked by the authors", precision_bits=100000,
                            algorithm="exact closed form of the mechanism; no discretisation, no grid")
    forged["digest"] = compute_digest(forged)
    entry.write_text(dumps(forged))
    again = sweep(grid, tmp_path / "b", tmp_path / "cache", "--workers", "1")
    assert (again["cache_hits"], again["computed"]) == (1, 1)
    assert certs(tmp_path / "b") == certs(tmp_path / "a")
    assert b"hand-checked" not in b"".join(certs(tmp_path / "b").values())
    assert b"hand-checked" not in entry.read_bytes()  # the entry recomputed and overwritten


def test_entries_tagged_under_another_key_are_recomputed(tmp_path, grid, monkeypatch):
    """Another user's (or machine's) secret key: its tags do not verify here."""
    sweep(grid, tmp_path / "a", tmp_path / "cache", "--workers", "1")
    monkeypatch.setenv(cache_module.KEY_ENV, str(tmp_path / "other-key"))
    again = sweep(grid, tmp_path / "b", tmp_path / "cache", "--workers", "1")
    assert (again["cache_hits"], again["computed"], len(again["cache_refused"])) == (0, 2, 2)
    assert (tmp_path / "other-key").stat().st_mode & 0o777 == 0o600
    assert certs(tmp_path / "b") == certs(tmp_path / "a")


def test_a_tag_copied_from_another_entry_does_not_authenticate(tmp_path, grid):
    """The tag binds the key and the bytes: entry and tag copied together under
    another key are refused (foreign key), a tag copied alone does not verify."""
    sweep(grid, tmp_path / "a", tmp_path / "cache", "--workers", "1")
    e0, e1 = _entries(tmp_path / "cache")
    Path(str(e0) + ".tag").write_bytes(Path(str(e1) + ".tag").read_bytes())
    again = sweep(grid, tmp_path / "b", tmp_path / "cache", "--workers", "1")
    assert (again["cache_hits"], again["computed"], len(again["cache_refused"])) == (1, 1, 1)


@pytest.mark.parametrize("content, mode, why", [
    ("ab" * 32 + "\n", 0o644, "others can read"),
    ("not hex\n", 0o600, "unreadable"),
    ("ab" * 16 + "\n", 0o600, "64 hex digits"),
])
def test_a_bad_key_file_is_exit_2_naming_it(tmp_path, grid, monkeypatch, capsys, content, mode, why):
    key = tmp_path / "key"
    key.write_text(content)
    key.chmod(mode)
    monkeypatch.setenv(cache_module.KEY_ENV, str(key))
    code = main(["sweep", str(grid), "--out", str(tmp_path / "o"), "--workers", "1"])
    err = capsys.readouterr().err
    assert code == 2 and str(key) in err and why in err
    assert key.read_text() == content  # never replaced
    # refused before any work (adv40 W2: the first configuration was computed and cached first)
    assert not list((tmp_path / "o").rglob("*.json"))


def test_a_key_path_that_is_no_small_regular_file_is_refused_unread(tmp_path, grid, monkeypatch, capsys):
    """adv34 S1: a FIFO hung the read, /dev/zero grew it without end, a huge file was read whole.
    Each is refused at once, exit 2, before a byte is read (the FIFO has no writer: a read
    would block forever, so an answer at all shows it was not read)."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo, 0o600)
    big = tmp_path / "big"
    big.write_text("ab" * 32 + "\n" + " " * 10_000)
    big.chmod(0o600)
    for key, why in ((fifo, "not a regular file"), (Path("/dev/zero"), "not a regular file"), (big, "bytes")):
        monkeypatch.setenv(cache_module.KEY_ENV, str(key))
        code = main(["sweep", str(grid), "--out", str(tmp_path / "o"), "--workers", "1"])
        err = capsys.readouterr().err
        assert code == 2 and str(key) in err and why in err


def test_an_entry_path_the_cache_cannot_write_costs_a_recomputation_not_the_results(tmp_path, grid):
    """adv34 M2: a directory where an entry goes stopped the whole sweep with exit 2, after the
    work, naming a temporary file. Now the sweep writes every result, and says which entries
    it could not store; the next run recomputes that one and serves the other."""
    first = sweep(grid, tmp_path / "a", tmp_path / "cache", "--workers", "1")
    e0, _ = _entries(tmp_path / "cache")
    e0.unlink()
    Path(str(e0) + ".tag").unlink()
    e0.mkdir()  # the entry's path is now a directory
    again = sweep(grid, tmp_path / "b", tmp_path / "cache", "--workers", "1")
    assert (again["cache_hits"], again["computed"]) == (1, 1)
    assert len(again["cache_unstored"]) == 1 and again["cache_unstored"][0].startswith(e0.stem[:12])
    assert certs(tmp_path / "b") == certs(tmp_path / "a") and first["computed"] == 2


def test_no_cache_creates_no_key(tmp_path, grid, monkeypatch):
    monkeypatch.setenv(cache_module.KEY_ENV, str(tmp_path / "key"))
    assert main(["sweep", str(grid), "--out", str(tmp_path / "o"), "--workers", "1", "--no-cache"]) == 0
    assert not (tmp_path / "key").exists()


def test_next_release_uses_this_release_entries_after_the_recheck(tmp_path, grid, monkeypatch):
    first = sweep(grid, tmp_path / "a", tmp_path / "cache", "--workers", "1")
    assert first["computed"] == 2
    _next_release(monkeypatch)
    again = sweep(grid, tmp_path / "b", tmp_path / "cache", "--workers", "1")
    assert (again["cache_hits"], again["computed"], again["cache_refused"]) == (2, 0, [])
    assert certs(tmp_path / "b") == certs(tmp_path / "a")


def test_next_release_refuses_a_forged_older_entry(tmp_path, grid, monkeypatch):
    """Without --recheck-cache, an older entry still goes through the independent
    verifier, even with a valid tag: a forgery with a recomputed digest and tag (a leaked
    key) is recomputed, not served."""
    _first_run_then_forge(grid, tmp_path, "0.011", retag=True)
    _next_release(monkeypatch)
    again = sweep(grid, tmp_path / "b", tmp_path / "cache", "--workers", "1")
    assert (again["cache_hits"], again["computed"]) == (1, 1)
    assert "independent verifier refused" in again["cache_refused"][0]
    assert certs(tmp_path / "b") == certs(tmp_path / "a")


@pytest.mark.parametrize("version", ["9.0.0", "0.1.0.dev1", "", None, "0.0.9"])
def test_entry_of_a_newer_or_unreadable_version_is_not_used(tmp_path, grid, version):
    """Newer, unreadable, or never released: "0.0.9" (adv37 L2) was confirmed by the verifier and
    then served, so the sweep's output certificate named a release that never existed."""
    sweep(grid, tmp_path / "a", tmp_path / "cache", "--workers", "1")
    entry = _entries(tmp_path / "cache")[0]
    cert = json.loads(entry.read_text())
    cert["dpverify"] = version
    cert["digest"] = compute_digest(cert)
    entry.write_text(dumps(cert))
    again = sweep(grid, tmp_path / "b", tmp_path / "cache", "--workers", "1")
    assert (again["cache_hits"], again["computed"]) == (1, 1)
    assert len(again["cache_refused"]) == 1


def test_a_cache_url_reads_entries_under_the_folder_cache_rules(tmp_path, grid):
    """adv37 C1: through an fsspec URL the entries were read by cat_file with no check: a FIFO
    where an entry goes hung the sweep, /dev/zero was read until memory ran out, a 60 MB file
    was read whole. The rule is the folder cache's (files.read_regular): such an entry is no
    entry, the configuration is computed again and the results are the first run's."""
    url = f"file://{tmp_path / 'cache'}"
    first = sweep(grid, tmp_path / "a", url, "--workers", "1")
    entries = _entries(tmp_path / "cache")
    assert first["computed"] == 2 and len(entries) == 2
    entries[0].unlink()
    os.mkfifo(entries[0], 0o600)  # an open() of it would block until a writer came
    entries[1].unlink()
    with open(entries[1], "wb") as f:  # sparse: 60 MB by its size, no disk used
        f.truncate(60_000_000)
    again = sweep(grid, tmp_path / "b", url, "--workers", "1")
    assert (again["cache_hits"], again["computed"]) == (0, 2)
    assert len(again["cache_refused"]) == 1 and "larger than" in again["cache_refused"][0]
    assert certs(tmp_path / "b") == certs(tmp_path / "a")


def test_a_remote_cache_entry_above_the_cap_is_not_read(tmp_path, grid):
    # the same cap (cache._MAX_ENTRY) for a filesystem that is not this machine's (memory://)
    fsspec = pytest.importorskip("fsspec")
    url = f"memory://dpverify-test-{os.getpid()}-{tmp_path.name}"
    sweep(grid, tmp_path / "a", url, "--workers", "1")
    fs, root = fsspec.core.url_to_fs(url)
    entries = sorted(p for p in fs.find(root) if p.endswith(".json"))
    assert len(entries) == 2
    fs.pipe_file(entries[0], b" " * (cache_module._MAX_ENTRY + 1))  # whitespace: valid JSON padding
    fs.rm(entries[1])
    fs.mkdir(entries[1])  # a folder where the entry goes
    again = sweep(grid, tmp_path / "b", url, "--workers", "1")
    assert len(again["cache_refused"]) == 1 and "larger than" in again["cache_refused"][0]
    assert (again["cache_hits"], again["computed"]) == (0, 2)
    assert certs(tmp_path / "b") == certs(tmp_path / "a")
    fs.rm(root, recursive=True)


def test_a_rerun_keeps_its_heatmap_and_redraws_a_changed_one(tmp_path, capsys):
    """The heatmap records a digest of what it is drawn from in a PNG text chunk (read back here by
    Pillow, matplotlib's own PNG writer, not by dpverify's reader). A re-run served from the cache
    leaves the file as it is, without importing matplotlib (a second process, so that this one's
    imports do not count); a new title, or a file that records another digest, is drawn again."""
    from PIL import Image

    grid, out, cache = tmp_path / "g.toml", tmp_path / "o", tmp_path / "cache"
    grid.write_text(GRID + '[heatmap]\nx = "noise_multiplier"\ny = "steps"\ntitle = "one"\n')
    sweep(grid, out, cache, "--workers", "1")
    png = out / "heatmap.png"
    first = png.read_bytes()
    key = Image.open(png).text["dpverify-heatmap"]
    assert len(key) == 64
    code = ("import sys; from dpverify.cli import main; "
            f"rc = main(['sweep', {str(grid)!r}, '--workers', '1', '--out', {str(out)!r}, '--cache', {str(cache)!r}]); "
            "print(rc, 'matplotlib' in sys.modules)")
    import subprocess
    import sys

    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert run.stdout.split()[-2:] == ["0", "False"], run.stdout + run.stderr
    assert png.read_bytes() == first
    grid.write_text(GRID + '[heatmap]\nx = "noise_multiplier"\ny = "steps"\ntitle = "two"\n')
    assert sweep(grid, out, cache, "--workers", "1")["cache_hits"] == 2
    assert png.read_bytes() != first and Image.open(png).text["dpverify-heatmap"] != key
    other = png.read_bytes()
    grid.write_text(GRID + '[heatmap]\nx = "noise_multiplier"\ny = "steps"\ntitle = "one"\n')
    sweep(grid, out, cache, "--workers", "1")  # the file there records "two": drawn again, as the first
    assert png.read_bytes() == first != other
