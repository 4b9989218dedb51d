"""What moving an upstream's pin would do to each of its citations: the plan ``drift`` prints.

The plan gathers the citations of the pin (explicit ``@REV``s of other commits are kept as
they are), follows their files to the new commit (:mod:`.trees`), fetches the blobs a
partial clone lacks, and carries each citation with :func:`.carry.carry` on the two blobs'
text. A citation left behind is rewritten to read the old commit (``NAME@OLDSHORT ...``), so
the book still builds.
"""

from __future__ import annotations

from pathlib import Path

from atlas.code.spec import CitationSpec
from atlas.git.revs import is_sha_prefix
from atlas.git.store import GitStore, MissingObject
from atlas.upstream import partialclone
from atlas.upstream.citations import CitationSite, scan_book
from atlas.upstream.drift.carry import FileAt, Verdict, as_text, carry
from atlas.upstream.drift.guard import guard_for
from atlas.upstream.drift.model import SHORT, DriftError, DriftStatus, Plan, Record
from atlas.upstream.drift.others import OtherFiles
from atlas.upstream.drift.suggest import suggest
from atlas.upstream.drift.target import resolve_target
from atlas.upstream.drift.trees import FileMove, blob_hunks, follow_files
from atlas.upstream.linemap import Hunk
from atlas.upstream.registry import load_registry


def plan(book_root: Path, name: str, rev: str | None) -> Plan:
    """What moving NAME's pin to REV would do to each of its citations (changes nothing but
    the upstream's object store, which may receive the target's trees and blobs)."""
    book_root = Path(book_root).resolve()
    registry = load_registry(book_root)
    up = registry.get(name)
    if up is None:
        raise DriftError(f"unknown upstream {name!r}; known: {', '.join(sorted(registry))}")
    if not up.pin:
        raise DriftError(f"{name} is link-only (no gitlink pin); there is no pin to move")
    old = up.pin
    git_dir, ours = partialclone.ensure_store(book_root, up)
    if partialclone.missing_commits(git_dir, [old]):
        try:
            partialclone.fetch_commits(git_dir, [old], (), None, quick=False)
        except partialclone.FetchError:
            if ours:
                partialclone.discard_if_empty(git_dir)
            raise
    new = resolve_target(git_dir, rev, ours)

    ours_sites: list[CitationSite] = []
    kept: list[CitationSite] = []
    for site in scan_book(book_root):
        if site.spec is None or site.spec.name != name:
            continue
        if site.spec.rev is None or _same_commit(site.spec.rev, old):
            ours_sites.append(site)
        else:
            kept.append(site)
    paths = {s.spec.path for s in ours_sites if s.spec}
    moves = follow_files(git_dir, old, new, paths, ours)
    blobs = {m.old_blob for m in moves.values() if m.old_blob}
    blobs |= {m.new_blob for m in moves.values() if m.new_blob}
    if ours:
        store = GitStore(git_dir)
        try:
            missing = sorted(b for b in blobs if not store.has_object(b))
        finally:
            store.close()
        partialclone.fetch_blobs(git_dir, missing, None, quick=False)
    store = GitStore(git_dir)
    try:
        others = OtherFiles(git_dir, old, new, store, ours)
        records = [carry_site(store, git_dir, site, moves, old, new, others) for site in ours_sites]
    finally:
        store.close()
    return Plan(up, old, new, records, kept, git_dir)


def _same_commit(rev: str, commit: str) -> bool:
    return is_sha_prefix(rev, any_case=True) and commit.startswith(rev.lower())


def carry_site(
    store: GitStore,
    git_dir: Path,
    site: CitationSite,
    moves: dict[str, FileMove],
    old: str,
    new: str,
    others: OtherFiles | None = None,
) -> Record:
    """The record of one citation: its status and its text after the move; one left behind
    gets a suggestion (:mod:`.suggest`) when a place at the new pin passes its guard."""
    spec = site.spec
    assert spec is not None
    move = moves.get(spec.path) or FileMove(spec.path, None, None, None)
    verdict, before, after = _verdict(store, git_dir, spec, move, old, new)
    raw = site.raw.strip()
    record = Record(site.page, site.line, site.kind, raw, raw, verdict.status, verdict.detail)
    explicit = spec.rev is not None
    if not verdict.carried:  # left reading the old commit, as written or with its short SHA
        record.new = raw if explicit else str(spec.with_rev(old[:SHORT]))
        found = suggest(
            spec.selector,
            spec.path,
            before.text,
            after.path if after.text is not None else None,
            after.text,
            (lambda: others.candidates(spec.path, move.new_path)) if others else (lambda: ()),
            guard_for(spec.name, site.options),
        )
        if found is not None:
            record.suggestion = str(CitationSpec(spec.name, None, found.path, found.selector))
            record.suggestion_note = found.note
            record.suggestion_linemap = found.linemap
        return record
    assert verdict.path is not None
    if verdict.path != spec.path or verdict.selector != spec.selector or explicit:
        rev = new[: max(SHORT, len(spec.rev))] if spec.rev is not None else None
        record.new = str(CitationSpec(spec.name, rev, verdict.path, verdict.selector))
    record.new_path, record.new_blob, record.linemap = verdict.path, move.new_blob, verdict.linemap
    return record


def _verdict(
    store: GitStore, git_dir: Path, spec: CitationSpec, move: FileMove, old: str, new: str
) -> tuple[Verdict, FileAt, FileAt]:
    """Read the cited file's blobs at both commits and carry the citation across them: the
    verdict, and the file at both commits (text None: not there or not readable)."""
    before = FileAt(spec.path, old[:SHORT], None)
    after = FileAt(move.new_path or spec.path, new[:SHORT], None)
    if move.old_blob is not None:
        try:
            before = FileAt(before.path, before.rev, as_text(store.read_object(move.old_blob)[1]))
        except MissingObject:
            gone = f"blob {move.old_blob} of {spec.path} is not in the store"
            return Verdict(DriftStatus.GONE, gone), before, after
        if move.new_path is not None and move.new_blob is not None:
            try:
                after = FileAt(after.path, after.rev, as_text(store.read_object(move.new_blob)[1]))
            except MissingObject:
                gone = f"blob {move.new_blob} of {move.new_path} is not in the store"
                return Verdict(DriftStatus.GONE, gone), before, after

    def git_diff(_old_lines: list[str], _new_lines: list[str]) -> list[Hunk] | None:
        assert move.old_blob is not None and move.new_blob is not None
        return blob_hunks(git_dir, move.old_blob, move.new_blob)  # git's own line diff

    return carry(spec.selector, before, after, git_diff), before, after
