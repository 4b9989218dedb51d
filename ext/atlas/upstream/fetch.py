"""``python -m atlas.upstream fetch``: make every object the book cites local, and nothing more.

Each pinned upstream gets a bare partial clone at ``<git-common-dir>/atlas-upstreams/NAME.git``
holding the cited commits and their trees only (``--depth=1 --filter=blob:none``: no history,
no blobs), then the cited blobs, fetched by id in one batch per upstream. A second run finds
everything present and transfers nothing. A clone is built in a temporary folder and renamed
into place, so an interrupted first run leaves nothing half-made; an interrupted later fetch
leaves git's own atomic packs, and the next run completes them.

This is the only code that transfers objects: reads during a build never fetch (atlas.git).
"""

from __future__ import annotations

import argparse
import io
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from atlas.bookroot import BookPaths, NotABook, command
from atlas.git import repo
from atlas.git.revs import KnownRevs, expand_rev
from atlas.git.store import HEX, GitStore, GitStoreError, MissingObject, UnsafePath
from atlas.upstream.lock import load_lock, lock_shas
from atlas.upstream.partialclone import (
    FetchError,
    Progress,
    create_store,
    discard_if_empty,
    ensure_store,
    fetch_blobs,
    fetch_commits,
    human,
    is_offline,
    is_store,
    missing_commits,
    missing_id,
    pack_bytes,
    run_fetch,
)
from atlas.upstream.registry import Upstream, load_registry, object_store


# -- what the book needs ------------------------------------------------------------------------
@dataclass
class Needs:
    """What one upstream must provide: commits (full SHA) and, per commit, the cited paths."""

    upstream: Upstream
    paths: dict[str, set[str]] = field(default_factory=dict)  # commit -> paths
    unresolved: dict[str, str] = field(default_factory=dict)  # rev -> why it cannot be fetched
    refs: dict[str, set[str]] = field(default_factory=dict)  # tag -> paths, fetched first
    sites: dict[str, list[str]] = field(default_factory=dict)  # rev -> ["page:line", ...]
    revs_of: dict[str, set[str]] = field(default_factory=dict)  # commit -> revs written for it
    # Paths the labs may read at the pin (atlas.upstream.labpaths): fetched when the pin's tree
    # has them, silently passed over when it does not.
    lab_paths: frozenset[str] = frozenset()

    def add(self, commit: str, path: str | None = None) -> None:
        paths = self.paths.setdefault(commit, set())
        if path:
            paths.add(path)

    def where(self, rev: str) -> list[str]:
        """The pages and lines that cite ``NAME@rev``."""
        return self.sites.get(rev, [])


def lock_revs(book_root: Path) -> dict[str, set[str]]:
    """Full commit SHAs the lock file knows, per upstream (to expand short revs offline)."""
    try:
        return lock_shas(load_lock(book_root))
    except (OSError, ValueError):
        return {}


@lru_cache(maxsize=32)
def past_pins(book_root: Path, up: Upstream) -> set[str]:
    """Every commit the book's history ever pinned NAME to: a citation left behind by a bump
    (``NAME@OLDSHORT``) names one, and a remote can only be asked for a full SHA."""
    return repo.past_pins(book_root, up.path)


def collect_needs(
    book_root: Path,
    registry: dict[str, Upstream],
    names: Iterable[str] | None = None,
    source: str = "source",
) -> dict[str, Needs]:
    """Per pinned upstream, the commits and paths the book's citations read."""
    from atlas.upstream.citations import scan_book

    wanted = set(names) if names else None
    needs = {
        name: Needs(up)
        for name, up in registry.items()
        if up.pin and (wanted is None or name in wanted)
    }
    from atlas.upstream.labpaths import lab_path_candidates

    candidates = lab_path_candidates(book_root)
    for need in needs.values():
        need.add(need.upstream.pin or "")
        need.lab_paths = candidates
    known = lock_revs(book_root)
    stores: dict[str, GitStore | None] = {}
    try:
        for site in scan_book(book_root, source):
            if site.spec is None:
                continue  # the build reports a citation that does not parse
            need = needs.get(site.spec.name)
            if need is None:
                continue
            rev = site.spec.rev
            commit = need.upstream.pin if rev is None else None
            if rev is not None:
                need.sites.setdefault(rev, []).append(f"{site.page}:{site.line}")
            if commit is None and rev is not None:
                commit = _expand_rev(book_root, need, rev, known, stores)
                if commit:
                    need.revs_of.setdefault(commit, set()).add(rev)
            if commit:
                need.add(commit, site.spec.path)
            elif rev in need.refs:
                need.refs[rev].add(site.spec.path)
    finally:
        for store in stores.values():
            if store is not None:
                store.close()
    return needs


def _expand_rev(
    book_root: Path,
    need: Needs,
    rev: str,
    known: dict[str, set[str]],
    stores: dict[str, GitStore | None],
) -> str | None:
    """The full SHA of an explicit rev, from the store, the pin or the lock; a tag to fetch
    otherwise (None), or a note in need.unresolved for a short SHA nothing can expand."""
    up = need.upstream
    low = rev.lower()
    found = expand_rev(rev, KnownRevs(pin=up.pin))  # a full SHA, or the pin: no objects needed
    if found:
        return found
    if up.name not in stores:
        git_dir = object_store(book_root, up)
        stores[up.name] = GitStore(git_dir) if git_dir else None
    store = stores[up.name]
    if store is not None:
        try:
            found = expand_rev(rev, store=store)  # a tag or a prefix of a commit it holds
        except (LookupError, UnsafePath):
            found = None
        if found:
            return found
    if HEX.match(low):
        shas = known.get(up.name, set()) | past_pins(book_root, up)
        found = KnownRevs(shas=shas).expand(rev)
        if found:
            return found
        if not re.fullmatch(r"[0-9a-f]{7,39}", low):
            need.refs.setdefault(rev, set())  # all-hex but not a SHA length: may be a tag
            return None
        need.unresolved[rev] = (
            f"{up.name}@{rev} is a short SHA found in neither the store, upstreams.lock nor "
            "the book's past pins; "
            "a remote can only be asked for a full SHA: write the full 40-digit SHA"
        )
        return None
    need.refs.setdefault(rev, set())
    return None


# -- the fetch of one upstream ------------------------------------------------------------------
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


# -- the command --------------------------------------------------------------------------------
def fetch_all(
    book_root: Path,
    needs: dict[str, Needs],
    quick: bool = False,
    stream=None,  # type: ignore[no-untyped-def]
    stop_offline: bool = False,
) -> list[Result]:
    """Fetch every upstream in ``needs``; one Result each (``error`` set when it failed).

    With ``stop_offline``, the first failure that is the network's ends the run: the other
    upstreams would only fail the same way, slowly.
    """
    width = max((len(n) for n in needs), default=8)
    results = []
    for name, need in needs.items():
        progress = Progress(name, width, stream)
        unresolved = [
            f"{where}: {name}@{rev}: {why}"
            for rev, why in need.unresolved.items()
            for where in need.where(rev)
        ]
        try:
            result = fetch_upstream(book_root, need, progress, quick)
            result.bad_revs = unresolved + result.bad_revs
        except (FetchError, GitStoreError, OSError) as exc:
            results.append(Result(name, error=str(exc), bad_revs=unresolved))
            progress.done(f"FAILED: {exc}")
            if stop_offline and is_offline(str(exc)):
                break
            continue
        cited = sum(len(p) for p in need.paths.values())
        if result.missing_before == 0:
            progress.done(f"up to date: {cited} cited file(s) present, nothing transferred")
        else:
            progress.done(
                f"{result.commits} commit(s) with trees, {result.blobs} blob(s): "
                f"{result.objects} objects, {human(result.bytes)} transferred"
            )
        for absent in result.absent_paths:
            progress.done(f"note: {absent} does not exist (see `{command(book_root, 'check')}`)")
        for sha in result.unavailable:
            progress.done(f"note: the remote would not send blob {sha} (absent from that mirror?)")
        for line in result.bad_revs:
            progress.done(f"bad revision: {line}")
        results.append(result)
    return results


def summary(results: list[Result]) -> str:
    ok = [r for r in results if r.error is None]
    moved = sum(r.bytes for r in ok)
    tail = "nothing transferred" if moved == 0 else f"{human(moved)} transferred"
    bad = sum(len(r.bad_revs) for r in results)
    note = f"; {bad} citation(s) name a revision that does not exist (listed above)" if bad else ""
    return (
        f"upstreams: {len(ok)}/{len(results)} ready; {sum(r.objects for r in ok)} objects, "
        f"{tail}{note}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m atlas.upstream fetch",
        description="Fetch the objects the book cites (bare partial clones, least transfer).",
    )
    parser.add_argument(
        "names", nargs="*", metavar="NAME", help="upstreams to fetch (default: all)"
    )
    parser.add_argument(
        "--if-needed",
        action="store_true",
        help="do nothing when every cited object is present; offline, say so and exit 0",
    )
    parser.add_argument("--root", type=Path, default=None, help="the book's root (default: here)")
    parser.add_argument("--source", default="source", help="pages folder under the root")
    args = parser.parse_args((argv or [])[1:] if argv and argv[0] == "fetch" else argv)
    try:
        root = BookPaths.from_cli(args.root).root
    except NotABook as exc:
        print(f"fetch: {exc}", file=sys.stderr)
        return 2
    registry = load_registry(root)
    unknown = [n for n in args.names if n not in registry]
    if unknown:
        print(
            f"fetch: unknown upstream(s) {', '.join(unknown)}; "
            f"known: {', '.join(sorted(registry))}",
            file=sys.stderr,
        )
        return 2
    link_only = [n for n in args.names if not registry[n].pin]
    if link_only:
        print(
            f"fetch: {', '.join(link_only)} is link-only (no gitlink pin); nothing to fetch",
            file=sys.stderr,
        )
    try:
        return _run(root, registry, args.names, args.if_needed, args.source)
    except KeyboardInterrupt:
        print(
            "\nfetch: interrupted; run it again to finish (nothing is left half-made)",
            file=sys.stderr,
        )
        return 130


def _run(
    root: Path, registry: dict[str, Upstream], names: list[str], if_needed: bool, source: str
) -> int:
    needs = collect_needs(root, registry, names or None, source)
    if not if_needed:
        results = fetch_all(root, needs)
        print(summary(results), file=sys.stderr)
        return 1 if any(r.error or r.bad_revs for r in results) else 0
    counts = {n: c for n, c in missing_counts(root, needs).items() if c}
    if not counts:
        return 0
    quiet = io.StringIO()
    results = fetch_all(
        root, {n: needs[n] for n in counts}, quick=True, stream=quiet, stop_offline=True
    )
    failed = [r for r in results if r.error]
    if failed:
        print(
            f"upstreams: {sum(counts.values())} cited object(s) missing and not fetched "
            f"({failed[0].name}: {failed[0].error}); building with placeholders. "
            "Run `make upstreams` when online.",
            file=sys.stderr,
        )
    else:
        print(summary(results), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
