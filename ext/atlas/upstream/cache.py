"""``snippets_cache/``: selections read from git objects, kept so that a build without the
objects still shows them.

Content-addressed by (upstream, full commit, path, selector, extractor version): a commit
never changes, so an entry never goes stale. Each entry embeds the sha256 of its body; an entry
that does not match (truncated, corrupt, edited) is dropped and rebuilt. Writes go to a temp
file in the same folder and are renamed into place, so parallel builds (``-j``) never see half
an entry.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from atlas.code.select import Segment

# Bump when what a selector selects changes (symbol rules, line splitting): old entries are
# then never read again.
EXTRACTOR_VERSION = 2
MAGIC = b"atlas-snippet 1 "


@dataclass(frozen=True)
class CachedSnippet:
    """A selection before options: its segments and the blob it came from."""

    blob: str
    segments: tuple[Segment, ...]
    path: str = ""  # the path read, after in-tree symlinks (where GitHub shows the lines)


def cache_key(name: str, commit: str, path: str, selector: str | None) -> str:
    raw = json.dumps([EXTRACTOR_VERSION, name, commit, path, selector or ""])
    return hashlib.sha256(raw.encode()).hexdigest()


class SnippetCache:
    """The cache folder; ``get`` never raises on a bad entry, it drops it."""

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)

    def _file(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.json"

    def get(self, key: str) -> CachedSnippet | None:
        path = self._file(key)
        try:
            data = path.read_bytes()
        except OSError:
            return None
        head, _, body = data.partition(b"\n")
        ok = (
            head.startswith(MAGIC)
            and head[len(MAGIC) :].decode("ascii", "replace") == hashlib.sha256(body).hexdigest()
        )
        if ok:
            try:
                obj = json.loads(body)
                if obj["key"] == key:
                    segs = tuple(Segment(int(s), tuple(lines)) for s, lines in obj["segments"])
                    return CachedSnippet(str(obj["blob"]), segs, str(obj.get("path", "")))
            except (ValueError, KeyError, TypeError):
                pass
        path.unlink(missing_ok=True)  # corrupt: drop it, the caller rebuilds it
        return None

    def put(self, key: str, snippet: CachedSnippet) -> None:
        body = json.dumps(
            {
                "key": key,
                "blob": snippet.blob,
                "path": snippet.path,
                "segments": [[s.start, list(s.lines)] for s in snippet.segments],
            },
            ensure_ascii=False,
            separators=(",", ":"),
        ).encode("utf-8", "surrogateescape")
        data = MAGIC + hashlib.sha256(body).hexdigest().encode() + b"\n" + body
        path = self._file(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
            try:
                with os.fdopen(fd, "wb") as fh:
                    os.fchmod(fh.fileno(), 0o644)  # mkstemp's 0600 would lock out other users
                    fh.write(data)
                os.replace(tmp, path)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        except OSError:
            pass  # a read-only or full cache only costs speed
