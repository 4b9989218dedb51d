"""The text the search index carries for snippets (atlas.assets.search_text): each section's own
prose, without code, titles or what Sphinx's index leaves out, cut to a share of the index that
keeps the whole under SHARE of Sphinx's own size, in English and in Chinese (whose characters
the index writes as \\u escapes)."""

from __future__ import annotations

import json

from atlas.assets.search_text import MOST, SHARE, cut, page_sections, texts_for
from docutils import nodes
from docutils.frontend import get_default_settings
from docutils.parsers.rst import Parser
from docutils.utils import new_document

PAGE = """\
Title
=====

Intro words here.

.. code-block:: python

   secret_code = 1

.. container:: no-search

   A banner no snippet shows.

Section
-------

Section prose.
"""


def parsed(text: str) -> nodes.document:
    settings = get_default_settings(Parser)
    settings.report_level = 5
    document = new_document("page.rst", settings)
    Parser().parse(text, document)
    return document


def test_each_section_keeps_its_own_prose_only() -> None:
    sections = page_sections(parsed(PAGE))
    assert sections == [("", "Intro words here."), ("#section", "Section prose.")]


def test_a_cut_fits_its_budget_in_the_written_index_and_ends_at_a_word() -> None:
    english = "paged attention keeps blocks " * 20
    short = cut(english, 60)
    assert len(json.dumps(short)) - 2 <= 60 and short.endswith("\u2026")
    assert english.startswith(short[:-1]) and not short[:-1].endswith(" ")
    chinese = "注意力按每个先前词元与查询的得分做归一化" * 5
    short = cut(chinese, 60)
    assert len(json.dumps(short)) - 2 <= 60 and chinese.startswith(short[:-1])
    assert cut("short", 60) == "short"


def test_the_texts_stay_within_their_share_of_the_index() -> None:
    docs = [f"page{i}" for i in range(100)]
    sections = {d: [("", "word " * 200), ("#a", "mot " * 200)] for d in docs}
    budget = int(240_000 * SHARE)  # 300 bytes a section: under MOST, all of it used
    written = len(json.dumps(texts_for(docs, sections, budget)))
    assert budget * 0.7 < written <= budget, (written, budget)
    roomy = len(json.dumps(texts_for(docs, sections, 10**7)))  # a section takes MOST at most
    assert roomy <= len(docs) * 2 * (MOST + 12), roomy
    assert texts_for(["none"], {}, 1000) == [[]]
