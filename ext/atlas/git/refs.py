"""Refs of an upstream's object store: which commit a name points to, and moving a ref.

``drift``/``bump`` name the commits they fetch with refs of their own (``refs/atlas/...``) so
that git keeps them; these read and write those refs through GitPython on the store's
``Repo`` (:func:`atlas.git.process.open_store`, every transport forbidden, lazy fetches off: a
store is never fetched into here): ``Repo.rev_parse`` and ``Reference.create``/``delete``,
which read and write the ref files and ``packed-refs`` as git does, under git's lock files.
"""

from __future__ import annotations

from pathlib import Path

from git import Commit, Reference
from git.exc import BadName, BadObject

from atlas.git.process import open_store
from atlas.git.store import FULL_SHA

# What GitPython raises for a name that is no ref or no object, or no commit once peeled.
_NOT_FOUND = (BadName, BadObject, ValueError, IndexError, OSError)


def rev_parse_commit(git_dir: Path, name: str) -> str | None:
    """The full SHA of the commit a ref (or any name git accepts) points to; None when it
    points to nothing or to no commit. A name is never an option (``--all`` is looked up as a
    ref, and there is none)."""
    with open_store(git_dir) as repo:
        try:
            found = repo.rev_parse(f"{name}^{{commit}}")
        except _NOT_FOUND:
            return None
    sha = found.hexsha if isinstance(found, Commit) else ""
    return sha if FULL_SHA.match(sha) else None


def update_ref(git_dir: Path, ref: str, sha: str) -> bool:
    """Point ``ref`` at object ``sha`` (created when absent); whether it was done (not when
    the store holds no such object)."""
    with open_store(git_dir) as repo:
        try:
            Reference.create(repo, ref, sha, force=True)
        except _NOT_FOUND:
            return False
    return True


def delete_ref(git_dir: Path, ref: str) -> bool:
    """Delete ``ref``, loose or packed; whether it is gone (a ref that is already gone is no
    failure)."""
    with open_store(git_dir) as repo:
        try:
            Reference.delete(repo, ref)
        except _NOT_FOUND:
            return False
    return True
