"""A plan applied: the citations rewritten in their pages, their lock entries moved, the gitlink
staged at the new pin.

The pages are checked against the plan before anything is written (a page edited since the
plan was made stops the bump), and an unreadable lock stops it before any page is touched.
"""

from __future__ import annotations

from pathlib import Path

from atlas.git import repo
from atlas.git.store import GitStore, MissingObject
from atlas.upstream.citations import CitationSite, scan_book
from atlas.upstream.drift.model import DriftError, Plan, Record
from atlas.upstream.lock import LockEntry, load_lock, lock_key, lock_path, save_lock, text_hash
from atlas.upstream.pagewriter import CitationEdit, PageEditError, rewrite_pages
from atlas.upstream.registry import Upstream
from atlas.upstream.select import SelectError, apply_options, decode, select, selected_text
from atlas.upstream.spec import CitationSpec, parse_spec


def apply(book_root: Path, the_plan: Plan) -> dict[str, object]:
    """Rewrite the pages, move the lock entries and the gitlink."""
    book_root = Path(book_root).resolve()
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
    moved, unknown = refresh_lock(book_root, the_plan, sites)
    set_gitlink(book_root, the_plan.upstream, the_plan.new)
    return {"pages": touched, "lock_moved": moved, "lock_unknown": unknown}


def refresh_lock(
    book_root: Path, the_plan: Plan, sites: dict[tuple[str, int, str], CitationSite]
) -> tuple[int, int]:
    """Move the lock entries of carried citations to the new pin: (moved, not computable).

    A carried citation selects the same text, so its sha256 stays and only the key and the
    blob change; a citation the lock never recorded is selected afresh at the new pin.
    Entries only the old citations used are dropped. No lock file: nothing to refresh.
    """
    if not lock_path(book_root).is_file():
        return 0, 0
    data = load_lock(book_root)
    moved = unknown = 0
    stale: set[str] = set()
    store = GitStore(the_plan.git_dir) if the_plan.git_dir else None
    try:
        for rec in the_plan.records:
            if rec.status not in ("unchanged", "moved"):
                continue
            site = sites[(rec.page, rec.line, rec.old)]
            spec, new_spec = site.spec, parse_spec(rec.new)
            assert spec is not None
            old_key = lock_key(spec.name, the_plan.old, spec.path, spec.selector, site.options)
            new_key = lock_key(
                spec.name, the_plan.new, new_spec.path, new_spec.selector, site.options
            )
            entry = data.get(old_key)
            digest = entry.sha256 if entry else _selected_hash(store, rec, new_spec, site.options)
            if digest is None or rec.new_blob is None:
                unknown += 1
                continue
            data[new_key] = LockEntry(blob=rec.new_blob, sha256=digest)
            if old_key != new_key:
                stale.add(old_key)
            moved += 1
    finally:
        if store is not None:
            store.close()
    behind = {
        lock_key(s.spec.name, the_plan.old, s.spec.path, s.spec.selector, s.options)
        for r in the_plan.records
        if r.status in ("changed", "gone")
        for s in [sites[(r.page, r.line, r.old)]]
        if s.spec is not None
    }
    for key in stale - behind:
        data.pop(key, None)
    save_lock(book_root, data)
    return moved, unknown


def _selected_hash(
    store: GitStore | None, rec: Record, spec: CitationSpec, options: dict[str, str]
) -> str | None:
    """sha256 of what the directive will select at the new pin, or None if it cannot."""
    if store is None or rec.new_blob is None:
        return None
    try:
        text = decode(store.read_object(rec.new_blob)[1], spec.path)
        return text_hash(selected_text(apply_options(select(text, spec), options)))
    except (MissingObject, SelectError, LookupError):
        return None


def set_gitlink(book_root: Path, up: Upstream, commit: str) -> None:
    """Stage the new pin (:func:`atlas.git.repo.set_gitlink` makes the submodule's folder)."""
    said = repo.set_gitlink(book_root, up.path, commit)
    if said is not None:
        raise DriftError(f"cannot move the gitlink {up.path}: {said}")
