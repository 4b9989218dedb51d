"""check, lock, check: once ``make lock`` has recorded a citation that ``make check`` reported
"not locked", the next ``make check`` passes without re-reading the page (the ledger must not
replay a problem that the lock check reports live, every build, at the end)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from atlas.upstream.check import main as upstream_main
from gitfixtures import FixtureUpstream
from upstream_demo import upstream_book

ONE = "# P\n\n```{upstream} demo pkg/net.py:8-9\n```\n"
TWO = ONE + "\nSee {upstream}`demo pkg/net.py:1`.\n"


@pytest.fixture
def book(tmp_path, demo) -> Path:
    return upstream_book(
        tmp_path / "book", {"index.md": ONE}, {"demo": FixtureUpstream(demo, pin=demo.head)}
    )


def build(make_app, root: Path, stores: Path, frozen: bool = False, fresh: bool = False):
    overrides = {"atlas_upstreams_root": str(stores)}
    if frozen:
        overrides["atlas_upstream_lock"] = "frozen"
    app = make_app("html", srcdir=root, freshenv=fresh, confoverrides=overrides)
    app.build()
    return app, re.sub(r"\x1b\[[0-9;]*m", "", app.warning.getvalue())


def test_check_lock_check_passes_once_locked(make_app, book, stores, capsys) -> None:
    app, _ = build(make_app, book, stores, fresh=True)
    assert app.statuscode == 0
    (book / "index.md").write_text(TWO)  # a new citation, not in the lock
    app, log = build(make_app, book, stores, frozen=True)  # make check
    assert app.statuscode == 1 and "not locked" in log
    rc = upstream_main(["lock", "--root", str(book), "--source", ".", "--stores", str(stores)])
    assert rc == 0 and "1 added" in capsys.readouterr().out  # make lock
    app, log = build(make_app, book, stores, frozen=True)  # make check again, nothing re-read
    assert "not locked" not in log, log
    assert app.statuscode == 0, log
    app, log = build(make_app, book, stores, frozen=True)  # and the one after
    assert app.statuscode == 0 and "not locked" not in log, log
