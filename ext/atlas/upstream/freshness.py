"""The freshness page: how far each pin is behind, and which citations are left behind it.

``{upstream-freshness}`` renders, for each git upstream, its pin and the pin's date, the newest
commit its object store knows (the commits fetched for pins, drifts and bumps, and the
remote's head that ``drift`` fetches) with its date, how far the pin is behind it (days, and
commits when the store holds the history between them), and the citations still reading an
older commit (:mod:`atlas.upstream.behind`), with the reason the page gives. Link-only
upstreams show their link pin. What the table reports lives in the stores and the other pages,
not in its own source: every build computes it (:func:`book_rows`, about a second) and re-reads
the page when it differs from the table the page shows (a digest kept in
:class:`~atlas.upstream.state.UpstreamState`), so a no-op build reads nothing.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from docutils import nodes
from sphinx.environment import BuildEnvironment
from sphinx.util.docutils import SphinxDirective

from atlas.git.process import run
from atlas.git.store import GitStore, GitStoreError, MissingObject
from atlas.ui import _
from atlas.upstream.behind import commit_time, is_behind, may_be_behind, role_reasons
from atlas.upstream.citations import scan_book
from atlas.upstream.registry import Upstream, load_registry, object_store

MAX_WALK = 5000  # parents followed to count the commits between the pin and the newest


@dataclass
class Freshness:
    name: str
    pin: str | None
    pin_time: int | None = None
    newest: str | None = None
    newest_time: int | None = None
    commits_behind: int | None = None
    behind: list[str] = field(default_factory=list)  # "page:line citation (reason)"
    link_only: bool = False


def known_commits(git_dir: Path) -> list[str]:
    """The commits the store names by a ref (``refs/atlas/...``, branches, tags)."""
    proc = run("for-each-ref", "--format=%(objectname) %(objecttype)", git_dir=git_dir)
    if proc.returncode != 0:
        return []
    return [line.split()[0] for line in proc.stdout.splitlines() if line.endswith(" commit")]


def parents(store: GitStore, commit: str) -> list[str]:
    _, data = store.read_object(commit)
    head = data.split(b"\n\n", 1)[0].decode("utf-8", "replace")
    return [line[7:] for line in head.splitlines() if line.startswith("parent ")]


def count_between(store: GitStore, old: str, new: str) -> int | None:
    """Commits reachable from ``new`` and not from ``old``, when the store holds them all
    (a shallow store does not: None)."""
    seen, todo, reached = set(), [new], False
    while todo and len(seen) < MAX_WALK:
        commit = todo.pop()
        if commit in seen:
            continue
        if commit == old:
            reached = True
            continue
        seen.add(commit)
        try:
            todo += parents(store, commit)
        except (MissingObject, GitStoreError, LookupError, ValueError):
            return None
    return len(seen) if reached and not todo else None


def freshness(
    book_root: Path, stores_root: Path | None = None, source: str = "source"
) -> list[Freshness]:
    """One row per upstream of the book, git upstreams first, link-only ones after."""
    rows = []
    sites = [
        s
        for s in scan_book(book_root, source)
        if s.spec is not None and s.spec.rev and may_be_behind(s.spec.rev)
    ]
    reasons: dict[str, dict[str, str]] = {}
    for name, up in sorted(load_registry(book_root).items()):
        if not up.pin:
            rows.append(Freshness(name, up.link_only_pin, link_only=True))
            continue
        row = Freshness(name, up.pin)
        git_dir = object_store(book_root, up, stores_root)
        if git_dir is not None:
            store = GitStore(git_dir)
            try:
                fill(row, store, git_dir, up)
                for site in (s for s in sites if s.spec and s.spec.name == name):
                    commit = store.resolve(site.spec.rev or "")
                    if commit and is_behind(book_root, up, store, commit):
                        why = site.options.get("behind") or page_reasons(
                            book_root, site.page, reasons
                        ).get(site.raw.strip(), "no reason given")
                        row.behind.append(f"{site.page}:{site.line} {site.raw.strip()} ({why})")
            finally:
                store.close()
        rows.append(row)
    return sorted(rows, key=lambda r: (r.link_only, r.name))


def fill(row: Freshness, store: GitStore, git_dir: Path, up: Upstream) -> None:
    assert up.pin is not None
    row.pin_time = commit_time(store, up.pin)
    dated = [(commit_time(store, c), c) for c in set(known_commits(git_dir)) | {up.pin}]
    dated = [(t, c) for t, c in dated if t is not None]
    if dated:
        row.newest_time, row.newest = max(dated)
    if row.newest and row.newest != up.pin:
        row.commits_behind = count_between(store, up.pin, row.newest)
    elif row.newest == up.pin:
        row.commits_behind = 0


def page_reasons(book_root: Path, page: str, cache: dict[str, dict[str, str]]) -> dict[str, str]:
    if page not in cache:
        try:
            cache[page] = role_reasons((book_root / page).read_text(encoding="utf-8").splitlines())
        except OSError:
            cache[page] = {}
    return cache[page]


def date(seconds: int | None) -> str:
    if seconds is None:
        return "?"
    return dt.datetime.fromtimestamp(seconds, dt.UTC).strftime("%Y-%m-%d")


def how_far(row: Freshness) -> str:
    if row.link_only:
        return _("link only")
    if row.newest is None or row.pin_time is None or row.newest_time is None:
        return _("objects not here (run make upstreams)")
    if row.newest == row.pin:
        return _("newest known")
    days = (row.newest_time - row.pin_time) // 86400
    commits = (
        _("{n} commits, ").format(n=row.commits_behind) if row.commits_behind is not None else ""
    )
    behind = _("{days} days behind {commit} ({date})").format(
        days=days, commit=row.newest[:10], date=date(row.newest_time)
    )
    return commits + behind


def table(rows: list[Freshness]) -> nodes.table:
    """A docutils table: upstream, pin, pin's date, how far behind, citations behind."""
    head = (
        _("upstream"),
        _("pin"),
        _("pin's date"),
        _("behind the newest commit known here"),
        _("left behind"),
    )
    tbl = nodes.table(classes=["upstream-freshness"])
    group = nodes.tgroup(cols=len(head))
    tbl += group
    for _column in head:
        group += nodes.colspec(colwidth=1)
    thead, tbody = nodes.thead(), nodes.tbody()
    group += thead
    group += tbody

    def row_of(cells: list[nodes.Node | str]) -> nodes.row:
        row = nodes.row()
        for cell in cells:
            entry = nodes.entry()
            entry += cell if isinstance(cell, nodes.Node) else nodes.paragraph(text=cell)
            row += entry
        return row

    thead += row_of(list(head))
    for r in rows:
        behind: nodes.Node
        if r.behind:
            behind = nodes.bullet_list()
            for item in r.behind:
                behind += nodes.list_item("", nodes.paragraph(text=item))
        else:
            behind = nodes.paragraph(text=_("none"))
        pin = nodes.paragraph("", "", nodes.literal(text=(r.pin or "?")[:10]))
        tbody += row_of([r.name, pin, date(r.pin_time), how_far(r), behind])
    return tbl


def book_rows(env: BuildEnvironment) -> list[Freshness]:
    """:func:`freshness` of the book this build reads, with its stores."""
    from atlas.upstream.directive import resolver  # the directive owns this build's resolver

    res = resolver(env)
    return freshness(res.book_root, res.stores_root, res.paths.source_arg)


def rows_digest(rows: list[Freshness]) -> str:
    """What decides the table's text: the rows' every field (dataclasses, so ``repr`` is it)."""
    return hashlib.sha256(repr(rows).encode()).hexdigest()


class FreshnessDirective(SphinxDirective):
    """``{upstream-freshness}``: the table of :func:`freshness`, re-read when it changes."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        from atlas.upstream.state import upstream_state

        rows = book_rows(self.env)
        upstream_state(self.env).freshness[self.env.docname] = rows_digest(rows)
        return [table(rows)]
