"""Search from disk ranks the page whose title is the query first, however it spells it
("paged attention" finds "PagedAttention and the block manager"), in headless Chromium."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from tinybook import build_book, search_results

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


def test_the_page_titled_by_the_query_ranks_first(tmp_path: Path) -> None:
    if shutil.which("chromium") is None:
        pytest.skip("Debian's chromium is not installed (apt-get install chromium)")
    html, _ = build_book(tmp_path / "book", PAGES)
    found = search_results(html, list(QUERIES))
    for query, first in QUERIES.items():
        assert found[query] and found[query][0] == first, (query, found[query])
