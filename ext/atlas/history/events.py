"""What a reader of the changelog wants from the book's history, by day: pages added, pages
substantially revised, pins moved, pages translated; and each page's last change.

Computed from :class:`atlas.history.log.History` alone (plus the translated-pages file at the
commits that changed it), so the changelog is the same for every build of a commit. Days are UTC
dates of the commits' committer times, newest first.
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from atlas.history.log import History, LoggedCommit

# A page counts as substantially revised on a day when that day's main-line commits changed at
# least this many of its lines (added plus deleted): a paragraph rewritten, not a typo or a link.
REVISED_LINES = 30
UPSTREAMS = "upstreams/"  # the folder of the book's gitlinks, one per upstream


@dataclass(frozen=True)
class PinMove:
    upstream: str
    old: str | None  # None: the upstream was added that day
    new: str | None  # None: the upstream was removed


@dataclass
class Day:
    """What changed on one date (``YYYY-MM-DD``, UTC)."""

    date: str
    added: list[str] = field(default_factory=list)  # docnames, in the order first seen
    revised: list[str] = field(default_factory=list)
    pins: list[PinMove] = field(default_factory=list)
    translated: list[str] = field(default_factory=list)
    commits: int = 0

    def empty(self) -> bool:
        return not (self.added or self.revised or self.pins or self.translated)


def utc_date(time: int) -> str:
    return datetime.fromtimestamp(time, UTC).strftime("%Y-%m-%d")


@dataclass(frozen=True)
class Layout:
    """Where things are, as paths from the repository's top: the pages' folder (``source/``),
    the page suffix, and the file listing translated pages (None: the book has none)."""

    source: str
    suffix: str = ".md"
    translated_file: str | None = None

    def docname(self, path: str) -> str | None:
        if path.startswith(self.source) and path.endswith(self.suffix):
            return path[len(self.source) : -len(self.suffix)]
        return None


def translated_pages(text: str | None) -> list[str]:
    """The ``complete`` list of a translated-pages TOML file (empty where unreadable: an old
    commit's malformed file is history, not an error of this build)."""
    if not text:
        return []
    try:
        pages = tomllib.loads(text).get("complete", [])
    except tomllib.TOMLDecodeError:
        return []
    return [p for p in pages if isinstance(p, str)]


def days(
    history: History,
    layout: Layout,
    read_file: Callable[[str, str], str | None],
) -> list[Day]:
    """The history by day, newest first. ``read_file(commit, path)`` gives a file at a commit
    (the translated-pages list before and after each commit that changed it)."""
    by_date: dict[str, Day] = {}
    lines: dict[tuple[str, str], int] = {}  # (date, docname) -> lines changed that day
    added_on: dict[str, str] = {}  # docname -> the date it was (last) added
    # oldest first, so that a page added and then revised the same day counts as added
    for commit in reversed(history.commits):
        day = by_date.setdefault(utc_date(commit.time), Day(utc_date(commit.time)))
        day.commits += 1
        _pages(commit, day, layout, lines, added_on)
        _pins(commit, day)
        if layout.translated_file and any(c.path == layout.translated_file for c in commit.changes):
            before = set(translated_pages(read_file(f"{commit.sha}^", layout.translated_file)))
            after = translated_pages(read_file(commit.sha, layout.translated_file))
            day.translated += [p for p in after if p not in before and p not in day.translated]
    for (date, doc), count in lines.items():
        day = by_date[date]
        if count >= REVISED_LINES and added_on.get(doc) != date and doc not in day.revised:
            day.revised.append(doc)
    ordered = sorted(by_date.values(), key=lambda d: d.date, reverse=True)
    for day in ordered:
        day.revised.sort()
    return [d for d in ordered if not d.empty()]


def _pages(
    commit: LoggedCommit,
    day: Day,
    layout: Layout,
    lines: dict[tuple[str, str], int],
    added_on: dict[str, str],
) -> None:
    for change in commit.changes:
        doc = layout.docname(change.path)
        if doc is None:
            continue
        if change.status == "A" or (change.status in "RC" and change.renamed_from):
            old = layout.docname(change.renamed_from or "")
            if change.status == "A" or old is None:
                if doc not in day.added:
                    day.added.append(doc)
                added_on[doc] = day.date
                continue
        if change.status != "D":
            key = (day.date, doc)
            lines[key] = lines.get(key, 0) + change.lines


def _pins(commit: LoggedCommit, day: Day) -> None:
    for change in commit.changes:
        if not (change.is_gitlink and change.path.startswith(UPSTREAMS)):
            continue
        name = change.path[len(UPSTREAMS) :]
        old = change.old_sha if change.status != "A" else None
        new = change.new_sha if change.status != "D" else None
        if change.status == "M" and change.old_mode != "160000":
            old = None  # a file became a gitlink: an upstream added
        earlier = next((i for i, p in enumerate(day.pins) if p.upstream == name), None)
        if earlier is None:
            day.pins.append(PinMove(name, old, new))
        else:  # moved twice in a day: one move, from the day's first pin to its last
            day.pins[earlier] = PinMove(name, day.pins[earlier].old, new)


def last_changes(history: History, paths: set[str]) -> dict[str, LoggedCommit]:
    """For each of ``paths`` (from the repository's top), the newest main-line commit that
    changed it; paths no commit touched are absent (new, uncommitted files)."""
    found: dict[str, LoggedCommit] = {}
    for commit in history.commits:  # newest first
        for change in commit.changes:
            if change.path in paths and change.path not in found:
                found[change.path] = commit
        if len(found) == len(paths):
            break
    return found
