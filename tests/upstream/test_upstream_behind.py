"""A citation older than its upstream's pin is a warning at its page and line in every build
(``upstream.behind``, naming ``review``), unless the page records why it stays."""

from __future__ import annotations

import re
from pathlib import Path

from gitfixtures import FixtureUpstream
from upstream_demo import upstream_book


def build(make_app, root: Path, stores: Path, fresh: bool = False):
    app = make_app(
        "html", srcdir=root, freshenv=fresh, confoverrides={"atlas_upstreams_root": str(stores)}
    )
    app.build()
    return app, re.sub(r"\x1b\[[0-9;]*m", "", app.warning.getvalue())


def behind_lines(log: str) -> list[str]:
    return [line for line in log.splitlines() if "[upstream.behind]" in line]


def test_old_citations_warn_in_every_build_until_the_page_says_why(
    make_app, tmp_path, demo, stores
) -> None:
    v1 = demo.commits[0]
    old = v1[:12]
    page = (
        f"# P\n\n```{{upstream}} demo@{old} pkg/model.py:1\n```\n\n"
        f"See {{upstream}}`demo@{old} README.md`.\n\n"
        f"```{{upstream}} demo@{demo.head[:12]} pkg/net.py:1\n```\n"
    )
    book = upstream_book(
        tmp_path / "book", {"index.md": page}, {"demo": FixtureUpstream(demo, pin=demo.head)}
    )
    app, log = build(make_app, book, stores, fresh=True)
    found = behind_lines(log)
    assert len(found) == 2, log  # the pin itself is not behind
    assert re.search(r"index\.md:3: WARNING: upstream citation 'demo@[0-9a-f]+ pkg/model", found[0])
    assert "index.md:6: WARNING" in found[1]
    assert all("atlas.upstream review demo" in line for line in found)
    _, log = build(make_app, book, stores)  # nothing re-read: still said
    assert len(behind_lines(log)) == 2
    kept = page.replace("pkg/model.py:1\n", "pkg/model.py:1\n:behind: v1's layout is the point\n")
    kept += f"\n% upstream-behind: demo@{old} README.md -- the first README, on purpose\n"
    (book / "index.md").write_text(kept)
    app, log = build(make_app, book, stores)
    assert behind_lines(log) == [], log
    assert app.statuscode == 0


def test_a_tag_is_never_behind(make_app, tmp_path, demo, stores) -> None:
    page = "# P\n\n```{upstream} demo@v1 pkg/model.py:1\n```\n"
    book = upstream_book(
        tmp_path / "book", {"index.md": page}, {"demo": FixtureUpstream(demo, pin=demo.head)}
    )
    app, log = build(make_app, book, stores, fresh=True)
    assert behind_lines(log) == [] and app.statuscode == 0, log
