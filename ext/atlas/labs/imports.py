"""What a lab takes from ``atlas.labkit``, read from source with ``ast`` (nothing is imported).

Two consumers need the same answer, so it lives here once:

- the result cache keys a page on the labkit files its labs reach (the modules they import,
  the packages above them, and what those import in turn), so that editing one helper re-runs
  only the pages that use it (:mod:`atlas.labs.cache`);
- the teaching check (:mod:`atlas.teach.taught`) needs each name a lab imports and the module
  that defines it, to require that taught code is shown on the page.

Sphinx's process never imports labkit (it would drag torch in), hence the static reading.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from atlas.settings import optional_path

PACKAGE = "atlas.labkit"
# The labkit folder of this checkout, the one place that names it. A fixture book may quote and
# import another (``atlas_labkit_root``): :func:`labkit_root` chooses.
LABKIT = Path(__file__).resolve().parents[1] / "labkit"
LABKIT_ROOT_SETTING = "atlas_labkit_root"


def labkit_root(source: Any) -> Path:
    """The labkit folder of this build: ``atlas_labkit_root`` when set, else ``ext/atlas/labkit``;
    the one answer for labcode, the teaching check, the runnable files and the labs' cache key.

    ``source`` is the app, its environment, its Config, or anything with a ``config``. The
    setting is atlas.teach's (``TeachConfig``, which checks it at config-inited); it is read
    here by name and converted by the same rule, so that atlas.labs imports no teach (teach
    builds on labs), and a book without atlas.teach gets the default.
    """
    config = getattr(source, "config", source)
    configured = optional_path(
        config[LABKIT_ROOT_SETTING] if LABKIT_ROOT_SETTING in config else None
    )
    return configured.resolve() if configured else LABKIT


@dataclass(frozen=True)
class ImportedName:
    """``name`` taken from labkit ``module`` (``name`` None: the module itself) at ``line``.

    ``line`` counts from 1 within the source that was parsed (one doctest example).
    """

    module: str
    name: str | None
    line: int


def module_file(module: str, root: Path = LABKIT) -> Path | None:
    """The file of labkit module ``module`` (``atlas.labkit.serving.models``), if it exists."""
    if module != PACKAGE and not module.startswith(PACKAGE + "."):
        return None
    parts = module.split(".")[2:]
    base = root.joinpath(*parts)
    for candidate in (base.with_suffix(".py") if parts else None, base / "__init__.py"):
        if candidate is not None and candidate.is_file():
            return candidate
    return None


def module_name(path: Path, root: Path = LABKIT) -> str:
    """The dotted name of a labkit file (``serving/models.py``: ``atlas.labkit.serving.models``)."""
    parts = list(path.resolve().relative_to(root.resolve()).with_suffix("").parts)
    if parts and parts[-1] == "__init__":
        parts.pop()
    return ".".join([PACKAGE, *parts])


def _parents(module: str) -> list[str]:
    """``atlas.labkit.a.b`` -> [``atlas.labkit``, ``atlas.labkit.a``]: packages an import runs."""
    parts = module.split(".")
    return [".".join(parts[:i]) for i in range(2, len(parts))]


def _resolve_relative(node: ast.ImportFrom, current: str, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    base = current.split(".")
    if not is_package:
        base = base[:-1]
    base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
    return ".".join([*base, *([node.module] if node.module else [])])


def imports_in(tree: ast.AST, current: str = "", is_package: bool = False) -> list[ImportedName]:
    """Every labkit import in ``tree``: ``from M import a`` gives (M, a); ``import M`` and
    ``import M as m`` give (M, None), plus (M, attr) for each ``m.attr`` the code reads."""
    found: list[ImportedName] = []
    aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            module = _resolve_relative(node, current, is_package)
            if module != PACKAGE and not module.startswith(PACKAGE + "."):
                continue
            for alias in node.names:
                if alias.name == "*":
                    found.append(ImportedName(module, None, node.lineno))
                    continue
                found.append(ImportedName(module, alias.name, node.lineno))
                aliases[alias.asname or alias.name] = f"{module}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == PACKAGE or alias.name.startswith(PACKAGE + "."):
                    found.append(ImportedName(alias.name, None, node.lineno))
                    if alias.asname:
                        aliases[alias.asname] = alias.name
    if aliases:  # names read through a module alias: models.GIB
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in aliases
            ):
                found.append(ImportedName(aliases[node.value.id], node.attr, node.lineno))
    return found


def source_imports(source: str) -> list[ImportedName]:
    """Labkit imports of one lab example's source; an example that does not parse has none
    (doctest reports it when it runs)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    return imports_in(tree)


@lru_cache(maxsize=512)
def _module_imports_cached(path: str, mtime_ns: int, size: int, root: str) -> tuple[str, ...]:
    file = Path(path)
    try:
        tree = ast.parse(file.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return ()
    current = module_name(file, Path(root))
    names: set[str] = set()
    for item in imports_in(tree, current, file.name == "__init__.py"):
        names.add(item.module)
        if item.name and module_file(f"{item.module}.{item.name}", Path(root)):
            names.add(f"{item.module}.{item.name}")  # from package import submodule
    return tuple(sorted(names))


def module_imports(path: Path, root: Path = LABKIT) -> tuple[str, ...]:
    """Labkit modules that the file ``path`` imports (parsed once per version of the file)."""
    try:
        stat = path.stat()
    except OSError:
        return ()
    return _module_imports_cached(str(path), stat.st_mtime_ns, stat.st_size, str(root))


def closure(modules: set[str] | list[str], root: Path = LABKIT) -> list[Path]:
    """Every labkit file that importing ``modules`` runs: the modules, the packages above
    them, and what those import, transitively. Sorted; unknown modules are ignored."""
    seen: set[str] = set()
    files: set[Path] = set()
    todo = list(modules)
    while todo:
        module = todo.pop()
        if module in seen:
            continue
        seen.add(module)
        todo.extend(_parents(module))
        file = module_file(module, root)
        if file is None:
            continue
        files.add(file)
        todo.extend(module_imports(file, root))
    return sorted(files)


# Files a labkit module reads at run time rather than imports: CUDA C kernels and headers
# (atlas.labkit.cuda compiles them). Editing one must re-run the labs that reach the module.
DATA_SUFFIXES = (".cu", ".cuh", ".h")


def data_files(files: list[Path]) -> list[Path]:
    """The kernel sources beside the modules ``files``: in each module's folder and in its
    subfolders that are not packages (``cuda/kernels/*.cu`` beside ``cuda/nvcc.py``). Sorted."""
    found: set[Path] = set()
    for folder in {f.parent for f in files}:
        for path in folder.rglob("*"):
            if path.suffix not in DATA_SUFFIXES or not path.is_file():
                continue
            between = path.parent.relative_to(folder).parts
            if not any(
                (folder.joinpath(*between[: i + 1]) / "__init__.py").exists()
                for i in range(len(between))
            ):
                found.add(path)
    return sorted(found)


def lab_modules(sources: list[str], root: Path = LABKIT) -> set[str]:
    """The labkit modules that these example sources import (names that are submodules count
    as modules: ``from atlas.labkit.serving import models``)."""
    modules: set[str] = set()
    for source in sources:
        for item in source_imports(source):
            modules.add(item.module)
            if item.name and module_file(f"{item.module}.{item.name}", root):
                modules.add(f"{item.module}.{item.name}")
    return modules
