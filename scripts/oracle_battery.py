#!/usr/bin/env python3
"""Regenerate the committed oracle battery report (docs/oracle-battery.md) and its
certificate (docs/oracle-battery.json) by running every installed accountant
(pip install 'dpverify[oracle]'; Opacus needs torch) on the 'readme' battery.

    python scripts/oracle_battery.py [--battery readme] [--out docs]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dpverify.cli import main as dpverify_main  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--battery", default="readme")
    ap.add_argument("--out", default=str(ROOT / "docs"))
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    code = dpverify_main([
        "oracle", "--battery", args.battery,
        "--report", str(out / "oracle-battery.md"),
        "--certificate", str(out / "oracle-battery.json"),
    ])
    print(f"wrote {out / 'oracle-battery.md'} and {out / 'oracle-battery.json'} (oracle exit {code})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
