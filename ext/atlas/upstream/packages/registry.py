"""The package upstreams a book declares in ``pyproject.toml``, each pinned exactly.

The pin is the requirement ``NAME==VERSION`` in ``[project] dependencies`` (the line that
installs it, so the two cannot disagree); ``[tool.atlas.upstream-packages.NAME]`` adds only what
permalinks need (``repository``, ``tag``, ``paths``). A wrong entry is one
:class:`PackageRegistryError` that says where and how to fix it.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from atlas.code.permalink import build as build_permalink
from atlas.code.permalink import github_slug, web_url

PYPROJECT = "pyproject.toml"
SECTION = "upstream-packages"  # [tool.atlas.upstream-packages.NAME]
DEFAULT_TAG = "v{version}"


class PackageRegistryError(ValueError):
    """The package registry in pyproject.toml is not valid; the message says where and how."""


def normalize(name: str) -> str:
    """PEP 503 normalised distribution name (``Foo_Bar`` -> ``foo-bar``)."""
    return re.sub(r"[-_.]+", "-", name).lower()


@dataclass(frozen=True)
class PackageUpstream:
    """A package upstream: the distribution pinned at ``version``, and where its code lives on
    GitHub (``repository`` at ``tag``, wheel paths mapped through ``paths``)."""

    name: str
    version: str
    url: str
    tag_template: str = DEFAULT_TAG
    paths: tuple[tuple[str, str], ...] = ()
    kind: str = field(default="package", init=False)
    link_only_pin: str | None = field(default=None, init=False)

    @property
    def pin(self) -> str:
        """The pinned version (what an unqualified citation reads)."""
        return self.version

    @property
    def path(self) -> str:
        """Where the pin lives (messages name it as they name a submodule path)."""
        return PYPROJECT

    @property
    def requirement(self) -> str:
        return f"{self.name}=={self.version}"

    @property
    def github_slug(self) -> str | None:
        """``OWNER/REPO`` when the repository is on github.com, else None."""
        return github_slug(self.url)

    @property
    def web_url(self) -> str:
        return web_url(self.url)

    def tag(self, version: str | None = None) -> str:
        """The repository's tag for a version (``v2.13.0`` for torch 2.13.0)."""
        return self.tag_template.format(version=version or self.version)

    def short_rev(self, rev: str) -> str:
        """The version as a caption shows it: whole (a git upstream shortens its SHA)."""
        return rev

    def repo_path(self, wheel_path: str) -> str:
        """Where a file of the wheel lives in the repository (longest matching prefix)."""
        for src, dst in sorted(self.paths, key=lambda p: len(p[0]), reverse=True):
            if wheel_path.startswith(src):
                return dst + wheel_path[len(src) :]
        return wheel_path

    def wheel_paths(self, repo_path: str) -> list[str]:
        """The wheel paths a repository path may be (inverse of :meth:`repo_path`)."""
        found = [
            src + repo_path[len(dst) :] for src, dst in self.paths if repo_path.startswith(dst)
        ]
        found.append(repo_path)
        return [p for p in dict.fromkeys(found) if self.repo_path(p) == repo_path]

    def permalink(self, rev: str, path: str, lines: tuple[int, int] | None = None) -> str:
        """``https://github.com/OWNER/REPO/blob/TAG/repo/path#L10-L40`` for a wheel path."""
        return build_permalink(self.web_url, self.tag(rev), self.repo_path(path), lines)


def _exact_pins(dependencies: Iterable[object], where: Path) -> dict[str, tuple[str, str]]:
    """normalised name -> (name as written, version) of each ``NAME==VERSION`` dependency
    (markers allowed); other requirements map to (name, "") so that errors can name them."""
    from packaging.requirements import InvalidRequirement, Requirement

    pins: dict[str, tuple[str, str]] = {}
    for dep in dependencies:
        try:
            req = Requirement(str(dep))
        except InvalidRequirement as exc:
            raise PackageRegistryError(
                f"{where}: dependency {dep!r} does not parse: {exc}"
            ) from None
        specs = list(req.specifier)
        exact = (
            specs[0].version
            if len(specs) == 1
            and specs[0].operator in ("==", "===")
            and "*" not in specs[0].version
            else ""
        )
        pins[normalize(req.name)] = (req.name, exact)
    return pins


def load_packages(book_root: Path) -> dict[str, PackageUpstream]:
    """Every package upstream the book's pyproject.toml declares (empty without one)."""
    path = Path(book_root) / PYPROJECT
    if not path.is_file():
        return {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise PackageRegistryError(f"{path} cannot be read: {exc}") from None
    table = data.get("tool", {}).get("atlas", {}).get(SECTION, {})
    if not table:
        return {}
    if not isinstance(table, dict):
        raise PackageRegistryError(f"{path}: [tool.atlas.{SECTION}] must be a table of tables")
    pins = _exact_pins(data.get("project", {}).get("dependencies", []), path)
    found: dict[str, PackageUpstream] = {}
    for name, entry in table.items():
        where = f"{path}: [tool.atlas.{SECTION}.{name}]"
        if not isinstance(entry, dict):
            raise PackageRegistryError(f"{where} must be a table (repository = ..., tag = ...)")
        unknown = sorted(set(entry) - {"repository", "tag", "paths"})
        if unknown:
            raise PackageRegistryError(
                f"{where}: unknown key(s) {', '.join(unknown)}; known: repository, tag, paths"
            )
        written, version = pins.get(normalize(name), (name, ""))
        if normalize(name) not in pins:
            raise PackageRegistryError(
                f"{where}: '{name}' is not in [project] dependencies; add \"{name}==VERSION\" "
                "there (the pin lives in the line that installs it)"
            )
        if not version:
            raise PackageRegistryError(
                f"{where}: the dependency on '{written}' is not pinned exactly; write "
                f'"{written}==VERSION" so that every build quotes the same files'
            )
        repo = entry.get("repository")
        if not isinstance(repo, str) or not repo.startswith(("https://", "http://")):
            raise PackageRegistryError(
                f"{where}: repository must be the repository's web address "
                '(e.g. "https://github.com/pytorch/pytorch")'
            )
        tag = entry.get("tag", DEFAULT_TAG)
        if not isinstance(tag, str) or "{version}" not in tag:
            raise PackageRegistryError(
                f'{where}: tag must be a template holding {{version}} (e.g. "v{{version}}")'
            )
        paths = entry.get("paths", {})
        if not isinstance(paths, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in paths.items()
        ):
            raise PackageRegistryError(
                f"{where}: paths must map wheel folders to repository folders "
                '(e.g. paths = {"triton/" = "python/triton/"})'
            )
        found[name] = PackageUpstream(
            name=name, version=version, url=repo, tag_template=tag, paths=tuple(paths.items())
        )
    return found
