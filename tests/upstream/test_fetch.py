"""fetch: cited objects arrive with the least transfer, once; offline it fails fast and clean."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from atlas.git.store import GitStore
from atlas.upstream import fetch, partialclone
from gitfixtures import Commit, FixtureUpstream, git, git_env, make_book, make_repo

BIG = "".join(f"uncited_{n} = {n}\n" for n in range(2000))


pytestmark = pytest.mark.usefixtures("fixture_git_config")


@pytest.fixture
def up(tmp_path) -> object:
    return make_repo(
        tmp_path / "up",
        [
            Commit({"pkg/old.py": "old = 1\n", "pkg/a.py": "a = 0\n"}),
            Commit({"pkg/a.py": "a = 1\nb = 2\n", "pkg/big.py": BIG, "docs/x.md": "# x\n"}),
            Commit({"pkg/later.py": "later = 1\n"}),
        ],
    )


PAGE = """# P

```{{upstream}} up pkg/a.py:1-2
```

Prose {{upstream}}`up pkg/a.py:2` and {{upstream}}`up@{v0} pkg/old.py:1`, a missing
{{upstream}}`up pkg/nope.py:1`.
"""


@pytest.fixture
def book(tmp_path, up) -> Path:
    v0, v1, _ = up.commits
    return make_book(
        tmp_path / "book",
        {"source/index.md": PAGE.format(v0=v0)},
        {"up": FixtureUpstream(up, pin=v1, url=up.url)},
    )


def store(book: Path) -> Path:
    return book / ".git" / "atlas-upstreams" / "up.git"


def blob(up, commit: str, path: str) -> str:
    return git(up.path, "rev-parse", f"{commit}:{path}")


def main(book: Path, *argv: str, capsys) -> tuple[int, str]:
    rc = fetch.main(["fetch", "--root", str(book), *argv])
    return rc, capsys.readouterr().err


def test_fetch_brings_cited_blobs_only(book, up, capsys) -> None:
    v0, v1, v2 = up.commits
    rc, err = main(book, capsys=capsys)
    assert rc == 0, err
    gs = GitStore(store(book))
    try:
        assert gs.has_object(blob(up, v1, "pkg/a.py"))
        assert gs.has_object(blob(up, v0, "pkg/old.py"))  # an explicit @REV's commit too
        assert not gs.has_object(blob(up, v1, "pkg/big.py"))  # uncited: never transferred
        assert not gs.has_object(v2)  # no history beyond what is cited
        assert gs.read_blob(v1, "pkg/a.py") == b"a = 1\nb = 2\n"
    finally:
        gs.close()
    assert git(store(book), "config", "extensions.partialClone") == "origin"
    assert "2 commit(s) with trees, 2 blob(s)" in err
    assert "pkg/nope.py does not exist" in err
    assert "upstreams: 1/1 ready" in err


def test_second_run_transfers_nothing(book, capsys) -> None:
    assert main(book, capsys=capsys)[0] == 0
    size = partialclone.pack_bytes(store(book))
    rc, err = main(book, capsys=capsys)
    assert rc == 0
    assert "up to date" in err and "nothing transferred" in err
    assert partialclone.pack_bytes(store(book)) == size
    rc, err = main(book, "--if-needed", capsys=capsys)
    assert rc == 0 and err == ""


def test_least_transfer_against_a_full_clone(book, up, tmp_path, capsys) -> None:
    main(book, capsys=capsys)
    full = tmp_path / "full.git"
    git(tmp_path, "clone", "-q", "--bare", up.url, str(full))
    subprocess.run(["git", f"--git-dir={full}", "repack", "-adq"], check=True, env=git_env())
    assert partialclone.pack_bytes(store(book))[0] < partialclone.pack_bytes(full)[0] / 2


def test_interrupted_runs_are_recovered(book, up, capsys) -> None:
    v0, v1, _ = up.commits
    ours = store(book)
    # a first run killed while cloning leaves its temporary folder; a crash before this code
    # existed could leave an empty folder in place of the store
    ours.parent.mkdir(parents=True)
    (ours.parent / "up.git.tmp-999").mkdir()
    ours.mkdir()
    rc, err = main(book, capsys=capsys)
    assert rc == 0, err
    assert not (ours.parent / "up.git.tmp-999").exists()
    # a store holding the commit but not its trees (a pack cut short) is completed
    shutil.rmtree(ours)
    partialclone.create_store(ours, up.url)
    git(ours, "fetch", "-q", "--depth=1", "--filter=tree:0", "origin", f"{v1}:refs/x")
    assert partialclone.missing_commits(ours, [v1]) == [v1]
    rc, err = main(book, capsys=capsys)
    assert rc == 0, err
    assert partialclone.missing_commits(ours, [v1, v0]) == []
    assert GitStore(ours).read_blob(v1, "pkg/a.py") == b"a = 1\nb = 2\n"


def test_blob_the_remote_lacks_is_isolated(book, up, capsys) -> None:
    _, v1, _ = up.commits
    lost = blob(up, v1, "pkg/a.py")
    (up.path / ".git" / "objects" / lost[:2] / lost[2:]).unlink()
    rc, err = main(book, capsys=capsys)
    assert rc == 0
    assert f"the remote would not send blob {lost}" in err
    assert GitStore(store(book)).has_object(blob(up, up.commits[0], "pkg/old.py"))


def offline_book(tmp_path: Path, up) -> Path:
    return make_book(
        tmp_path / "offline",
        {"source/index.md": PAGE.format(v0=up.commits[0])},
        # a port nothing listens on: the connection is refused, as with no network
        {"up": FixtureUpstream(up, pin=up.commits[1], url="http://127.0.0.1:9/up.git")},
    )


def test_offline_fails_fast_one_line_per_upstream(tmp_path, up, capsys) -> None:
    book = offline_book(tmp_path, up)
    rc, err = main(book, capsys=capsys)
    assert rc == 1
    lines = err.strip().splitlines()
    assert len(lines) == 2 and lines[0].startswith("up FAILED: ") and "127.0.0.1" in lines[0]
    # no empty store is left behind: a reader would take it for one that lacks the commits
    assert not store(book).exists()
    assert "Traceback" not in err


def test_if_needed_offline_says_one_line_and_succeeds(tmp_path, up) -> None:
    book = offline_book(tmp_path, up)
    proc = subprocess.run(
        [sys.executable, "-m", "atlas.upstream", "fetch", "--if-needed"],
        cwd=book,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0
    assert proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and "building with placeholders" in proc.stderr
    assert "up: " in proc.stderr and "127.0.0.1" in proc.stderr


def test_unknown_name_is_refused(book, capsys) -> None:
    rc, err = main(book, "nope", capsys=capsys)
    assert rc == 2 and "unknown upstream(s) nope" in err


def test_short_rev_left_by_a_bump_is_expanded_from_past_pins(tmp_path, up, capsys) -> None:
    v0, v1, _ = up.commits
    book = make_book(
        tmp_path / "book",
        {"source/index.md": f"# P\n\n{{upstream}}`up@{v0[:10]} pkg/old.py:1`\n"},
        {"up": FixtureUpstream(up, pin=v0, url=up.url)},
    )
    git(book, "update-index", "--cacheinfo", f"160000,{v1},upstreams/up")
    git(book, "commit", "-q", "-m", "bump up")
    rc, err = main(book, capsys=capsys)
    assert rc == 0, err
    assert GitStore(store(book)).read_blob(v0, "pkg/old.py") == b"old = 1\n"


def test_tag_revs_are_fetched_by_name(tmp_path, capsys) -> None:
    repo = make_repo(
        tmp_path / "tagged",
        [Commit({"a.py": "one = 1\n"}, tags=["v1.0"]), Commit({"a.py": "two = 2\n"})],
    )
    book = make_book(
        tmp_path / "book",
        {"source/index.md": "# P\n\n{upstream}`up@v1.0 a.py:1` and {upstream}`up a.py:1`\n"},
        {"up": FixtureUpstream(repo, pin=repo.commits[1], url=repo.url)},
    )
    rc, err = main(book, capsys=capsys)
    assert rc == 0, err
    gs = GitStore(store(book))
    assert gs.resolve("v1.0") == repo.commits[0]
    assert gs.read_blob("v1.0", "a.py") == b"one = 1\n"
    assert gs.read_blob(repo.commits[1], "a.py") == b"two = 2\n"


def test_fetch_brings_the_files_labs_read_at_the_pin(book, up, capsys) -> None:
    """A lab that runs upstream code reads files no page cites; the stores never fetch on a
    read, so ``fetch`` must bring them: every labkit string literal shaped like a path that the
    pin's tree has. One that the tree lacks is nobody's file and is passed over in silence."""
    _, v1, _ = up.commits
    harness = book / "ext" / "atlas" / "labkit" / "demo" / "harness.py"
    harness.parent.mkdir(parents=True)
    harness.write_text('READS = ("docs/x.md", "pkg/absent.py")\nLABEL = "not a path"\n')
    rc, err = main(book, capsys=capsys)
    assert rc == 0, err
    gs = GitStore(store(book))
    try:
        assert gs.read_blob(v1, "docs/x.md") == b"# x\n"  # read by a lab, cited by no page
        assert not gs.has_object(blob(up, v1, "pkg/big.py"))  # still never transferred
    finally:
        gs.close()
    assert "absent.py" not in err
