"""``upstreams.lock``: what every citation read, so drift and offline builds are caught.

The file sits at the book root, is committed, and holds no code: per citation the blob id it
read and the sha256 of the selected text (after options). JSON with sorted keys, one entry per
distinct citation key (see :func:`lock_key`), so diffs stay small and merges easy. A second
map, ``revs``, records what each tag or short SHA written in a page resolved to
(``"megatron@v0.9": FULLSHA``), so a build without the objects still knows the commit.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

LOCK_NAME = "upstreams.lock"
LOCK_VERSION = 1
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


def lock_path(root: Path) -> Path:
    return Path(root) / LOCK_NAME


def load_lock(root: Path) -> dict[str, LockEntry]:
    """The lock's entries (empty when there is no lock). ValueError when it is not valid."""
    path = lock_path(root)
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        entries = data["citations"]
        return {key: LockEntry(blob=v["blob"], sha256=v["sha256"]) for key, v in entries.items()}
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ValueError(
            f"{path} is not a valid lock ({exc}); restore it from git or run "
            "`python -m atlas.upstream lock`"
        ) from exc


def load_revs(root: Path) -> dict[str, str]:
    """``NAME@REV -> FULLSHA`` for the tags and short SHAs pages use (empty without a lock)."""
    path = lock_path(root)
    if not path.is_file():
        return {}
    try:
        revs = json.loads(path.read_text(encoding="utf-8")).get("revs", {})
        return {str(k): str(v) for k, v in revs.items()}
    except (ValueError, AttributeError) as exc:
        raise ValueError(f"{path} is not a valid lock ({exc})") from exc


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
