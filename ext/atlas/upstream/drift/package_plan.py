"""What moving a package upstream's pin would do to each of its citations: the plan of a
package ``drift``/``bump``.

The two versions' files are compared directly (:mod:`.wheels`). A wheel carries no history, so
a file is followed by its path only; within a file, the verdict is :func:`.carry.carry`'s, the
rule git upstreams follow, with lines mapped through a line diff as git hunks map them. A
citation whose code changed or went away is left reading ``NAME@OLDVERSION``, which fails the
build at its line until a human re-reads it (only the pinned version is installed, so there
is no old code to show).
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

from atlas.code.spec import CitationSpec
from atlas.git.revs import is_sha_prefix
from atlas.upstream.citations import CitationSite, scan_book
from atlas.upstream.drift.carry import FileAt, as_text, carry
from atlas.upstream.drift.model import DriftError, DriftStatus, Plan, Record
from atlas.upstream.drift.wheels import pinned_files, read_verified, version_files
from atlas.upstream.packages.files import FileSet
from atlas.upstream.packages.registry import PYPROJECT, PackageRegistryError, load_packages


def carry_site(
    site: CitationSite, old_files: FileSet, new_files: FileSet, old: str, new: str
) -> Record:
    """One citation carried from the pinned version's wheel to the new one: the files are read
    (verified against each wheel's RECORD) here, the verdict is :func:`.carry.carry`'s."""
    spec = site.spec
    assert spec is not None
    raw = site.raw.strip()

    def left_behind(status: DriftStatus, detail: str) -> Record:
        return Record(site.page, site.line, site.kind, raw, str(spec.with_rev(old)), status, detail)

    before = read_verified(old_files, spec.path)
    if before is None:
        return left_behind(DriftStatus.GONE, f"{spec.path} is not in the {spec.name} {old} wheel")
    after = read_verified(new_files, spec.path)
    if after is None:
        return left_behind(DriftStatus.GONE, f"{spec.path} is not in the {spec.name} {new} wheel")
    (_, old_data), (new_blob, new_data) = before, after
    verdict = carry(
        spec.selector,
        FileAt(spec.path, old, as_text(old_data)),
        FileAt(spec.path, new, as_text(new_data)),
    )
    if not verdict.carried:
        return left_behind(verdict.status, verdict.detail)
    explicit = spec.rev is not None
    moved = CitationSpec(spec.name, new if explicit else None, spec.path, verdict.selector)
    as_written = verdict.selector == spec.selector and not explicit
    return Record(
        site.page,
        site.line,
        site.kind,
        raw,
        raw if as_written else str(moved),
        verdict.status,
        verdict.detail,
        new_path=spec.path,
        new_blob=new_blob,
        linemap=verdict.linemap,
    )


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
    if is_sha_prefix(version, any_case=True) or not re.fullmatch(r"[\w.+!-]+", version):
        raise DriftError(f"{version!r} is not a version of {name}; give one such as 2.14.0")
    work = workdir or Path(tempfile.mkdtemp(prefix="atlas-wheel-"))
    old_files = pinned_files(up, old_wheel, work)
    new_files = version_files(name, version, wheel, work)
    records, kept = [], []
    for site in scan_book(book_root):
        if site.spec is None or site.spec.name != name:
            continue
        if site.spec.rev in (None, old, up.tag(old)):
            records.append(carry_site(site, old_files, new_files, old, version))
        else:
            kept.append(site)
    return Plan(up, old, version, records, kept, None), new_files
