"""``computed-table``: a real table (HTML and LaTeX) whose cells labkit code computes when the
book is built, from the registries: the frontier table of models, a table of hardware.

    ```{computed-table} checks/models/index.py::frontier_rows
    :caption: Frontier open models, computed from the model registry
    model | Model
    total_b | Total (B) | .1f
    ```

The argument names a labkit function returning rows (a list of dicts); each content line names
a key, its column's heading and, optionally, a format spec (``.1f``, ``,d``). A number column is
right-aligned. The headings are the page's units, so the Chinese edition translates them. The
page is read again when a labkit file the function's module imports changes, as a lab's cache
would be keyed. The function runs in the build's own process, so it must be plain computation
(no torch, no upstream objects): what a lab asserts about the same figures stays in a lab.
"""

from __future__ import annotations

import importlib
from numbers import Number
from typing import Any, ClassVar

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util.docutils import SphinxDirective

from atlas.labkit.words import Phrase
from atlas.labs.imports import closure
from atlas.teach.config import labkit_root
from atlas.ui import _

EXAMPLE = (
    "```{computed-table} checks/models/index.py::frontier_rows\n:caption: ...\n"
    "model | Model\ntotal_b | Total (B) | .1f\n```"
)


class TableError(ValueError):
    """What is wrong with a computed-table, worded with its fix."""


def _columns(lines: list[str]) -> list[tuple[str, str, str]]:
    columns = []
    for line in lines:
        if not line.strip():
            continue
        parts = [part.strip() for part in line.split("|")]
        if len(parts) not in (2, 3) or not parts[0] or not parts[1]:
            raise TableError(
                f'column line "{line.strip()}" is not "key | heading" or "key | heading | format"'
            )
        columns.append((parts[0], parts[1], parts[2] if len(parts) == 3 else ""))
    if not columns:
        raise TableError('it has no columns: add one line "key | heading [| format]" per column')
    return columns


def _rows(target: str) -> tuple[list[dict[str, Any]], str]:
    """The function's rows and its module's name."""
    path, _, function = target.partition("::")
    if not path.endswith(".py") or not function:
        raise TableError(f'"{target}" is not "path/in/labkit.py::function"')
    module_name = "atlas.labkit." + path.removesuffix(".py").replace("/", ".")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise TableError(f"cannot import {module_name} ({exc})") from None
    produce = getattr(module, function, None)
    if not callable(produce):
        raise TableError(f"{module_name} has no function {function}")
    rows = produce()
    if not isinstance(rows, list) or not all(isinstance(row, dict) for row in rows):
        raise TableError(f"{function}() must return a list of dicts, one per row")
    return rows, module_name


def _cell(text: str, numeric: bool = False) -> nodes.entry:
    entry = nodes.entry(classes=["atlas-number"] if numeric else [])
    entry += nodes.paragraph(text, text)
    return entry


class ComputedTableDirective(SphinxDirective):
    has_content = True
    required_arguments = 1
    option_spec: ClassVar[dict[str, Any]] = {"caption": directives.unchanged_required}

    def run(self) -> list[nodes.Node]:
        target = self.arguments[0].strip()
        try:
            columns = _columns(list(self.content))
            rows, module_name = _rows(target)
            body = [self._row(row, columns) for row in rows]
        except TableError as exc:
            message = f"computed-table {target}: {exc}. Write it as:\n{EXAMPLE}"
            return [self.reporter.error(message, line=self.lineno)]
        root = labkit_root(self.env)
        for path in closure([module_name], root):
            self.env.note_dependency(str(path))
        # longtable: in the PDF a table taller than the page breaks across pages, its header
        # repeated, instead of running into the footer
        table = nodes.table(classes=["atlas-computed-table", "longtable"])
        caption = self.options.get("caption")
        if caption:
            title = nodes.title(caption, caption)
            self.set_source_info(title)
            table += title
        group = nodes.tgroup(cols=len(columns))
        table += group
        for _column in columns:
            group += nodes.colspec(colwidth=1)
        head = nodes.thead()
        header = nodes.row()
        for _key, heading, _format in columns:
            entry = nodes.entry()
            paragraph = nodes.paragraph(heading, heading)  # a unit of the page's catalog
            self.set_source_info(paragraph)
            entry += paragraph
            header += entry
        head += header
        group += head
        tbody = nodes.tbody()
        tbody.extend(body)
        group += tbody
        self.set_source_info(table)
        return [table]

    def _row(self, row: dict[str, Any], columns: list[tuple[str, str, str]]) -> nodes.row:
        out = nodes.row()
        for key, _heading, spec in columns:
            if key not in row:
                known = ", ".join(sorted(row))
                raise TableError(f'a row has no key "{key}" (its keys: {known})')
            value = row[key]
            if isinstance(value, Phrase):  # labkit's words: translated here, data kept
                value = value.text(_)
            try:
                text = format(value, spec)
            except (TypeError, ValueError):
                raise TableError(f'format "{spec}" does not apply to {key} = {value!r}') from None
            numeric = isinstance(value, Number) and not isinstance(value, bool)
            out += _cell(text, numeric)
        return out
