"""Searching the Chinese edition in headless Chromium, opened from disk, finds the right pages."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from i18n_books import Built, build_both, copy_book
from tinybook import launch

QUERIES = {"注意力": "attention", "流水线并行": "pipeline", "KV cache": "kv-cache"}


def search(html: Path, queries: list[str]) -> dict[str, list[str]]:
    """The pages (names without .html) of the first three results of each query."""
    from playwright.sync_api import sync_playwright

    found: dict[str, list[str]] = {}
    with sync_playwright() as pw:
        browser = launch(pw)
        try:
            page = browser.new_context(offline=True).new_page()
            for query in queries:
                page.goto((html / "search.html").as_uri() + "?q=" + query)
                page.wait_for_function(
                    "document.querySelector('#search-results p.search-summary')"
                    "?.textContent.length > 0",
                    timeout=20_000,
                )
                links = page.locator("#search-results ul.search li a").evaluate_all(
                    "links => links.map(a => a.getAttribute('href'))"
                )
                found[query] = [
                    link.split("#")[0].split("?")[0].removesuffix(".html") for link in links[:3]
                ]
        finally:
            browser.close()
    return found


@pytest.mark.browser
def test_searching_the_chinese_edition_finds_the_right_pages(tmp_path: Path) -> None:
    if shutil.which("chromium") is None:
        pytest.skip("Debian's chromium is not installed (apt-get install chromium)")
    built: Built = build_both(copy_book(tmp_path), tmp_path / "_build")
    assert built.codes == {"en": 0, "zh_CN": 0}, built.logs
    found = search(built.html / "zh", list(QUERIES))
    for query, page in QUERIES.items():
        assert page in found[query], (query, found[query])
