"""The link checker's answer for a GitHub link at a package upstream's tag.

``make linkcheck`` answers ``/blob/v2.13.0/torch/...#L10-L40`` from the installed files, as it
answers links at a pinned commit from git objects (:mod:`atlas.refs.github`): the repository
path is mapped back to its wheel path, the file verified against ``RECORD``, and its lines
counted. The link is read by the one permalink parser (:func:`atlas.code.permalink.parse`,
the inverse of the :func:`~atlas.code.permalink.build` that wrote it) and its lines are
counted as citations number them (:func:`atlas.code.select.line_count`), so a link the book
writes is always one this check can read.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote

from atlas.code.permalink import parse as parse_permalink
from atlas.code.select import line_count
from atlas.upstream.packages.files import SETUP_HINT, PackageError
from atlas.upstream.packages.installed import PATH_ENV, Installed
from atlas.upstream.packages.registry import (
    PYPROJECT,
    PackageRegistryError,
    PackageUpstream,
    load_packages,
)


@dataclass
class _Memo:
    """What one link check reads once per process, though it asks once per link."""

    # (pyproject.toml, its mtime) -> its package upstreams
    packages: dict[tuple[str, int | None], dict[str, PackageUpstream]] = field(default_factory=dict)
    # $ATLAS_PACKAGE_PATH -> what is installed there (RECORD files are parsed once)
    installed: dict[str | None, Installed] = field(default_factory=dict)

    def clear(self) -> None:
        self.packages.clear()
        self.installed.clear()


_MEMO = _Memo()


def _packages_of(book_root: Path) -> dict[str, PackageUpstream]:
    """load_packages, read again only when pyproject.toml changed (one link check asks per link)."""
    path = book_root / PYPROJECT
    key = (str(path), path.stat().st_mtime_ns if path.is_file() else None)
    if key not in _MEMO.packages:
        _MEMO.packages[key] = load_packages(book_root)
    return _MEMO.packages[key]


def _installed() -> Installed:
    """One Installed per search path for the process (RECORD files are parsed once)."""
    key = os.environ.get(PATH_ENV)
    if key not in _MEMO.installed:
        _MEMO.installed[key] = Installed()
    return _MEMO.installed[key]


def verify_link(
    book_root: Path, uri: str, installed: Installed | None = None
) -> tuple[bool | None, str] | None:
    """(ok, message) for a GitHub link into a package upstream's repository, answered from the
    installed files: ok None when they cannot answer (then the link is checked online). None
    when the link is not into a package upstream's repository."""
    link = parse_permalink(uri)
    if link is None:
        return None
    try:
        packages = _packages_of(Path(book_root).resolve())
    except (PackageRegistryError, OSError):
        return None
    slug = link.slug.lower()
    ups = [up for up in packages.values() if (up.github_slug or "").lower() == slug]
    if not ups:
        return None
    up = ups[0]
    ref = unquote(link.rev)
    repo_path = link.path
    if ref != up.tag():
        return None, f"unverified offline: {ref} is not {up.name}'s pinned tag {up.tag()}"
    installed = installed or _installed()
    try:
        files = installed.pinned(up)
    except PackageError as exc:
        return None, f"unverified offline: {exc}"
    if files is None:
        return None, f"unverified offline: {up.requirement} is not installed ({SETUP_HINT})"
    where = f"{up.name} {files.version} (tag {ref})"
    if link.kind == "tree":
        for candidate in up.wheel_paths(repo_path.rstrip("/") + "/"):
            if files.listdir(candidate.rstrip("/")):
                return True, f"folder {repo_path} is in the {where} wheel"
        return None, f"unverified offline: folder {repo_path} is not shipped in the {where} wheel"
    shipped = [p for p in up.wheel_paths(repo_path) if p in files.hashes]
    if not shipped:
        return None, f"unverified offline: {repo_path} is not shipped in the {where} wheel"
    try:
        _, data = files.read(shipped[0])
    except PackageError as exc:
        return None, f"unverified offline: {exc}"
    if link.lines is None:
        return True, f"{repo_path} is {shipped[0]} in the {where} wheel (RECORD verified)"
    start, end = link.lines
    total = line_count(data)
    if start < 1 or end < start:
        return False, f"line range L{start}-L{end} is empty"
    if end > total:
        return False, f"{repo_path} has {total} lines at {where}; the link cites L{start}-L{end}"
    return True, f"{repo_path} has lines {start}-{end} at {where} ({total} lines, RECORD verified)"
