"""The labkit by role: every module declares one, taught code never imports checks, modules stay
small.

The teaching check (atlas.teach.taught) lets checks and support code stay hidden because they
do not carry what a page teaches. That holds only if taught code never runs checking code: a
taught module that imports a checker makes the lab run hidden code through shown code.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from atlas.teach.taught import ROLES, role_of

LABKIT = Path(__file__).resolve().parents[2] / "ext" / "atlas" / "labkit"
MAX_LINES = 400


def module_name(path: Path) -> str:
    parts = path.relative_to(LABKIT.parent.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = sorted(LABKIT.rglob("*.py"))


def labkit_imports(path: Path, module: str | None = None) -> list[tuple[int, str]]:
    """``(line, module)`` of every import of an ``atlas.labkit`` module, at any depth (an import
    inside a function runs as surely as one at the top)."""
    package = (module or module_name(path)).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                here = package[: len(package) - (node.level - 1)]
                base = ".".join([*here, *([base] if base else [])])
            found.append((node.lineno, base))
            # ``from atlas.labkit.checks import common``: the names may be modules too
            found += [(node.lineno, f"{base}.{a.name}") for a in node.names]
    return [(line, m) for line, m in found if m.startswith("atlas.labkit")]


def resolve(module: str) -> str | None:
    """The labkit module a dotted name stands for (a name inside a module: that module)."""
    parts = module.split(".")
    while parts:
        candidate = LABKIT.parent.parent.joinpath(*parts)
        if candidate.with_suffix(".py").is_file() or (candidate / "__init__.py").is_file():
            return ".".join(parts)
        parts = parts[:-1]
    return None


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(LABKIT)))
def test_every_module_declares_its_role(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    declared = [
        node.value.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == "ROLE" for t in node.targets)
        and isinstance(node.value, ast.Constant)
    ]
    assert declared and declared[0] in ROLES, f'{path}: add ROLE = "taught" | "check" | "support"'
    assert role_of(module_name(path), LABKIT) == declared[0]


def test_checks_live_in_checks_and_nowhere_else() -> None:
    """The role is declared, not inferred from the path; but the layout follows the roles, so a
    reader finds a page's checks in ``checks/<chapter>/<page>.py``."""
    for path in MODULES:
        role = role_of(module_name(path), LABKIT)
        in_checks = path.relative_to(LABKIT).parts[0] == "checks"
        assert (role == "check") == in_checks or path.name == "pinned.py", path


def test_taught_and_support_code_never_import_checks() -> None:
    wrong = []
    for path in MODULES:
        role = role_of(module_name(path), LABKIT)
        if role == "check":
            continue
        for line, imported in labkit_imports(path):
            target = resolve(imported)
            if target is not None and role_of(target, LABKIT) == "check":
                wrong.append(f"{path.relative_to(LABKIT)}:{line} ({role}) imports {target}")
    assert not wrong, "\n".join(wrong)


def test_the_walk_finds_imports_of_checks_inside_functions_and_relative_ones(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The test above can fail: imports at any depth, absolute or relative, are found."""
    fake = tmp_path / "t.py"
    fake.write_text(
        'ROLE = "taught"\n\n\ndef f():\n    from atlas.labkit.pinned import read\n'
        "    from ..checks.common import attention\n"
    )
    found = {(line, resolve(m)) for line, m in labkit_imports(fake, "atlas.labkit.demo.t")}
    assert (5, "atlas.labkit.pinned") in found
    assert (6, "atlas.labkit.checks.common.attention") in found
    assert role_of("atlas.labkit.checks.common.attention", LABKIT) == "check"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(LABKIT)))
def test_no_module_over_400_lines(path: Path) -> None:
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{path.relative_to(LABKIT)} has {lines} lines: split it by job"
