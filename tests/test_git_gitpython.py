"""The git layer on GitPython keeps the book's rules: a partial clone's missing blob is one
clean "missing" (no fetch, no hang), git never prompts or pages, a forked worker never shares
its parent's git, and the answers GitPython gets wrong are not taken from it."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from atlas.git import process, repo
from atlas.git.diff import GitDiffError, blob_diff, tree_changes
from atlas.git.refs import delete_ref, rev_parse_commit, update_ref
from atlas.git.store import GitStore, MissingObject
from gitfixtures import Commit, FixtureUpstream, git, make_book, make_repo

pytestmark = pytest.mark.usefixtures("fixture_git_config")

QUICK_S = 30  # far above what a refused read takes (milliseconds), far below a network stall


def present(git_dir: Path) -> set[str]:
    """The objects a store holds, listed without fetching anything."""
    out = git(git_dir, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)")
    return set(out.split())


@pytest.fixture
def partial(tmp_path) -> tuple[Path, object]:
    """A bare blob-less partial clone of a two-commit upstream (its blobs all absent)."""
    up = make_repo(
        tmp_path / "up", [{"a.py": "one\n", "b.py": "b\n"}, {"a.py": "two\n", "b.py": "b\n"}]
    )
    clone = tmp_path / "partial.git"
    git(tmp_path, "clone", "-q", "--bare", "--filter=blob:none", up.url, str(clone))
    assert git(clone, "config", "remote.origin.promisor") == "true"
    return clone, up


def test_a_missing_blob_answers_missing_without_a_fetch(partial) -> None:
    clone, up = partial
    blob = git(up.path, "rev-parse", f"{up.head}:a.py")
    assert blob not in present(clone)
    store = GitStore(clone)
    try:
        started = time.monotonic()
        with pytest.raises(MissingObject):
            store.read_blob(up.head, "a.py")
        assert not store.has_object(blob)
        assert time.monotonic() - started < QUICK_S
        assert blob not in present(clone)  # the protocol.file.allow=always of the fixture lost
        # the store still answers, with a fresh git: trees are there, only blobs are missing
        assert store.tree_entry(up.head, "b.py")[1] == "blob"
    finally:
        store.close()


@pytest.mark.parametrize(
    "rule", [{"transports": False}, {"lazy_fetch": False}], ids=["transports", "lazy_fetch"]
)
def test_each_rule_alone_keeps_a_read_from_fetching(partial, rule) -> None:
    """Two locks, so that a git too old for ``GIT_NO_LAZY_FETCH`` is still kept from fetching;
    without either, this very read fetches the blob (the fixture allows file://)."""
    clone, up = partial
    blob = git(up.path, "rev-parse", f"{up.head}:a.py")
    env = process.git_env(**rule)
    proc = subprocess.run(
        ["git", "cat-file", "--batch"], input=f"{blob}\n".encode(), cwd=clone, env=env,
        capture_output=True, timeout=QUICK_S, check=False,
    )  # fmt: skip
    if rule == {"lazy_fetch": False} and b"lazy fetching disabled" not in proc.stderr:
        pytest.skip(f"this git ignores GIT_NO_LAZY_FETCH: {proc.stderr[-200:]!r}")
    assert not proc.stdout.startswith(f"{blob} blob".encode())
    assert blob not in present(clone)


def test_a_missing_blob_never_reaches_the_network(partial) -> None:
    """The promisor is an https remote that does not exist: a read that tried it would stall
    on the name or the connection; it is refused before that."""
    clone, up = partial
    git(clone, "config", "remote.origin.url", "https://atlas.invalid/nothing.git")
    store = GitStore(clone)
    try:
        started = time.monotonic()
        for _ in range(3):
            with pytest.raises(MissingObject):
                store.read_blob(up.head, "a.py")
        assert time.monotonic() - started < QUICK_S
    finally:
        store.close()


def test_diffs_of_a_partial_clone_fail_cleanly_without_a_fetch(partial) -> None:
    clone, up = partial
    old, new = up.commits
    olds, news = (git(up.path, "rev-parse", f"{c}:a.py") for c in (old, new))
    # the trees are all there: the raw diff needs no blob
    assert [c.path for c in tree_changes(clone, old, new)] == ["a.py"]
    started = time.monotonic()
    with pytest.raises(GitDiffError) as caught:
        blob_diff(clone, olds, news)
    assert caught.value.command == "diff" and caught.value.said
    assert time.monotonic() - started < QUICK_S
    assert not {olds, news} & present(clone)


def test_many_ambiguous_names_never_stop_git(tmp_path) -> None:
    """git writes the candidates of an ambiguous name on stderr (about 100 bytes each); a pipe
    nobody reads fills after a few hundred, and git would stop mid-answer."""
    store_dir = tmp_path / "many.git"
    git(tmp_path, "init", "-q", "--bare", str(store_dir))
    stream = b"".join(
        b"blob\ndata %d\n%s\n" % (len(body), body)
        for body in (f"blob {i}".encode() for i in range(3000))
    )
    git(store_dir, "fast-import", "--quiet", input=stream)
    shas = sorted(present(store_dir))
    prefix = next(a[:4] for a, b in zip(shas, shas[1:], strict=False) if a[:4] == b[:4])
    store = GitStore(store_dir)
    answers: list[bool] = []

    def ask_often() -> None:
        answers.extend(store.has_object(prefix) for _ in range(2000))

    worker = threading.Thread(target=ask_often, daemon=True)
    worker.start()
    worker.join(QUICK_S * 2)
    assert not worker.is_alive(), f"git stopped answering after {len(answers)} ambiguous names"
    try:
        assert answers == [False] * 2000
        with pytest.raises(LookupError, match="ambiguous"):
            store.read_object(prefix)
        assert store.read_object(shas[0])[0] == "blob"  # and it still reads
    finally:
        store.close()


# -- no prompt, no pager, no transport, in every git GitPython starts ---------------------------
def test_every_git_started_keeps_the_rules(tmp_path, monkeypatch) -> None:
    up = make_repo(tmp_path / "up", [{"a.py": "1\n"}])
    monkeypatch.setenv("GIT_PAGER", "less")  # the user's pager, and their wish for transfers
    count = int(os.environ["GIT_CONFIG_COUNT"])
    monkeypatch.setenv("GIT_CONFIG_COUNT", str(count + 2))
    monkeypatch.setenv(f"GIT_CONFIG_KEY_{count}", "core.pager")
    monkeypatch.setenv(f"GIT_CONFIG_VALUE_{count}", "less -R")
    monkeypatch.setenv(f"GIT_CONFIG_KEY_{count + 1}", "protocol.https.allow")
    monkeypatch.setenv(f"GIT_CONFIG_VALUE_{count + 1}", "always")
    with process.open_store(up.git_dir) as store, process.open_repo(up.path) as work:
        for runner in (store.git, work.git, process.git_at(up.path)):
            assert process.ask(runner, "var", "GIT_PAGER")[1].strip() == "cat"
            for transport in ("file", "https", "ssh"):
                got = process.ask(runner, "config", "--get", f"protocol.{transport}.allow")
                assert got[1].strip() == "never"
            assert runner.environment()["GIT_TERMINAL_PROMPT"] == "0"
            assert runner.environment()["GIT_NO_LAZY_FETCH"] == "1"


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs /proc")
def test_the_persistent_cat_file_runs_under_the_rules(tmp_path) -> None:
    up = make_repo(tmp_path / "up", [{"a.py": "1\n"}])
    store = GitStore(up.git_dir)
    try:
        assert store.read_blob(up.head, "a.py") == b"1\n"
        procs = [cmd.proc for cmd in store._persistent()]
        assert procs
        for proc in procs:
            env = dict(
                item.split("=", 1)
                for item in Path(f"/proc/{proc.pid}/environ").read_text().split("\0")
                if "=" in item
            )
            assert env["GIT_TERMINAL_PROMPT"] == "0" and env["GIT_PAGER"] == "cat"
            assert env["GIT_NO_LAZY_FETCH"] == "1"
            assert Path(env["GIT_DIR"]) == up.git_dir.resolve()
            keys = {env[f"GIT_CONFIG_KEY_{i}"]: env[f"GIT_CONFIG_VALUE_{i}"]
                    for i in range(int(env["GIT_CONFIG_COUNT"]))}  # fmt: skip
            assert keys["protocol.allow"] == "never" and keys["protocol.file.allow"] == "never"
    finally:
        store.close()


# -- forks (sphinx-build -j) ---------------------------------------------------------------------
@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_worker_reads_with_its_own_git_and_leaves_the_parents(tmp_path) -> None:
    up = make_repo(tmp_path / "up", [{"a.py": "parent\n", "b.py": "child\n"}])
    store = GitStore(up.git_dir)
    try:
        assert store.read_blob(up.head, "a.py") == b"parent\n"
        parents = {cmd.proc.pid for cmd in store._persistent()}
        pid = os.fork()
        if pid == 0:  # the worker: its own git, and it lets the parent's go untouched
            code = 1
            try:
                fine = store.read_blob(up.head, "b.py") == b"child\n"
                mine = {cmd.proc.pid for cmd in store._persistent()}
                store.close()
                gc.collect()
                code = 0 if fine and mine and not mine & parents else 2
            finally:
                sys.stdout.flush()
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        assert {cmd.proc.pid for cmd in store._persistent()} == parents
        assert store.read_blob(up.head, "b.py") == b"child\n"  # the parent's git still answers
    finally:
        store.close()


# -- what GitPython would get wrong, and is not asked ----------------------------------------------
def test_a_file_name_that_is_not_utf8_loses_no_change(tmp_path) -> None:
    """GitPython's ``Commit.diff`` returns an empty DiffIndex here (its reader thread fails on
    the name); the layer's own parser keeps every record."""
    odd = os.fsdecode(b"caf\xe9.py")
    up = make_repo(tmp_path / "up", [{"a.py": "1\n", odd: "x\n"}, {"a.py": "2\n", odd: "y\n"}])
    old, new = up.commits
    assert sorted(c.path for c in tree_changes(up.git_dir, old, new)) == ["a.py", odd]


def test_refs_survive_packing(tmp_path) -> None:
    """``git gc`` packs refs; GitPython reads and deletes them in ``packed-refs`` too."""
    up = make_repo(tmp_path / "up", [Commit({"a.py": "1\n"}, tags=["v1"]), {"a.py": "2\n"}])
    old, new = up.commits
    assert update_ref(up.git_dir, "refs/atlas/commits/old", old)
    git(up.path, "pack-refs", "--all")
    assert not (up.git_dir / "refs" / "atlas" / "commits" / "old").exists()
    assert rev_parse_commit(up.git_dir, "refs/atlas/commits/old") == old
    assert rev_parse_commit(up.git_dir, "v1") == old  # a tag, peeled to its commit
    assert delete_ref(up.git_dir, "refs/atlas/commits/old")
    assert rev_parse_commit(up.git_dir, "refs/atlas/commits/old") is None
    assert rev_parse_commit(up.git_dir, "HEAD") == new


@pytest.mark.parametrize("index", [["--index-version", "4"], ["--split-index"]])
def test_gitlinks_read_and_move_in_any_index_git_writes(tmp_path, index) -> None:
    """GitPython's ``IndexFile`` cannot read these indexes; git's ``ls-files`` can."""
    up = make_repo(tmp_path / "up", [{"f.py": "1\n"}])
    book = make_book(tmp_path / "book", {"conf.py": ""}, {"demo": FixtureUpstream(up, pin=up.head)})
    git(book, "update-index", *index)
    assert repo.gitlinks(book) == {"upstreams/demo": up.head}
    assert repo.set_gitlink(book, "upstreams/demo", "a" * 40) is None
    assert repo.gitlinks(book) == {"upstreams/demo": "a" * 40}


def test_the_common_dir_of_a_linked_worktree_is_the_main_repositorys(tmp_path) -> None:
    book = make_book(tmp_path / "book", {"conf.py": ""}, {})
    git(book, "worktree", "add", "-q", str(tmp_path / "other"))
    (tmp_path / "other" / "sub").mkdir()
    assert repo.common_dir(tmp_path / "other" / "sub") == (book / ".git").resolve()
    assert repo.common_dir(tmp_path) is None  # not inside a repository


def test_without_git_a_read_says_git_cannot_start(tmp_path) -> None:
    """GitPython's own check at import would fail the whole build; the read says why instead."""
    up = make_repo(tmp_path / "up", [{"a.py": "1\n"}])
    empty = tmp_path / "no-git-here"
    empty.mkdir()
    code = (
        "import sys\n"
        "from atlas.git.store import GitStore, GitStoreError\n"
        "try:\n"
        f"    GitStore({str(up.git_dir)!r}).read_blob({up.head!r}, 'a.py')\n"
        "except GitStoreError as exc:\n"
        "    print(exc)\n"
    )
    env = {**os.environ, "PATH": str(empty)}
    env.pop("GIT_PYTHON_REFRESH", None)
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("cannot start git: [Errno 2]")


def test_an_absent_object_is_missing_and_git_keeps_running(tmp_path) -> None:
    """git's "missing" answer is told from a git that died: the same cat-file answers on."""
    up = make_repo(tmp_path / "up", [{"a.py": "1\n"}])
    store = GitStore(up.git_dir)
    try:
        assert store.read_blob(up.head, "a.py") == b"1\n"
        before = {cmd.proc.pid for cmd in store._persistent()}
        with pytest.raises(MissingObject) as caught:
            store.read_object("f" * 40)
        assert str(caught.value) == f"object {'f' * 40} is not in {up.git_dir}"
        assert not store.has_object("f" * 40)
        assert {cmd.proc.pid for cmd in store._persistent()} == before
    finally:
        store.close()
