"""A wide mermaid diagram keeps labels of at least 12 px at 1280 px and scrolls sideways in its
box, where fitting it to the column shrank them to 9 px (issue 44)."""

from __future__ import annotations

import shutil
from io import StringIO
from pathlib import Path

import pytest
from sphinx.testing.util import SphinxTestApp

pytestmark = pytest.mark.browser

CONF = (
    "import os, runpy\n"
    "globals().update({k: v for k, v in runpy.run_path(os.environ['ATLAS_BOOK_CONF']).items()"
    " if k[:2] != '__'})\n"
)
WIDE = " --> ".join(f"N{i}[a long label for step {i} of the loop]" for i in range(9))
PAGE = (
    f"# Diagrams\n\n```mermaid\ngraph LR\n  {WIDE}\n```\n\n```mermaid\ngraph LR\n  A --> B\n```\n"
)


def test_wide_diagrams_keep_legible_labels_and_narrow_ones_are_untouched(tmp_path: Path) -> None:
    if shutil.which("chromium") is None:
        pytest.skip("Debian's chromium is not installed (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    src = tmp_path / "book"
    src.mkdir()
    (src / "conf.py").write_text(CONF, encoding="utf-8")
    (src / "index.md").write_text(PAGE, encoding="utf-8")
    app = SphinxTestApp("html", srcdir=src, status=StringIO(), warning=StringIO())
    try:
        app.build()
    finally:
        app.cleanup()
    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=shutil.which("chromium"),
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        try:
            page = browser.new_context(offline=True, viewport={"width": 1280, "height": 900})
            page = page.new_page()
            page.goto((src / "_build" / "html" / "index.html").as_uri())
            page.wait_for_function("document.querySelectorAll('pre.mermaid svg').length == 2")
            page.wait_for_timeout(500)  # the legibility pass runs once mermaid is done
            scales = page.evaluate(
                "[...document.querySelectorAll('pre.mermaid')].map(n => {"
                " const s = n.querySelector('svg');"
                " return [s.getBoundingClientRect().width / s.viewBox.baseVal.width,"
                " n.classList.contains('atlas-diagram-scrolls')]; })"
            )
        finally:
            browser.close()
    (wide_scale, wide_scrolls), (_narrow_scale, narrow_scrolls) = scales
    assert wide_scale * 16 >= 12 - 0.01 and wide_scrolls, scales
    assert not narrow_scrolls, scales
