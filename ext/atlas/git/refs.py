"""Refs of an upstream's object store: which commit a name points to, and moving a ref.

``drift``/``bump`` name the commits they fetch with refs of their own (``refs/atlas/...``) so
that git keeps them; these are the git commands that read and write those refs, run
through :mod:`atlas.git.process` with lazy fetches off (a store is never fetched into here).
"""

from __future__ import annotations

from pathlib import Path

from atlas.git.process import run
from atlas.git.store import FULL_SHA


def rev_parse_commit(git_dir: Path, name: str) -> str | None:
    """The full SHA of the commit a ref (or any name git accepts) points to; None when it
    points to nothing or to no commit. ``--end-of-options``: a name is never an option."""
    args = ("rev-parse", "--verify", "--quiet", "--end-of-options", f"{name}^{{commit}}")
    proc = run(*args, git_dir=git_dir, text=False, lazy_fetch=False)
    out = proc.stdout.decode().strip()
    return out if proc.returncode == 0 and FULL_SHA.match(out) else None


def update_ref(git_dir: Path, ref: str, sha: str) -> bool:
    """Point ``ref`` at object ``sha`` (created when absent); whether git did it."""
    proc = run("update-ref", ref, sha, git_dir=git_dir, text=False, lazy_fetch=False)
    return proc.returncode == 0


def delete_ref(git_dir: Path, ref: str) -> bool:
    """Delete ``ref``; whether git agreed (a ref that is already gone is no failure)."""
    proc = run("update-ref", "-d", ref, git_dir=git_dir, text=False, lazy_fetch=False)
    return proc.returncode == 0
