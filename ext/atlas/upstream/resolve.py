"""Resolve one citation to the lines it shows, or to one clear error: the single code path
behind the directive, the role, ``check`` and ``lock``.

Order: parse, registry, commit, snippet cache, git objects, selector, options, lock. Each step
that fails says what it found (the upstreams that exist, the commits and tags, the nearest file
or symbol names, the file's length) and the fix. Objects that are simply absent (no mirror,
a partial clone offline) are not an error: the result is ``missing`` and renders as a
placeholder, provided the lock proves the citation was once checked against real objects.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from atlas.bookroot import BookPaths, command
from atlas.code.select import (
    DEFAULT_MAX_LINES,
    ContainsError,
    Segment,
    SelectError,
    apply_options,
    check_options,
    contains_hint,
    decode,
    language_for,
    parse_emphasis,
    select,
    selected_text,
)
from atlas.code.spec import CitationSpec, SpecError, line_ranges, parse_spec
from atlas.git.repo import recent_refs
from atlas.git.revs import NOTHING_KNOWN, KnownRevs, expand_rev, is_sha_prefix
from atlas.git.store import GitStore, GitStoreError, MissingObject, UnsafePath, store_for
from atlas.upstream.cache import CachedSnippet, SnippetCache, cache_key
from atlas.upstream.lock import (
    LockEntry,
    known_revs,
    load_lock,
    load_revs,
    lock_key,
    rev_key,
    text_hash,
)
from atlas.upstream.packages.registry import PackageUpstream
from atlas.upstream.registry import Upstream, load_registry, object_store


class ResolutionStatus(StrEnum):
    """The outcome of one citation; the values are the words tables and JSON print."""

    OK = "ok"
    MISSING = "missing"  # objects absent, the lock proves it was checked: a placeholder
    ERROR = "error"
    DRIFT = "drift"  # the text no longer matches the lock


OK, MISSING, ERROR, DRIFT = (
    ResolutionStatus.OK,
    ResolutionStatus.MISSING,
    ResolutionStatus.ERROR,
    ResolutionStatus.DRIFT,
)


@dataclass
class Resolution:
    """The outcome of one citation (:class:`ResolutionStatus`)."""

    raw: str
    status: ResolutionStatus
    message: str = ""
    spec: CitationSpec | None = None
    upstream: Upstream | PackageUpstream | None = None
    commit: str | None = None
    segments: list[Segment] = field(default_factory=list)
    language: str = "text"
    emphasize: list[int] = field(default_factory=list)
    key: str | None = None
    entry: LockEntry | None = None
    new_entry: bool = False
    source: str | None = None  # "objects" or "cache"
    read_path: str | None = None  # the path read, after in-tree symlinks
    read: LockEntry | None = None  # what was read now (blob, text hash), whatever the lock says
    rev_key: str | None = None  # "NAME@REV" when REV is a tag or short SHA resolved here

    @property
    def path(self) -> str:
        """The path shown and linked: where the lines really are (symlinks followed)."""
        assert self.spec is not None
        return self.read_path or self.spec.path

    @property
    def span(self) -> tuple[int, int] | None:
        """First and last upstream line shown (or cited, when missing)."""
        if self.segments:
            return self.segments[0].start, self.segments[-1].end
        ranges = line_ranges(self.spec.selector) if self.spec and not self.spec.is_symbol else None
        return (ranges[0][0], ranges[-1][1]) if ranges else None

    @property
    def whole_file(self) -> bool:
        return self.spec is not None and self.spec.selector is None

    @property
    def permalink(self) -> str | None:
        if self.upstream is None or self.spec is None:
            return None
        commit = self.commit or self.spec.rev or self.upstream.pin
        if commit is None:
            return None
        return self.upstream.permalink(commit, self.path, None if self.whole_file else self.span)

    def ranges_label(self) -> str:
        """``L10–L40`` or ``L10–L40, L55–L60`` (en dashes, as the caption shows them)."""
        if self.segments:
            spans = [(s.start, s.end) for s in self.segments]
        else:
            spans = (
                line_ranges(self.spec.selector) if self.spec and not self.spec.is_symbol else None
            )
            if not spans:
                return self.spec.selector if self.spec and self.spec.selector else ""
        return ", ".join(f"L{a}" if a == b else f"L{a}\u2013L{b}" for a, b in spans or [])

    def caption(self) -> str:
        """``NAME@shortsha · path · L10–L40``."""
        assert self.spec is not None
        rev = self.commit or self.spec.rev or ""
        rev = self.upstream.short_rev(rev) if self.upstream is not None else rev[:8]
        parts = [f"{self.spec.name}@{rev}" if rev else self.spec.name, self.path]
        if not self.whole_file:
            parts.append(self.ranges_label())
        return " \u00b7 ".join(parts)

    def label(self) -> str:
        """The role's short label: ``file.py:L10–L40`` (``file.py`` for a whole file)."""
        assert self.spec is not None
        base = self.spec.path.rsplit("/", 1)[-1]
        if self.whole_file:
            return base
        if not self.segments and self.spec.is_symbol:
            return f"{base}{self.spec.selector}"
        return f"{base}:{self.ranges_label().replace(', ', ',')}"


class Resolver:
    """Resolves citations of one book: registry, object stores, cache and lock in one place."""

    def __init__(
        self,
        book_root: Path,
        *,
        stores_root: Path | None = None,
        cache_dir: Path | None = None,
        max_lines: int = DEFAULT_MAX_LINES,
        frozen: bool = False,
        lock: dict[str, LockEntry] | None = None,
        read_cache: bool = True,
        paths: BookPaths | None = None,
    ) -> None:
        # the book's paths: given whole by a build or a command (from_paths), else at book_root
        self.paths = paths or BookPaths.at(book_root, stores=stores_root, snippets_cache=cache_dir)
        self.book_root = self.paths.root
        self.stores_root = self.paths.stores_root
        self.registry = load_registry(self.book_root)
        self.cache = SnippetCache(self.paths.snippets_cache)
        self.max_lines = max_lines
        self.frozen = frozen
        self.lock = load_lock(self.book_root) if lock is None else lock
        self.revs = load_revs(self.book_root) if lock is None else {}
        self.read_cache = read_cache  # check and lock verify against objects, not the cache
        self._stores: dict[str, GitStore | None] = {}
        self._known: dict[str, KnownRevs] = {}
        self._texts: dict[str, str] = {}
        # package upstreams (pyproject.toml; quoted from installed files): atlas.upstream.packages
        from atlas.upstream.packages.installed import Installed
        from atlas.upstream.packages.registry import load_packages

        self.packages = load_packages(self.book_root)
        both = sorted(set(self.packages) & set(self.registry))
        if both:
            raise ValueError(
                f"{', '.join(both)} is both a git upstream (.gitmodules) and a package upstream "
                "(pyproject.toml); keep one"
            )
        self.installed = Installed()

    @classmethod
    def from_paths(cls, paths: BookPaths, **kwargs: Any) -> Resolver:
        """The resolver of the book at ``paths`` (its stores, its snippet cache, its pages for
        the commands messages print)."""
        return cls(paths.root, paths=paths, **kwargs)

    # -- stores -----------------------------------------------------------------------------------
    def store(self, upstream: Upstream) -> GitStore | None:
        if upstream.name not in self._stores:
            git_dir = object_store(self.book_root, upstream, self.stores_root)
            try:
                self._stores[upstream.name] = store_for(git_dir) if git_dir else None
            except GitStoreError:
                self._stores[upstream.name] = None
        return self._stores[upstream.name]

    def known_revs(self, up: Upstream) -> KnownRevs:
        """What the book knows of an upstream's commits without its objects
        (:func:`atlas.upstream.lock.known_revs`, from this resolver's lock), once per upstream."""
        if up.name not in self._known:
            self._known[up.name] = known_revs(self.book_root, up, lock=self.lock, revs=self.revs)
        return self._known[up.name]

    # -- steps ------------------------------------------------------------------------------------
    def _commit(self, res: Resolution, store: GitStore | None) -> str | None:
        spec, up = res.spec, res.upstream
        assert spec is not None and up is not None
        if spec.rev is None:
            if up.pin is None:
                raise _Fail(
                    f"upstream '{up.name}' has no pinned commit: {up.path} has no gitlink in the "
                    f"book's index; add one with `git update-index --add --cacheinfo "
                    f"160000,SHA,{up.path}` or give @REV"
                )
            return up.pin
        known = NOTHING_KNOWN if store is not None else self.known_revs(up)  # objects decide
        try:
            found = expand_rev(spec.rev, known, store)
        except LookupError:
            raise _Fail(
                f"revision '{spec.rev}' is ambiguous in {up.name}; give more hex digits"
            ) from None
        except UnsafePath as exc:
            raise _Fail(str(exc)) from None
        if store is None:
            return found
        if found is None:
            exists = [f"the pin {up.pin[:8]}"] if up.pin else []
            exists += recent_refs(store.git_dir)
            what = (
                f"commit '{spec.rev}' is not"
                if is_sha_prefix(spec.rev)
                else f"revision '{spec.rev}' is neither a commit SHA (7 to 40 hex digits) nor a tag"
            )
            raise _Fail(
                f"{what} in {up.name}'s objects ({store.git_dir}); commits "
                f"that exist: {', '.join(exists) or 'none'}; fix the @REV, or fetch it "
                f"(`{command(self.paths, 'fetch')}`)"
            )
        if found != spec.rev:
            res.rev_key = rev_key(up.name, spec.rev)
        return found

    def _snippet(self, res: Resolution, store: GitStore | None) -> CachedSnippet | None:
        spec, commit = res.spec, res.commit
        assert spec is not None and commit is not None and res.upstream is not None
        key = cache_key(res.upstream.name, commit, spec.path, spec.selector)
        hit = self.cache.get(key) if self.read_cache or store is None else None
        if hit is not None:
            res.source = "cache"
            return hit
        if store is None:
            return None

        # objects partly absent (a partial clone offline): the cache, if any, stands in
        def fallback() -> CachedSnippet | None:
            return None if self.read_cache else self.cache.get(key)

        try:
            found = store.resolve_path(commit, spec.path)
        except UnsafePath as exc:
            raise _Fail(str(exc)) from None
        except MissingObject:
            return fallback()
        except LookupError as exc:
            raise _Fail(str(exc)) from None
        if found is None or found[1] != "blob":
            raise _Fail(self._not_found(store, commit, spec.path, found))
        try:
            segments = select(self._text(store, found[2], spec.path), spec, self.max_lines)
        except MissingObject:
            return fallback()
        except SelectError as exc:
            raise _Fail(str(exc)) from None
        snippet = CachedSnippet(blob=found[2], segments=tuple(segments), path=found[3])
        self.cache.put(key, snippet)
        res.source = "objects"
        return snippet

    def _contains_hint(self, res: Resolution, snippet: CachedSnippet, exc: ContainsError) -> str:
        """The message of a wrong ``:contains:``, with where the text occurs in the file."""
        store = self.store(res.upstream) if isinstance(res.upstream, Upstream) else None
        if store is None or res.spec is None:
            return str(exc)
        path = snippet.path or res.spec.path
        try:
            text = self._text(store, snippet.blob, path)
        except (MissingObject, GitStoreError, LookupError):
            return str(exc)
        where = f"{path} at {(res.commit or '')[:8]}"
        return contains_hint(exc, text, where, res.spec.selector)

    def _text(self, store: GitStore, blob: str, path: str) -> str:
        """A blob's text, kept for the next citation of the same file (a book cites the same
        files again and again; each read is a round trip to git)."""
        text = self._texts.get(blob)
        if text is None:
            text = decode(store.read_object(blob)[1], path)
            if len(self._texts) >= 256:
                self._texts.pop(next(iter(self._texts)))
            self._texts[blob] = text
        return text

    def _not_found(self, store: GitStore, commit: str, path: str, found: tuple | None) -> str:
        if found is not None:
            kind = "folder" if found[1] == "tree" else found[1]
            return f"{path} is a {kind} at {commit[:8]}, not a file"
        parent, _, base = path.rpartition("/")
        names: list[str] | None = None
        try:
            names = store.list_dir(commit, parent)
        except (MissingObject, LookupError, UnsafePath):
            names = None
        if names is None:
            return f"{path} does not exist at {commit[:8]}: there is no folder '{parent}'"
        close = difflib.get_close_matches(base, names, n=4, cutoff=0.5)
        hint = f"; nearest in {parent or 'the root'}: {', '.join(close)}" if close else ""
        return f"{path} does not exist at {commit[:8]}{hint}; check the path at this commit"

    # -- the whole thing --------------------------------------------------------------------------
    def resolve(self, raw: str | CitationSpec, options: dict[str, str] | None = None) -> Resolution:
        options = {k: v for k, v in (options or {}).items() if v is not None}
        res = Resolution(raw=str(raw), status=ERROR)
        try:
            res.spec = parse_spec(raw) if isinstance(raw, str) else raw
            self._resolve(res, options)
        except SpecError as exc:
            res.status, res.message = ERROR, str(exc)
        except _Fail as exc:
            res.status, res.message = ERROR, str(exc)
        return res

    def _resolve(self, res: Resolution, options: dict[str, str]) -> None:
        spec = res.spec
        assert spec is not None
        up = self.registry.get(spec.name)
        if up is None and spec.name in self.packages:
            return self._resolve_package(res, options)
        if up is None:
            known = [*self.registry, *self.packages]
            close = difflib.get_close_matches(spec.name, known, n=3)
            hint = f" (did you mean {', '.join(close)}?)" if close else ""
            raise _Fail(f"unknown upstream '{spec.name}'{hint}; known: {', '.join(sorted(known))}")
        res.upstream = up
        if up.pin is None and up.link_only_pin:
            raise _Fail(
                f"'{up.name}' is a link-only upstream (pinned at {up.link_only_pin}, objects not "
                "readable here): point at it with a plain link to its GitHub permalink, "
                "not a citation"
            )
        try:
            check_options(options)
        except SelectError as exc:
            raise _Fail(str(exc)) from None
        res.language = options.get("language") or language_for(spec.path)
        store = self.store(up)
        res.commit = self._commit(res, store)
        snippet = self._snippet(res, store) if res.commit else None
        if res.commit:
            res.key = lock_key(up.name, res.commit, spec.path, spec.selector, options)
            res.entry = self.lock.get(res.key)
        if snippet is None:
            if res.entry is None:
                raise _Fail(
                    f"the objects of '{up.name}' are not available and upstreams.lock has no entry "
                    f"for this citation, so it was never checked against real code; run "
                    f"`{command(self.paths, 'fetch')}`, build, and commit "
                    "upstreams.lock"
                )
            res.status = MISSING
            where = self.store(up).git_dir if self.store(up) else "no object store"
            res.message = (
                f"the objects of '{up.name}' are not available ({where}); the citation shows a "
                f"placeholder. Run `{command(self.paths, 'fetch')}` to fetch them"
            )
            return
        self._finish(res, snippet, options)

    def _resolve_package(self, res: Resolution, options: dict[str, str]) -> None:
        """A package upstream: the installed files, verified against the wheel's RECORD."""
        from atlas.upstream.packages.files import PackageError
        from atlas.upstream.packages.snippet import package_snippet

        assert res.spec is not None
        res.upstream = self.packages[res.spec.name]
        try:
            check_options(options)
        except SelectError as exc:
            raise _Fail(str(exc)) from None
        res.language = options.get("language") or language_for(res.spec.path)
        try:
            snippet = package_snippet(self, res, options)
        except PackageError as exc:
            raise _Fail(str(exc)) from None
        if snippet is not None:
            self._finish(res, snippet, options)

    def _finish(self, res: Resolution, snippet: CachedSnippet, options: dict[str, str]) -> None:
        """Options, emphasis, and the lock: the same for every kind of upstream."""
        try:
            segments = apply_options(list(snippet.segments), options)
            if options.get("emphasize-lines"):
                res.emphasize = parse_emphasis(options["emphasize-lines"], segments)
        except ContainsError as exc:  # name the lines where the text is, at this commit
            raise _Fail(self._contains_hint(res, snippet, exc)) from None
        except SelectError as exc:
            raise _Fail(str(exc)) from None
        res.segments = segments
        res.read_path = snippet.path or None
        digest = text_hash(selected_text(segments))
        res.read = LockEntry(blob=snippet.blob, sha256=digest)
        if res.entry is None:
            if self.frozen:
                raise _Fail(
                    "upstreams.lock has no entry for this citation and the lock is frozen; run "
                    f"`{command(self.paths, 'lock')}` and commit upstreams.lock"
                )
            res.entry, res.new_entry = LockEntry(blob=snippet.blob, sha256=digest), True
        elif res.entry.sha256 != digest or res.entry.blob != snippet.blob:
            res.status = DRIFT
            res.message = (
                f"the selected text no longer matches upstreams.lock (locked blob "
                f"{res.entry.blob[:10]}, read {snippet.blob[:10]}); re-read the citation at this "
                f"commit, then refresh the lock with `{command(self.paths, 'lock')}`"
            )
            return
        res.status = OK


class _Fail(Exception):
    """Internal: one citation error with its message."""
