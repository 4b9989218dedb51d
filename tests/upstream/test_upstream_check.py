"""``python -m atlas.upstream check`` and ``lock`` on fixture books (no Sphinx involved)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from atlas.upstream.check import main
from atlas.upstream.lock import load_lock, load_revs
from gitfixtures import FixtureUpstream, make_book

PAGE = """\
# Page

```{upstream} demo pkg/net.py:8-9
```

```{upstream} demo@v1 pkg/model.py::helper
:dedent:
```

See {upstream}`demo csrc/ops.cpp::ops::twice`.
"""


@pytest.fixture
def book(tmp_path, demo) -> Path:
    return make_book(
        tmp_path / "book", {"source/page.md": PAGE}, {"demo": FixtureUpstream(demo, pin=demo.head)}
    )


def run(capsys, *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().out


def rows(out: str) -> list[list[str]]:
    return [line.split() for line in out.splitlines() if line.startswith("source/")]


def test_check_reports_unlocked_then_lock_then_ok(capsys, book, stores, demo) -> None:
    code, out = run(capsys, "check", "--root", str(book), "--stores", str(stores))
    assert code == 1
    assert [r[1] for r in rows(out)] == ["3", "6", "10"]
    assert [r[-1] for r in rows(out)] == ["unlocked"] * 3
    assert re.search(r"run `\S+python\S* -m atlas\.upstream lock --root \S+` and commit", out)
    code, out = run(capsys, "lock", "--root", str(book), "--stores", str(stores))
    assert code == 0 and "3 entries (3 added" in out
    assert load_revs(book) == {"demo@v1": demo.tags["v1"]}
    code, out = run(capsys, "check", "--root", str(book), "--stores", str(stores))
    assert code == 0 and [r[-1] for r in rows(out)] == ["ok"] * 3
    assert "\n3 ok\n" in out
    # the line range is the one citation that nothing guards (the others cite symbols)
    assert [r[-2] for r in rows(out)] == ["NONE", "symbol", "symbol"]
    assert out.rstrip().endswith("so that a range that shifted is caught")
    assert "1 line-range citation(s) have no guard" in out


def test_check_offline_uses_lock_and_reports_missing(capsys, book, stores) -> None:
    run(capsys, "lock", "--root", str(book), "--stores", str(stores))
    shutil.rmtree(book / "snippets_cache", ignore_errors=True)
    code, out = run(capsys, "check", "--root", str(book), "--stores", str(book / "none"))
    assert code == 0 and [r[-1] for r in rows(out)] == ["missing"] * 3
    code, _ = run(capsys, "check", "--strict", "--root", str(book), "--stores", str(book / "none"))
    assert code == 1


def test_check_errors_and_drift(capsys, book, stores) -> None:
    run(capsys, "lock", "--root", str(book), "--stores", str(stores))
    lock = json.loads((book / "upstreams.lock").read_text())
    first = sorted(lock["citations"])[0]
    lock["citations"][first]["sha256"] = "f" * 64
    (book / "upstreams.lock").write_text(json.dumps(lock))
    page = book / "source" / "page.md"
    page.write_text(page.read_text() + "\n```{upstream} demo pkg/net.py:99\n```\n")
    code, out = run(capsys, "check", "--root", str(book), "--stores", str(stores), "--json")
    assert code == 1
    got = {(r["line"], r["status"]) for r in json.loads(out)}
    assert (12, "error") in got and sum(1 for _, s in got if s == "drift") == 1
    # lock refreshes the drifted entry and keeps the error out of the lock
    code, out = run(capsys, "lock", "--root", str(book), "--stores", str(stores))
    assert code == 1 and "1 refreshed" in out
    assert len(load_lock(book)) == 3


def test_lock_drops_uncited_entries(capsys, book, stores, demo) -> None:
    run(capsys, "lock", "--root", str(book), "--stores", str(stores))
    (book / "source" / "page.md").write_text("# Page\n\n{upstream}`demo pkg/net.py:8`\n")
    code, out = run(capsys, "lock", "--root", str(book), "--stores", str(stores))
    assert code == 0 and "(1 added, 0 refreshed, 3 dropped)" in out
    assert list(load_lock(book)) == [f"demo@{demo.head} pkg/net.py:8"]
    assert load_revs(book) == {}


def test_command_line_entry_point(book, stores) -> None:
    cmd = [sys.executable, "-m", "atlas.upstream", "check", "--root", str(book)]
    cmd += ["--stores", str(stores)]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert proc.returncode == 1 and "page" in proc.stdout and "citation" in proc.stdout
    assert proc.stderr == ""


def test_partial_clone_offline_falls_back_to_the_cache(
    capsys, book, stores, demo, tmp_path
) -> None:
    from gitfixtures import git

    partial = tmp_path / "partial"
    partial.mkdir()
    git(
        tmp_path, "clone", "-q", "--bare", "--filter=blob:none", demo.url, str(partial / "demo.git")
    )
    run(capsys, "lock", "--root", str(book), "--stores", str(stores))  # fills the cache too
    code, out = run(capsys, "check", "--root", str(book), "--stores", str(partial))
    assert code == 0 and [r[-1] for r in rows(out)] == ["ok"] * 3
    shutil.rmtree(book / "snippets_cache")
    code, out = run(capsys, "check", "--root", str(book), "--stores", str(partial))
    assert code == 0 and [r[-1] for r in rows(out)] == ["missing"] * 3
