"""``drift`` and ``bump`` for package upstreams: carry citations from one version to the next.

The two versions' files are compared directly: the pinned version is read from the
installation (or its wheel), the other from its wheel, given with ``--wheel`` or downloaded by
``pip download --no-deps`` into a temporary folder (pip's own cache answers a repeat). Each
file is verified against its wheel's RECORD first. A wheel carries no history, so a file is
followed by its path only; within a file, lines are mapped through a line diff exactly as git
hunks map them for git upstreams (:mod:`atlas.upstream.linemap`).

``bump`` rewrites the carried citations, moves their lock entries and rewrites the pin
(``NAME==VERSION`` in pyproject.toml); citations whose code changed or went away are listed
with the diff and rewritten to ``NAME@OLDVERSION``, which fails the build at their line until a
human re-reads them (only the pinned version is installed, so there is no old code to show).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from atlas.bookroot import BookPaths, NotABook
from atlas.upstream.citations import CitationSite, scan_book
from atlas.upstream.drift.carry import FileAt, as_text, carry
from atlas.upstream.drift.cli import print_plan
from atlas.upstream.drift.model import SHORT, DriftError, Plan, Record
from atlas.upstream.lock import LockEntry, load_lock, lock_key, lock_path, save_lock, text_hash
from atlas.upstream.packages.files import FileSet, PackageError, WheelFiles
from atlas.upstream.packages.installed import Installed, version_matches
from atlas.upstream.packages.registry import (
    PYPROJECT,
    PackageRegistryError,
    PackageUpstream,
    load_packages,
)
from atlas.upstream.pagewriter import CitationEdit, PageEditError, rewrite_pages
from atlas.upstream.select import SelectError, apply_options, decode, select, selected_text
from atlas.upstream.spec import CitationSpec, parse_spec


def download_wheel(name: str, version: str, dest: Path) -> Path:
    """``pip download --no-deps`` of NAME==VERSION (a wheel only) into ``dest``."""
    cmd = [
        sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
        "--quiet", "--dest", str(dest), f"{name}=={version}",
    ]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    wheels = sorted(dest.glob("*.whl"))
    if proc.returncode != 0 or not wheels:
        said = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no wheel"]
        raise DriftError(
            f"cannot download the {name}=={version} wheel ({said[0]}); give one with --wheel PATH"
        )
    return wheels[0]


def _wheel(path: Path, name: str, version: str) -> WheelFiles:
    files = WheelFiles(path)
    if files.name.lower().replace("_", "-") != name.lower().replace("_", "-"):
        raise DriftError(f"{path} is a wheel of {files.name!r}, not {name!r}")
    if not version_matches(files.version, version):
        raise DriftError(f"{path} is {files.name} {files.version}, not {version}")
    return files


def _read(files: FileSet, path: str) -> tuple[str, bytes] | None:
    """(RECORD hash, bytes) of a verified file, None when the wheel does not ship it."""
    if path not in files.hashes:
        return None
    try:
        return files.read(path)
    except PackageError as exc:
        raise DriftError(str(exc)) from None


def _carry(
    site: CitationSite, old_files: FileSet, new_files: FileSet, old: str, new: str
) -> Record:
    """One citation carried from the pinned version's wheel to the new one: the files are read
    (verified against each wheel's RECORD) here, the verdict is :func:`atlas.upstream.drift.carry.
    carry`'s, the same rule as for git upstreams."""
    spec = site.spec
    assert spec is not None
    explicit = spec.rev is not None
    record = Record(site.page, site.line, site.kind, site.raw.strip(), site.raw.strip(), "")

    def left_behind(status: str, detail: str) -> Record:
        record.status, record.detail = status, detail
        record.new = _spec(spec.with_rev(old))
        return record

    before = _read(old_files, spec.path)
    if before is None:
        return left_behind("gone", f"{spec.path} is not in the {spec.name} {old} wheel")
    after = _read(new_files, spec.path)
    if after is None:
        return left_behind("gone", f"{spec.path} is not in the {spec.name} {new} wheel")
    (_, old_data), (new_blob, new_data) = before, after
    verdict = carry(
        spec.selector,
        FileAt(spec.path, old, as_text(old_data)),
        FileAt(spec.path, new, as_text(new_data)),
    )
    if not verdict.carried:
        return left_behind(verdict.status, verdict.detail)
    record.status, record.detail, record.linemap = verdict.status, verdict.detail, verdict.linemap
    moved = CitationSpec(spec.name, new if explicit else None, spec.path, verdict.selector)
    same = verdict.selector == spec.selector
    record.new = site.raw.strip() if same and not explicit else _spec(moved)
    record.new_path, record.new_blob = spec.path, new_blob
    return record


def _spec(spec: CitationSpec) -> str:
    return str(spec)


def plan(
    book_root: Path,
    name: str,
    version: str,
    wheel: Path | None = None,
    old_wheel: Path | None = None,
    workdir: Path | None = None,
) -> tuple[Plan, FileSet]:
    """What moving NAME's pin to VERSION would do to each citation of NAME, and the new
    version's files (the lock entries of a bump are computed from them)."""
    book_root = Path(book_root).resolve()
    try:
        packages = load_packages(book_root)
    except PackageRegistryError as exc:
        raise DriftError(str(exc)) from None
    up = packages.get(name)
    if up is None:
        raise DriftError(f"{name} is not a package upstream of {book_root / PYPROJECT}")
    old = up.version
    if re.fullmatch(r"[0-9a-fA-F]{7,40}", version) or not re.fullmatch(r"[\w.+!-]+", version):
        raise DriftError(f"{version!r} is not a version of {name}; give one such as 2.14.0")
    work = workdir or Path(tempfile.mkdtemp(prefix="atlas-wheel-"))
    if old_wheel is not None:
        old_files: FileSet = _wheel(old_wheel, name, old)
    else:
        try:
            installed = Installed().pinned(up)
        except PackageError as exc:
            raise DriftError(
                f"{exc}; or give the pinned version's wheel with --old-wheel"
            ) from None
        old_files = installed or _wheel(download_wheel(name, old, work / "old"), name, old)
    new_wheel = wheel or download_wheel(name, version, work / "new")
    new_files = _wheel(new_wheel, name, version)
    records, kept = [], []
    for site in scan_book(book_root):
        if site.spec is None or site.spec.name != name:
            continue
        if site.spec.rev in (None, old, up.tag(old)):
            records.append(_carry(site, old_files, new_files, old, version))
        else:
            kept.append(site)
    return Plan(up, old, version, records, kept, None), new_files


def set_pin(book_root: Path, up: PackageUpstream, version: str, write: bool = True) -> None:
    """Rewrite ``"NAME==OLD"`` in pyproject.toml's dependencies to ``"NAME==VERSION"``."""
    path = Path(book_root) / PYPROJECT
    text = path.read_text(encoding="utf-8")
    pattern = re.compile(
        r"(?P<q>[\"'])(?P<name>" + re.escape(up.name) + r")\s*===?\s*" + re.escape(up.version)
        + r"(?P<tail>\s*(?:;[^\"']*)?)(?P=q)", re.IGNORECASE,
    )  # fmt: skip
    found = pattern.findall(text)
    if len(found) != 1:
        raise DriftError(
            f'{path}: expected one dependency "{up.name}=={up.version}", found {len(found)}; '
            "edit the pin by hand"
        )
    if write:
        new = pattern.sub(lambda m: f"{m['q']}{m['name']}=={version}{m['tail']}{m['q']}", text)
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_text(new, encoding="utf-8")
        os.replace(tmp, path)


def refresh_lock(
    book_root: Path,
    the_plan: Plan,
    new_files: FileSet,
    sites: dict[tuple[str, int, str], CitationSite],
) -> tuple[int, int]:
    """Move the lock entries of carried citations to the new version: (moved, not computable).
    ``sites`` are the citations as they were before the pages were rewritten."""
    if not lock_path(book_root).is_file():
        return 0, 0
    data = load_lock(book_root)
    moved = unknown = 0
    stale: set[str] = set()
    for rec in the_plan.records:
        site = sites.get((rec.page, rec.line, rec.old))
        if rec.status not in ("unchanged", "moved") or site is None or site.spec is None:
            continue
        spec, new_spec = site.spec, parse_spec(rec.new)
        old_key = lock_key(spec.name, the_plan.old, spec.path, spec.selector, site.options)
        new_key = lock_key(spec.name, the_plan.new, new_spec.path, new_spec.selector, site.options)
        entry = data.get(old_key)
        digest = entry.sha256 if entry else None
        if digest is None:
            try:
                text = decode(new_files.read(new_spec.path)[1], new_spec.path)
                selection = apply_options(select(text, new_spec), site.options)
                digest = text_hash(selected_text(selection))
            except (PackageError, SelectError, LookupError):
                unknown += 1
                continue
        data[new_key] = LockEntry(blob=rec.new_blob or "", sha256=digest)
        stale.add(old_key)
        moved += 1
    for key in stale:
        data.pop(key, None)
    save_lock(book_root, data)
    return moved, unknown


def apply(book_root: Path, the_plan: Plan, new_files: FileSet) -> dict[str, Any]:
    """Rewrite the pages, move the lock entries and the pin in pyproject.toml."""
    book_root = Path(book_root).resolve()
    up = the_plan.upstream
    assert isinstance(up, PackageUpstream)
    set_pin(book_root, up, the_plan.new, write=False)  # refuse before touching any page
    try:
        load_lock(book_root)
    except ValueError as exc:
        raise DriftError(str(exc)) from None
    sites = {(s.page, s.line, s.raw.strip()): s for s in scan_book(book_root)}
    missing = [r for r in the_plan.records if (r.page, r.line, r.old) not in sites]
    if missing:
        raise DriftError(
            f"{missing[0].page}:{missing[0].line} changed since the plan was made; run bump again"
        )
    edits = [
        CitationEdit(r.page, r.line, r.kind, r.old, r.new, r.linemap) for r in the_plan.records
    ]
    try:
        touched = rewrite_pages(book_root, edits)
    except PageEditError as exc:
        raise DriftError(f"{exc}; run bump again") from None
    moved, unknown = refresh_lock(book_root, the_plan, new_files, sites)
    set_pin(book_root, up, the_plan.new)
    return {"pages": touched, "lock_moved": moved, "lock_unknown": unknown}


def book_root(given: Path | None) -> Path:
    """The book's root, found as the other maintainer commands find it."""
    try:
        return BookPaths.from_cli(given).root
    except NotABook as exc:
        raise DriftError(str(exc)) from None


def is_package(argv: list[str]) -> bool:
    """Whether ``drift``/``bump`` ARGV names a package upstream of the book (not a git one)."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("name", nargs="?")
    parser.add_argument("--root", type=Path, default=None)
    args, _ = parser.parse_known_args([a for a in argv if a not in ("drift", "bump")])
    if not args.name:
        return False
    try:
        return args.name in load_packages(book_root(args.root))
    except (DriftError, PackageRegistryError):
        return False


def main(argv: list[str]) -> int:
    argv = list(argv)
    command = argv.pop(0) if argv and argv[0] in ("drift", "bump") else "drift"
    parser = argparse.ArgumentParser(
        prog=f"python -m atlas.upstream {command}",
        description=f"{command} a package upstream: compare the pinned version's files with "
        "another version's wheel" + (" and move the pin" if command == "bump" else ""),
    )
    parser.add_argument("name", metavar="NAME")
    parser.add_argument("rev", metavar="VERSION")
    parser.add_argument("--wheel", type=Path, default=None, help="the new version's wheel file")
    parser.add_argument(
        "--old-wheel",
        type=Path,
        default=None,
        help="the pinned version's wheel (default: installed)",
    )
    if command == "bump":
        parser.add_argument("--dry-run", action="store_true", help="print the plan only")
    parser.add_argument("--json", action="store_true", help="one JSON record per citation")
    parser.add_argument("--root", type=Path, default=None, help="the book's root (default: here)")
    args = parser.parse_args(argv)
    try:
        root = book_root(args.root)
    except DriftError as exc:
        print(f"{command}: {exc}", file=sys.stderr)
        return 2
    try:
        with tempfile.TemporaryDirectory(prefix="atlas-wheel-") as work:
            the_plan, new_files = plan(
                root, args.name, args.rev, args.wheel, args.old_wheel, Path(work)
            )
            result = None
            if command == "bump" and not args.dry_run:
                result = apply(root, the_plan, new_files)
    except (DriftError, PackageError) as exc:
        print(f"{command}: {exc}", file=sys.stderr)
        return 2
    print_plan(the_plan, args.json)
    if result is not None:
        up = the_plan.upstream
        print(
            f"bumped {up.name} {the_plan.old} -> {the_plan.new}: {len(result['pages'])} page(s) "
            f"rewritten, {result['lock_moved']} lock entries moved"
            + (
                f", {result['lock_unknown']} not computable (run `python -m atlas.upstream lock`)"
                if result["lock_unknown"]
                else ""
            )
            + f"; {PYPROJECT} now pins {up.name}=={the_plan.new}: run `make setup` to install it",
            file=sys.stderr,
        )
    return 0


__all__ = ["SHORT", "main", "plan", "apply", "is_package"]
