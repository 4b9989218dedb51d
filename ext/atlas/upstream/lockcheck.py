"""The lock equals the book, both ways: every citation has its entry, every entry a citation.

While pages are read, :func:`record` notes each citation's lock key per page in the build
state (:class:`atlas.upstream.state.UpstreamState`: merged under ``-j``, dropped with the
page), so the comparison covers the whole book even when a build re-reads nothing. At the end
of every build :func:`finish` compares them with ``upstreams.lock``:

- frozen (``make check``): a citation without an entry is "not locked" (an error at its page
  and line, apart from the citations that are *wrong*), and an entry that no page cites is
  "stale" (an error at its line of the lock); each is named, with the one command that fixes
  them all (``make lock``);
- update (``make html``): new entries were just recorded; stale ones are a one-line note.
"""

from __future__ import annotations

from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.util import logging

from atlas.bookroot import LOCK_FILE, BookPaths, command
from atlas.upstream.lock import REV_PREFIX, key_lines, load_lock, load_revs, rev_key
from atlas.upstream.resolve import DRIFT, MISSING, OK, Resolution
from atlas.upstream.state import upstream_state

logger = logging.getLogger(__name__)


def record(env: BuildEnvironment, res: Resolution, line: int) -> None:
    """Remember the lock key of one citation of the page being read."""
    if res.key is None:
        return
    page = upstream_state(env).keys.setdefault(env.docname, {})
    checkable = res.status in (OK, DRIFT, MISSING)  # a wrong citation is reported as wrong
    page.setdefault(res.key, (line, checkable))
    spec = res.spec
    if spec is not None and spec.rev and res.commit and spec.rev != res.commit:
        page.setdefault(REV_PREFIX + rev_key(spec.name, spec.rev), (line, checkable))


def _plural(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def finish(app: Sphinx, env: BuildEnvironment, paths: BookPaths, frozen: bool) -> None:
    """Compare the book's citations with the lock; in a frozen build, fail on any difference."""
    root = paths.root
    if not paths.lock_file.is_file() and not frozen:
        return
    used: dict[str, tuple[str, int, bool]] = {}
    keys = upstream_state(env).keys
    for docname in sorted(keys):
        if docname in env.found_docs:
            for key, (line, checkable) in keys[docname].items():
                used.setdefault(key, (docname, line, checkable))
    lock, revs = load_lock(root), load_revs(root)
    missing = sorted(
        (where[0], where[1], key)
        for key, where in used.items()
        if where[2] and not key.startswith(REV_PREFIX) and key not in lock
    )
    stale = sorted(k for k in lock if k not in used)
    stale += sorted(r for r in revs if REV_PREFIX + r not in used)  # NAME@REV: a revision
    fix = command(paths, "lock")
    if not frozen:
        if stale:
            logger.info(
                "upstreams.lock: %s that no page cites; `%s` drops them",
                _plural(len(stale), "entry", "entries"), fix,
            )  # fmt: skip
        return
    for docname, line, key in missing:
        logger.error(
            "upstream citation not locked: %s: upstreams.lock has no entry for it and the lock "
            "is frozen; run `%s` and commit upstreams.lock",
            key, fix, location=(docname, line), type="upstream", subtype="unlocked",
        )  # fmt: skip
    lines = key_lines(root)
    shown = paths.lock_file
    for key in stale:
        line = lines.get(key)
        logger.error(
            "stale entry: no page cites %s; run `%s` to drop it and commit %s",
            key, fix, LOCK_FILE, location=f"{shown}:{line}" if line else str(shown),
            type="upstream", subtype="stale",
        )  # fmt: skip
    if missing or stale:
        parts = []
        if missing:
            parts.append(_plural(len(missing), "citation is", "citations are") + " not locked")
        if stale:
            parts.append(_plural(len(stale), "lock entry is", "lock entries are") + " stale")
        logger.error(
            "upstreams.lock does not match the book: %s; run `%s` and commit upstreams.lock",
            " and ".join(parts), fix, type="upstream", subtype="summary",
        )  # fmt: skip
        app.statuscode = 1
