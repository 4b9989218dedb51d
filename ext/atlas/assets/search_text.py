"""Search snippets that work from disk: the search index carries a little text of every section.

Why: Sphinx's search page shows a snippet under each result by fetching the result's page over
HTTP; opened from ``file://`` that fetch fails and the results are bare titles. So each page's
sections (anchor, the start of their text) are collected while the page is read
(:class:`SearchTextCollector`) and written into ``searchindex.js`` beside Sphinx's own data, under
``atlas_text`` (:class:`IndexWithText`, the builder's index format); ``atlas-search-snippets.js``
draws the snippet from there, and Sphinx's fetch is turned off (``html_show_search_summary``),
so that the page shows the same snippets from disk and over HTTP.

Kept small by construction: all the text together gets at most :data:`SHARE` of the size of
Sphinx's own index, shared evenly among the sections that have text, and each section keeps
the start of its prose (code, labs, math and what Sphinx's index leaves out, ``no-search``, left
out) up to its share, cut at a word.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.search import _JavaScriptIndex

from atlas.project.envstate import PageState, StateCollector, state_of

KEY = "atlas_text"
SHARE = 0.25  # of Sphinx's own index: the most the text may add
LEAST, MOST = 60, 400  # a section's share, in bytes of the written index
SKIPPED = (nodes.literal_block, nodes.raw, nodes.comment, nodes.math_block, nodes.title)
SKIPPED_NAMES = {"lab_node", "mermaid", "pending_xref_condition", "substitution_definition"}


@dataclass
class SearchTextState(PageState):
    # docname -> [(anchor of the section, "" for the page's own; its prose)]
    sections: dict[str, list[tuple[str, str]]] = field(default_factory=dict)


def search_text_state(env: Any) -> SearchTextState:
    return state_of(env, SearchTextState)


def _prose(section: nodes.Element) -> str:
    """The text of a section's own paragraphs (not its subsections'), whitespace squeezed."""
    parts: list[str] = []

    def visit(node: nodes.Node) -> None:
        if isinstance(node, nodes.section) and node is not section:
            return
        if isinstance(node, SKIPPED) or type(node).__name__ in SKIPPED_NAMES:
            return
        if isinstance(node, nodes.Element) and "no-search" in node["classes"]:
            return  # Sphinx's own mark for what its index leaves out
        if isinstance(node, nodes.Text):
            parts.append(str(node))
            return
        for child in node.children:
            visit(child)
        if isinstance(node, nodes.TextElement):
            parts.append(" ")

    visit(section)
    text = re.sub(r"\s+", " ", "".join(parts)).strip()
    return re.sub(r" ([,.;:!?)\]，。；：！？）])", r"\1", text)


def page_sections(doctree: nodes.document) -> list[tuple[str, str]]:
    """(anchor, prose) of every section of a page that has prose, in page order; the page's
    first section (its title) has the anchor ""."""
    found = []
    for i, section in enumerate(doctree.findall(nodes.section)):
        text = _prose(section)
        if text:
            anchor = "" if i == 0 or not section["ids"] else "#" + section["ids"][0]
            found.append((anchor, text))
    return found


class SearchTextCollector(StateCollector):
    state = SearchTextState

    def process_doc(self, app: Sphinx, doctree: nodes.document) -> None:
        search_text_state(app.env).sections[app.env.docname] = page_sections(doctree)


def _written(text: str) -> int:
    """The bytes a text takes in the index (JSON escapes every non-ASCII character)."""
    return len(json.dumps(text)) - 2


def cut(text: str, budget: int) -> str:
    """The start of ``text`` that takes at most ``budget`` bytes in the index, at a word
    boundary when there is one (Chinese has none: cut at a character), with "…" if cut."""
    if _written(text) <= budget:
        return text
    size, end = 0, 0
    for end, char in enumerate(text):  # noqa: B007 - end is read after the loop
        size += _written(char)
        if size > budget - 6:  # room for the ellipsis
            break
    head = text[:end]
    if " " in head[len(head) // 2 :]:
        head = head.rsplit(" ", 1)[0]
    return head.rstrip(" ,;:") + "\u2026"


def texts_for(docnames: list[str], sections: dict[str, list[tuple[str, str]]], budget: int):
    """Per docname, in the index's order: [[anchor, text], ...] within ``budget`` bytes."""
    listed = [s for d in docnames for s in sections.get(d, [])]
    # what is written besides the texts: each section's [anchor, ""] and comma, each page's []
    overhead = sum(len(json.dumps([anchor, ""])) + 1 for anchor, _ in listed) + 3 * len(docnames)
    each = max(LEAST, min(MOST, (budget - overhead) // max(len(listed), 1)))
    return [[[anchor, cut(text, each)] for anchor, text in sections.get(d, [])] for d in docnames]


class IndexWithText(_JavaScriptIndex):
    """``searchindex.js`` as Sphinx writes it, with each section's text under ``atlas_text``."""

    def __init__(self, app: Sphinx) -> None:
        self.app = app

    def dumps(self, data: Any) -> str:
        sphinx_size = len(super().dumps(data))
        sections = search_text_state(self.app.env).sections
        data = {**data, KEY: texts_for(list(data["docnames"]), sections, int(sphinx_size * SHARE))}
        return super().dumps(data)


def use_index_with_text(app: Sphinx) -> None:
    """builder-inited: the HTML builders write the index through :class:`IndexWithText`."""
    if getattr(app.builder, "indexer_format", None) is not None and app.builder.format == "html":
        if not getattr(app.builder, "indexer_dumps_unicode", False):
            return  # a pickled index (the pickle builder) has no page that reads it
        app.builder.indexer_format = IndexWithText(app)


def no_fetched_summaries(app: Sphinx, config: Config) -> None:
    """config-inited: the snippets come from the index; Sphinx would fetch every result's page."""
    config.html_show_search_summary = False


__all__ = ["SearchTextCollector", "IndexWithText", "page_sections", "texts_for", "cut"]
