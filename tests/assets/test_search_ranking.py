"""Search from disk ranks the page whose title is the query first, however it spells it
("paged attention" finds "PagedAttention and the block manager"), and shows each result with a
snippet of its text holding the query (the index carries the text: Sphinx's fetch of the page
fails from disk), in headless Chromium."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from tinybook import build_book, search_page

pytestmark = pytest.mark.browser

BODY = "Paged attention keeps the KV cache in blocks; paged attention needs a block table.\n"
PAGES = {
    "index.md": "# Book\n\nThe chapters, in reading order.\n\n"
    "```{toctree}\nkernels\ndecode\npaged\nrouting\n```\n",
    # two pages whose titles hold one word of the query and whose text holds both, often
    "kernels.md": "# Attention kernels\n\n" + BODY * 3,
    "decode.md": "# Decode attention\n\n" + BODY * 3,
    "paged.md": "# PagedAttention and the block manager\n\nPaged attention: blocks mapped.\n"
    "\n## The block manager\n\nThe block manager hands out free blocks.\n",
    "routing.md": "# Routing and load balancing\n\nExperts and gates.\n\n## Balance\n\n"
    "Load balancing spreads tokens over experts.\n",
}
QUERIES = {"paged attention": "paged", "block manager": "paged", "load balancing": "routing"}


def test_the_page_titled_by_the_query_ranks_first(tmp_path: Path) -> None:
    if shutil.which("chromium") is None:
        pytest.skip("Debian's chromium is not installed (apt-get install chromium)")
    html, _ = build_book(tmp_path / "book", PAGES)
    found = search_page(html, list(QUERIES))
    for query, first in QUERIES.items():
        assert found[query] and found[query][0][0] == first, (query, found[query])
        # every result has a snippet, and the first one's holds the query
        assert all(snippet for _page, snippet in found[query]), (query, found[query])
        assert query in found[query][0][1].lower(), (query, found[query])
