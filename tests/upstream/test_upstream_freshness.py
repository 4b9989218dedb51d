"""The freshness page: each upstream's pin and date, how far it is behind the newest commit
known here, and the citations still behind it with their reasons."""

from __future__ import annotations

import re

from atlas.upstream.freshness import freshness, how_far
from gitfixtures import FixtureUpstream
from upstream_demo import upstream_book


def test_freshness_rows_and_the_generated_page(make_app, tmp_path, demo, stores) -> None:
    v1, v2, v3 = demo.commits
    page = (
        "# P\n\n```{upstream-freshness}\n```\n\n"
        f"```{{upstream}} demo@{v1[:12]} pkg/model.py:1\n:behind: the v1 layout is the point\n```\n"
    )
    book = upstream_book(
        tmp_path / "book", {"index.md": page}, {"demo": FixtureUpstream(demo, pin=v2)}
    )
    (row,) = freshness(book, stores, ".")
    assert row.name == "demo" and row.pin == v2
    assert row.newest == v3 and row.commits_behind == 1  # the tags v1 and v3 are known
    far = r"1 commits, \d+ days behind [0-9a-f]{10} \(\d{4}-\d\d-\d\d\)"
    assert re.fullmatch(far, how_far(row))
    assert row.behind == [f"index.md:6 demo@{v1[:12]} pkg/model.py:1 (the v1 layout is the point)"]
    app = make_app("html", srcdir=book, confoverrides={"atlas_upstreams_root": str(stores)})
    app.build()
    html = (book / "_build" / "html" / "index.html").read_text()
    assert "upstream-freshness" in html and "the v1 layout is the point" in html
    assert v2[:10] in html and app.statuscode == 0


def test_the_page_is_read_again_only_when_its_table_changes(
    make_app, tmp_path, demo, stores
) -> None:
    """A no-op build reads nothing (a page re-read every build drags the index pages with it);
    a citation left behind elsewhere changes the table, and the freshness page is read again."""
    v1, v2, _ = demo.commits

    def cite(reason: str) -> str:
        return f"```{{upstream}} demo@{v1[:12]} pkg/model.py:1\n:behind: {reason}\n```\n"

    pages = {
        "index.md": "# P\n\n```{toctree}\nother\n```\n\n```{upstream-freshness}\n```\n",
        "other.md": "# O\n\n" + cite("the v1 layout is the point"),
    }
    book = upstream_book(tmp_path / "book", pages, {"demo": FixtureUpstream(demo, pin=v2)})

    def build() -> list[str]:
        read: list[str] = []
        app = make_app("html", srcdir=book, confoverrides={"atlas_upstreams_root": str(stores)})
        app.connect("env-before-read-docs", lambda app, env, docs: read.extend(docs))
        app.build()
        return sorted(read)

    assert build() == ["index", "other"]
    assert build() == []
    (book / "other.md").write_text("# O\n\n" + cite("kept for the old API"))
    assert build() == ["index", "other"]
    html = (book / "_build" / "html" / "index.html").read_text()
    assert "kept for the old API" in html
