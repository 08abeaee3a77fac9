"""Grid files: strict validation (exit 2 naming file, path, allowed values) and exact axes."""

from fractions import Fraction

import pytest

from dpverify.cli import main
from dpverify.errors import InvalidParameter
from dpverify.sweep import load_grid, plan_grid


def _grid(tmp_path, text, name="g.toml"):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_product_zip_and_exact_ranges(tmp_path):
    g = load_grid(_grid(tmp_path, """
task = "audit"
[fixed]
delta = 1e-5
digits = 2
[product]
noise_multiplier = {start = 0.1, stop = 0.3, step = 0.1}
[[zip]]
sampling_rate = ["0.01", "1/3"]
steps = {start = 10, stop = 20, num = 2}
"""))
    cfgs = g.configurations()
    assert g.size == len(cfgs) == 6
    # 0.1 + 0.1 + 0.1 is exactly 0.3 in exact arithmetic (3 values, stop included)
    assert [c["noise_multiplier"] for c in cfgs[::2]] == ["0.1", "0.2", "0.3"]
    assert [(c["sampling_rate"], c["steps"]) for c in cfgs[:2]] == [("0.01", 10), ("1/3", 20)]
    assert cfgs[0]["delta"] == "1e-5"  # a TOML float is read as the decimal text written


def test_geometric_range(tmp_path):
    g = load_grid(_grid(tmp_path, 'task = "audit"\n[product]\ndelta = {start = "1e-8", stop = "1e-5", factor = 10}\n'))
    assert [Fraction(c["delta"]) for c in g.configurations()] == [Fraction(1, 10**k) for k in (8, 7, 6, 5)]


@pytest.mark.parametrize("text, needles", [
    ('task = "audit"\n[fixd]\ndelta = 1\n', ["g.toml", "fixd: unknown key", "did you mean fixed?", "allowed: "]),
    ('task = "audti"\n', ["task: unknown task", "did you mean audit?"]),
    ('task = "audit"\n[product]\nnoise_multipler = [1]\n', ["product.noise_multipler", "did you mean noise_multiplier?"]),
    ('task = "audit"\n[fixed]\nsteps = 1\n[product]\nsteps = [1, 2]\n', ["product.steps", "given twice"]),
    ('task = "audit"\n[[zip]]\nsteps = [1, 2]\nsampling_rate = ["0.1"]\n', ["zip[0]", "equal lengths"]),
    ('task = "audit"\n[product]\nsteps = {start = 1, stop = 5}\n', ["product.steps", "exactly one of step, num, factor"]),
    ('task = "audit"\n[product]\nsteps = {start = 1, stop = 5, stepp = 1}\n', ["product.steps.stepp: unknown key", "did you mean step?"]),
    ('task = "audit"\n[product]\nsteps = {start = 1, stop = 1e9, step = 1}\n', ["at most"]),
    ('task = "audit"\n[product]\nsteps = [1, 2]\n[heatmap]\nx = "steps"\ny = "sigma"\n', ["heatmap.y", "not an axis"]),
    ('task = "audit"\n[product]\nsteps = []\n', ["product.steps"]),
    ('task = [\n', ["not TOML"]),
    # a TOML date, as the file writes it (was "datetime.date(1979, 5, 27) has the wrong type; expected
    # ['string', 'integer', 'boolean']", adv51 L5)
    ('task = "audit"\n[fixed]\ndelta = 1979-05-27\n', ["fixed.delta: the date 1979-05-27 is not a string"]),
])
def test_bad_grids_are_refused_with_file_and_path(tmp_path, text, needles):
    with pytest.raises(InvalidParameter) as info:
        load_grid(_grid(tmp_path, text))
    for n in needles:
        assert n in info.value.message


def test_bad_configuration_value_names_the_configuration(tmp_path, capsys):
    p = _grid(tmp_path, """
task = "audit"
[fixed]
delta = "1e-5"
digits = 2
steps = 10
[product]
sampling_rate = ["0.5", "1.5"]
noise_multiplier = ["1"]
""")
    with pytest.raises(InvalidParameter) as info:
        plan_grid(load_grid(p))
    assert "configuration 1 (sampling_rate=1.5, noise_multiplier=1)" in info.value.message
    assert main(["sweep", str(p), "--workers", "1", "--out", str(tmp_path / "o")]) == 2
    assert "must be in (0, 1]" in capsys.readouterr().err


@pytest.mark.parametrize("argv, needle", [
    (["--dask", "--scheduler", "tcp://127.0.0.1:1"], "--scheduler"),
    (["--scheduler", "localhost"], "tcp://HOST:PORT"),
    (["--scheduler", "tcp://127.0.0.1:1", "--workers", "2"], "--workers"),
    (["--no-cache", "--recheck-cache"], "--no-cache"),
    (["--workers", "0"], "--workers"),
    (["--time-budget", "-1"], "--time-budget"),
    (["--retries", "abc"], "--retries"),
    # adv37 L1: an empty cache path had silently meant the default (--cache "") or the working
    # directory (file://); an unparsable scheduler address was exit 4
    (["--cache", ""], "--cache"),
    (["--cache", "file://"], "--cache"),
    (["--scheduler", "tcp://[::1"], "is not an address"),
])
def test_cli_option_conflicts_exit_2(tmp_path, capsys, argv, needle):
    p = _grid(tmp_path, 'task = "audit"\n[fixed]\nnoise_multiplier = 1\nsampling_rate = 1\nsteps = 1\ndelta = "0.5"\ndigits = 1\n')
    assert main(["sweep", str(p), "--out", str(tmp_path / "o"), *argv]) == 2
    assert needle in capsys.readouterr().err


def test_missing_grid_file_and_wrong_suffix(tmp_path, capsys):
    assert main(["sweep", str(tmp_path / "nope" / "g.toml")]) == 2
    (tmp_path / "g.yaml").write_text("task: audit")
    assert main(["sweep", str(tmp_path / "g.yaml")]) == 2
    assert ".toml or .json" in capsys.readouterr().err


@pytest.mark.parametrize("rng, needle", [
    # (stop - start) / step + 1 = 10^6000 + 1 values: refused before any is built (the message
    # had formatted that count, a ValueError: exit 4)
    ('{start = "0", stop = "1e3000", step = "1e-3000"}', "more than 100000 values"),
    # value k = 1.001^j, j = k - 1, has 3j decimal places; beyond 400 of them exact_str writes
    # the integer mantissa (3j + 1 digits) and "e-3j": 3j + 6 characters, more than 1000 from
    # j = 332, value #333 on (the old loop built all 694 values up to 2, the last of 2,000
    # digits; with factor 1.0000001 it grew to 11 GB)
    ('{start = "1", stop = "2", factor = "1.001"}', "value #333 needs more than 1000 characters"),
    # 1 + 10^-991: value 2 is 992 digits + "e-991" (997 characters), value 3
    # (1 + 2e-991 + 1e-1982) a mantissa of 1983 digits
    ('{start = "1", stop = "2", factor = "1.' + "0" * 990 + '1"}', "value #3 needs more than 1000"),
    # arithmetic: 1/3 + k e-999 is a fraction of about 2,000 characters from k = 1 on
    ('{start = "1/3", stop = "1", step = "1e-999"}', "more than 100000 values"),
    ('{start = "1/3", stop = "1/2", step = "1e-999"}', "more than 100000 values"),
    ('{start = "1/3", stop = "1/3", step = "1e-999", }'.replace(", }", "}"), None),
])
def test_a_range_is_bounded_before_it_is_built(tmp_path, rng, needle):
    text = f'task = "audit"\n[fixed]\nsteps = 10\n[product]\nnoise_multiplier = {rng}\n'
    if needle is None:  # a single value: start itself
        assert [c["noise_multiplier"] for c in load_grid(_grid(tmp_path, text)).configurations()] == ["1/3"]
        return
    with pytest.raises(InvalidParameter) as info:
        load_grid(_grid(tmp_path, text))
    assert "product.noise_multiplier" in info.value.message and needle in info.value.message


def test_a_range_value_longer_than_an_input_is_refused(tmp_path):
    # both ends are inputs (at most 1000 characters) but the middle of 1/p and 1/3, p = 10^600 + 1,
    # is (p + 3) / (6 p) in lowest terms (p is odd and not a multiple of 3): 601 + 1 + 602 characters
    p = 10**600 + 1
    text = 'task = "audit"\n[fixed]\nsteps = 10\n[product]\nnoise_multiplier = ' \
           f'{{start = "1/{p}", stop = "1/3", num = 3}}\n'
    with pytest.raises(InvalidParameter) as info:
        load_grid(_grid(tmp_path, text))
    assert "value #2 needs more than 1000 characters" in info.value.message
    text = text.replace("num = 3", "num = 2")  # the ends alone are fine
    assert len(load_grid(_grid(tmp_path, text)).configurations()) == 2


def test_a_json_grid_with_a_key_given_twice_is_refused(tmp_path):
    """adv37 D1: {"task": "audit", "task": "oracle"} ran the oracle (the last one won)."""
    p = tmp_path / "g.json"
    p.write_text('{"task": "audit", "task": "oracle", "fixed": {"delta": "1e-5", "digits": 2, "steps": 10, '
                 '"sampling_rate": "0.01"}, "product": {"noise_multiplier": ["1"]}}')
    with pytest.raises(InvalidParameter, match="appears twice"):
        load_grid(p)
