"""A plan applied, for either kind of upstream: the citations rewritten in their pages, their lock
entries moved, the pin moved.

Git and package upstreams differ in two things only, which the caller passes as a
:class:`PinMove`: where a carried citation's file is read at the new pin (a blob of the new
commit, or a file of the new version's wheel: a citation the lock never recorded is selected
afresh there), and what the pin is (the gitlink, :mod:`.gitlink`; the requirement in
``pyproject.toml``, :mod:`.package_pin`). Everything else is one rule for both.

The pages are checked against the plan before anything is written (a page edited since the
plan was made stops the bump), and an unreadable lock, or a pin that cannot be moved, stops it
before any page is touched.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from atlas.code.select import SelectError, apply_options, decode, select, selected_text
from atlas.code.spec import CitationSpec, parse_spec
from atlas.upstream.citations import CitationSite, scan_book
from atlas.upstream.drift.model import DriftError, Plan, Record
from atlas.upstream.lock import LockEntry, load_lock, lock_key, lock_path, save_lock, text_hash
from atlas.upstream.pagewriter import CitationEdit, PageEditError, rewrite_pages

Sites = dict[tuple[str, int, str], CitationSite]  # (page, line, citation as written) -> site

# The bytes of a carried citation's file at the new pin, None when they cannot be read.
NewFile = Callable[[Record], bytes | None]


class PinMove(Protocol):
    """What one kind of upstream adds to :func:`apply`."""

    def check(self) -> None:
        """DriftError when the pin cannot be moved (called before any page is touched)."""

    def new_file(self, record: Record) -> bytes | None:
        """The bytes of a carried citation's file at the new pin (None: cannot be read)."""

    def move(self) -> None:
        """Move the pin to the plan's new one (DriftError when it cannot)."""


def apply(book_root: Path, the_plan: Plan, pin: PinMove) -> dict[str, object]:
    """Rewrite the pages, move the lock entries, then the pin: (pages touched, lock entries
    moved, lock entries not computable) for the summary line."""
    book_root = Path(book_root).resolve()
    pin.check()
    sites = {
        (s.page, s.line, s.raw.strip()): s
        for s in scan_book(book_root)
        if s.spec is not None and s.spec.name == the_plan.upstream.name
    }
    missing = [r for r in the_plan.records if (r.page, r.line, r.old) not in sites]
    if missing:
        raise DriftError(
            f"{missing[0].page}:{missing[0].line} changed since the plan was made; run bump again"
        )
    try:
        load_lock(book_root)  # an unreadable lock stops the bump before any page is touched
    except ValueError as exc:
        raise DriftError(str(exc)) from None
    edits = [
        CitationEdit(r.page, r.line, r.kind, r.old, r.new, r.linemap) for r in the_plan.records
    ]
    try:
        touched = rewrite_pages(book_root, edits)
    except PageEditError as exc:
        raise DriftError(f"{exc}; run bump again") from None
    moved, unknown = refresh_lock(book_root, the_plan, sites, pin.new_file)
    pin.move()
    return {"pages": touched, "lock_moved": moved, "lock_unknown": unknown}


def refresh_lock(
    book_root: Path, the_plan: Plan, sites: Sites, new_file: NewFile
) -> tuple[int, int]:
    """Move the lock entries of carried citations to the new pin: (moved, not computable).
    ``sites`` are the citations as they were before the pages were rewritten.

    A carried citation selects the same text, so its sha256 stays and only the key and the
    blob change; a citation the lock never recorded is selected afresh at the new pin (from
    ``new_file``). An old entry is dropped only when no citation reads it any more: a citation
    left behind (changed, gone) is rewritten to read the old pin, so the entry its key names
    stays. No lock file: nothing to refresh.
    """
    if not lock_path(book_root).is_file():
        return 0, 0
    data = load_lock(book_root)
    moved = unknown = 0
    stale: set[str] = set()
    for rec in the_plan.records:
        if not rec.carried:
            continue
        site = sites[(rec.page, rec.line, rec.old)]
        spec, new_spec = site.spec, parse_spec(rec.new)
        assert spec is not None
        old_key = lock_key(spec.name, the_plan.old, spec.path, spec.selector, site.options)
        new_key = lock_key(spec.name, the_plan.new, new_spec.path, new_spec.selector, site.options)
        entry = data.get(old_key)
        digest = entry.sha256 if entry else selected_hash(new_file, rec, new_spec, site.options)
        if digest is None or rec.new_blob is None:
            unknown += 1
            continue
        data[new_key] = LockEntry(blob=rec.new_blob, sha256=digest)
        if old_key != new_key:
            stale.add(old_key)
        moved += 1
    for key in stale - keys_left_behind(the_plan, sites):
        data.pop(key, None)
    save_lock(book_root, data)
    return moved, unknown


def keys_left_behind(the_plan: Plan, sites: Sites) -> set[str]:
    """The lock keys, at the old pin, of the citations a bump leaves reading the old pin."""
    return {
        lock_key(s.spec.name, the_plan.old, s.spec.path, s.spec.selector, s.options)
        for r in the_plan.records
        if not r.carried
        for s in [sites[(r.page, r.line, r.old)]]
        if s.spec is not None
    }


def selected_hash(
    new_file: NewFile, rec: Record, spec: CitationSpec, options: dict[str, str]
) -> str | None:
    """sha256 of what the directive will select at the new pin, or None if it cannot."""
    data = new_file(rec)
    if data is None:
        return None
    try:
        text = decode(data, spec.path)
        return text_hash(selected_text(apply_options(select(text, spec), options)))
    except (SelectError, LookupError):
        return None
