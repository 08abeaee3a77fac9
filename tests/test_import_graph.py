"""The package's import graph has no cycle: dependencies point down toward the numeric
core, so a module can be read (and changed) knowing only what it imports.

A static scan (AST) of every module of ``dpverify/``: an edge A -> B for every
``import`` of B in A, at module level or inside a function. ``from pkg import name``
is an edge to ``pkg.name`` when that is a module and to ``pkg`` otherwise. The
independent reference is the scan itself (no import is executed); Tarjan's algorithm
then finds the strongly connected components, and any with more than one module is a
cycle.

Lazy (function-level) imports count like any other: none closes a cycle, and a new
cycle fails.
"""

from __future__ import annotations

import ast
from pathlib import Path

import dpverify

ROOT = Path(dpverify.__file__).parent

def _modules() -> dict[str, Path]:
    out = {}
    for p in ROOT.rglob("*.py"):
        parts = ("dpverify",) + p.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = p
    return out


def _edges(mods: dict[str, Path]) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for m, p in mods.items():
        package = m if p.name == "__init__.py" else m.rpartition(".")[0]
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    src = ".".join(base + ([node.module] if node.module else []))
                else:
                    src = node.module or ""
                subs = [f"{src}.{a.name}" for a in node.names if f"{src}.{a.name}" in mods]
                targets = subs + ([src] if len(subs) < len(node.names) else [])
            graph[m] |= {t for t in targets if t in mods and t != m}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_import_graph_has_no_cycle():
    assert _cycles(_edges(_modules())) == []


def test_the_scan_finds_a_cycle_when_there_is_one():
    graph = _edges(_modules())
    graph["dpverify.ball"].add("dpverify.api")  # the numeric core importing the public API
    assert any("dpverify.ball" in c and "dpverify.api" in c for c in _cycles(graph))
    graph = _edges(_modules())
    graph["dpverify.recheck.decimals"].add("dpverify.recheck.verify")  # the lazy edge it replaced
    assert any({"dpverify.recheck.decimals", "dpverify.recheck.verify"} <= set(c) for c in _cycles(graph))
