"""A frozen lock equals the book's citations both ways: a stale entry and a citation that is
not locked are each named, apart from wrong citations, with one command that fixes them; that
command works as printed."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from pathlib import Path

import pytest
from atlas.upstream.check import main as upstream_main
from atlas.upstream.lock import LockError, load_lock
from gitfixtures import FixtureUpstream
from upstream_demo import upstream_book

REPO = Path(__file__).resolve().parents[2]
TWO = "# P\n\n```{upstream} demo pkg/net.py:8-9\n```\n\nSee {upstream}`demo pkg/net.py:1`.\n"
ONE = "# P\n\n```{upstream} demo pkg/net.py:8-9\n```\n"


@pytest.fixture
def book(tmp_path, demo) -> Path:
    return upstream_book(
        tmp_path / "book", {"index.md": TWO}, {"demo": FixtureUpstream(demo, pin=demo.head)}
    )


def build(make_app, root: Path, stores: Path, frozen: bool = False, fresh: bool = False):
    overrides = {"atlas_upstreams_root": str(stores)}
    if frozen:
        overrides["atlas_upstream_lock"] = "frozen"
    app = make_app("html", srcdir=root, freshenv=fresh, confoverrides=overrides)
    app.build()
    return app, re.sub(r"\x1b\[[0-9;]*m", "", app.warning.getvalue())


def here(book: Path, stores: Path) -> list[str]:
    """The fixture book keeps its pages at its root."""
    return ["--root", str(book), "--source", ".", "--stores", str(stores)]


def printed_command(log: str) -> list[str]:
    commands = set(re.findall(r"run `([^`]+)`", log))
    assert len(commands) == 1, commands
    return shlex.split(commands.pop())


def test_stale_entry_fails_a_frozen_build_even_when_nothing_is_reread(
    make_app, book, stores
) -> None:
    app, log = build(make_app, book, stores, fresh=True)
    assert app.statuscode == 0 and len(load_lock(book)) == 2
    (book / "index.md").write_text(ONE)  # a citation removed: its entry goes stale
    app, log = build(make_app, book, stores)
    assert (
        app.statuscode == 0
        and "upstreams.lock: 1 entry that no page cites" in app._status.getvalue()
    )
    app, log = build(make_app, book, stores, frozen=True)  # `make check` right after `make html`
    assert "0 added, 0 changed, 0 removed" in app._status.getvalue()
    assert app.statuscode == 1
    stale = [line for line in log.splitlines() if "[upstream.stale]" in line]
    assert len(stale) == 1
    assert re.search(
        r"upstreams\.lock:\d+: ERROR: stale entry: no page cites demo@[0-9a-f]{40} pkg/net\.py:1; "
        r"run `[^`]+ -m atlas\.upstream lock --root [^`]+` to drop it and commit upstreams\.lock",
        stale[0],
    ), stale[0]
    assert "upstreams.lock does not match the book: 1 lock entry is stale" in log
    assert "are wrong" not in log
    # the printed command works as printed, and then the frozen build passes
    env = {"ATLAS_UPSTREAMS_ROOT": str(stores), "PATH": "/usr/bin:/bin"}
    proc = subprocess.run(printed_command(log), capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "1 dropped" in proc.stdout
    app, log = build(make_app, book, stores, frozen=True)
    assert app.statuscode == 0, log


def test_citation_not_locked_is_reported_apart_from_wrong_ones(make_app, book, stores) -> None:
    build(make_app, book, stores, fresh=True)
    (book / "index.md").write_text(TWO + "\n```{upstream} demo pkg/net.py:20-21\n```\n\n"
                                   "{upstream}`demo pkg/net.py:999`\n")  # fmt: skip
    app, log = build(make_app, book, stores, frozen=True)
    assert app.statuscode == 1
    unlocked = [line for line in log.splitlines() if "[upstream.unlocked]" in line]
    assert len(unlocked) == 1 and "index.md:8: ERROR: upstream citation not locked: " in unlocked[0]
    assert "the lock is frozen; run `" in unlocked[0]
    assert "1 upstream citation(s) are wrong" in log  # the range past the end, and only it
    assert "upstreams.lock does not match the book: 1 citation is not locked" in log
    # the page still shows the unlocked citation's code
    assert "L20–L21" in (Path(app.outdir) / "index.html").read_text(encoding="utf-8")


def test_check_names_stale_entries_and_the_command(book, stores, capsys) -> None:
    assert upstream_main(["lock", *here(book, stores)]) == 0
    (book / "index.md").write_text(ONE)
    capsys.readouterr()
    code = upstream_main(["check", *here(book, stores)])
    out = capsys.readouterr().out
    assert code == 1
    assert "stale: 1 upstreams.lock entry that no page cites" in out
    assert re.search(r"upstreams\.lock:\d+  demo@[0-9a-f]{40} pkg/net\.py:1", out)
    assert "-m atlas.upstream lock --root" in out and "1 ok, 1 stale" in out
    code = upstream_main(["check", *here(book, stores), "--json"])
    rows = json.loads(capsys.readouterr().out)
    assert [r["status"] for r in rows] == ["ok", "stale"]


def test_a_corrupt_lock_is_rebuilt_by_the_command_its_message_prints(book, stores, capsys) -> None:
    assert upstream_main(["lock", *here(book, stores)]) == 0
    lock = book / "upstreams.lock"
    lock.write_text(lock.read_text() + "<<<<<<< HEAD\n")
    with pytest.raises(LockError) as caught:
        load_lock(book)
    assert caught.value.line == lock.read_text().count("\n")
    assert "not a valid lock (Extra data); restore it with `git checkout -- upstreams.lock`" in str(
        caught.value
    )
    capsys.readouterr()
    assert upstream_main(["lock", *here(book, stores)]) == 0
    assert "rebuilding it from the pages" in capsys.readouterr().err
    assert len(load_lock(book)) == 2


def test_make_lock_runs_the_lock_command() -> None:
    proc = subprocess.run(["make", "-n", "lock"], cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 0
    assert ".venv/bin/python -m atlas.upstream lock" in proc.stdout
