"""A wide mermaid diagram keeps labels of at least 12 px at 1280 px and scrolls sideways in its
box, where fitting it to the column shrank them to 9 px (issue 44); a caption (a numbered
figure) changes none of that."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from tinybook import build_book, launch

pytestmark = pytest.mark.browser

WIDE = " --> ".join(f"N{i}[a long label for step {i} of the loop]" for i in range(9))
PAGE = (
    "# Diagrams\n\n```mermaid\n:caption: A wide loop.\n:name: fig-wide\n"
    f"graph LR\n  {WIDE}\n```\n\n"
    "```mermaid\ngraph LR\n  A --> B\n```\n"
)


def test_wide_diagrams_keep_legible_labels_and_narrow_ones_are_untouched(tmp_path: Path) -> None:
    if shutil.which("chromium") is None:
        pytest.skip("Debian's chromium is not installed (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    html, _ = build_book(tmp_path / "book", {"index.md": PAGE})
    with sync_playwright() as pw:
        browser = launch(pw)
        try:
            page = browser.new_context(offline=True, viewport={"width": 1280, "height": 900})
            page = page.new_page()
            page.goto((html / "index.html").as_uri())
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
