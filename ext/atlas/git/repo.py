"""What the book's own repository says: the registry of upstreams and the pins.

The registry is git itself (``.gitmodules`` gives each upstream's path and URL, the gitlink in
the index its pinned commit), both readable in a clone whose submodules were never initialised.
These are the queries the registry, the project-file checks, ``fetch`` and ``bump`` share;
each runs one git command through :mod:`atlas.git.process`.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from atlas.git.process import run

GITLINK_MODE = "160000"


class GitmodulesError(ValueError):
    """git cannot read ``.gitmodules``; ``said`` is git's message (it names the line)."""

    def __init__(self, path: Path, said: str) -> None:
        self.path, self.said = path, said
        super().__init__(f"{path} cannot be read by git: {said}")


def gitmodules(book_root: Path) -> dict[str, dict[str, str]]:
    """``submodule.NAME.KEY = VALUE`` entries of ``.gitmodules`` as NAME -> {KEY: VALUE}, read
    by git itself (empty when there is no such file). GitmodulesError when git cannot read it."""
    book_root = Path(book_root)
    if not (book_root / ".gitmodules").is_file():
        return {}
    proc = run("config", "-f", ".gitmodules", "-z", "--list", cwd=book_root)
    if proc.returncode != 0:
        raise GitmodulesError(book_root / ".gitmodules", proc.stderr.strip())
    found: dict[str, dict[str, str]] = {}
    for item in proc.stdout.split("\0"):
        key, _, value = item.partition("\n")
        if not key.startswith("submodule."):
            continue
        name, _, field = key[len("submodule.") :].rpartition(".")
        found.setdefault(name, {})[field] = value
    return found


def gitlinks(book_root: Path) -> dict[str, str] | None:
    """Path -> full SHA of every gitlink (mode 160000) in the book's index; None outside a
    git repository (then nothing pins anything)."""
    proc = run("ls-files", "--stage", "-z", cwd=Path(book_root))
    if proc.returncode != 0:
        return None
    links: dict[str, str] = {}
    for item in proc.stdout.split("\0"):
        meta, _, path = item.partition("\t")
        parts = meta.split()
        if len(parts) == 3 and parts[0] == GITLINK_MODE:
            links[path] = parts[1]
    return links


@lru_cache(maxsize=64)
def common_dir(book_root: Path) -> Path | None:
    """The book repository's common git dir (shared by worktrees), or None outside git."""
    proc = run("rev-parse", "--git-common-dir", cwd=book_root)
    if proc.returncode != 0:
        return None
    path = Path(proc.stdout.strip())
    return (path if path.is_absolute() else book_root / path).resolve()


def set_gitlink(book_root: Path, path: str, commit: str) -> str | None:
    """Stage ``path`` as a gitlink at ``commit``; None when done, else git's message. The
    submodule's folder is made (empty) when absent, as a clone makes it: without it a later
    ``git commit -a`` would record the gitlink as deleted."""
    book_root = Path(book_root)
    (book_root / path).mkdir(parents=True, exist_ok=True)
    proc = run(
        "update-index", "--add", "--cacheinfo", f"{GITLINK_MODE},{commit},{path}", cwd=book_root
    )
    return None if proc.returncode == 0 else proc.stderr.strip()


def past_pins(book_root: Path, path: str) -> set[str]:
    """Every commit the book's history (all branches) ever pinned the gitlink ``path`` to."""
    proc = run("log", "--all", "--format=", "--raw", "--no-abbrev", "--", path, cwd=Path(book_root))
    found = set(re.findall(r"\b[0-9a-f]{40}\b", proc.stdout)) if proc.returncode == 0 else set()
    return found - {"0" * 40}


def recent_refs(git_dir: Path, count: int = 12) -> list[str]:
    """The newest ``count`` tags and branches of a repository, ``NAME SHORTSHA`` each (newest
    first): what an error names as "commits that exist"."""
    proc = run(
        "for-each-ref", f"--count={count}", "--sort=-creatordate",
        "--format=%(refname:short) %(objectname:short=8)", "refs/tags", "refs/heads",
        git_dir=Path(git_dir),
    )  # fmt: skip
    return [line for line in proc.stdout.splitlines() if line.strip()]


def last_commit_time(repo: Path) -> str | None:
    """The Unix time of the repository's last commit (None outside git, or before any)."""
    try:
        proc = run("log", "-1", "--format=%ct", cwd=Path(repo))
    except OSError:
        return None
    return (proc.stdout.strip() or None) if proc.returncode == 0 else None
