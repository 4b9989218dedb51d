"""What git says changed between two commits of an object store, or between two blobs.

Two questions, each one git command run by GitPython on the store's ``Repo``
(:func:`atlas.git.process.open_store`, under the read rules) and parsed here:
:func:`tree_changes` (``diff-tree --raw``: the files changed, added, deleted or renamed between
two commits) and :func:`blob_diff` (``diff -U0`` of two blobs: the hunks a cited range is
renumbered through). Neither fetches: a partial clone that lacks an object makes git fail (every
transport is forbidden), and :class:`GitDiffError` carries what git said, for the caller to
explain.

Hand-written, because GitPython's own does not do it: the raw records' parser
(:func:`parse_raw_diff`). ``Commit.diff`` runs the same ``diff-tree -z --raw -M``, but its
``DiffIndex`` decodes the output as strict UTF-8 in a reader thread: one file name that is not
UTF-8 anywhere in the diff makes that thread fail, and ``Commit.diff`` returns an empty index,
every change lost, no error (GitPython 3.2.1). A drift report would then call a changed file
unchanged. ``Diffable.diff`` has no blob-to-blob diff either (it runs ``diff-tree``, which takes
trees), so :func:`blob_diff` asks ``git diff`` through ``Repo.git``.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from atlas.git.process import ask, open_store


class GitDiffError(RuntimeError):
    """git could not diff; ``said`` is its message (``str()`` names the command too)."""

    def __init__(self, command: str, said: str) -> None:
        self.command, self.said = command, said
        super().__init__(f"git {command} failed: {said}")


class TreeChange(NamedTuple):
    """One file changed between two commits, as ``diff-tree --raw`` reports it."""

    status: str  # A, D, M, T, R (renamed), C (copied), ...: the first letter git prints
    old_blob: str  # all zeros when the file was added
    new_blob: str  # all zeros when the file was deleted
    path: str  # the path at the old commit (for a rename, the source)
    renamed_to: str | None  # the destination of a rename or copy, else None


def parse_raw_diff(out: bytes) -> list[TreeChange]:
    """The records of ``git diff-tree -r -z --raw --no-abbrev`` output.

    With ``-z`` each record is ``:MODE MODE SHA SHA STATUS`` then NUL, the path, NUL, and for a
    rename or copy a second path and NUL; paths are kept byte for byte (surrogateescape).
    """
    fields = out.decode("utf-8", "surrogateescape").split("\0")
    changes = []
    i = 0
    while i < len(fields) - 1:
        meta = fields[i].lstrip(":").split()
        if len(meta) < 5:
            i += 1
            continue
        status = meta[4][0]
        if status in "RC":
            changes.append(TreeChange(status, meta[2], meta[3], fields[i + 1], fields[i + 2]))
            i += 3
        else:
            changes.append(TreeChange(status, meta[2], meta[3], fields[i + 1], None))
            i += 2
    return changes


def _git(git_dir: Path, command: str, *args: str) -> tuple[int, bytes, str]:
    """(status, stdout bytes, stderr) of ``git COMMAND ARGS`` on a store, through GitPython's
    ``Repo.git``."""
    with open_store(git_dir) as repo:
        return ask(repo.git, command, *args, text=False)


def tree_changes(
    git_dir: Path, old: str, new: str, paths: list[str] | None = None, renames: bool = False
) -> list[TreeChange]:
    """Every file changed between commits ``old`` and ``new`` (under ``paths`` when given).

    ``renames``: git's similarity rename detection (50%) on, which reads the candidates' blobs;
    off, a rename is a deletion and an addition. GitDiffError when git fails.
    """
    args = ["-r", "-z", "--raw", "--no-abbrev"]
    args += ["-M", "--find-renames=50%"] if renames else ["--no-renames"]
    args += [old, new, "--", *(paths or [])]
    status, out, err = _git(git_dir, "diff-tree", *args)
    if status != 0:
        raise GitDiffError("diff-tree", err.strip())
    return parse_raw_diff(out)


def is_binary_diff(out: bytes) -> bool:
    """Whether ``git diff`` output says the two sides are binary (then it shows no hunks)."""
    return b"\nBinary files " in out or out.startswith(b"Binary files ")


def blob_diff(git_dir: Path, old_blob: str, new_blob: str) -> bytes | None:
    """git's ``-U0`` diff of two blobs (no colour, no external or text-conversion driver), or
    None when git sees binary content. GitDiffError when git fails."""
    args = ("-U0", "--no-color", "--no-ext-diff", "--no-textconv", old_blob, new_blob)
    status, out, err = _git(git_dir, "diff", *args)
    if status not in (0, 1):
        raise GitDiffError("diff", err.strip())
    return None if is_binary_diff(out) else out
