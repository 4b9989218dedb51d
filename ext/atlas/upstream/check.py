"""``python -m atlas.upstream check`` and ``lock``: every citation of the book, outside Sphinx.

``check`` resolves each citation against the git objects (the snippet cache only when the
objects are absent) and prints a table: page, line, citation, status. It exits 1 when a
citation is wrong, drifted from the lock, or not in the lock yet; ``--strict`` also fails on
citations whose objects are missing. ``lock`` rewrites upstreams.lock from the objects: new
citations are added, drifted ones refreshed, uncited ones dropped; entries whose objects are
absent here are kept as they were.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from atlas.bookroot import BookPaths, NotABook, command
from atlas.git.store import close_all
from atlas.upstream.citations import CitationSite, scan_book
from atlas.upstream.lock import (
    LockEntry,
    LockError,
    key_lines,
    load_lock,
    load_revs,
    rev_key,
    save_lock,
)
from atlas.upstream.resolve import (
    DRIFT,
    ERROR,
    MISSING,
    OK,
    Resolution,
    ResolutionStatus,
    Resolver,
)

RENDER_ONLY = ("caption", "name", "class")


class LockStatus(StrEnum):
    """What ``check`` says beside a citation's own outcome: the book and the lock differ."""

    UNLOCKED = "unlocked"  # resolved, but upstreams.lock has no entry for it
    STALE = "stale"  # an entry of upstreams.lock that no page cites


UNLOCKED, STALE = LockStatus.UNLOCKED, LockStatus.STALE


@dataclass
class Row:
    site: CitationSite
    res: Resolution
    paths: BookPaths  # the book (for the commands messages print)

    @property
    def status(self) -> ResolutionStatus | LockStatus:
        if self.res.status == OK and self.res.new_entry:
            return UNLOCKED
        return self.res.status

    @property
    def message(self) -> str:
        if self.status == UNLOCKED:
            return (
                f"not locked: upstreams.lock has no entry for it; run "
                f"`{command(self.paths, 'lock')}` and commit upstreams.lock"
            )
        return self.res.message

    @property
    def guard(self) -> str:
        """What keeps a citation on the right code when lines move: a symbol selector, a
        ``:contains:`` text, or nothing ("NONE"; a line range at a fixed pin shifted by a few
        lines is otherwise invisible). Whole files need none."""
        spec = self.site.spec
        if spec is None or spec.selector is None:
            return ""
        if spec.is_symbol:
            return "symbol"
        return "contains" if self.site.options.get("contains") else "NONE"


@dataclass(frozen=True)
class Stale:
    """A lock entry that no citation of the book uses any more."""

    key: str
    line: int | None


def stale_entries(root: Path, rows: list[Row]) -> list[Stale]:
    """Lock entries (citations and revs) that no page cites: the lock must equal the book."""
    used = {r.res.key for r in rows if r.res.key}
    used_revs = {
        rev_key(r.site.spec.name, r.site.spec.rev)
        for r in rows
        if r.site.spec and r.site.spec.rev and r.site.spec.rev != r.res.commit
    }
    lines = key_lines(root)
    keys = sorted(set(load_lock(root)) - used) + sorted(set(load_revs(root)) - used_revs)
    return [Stale(key, lines.get(key)) for key in keys]


def stale_table(stale: list[Stale], paths: BookPaths) -> str:
    out = [f"stale: {len(stale)} upstreams.lock entr{'y' if len(stale) == 1 else 'ies'} "
           "that no page cites"]  # fmt: skip
    out += [f"  upstreams.lock:{s.line or '?'}  {s.key}" for s in stale]
    out.append(f"    -> run `{command(paths, 'lock')}` to drop them, and commit upstreams.lock")
    return "\n".join(out)


def resolve_sites(
    paths: BookPaths, lock: dict[str, LockEntry] | None = None
) -> tuple[Resolver, list[Row]]:
    resolver = Resolver.from_paths(paths, read_cache=False, lock=lock)
    rows = []
    for site in scan_book(paths.root, paths.source_arg):
        if site.spec is None:
            res = Resolution(raw=site.raw, status=ERROR, message=site.error or "does not parse")
        else:
            options = {k: v for k, v in site.options.items() if k not in RENDER_ONLY}
            res = resolver.resolve(site.spec, options)
        rows.append(Row(site, res, paths))
    return resolver, rows


def table(rows: list[Row]) -> str:
    """A plain-text table; each problem's message on the line below its row. The guard
    column says which line-range citations nothing guards (NONE)."""
    head = ("page", "line", "citation", "guard", "status")
    cells = [(r.site.page, str(r.site.line), r.site.raw, r.guard, r.status) for r in rows]
    widths = [max([len(head[i])] + [len(c[i]) for c in cells]) for i in range(len(head))]
    fmt = "  ".join(f"{{:{'>' if i == 1 else '<'}{w}}}" for i, w in enumerate(widths))
    out = [fmt.format(*head), fmt.format(*("-" * w for w in widths))]
    for row, cell in zip(rows, cells, strict=True):
        out.append(fmt.format(*cell).rstrip())
        if row.status != OK:
            out.append(f"    -> {row.message}")
    return "\n".join(out)


def _args(argv: list[str]) -> argparse.Namespace:
    cmd = argv[0]
    parser = argparse.ArgumentParser(
        prog=f"python -m atlas.upstream {cmd}",
        description=(__doc__ or "").split("\n\n")[1].replace("\n", " "),
    )
    parser.add_argument(
        "--root", type=Path, default=None, help="the book root (default: the book around here)"
    )
    parser.add_argument("--source", default="source", help="pages folder under the root")
    parser.add_argument(
        "--stores", type=Path, default=None, help="folder of extra object stores (NAME.git)"
    )
    if cmd == "check":
        parser.add_argument("--strict", action="store_true", help="missing objects fail too")
        parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    return parser.parse_args(argv[1:])


def no_citations(paths: BookPaths) -> str | None:
    """Why finding no citation is wrong here (None when the book really cites nothing): a
    check that finds nothing in a book that cites upstreams is a check that cannot fail."""
    pages = [p for p in paths.source.rglob("*") if p.suffix in (".md", ".rst")]
    if not pages:
        return f"{paths.source} holds no pages (.md, .rst); give --root and --source of the book"
    try:
        locked = len(load_lock(paths.root))
    except ValueError:
        locked = 0
    if locked:
        return (
            f"no upstream citation found in {len(pages)} page(s) under {paths.source}, but "
            f"{paths.lock_file} records {locked}; give --root and --source of the book"
        )
    return None


def run_check(paths: BookPaths, args: argparse.Namespace) -> int:
    resolver, rows = resolve_sites(paths)
    if not rows and (why := no_citations(paths)):
        print(f"check: {why}", file=sys.stderr)
        return 2
    stale = stale_entries(paths.root, rows)
    counts = Counter(r.status for r in rows)
    if stale:
        counts[STALE] = len(stale)
    if args.json:
        fix = f"run `{command(paths, 'lock')}` to drop it, and commit upstreams.lock"
        print(json.dumps([
            {"page": r.site.page, "line": r.site.line, "citation": r.site.raw,
             "guard": r.guard, "status": r.status, "message": r.message} for r in rows
        ] + [
            {"page": "upstreams.lock", "line": s.line, "citation": s.key, "status": STALE,
             "message": f"no page cites it; {fix}"} for s in stale
        ], indent=2))  # fmt: skip
    else:
        print(table(rows) if rows else "no upstream citations found")
        if stale:
            print(stale_table(stale, paths))
        print("\n" + ", ".join(f"{n} {s}" for s, n in sorted(counts.items())) if rows else "")
        unguarded = sum(1 for r in rows if r.guard == "NONE")
        if unguarded:
            print(
                f"{unguarded} line-range citation(s) have no guard (guard NONE): add "
                ":contains: TEXT, or cite a symbol (path::Class.method), so that a range "
                "that shifted is caught"
            )
        if resolver.packages:  # package upstreams: what is installed, against the pins
            from atlas.upstream.packages.status import status_lines

            print("\npackage upstreams (pyproject.toml):")
            for line in status_lines(resolver.packages, resolver.installed):
                print("  " + line)
    failing = {ERROR, DRIFT, UNLOCKED} | ({MISSING} if args.strict else set())
    return 1 if stale or any(r.status in failing for r in rows) else 0


def run_lock(paths: BookPaths) -> int:
    root = paths.root
    corrupt = None
    try:
        old, old_revs = load_lock(root), load_revs(root)
    except LockError as exc:  # a bad merge: rebuild the lock from the pages
        print(f"lock: {exc.path}: {exc.reason}; rebuilding it from the pages", file=sys.stderr)
        old, old_revs, corrupt = {}, {}, {}
    resolver, rows = resolve_sites(paths, lock=corrupt)
    if not rows and not any(paths.source.rglob("*.md")):
        print(f"lock: {paths.source} holds no pages; give --root", file=sys.stderr)
        return 2
    new: dict[str, LockEntry] = {}
    revs: dict[str, str] = {}
    for row in rows:
        res = row.res
        if res.key is None:
            continue
        if res.rev_key and res.commit:
            revs[res.rev_key] = res.commit
        elif row.site.spec and row.site.spec.rev:
            written = rev_key(row.site.spec.name, row.site.spec.rev)
            if written in old_revs:
                revs[written] = old_revs[written]
        if res.status in (OK, DRIFT) and res.read is not None:
            new[res.key] = res.read
        elif res.status == MISSING and res.key in old:
            new[res.key] = old[res.key]
    changed = save_lock(root, new, revs)
    added = len(set(new) - set(old))
    dropped = len(set(old) - set(new))
    refreshed = sum(1 for k in set(new) & set(old) if new[k] != old[k])
    print(
        f"upstreams.lock: {len(new)} entries ({added} added, {refreshed} refreshed, "
        f"{dropped} dropped){'' if changed else ', unchanged'}"
    )
    errors = [r for r in rows if r.status == ERROR]
    if errors:
        print(table(errors), file=sys.stderr)
        return 1
    return 0


def main(argv: list[str]) -> int:
    args = _args(argv)
    try:
        paths = BookPaths.from_cli(args.root, args.source, args.stores)
    except NotABook as exc:
        print(f"{argv[0]}: {exc}", file=sys.stderr)
        return 2
    try:
        return run_check(paths, args) if argv[0] == "check" else run_lock(paths)
    except ValueError as exc:  # an unreadable lock or .gitmodules: say so, no traceback
        why = exc.message(paths) if isinstance(exc, LockError) else str(exc)
        print(f"{argv[0]}: {why}", file=sys.stderr)
        return 2
    finally:
        close_all()
