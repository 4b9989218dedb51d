"""Every mermaid diagram is parsed in every build, with mermaid's own parser in node (issue 35):
a syntax error is an error at its page and line, not a "Syntax error" box in the browser."""

from __future__ import annotations

import re
import shutil
from io import StringIO
from pathlib import Path

import pytest
from atlas.assets import diagrams, mermaid_parser
from atlas.assets.diagrams import Diagram, page_line
from atlas.assets.mermaid_parser import ParseError
from sphinx.testing.util import SphinxTestApp

pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="needs node (make setup)")


def build(src: Path) -> tuple[SphinxTestApp, str]:
    warnings = StringIO()
    app = SphinxTestApp("html", srcdir=src, status=StringIO(), warning=warnings)
    try:
        app.build()
    finally:
        app.cleanup()
    return app, warnings.getvalue()


@pytest.fixture
def book(rootdir: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(rootdir / "test-mermaid", tmp_path / "book"))


def test_a_broken_diagram_is_an_error_at_its_page_and_line(book: Path) -> None:
    app, warnings = build(book)
    found = re.findall(r"(\w+)\.md:(\d+): ERROR: mermaid cannot parse this diagram", warnings)
    # the fence's broken line; the directive's, past its option and front matter; an unknown type
    assert found == [("broken", "9"), ("broken", "21"), ("broken", "27")], warnings
    assert "Expecting 'ID', 'EDGE_STATE', got 'NL'" in warnings  # mermaid's own words
    assert "No diagram type detected" in warnings
    assert "Traceback" not in warnings
    assert app.statuscode == 1  # even without -W, as a failing lab
    assert (Path(app.outdir) / "broken.html").exists()  # the build went on


def test_a_no_op_build_starts_no_node_and_still_reports(book: Path, monkeypatch) -> None:
    build(book)
    parsed: list[int] = []
    real = diagrams.parse_all

    def counting(texts, node_modules):
        parsed.append(len(texts))
        return real(texts, node_modules)

    monkeypatch.setattr(diagrams, "parse_all", counting)
    app, warnings = build(book)
    assert parsed == [0]  # every verdict came from the cache
    assert len(re.findall(r"ERROR: mermaid cannot parse", warnings)) == 3, warnings
    assert app.statuscode == 1


def test_without_node_the_build_warns_and_goes_on(book: Path, monkeypatch) -> None:
    monkeypatch.setattr(mermaid_parser.shutil, "which", lambda name: None)
    app, warnings = build(book)
    assert "WARNING: the book's mermaid diagrams were not parsed: node is not on PATH" in warnings
    assert "Traceback" not in warnings
    assert (Path(app.outdir) / "good.html").exists()


def test_page_line_counts_front_matter_and_lines_the_directive_added() -> None:
    # the directive's :title: became 3 lines of front matter before the page's text (line 10 on)
    text = "---\ntitle: T\n---\nflowchart LR\n  A --> (\n"
    diagram = Diagram(text, line=8, first_line=10, added_lines=3)
    assert page_line(diagram, ParseError("x", 2)) == 11  # "  A --> (" on the page
    page_text = "---\ntitle: T\n---\nflowchart LR\n  A --> (\n"  # front matter of the page's own
    assert page_line(Diagram(page_text, 8, 10, 0), ParseError("x", 2)) == 14
    assert page_line(Diagram(text, 8, None, 0), ParseError("x", 2)) == 8  # read from a file


def test_a_broken_diagram_in_an_included_file_names_that_file(book: Path) -> None:
    (book / "part.txt").write_text("Included.\n\n```mermaid\nflowchart LR\n  A --> ((\n```\n")
    good = book / "good.md"
    good.write_text(good.read_text() + "\n```{include} part.txt\n```\n")
    _, warnings = build(book)
    assert re.search(r"book/part\.txt:5: ERROR: mermaid cannot parse this diagram", warnings)
    assert not re.search(r"good\.md:\d+: ERROR", warnings), warnings
