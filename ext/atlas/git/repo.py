"""What the book's own repository says: the registry of upstreams and the pins.

The registry is git itself (``.gitmodules`` gives each upstream's path and URL, the gitlink in
the index its pinned commit), both readable in a clone whose submodules were never initialised.
These are the queries the registry, the project-file checks, ``fetch`` and ``bump`` share, all
through GitPython (:mod:`atlas.git.process`: no prompt, no pager, no transport): ``Repo`` for
the common dir (``Repo.common_dir``) and the last commit (``Repo.head``), and GitPython's
command methods (``Git.config``, ``Git.ls_files``, ...) where its object model has no faithful
answer, each said below.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from git.exc import GitCommandNotFound, InvalidGitRepositoryError, NoSuchPathError

from atlas.git.process import GitStartError, ask, git_at, open_repo, open_store

GITLINK_MODE = "160000"


def head_and_prefix(root: Path) -> tuple[str | None, str]:
    """The commit checked out at ``root`` (None outside git or before a first commit) and the
    folder ``root`` is in from the repository's top ("" or "book/"; "" outside git). The
    checkout's links and the changelog ask it once a build each."""
    runner = git_at(root)
    try:
        status, head, _ = ask(runner, "rev-parse", "--verify", "-q", "HEAD")
        found, prefix, _ = ask(runner, "rev-parse", "--show-prefix")
    except GitStartError:
        return None, ""
    return (head.strip() if status == 0 else None), (prefix.strip() if found == 0 else "")


class GitmodulesError(ValueError):
    """git cannot read ``.gitmodules``; ``said`` is git's message (it names the line)."""

    def __init__(self, path: Path, said: str) -> None:
        self.path, self.said = path, said
        super().__init__(f"{path} cannot be read by git: {said}")


def gitmodules(book_root: Path) -> dict[str, dict[str, str]]:
    """``submodule.NAME.KEY = VALUE`` entries of ``.gitmodules`` as NAME -> {KEY: VALUE}, read
    by git itself (empty when there is no such file). GitmodulesError when git cannot read it.

    ``git config -f`` (``Git.config``), not GitPython's ``GitConfigParser``: that parser takes
    what git refuses (a broken ``[submodule "x`` header reads as a key without a value, a value
    with an unterminated quote as text), and the registry must be what git reads."""
    book_root = Path(book_root)
    if not (book_root / ".gitmodules").is_file():
        return {}
    status, out, err = ask(git_at(book_root), "config", "-f", ".gitmodules", "-z", "--list")
    if status != 0:
        raise GitmodulesError(book_root / ".gitmodules", err.strip())
    found: dict[str, dict[str, str]] = {}
    for item in out.split("\0"):
        key, _, value = item.partition("\n")
        if not key.startswith("submodule."):
            continue
        name, _, field = key[len("submodule.") :].rpartition(".")
        found.setdefault(name, {})[field] = value
    return found


def gitlinks(book_root: Path) -> dict[str, str] | None:
    """Path -> full SHA of every gitlink (mode 160000) in the book's index; None outside a
    git repository (then nothing pins anything).

    ``git ls-files`` (``Git.ls_files``), not GitPython's ``IndexFile``: that reads index
    versions 1 to 3 only and fails on a split index, both of which git writes on a
    contributor's clone (``feature.manyFiles``, ``core.splitIndex``); ``ls-files`` also gives
    paths relative to the book's folder."""
    status, out, _ = ask(git_at(Path(book_root)), "ls-files", "--stage", "-z")
    if status != 0:
        return None
    links: dict[str, str] = {}
    for item in out.split("\0"):
        meta, _, path = item.partition("\t")
        parts = meta.split()
        if len(parts) == 3 and parts[0] == GITLINK_MODE:
            links[path] = parts[1]
    return links


@lru_cache(maxsize=64)
def common_dir(book_root: Path) -> Path | None:
    """The book repository's common git dir (shared by worktrees: ``Repo.common_dir``), or
    None outside git."""
    try:
        with open_repo(book_root) as repo:
            return Path(repo.common_dir).resolve()
    except (InvalidGitRepositoryError, NoSuchPathError):
        return None


def set_gitlink(book_root: Path, path: str, commit: str) -> str | None:
    """Stage ``path`` as a gitlink at ``commit``; None when done, else git's message. The
    submodule's folder is made (empty) when absent, as a clone makes it: without it a later
    ``git commit -a`` would record the gitlink as deleted.

    ``git update-index`` (``Git.update_index``), not GitPython's ``IndexFile.add``/``write``:
    that rewrites the whole index from its own model, which cannot read a version-4 or split
    index, where git changes the one entry."""
    book_root = Path(book_root)
    (book_root / path).mkdir(parents=True, exist_ok=True)
    entry = f"{GITLINK_MODE},{commit},{path}"
    status, _, err = ask(git_at(book_root), "update-index", "--add", "--cacheinfo", entry)
    return None if status == 0 else err.strip()


def past_pins(book_root: Path, path: str) -> set[str]:
    """Every commit the book's history (all branches) ever pinned the gitlink ``path`` to.

    One ``git log --raw`` (``Git.log``): GitPython's ``iter_commits`` would read the gitlink
    from every commit's tree, object by object, to say the same."""
    args = ("--all", "--format=", "--raw", "--no-abbrev", "--", path)
    status, out, _ = ask(git_at(Path(book_root)), "log", *args)
    found = set(re.findall(r"\b[0-9a-f]{40}\b", out)) if status == 0 else set()
    return found - {"0" * 40}


def recent_refs(git_dir: Path, count: int = 12) -> list[str]:
    """The newest ``count`` tags and branches of a repository, ``NAME SHORTSHA`` each (newest
    first): what an error names as "commits that exist".

    One ``git for-each-ref`` (``Git.for_each_ref``): GitPython's ``Repo.refs`` would read every
    ref's object (tag or commit) to sort them by date."""
    try:
        with open_store(Path(git_dir)) as repo:
            _, out, _ = ask(
                repo.git, "for-each-ref", f"--count={count}", "--sort=-creatordate",
                "--format=%(refname:short) %(objectname:short=8)", "refs/tags", "refs/heads",
            )  # fmt: skip
    except (InvalidGitRepositoryError, NoSuchPathError):
        return []
    return [line for line in out.splitlines() if line.strip()]


def last_commit_time(repo: Path) -> str | None:
    """The Unix time of the repository's last commit (``Repo.head.commit``; None outside git,
    before any commit, or without git)."""
    try:
        with open_repo(Path(repo)) as opened:
            return str(opened.head.commit.committed_date)
    except (InvalidGitRepositoryError, NoSuchPathError, GitCommandNotFound, OSError, ValueError):
        return None
