"""A page whose title other pages share names its chapter in the browser tab and the search
results ("Problems: HPC"), not in the sidebar (issue 44)."""

from __future__ import annotations

import json
from pathlib import Path

from tinybook import build_book

PAGES = {
    "index.md": "# Book\n\n```{toctree}\n:caption: Parts\n\nhpc/index\nserving/index\n```\n",
    "hpc/index.md": "# HPC\n\n```{toctree}\nproblems\n```\n",
    "hpc/problems.md": "# Problems\n\nAn HPC question.\n",
    "serving/index.md": "# Serving\n\n```{toctree}\nproblems\n```\n",
    "serving/problems.md": "# Problems\n\nA serving question.\n",
}


def test_shared_titles_name_their_chapter_in_tabs_and_search(tmp_path: Path) -> None:
    html, _ = build_book(tmp_path / "book", PAGES)
    hpc = (html / "hpc" / "problems.html").read_text(encoding="utf-8")
    assert "<title>Problems: HPC - " in hpc
    assert "<h1>Problems" in hpc  # the page itself keeps its heading
    assert "<title>Problems: Serving - " in (html / "serving/problems.html").read_text()
    assert "<title>HPC - " in (html / "hpc/index.html").read_text()  # a unique title is kept
    index = (html / "searchindex.js").read_text(encoding="utf-8")
    titles = json.loads(index[index.index("(") + 1 : index.rindex(")")])["titles"]
    assert "Problems: HPC" in titles and "Problems: Serving" in titles
    sidebar = (html / "index.html").read_text(encoding="utf-8")
    assert "Problems: HPC" not in sidebar  # the toctree shows the chapter around it already
