"""Diagrams with captions are numbered figures (Sphinx's numfig) that {numref} cites, in both
editions' words ("Figure 2", "图 2"), in HTML and in the PDF's LaTeX; a diagram without a
caption stays a bare diagram (issue 44, item 8)."""

from __future__ import annotations

import re
from io import StringIO
from pathlib import Path

import pytest
from atlas.latex import mermaid
from sphinx.testing.util import SphinxTestApp
from tinybook import CONF, build_book

PAGES = {
    "index.md": "# Book\n\n```{toctree}\nch\n```\n",
    "ch.md": (
        "# Chapter\n\nThe loop is {numref}`fig-loop`; the ring, {numref}`fig-ring`.\n\n"
        "```mermaid\n:caption: The agent loop.\n:name: fig-loop\ngraph LR\n  A --> B\n```\n\n"
        "## Part\n\n"
        "```{mermaid}\n:caption: The ring on four ranks.\n:name: fig-ring\n"
        "graph LR\n  C --> D\n```\n"
        "\n```mermaid\ngraph LR\n  E --> F\n```\n"
        "\n```{code-block} python\n:caption: A captioned code block, not a figure.\n\nx = 1\n```\n"
    ),
}
QUIET = "atlas_labs_mode = 'off'\n"


def captions(html: str) -> list[str]:
    return re.findall(r'<span class="caption-number">([^<]*)</span>', html)


def test_captioned_diagrams_are_numbered_and_cited_in_english(tmp_path: Path) -> None:
    html, warnings = build_book(tmp_path / "book", PAGES, QUIET)
    assert warnings == ""
    page = (html / "ch.html").read_text(encoding="utf-8")
    assert captions(page) == ["Figure 1 ", "Figure 2 "]  # no "Listing 1" on the code block
    assert "A captioned code block, not a figure." in page
    assert page.count("<figure") == 2 and page.count('class="mermaid"') == 3
    assert re.search(r'href="#fig-ring"[^>]*><span class="std std-numref">Figure 2</span>', page)


def test_the_chinese_edition_says_tu(tmp_path: Path) -> None:
    html, warnings = build_book(tmp_path / "book", PAGES, QUIET + "language = 'zh_CN'\n")
    assert warnings == ""
    page = (html / "ch.html").read_text(encoding="utf-8")
    assert captions(page) == ["图 1 ", "图 2 "]
    assert '<span class="std std-numref">图 2</span>' in page


def test_the_latex_numbers_them_and_names_them_figure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = tmp_path / "book"
    src.mkdir()
    for name, text in {**PAGES, "conf.py": CONF + QUIET}.items():
        (src / name).write_text(text, encoding="utf-8")
    # the diagrams' PDF rendering (mermaid-cli, which needs Chromium) is atlas.latex's test
    # (tests/latex/test_pdf.py); here only the LaTeX's captions, labels and words
    monkeypatch.setattr(mermaid, "render_mm", lambda *args, **kwargs: ("diagram.pdf", None))
    app = SphinxTestApp("latex", srcdir=src, status=StringIO(), warning=StringIO())
    try:
        app.build()
    finally:
        app.cleanup()
    latex = src / "_build" / "latex"
    tex = next(latex.glob("*.tex")).read_text(encoding="utf-8")
    words = (latex / "sphinxmessages.sty").read_text(encoding="utf-8")
    assert r"\renewcommand{\figurename}{Figure }" in words  # not Sphinx's "Fig."
    assert tex.count(r"\caption{") == 2 and r"\label{\detokenize{ch:fig-ring}}" in tex
    assert r"\hyperref[\detokenize{ch:fig-ring}]" in tex
