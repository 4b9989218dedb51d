"""What a build remembers about the book's citations, page by page (:class:`UpstreamState`).

Pickled with the environment, merged under ``-j`` and forgotten with a re-read or removed page
by :class:`UpstreamCollector` (see :mod:`atlas.project.envstate`). It serves three purposes:
the build fails at its end on a wrong citation even when nothing was re-read; new lock entries
are written once, at the end; and a page is re-read though unchanged when what its citations
read from outside the pages changed (:meth:`UpstreamCollector.get_outdated_docs`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment

from atlas.project.envstate import PageState, StateCollector, state_of

if TYPE_CHECKING:
    from atlas.upstream.resolve import Resolver

LockKeys = dict[str, tuple[int, bool]]  # lock key or "rev:NAME@REV" -> (line, checkable)


@dataclass
class UpstreamState(PageState):
    # docname -> (line, "raw: message") of each wrong citation (error or drift)
    errors: dict[str, list[tuple[int, str]]] = field(default_factory=dict)
    # pages that show a placeholder (objects absent)
    missing: set[str] = field(default_factory=set)
    # docname -> upstream name -> the pin it was read at (a moved pin re-reads the page)
    pins: dict[str, dict[str, str | None]] = field(default_factory=dict)
    # docname -> lock key -> (blob, text hash): entries to record in upstreams.lock at the end
    new: dict[str, dict[str, tuple[str, str]]] = field(default_factory=dict)
    # docname -> every lock key the page cites (atlas.upstream.lockcheck)
    keys: dict[str, LockKeys] = field(default_factory=dict)
    # docname -> the digest of the freshness table it shows (atlas.upstream.freshness)
    freshness: dict[str, str] = field(default_factory=dict)
    # book-wide: the digest of what citations read outside the pages, at the last build
    outside: str | None = None


def upstream_state(env: BuildEnvironment) -> UpstreamState:
    return state_of(env, UpstreamState)


class UpstreamCollector(StateCollector):
    state = UpstreamState

    def get_outdated_docs(
        self,
        app: Sphinx,
        env: BuildEnvironment,
        added: set[str],
        changed: set[str],
        removed: set[str],
    ) -> list[str]:
        """Pages to re-read though unchanged: those with a wrong or placeholder citation, when
        what they read from outside the pages changed (objects fetched, the lock edited, a
        package installed; otherwise the ledger of atlas.project repeats their errors and a
        no-op build reads nothing), those citing an upstream whose pin moved (a bumped
        gitlink changes what an unqualified citation shows), and a freshness page whose table
        would now differ from the one it shows (the table is computed here, about a second; a
        page that re-read itself every build would make every index page re-read with it)."""
        from atlas.upstream.directive import resolver  # the directive owns this build's resolver
        from atlas.upstream.freshness import book_rows, rows_digest

        state = upstream_state(env)
        res = resolver(env)
        digest = outside_state(res)
        again = set(state.errors) | state.missing if state.outside != digest else set()
        state.outside = digest
        for docname, used in state.pins.items():
            for name, pin in used.items():
                # a package's pin is its version in pyproject.toml
                up = res.registry.get(name) or res.packages.get(name)
                if (up.pin if up else None) != pin:
                    again.add(docname)
        if state.freshness:
            now = rows_digest(book_rows(env))
            again.update(d for d, shown in state.freshness.items() if shown != now)
        return sorted((again & set(env.found_docs)) - removed)


def outside_state(res: Resolver) -> str:
    """A digest of what citations read from outside the pages: the lock, the object stores
    (their packs and refs), the snippet cache, the installed packages. Cheap: file stats."""
    import hashlib
    import os
    import sys

    from atlas.upstream.lock import lock_path
    from atlas.upstream.registry import object_store

    def stamp(path: Path) -> str:
        try:
            st = path.stat()
        except OSError:
            return f"{path}:-"
        return f"{path}:{st.st_mtime_ns}:{st.st_size}"

    parts = [stamp(lock_path(res.book_root)), stamp(res.cache.folder)]
    for name, up in sorted(res.registry.items()):
        git_dir = object_store(res.book_root, up, res.stores_root)
        parts.append(f"{name}:{up.pin}:{git_dir}")
        if git_dir is not None:
            for sub in ("objects", "objects/pack", "refs", "refs/tags", "packed-refs"):
                parts.append(stamp(git_dir / sub))
    parts += [stamp(Path(p)) for p in sys.path if p and os.path.isdir(p)]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()
