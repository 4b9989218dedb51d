"""The book's own history, as git records it: one pass of ``git log`` over the first parents.

Why the first parents: the book's main line merges each helper's branch with ``--no-ff``, and
the merge's diff against its first parent is what that branch brought to the book, once; the
commits inside the branch would list the same change piecemeal. ``-m --first-parent`` gives
that diff for merges and the plain diff for other commits.

One ``git log -z --raw --numstat`` answers everything :mod:`atlas.history.events` asks (which
files were added, how many lines changed, how a gitlink moved); the one other git question is
what a small file held at a commit (:func:`file_at`), for the list of translated pages.
Hand-written parsing, because GitPython models no log with both ``--raw`` and ``--numstat``:
``Commit.stats`` runs one ``git diff --numstat`` per commit (425 processes for this book), and
``Commit.diff`` loses every change when one path is not UTF-8 (see :mod:`atlas.git.diff`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from atlas.git.process import GitStartError, ask, git_at

GITLINK = "160000"  # the mode git gives a submodule's pinned commit
COMMIT_MARK = "\x01"  # starts each commit's header in the log format below
LOG_FORMAT = f"--format={COMMIT_MARK}%H %ct %s"


@dataclass
class FileChange:
    """One path changed by a commit against its first parent."""

    path: str
    status: str  # A, M, D, R, C, T: the first letter git prints
    old_mode: str = ""
    new_mode: str = ""
    old_sha: str = ""
    new_sha: str = ""
    renamed_from: str | None = None
    added: int = 0  # lines; 0 for binary files and gitlinks
    deleted: int = 0

    @property
    def lines(self) -> int:
        return self.added + self.deleted

    @property
    def is_gitlink(self) -> bool:
        return GITLINK in (self.old_mode, self.new_mode)


@dataclass
class LoggedCommit:
    """One commit of the main line: its SHA, committer time (Unix, UTC) and subject."""

    sha: str
    time: int
    subject: str
    changes: list[FileChange] = field(default_factory=list)


@dataclass
class History:
    """The main line's commits, newest first. ``available`` is False outside a git repository
    (a tarball of the book) or without git; ``shallow`` when the clone's history is cut."""

    head: str | None
    commits: list[LoggedCommit]
    available: bool = True
    shallow: bool = False
    why_not: str = ""


def parse_log(out: str) -> list[LoggedCommit]:
    """The commits of ``git log -z -m --first-parent --raw --numstat`` in :data:`LOG_FORMAT`.

    With ``-z`` a raw record is ``:MODE MODE SHA SHA STATUS``, NUL, the path, NUL (a rename or
    copy: the source, NUL, the destination, NUL); a numstat record is ``ADDED\\tDELETED\\tPATH``
    and NUL, or for a rename ``ADDED\\tDELETED\\t``, NUL, source, NUL, destination, NUL."""
    commits: list[LoggedCommit] = []
    for block in out.split(COMMIT_MARK)[1:]:
        header, _, body = block.partition("\0")
        sha, time, subject = (header.split(" ", 2) + ["", ""])[:3]
        commit = LoggedCommit(sha=sha, time=int(time), subject=subject.strip())
        by_path: dict[str, FileChange] = {}
        tokens = [t.lstrip("\n") for t in body.split("\0")]
        i = 0
        while i < len(tokens):
            token = tokens[i]
            if token.startswith(":"):
                meta = token[1:].split()
                status = meta[4][0] if len(meta) > 4 else "M"
                if status in "RC":
                    source, path = tokens[i + 1], tokens[i + 2]
                    i += 3
                else:
                    source, path = None, tokens[i + 1]
                    i += 2
                change = FileChange(path, status, *meta[:4], renamed_from=source)
                by_path[path] = change
                commit.changes.append(change)
                continue
            parts = token.split("\t")
            if len(parts) == 3:
                added, deleted, path = parts
                if not path:  # a rename: the destination follows the source
                    path = tokens[i + 2] if i + 2 < len(tokens) else ""
                    i += 2
                if path in by_path:
                    by_path[path].added = int(added) if added.isdigit() else 0
                    by_path[path].deleted = int(deleted) if deleted.isdigit() else 0
            i += 1
        commits.append(commit)
    return commits


def read_history(book_root: Path) -> History:
    """The main line of the repository holding the book, newest first; never raises: a book
    outside git (or a machine without git) gets ``available=False`` and the reason."""
    runner = git_at(book_root)
    try:
        status, head, err = ask(runner, "rev-parse", "--verify", "-q", "HEAD")
        if status != 0:
            return History(None, [], available=False, why_not=err.strip() or "no commit yet")
        status, out, err = ask(
            runner,
            "log",
            "-z",
            "-m",
            "--first-parent",
            "--raw",
            "--numstat",
            "--no-abbrev",
            "-M",
            LOG_FORMAT,
            "HEAD",
        )
        if status != 0:
            return History(head.strip(), [], available=False, why_not=err.strip())
        _, shallow, _ = ask(runner, "rev-parse", "--is-shallow-repository")
    except GitStartError as exc:
        return History(None, [], available=False, why_not=str(exc))
    return History(head.strip(), parse_log(out), shallow=shallow.strip() == "true")


def file_at(book_root: Path, commit: str, path: str) -> str | None:
    """What ``path`` held at ``commit`` (None where it did not exist)."""
    status, out, _ = ask(git_at(book_root), "show", f"{commit}:{path}")
    return out if status == 0 else None
