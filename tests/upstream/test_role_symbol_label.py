"""The inline role on a symbol reads path::symbol; its lines are in the title and the link."""

from __future__ import annotations

import re
from html import unescape as html_unescape
from pathlib import Path

from gitfixtures import FixtureUpstream
from upstream_demo import upstream_book

PAGE = (
    "# P\n\nThe forward pass is {upstream}`demo pkg/net.py::Model.forward`; the module's "
    "first lines are {upstream}`demo pkg/net.py:8-9`.\n"
)


def test_symbol_role_shows_path_and_symbol(make_app, tmp_path, demo, stores) -> None:
    root = upstream_book(
        tmp_path / "book", {"index.md": PAGE}, {"demo": FixtureUpstream(demo, pin=demo.head)}
    )
    app = make_app(
        "html", srcdir=root, freshenv=True, confoverrides={"atlas_upstreams_root": str(stores)}
    )
    app.build()
    assert app.statuscode == 0
    html = (Path(app.outdir) / "index.html").read_text(encoding="utf-8")
    link = re.search(r'<a class="[^"]*upstream-ref[^"]*" href="([^"]+)" title="([^"]+)">'
                     r'<code[^>]*><span class="pre">([^<]+)</span>', html)  # fmt: skip
    assert link, html
    href, title, label = link.groups()
    assert label == "pkg/net.py::Model.forward"
    assert html_unescape(title) == f"demo@{demo.head[:8]} · pkg/net.py · L23–L28"
    assert href.endswith(f"/blob/{demo.head}/pkg/net.py#L23-L28")
    # a line range keeps its short label
    assert '<span class="pre">net.py:L8–L9</span>' in html
