"""Pictures: inputs refused before work, files written, and the trade-off band
checked against the closed form of the Gaussian mechanism."""

import sys

import mpmath
import pytest

from dpverify.cli import main
from dpverify.pld import dpsgd as S

pytest.importorskip("matplotlib")

AUDIT = ["audit", "dpsgd", "--noise-multiplier", "2", "--sampling-rate", "0.1", "--steps", "10", "--delta", "1e-5"]


@pytest.mark.parametrize("opt", ["--plot-eps", "--plot-profile", "--plot-tradeoff"])
def test_bad_file_names_are_refused_before_work(opt, capsys, tmp_path):
    assert main(AUDIT + [opt, str(tmp_path / "x.jpg")]) == 2
    assert main(AUDIT + [opt, str(tmp_path / "missing" / "x.png")]) == 2
    err = capsys.readouterr().err
    assert ".png or .svg" in err and "does not exist" in err


def test_missing_matplotlib_gives_the_install_hint(monkeypatch, capsys, tmp_path):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib now fails
    assert main(AUDIT + ["--plot-profile", str(tmp_path / "p.png")]) == 2
    assert "pip install 'dpverify[plot]'" in capsys.readouterr().err


@pytest.mark.slow
def test_profile_png_and_tradeoff_svg_are_written(tmp_path):
    png, svg = tmp_path / "p.png", tmp_path / "t.svg"
    assert main(AUDIT + ["--plot-profile", str(png), "--plot-tradeoff", str(svg)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert b"<svg" in svg.read_bytes()[:2000]


def test_tradeoff_band_contains_the_gaussian_curve():
    # one Gaussian step, sigma = 1, q = 1: f(a) = Phi(Phi^-1(1 - a) - 1) (1-GDP, Dong-Roth-Su)
    from dpverify.plots.figures import tradeoff_bounds

    alphas, lower, upper = tradeoff_bounds([S.GaussianSteps.of(1, 1, 1)], "add-remove", step=0.25)
    for a, lo, hi in list(zip(alphas, lower, upper))[5:-5:20]:
        exact = float(mpmath.ncdf(-mpmath.sqrt(2) * mpmath.erfinv(2 * a - 1) - 1))
        assert lo - 1e-9 <= exact <= hi + 1e-9, (a, lo, exact, hi)
    assert max(h - l for l, h in zip(lower, upper)) < 0.1
