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
