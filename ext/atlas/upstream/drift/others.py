"""The other files of the new commit where moved code may be, for :mod:`.suggest`.

Code moves between files (DeepGEMM's ``common/scheduler.cuh`` into ``scheduler/gemm.cuh``);
:mod:`.trees` follows a cited file when git sees it renamed, but not code that leaves a file
that stays. The candidates here are the files the diff between the two commits added,
modified, renamed or copied into, of the cited file's kind (its extension), ordered by how
near their paths are to the cited one (git's rename target first, then the same name, the
same folder, the longest common folder); their blobs are fetched once, together, and read
through one store. Capped at :data:`MAX_FILES` per cited path: a search, not a scan of the
whole history.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from atlas.git.store import GitStore, MissingObject
from atlas.upstream import partialclone
from atlas.upstream.drift.carry import as_text
from atlas.upstream.drift.suggest import Candidate
from atlas.upstream.drift.trees import tree_changes

MAX_FILES = 200
ZERO = "0" * 40


class OtherFiles:
    """The changed files of ``new`` (relative to ``old``), read lazily and kept."""

    def __init__(self, git_dir: Path, old: str, new: str, store: GitStore, ours: bool) -> None:
        self.git_dir, self.old, self.new, self.store, self.ours = git_dir, old, new, store, ours
        self._files: dict[str, str] | None = None  # path -> blob at the new commit
        self._texts: dict[str, str | None] = {}

    def files(self) -> dict[str, str]:
        if self._files is None:
            self._files = {}
            for change in tree_changes(self.git_dir, self.old, self.new):
                path = change.renamed_to or change.path
                if change.status != "D" and change.new_blob != ZERO:
                    self._files[path] = change.new_blob
        return self._files

    def ordered(self, path: str, renamed_to: str | None = None) -> list[str]:
        """Candidate paths for code cited from ``path``, nearest first."""
        ext = os.path.splitext(path)[1]
        base, folder = os.path.basename(path), os.path.dirname(path)

        def nearness(other: str) -> tuple[int, int, int, str]:
            common = os.path.commonpath([folder, os.path.dirname(other)]) if folder else ""
            return (
                other != renamed_to,
                os.path.basename(other) != base,
                -len(common.split("/")) if common else 0,
                other,
            )

        same_kind = [p for p in self.files() if os.path.splitext(p)[1] == ext and p != path]
        return sorted(same_kind, key=nearness)[:MAX_FILES]

    def text(self, path: str) -> str | None:
        if path not in self._texts:
            blob = self.files().get(path)
            try:
                self._texts[path] = as_text(self.store.read_object(blob)[1]) if blob else None
            except MissingObject:
                self._texts[path] = None
        return self._texts[path]

    def candidates(self, path: str, renamed_to: str | None = None) -> Iterator[Candidate]:
        """The candidates' texts, nearest first (their missing blobs fetched together)."""
        paths = self.ordered(path, renamed_to)
        if self.ours:
            missing = [
                self.files()[p]
                for p in paths
                if p not in self._texts and not self.store.has_object(self.files()[p])
            ]
            if missing:
                partialclone.fetch_blobs(self.git_dir, sorted(set(missing)), None, quick=False)
        for other in paths:
            text = self.text(other)
            if text is not None:
                yield Candidate(other, text)
