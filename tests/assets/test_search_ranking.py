"""Search from disk ranks the page whose title is the query first, however it spells it
("paged attention" finds "PagedAttention and the block manager"), in headless Chromium."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from tinybook import build_book, launch

pytestmark = pytest.mark.browser

BODY = "Paged attention keeps the KV cache in blocks; paged attention needs a block table.\n"
PAGES = {
    "index.md": "# Book\n\n```{toctree}\nkernels\ndecode\npaged\nrouting\n```\n",
    # two pages whose titles hold one word of the query and whose text holds both, often
    "kernels.md": "# Attention kernels\n\n" + BODY * 3,
    "decode.md": "# Decode attention\n\n" + BODY * 3,
    "paged.md": "# PagedAttention and the block manager\n\nPaged attention: blocks mapped.\n",
    "routing.md": "# Routing and load balancing\n\nExperts and gates.\n",
}
QUERIES = {"paged attention": "paged", "block manager": "paged", "load balancing": "routing"}


def ranked(html: Path, queries: list[str]) -> dict[str, list[str]]:
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
                    link.split("#")[0].split("?")[0].removesuffix(".html") for link in links
                ]
        finally:
            browser.close()
    return found


def test_the_page_titled_by_the_query_ranks_first(tmp_path: Path) -> None:
    if shutil.which("chromium") is None:
        pytest.skip("Debian's chromium is not installed (apt-get install chromium)")
    html, _ = build_book(tmp_path / "book", PAGES)
    found = ranked(html, list(QUERIES))
    for query, first in QUERIES.items():
        assert found[query] and found[query][0] == first, (query, found[query])
