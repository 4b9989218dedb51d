"""A wrong :contains: names the lines where its text is at the commit cited, and the selector
moved onto them: the fix is one edit."""

from __future__ import annotations

import pytest
from atlas.upstream.check import main as upstream_main
from atlas.upstream.resolve import ERROR, OK, Resolver
from gitfixtures import FixtureUpstream, make_book


@pytest.fixture
def resolver(tmp_path, demo, stores):
    book = make_book(
        tmp_path / "book", {"source/index.md": "# P\n"}, {"demo": FixtureUpstream(demo)}
    )
    res = Resolver(book, stores_root=stores)
    yield res
    for store in res._stores.values():
        if store is not None:
            store.close()


def test_wrong_contains_names_the_lines_where_the_text_is(resolver, demo) -> None:
    # pkg/net.py at the head: `def helper(x):` on line 8, `    scale = 2` on line 15
    sha = demo.head[:8]
    res = resolver.resolve("demo pkg/net.py:8-9", {"contains": "scale = 2"})
    assert res.status == ERROR
    assert res.message == (
        f":contains: 'scale = 2' is not in the selection (lines 8-9); in pkg/net.py at {sha} "
        "it occurs at line 15: cite :14-15 (every range moved by +6 lines)"
    )
    fixed = resolver.resolve("demo pkg/net.py:14-15", {"contains": "scale = 2"})
    assert fixed.status == OK, fixed.message
    # `def helper` on lines 8 and 31 (helper2), 31 in the gap: the smallest move covers it
    res = resolver.resolve("demo pkg/net.py:20-30,33", {"contains": "def helper"})
    assert "it occurs at lines 8, 31: cite :21-31,34 (every range moved by +1 lines)" in (
        res.message
    )


def test_contains_text_found_nowhere_or_outside_a_symbol(resolver, demo) -> None:
    res = resolver.resolve("demo pkg/net.py:8-9", {"contains": "no such text"})
    assert res.message.endswith(
        f"nor anywhere in pkg/net.py at {demo.head[:8]}: the guard's text is wrong, or the "
        "code it guards is gone; re-read the file at this commit"
    )
    res = resolver.resolve("demo pkg/net.py::helper", {"contains": "scale = 2"})
    assert res.message.endswith(
        "it occurs at line 15: cite the code that holds it, or fix the guard's text"
    )


def test_check_shows_which_line_ranges_have_no_guard(tmp_path, demo, stores, capsys) -> None:
    page = (
        "# P\n\n```{upstream} demo pkg/net.py:8-9\n:contains: def helper\n```\n\n"
        "```{upstream} demo pkg/net.py:14-15\n```\n\n{upstream}`demo pkg/net.py::helper`\n"
    )
    book = make_book(tmp_path / "b2", {"source/index.md": page}, {"demo": FixtureUpstream(demo)})
    upstream_main(["check", "--root", str(book), "--stores", str(stores)])
    out = capsys.readouterr().out
    guards = [line.split()[-2] for line in out.splitlines() if line.startswith("source/")]
    assert guards == ["contains", "NONE", "symbol"]
    assert out.splitlines()[0].split() == ["page", "line", "citation", "guard", "status"]
