"""A git upstream's pin, as a bump moves it: the gitlink staged at the new commit, and the new
commit's blobs for the lock entries the old lock did not have (:class:`GitlinkPin`, the
:class:`~atlas.upstream.drift.bump.PinMove` of git upstreams)."""

from __future__ import annotations

from pathlib import Path

from atlas.git import repo
from atlas.git.store import GitStore, MissingObject
from atlas.upstream.drift.model import DriftError, Plan, Record
from atlas.upstream.registry import Upstream


def set_gitlink(book_root: Path, up: Upstream, commit: str) -> None:
    """Stage the new pin (:func:`atlas.git.repo.set_gitlink` makes the submodule's folder)."""
    said = repo.set_gitlink(book_root, up.path, commit)
    if said is not None:
        raise DriftError(f"cannot move the gitlink {up.path}: {said}")


class GitlinkPin:
    """The gitlink of the plan's upstream; new files are read from the plan's object store
    through one cat-file pipe, opened on the first read and closed by :meth:`close` (use it
    as a context manager)."""

    def __init__(self, book_root: Path, the_plan: Plan) -> None:
        assert isinstance(the_plan.upstream, Upstream)
        self.book_root, self.plan, self.upstream = Path(book_root), the_plan, the_plan.upstream
        self._store: GitStore | None = None

    def check(self) -> None:
        """Nothing to check: git stages any commit as a gitlink."""

    def new_file(self, record: Record) -> bytes | None:
        if self.plan.git_dir is None or record.new_blob is None:
            return None
        if self._store is None:
            self._store = GitStore(self.plan.git_dir)
        try:
            return self._store.read_object(record.new_blob)[1]
        except MissingObject:
            return None

    def move(self) -> None:
        set_gitlink(self.book_root, self.upstream, self.plan.new)

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None

    def __enter__(self) -> GitlinkPin:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
