"""Searching the Chinese edition in headless Chromium, opened from disk, finds the right pages,
each with a snippet of its Chinese text holding the query."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from i18n_books import Built, build_both, copy_book
from tinybook import search_page

QUERIES = {"注意力": "attention", "流水线并行": "pipeline", "KV cache": "kv-cache"}


@pytest.mark.browser
def test_searching_the_chinese_edition_finds_the_right_pages(tmp_path: Path) -> None:
    if shutil.which("chromium") is None:
        pytest.skip("Debian's chromium is not installed (apt-get install chromium)")
    built: Built = build_both(copy_book(tmp_path), tmp_path / "_build")
    assert built.codes == {"en": 0, "zh_CN": 0}, built.logs
    found = {q: rows[:3] for q, rows in search_page(built.html / "zh", list(QUERIES)).items()}
    for query, page in QUERIES.items():
        assert page in [name for name, _ in found[query]], (query, found[query])
        # each result has a snippet of the Chinese text, and one at least shows the query (a
        # page may hold it in its title only); the stale-units banner is no snippet
        snippets = [snippet for _, snippet in found[query]]
        assert all(snippets) and any(query.lower() in s.lower() for s in snippets), found[query]
        assert not any("译文待更新" in s for s in snippets), found[query]
