"""drift and bump: every way a cited file can change between two pins, asserted on the page."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from atlas.code.select import apply_options, decode, select, selected_text
from atlas.upstream import drift
from atlas.upstream.citations import scan_book
from atlas.upstream.lock import LockEntry, load_lock, lock_key, save_lock, text_hash
from gitfixtures import Commit, FixtureUpstream, Symlink, git, make_book, make_repo

A_V1 = """import os


def one():
    x = 1
    y = 2
    return x + y


def two():
    a = 3
    b = 4
    return a * b
"""
# three lines inserted above one(), and a line inside two() edited
A_V2 = A_V1.replace("import os\n", "import os\nimport re\nimport sys\n\n").replace("b = 4", "b = 5")
B = "def bee():\n    return 'b'\n\nVALUE = 1\n"
D_V1 = "".join(f"line_{n} = {n}\n" for n in range(1, 13))
D_V2 = D_V1.replace("line_12 = 12", "line_12 = 'twelve'")  # a similar, renamed file
C_V1 = "def alpha():\n    return 1\n\n\ndef beta():\n    return 2\n\n\ndef delta():\n    return 4\n"
C_V2 = "def alpha():\n    return 1\n\n\ndef gamma():\n    return 3\n\n\ndef beta():\n    return 2\n"


pytestmark = pytest.mark.usefixtures("fixture_git_config")


@pytest.fixture
def up(tmp_path) -> object:
    return make_repo(
        tmp_path / "up",
        [
            Commit({"pkg/a.py": A_V1.replace("y = 2", "y = 0")}),
            Commit(
                {
                    "pkg/a.py": A_V1,
                    "pkg/b.py": B,
                    "pkg/c.py": C_V1,
                    "pkg/d.py": D_V1,
                    "pkg/gone.py": "x = 1\ny = 2\n",
                }
            ),
            Commit(
                {
                    "pkg/a.py": A_V2,
                    "pkg/c.py": C_V2,
                    "pkg/gone.py": None,
                    "pkg/d.py": None,
                    "pkg/e.py": D_V2,
                },
                renames={"pkg/b.py": "pkg/sub/b2.py"},
            ),
        ],
    )


def page(v0: str, v1: str) -> str:
    return f"""# Page

Prose cites {{upstream}}`up pkg/a.py:5-7` and keeps going.

```{{upstream}} up pkg/a.py:5-7
:emphasize-lines: 6
:caption: one
```

```{{upstream}} up pkg/a.py:12-13
```

```{{upstream}} up pkg/b.py:1-2
```

```{{upstream}} up pkg/d.py:1-3
```

```{{upstream}} up pkg/c.py::beta
:emphasize-lines: 6
```

```{{upstream}} up pkg/c.py::delta
```

```{{upstream}} up pkg/gone.py:1-2
```

```{{upstream}} up@{v1[:12]} pkg/a.py:5-7
```

```{{upstream}} up@{v0} pkg/a.py:5-7
```
"""


def expected(v0: str, v1: str, v2: str) -> str:
    old = v1[:10]
    return f"""# Page

Prose cites {{upstream}}`up pkg/a.py:8-10` and keeps going.

```{{upstream}} up pkg/a.py:8-10
:emphasize-lines: 9
:caption: one
```

```{{upstream}} up@{old} pkg/a.py:12-13
```

```{{upstream}} up pkg/sub/b2.py:1-2
```

```{{upstream}} up pkg/e.py:1-3
```

```{{upstream}} up pkg/c.py::beta
:emphasize-lines: 10
```

```{{upstream}} up@{old} pkg/c.py::delta
```

```{{upstream}} up@{old} pkg/gone.py:1-2
```

```{{upstream}} up@{v2[:12]} pkg/a.py:8-10
```

```{{upstream}} up@{v0} pkg/a.py:5-7
```
"""


@pytest.fixture
def book(tmp_path, up) -> Path:
    v0, v1, _ = up.commits
    return make_book(
        tmp_path / "book",
        {"source/index.md": page(v0, v1)},
        {"up": FixtureUpstream(up, pin=v1, url=up.url)},
    )


def gitlink(book: Path) -> str:
    return git(book, "ls-files", "-s", "upstreams/up").split()[1]


def run(book: Path, *argv: str, capsys) -> tuple[int, str, str]:
    rc = drift.main([argv[0], "--root", str(book), *argv[1:]])
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_bump_rewrites_each_citation_as_its_code_moved(book, up, capsys) -> None:
    v0, v1, v2 = up.commits
    rc, out, _ = run(book, "bump", "up", v2, capsys=capsys)
    assert rc == 0
    text = (book / "source/index.md").read_text()
    assert text.splitlines() == expected(v0, v1, v2).splitlines()
    assert gitlink(book) == v2
    git(book, "commit", "-q", "-a", "-m", "bump")  # the pin survives a commit -a
    assert git(book, "ls-tree", "HEAD", "upstreams/up").split()[2] == v2
    assert "3 unchanged" not in out and "summary: 0 unchanged, 6 moved, 1 changed, 2 gone" in out
    assert "1 citation(s) with an explicit @REV left alone" in out
    # the changed range is shown with the diff of its lines, numbered as upstream
    assert "-    b = 4" in out and "+    b = 5" in out
    # the rewritten page still cites existing text at the new pin (what the build checks)
    for site in scan_book(book):
        assert site.spec is not None


def test_dry_run_and_drift_change_nothing(book, up, capsys) -> None:
    v0, v1, v2 = up.commits
    before = (book / "source/index.md").read_text()
    rc, out, _ = run(book, "bump", "up", v2, "--dry-run", capsys=capsys)
    assert rc == 0 and "moved" in out
    rc, out2, _ = run(book, "drift", "up", capsys=capsys)  # default: the remote's HEAD (v2)
    assert rc == 0
    assert out2 == out
    assert (book / "source/index.md").read_text() == before
    assert gitlink(book) == v1
    assert git(book, "status", "--porcelain", "--", "source", "upstreams.lock") == ""


def test_json_records(book, up, capsys) -> None:
    v0, v1, v2 = up.commits
    rc, out, _ = run(book, "drift", "up", v2, "--json", capsys=capsys)
    assert rc == 0
    records = json.loads(out)
    by_line = {(r["line"], r["kind"]): r for r in records}
    lines = (book / "source/index.md").read_text().splitlines()

    def line_of(text: str) -> int:
        return next(i + 1 for i, line in enumerate(lines) if line.endswith(text))

    assert set(records[0]) == {"page", "line", "kind", "old", "new", "status", "detail"}
    assert by_line[(3, "role")] == {
        "page": "source/index.md",
        "line": 3,
        "kind": "role",
        "old": "up pkg/a.py:5-7",
        "new": "up pkg/a.py:8-10",
        "status": "moved",
        "detail": "",
    }
    assert by_line[(line_of("a.py:12-13"), "directive")]["status"] == "changed"
    assert by_line[(line_of("a.py:12-13"), "directive")]["new"] == f"up@{v1[:10]} pkg/a.py:12-13"
    assert (
        by_line[(line_of("c.py::beta"), "directive")]["status"] == "moved"
    )  # beta moved down, same text
    assert by_line[(line_of("c.py::beta"), "directive")]["new"] == "up pkg/c.py::beta"
    assert [r["status"] for r in records].count("gone") == 2
    assert all(
        r["line"] != line_of(f"up@{v0} pkg/a.py:5-7") for r in records
    )  # the @v0 citation is not this pin's


def test_unchanged_when_nothing_cited_moved(tmp_path, capsys) -> None:
    repo = make_repo(tmp_path / "up", [{"a.py": A_V1}, {"other.py": "x = 1\n"}])
    book = make_book(
        tmp_path / "book",
        {"source/index.md": "# P\n\n```{upstream} up a.py:5-7\n```\n"},
        {"up": FixtureUpstream(repo, pin=repo.commits[0], url=repo.url)},
    )
    rc, out, _ = run(book, "bump", "up", repo.commits[1], capsys=capsys)
    assert rc == 0 and "summary: 1 unchanged, 0 moved, 0 changed, 0 gone" in out
    assert (book / "source/index.md").read_text() == "# P\n\n```{upstream} up a.py:5-7\n```\n"
    assert gitlink(book) == repo.commits[1]


def test_bump_moves_lock_entries(book, up, capsys) -> None:
    v0, v1, v2 = up.commits

    def digest(text: str, sel: str) -> str:
        spec = next(s.spec for s in scan_book(book) if str(s.spec).endswith(sel))
        return text_hash(
            selected_text(apply_options(select(decode(text.encode(), "a.py"), spec), {}))
        )

    moved = lock_key("up", v1, "pkg/a.py", "5-7")
    changed = lock_key("up", v1, "pkg/a.py", "12-13")
    save_lock(
        book,
        {
            moved: LockEntry("0" * 40, digest(A_V1, "a.py:5-7")),
            changed: LockEntry("1" * 40, digest(A_V1, "a.py:12-13")),
        },
    )
    rc, _, err = run(book, "bump", "up", v2, capsys=capsys)
    assert rc == 0
    lock = load_lock(book)
    assert moved not in lock  # no citation reads it any more
    assert changed in lock  # the changed citation still reads the old pin
    new = lock[lock_key("up", v2, "pkg/a.py", "8-10")]
    assert new.sha256 == digest(A_V1, "a.py:5-7")
    assert new.blob == git(up.path, "rev-parse", f"{v2}:pkg/a.py")
    # citations the lock never saw are selected afresh at the new pin
    assert lock[lock_key("up", v2, "pkg/e.py", "1-3")].sha256 == text_hash(
        "line_1 = 1\nline_2 = 2\nline_3 = 3"
    )
    assert "lock entries moved" in err


def test_bad_input_is_one_line(book, up, capsys) -> None:
    rc, _, err = run(book, "drift", "nope", capsys=capsys)
    assert rc == 2 and err.startswith("drift: unknown upstream 'nope'")
    rc, _, err = run(book, "bump", "up", "--", "--upload-pack=x", capsys=capsys)
    assert rc == 2 and "Traceback" not in err and err.count("\n") == 1
    rc, _, err = run(book, "bump", "up", "deadbeef00", capsys=capsys)
    assert rc == 2 and "full SHA" in err


def test_cli_entry_point(book, up) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "atlas.upstream", "drift", "up", up.commits[2], "--root", str(book)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "summary: 0 unchanged, 6 moved, 1 changed, 2 gone" in proc.stdout


def test_symlinked_path_is_followed_at_both_pins(tmp_path, capsys) -> None:
    repo = make_repo(
        tmp_path / "up",
        [
            {"real.py": "a = 1\nb = 2\n", "link.py": Symlink("real.py")},
            {"real.py": "import os\n\na = 1\nb = 2\n"},
        ],
    )
    book = make_book(
        tmp_path / "book",
        {"source/index.md": "# P\n\n{upstream}`up link.py:1-2`\n"},
        {"up": FixtureUpstream(repo, pin=repo.commits[0], url=repo.url)},
    )
    rc, out, _ = run(book, "bump", "up", repo.commits[1], capsys=capsys)
    assert rc == 0, out
    assert (book / "source/index.md").read_text() == "# P\n\n{upstream}`up link.py:3-4`\n"


def test_a_citation_left_behind_keeps_its_emphasis_in_old_numbering(tmp_path, capsys) -> None:
    # 5-7 alone would move to 8-10, but 12-13 changed: the citation stays at the old pin, and
    # its :emphasize-lines: must keep counting in the old pin's numbering
    repo = make_repo(tmp_path / "up", [{"a.py": A_V1}, {"a.py": A_V2}])
    page_text = "# P\n\n```{upstream} up a.py:5-7,12-13\n:emphasize-lines: 6\n```\n"
    book = make_book(
        tmp_path / "book",
        {"source/index.md": page_text},
        {"up": FixtureUpstream(repo, pin=repo.commits[0], url=repo.url)},
    )
    rc, out, _ = run(book, "bump", "up", repo.commits[1], capsys=capsys)
    assert rc == 0 and "summary: 0 unchanged, 0 moved, 1 changed, 0 gone" in out
    old = repo.commits[0][:10]
    assert (book / "source/index.md").read_text() == page_text.replace("up a.py", f"up@{old} a.py")
