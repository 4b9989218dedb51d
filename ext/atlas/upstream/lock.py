"""``upstreams.lock``: what every citation read, so drift and offline builds are caught.

The file sits at the book root, is committed, and holds no code: per citation the blob id it
read and the sha256 of the selected text (after options). JSON with sorted keys, one entry per
distinct citation key (see :func:`lock_key`), so diffs stay small and merges easy. A second
map, ``revs``, records what each tag or short SHA written in a page resolved to
(``"megatron@v0.9": FULLSHA``), so a build without the objects still knows the commit.

:func:`known_revs` gathers, for one upstream, every full SHA the book knows without its objects
(the pin, these revs, the SHAs the keys name, the book's past pins): what
:func:`atlas.git.revs.expand_rev` expands a short SHA against when the objects are absent.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from atlas.bookroot import LOCK_FILE, BookPaths, command
from atlas.git import repo
from atlas.git.revs import KnownRevs
from atlas.project.errors import Problem, shown

if TYPE_CHECKING:
    from atlas.upstream.registry import Upstream

LOCK_VERSION = 1
# A page's tag or short SHA as the build state records it beside the lock keys it read
# (``rev:NAME@REV``): the revs map of the lock holds ``NAME@REV`` (:func:`rev_key`).
REV_PREFIX = "rev:"
# Options that change the selected text, hence belong in the key (the rest only render).
TEXT_OPTIONS = ("start-after", "end-before", "dedent")


@dataclass(frozen=True)
class LockEntry:
    """What one citation read: the blob, and the sha256 of the selected text."""

    blob: str
    sha256: str

    def to_json(self) -> dict[str, str]:
        return {"blob": self.blob, "sha256": self.sha256}


def text_hash(text: str) -> str:
    """sha256 of the selected text, as stored in the lock."""
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


def lock_key(
    name: str, commit: str, path: str, selector: str | None, options: dict[str, str] | None = None
) -> str:
    """``name@FULLSHA path:selector`` (``path::sym`` for symbols, ``path`` for a whole file),
    followed by ``[key=value;...]`` when an option changes the selected text (a bare ``key``
    for one given without a value, like ``:dedent:``, which dedents to the common indent)."""
    key = f"{name}@{commit} {path}"
    if selector:
        key += selector if selector.startswith("::") else f":{selector}"
    given = {k: options[k] for k in TEXT_OPTIONS if options and options.get(k) is not None}
    extra = [f"{k}={v}" if v != "" else k for k, v in given.items()]
    return key + (f" [{';'.join(extra)}]" if extra else "")


@dataclass(frozen=True)
class LockKey:
    """A lock key taken apart: what :func:`lock_key` put together."""

    name: str
    commit: str
    path: str
    selector: str | None
    options: dict[str, str] = field(default_factory=dict)


_KEY_HEAD = re.compile(r"^([A-Za-z0-9][\w.-]*)@([0-9a-f]{40}(?:[0-9a-f]{24})?)$")
_KEY_RANGES = re.compile(r"^\d+(?:-\d+)?(?:,\d+(?:-\d+)?)*$")


def parse_lock_key(key: str) -> LockKey:
    """The inverse of :func:`lock_key`; ValueError for a string that is not a lock key."""
    head, _, rest = key.partition(" ")
    match = _KEY_HEAD.match(head)
    if match is None or not rest:
        raise ValueError(f"{key!r} is not a lock key (NAME@FULLSHA PATH[:SELECTOR] [OPTIONS])")
    options: dict[str, str] = {}
    rest, bracket, given = rest.partition(" [")  # a cited path holds no space
    if bracket:
        if not given.endswith("]"):
            raise ValueError(f"{key!r}: options not closed by ']'")
        for item in given[:-1].split(";"):
            option, _, value = item.partition("=")
            options[option] = value
    if "::" in rest:
        path, _, symbol = rest.partition("::")
        selector: str | None = "::" + symbol
    else:
        path, colon, tail = rest.rpartition(":")
        if colon and _KEY_RANGES.match(tail):
            selector = tail
        else:
            path, selector = rest, None
    return LockKey(match.group(1), match.group(2), path, selector, options)


def rev_key(name: str, rev: str) -> str:
    """``NAME@REV``: the key of the lock's ``revs`` map for a tag or short SHA a page wrote."""
    return f"{name}@{rev}"


def parse_rev_key(key: str) -> tuple[str, str]:
    """(NAME, REV) of a key of the lock's ``revs`` map, ``NAME@REV`` (see :func:`rev_key`)."""
    name, at, rev = key.partition("@")
    if not (name and at and rev):
        raise ValueError(f"{key!r} is not NAME@REV")
    return name, rev


def lock_shas(keys: Iterable[str]) -> dict[str, set[str]]:
    """Per upstream, the full commit SHAs that lock keys name (to expand short revs offline);
    strings that are not lock keys are passed over."""
    found: dict[str, set[str]] = {}
    for key in keys:
        try:
            parsed = parse_lock_key(str(key))
        except ValueError:
            continue
        found.setdefault(parsed.name, set()).add(parsed.commit)
    return found


def lock_path(root: Path) -> Path:
    return Path(root) / LOCK_FILE


class LockError(ValueError):
    """upstreams.lock is not a valid lock: where (``path``, ``line`` when known) and why."""

    def __init__(self, path: Path, reason: str, line: int | None = None) -> None:
        self.path, self.reason, self.line = Path(path), reason, line
        super().__init__(self.message())

    def message(self, book: BookPaths | None = None) -> str:
        """Where and why, and the commands that fix it (for ``book``, whose pages may be
        elsewhere than ``source/``; default: the book the lock sits in)."""
        where = f"{self.path}:{self.line}" if self.line else str(self.path)
        return (
            f"{where}: not a valid lock ({self.reason}); restore it with "
            f"`git checkout -- {LOCK_FILE}`, or rebuild it from the pages with "
            f"`{command(book or self.path.parent, 'lock')}`"
        )


def _read(path: Path) -> dict:
    """The lock file's JSON object, checked for shape; LockError says where it is wrong."""
    text = path.read_text(encoding="utf-8")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise LockError(path, exc.msg, exc.lineno) from None
    if not isinstance(data, dict) or not isinstance(data.get("citations"), dict):
        raise LockError(path, 'no "citations" object at the top', 1)
    for key, value in data["citations"].items():
        if not (
            isinstance(value, dict)
            and isinstance(value.get("blob"), str)
            and isinstance(value.get("sha256"), str)
        ):
            line = next(
                (n for n, t in enumerate(text.splitlines(), 1) if json.dumps(key) in t), None
            )
            raise LockError(path, f'entry {key!r} needs "blob" and "sha256" strings', line)
    if not isinstance(data.get("revs", {}), dict):
        raise LockError(path, '"revs" is not an object', None)
    return data


def load_lock(root: Path) -> dict[str, LockEntry]:
    """The lock's entries (empty when there is no lock). LockError when it is not valid."""
    path = lock_path(root)
    if not path.is_file():
        return {}
    entries = _read(path)["citations"]
    return {key: LockEntry(blob=v["blob"], sha256=v["sha256"]) for key, v in entries.items()}


def load_revs(root: Path) -> dict[str, str]:
    """``NAME@REV -> FULLSHA`` for the tags and short SHAs pages use (empty without a lock)."""
    path = lock_path(root)
    if not path.is_file():
        return {}
    return {str(k): str(v) for k, v in _read(path).get("revs", {}).items()}


def known_revs(
    book_root: Path,
    upstream: Upstream,
    *,
    lock: Iterable[str] | None = None,
    revs: Mapping[str, str] | None = None,
) -> KnownRevs:
    """Every full SHA of ``upstream`` the book knows without its objects, for
    :func:`atlas.git.revs.expand_rev`: the pin; what the lock's ``revs`` recorded for each tag
    or short SHA of this upstream; the SHAs its lock keys name and the commits the book's
    history ever pinned it to (a citation left behind by a bump names one).

    ``lock`` (the lock's keys) and ``revs`` default to the lock file's; a lock that cannot be
    read contributes nothing (the build reports it where it reads the lock). The one set, in
    :meth:`KnownRevs.expand`'s order, for the directive, ``check``, ``lock`` and ``fetch``."""
    if lock is None or revs is None:
        try:
            lock = load_lock(book_root) if lock is None else lock
            revs = load_revs(book_root) if revs is None else revs
        except (OSError, ValueError):
            lock, revs = lock or {}, revs or {}
    recorded: dict[str, str] = {}
    for key, sha in revs.items():
        try:
            name, rev = parse_rev_key(key)
        except ValueError:
            continue
        if name == upstream.name:
            recorded[rev] = sha
    shas = lock_shas(lock).get(upstream.name, set()) | repo.past_pins(book_root, upstream.path)
    return KnownRevs(upstream.pin, recorded, frozenset(shas))


def key_lines(root: Path) -> dict[str, int]:
    """The line of each entry in the lock file (for messages that name an entry)."""
    found: dict[str, int] = {}
    try:
        lines = lock_path(root).read_text(encoding="utf-8").splitlines()
    except OSError:
        return found
    for n, line in enumerate(lines, 1):
        head = line.strip()
        if head.startswith('"') and head.endswith(("{", '",')) and '": ' in head:
            try:
                found.setdefault(json.loads(head.split('": ', 1)[0] + '"'), n)
            except ValueError:
                continue
    return found


def dumps_lock(data: dict[str, LockEntry], revs: dict[str, str] | None = None) -> str:
    body: dict[str, object] = {
        "citations": {k: data[k].to_json() for k in sorted(data)},
        "version": LOCK_VERSION,
    }
    if revs:
        body["revs"] = dict(sorted(revs.items()))
    return json.dumps(body, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def save_lock(root: Path, data: dict[str, LockEntry], revs: dict[str, str] | None = None) -> bool:
    """Write the lock atomically (``revs`` None keeps the file's revs); returns False when the
    content was already the same."""
    path = lock_path(root)
    text = dumps_lock(data, load_revs(root) if revs is None else revs)
    if path.is_file() and path.read_text(encoding="utf-8") == text:
        return False
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".upstreams.lock.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            os.fchmod(fh.fileno(), 0o644)
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return True


def check_lock_file(app: Any) -> list[Problem]:
    """A project-file check (atlas.project.registry), before anything reads the lock: valid
    JSON of the right shape (a bad merge leaves a stray line), or one clean error."""
    paths = BookPaths.from_app(app)
    path = paths.lock_file
    if not path.is_file():
        return []
    try:
        _read(path)
    except LockError as exc:
        fix = (
            f"restore it with `git checkout -- {path.name}`, or rebuild it from the pages with "
            f"`{command(paths, 'lock')}`"
        )
        return [Problem(shown(path), f"not a valid lock ({exc.reason}); {fix}", exc.line)]
    except (OSError, UnicodeDecodeError) as exc:
        return [Problem(shown(path), f"cannot be read ({exc}); restore it from git")]
    return []
