"""``drift NAME [REV]`` and ``bump NAME REV``: carry every citation of an upstream to a new pin.

For each citation of NAME at the old pin: a line range whose lines are untouched is renumbered
through git's diff between the two commits (renames followed); a symbol is looked up again by
name; a citation whose text changed, or whose file or symbol is gone, is shown to a human with
the diff and left pointing at the old commit (``NAME@OLDSHORT ...``), so the book still builds.
``drift`` only reports; ``bump`` rewrites the citations in place (nothing but their text), the
gitlink and ``upstreams.lock``.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import re
import subprocess
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

from atlas import bookroot
from atlas.bookroot import NotABook, find_root
from atlas.upstream import partialclone
from atlas.upstream.citations import CitationSite, scan_book
from atlas.upstream.gitstore import FULL_SHA, GitStore, MissingObject, UnsafePath, check_rev
from atlas.upstream.linemap import Hunk, map_range, nearest_range, parse_hunks
from atlas.upstream.lock import LockEntry, load_lock, lock_key, lock_path, save_lock, text_hash
from atlas.upstream.pagewriter import CitationEdit, PageEditError, rewrite_pages
from atlas.upstream.registry import Upstream, git_env, load_registry
from atlas.upstream.select import (
    SelectError,
    apply_options,
    decode,
    select,
    selected_text,
    split_lines,
)
from atlas.upstream.spec import CitationSpec, line_ranges, parse_spec
from atlas.upstream.symbols import find_symbol

SHORT = 10  # hex digits of the old pin written into citations left behind
STATUSES = ("unchanged", "moved", "changed", "gone")
MAX_DIFF_LINES = 60
HEAD_REF = "refs/atlas/head"


class DriftError(RuntimeError):
    """The command cannot run (unknown upstream, unknown revision); one line for the user."""


@dataclass
class Record:
    """One citation of the upstream: where it is, what it says now and after the move."""

    page: str
    line: int
    kind: str
    old: str
    new: str
    status: str
    detail: str = ""
    new_path: str | None = field(default=None, repr=False)
    new_blob: str | None = field(default=None, repr=False)
    linemap: dict[int, int] = field(default_factory=dict, repr=False)

    def to_json(self) -> dict[str, object]:
        out = asdict(self)
        for private in ("new_path", "new_blob", "linemap"):
            out.pop(private)
        return out


@dataclass
class Plan:
    """Everything a bump would do; ``drift`` prints it, ``bump`` applies it."""

    upstream: Upstream
    old: str
    new: str
    records: list[Record]
    kept: list[CitationSite]  # citations with an explicit @REV other than the old pin
    git_dir: Path | None = None  # the object store both commits were read from

    def counts(self) -> dict[str, int]:
        return {s: sum(r.status == s for r in self.records) for s in STATUSES}


# -- git plumbing -------------------------------------------------------------------------------
def _git(git_dir: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    env = git_env()
    env["GIT_NO_LAZY_FETCH"] = "1"
    return subprocess.run(
        ["git", f"--git-dir={git_dir}", *args], capture_output=True, env=env, check=False
    )


def _rev_parse(git_dir: Path, name: str) -> str | None:
    proc = _git(
        git_dir, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{name}^{{commit}}"
    )
    out = proc.stdout.decode().strip()
    return out if proc.returncode == 0 and FULL_SHA.match(out) else None


def resolve_target(git_dir: Path, rev: str | None, ours: bool) -> str:
    """The full SHA of the target commit, fetching it (trees only) when the store lacks it.

    No REV: the remote's default branch (fetched when reachable), else the newest commit the
    store already has (``refs/atlas/head``, ``origin/HEAD``, ``HEAD``).
    """
    if rev is None:
        if ours:
            try:
                spec = f"+HEAD:{HEAD_REF}"
                partialclone.run_fetch(
                    git_dir,
                    ["--depth=1", "--filter=blob:none", "origin", spec],
                    None,
                    "trees",
                    None,
                    quick=True,
                )
            except partialclone.FetchError:
                pass  # offline: fall back on what the store holds
        for name in (HEAD_REF, "refs/remotes/origin/HEAD", "HEAD"):
            found = _rev_parse(git_dir, name)
            if found:
                return found
        raise DriftError(
            f"{git_dir} holds no branch head and the remote cannot be reached; give REV"
        )
    try:
        check_rev(rev)
    except UnsafePath as exc:
        raise DriftError(str(exc)) from None
    store = GitStore(git_dir)
    try:
        found = store.resolve(rev)
    except LookupError as exc:
        raise DriftError(f"{rev}: {exc}; give more hex digits") from None
    finally:
        store.close()
    if found and not partialclone.missing_commits(git_dir, [found]):
        return found
    if not ours and not found:
        raise DriftError(f"{rev} is not in {git_dir}; fetch it there first")
    if FULL_SHA.match(rev.lower()) or found:
        target = found or rev.lower()
        partialclone.fetch_commits(git_dir, [target], (), None, quick=False)
        return target
    if re.fullmatch(r"[0-9a-fA-F]{7,39}", rev):
        raise DriftError(f"{rev} is a short SHA the store does not hold; give the full SHA")
    tmp = "refs/atlas/fetched"
    partialclone.run_fetch(
        git_dir,
        ["--depth=1", "--filter=blob:none", "origin", f"+{rev}:{tmp}"],
        None,
        "trees",
        None,
        quick=False,
    )
    target = _rev_parse(git_dir, tmp)
    if target is None:
        raise DriftError(f"{rev} did not resolve to a commit at the remote")
    _git(git_dir, "update-ref", f"{partialclone.COMMIT_REF}{target}", target)
    _git(git_dir, "update-ref", "-d", tmp)
    return target


def tree_changes(
    git_dir: Path, old: str, new: str, paths: list[str] | None = None, renames: bool = False
) -> list[tuple[str, str, str, str, str | None]]:
    """(status, old blob, new blob, path, renamed-to path) of every file changed old -> new."""
    args = ["diff-tree", "-r", "-z", "--raw", "--no-abbrev"]
    args += ["-M", "--find-renames=50%"] if renames else ["--no-renames"]
    args += [old, new, "--", *(paths or [])]
    proc = _git(git_dir, *args)
    if proc.returncode != 0:
        raise DriftError(f"git diff-tree failed: {proc.stderr.decode(errors='replace').strip()}")
    fields = proc.stdout.decode("utf-8", "surrogateescape").split("\0")
    out = []
    i = 0
    while i < len(fields) - 1:
        meta = fields[i].lstrip(":").split()
        if len(meta) < 5:
            i += 1
            continue
        status = meta[4][0]
        if status in "RC":
            out.append((status, meta[2], meta[3], fields[i + 1], fields[i + 2]))
            i += 3
        else:
            out.append((status, meta[2], meta[3], fields[i + 1], None))
            i += 2
    return out


def blob_hunks(git_dir: Path, old_blob: str, new_blob: str) -> list[Hunk] | None:
    """The ``-U0`` hunks between two blobs; None when git sees binary content."""
    proc = _git(
        git_dir, "diff", "-U0", "--no-color", "--no-ext-diff", "--no-textconv", old_blob, new_blob
    )
    if proc.returncode not in (0, 1):
        raise DriftError(f"git diff failed: {proc.stderr.decode(errors='replace').strip()}")
    if b"\nBinary files " in proc.stdout or proc.stdout.startswith(b"Binary files "):
        return None
    return parse_hunks(proc.stdout)


# -- where each cited file went -----------------------------------------------------------------
@dataclass
class FileMove:
    """A cited file at the old commit and where it is at the new one (path None: gone)."""

    old_path: str
    old_blob: str | None
    new_path: str | None
    new_blob: str | None


def follow_files(
    git_dir: Path, old: str, new: str, paths: set[str], ours: bool
) -> dict[str, FileMove]:
    """Where every cited path went: same path, modified, renamed (exact or similar), gone.

    Rename detection needs the blobs of the candidates; only files added with the same name,
    or in the same folder, are candidates, so their blobs are all that is fetched for it.
    """

    def blob_at(store: GitStore, commit: str, path: str) -> str | None:
        for _ in range(8):  # a symlink on the way needs its own blob to be followed
            try:
                entry = store.tree_entry(commit, path)
            except (UnsafePath, LookupError):
                return None
            except MissingObject as exc:
                sha = partialclone.missing_id(str(exc))
                if not (ours and sha):
                    raise
                partialclone.fetch_blobs(git_dir, [sha], None, quick=False)
                continue
            return entry[2] if entry and entry[1] == "blob" else None
        return None

    store = GitStore(git_dir)
    try:
        before = {p: blob_at(store, old, p) for p in sorted(paths)}
        after = {p: blob_at(store, new, p) for p in sorted(paths)}
    except MissingObject as exc:
        raise DriftError(f"the trees of a commit are incomplete: {exc}") from None
    finally:
        store.close()
    moves: dict[str, FileMove] = {}
    renames: dict[str, list[str]] = {}
    gone = [p for p in sorted(paths) if before[p] and not after[p]]
    for path in sorted(paths):
        moves[path] = FileMove(path, before[path], path if after[path] else None, after[path])
    changes = {c[3]: c for c in tree_changes(git_dir, old, new)} if gone else {}
    added = [c for c in changes.values() if c[0] == "A"]
    for path in gone:  # not at the new commit under this name: look for it under another
        blob = before[path]
        exact = [a for a in added if a[2] == blob]
        exact.sort(key=lambda a: (os.path.basename(a[3]) != os.path.basename(path), a[3]))
        if exact:
            moves[path] = FileMove(path, blob, exact[0][3], blob)
            continue
        base, folder = os.path.basename(path), os.path.dirname(path)
        similar = [
            a[3] for a in added if os.path.basename(a[3]) == base or os.path.dirname(a[3]) == folder
        ]
        if similar and path in changes:
            renames[path] = similar[:50]
    if renames:
        wanted = {moves[p].old_blob for p in renames} | {
            changes[c][2] for cands in renames.values() for c in cands
        }
        if ours:
            partialclone.fetch_blobs(git_dir, sorted(w for w in wanted if w), None, quick=False)
        pathspec = sorted(set(renames) | {c for cands in renames.values() for c in cands})
        for status, _, new_blob, src, dst in tree_changes(git_dir, old, new, pathspec, True):
            if status == "R" and src in renames and dst:
                moves[src] = FileMove(src, moves[src].old_blob, dst, new_blob)
    return moves


# -- symbols ------------------------------------------------------------------------------------
def symbol_lines(path: str, data: bytes, symbol: str) -> tuple[int, int] | None:
    """The 1-based inclusive lines of a symbol in a file, or None when it is not there (or
    not there once). The directive's own resolver is used, so a bump finds exactly what the
    build will show."""
    try:
        found = find_symbol(data.decode("utf-8", "surrogateescape"), path, symbol)
    except LookupError:
        return None
    return found.start, found.end


# -- the plan -----------------------------------------------------------------------------------
def _lines(data: bytes) -> list[str]:
    """Lines as the directive and GitHub number them (only \\n ends a line)."""
    return split_lines(data.decode("utf-8", "surrogateescape"))


def _diff(
    old_text: list[str],
    new_text: list[str],
    old_label: str,
    new_label: str,
    old_start: int,
    new_start: int,
) -> str:
    """A unified diff of two line lists numbered as in their files, cut to a readable size."""
    lines = list(difflib.unified_diff(old_text, new_text, old_label, new_label, n=2, lineterm=""))
    out = []
    for line in lines:
        match = re.match(r"^@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@", line)
        if match:
            a, b = int(match.group(1)) + old_start - 1, int(match.group(3)) + new_start - 1
            line = f"@@ -{a}{match.group(2) or ''} +{b}{match.group(4) or ''} @@"
        out.append(line)
    if len(out) > MAX_DIFF_LINES:
        out = out[:MAX_DIFF_LINES] + [f"... ({len(lines) - MAX_DIFF_LINES} more diff lines)"]
    return "\n".join(out)


def _spec_text(spec: CitationSpec) -> str:
    return str(spec)


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
        records = [_carry(store, git_dir, site, moves, old, new) for site in ours_sites]
    finally:
        store.close()
    return Plan(up, old, new, records, kept, git_dir)


def _same_commit(rev: str, commit: str) -> bool:
    return bool(re.fullmatch(r"[0-9a-f]{7,40}", rev.lower())) and commit.startswith(rev.lower())


def _carry(
    store: GitStore,
    git_dir: Path,
    site: CitationSite,
    moves: dict[str, FileMove],
    old: str,
    new: str,
) -> Record:
    """The record of one citation: its status and its text after the move."""
    spec = site.spec
    assert spec is not None
    explicit = spec.rev is not None
    record = Record(site.page, site.line, site.kind, site.raw.strip(), site.raw.strip(), "")
    move = moves.get(spec.path)

    def left_behind(status: str, detail: str) -> Record:
        record.status, record.detail = status, detail
        record.new = site.raw.strip() if explicit else _spec_text(spec.with_rev(old[:SHORT]))
        return record

    def carried(path: str, selector: str | None, blob: str | None) -> Record:
        moved_spec = CitationSpec(
            spec.name, new[: max(SHORT, len(spec.rev))] if explicit else None, path, selector
        )  # type: ignore[arg-type]
        same = path == spec.path and selector == spec.selector
        record.status = "unchanged" if same else "moved"
        if same and not explicit:
            record.new = site.raw.strip()
        else:
            record.new = _spec_text(moved_spec)
        record.new_path, record.new_blob = path, blob
        return record

    if move is None or move.old_blob is None:
        return left_behind("gone", f"{spec.path} does not exist at the old pin {old[:SHORT]}")
    try:
        old_data = store.read_object(move.old_blob)[1]
    except MissingObject:
        return left_behind("gone", f"blob {move.old_blob} of {spec.path} is not in the store")
    if move.new_path is None or move.new_blob is None:
        return left_behind(
            "gone", f"{spec.path} was deleted between {old[:SHORT]} and {new[:SHORT]}"
        )
    try:
        new_data = store.read_object(move.new_blob)[1]
    except MissingObject:
        return left_behind("gone", f"blob {move.new_blob} of {move.new_path} is not in the store")
    old_lines, new_lines = _lines(old_data), _lines(new_data)
    where = f"{move.new_path}@{new[:SHORT]}"

    if spec.is_symbol:
        before = symbol_lines(spec.path, old_data, spec.symbol or "")
        if before is None:
            return left_behind("gone", f"{spec.selector} is not in {spec.path} at the old pin")
        after = symbol_lines(move.new_path, new_data, spec.symbol or "")
        if after is None:
            return left_behind("gone", f"{spec.selector} is no longer in {where}")
        a = old_lines[before[0] - 1 : before[1]]
        b = new_lines[after[0] - 1 : after[1]]
        if a != b:
            return left_behind(
                "changed", _diff(a, b, f"{spec.path}@{old[:SHORT]}", where, before[0], after[0])
            )
        shift = after[0] - before[0]
        record.linemap = {n: n + shift for n in range(before[0], before[1] + 1)}
        result = carried(move.new_path, spec.selector, move.new_blob)
        if result.status == "unchanged" and shift:
            result.status = "moved"
            result.detail = f"lines {before[0]}-{before[1]} -> {after[0]}-{after[1]}"
        return result

    ranges = line_ranges(spec.selector)
    if ranges is None:  # the whole file
        if old_data != new_data:
            diff = _diff(old_lines, new_lines, f"{spec.path}@{old[:SHORT]}", where, 1, 1)
            return left_behind("changed", diff)
        return carried(move.new_path, None, move.new_blob)
    past = [r for r in ranges if r[1] > len(old_lines)]
    if past:
        return left_behind(
            "gone",
            f"{spec.path} has {len(old_lines)} lines at the old pin; the range "
            f"{past[0][0]}-{past[0][1]} does not resolve there",
        )
    hunks: list[Hunk] | None = (
        [] if old_data == new_data else blob_hunks(git_dir, move.old_blob, move.new_blob)
    )
    new_ranges: list[tuple[int, int]] = []
    diffs: list[str] = []
    for start, end in ranges:
        mapped = map_range(hunks, start, end) if hunks is not None else None
        if (
            mapped is not None
            and old_lines[start - 1 : end] == new_lines[mapped[0] - 1 : mapped[1]]
        ):
            new_ranges.append(mapped)
            for n in range(start, end + 1):
                record.linemap[n] = n + mapped[0] - start
            continue
        lo, hi = nearest_range(hunks or [], start, end, len(new_lines))
        diffs.append(
            _diff(
                old_lines[start - 1 : end],
                new_lines[lo - 1 : hi],
                f"{spec.path}:{start}-{end}@{old[:SHORT]}",
                f"{move.new_path}:{lo}-{hi}@{new[:SHORT]}",
                start,
                lo,
            )
        )
    if diffs:
        return left_behind("changed", "\n".join(diffs))
    selector = ",".join(f"{a}" if a == b else f"{a}-{b}" for a, b in new_ranges)
    return carried(move.new_path, selector, move.new_blob)


# -- applying it --------------------------------------------------------------------------------
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
    """Stage the new pin. The submodule's folder is made (empty) when absent, as a clone makes
    it: without it a later ``git commit -a`` would record the gitlink as deleted."""
    (book_root / up.path).mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(
        [
            "git",
            "-C",
            str(book_root),
            "update-index",
            "--add",
            "--cacheinfo",
            f"160000,{commit},{up.path}",
        ],
        capture_output=True,
        text=True,
        env=git_env(),
        check=False,
    )
    if proc.returncode != 0:
        raise DriftError(f"cannot move the gitlink {up.path}: {proc.stderr.strip()}")


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


# -- the commands -------------------------------------------------------------------------------
def table(the_plan: Plan) -> str:
    """The plan for people: one row per citation, then the diffs of what needs a human."""
    up = the_plan.upstream
    rows = [f"{up.name}: {the_plan.old[:SHORT]} -> {the_plan.new[:SHORT]}"]
    width = max((len(f"{r.page}:{r.line}") for r in the_plan.records), default=10)
    for r in the_plan.records:
        arrow = r.new if r.new != r.old else "(as is)"
        if r.status == "moved" and r.new == r.old and r.detail:
            arrow += f" ({r.detail})"
        rows.append(f"  {r.status:<9} {f'{r.page}:{r.line}':<{width}}  {r.old}  ->  {arrow}")
    counts = the_plan.counts()
    rows.append(
        "summary: "
        + ", ".join(f"{counts[s]} {s}" for s in STATUSES)
        + (
            f"; {len(the_plan.kept)} citation(s) with an explicit @REV left alone"
            if the_plan.kept
            else ""
        )
    )
    for r in the_plan.records:
        if r.status in ("changed", "gone") and r.detail:
            rows += ["", f"{r.status}: {r.page}:{r.line}  {r.old}", r.detail]
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    from atlas.upstream import package_drift

    if package_drift.is_package(argv):  # a package upstream: compare wheels, move pyproject's pin
        return package_drift.main(argv)
    command = argv.pop(0) if argv and argv[0] in ("drift", "bump") else "drift"
    parser = argparse.ArgumentParser(
        prog=f"python -m atlas.upstream {command}",
        description=(
            "Report which citations of NAME would be unchanged, moved, changed or gone at REV."
            if command == "drift"
            else "Move NAME's pin to REV and carry every citation of NAME across."
        ),
    )
    parser.add_argument("name", metavar="NAME")
    parser.add_argument(
        "rev",
        metavar="REV",
        nargs="?" if command == "drift" else None,
        help="commit SHA, tag or branch (drift default: the remote's HEAD)",
    )
    if command == "bump":
        parser.add_argument("--dry-run", action="store_true", help="print the plan only")
    parser.add_argument("--json", action="store_true", help="one JSON record per citation")
    parser.add_argument("--root", type=Path, default=None, help="the book's root (default: here)")
    args = parser.parse_args(argv)
    try:
        root = find_root(args.root)
    except NotABook as exc:
        print(f"{command}: {exc}", file=sys.stderr)
        return 2
    try:
        the_plan = plan(root, args.name, args.rev)
        result = None
        if command == "bump" and not args.dry_run:
            result = apply(root, the_plan)
    except (DriftError, partialclone.FetchError) as exc:
        print(f"{command}: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps([r.to_json() for r in the_plan.records], indent=1, ensure_ascii=False))
    else:
        print(table(the_plan))
    if result is not None:
        print(
            f"bumped {args.name} to {the_plan.new[:SHORT]}: {len(result['pages'])} page(s) "
            f"rewritten, {result['lock_moved']} lock entries moved"
            + (
                f", {result['lock_unknown']} citation(s) not in the lock "
                f"(run `{bookroot.command(root, 'lock')}`)"
                if result["lock_unknown"]
                else ""
            )
            + f"; the gitlink {the_plan.upstream.path} is staged",
            file=sys.stderr,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
