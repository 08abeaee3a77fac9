"""``dpverify verify`` re-derives certificates on mpmath alone: python-flint (the
arb side being checked) must not even be loaded (issue 11: the second route is
independent of the product numerics)."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

_RUN = """
import sys
from dpverify.cli import main
rc = main(["verify", *sys.argv[1:]])
loaded = sorted(m for m in sys.modules if m == "flint" or m.startswith("flint."))
print("FLINT", loaded)
sys.exit(rc)
"""


def test_verify_does_not_load_flint():
    # one certificate of each route family: gdp, rdp, (eps, delta) composition, pld, transforms
    names = sorted(p.name for p in (ROOT / "certificates").glob("*.json"))
    picks = [n for n in names if n.startswith(("gdpt-sec3", "abc-eq23", "lt-thm3.2-eq22", "afa-"))][:8]
    picks += [n for n in names if n.startswith("prv-")][:1]  # a PLD certificate
    assert picks, names[:5]
    out = subprocess.run([sys.executable, "-c", _RUN, *[str(ROOT / "certificates" / n) for n in picks]],
                         capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "FLINT []" in out.stdout, out.stdout


def test_public_api_resolves_lazily():
    out = subprocess.run([sys.executable, "-c",
                          "import sys, dpverify; assert 'flint' not in sys.modules; "
                          "import dpverify.calibration.solve; "
                          "assert callable(dpverify.calibrate) and callable(dpverify.delta_mu); "
                          "assert set(dpverify.__all__) <= set(dir(dpverify)); "
                          "[getattr(dpverify, n) for n in dpverify.__all__]; print('ok')"],
                         capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert out.returncode == 0 and "ok" in out.stdout, out.stderr
