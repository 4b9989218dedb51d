"""The teaching check: a lab may import taught labkit code only if its page shows that code.

``atlas.labkit`` holds two kinds of code. The *harness* (checkers, traces, demos, seeding,
``run_ranks``, the registries of figures) may stay hidden; the lab box links to it. Everything
else is *taught* (a kernel in plain torch, a parallel layer, a simulator): a lab that uses it
proves a claim with code the reader must be able to read, so the page must quote it with
``labcode`` (its definition line among the lines shown). Otherwise a hidden reimplementation
agrees with a hidden reference, and the lab proves nothing to the reader.

Harness, by module: a module named ``harness`` (``serving/harness.py``) or anything inside a
``harness`` package, ``atlas.labkit.ranks``, and ``atlas.labkit.registry``. Names are followed
through re-exports (``from atlas.labkit import run_ranks`` is ``atlas.labkit.ranks``).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util import logging

from atlas.labs.imports import (
    PACKAGE,
    ImportedName,
    closure,
    module_file,
    source_imports,
)
from atlas.teach.state import teach_state

logger = logging.getLogger(__name__)
HARNESS_MODULES = frozenset({f"{PACKAGE}.ranks"})
HARNESS_PACKAGES = (f"{PACKAGE}.registry",)


@dataclass(frozen=True)
class Definition:
    """Where a name is defined: its module, file (relative to labkit) and definition line."""

    module: str
    name: str
    path: str
    line: int  # the ``def``/``class``/assignment line (decorators excluded)


def is_harness(module: str) -> bool:
    """Harness modules may stay hidden; every other labkit module is taught."""
    if module in HARNESS_MODULES:
        return True
    if any(module == p or module.startswith(p + ".") for p in HARNESS_PACKAGES):
        return True
    return "harness" in module.split(".")[2:]


@lru_cache(maxsize=256)
def _top_level(
    path: str, mtime_ns: int, module: str
) -> tuple[dict[str, int], dict[str, tuple[str, str]]]:
    """Module ``module``'s top-level definitions (name -> line) and imports (name -> (module,
    name)), parsed once per version of its file."""
    tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    defined: dict[str, int] = {}
    imported: dict[str, tuple[str, str]] = {}
    is_package = path.endswith("__init__.py")

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                defined.setdefault(node.name, node.lineno)
            elif isinstance(node, ast.Assign | ast.AnnAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    if isinstance(target, ast.Name):
                        defined.setdefault(target.id, node.lineno)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    here = module.split(".")
                    here = here if is_package else here[:-1]
                    here = here[: len(here) - (node.level - 1)] if node.level > 1 else here
                    base = ".".join([*here, *([node.module] if node.module else [])])
                for alias in node.names:
                    imported.setdefault(alias.asname or alias.name, (base, alias.name))
            elif isinstance(node, ast.If | ast.Try | ast.With):
                for block in ("body", "orelse", "finalbody"):
                    visit(getattr(node, block, []) or [])

    visit(tree.body)
    return defined, imported


def find_definition(module: str, name: str, root: Path, depth: int = 0) -> Definition | None:
    """The definition ``name`` stands for in ``module``, following labkit re-exports."""
    file = module_file(module, root)
    if file is None or depth > 8:
        return None
    try:
        defined, imported = _top_level(str(file.resolve()), file.stat().st_mtime_ns, module)
    except (OSError, SyntaxError, ValueError):
        return None
    if name in defined:
        path = str(file.resolve().relative_to(root.resolve()))
        return Definition(module, name, path, defined[name])
    if name in imported:
        source, original = imported[name]
        if source == PACKAGE or source.startswith(PACKAGE + "."):
            return find_definition(source, original, root, depth + 1)
    return None


@dataclass(frozen=True)
class Unshown:
    """A taught name a lab imports and its page does not show."""

    lab: str
    line: int
    imported_from: str
    definition: Definition
    lab_index: int = 0  # which of the page's labs (its file may be an included one)

    def message(self) -> str:
        d = self.definition
        where = "" if d.module == self.imported_from else f" (defined in {d.module})"
        return (
            f'lab "{self.lab}" imports {d.name} from {self.imported_from}{where}, taught code '
            "that this page does not show. Quote it before the lab, with a sentence that "
            f"introduces it:\n    ```{{labcode}} {d.path}::{d.name}\n    ```\nor, if it is a "
            "checker, a trace or a demo rather than what the page teaches, move it to the "
            "chapter's harness module (e.g. "
            f"{d.path.rsplit('/', 1)[0] + '/' if '/' in d.path else ''}harness.py)."
        )


def shown_lines(doctree: nodes.document) -> dict[str, set[int]]:
    """Lines of each labkit file that the page's labcode blocks show."""
    shown: dict[str, set[int]] = {}
    for node in doctree.findall(nodes.container):
        path = node.get("labcode_path")
        if not path:
            continue
        lines = shown.setdefault(path, set())
        for start, end in node.get("labcode_lines", []):
            lines.update(range(start, end + 1))
    return shown


def unshown(doctree: nodes.document, specs: list, root: Path) -> tuple[list[Unshown], list[Path]]:
    """The taught imports of the page's labs that it does not show, and the labkit files the
    verdict depends on (an edit to them must re-check the page)."""
    shown = shown_lines(doctree)
    problems: list[Unshown] = []
    modules: set[str] = set()
    aliases: dict[str, str] = {}  # a page's labs share one namespace: aliases outlive examples
    for index, spec in enumerate(specs):
        for example in spec.examples:
            for item in [*source_imports(example.source), *_aliased_reads(example, aliases)]:
                modules.add(item.module)
                if item.name is None or module_file(f"{item.module}.{item.name}", root):
                    continue  # a module: the names read from it are checked one by one
                found = find_definition(item.module, item.name, root)
                if found is None or is_harness(found.module):
                    continue
                if found.line in shown.get(found.path, set()):
                    continue
                line = example.line + item.line - 1
                problems.append(Unshown(spec.title, line, item.module, found, index))
    return problems, closure(modules, root)


def _aliased_reads(example: object, aliases: dict[str, str]) -> list[ImportedName]:
    """Names read through a module alias bound by an *earlier* example of the page's labs
    (``import atlas.labkit.x as m`` in one, ``m.f(...)`` in the next); then the aliases this
    example binds, for the examples after it. One example's own aliases are
    :func:`atlas.labs.imports.imports_in`'s; a page's labs run in one namespace, so an alias
    outlives its example."""
    try:
        tree = ast.parse(example.source)  # type: ignore[attr-defined]
    except SyntaxError:
        return []
    found = [
        ImportedName(aliases[node.value.id], node.attr, node.lineno)
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id in aliases
    ]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname and alias.name.startswith(PACKAGE):
                    aliases[alias.asname] = alias.name
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith(PACKAGE):
            for alias in node.names:
                aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return found


def check_page(app: Sphinx, doctree: nodes.document) -> None:
    """At read time: one error per unshown taught name, at the line of the lab's import."""
    from atlas.labs.directive import lab_node
    from atlas.teach.config import labkit_root

    env = app.env
    labs = list(doctree.findall(lab_node))
    specs = [node["spec"] for node in labs]
    if not specs:
        return
    page = str(env.doc2path(env.docname))
    root = labkit_root(env)
    found, files = unshown(doctree, specs, root)
    for file in files:
        env.note_dependency(str(file))
    seen: set[tuple[str, int]] = set()
    for item in found:
        key = (item.definition.name, item.line)
        if key in seen:
            continue
        seen.add(key)
        source = labs[item.lab_index].source or page  # an included file names itself
        logger.error(
            item.message(),
            location=(env.docname, item.line) if source == page else f"{source}:{item.line}",
            type="teach",
            subtype="unshown",
        )
        teach_state(env).unshown.setdefault(env.docname, []).append(item.line)
