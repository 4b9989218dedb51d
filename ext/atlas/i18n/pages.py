"""The two pages of the translation's back matter: the glossary table and the status table.

```` ```{glossary-table} ```` draws ``glossary.toml`` (at read time; the page depends on the
file). ```` ```{translation-status} ```` draws, per page, its translated / fuzzy /
untranslated units, from the catalogs (at ``doctree-resolved``, when every title is known; the
page depends on every catalog). Both are in the build's language: the Chinese edition shows
Chinese headings, the English one English.
"""

from __future__ import annotations

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

from atlas.i18n.catalogs import Catalog, Edition, UnitState, open_edition
from atlas.i18n.config import is_translation, locale_dir, translation_language
from atlas.i18n.glossary import GLOSSARY_FILE, read_glossary

WORDS = {
    "en": {
        "term": "Term",
        "rendering": "Chinese",
        "note": "Note",
        "kept": "kept in English",
        "page": "Page",
        "translated": "Translated",
        "fuzzy": "Fuzzy",
        "untranslated": "Untranslated",
        "complete": "Complete",
        "yes": "yes",
        "none": "No translation is configured (atlas_i18n_editions).",
        "summary": "{units} units on {pages} pages: {translated} translated, {fuzzy} fuzzy, "
        "{untranslated} untranslated; {complete} pages marked complete.",
    },
    "zh_CN": {
        "term": "术语",
        "rendering": "中文译名",
        "note": "说明",
        "kept": "保留英文",
        "page": "页面",
        "translated": "已译",
        "fuzzy": "待更新",
        "untranslated": "未译",
        "complete": "已完成",
        "yes": "是",
        "none": "本书未配置译本（atlas_i18n_editions）。",
        "summary": "{pages} 个页面共 {units} 个翻译单元：已译 {translated}，待更新 {fuzzy}，"
        "未译 {untranslated}；{complete} 个页面已标记为完成。",
    },
}


def words(app: Sphinx) -> dict[str, str]:
    language = str(app.config.language) if is_translation(app.config) else "en"
    return WORDS.get(language, WORDS["en"])


def edition_of(app: Sphinx) -> Edition | None:
    language = translation_language(app)
    return open_edition(locale_dir(app), language) if language else None


def _cell(*children: nodes.Node) -> nodes.entry:
    entry = nodes.entry()
    entry += nodes.paragraph("", "", *children)
    return entry


def table(headings: list[str], widths: list[int], rows: list[list[nodes.Node]], cls: str):
    box = nodes.table(classes=[cls])
    group = nodes.tgroup(cols=len(headings))
    box += group
    for width in widths:
        group += nodes.colspec(colwidth=width)
    head = nodes.thead()
    header = nodes.row()
    for label in headings:
        header += _cell(nodes.Text(label))
    head += header
    group += head
    body = nodes.tbody()
    for cells in rows:
        row = nodes.row()
        for cell in cells:
            row += _cell(cell)
        body += row
    group += body
    return box


class GlossaryTableDirective(SphinxDirective):
    """```` ```{glossary-table} ````: every term of glossary.toml with its rendering."""

    def run(self) -> list[nodes.Node]:
        edition = edition_of(self.env.app)
        if edition is None:
            return [nodes.paragraph("", words(self.env.app)["none"])]
        path = edition.root / GLOSSARY_FILE
        self.env.note_dependency(str(path))
        try:
            terms = read_glossary(path)
        except ValueError as exc:
            raise self.error(str(exc)) from None
        said = words(self.env.app)
        rows: list[list[nodes.Node]] = [
            [
                nodes.Text(term.english),
                nodes.emphasis("", said["kept"])
                if term.kept
                else nodes.Text("、".join(term.renderings)),
                nodes.Text(term.note),
            ]
            for term in terms
        ]
        headings = [said["term"], said["rendering"], said["note"]]
        return [table(headings, [30, 30, 40], rows, "atlas-glossary-table")]


class translation_status_node(nodes.General, nodes.Element):  # noqa: N801 - docutils naming
    """Placeholder for the status table; filled at ``doctree-resolved``."""


class TranslationStatusDirective(SphinxDirective):
    """```` ```{translation-status} ````: per page, the state of its units."""

    def run(self) -> list[nodes.Node]:
        edition = edition_of(self.env.app)
        if edition is not None:
            for catalog in edition.catalogs():  # a catalog edited: the table is redrawn
                self.env.note_dependency(str(catalog.path))
            self.env.note_dependency(str(edition.root / "complete.toml"))
        node = translation_status_node()
        self.set_source_info(node)
        return [node]


def status_rows(edition: Edition) -> list[tuple[Catalog, bool]]:
    return [(catalog, catalog.page in edition.complete) for catalog in edition.catalogs()]


def fill_status(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    """At doctree-resolved: replace each status placeholder by the summary and the table."""
    for node in list(doctree.findall(translation_status_node)):
        node.replace_self(status_table(app, docname))


def status_table(app: Sphinx, docname: str) -> list[nodes.Node]:
    said = words(app)
    edition = edition_of(app)
    if edition is None:
        return [nodes.paragraph("", said["none"])]
    found = status_rows(edition)
    totals = {state: sum(c.count(state) for c, _ in found) for state in UnitState}
    summary = said["summary"].format(
        units=sum(totals.values()),
        pages=len(found),
        complete=sum(1 for _, done in found if done),
        **{state.value: n for state, n in totals.items()},
    )
    rows: list[list[nodes.Node]] = []
    for catalog, done in found:
        title = app.env.titles.get(catalog.page)
        label = title.astext() if title is not None else catalog.page
        uri = app.builder.get_relative_uri(docname, catalog.page)
        link = nodes.reference("", label, internal=True, refuri=uri)
        counts = [nodes.Text(str(catalog.count(state))) for state in UnitState]
        rows.append([link, *counts, nodes.Text(said["yes"] if done else "")])
    headings = [said["page"], *(said[state.value] for state in UnitState), said["complete"]]
    return [
        nodes.paragraph("", summary),
        table(headings, [40, 15, 15, 15, 15], rows, "atlas-i18n-status-table"),
    ]
