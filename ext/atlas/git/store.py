"""Read git objects straight from an object store: no checkout, no process per read.

All reads of one store go through GitPython: a ``git.Repo`` opened under the read rules
(:func:`atlas.git.process.open_store`), whose odb (``GitCmdObjectDB``) and ``Git`` keep git's
persistent ``cat-file --batch`` (objects, ``Git.get_object_data``) and ``--batch-check``
(headers, ``Git.get_object_header``) running, one pair per store and process. Trees are parsed
by GitPython (``tree_entries_from_data``, which also refuses entries that alias ``.git``), so
modes, hence symlinks, are known; commits are GitPython's ``Commit`` objects, resolved once.
Names only ever reach git through those pipes, never as command-line arguments, and are
validated first (:func:`check_path`, :func:`check_rev`): nothing a citation says can act as a
git option or leave the tree.

A partial clone offline lacks blobs. The store's git runs with lazy fetches off and every
transport forbidden (:mod:`atlas.git.process`), so for a blob it lacks ``cat-file`` stops at
once ("could not fetch ... from promisor remote") instead of fetching or hanging: the read
becomes one :class:`MissingObject` carrying what git said, and the next read starts a fresh
``cat-file``.

Hand-written here, because GitPython has nothing for it: following symlinks inside the tree
(GitPython's ``Tree`` lookup stops at a link), the refusal of paths and revs that could act as
options (:func:`check_path`), telling "missing" from "ambiguous" from "git died" (GitPython
raises one ``ValueError`` for all three, quoting git's answer; ``tests/test_git_gitpython.py``
fails if a new GitPython quotes it otherwise), and emptying the stderr pipe GitPython gives its
``cat-file`` and never reads (:func:`_drain`).
"""

from __future__ import annotations

import os
import posixpath
import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from git import Commit, Object, Repo
from git.exc import GitCommandNotFound, InvalidGitRepositoryError, NoSuchPathError
from git.objects.fun import tree_entries_from_data

from atlas.git.process import open_store, start_error
from atlas.git.revs import FULL_SHA, HEX, TAG, UnsafePath, check_rev
from atlas.processes import long_lived

__all__ = ["FULL_SHA", "HEX", "TAG", "GitStore", "UnsafePath", "check_path", "check_rev"]

MAX_SYMLINK_HOPS = 40
T = TypeVar("T")


class MissingObject(Exception):
    """The object is absent from the store (e.g. a partial clone's blob, offline)."""


class GitStoreError(RuntimeError):
    """The object store cannot be read at all (not a git dir, git failed to start)."""


def check_path(path: str) -> str:
    """The path normalised for a tree walk, or UnsafePath saying why it is refused."""
    if not path or any(ord(c) < 0x20 or c == "\x7f" for c in path):
        raise UnsafePath(f"path {path!r} is empty or holds control characters")
    if path.startswith("/") or re.match(r"^[A-Za-z]:[\\/]", path) or "\\" in path:
        raise UnsafePath(f"path {path!r} is absolute; give it relative to the repository root")
    if path.startswith("-"):
        raise UnsafePath(f"path {path!r} starts with '-' and could act as a git option")
    parts = [p for p in path.split("/") if p not in ("", ".")]
    if any(p == ".." for p in parts):
        raise UnsafePath(f"path {path!r} contains '..'; give it relative to the repository root")
    if not parts:
        raise UnsafePath(f"path {path!r} names the repository root, not a file")
    return "/".join(parts)


def _answer(exc: Exception) -> str | None:
    """``missing`` or ``ambiguous`` when git answered that (GitPython's ``ValueError`` ends by
    quoting git's header line, ``NAME missing``); None when git died or said anything else."""
    if isinstance(exc, ValueError):
        said = str(exc).rstrip("'\"")
        for word in ("missing", "ambiguous"):
            if said.endswith(f" {word}"):
                return word
    return None


def _drain(proc: object) -> bytes:
    """What git wrote on the stderr of one of GitPython's persistent ``cat-file``s, without
    waiting. GitPython gives them a stderr pipe that nobody reads, and git writes to it on each
    ambiguous name (the candidates, about 100 bytes): unread, the pipe fills after a few hundred
    such answers and git stops mid-answer, a hang. So it is emptied after every answer that is
    not an object."""
    stderr = getattr(proc, "stderr", None)
    if stderr is None or stderr.closed:
        return b""
    fd = stderr.fileno()
    os.set_blocking(fd, False)
    said = b""
    try:
        while chunk := os.read(fd, 65536):
            said += chunk
    except (BlockingIOError, OSError):
        pass
    return said


class GitStore:
    """Reads one object store through GitPython's persistent ``cat-file`` processes."""

    def __init__(self, git_dir: Path) -> None:
        self.git_dir = Path(git_dir)
        if not (self.git_dir / "objects").is_dir():
            raise GitStoreError(f"{self.git_dir} is not a git directory")
        self._opened: Repo | None = None
        self._pid = os.getpid()
        self.lock = threading.RLock()
        self._trees: dict[str, dict[str, tuple[str, str]]] = {}
        self._commit_trees: dict[str, str] = {}
        self._resolved: dict[str, str | None] = {}

    def _repo(self) -> Repo:
        """The store's ``Repo``, opened on the first read, reopened after git died, never
        shared with a forked child (``sphinx-build -j``: each worker starts its own git; the
        parent's is left alone, as Python cannot wait for another process's child)."""
        if self._pid != os.getpid():
            self._opened, self._pid = None, os.getpid()
        if self._opened is None:
            try:
                self._opened = open_store(self.git_dir)
            except (InvalidGitRepositoryError, NoSuchPathError) as exc:
                raise GitStoreError(f"{self.git_dir} is not a git directory") from exc
        return self._opened

    def _persistent(self) -> list[object]:
        repo = self._opened
        if repo is None:
            return []
        return [cmd for cmd in (repo.git.cat_file_all, repo.git.cat_file_header) if cmd]

    def _keep_helpers(self) -> None:
        """Declare GitPython's persistent ``cat-file`` processes long-lived, once started: they
        serve every lab of a worker, so the lab sandbox must not count them as a lab's leftover
        process (:func:`atlas.processes.long_lived`)."""
        for cmd in self._persistent():
            proc = getattr(cmd, "proc", None)
            if proc is not None and proc.pid is not None:
                long_lived(proc.pid)

    def _died(self) -> str:
        """Forget the store's git (dead, or confused) and return what it said on stderr."""
        said = b""
        for cmd in self._persistent():
            proc = getattr(cmd, "proc", None)
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait(timeout=5)
            said += _drain(proc)
        if self._opened is not None:
            self._opened.close()
            self._opened = None
        return said.decode("utf-8", "replace").strip()

    def _ask(self, name: str, read: Callable[[Repo], T]) -> T | None:
        """``read(repo)`` under the store's lock, git's answers made ours: None when git says
        ``name`` is missing, LookupError when it is ambiguous, MissingObject (with what git
        said) when git died, GitStoreError when git cannot be started."""
        if "\n" in name or "\r" in name:
            raise UnsafePath(f"object name {name!r} holds a newline")
        with self.lock:
            try:
                answer = read(self._repo())
                self._keep_helpers()
                return answer
            except GitCommandNotFound as exc:
                self._died()
                raise GitStoreError(str(start_error(exc))) from exc
            except (ValueError, OSError) as exc:
                answer = _answer(exc)
                if answer is None:
                    said = self._died()
                    raise MissingObject(
                        f"{name} is not in {self.git_dir}" + (f" ({said})" if said else "")
                    ) from None
                for cmd in self._persistent():
                    _drain(getattr(cmd, "proc", None))
                if answer == "ambiguous":
                    raise LookupError(f"{name} is ambiguous in {self.git_dir}") from None
                return None

    def _request(self, command: str, name: str) -> tuple[str, str, bytes | None] | None:
        """(sha, type, content or None) of one object (``info`` or ``contents``); None when git
        says it is missing."""

        def read(repo: Repo) -> tuple[str, str, bytes | None]:
            if command != "contents":
                sha, kind, _ = repo.git.get_object_header(name)
                return sha.decode(), kind.decode(), None
            sha, kind, size, data = repo.git.get_object_data(name)
            if len(data) != size:
                said = self._died()
                raise MissingObject(f"{name}: short read from {self.git_dir} {said}".strip())
            return sha.decode(), kind.decode(), data

        return self._ask(name, read)

    # -- objects --------------------------------------------------------------------------------
    def has_object(self, sha: str) -> bool:
        """True when the object is present locally (never fetches)."""
        if not HEX.match(sha):
            raise UnsafePath(f"{sha!r} is not an object id")
        try:
            return self._request("info", sha) is not None
        except (MissingObject, LookupError):
            return False

    def read_object(self, sha: str) -> tuple[str, bytes]:
        """(type, content) of an object by id; MissingObject when absent."""
        if not HEX.match(sha):
            raise UnsafePath(f"{sha!r} is not an object id")
        found = self._request("contents", sha)
        if found is None or found[2] is None:
            raise MissingObject(f"object {sha} is not in {self.git_dir}")
        return found[1], found[2]

    def resolve(self, rev: str) -> str | None:
        """The full commit SHA of a SHA prefix or a tag; None when nothing matches.

        Raises LookupError when a prefix is ambiguous, UnsafePath for anything but a SHA prefix
        or a plain tag name.
        """
        check_rev(rev)
        if rev in self._resolved:
            return self._resolved[rev]
        found = None
        names = ([f"{rev.lower()}^{{commit}}"] if HEX.match(rev.lower()) else []) + [
            f"refs/tags/{rev}^{{commit}}"
        ]
        for name in names:
            try:
                got = self._request("info", name)
            except MissingObject:
                got = None
            if got is not None and got[1] == "commit":
                found = got[0]
                break
        if found is not None:  # a miss is not kept: a fetch may bring the commit later
            self._resolved[rev] = found
        return found

    def commit_tree(self, commit: str) -> str:
        """The root tree id of a commit (a full SHA), from GitPython's ``Commit``."""
        if commit not in self._commit_trees:
            if not FULL_SHA.match(commit):  # a SHA prefix: the full SHA first, as git has it
                if not HEX.match(commit):
                    raise UnsafePath(f"{commit!r} is not an object id")
                full = self._request("info", commit)
                if full is None:
                    raise MissingObject(f"object {commit} is not in {self.git_dir}")
                return self.commit_tree(full[0])

            def read(repo: Repo) -> str:
                found = Object.new_from_sha(repo, bytes.fromhex(commit))  # its type, then parsed
                if not isinstance(found, Commit):
                    raise LookupError(f"{commit} is a {found.type}, not a commit")
                return found.tree.hexsha

            tree = self._ask(commit, read)
            if tree is None:
                raise MissingObject(f"object {commit} is not in {self.git_dir}")
            self._commit_trees[commit] = tree
        return self._commit_trees[commit]

    def tree(self, sha: str) -> dict[str, tuple[str, str]]:
        """Entries of a tree: name -> (mode, sha), streamed from ``Repo.odb`` and parsed by
        GitPython."""
        if sha not in self._trees:
            if not FULL_SHA.match(sha):
                raise UnsafePath(f"{sha!r} is not a full object id")

            def read(repo: Repo) -> list[tuple[bytes, int, str]]:
                stream = repo.odb.stream(bytes.fromhex(sha))
                kind = stream.type.decode()
                if kind != "tree":
                    raise LookupError(f"{sha} is a {kind}, not a tree")
                try:
                    return tree_entries_from_data(stream.read())
                except ValueError as exc:  # an entry GitPython refuses (a name aliasing .git)
                    raise GitStoreError(f"tree {sha} in {self.git_dir}: {exc}") from None

            entries = self._ask(sha, read)
            if entries is None:
                raise MissingObject(f"object {sha} is not in {self.git_dir}")
            self._trees[sha] = {
                name: (f"{mode:06o}", binsha.hex()) for binsha, mode, name in entries
            }
        return self._trees[sha]

    def resolve_path(self, commit: str, path: str) -> tuple[str, str, str, str] | None:
        """(mode, type, sha, resolved path) of a path at a commit, following symlinks that
        stay inside the tree; None when absent. UnsafePath when a symlink leads outside."""
        if not FULL_SHA.match(commit):
            full = self.resolve(commit)
            if full is None:
                raise LookupError(f"commit {commit} is not in {self.git_dir}")
            commit = full
        root = self.commit_tree(commit)
        todo = check_path(path).split("/")
        done: list[str] = []
        hops = 0
        mode, sha = "040000", root
        while todo:
            part = todo.pop(0)
            if mode != "040000":
                return None  # a file used as a folder
            entry = self.tree(sha).get(part)
            if entry is None:
                return None
            mode, sha = entry
            if mode == "120000":
                hops += 1
                if hops > MAX_SYMLINK_HOPS:
                    raise UnsafePath(f"{path}: too many levels of symbolic links")
                target = self.read_object(sha)[1].decode("utf-8", "surrogateescape")
                joined = posixpath.normpath(posixpath.join("/".join(done), target))
                if target.startswith("/") or joined == ".." or joined.startswith("../"):
                    link = "/".join([*done, part])
                    raise UnsafePath(
                        f"{path}: symlink {link} points outside the repository ({target})"
                    )
                todo = [p for p in joined.split("/") if p not in ("", ".")] + todo
                done, mode, sha = [], "040000", root
                continue
            done.append(part)
        kind = {"040000": "tree", "160000": "commit"}.get(mode, "blob")
        return mode, kind, sha, "/".join(done)

    def tree_entry(self, commit: str, path: str) -> tuple[str, str, str] | None:
        """(mode, type, sha) of a path at a commit (symlinks inside the tree followed)."""
        found = self.resolve_path(commit, path)
        return found[:3] if found else None

    def read_blob(self, commit: str, path: str) -> bytes:
        """The bytes of a file at a commit. FileNotFoundError when the path is absent or not a
        file, MissingObject when the blob is not in the store."""
        found = self.resolve_path(commit, path)
        if found is None:
            raise FileNotFoundError(f"{path} does not exist at {commit}")
        mode, kind, sha, _ = found
        if kind != "blob":
            raise FileNotFoundError(
                f"{path} is a {'folder' if kind == 'tree' else kind} at {commit}, not a file"
            )
        return self.read_object(sha)[1]

    def list_dir(self, commit: str, path: str = "") -> list[str] | None:
        """Names in a folder at a commit (for 'did you mean' messages); None if absent."""
        if not path:
            return sorted(self.tree(self.commit_tree(commit)))
        found = self.resolve_path(commit, path)
        if found is None or found[1] != "tree":
            return None
        return sorted(self.tree(found[2]))

    def close(self) -> None:
        """Stop the store's git (a later read starts a new one)."""
        with self.lock:
            if self._opened is not None and self._pid == os.getpid():
                self._opened.close()
            self._opened = None


_STORES: dict[Path, GitStore] = {}
_STORES_LOCK = threading.Lock()


def store_for(git_dir: Path) -> GitStore:
    """The process-wide GitStore of a git dir (one cat-file pipe per store)."""
    key = Path(git_dir).resolve()
    with _STORES_LOCK:
        store = _STORES.get(key)
        if store is None:
            store = _STORES[key] = GitStore(key)
        return store


def close_all() -> None:
    """Close every pipe (at the end of a build or a command)."""
    with _STORES_LOCK:
        for store in _STORES.values():
            store.close()
        _STORES.clear()
