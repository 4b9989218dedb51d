"""What changed between two commits of an upstream, and where each cited file went.

A cited path is looked up at both commits; one that is gone at the new commit is searched for
under another name, first as the same blob (an exact rename), then through git's similarity
rename detection. :func:`blob_hunks` is git's line diff of one file, which :mod:`.carry`
renumbers cited ranges through.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from atlas.git import diff
from atlas.git.diff import TreeChange
from atlas.git.store import GitStore, MissingObject, UnsafePath
from atlas.upstream import partialclone
from atlas.upstream.drift.model import DriftError
from atlas.upstream.linemap import Hunk, parse_hunks


@dataclass
class FileMove:
    """A cited file at the old commit and where it is at the new one (path None: gone)."""

    old_path: str
    old_blob: str | None
    new_path: str | None
    new_blob: str | None


def tree_changes(
    git_dir: Path, old: str, new: str, paths: list[str] | None = None, renames: bool = False
) -> list[TreeChange]:
    """Every file changed old -> new (:func:`atlas.git.diff.tree_changes`); DriftError with
    git's message when git cannot diff the two commits."""
    try:
        return diff.tree_changes(git_dir, old, new, paths, renames)
    except diff.GitDiffError as exc:
        raise DriftError(f"git {exc.command} failed: {exc.said}") from None


def blob_hunks(git_dir: Path, old_blob: str, new_blob: str) -> list[Hunk] | None:
    """git's ``-U0`` hunks between two blobs; None when git sees binary content."""
    try:
        out = diff.blob_diff(git_dir, old_blob, new_blob)
    except diff.GitDiffError as exc:
        raise DriftError(f"git {exc.command} failed: {exc.said}") from None
    return None if out is None else parse_hunks(out)


def follow_files(
    git_dir: Path, old: str, new: str, paths: set[str], ours: bool
) -> dict[str, FileMove]:
    """Where every cited path went: same path, modified, renamed (exact or similar), gone.

    Rename detection needs the blobs of the candidates; only files added with the same name,
    or in the same folder, are candidates, so their blobs are all that is fetched for it.
    """

    def blob_at(store: GitStore, commit: str, path: str) -> str | None:
        for _ in range(8):  # a symlink on the way needs its own blob to be followed
            try:
                entry = store.tree_entry(commit, path)
            except (UnsafePath, LookupError):
                return None
            except MissingObject as exc:
                sha = partialclone.missing_id(str(exc))
                if not (ours and sha):
                    raise
                partialclone.fetch_blobs(git_dir, [sha], None, quick=False)
                continue
            return entry[2] if entry and entry[1] == "blob" else None
        return None

    store = GitStore(git_dir)
    try:
        before = {p: blob_at(store, old, p) for p in sorted(paths)}
        after = {p: blob_at(store, new, p) for p in sorted(paths)}
    except MissingObject as exc:
        raise DriftError(f"the trees of a commit are incomplete: {exc}") from None
    finally:
        store.close()
    moves: dict[str, FileMove] = {}
    renames: dict[str, list[str]] = {}
    gone = [p for p in sorted(paths) if before[p] and not after[p]]
    for path in sorted(paths):
        moves[path] = FileMove(path, before[path], path if after[path] else None, after[path])
    changes = {c.path: c for c in tree_changes(git_dir, old, new)} if gone else {}
    added = [c for c in changes.values() if c.status == "A"]
    for path in gone:  # not at the new commit under this name: look for it under another
        blob = before[path]
        exact = [a for a in added if a.new_blob == blob]
        exact.sort(key=lambda a: (os.path.basename(a.path) != os.path.basename(path), a.path))
        if exact:
            moves[path] = FileMove(path, blob, exact[0].path, blob)
            continue
        base, folder = os.path.basename(path), os.path.dirname(path)
        similar = [
            a.path
            for a in added
            if os.path.basename(a.path) == base or os.path.dirname(a.path) == folder
        ]
        if similar and path in changes:
            renames[path] = similar[:50]
    if renames:
        wanted = {moves[p].old_blob for p in renames} | {
            changes[c].new_blob for cands in renames.values() for c in cands
        }
        if ours:
            partialclone.fetch_blobs(git_dir, sorted(w for w in wanted if w), None, quick=False)
        pathspec = sorted(set(renames) | {c for cands in renames.values() for c in cands})
        for status, _, new_blob, src, dst in tree_changes(git_dir, old, new, pathspec, True):
            if status == "R" and src in renames and dst:
                moves[src] = FileMove(src, moves[src].old_blob, dst, new_blob)
    return moves
