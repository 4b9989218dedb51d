"""Which version of a package upstream is installed, and where.

The book's own environment installs the pinned wheels (``make setup``); ``$ATLAS_PACKAGE_PATH``
points the lookup at other folders instead of ``sys.path`` (tests install a fake wheel into a
temporary folder). A local version label is a build of the pinned version (torch
``2.13.0+cpu`` is torch 2.13.0); any other installed version is a :class:`PackageError`.
"""

from __future__ import annotations

import os
import sys
from importlib import metadata

from atlas.upstream.packages.files import SETUP_HINT, InstalledFiles, PackageError
from atlas.upstream.packages.registry import PYPROJECT, PackageUpstream

PATH_ENV = "ATLAS_PACKAGE_PATH"  # folders searched instead of sys.path (os.pathsep-separated)


def search_path() -> list[str] | None:
    """Folders to look for installed distributions in: $ATLAS_PACKAGE_PATH, else sys.path."""
    value = os.environ.get(PATH_ENV)
    return [p for p in value.split(os.pathsep) if p] if value else None


def find_installed(name: str, path: list[str] | None = None) -> metadata.Distribution | None:
    """The first installed distribution of ``name`` on ``path`` (default: sys.path)."""
    for dist in metadata.distributions(name=name, path=path if path is not None else sys.path):
        return dist
    return None


def version_matches(installed: str, pinned: str) -> bool:
    """PEP 440 ``==pinned``: ``2.13.0+cpu`` is torch 2.13.0 (a local label is a build of it)."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    try:
        return SpecifierSet(f"=={pinned}").contains(installed, prereleases=True)
    except InvalidSpecifier:
        return installed == pinned


class Installed:
    """What is installed for each package upstream, looked up once per resolver."""

    def __init__(self, path: list[str] | None = None) -> None:
        self.path = path if path is not None else search_path()
        self._found: dict[str, InstalledFiles | None] = {}

    def get(self, up: PackageUpstream) -> InstalledFiles | None:
        """The installed files of the package (any version), None when it is not installed."""
        if up.name not in self._found:
            dist = find_installed(up.name, self.path)
            self._found[up.name] = InstalledFiles(dist, up.name) if dist is not None else None
        return self._found[up.name]

    def pinned(self, up: PackageUpstream) -> InstalledFiles | None:
        """The installed files when they are the pinned version; PackageError when another
        version is installed; None when the package is not installed."""
        files = self.get(up)
        if files is None:
            return None
        if not version_matches(files.version, up.version):
            raise PackageError(
                f"{up.name} {files.version} is installed ({files.where}) but the book pins "
                f"{up.requirement} ({PYPROJECT}): the installed files are not the pinned ones; "
                f"{SETUP_HINT} (or `pip install '{up.requirement}'` in the book's environment)"
            )
        return files
