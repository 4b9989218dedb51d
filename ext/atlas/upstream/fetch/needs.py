"""What the book needs from each pinned upstream: the commits its citations name, the paths
they read at each, and the revisions nothing can turn into a commit.

A short SHA is expanded without the network (a remote can only be asked for a full SHA): by
the store when it holds the commit, else by what the book knows, the pin, ``upstreams.lock``
and the book's past pins (:func:`atlas.upstream.lock.known_revs`, the same set as the
directive, ``check`` and ``lock``). Any other name is a tag, fetched by name before the
commits.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from atlas.git.revs import HEX, KnownRevs, expand_rev, is_sha_prefix
from atlas.git.store import GitStore, UnsafePath
from atlas.upstream.citations import scan_book
from atlas.upstream.labpaths import lab_path_candidates
from atlas.upstream.lock import known_revs
from atlas.upstream.registry import Upstream, object_store


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


def collect_needs(
    book_root: Path,
    registry: dict[str, Upstream],
    names: Iterable[str] | None = None,
    source: str = "source",
) -> dict[str, Needs]:
    """Per pinned upstream, the commits and paths the book's citations read."""
    wanted = set(names) if names else None
    needs = {
        name: Needs(up)
        for name, up in registry.items()
        if up.pin and (wanted is None or name in wanted)
    }
    candidates = lab_path_candidates(book_root)
    for need in needs.values():
        need.add(need.upstream.pin or "")
        need.lab_paths = candidates
    known: dict[str, KnownRevs] = {}  # per upstream, read when a short SHA needs it
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
    known: dict[str, KnownRevs],
    stores: dict[str, GitStore | None],
) -> str | None:
    """The full SHA of an explicit rev, from the store, else from what the book knows (a tag
    only from the store: it is fetched by name); a tag to fetch otherwise (None), or a note in
    need.unresolved for a short SHA nothing can expand."""
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
        if up.name not in known:
            known[up.name] = known_revs(book_root, up)
        found = known[up.name].expand(rev)
        if found:
            return found
        if not is_sha_prefix(low):  # a full SHA was taken above
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
