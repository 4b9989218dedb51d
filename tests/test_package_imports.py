"""No cycle between the packages of ext/atlas: each feature may use project, code, git,
settings and the like, and those use no feature (sphinx-design's one unit per feature;
jupyter-cache's core that knows no client). The imports are read with ``ast``, those inside
functions included (a cycle deferred to call time is still a cycle); only ``if TYPE_CHECKING:``
blocks are left out, since they never run."""

from __future__ import annotations

import ast
from pathlib import Path

ATLAS = Path(__file__).resolve().parents[1] / "ext" / "atlas"


def unit(module: str) -> str:
    """The package (or top-level module) of ``atlas.X.Y``: ``X``; ``atlas`` itself for the root."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "atlas"


def runtime_nodes(tree: ast.AST) -> list[ast.AST]:
    """Every node, except what sits under ``if TYPE_CHECKING:``."""
    found, todo = [], [tree]
    while todo:
        node = todo.pop()
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            todo.extend(node.orelse)
            continue
        found.append(node)
        todo.extend(ast.iter_child_nodes(node))
    return found


def imported(path: Path) -> list[tuple[str, int]]:
    """The atlas modules ``path`` imports, with the line of each import."""
    parts = list(path.relative_to(ATLAS.parent).with_suffix("").parts)
    package = parts[:-1] if parts[-1] != "__init__" else parts[:-1]
    if parts[-1] == "__init__":
        parts = parts[:-1]
    found = []
    for node in runtime_nodes(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            if module == "atlas":  # from atlas import labkit: the names are modules
                found += [(f"atlas.{alias.name}", node.lineno) for alias in node.names]
            else:
                found.append((module, node.lineno))
    return [(name, line) for name, line in found if name.startswith("atlas.")]


def package_graph() -> dict[str, dict[str, list[str]]]:
    """unit -> unit -> where (``path:line``) the first imports the second."""
    graph: dict[str, dict[str, list[str]]] = {}
    for path in sorted(ATLAS.rglob("*.py")):
        rel = path.relative_to(ATLAS)
        source = (
            rel.parts[0].removesuffix(".py")
            if len(rel.parts) > 1 or rel.stem != "__init__"
            else "atlas"
        )
        for module, line in imported(path):
            target = unit(module)
            if target != source:
                graph.setdefault(source, {}).setdefault(target, []).append(f"{rel}:{line}")
    return graph


def tangles(graph: dict[str, dict[str, list[str]]]) -> list[list[str]]:
    """The sets of packages that import one another, around some cycle: the strongly connected
    components of more than one package (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in graph.get(node, {}):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while (top := stack.pop()) != node:
                component.append(top)
            if component:
                found.append(sorted([node, *component]))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_graph_sees_the_imports_that_exist() -> None:
    graph = package_graph()
    assert "project" in graph["upstream"]  # upstream keeps its page state through project
    assert "code" in graph["teach"] and "code" in graph["upstream"]


def test_no_cycle_between_the_packages_of_atlas() -> None:
    graph = package_graph()
    described = []
    for tangle in tangles(graph):
        edges = [
            f"{a} -> {b} ({graph[a][b][0]})"
            for a in tangle
            for b in tangle
            if b in graph.get(a, {})
        ]
        described.append(", ".join(edges))
    assert described == []
