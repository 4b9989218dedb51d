"""The git layer's diffs and refs (:mod:`atlas.git.diff`, :mod:`atlas.git.refs`): the parsing
on plain bytes, the commands on a fixture repository."""

from __future__ import annotations

import pytest
from atlas.git.diff import (
    GitDiffError,
    TreeChange,
    blob_diff,
    is_binary_diff,
    parse_raw_diff,
    tree_changes,
)
from atlas.git.refs import delete_ref, rev_parse_commit, update_ref
from gitfixtures import Commit, git, make_repo

pytestmark = pytest.mark.usefixtures("fixture_git_config")

A, B, Z = "a" * 40, "b" * 40, "0" * 40


def test_parse_raw_diff_reads_every_record_kind() -> None:
    out = (
        (
            f":100644 100644 {A} {B} M\0pkg/mod.py\0"
            f":000000 100644 {Z} {B} A\0new file.py\0"
            f":100644 000000 {A} {Z} D\0gone.py\0"
            f":100644 100644 {A} {B} R087\0old/x.py\0new/x.py\0"
            f":100644 100644 {A} {A} C100\0src.py\0copy.py\0"
        ).encode()
        + b":100644 100644 "
        + f"{A} {B} M\0".encode()
        + b"caf\xe9.py\0"
    )
    assert parse_raw_diff(out) == [
        TreeChange("M", A, B, "pkg/mod.py", None),
        TreeChange("A", Z, B, "new file.py", None),
        TreeChange("D", A, Z, "gone.py", None),
        TreeChange("R", A, B, "old/x.py", "new/x.py"),
        TreeChange("C", A, A, "src.py", "copy.py"),
        TreeChange("M", A, B, "caf\udce9.py", None),  # bytes kept (surrogateescape)
    ]
    assert parse_raw_diff(b"") == []


def test_is_binary_diff() -> None:
    assert is_binary_diff(b"Binary files a/x and b/x differ\n")
    assert is_binary_diff(b"diff --git a/x b/x\nindex 1..2\nBinary files a/x and b/x differ\n")
    assert not is_binary_diff(b"@@ -1 +1 @@\n-Binary files\n+x\n")


def test_tree_changes_and_blob_diff_on_a_repository(tmp_path) -> None:
    text = "".join(f"line {n}\n" for n in range(1, 21))
    repo = make_repo(
        tmp_path / "up",
        [
            {"a.py": text, "b.py": "b\n", "bin.dat": b"\0\1\2"},
            Commit(
                files={"a.py": text.replace("line 3\n", "line three\n"), "bin.dat": b"\0\1\3"},
                renames={"b.py": "sub/b.py"},
            ),
        ],
    )
    old, new = repo.commits
    git_dir = repo.git_dir
    plain = tree_changes(git_dir, old, new)
    assert sorted((c.status, c.path) for c in plain) == [
        ("A", "sub/b.py"),
        ("D", "b.py"),
        ("M", "a.py"),
        ("M", "bin.dat"),
    ]
    renamed = tree_changes(git_dir, old, new, ["b.py", "sub/b.py"], renames=True)
    assert [(c.status, c.path, c.renamed_to) for c in renamed] == [("R", "b.py", "sub/b.py")]
    a = {c.path: c for c in plain}["a.py"]
    assert blob_diff(git_dir, a.old_blob, a.new_blob).count(b"\n@@ -3 +3 @@") == 1
    dat = {c.path: c for c in plain}["bin.dat"]
    assert blob_diff(git_dir, dat.old_blob, dat.new_blob) is None
    with pytest.raises(GitDiffError, match=r"^git diff-tree failed: \S"):
        tree_changes(git_dir, old, "f" * 40)
    with pytest.raises(GitDiffError) as caught:
        blob_diff(git_dir, a.old_blob, "f" * 40)
    assert caught.value.command == "diff" and caught.value.said


def test_refs_point_move_and_go(tmp_path) -> None:
    repo = make_repo(tmp_path / "up", [{"a.py": "1\n"}, {"a.py": "2\n"}], bare=True)
    old, new = repo.commits
    assert rev_parse_commit(repo.git_dir, "refs/atlas/x") is None
    assert update_ref(repo.git_dir, "refs/atlas/x", old)
    assert rev_parse_commit(repo.git_dir, "refs/atlas/x") == old
    assert rev_parse_commit(repo.git_dir, "HEAD") == new
    assert rev_parse_commit(repo.git_dir, "--all") is None  # a name, never an option
    tree = git(repo.git_dir, "rev-parse", f"{new}^{{tree}}")
    assert rev_parse_commit(repo.git_dir, tree) is None  # a tree is not a commit
    assert delete_ref(repo.git_dir, "refs/atlas/x")
    assert rev_parse_commit(repo.git_dir, "refs/atlas/x") is None
    assert delete_ref(repo.git_dir, "refs/atlas/x")  # already gone: nothing to do
    assert not update_ref(repo.git_dir, "refs/atlas/y", "f" * 40)  # no such object
