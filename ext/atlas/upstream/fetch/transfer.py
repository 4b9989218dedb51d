"""The fetch of one upstream: bring what its :class:`~atlas.upstream.fetch.needs.Needs` lacks
into its object store, and say what moved.

Commits and their trees first (``--depth=1 --filter=blob:none``: no history, no blobs), tags
by name, then the cited blobs by id in one batch. One bad name fails all of git's fetch, so a
refused batch is retried one name at a time and the good ones still arrive. Symlinks inside a
tree can need their target's blob in a later round. The git commands themselves are
:mod:`atlas.upstream.partialclone`'s.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from atlas.git.store import GitStore, MissingObject, UnsafePath
from atlas.upstream.fetch.needs import Needs
from atlas.upstream.partialclone import (
    FetchError,
    Progress,
    create_store,
    discard_if_empty,
    ensure_store,
    fetch_blobs,
    fetch_commits,
    is_offline,
    is_store,
    missing_commits,
    missing_id,
    pack_bytes,
    run_fetch,
)
from atlas.upstream.registry import object_store


@dataclass
class Result:
    """What fetching one upstream did."""

    name: str
    store: str = ""
    commits: int = 0
    blobs: int = 0
    objects: int = 0
    bytes: int = 0
    missing_before: int = 0
    absent_paths: list[str] = field(default_factory=list)  # cited paths not in their commit
    unavailable: list[str] = field(default_factory=list)  # blob ids the remote would not send
    bad_revs: list[str] = field(default_factory=list)  # "page:line: NAME@REV: why", not fetched
    error: str | None = None


def _fetch_each(
    git_dir: Path, commits: list[str], tags: list[str], progress: Progress | None, quick: bool
) -> dict[str, str]:
    """Fetch commits and tags in one batch; when the remote refuses the batch (one bad name
    fails all of git's fetch), fetch them one by one so that the good ones still arrive.
    Returns the commits and tags that failed, with git's reason. A network failure raises."""
    if not commits and not tags:
        return {}
    try:
        fetch_commits(git_dir, commits, tags, progress, quick)
        return {}
    except FetchError as exc:
        if is_offline(str(exc)) or len(commits) + len(tags) == 1:
            if is_offline(str(exc)):
                raise
            return {(commits or tags)[0]: str(exc)}
    failed: dict[str, str] = {}
    for commit in commits:
        failed.update(_fetch_each(git_dir, [commit], [], progress, quick))
    for tag in tags:
        failed.update(_fetch_each(git_dir, [], [tag], progress, quick))
    return failed


def cited_blobs(
    git_dir: Path, paths: dict[str, set[str]]
) -> tuple[dict[str, str], list[str], set[str]]:
    """(blob id -> a 'commit:path' citing it, absent 'commit:path's, missing blob ids).

    Symlinks inside the tree are followed; a missing symlink blob is reported as missing so
    the next round, after it arrives, can follow it.
    """
    store = GitStore(git_dir)
    blobs: dict[str, str] = {}
    absent: list[str] = []
    missing: set[str] = set()
    try:
        for commit, cited in paths.items():
            for path in sorted(cited):
                try:
                    found = store.tree_entry(commit, path)
                except MissingObject as exc:
                    sha = missing_id(str(exc))
                    if sha:
                        missing.add(sha)
                    else:
                        absent.append(f"{commit[:8]}:{path}")
                    continue
                except (UnsafePath, LookupError):
                    absent.append(f"{commit[:8]}:{path}")
                    continue
                if found is None or found[1] != "blob":
                    absent.append(f"{commit[:8]}:{path}")
                    continue
                blobs.setdefault(found[2], f"{commit[:8]}:{path}")
        missing |= {sha for sha in blobs if not store.has_object(sha)}
    finally:
        store.close()
    return blobs, absent, missing


def fetch_upstream(
    book_root: Path,
    need: Needs,
    progress: Progress | None = None,
    quick: bool = False,
    into: Path | None = None,
) -> Result:
    """Bring one upstream's cited commits, trees and blobs; idempotent. ``into``: a store of
    our own elsewhere (made when absent), e.g. for a benchmark in a temporary folder."""
    up = need.upstream
    if into is not None:
        git_dir, ours = (into if is_store(into) else create_store(into, up.url)), True
    else:
        git_dir, ours = ensure_store(book_root, up)
    try:
        return _fill(git_dir, ours, need, progress, quick)
    except BaseException:
        if ours:
            discard_if_empty(git_dir)  # an empty store would pass for one that lacks commits
        raise


def _fill(git_dir: Path, ours: bool, need: Needs, progress: Progress | None, quick: bool) -> Result:
    """Fetch what ``need`` lacks into the store ``git_dir``."""
    up = need.upstream
    result = Result(up.name)
    result.store = str(git_dir)
    size0, count0 = pack_bytes(git_dir)
    paths = dict(need.paths)

    def bad(revs: Iterable[str], why: str) -> None:
        for rev in sorted(revs):
            for where in need.where(rev) or ["(the pin)"]:
                result.bad_revs.append(f"{where}: {up.name}@{rev}: {why}")

    if need.refs:
        failed = _fetch_each(git_dir, [], sorted(need.refs), progress, quick)
        for tag in sorted(failed):
            bad(
                [tag],
                f"neither a commit SHA (7 to 40 hex digits) nor a tag of {up.url}; "
                "write the commit's SHA or the tag's exact name",
            )
        store = GitStore(git_dir)
        try:
            for tag, tag_paths in need.refs.items():
                commit = store.resolve(tag) if tag not in failed else None
                if commit is not None:
                    paths.setdefault(commit, set()).update(tag_paths)
        finally:
            store.close()
    todo = missing_commits(git_dir, paths)
    result.missing_before = len(todo)
    if todo:
        if not ours:
            raise FetchError(f"commits {', '.join(c[:8] for c in todo)} are missing from {git_dir}")
        failed = _fetch_each(git_dir, todo, [], progress, quick)
        for commit in sorted(failed):
            bad(
                need.revs_of.get(commit, {commit}),
                f"commit {commit} is not in {up.url}; fix the @REV (a commit of that repository)",
            )
            paths.pop(commit, None)
        todo = [c for c in todo if c not in failed]
        still = missing_commits(git_dir, todo)
        if still:  # an interrupted pack left the commit without its trees: fetch it afresh
            run_fetch(
                git_dir,
                ["--refetch", "--depth=1", "--filter=blob:none", "origin", *still],
                None,
                "trees",
                progress,
                quick,
            )
        result.commits = len(todo)
    for _round in range(4):  # symlinks can need their target's blob in a later round
        blobs, absent, missing = cited_blobs(git_dir, paths)
        result.absent_paths = sorted(set(result.absent_paths) | set(absent))
        missing -= set(result.unavailable)
        if not missing:
            break
        result.missing_before += len(missing)
        result.unavailable += fetch_blobs(git_dir, sorted(missing), progress, quick)
        result.blobs += len(missing)
    pin = up.pin
    if need.lab_paths and pin and pin in paths:
        # Files the labs read at the pin that no page cites: only those the tree really has.
        blobs, _absent, missing = cited_blobs(git_dir, {pin: set(need.lab_paths)})
        missing -= set(result.unavailable)
        if missing:
            result.missing_before += len(missing)
            result.unavailable += fetch_blobs(git_dir, sorted(missing), progress, quick)
            result.blobs += len(missing)
    result.blobs -= len(result.unavailable)
    size1, count1 = pack_bytes(git_dir)
    result.bytes, result.objects = size1 - size0, count1 - count0
    return result


def missing_counts(book_root: Path, needs: dict[str, Needs]) -> dict[str, int]:
    """Per upstream with citations, how many cited commits and blobs are not local (0: all)."""
    counts: dict[str, int] = {}
    for name, need in needs.items():
        cited_paths = {c: p for c, p in need.paths.items() if p}
        if not cited_paths and not need.refs:
            continue
        git_dir = object_store(book_root, need.upstream)
        if git_dir is None:
            counts[name] = len(cited_paths) + sum(len(p) for p in cited_paths.values())
            continue
        absent = missing_commits(git_dir, cited_paths)
        if absent:
            counts[name] = len(absent) + sum(len(cited_paths[c]) for c in absent)
            continue
        _, _, blobs = cited_blobs(git_dir, cited_paths)
        counts[name] = len(blobs) + len(need.refs)
    return counts
