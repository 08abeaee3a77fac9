"""The re-check is a second implementation: a static scan (AST) of every module
of ``dpverify/recheck/`` fails on any import outside the allowed set, so that
independence is a checked property of the code, not a naming convention or a
run-time sample.

Allowed: the standard library, mpmath, gmpy2, jsonschema, numpy (the float butterflies of
recheck/fourier.py, whose error the module proves), ``dpverify.errors``,
``dpverify._version``, ``dpverify.files``, ``dpverify.certificate.format``,
``dpverify.certificate.prose`` (the statement templates, stdlib only), ``dpverify.certificate.comments``
(the writers' reason forms, stdlib only), ``dpverify.certificate.ranges`` (the producer's input ranges,
stdlib only), ``dpverify.numtext`` (the producer's one number grammar, stdlib only: an input read any
other way escaped the range table, adv44 H1) and the package itself.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import dpverify.recheck

RECHECK = Path(dpverify.recheck.__file__).parent
THIRD_PARTY = {"mpmath", "gmpy2", "jsonschema", "numpy"}
DPVERIFY_ALLOWED = {"dpverify.errors", "dpverify._version", "dpverify.files", "dpverify.certificate.format",
                    "dpverify.certificate.prose", "dpverify.certificate.comments", "dpverify.certificate.ranges",
                    "dpverify.numtext", "dpverify.recheck"}
MODULES = sorted(RECHECK.glob("*.py"))


def _absolute(node: ast.ImportFrom, module: str) -> str:
    """The absolute module an ``from X import`` names (relative levels resolved)."""
    if node.level == 0:
        return node.module or ""
    base = module.split(".")[: -node.level]
    return ".".join(base + ([node.module] if node.module else []))


def imports_of(path: Path) -> list[tuple[int, str]]:
    module = f"dpverify.recheck.{path.stem}" if path.stem != "__init__" else "dpverify.recheck.__init__"
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            target = _absolute(node, module)
            # "from . import pld": the names are modules of the package
            out += [(node.lineno, target)] if node.module else [(node.lineno, f"{target}.{a.name}") for a in node.names]
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) in (
            "import_module", "__import__"
        ):
            arg = node.args[0] if node.args else None
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                out.append((node.lineno, arg.value))
    return out


def allowed(name: str) -> bool:
    top = name.split(".")[0]
    if top == "dpverify":
        return any(name == a or name.startswith(a + ".") for a in DPVERIFY_ALLOWED)
    return top in THIRD_PARTY or top in sys.stdlib_module_names


def test_every_module_is_scanned():
    assert len(MODULES) >= 10, MODULES  # the scan sees the package, not an empty glob


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_recheck_module_imports_only_the_allowed_set(path):
    bad = [(line, name) for line, name in imports_of(path) if not allowed(name)]
    assert not bad, f"{path.name} imports outside the re-check's allowed set: {bad}"


def test_the_scan_catches_a_forbidden_import(tmp_path):
    # the scanner itself can fail: a module importing flint or the arb side is caught
    bad = tmp_path / "bad.py"
    bad.write_text("import flint\nfrom ..ball import arb\nfrom ..pld import accountant\nimport importlib\n"
                   "importlib.import_module('dpverify.gdp')\n")
    names = [n for _, n in imports_of(bad)]
    assert [n for n in names if not allowed(n)] == ["flint", "dpverify.ball", "dpverify.pld", "dpverify.gdp"]


def test_verify_does_not_load_flint(tmp_path):
    # the dynamic twin of the scan: loading every re-checker leaves python-flint unloaded
    code = ("import sys\nfrom dpverify.recheck.verify import _load_recheckers\n_load_recheckers()\n"
            "print('flint' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_a_small_pld_recheck_does_not_load_numpy():
    # the Fourier kernel (and numpy, 0.1 CPU s to import) is loaded at its first try, not when the
    # kernel is made: format-2 events-epsilon-wor composes enough steps to make the kernel, and no base
    # long enough to try it (it loaded numpy before)
    code = ("import sys\nfrom dpverify.recheck.verify import verify_file\n"
            "print(verify_file('tests/certificate/format2/events-epsilon-wor.json')[0], 'numpy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parents[2])
    assert out.stdout.split() == ["0", "False"]
