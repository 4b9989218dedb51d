"""Read git objects straight from an object store: no checkout, no process per read.

All reads of one store share one persistent ``git cat-file --batch-command`` pipe
(:class:`atlas.git.process.CatFilePipe`); trees are parsed here (so modes, hence symlinks, are
known) and commits resolved once. Names only ever reach git through that pipe, never as
command-line arguments, and are validated first (:func:`check_path`, :func:`check_rev`):
nothing a citation says can act as a git option or leave the tree.

A partial clone offline lacks blobs; git would try to fetch them (and, offline, die). The pipe
forbids every transport, so a missing blob fails at once and becomes :class:`MissingObject`
instead of a hang or a crash.
"""

from __future__ import annotations

import posixpath
import re
import threading
from pathlib import Path

from atlas.git.process import CatFilePipe, GitStartError
from atlas.git.revs import FULL_SHA, HEX, TAG, UnsafePath, check_rev

__all__ = ["FULL_SHA", "HEX", "TAG", "GitStore", "UnsafePath", "check_path", "check_rev"]

MAX_SYMLINK_HOPS = 40


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


class GitStore:
    """Reads one object store through a persistent ``git cat-file --batch-command``."""

    def __init__(self, git_dir: Path) -> None:
        self.git_dir = Path(git_dir)
        if not (self.git_dir / "objects").is_dir():
            raise GitStoreError(f"{self.git_dir} is not a git directory")
        self._pipe = CatFilePipe(self.git_dir)
        self._trees: dict[str, dict[str, tuple[str, str]]] = {}
        self._commit_trees: dict[str, str] = {}
        self._resolved: dict[str, str | None] = {}

    def _request(self, command: str, name: str) -> tuple[str, str, bytes | None] | None:
        """(sha, type, content or None) of one object; None when git says it is missing."""
        if "\n" in name or "\r" in name:
            raise UnsafePath(f"object name {name!r} holds a newline")
        with self._pipe.lock:
            try:
                header, out = self._pipe.ask(command, name)
            except GitStartError as exc:
                raise GitStoreError(str(exc)) from exc
            if not header:
                said = self._pipe.died()
                raise MissingObject(
                    f"{name} is not in {self.git_dir}" + (f" ({said})" if said else "")
                )
            fields = header.decode("utf-8", "replace").rstrip("\n").split(" ")
            if len(fields) == 2 and fields[1] in ("missing", "ambiguous"):
                if fields[1] == "ambiguous":
                    raise LookupError(f"{name} is ambiguous in {self.git_dir}")
                return None
            if len(fields) != 3:
                said = self._pipe.died()
                raise GitStoreError(f"git cat-file answered {header!r} for {name}: {said}")
            sha, kind, size = fields[0], fields[1], int(fields[2])
            data = None
            if command == "contents":
                data = out.read(size)
                out.read(1)  # the newline after the content
                if len(data) != size:
                    said = self._pipe.died()
                    raise MissingObject(f"{name}: short read from {self.git_dir} {said}".strip())
            return sha, kind, data

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
        """The root tree id of a commit (a full SHA)."""
        if commit not in self._commit_trees:
            kind, data = self.read_object(commit)
            if kind != "commit":
                raise LookupError(f"{commit} is a {kind}, not a commit")
            first = data.split(b"\n", 1)[0].decode()
            if not first.startswith("tree "):
                raise GitStoreError(f"commit {commit} has no tree line")
            self._commit_trees[commit] = first[5:]
        return self._commit_trees[commit]

    def tree(self, sha: str) -> dict[str, tuple[str, str]]:
        """Entries of a tree: name -> (mode, sha)."""
        if sha not in self._trees:
            kind, data = self.read_object(sha)
            if kind != "tree":
                raise LookupError(f"{sha} is a {kind}, not a tree")
            entries: dict[str, tuple[str, str]] = {}
            i, hash_len = 0, 20 if len(sha) == 40 else 32
            while i < len(data):
                space = data.index(b" ", i)
                nul = data.index(b"\0", space)
                mode = data[i:space].decode()
                name = data[space + 1 : nul].decode("utf-8", "surrogateescape")
                entries[name] = (mode.zfill(6), data[nul + 1 : nul + 1 + hash_len].hex())
                i = nul + 1 + hash_len
            self._trees[sha] = entries
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
        """Stop the pipe (a later read starts a new one)."""
        self._pipe.close()


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
