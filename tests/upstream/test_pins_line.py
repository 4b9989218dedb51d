"""Under a page that cites upstream code, the pins its citations were verified at; a page that
cites nothing says nothing."""

from __future__ import annotations

from gitfixtures import FixtureUpstream
from upstream_demo import upstream_book


def test_a_citing_page_names_its_pin_and_a_plain_page_none(make_app, tmp_path, demo, stores):
    _v1, v2, _v3 = demo.commits
    pages = {
        "index.md": "# P\n\n```{toctree}\nplain\n```\n\n```{upstream} demo pkg/model.py:1\n```\n",
        "plain.md": "# Plain\n\nNo code here.\n",
    }
    book = upstream_book(tmp_path / "book", pages, {"demo": FixtureUpstream(demo, pin=v2)})
    app = make_app("html", srcdir=book, confoverrides={"atlas_upstreams_root": str(stores)})
    app.build()
    html = book / "_build" / "html"
    cited = (html / "index.html").read_text()
    assert f"Citations verified at: <code>demo</code> {v2[:7]}</p>" in cited
    assert "Citations verified at" not in (html / "plain.html").read_text()
