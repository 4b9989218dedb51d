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

from atlas.git.process import run as run_git
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
) -> list[tuple[str, str, str, str, str | None]]:
    """(status, old blob, new blob, path, renamed-to path) of every file changed old -> new."""
    args = ["diff-tree", "-r", "-z", "--raw", "--no-abbrev"]
    args += ["-M", "--find-renames=50%"] if renames else ["--no-renames"]
    args += [old, new, "--", *(paths or [])]
    proc = run_git(*args, git_dir=git_dir, text=False, lazy_fetch=False)
    if proc.returncode != 0:
        raise DriftError(f"git diff-tree failed: {proc.stderr.decode(errors='replace').strip()}")
    fields = proc.stdout.decode("utf-8", "surrogateescape").split("\0")
    out = []
    i = 0
    while i < len(fields) - 1:
        meta = fields[i].lstrip(":").split()
        if len(meta) < 5:
            i += 1
            continue
        status = meta[4][0]
        if status in "RC":
            out.append((status, meta[2], meta[3], fields[i + 1], fields[i + 2]))
            i += 3
        else:
            out.append((status, meta[2], meta[3], fields[i + 1], None))
            i += 2
    return out


def blob_hunks(git_dir: Path, old_blob: str, new_blob: str) -> list[Hunk] | None:
    """The ``-U0`` hunks between two blobs; None when git sees binary content."""
    proc = run_git(
        "diff",
        "-U0",
        "--no-color",
        "--no-ext-diff",
        "--no-textconv",
        old_blob,
        new_blob,
        git_dir=git_dir,
        text=False,
        lazy_fetch=False,
    )
    if proc.returncode not in (0, 1):
        raise DriftError(f"git diff failed: {proc.stderr.decode(errors='replace').strip()}")
    if b"\nBinary files " in proc.stdout or proc.stdout.startswith(b"Binary files "):
        return None
    return parse_hunks(proc.stdout)


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
    changes = {c[3]: c for c in tree_changes(git_dir, old, new)} if gone else {}
    added = [c for c in changes.values() if c[0] == "A"]
    for path in gone:  # not at the new commit under this name: look for it under another
        blob = before[path]
        exact = [a for a in added if a[2] == blob]
        exact.sort(key=lambda a: (os.path.basename(a[3]) != os.path.basename(path), a[3]))
        if exact:
            moves[path] = FileMove(path, blob, exact[0][3], blob)
            continue
        base, folder = os.path.basename(path), os.path.dirname(path)
        similar = [
            a[3] for a in added if os.path.basename(a[3]) == base or os.path.dirname(a[3]) == folder
        ]
        if similar and path in changes:
            renames[path] = similar[:50]
    if renames:
        wanted = {moves[p].old_blob for p in renames} | {
            changes[c][2] for cands in renames.values() for c in cands
        }
        if ours:
            partialclone.fetch_blobs(git_dir, sorted(w for w in wanted if w), None, quick=False)
        pathspec = sorted(set(renames) | {c for cands in renames.values() for c in cands})
        for status, _, new_blob, src, dst in tree_changes(git_dir, old, new, pathspec, True):
            if status == "R" and src in renames and dst:
                moves[src] = FileMove(src, moves[src].old_blob, dst, new_blob)
    return moves
