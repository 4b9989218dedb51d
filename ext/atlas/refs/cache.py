"""Recent link-check results, kept so that a re-run within the cache's age sends nothing.

Only answers a server gave are kept (a page, a redirect, a 4xx, a missing anchor): timeouts,
unreachable hosts, 429s and 5xx are retried on the next run. Written atomically.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

CACHEABLE = {"working", "redirected", "broken"}


class LinkCache:
    def __init__(self, path: Path, max_age_days: float, now: float | None = None) -> None:
        self.path = Path(path)
        self.max_age = max_age_days * 86400.0
        self.now = time.time() if now is None else now
        self.entries: dict[str, dict[str, Any]] = {}
        if self.max_age > 0:
            try:
                data = json.loads(self.path.read_text(encoding="utf-8"))
                if isinstance(data, dict) and isinstance(data.get("links"), dict):
                    self.entries = data["links"]
            except (OSError, ValueError):
                self.entries = {}  # absent or corrupt: start afresh

    def get(self, uri: str) -> dict[str, Any] | None:
        entry = self.entries.get(uri)
        if not entry or self.max_age <= 0:
            return None
        age = self.now - float(entry.get("checked", 0))
        return entry if 0 <= age < self.max_age else None

    def put(self, uri: str, status: str, info: str, code: int) -> None:
        if status in CACHEABLE:
            self.entries[uri] = {"status": status, "info": info, "code": code, "checked": self.now}

    def save(self) -> None:
        if self.max_age <= 0:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fresh = {
            u: e
            for u, e in self.entries.items()
            if self.now - float(e.get("checked", 0)) < self.max_age
        }
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".cache-")
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump({"version": 1, "links": fresh}, out, indent=1, sort_keys=True)
        os.replace(tmp, self.path)
