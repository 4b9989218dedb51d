"""The teaching check: a lab may import taught labkit code only if its page shows that code.

Every module of ``atlas.labkit`` declares its role, where its code is defined, in a module-level
``ROLE = "..."``:

- ``"taught"``: what a chapter teaches (a kernel in plain torch, a parallel layer, a simulator,
  the counting functions of the models chapter). A lab that uses it proves a claim with code the
  reader must be able to read, so the page must quote it with ``labcode`` (its definition line
  among the lines shown). Otherwise a hidden reimplementation agrees with a hidden reference,
  and the lab proves nothing to the reader.
- ``"check"``: what checks the taught code (``atlas.labkit.checks``: checkers, loaders of
  upstream code, fakes, toy models, data builders). It may stay hidden; the lab box links to it.
- ``"support"``: what both use and nothing teaches (``run_ranks``, units, the registry of
  figures). It may stay hidden too.

The role is read from the declaration with ``ast`` (never by importing the module, never from
its path); a module that declares none counts as taught, so forgetting the declaration can
only make the check stricter. Names are followed through re-exports (``from atlas.labkit import
run_ranks`` is ``atlas.labkit.ranks``).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.util import logging

from atlas.labs.imports import (
    PACKAGE,
    ImportedName,
    closure,
    module_file,
    source_imports,
)
from atlas.teach.state import shown_state, teach_state

logger = logging.getLogger(__name__)
ROLES = ("taught", "check", "support")
HIDDEN_ROLES = frozenset({"check", "support"})  # code a page need not show


@dataclass(frozen=True)
class Definition:
    """Where a name is defined: its module, file (relative to labkit) and definition line."""

    module: str
    name: str
    path: str
    line: int  # the ``def``/``class``/assignment line (decorators excluded)


@lru_cache(maxsize=512)
def _declared_role(path: str, mtime_ns: int) -> str | None:
    """The module's ``ROLE = "..."`` declaration, read once per version of its file."""
    try:
        tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return None
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "ROLE" for t in node.targets)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            return node.value.value
    return None


def role_of(module: str, root: Path) -> str:
    """``"taught"``, ``"check"`` or ``"support"``, as the module declares (taught if it does
    not, or declares something else: the stricter reading)."""
    file = module_file(module, root)
    if file is None:
        return "taught"
    try:
        role = _declared_role(str(file.resolve()), file.stat().st_mtime_ns)
    except OSError:
        return "taught"
    return role if role in ROLES else "taught"


def may_stay_hidden(module: str, root: Path) -> bool:
    """Checks and support code may stay hidden; taught code must be on the page."""
    return role_of(module, root) in HIDDEN_ROLES


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
    source: str = ""  # the included file the lab is in, if not the page itself

    def message(self) -> str:
        d = self.definition
        where = "" if d.module == self.imported_from else f" (defined in {d.module})"
        return (
            f'lab "{self.lab}" imports {d.name} from {self.imported_from}{where}, taught code '
            "that this page does not show. Quote it before the lab, with a sentence that "
            f"introduces it:\n    ```{{labcode}} {d.path}::{d.name}\n    ```\nor, if it is a "
            "checker, a trace or a demo rather than what the page teaches, move it to a module "
            'that declares ROLE = "check" (checks/<chapter>/<page>.py).'
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
                if found is None or may_stay_hidden(found.module, root):
                    continue
                if found.line in shown.get(found.path, set()):
                    continue
                line = example.line + item.line - 1
                problems.append(Unshown(spec.title, line, item.module, found, index))
    return problems, closure(modules, root)


def shown_blocks(doctree: nodes.document) -> list[tuple[str, int, int, int]]:
    """``(labkit path, first line, last line, page line)`` of each range the page's labcode
    blocks show: what other pages may borrow, and where the back-links point."""
    blocks = []
    for node in doctree.findall(nodes.container):
        path = node.get("labcode_path")
        if path:
            for start, end in node.get("labcode_lines", []):
                blocks.append((path, start, end, node.line or 0))
    return blocks


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
    """At read time: record what the page shows and the taught names its labs use unshown;
    :func:`judge` decides once every page is read."""
    from atlas.labs.directive import lab_node
    from atlas.teach.config import labkit_root

    env = app.env
    state = shown_state(env)
    blocks = shown_blocks(doctree)
    if blocks:
        state.shown[env.docname] = blocks
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
    borrowed = []
    for item in found:
        key = (item.definition.name, item.line)
        if key not in seen:
            seen.add(key)
            source = labs[item.lab_index].source or page  # an included file names itself
            borrowed.append(replace(item, source="" if source == page else source))
    if borrowed:
        state.borrowed[env.docname] = borrowed


def chapter(docname: str) -> str:
    """A page's chapter: its first folder (``models`` for ``models/counting``; ``""`` for a
    page outside chapters)."""
    return docname.split("/")[0] if "/" in docname else ""


def home_of(
    definition: Definition,
    docname: str,
    shown: dict[str, list[tuple[str, int, int, int]]],
    rank: dict[str, int],
) -> tuple[str, int] | None:
    """Where the book shows ``definition`` for a lab of ``docname`` that does not show it: a
    page before it in its own chapter (any page of it, for the chapter's index, which previews
    what its pages teach), or a page of another chapter. This is d2l's rule: code is taught
    once, in the chapter that teaches it, and used by reference elsewhere, with a link. The
    first such page in reading order and its line, or None."""
    late = len(rank)
    candidates = []
    if not chapter(docname):
        return None  # front and back matter are read in any order: they show what they use
    for other, blocks in shown.items():
        if other == docname or not chapter(other):
            continue
        same = chapter(other) == chapter(docname)
        preview = docname == f"{chapter(docname)}/index"  # an index previews its chapter
        if same and not preview and rank.get(other, late) >= rank.get(docname, late):
            continue
        for path, start, end, line in blocks:
            if path == definition.path and start <= definition.line <= end:
                candidates.append((rank.get(other, late), other, line))
                break
    if not candidates:
        return None
    _, other, line = min(candidates)
    return other, line


def judge(app: Sphinx, env: BuildEnvironment) -> list[str]:
    """Once every page is read: one error per taught name a lab uses that the book does not show
    where the lab may borrow it from (:func:`home_of`), at the line of the lab's import; for the
    others, the link from the lab's box to the page that shows the code. Returns the pages whose
    links changed, so that they are written again."""
    from atlas.project.order import book_order

    state = shown_state(env)
    order, _ = book_order(env, app.config.root_doc)
    rank = {docname: i for i, docname in enumerate(order)}
    changed = []
    for docname in sorted(state.borrowed):
        links: dict[tuple[str, str], tuple[str, int]] = {}
        for item in state.borrowed[docname]:
            home = home_of(item.definition, docname, state.shown, rank)
            if home is not None:
                links[(item.lab, item.definition.name)] = home
                continue
            location = f"{item.source}:{item.line}" if item.source else (docname, item.line)
            logger.error(item.message(), location=location, type="teach", subtype="unshown")
            lines = teach_state(env).unshown.setdefault(docname, [])
            if item.line not in lines:
                lines.append(item.line)
        if links != state.links.get(docname, {}):
            changed.append(docname)
        if links:
            state.links[docname] = links
        else:
            state.links.pop(docname, None)
    return changed
