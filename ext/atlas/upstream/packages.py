"""Package upstreams: a Python distribution at an exact version, quoted from its installed files.

Some upstreams are too large to fetch as git objects (PyTorch's repository is 4 GB) but ship
their Python sources in a wheel whose ``RECORD`` gives a sha256 for every file. Such a wheel,
pinned by version and installed by the book's own environment, is an upstream that can be
checked byte for byte, as a git object is.

The registry is ``pyproject.toml``, and nothing is said twice:

- the pin is the exact requirement ``NAME==VERSION`` in ``[project] dependencies`` (the line
  that installs it);
- ``[tool.atlas.upstream-packages.NAME]`` adds what permalinks need: ``repository`` (its web
  address), ``tag`` (a template, default ``v{version}``) and ``paths`` (wheel folder ->
  repository folder, longest prefix first; a path no prefix matches is the same in both).

Reads: :mod:`importlib.metadata` finds the installed distribution (on ``sys.path``, or on the
folders of ``$ATLAS_PACKAGE_PATH``); a file is quoted only when it is listed in ``RECORD`` and
its bytes hash to the recorded sha256. A different installed version, a file the wheel does not
ship, a file missing on disk and a file that does not match its hash are each one error with
the fix. A package that is not installed is not an error: the snippet comes from
``snippets_cache/`` or the citation shows a placeholder (``upstream.missing``), provided the lock
proves it was once checked. Only text files are quoted; compiled code is out of scope.

The same reads serve a wheel file (:class:`WheelFiles`): drift and bump compare the installed
version's files with another version's wheel.
"""

from __future__ import annotations

import base64
import csv
import difflib
import hashlib
import io
import os
import re
import sys
import tomllib
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from urllib.parse import unquote

from atlas.upstream.permalink import build as build_permalink

PYPROJECT = "pyproject.toml"
SECTION = "upstream-packages"  # [tool.atlas.upstream-packages.NAME]
PATH_ENV = "ATLAS_PACKAGE_PATH"  # folders searched instead of sys.path (os.pathsep-separated)
DEFAULT_TAG = "v{version}"
SETUP_HINT = "run `make setup`"
# Files that are compiled code in a wheel: out of scope, whatever their content.
COMPILED = (".so", ".pyd", ".dll", ".dylib", ".a", ".lib", ".o", ".pyc", ".pyo", ".exe")
_GITHUB = re.compile(r"^https?://github\.com/([\w.-]+)/([\w.-]+?)(?:\.git)?/?$")
_PINNED_REF = re.compile(
    r"^https://github\.com/(?P<slug>[\w.-]+/[\w.-]+)/(?P<kind>blob|tree)/(?P<ref>[^/#?]+)"
    r"/(?P<path>[^#?]+?)/?(?:#L(?P<start>\d+)(?:C\d+)?(?:-L(?P<end>\d+)(?:C\d+)?)?|#[^#]*)?$"
)


class PackageError(ValueError):
    """One package citation that cannot be quoted; the message says why and the fix."""


class PackageRegistryError(ValueError):
    """The package registry in pyproject.toml is not valid; the message says where and how."""


def normalize(name: str) -> str:
    """PEP 503 normalised distribution name (``Foo_Bar`` -> ``foo-bar``)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def record_digest(data: bytes, mode: str = "sha256") -> str:
    """``sha256=<urlsafe base64, no padding>``, as a wheel's RECORD writes a file's hash."""
    digest = hashlib.new(mode, data).digest()
    return f"{mode}=" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


# -- the registry -------------------------------------------------------------------------------
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
        match = _GITHUB.match(self.url.strip())
        return f"{match.group(1)}/{match.group(2)}" if match else None

    @property
    def web_url(self) -> str:
        slug = self.github_slug
        return f"https://github.com/{slug}" if slug else self.url.rstrip("/").removesuffix(".git")

    def tag(self, version: str | None = None) -> str:
        """The repository's tag for a version (``v2.13.0`` for torch 2.13.0)."""
        return self.tag_template.format(version=version or self.version)

    def short_rev(self, rev: str) -> str:
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


# -- files with their RECORD hashes -------------------------------------------------------------
class FileSet:
    """The files of one version of a distribution, each read only after its RECORD hash
    matched. Subclasses say where the bytes come from (an installation, a wheel file)."""

    name: str
    version: str
    where: str
    hashes: dict[str, str]  # path in the wheel -> "sha256=..." ("" when RECORD has none)

    def _bytes(self, path: str) -> bytes:
        raise NotImplementedError

    def reinstall_hint(self) -> str:
        return f"download the wheel again ({self.where})"

    def listdir(self, folder: str) -> list[str]:
        """Names directly inside a folder of the wheel (for 'nearest' hints)."""
        prefix = f"{folder}/" if folder else ""
        return sorted(
            {p[len(prefix) :].split("/", 1)[0] for p in self.hashes if p.startswith(prefix)}
        )

    def read(self, path: str) -> tuple[str, bytes]:
        """(RECORD hash, bytes) of a file, verified; PackageError says what is wrong."""
        recorded = self.hashes.get(path)
        label = f"{self.name} {self.version}"
        if recorded is None:
            raise PackageError(self._not_shipped(path))
        if path.endswith(COMPILED):
            raise PackageError(
                f"{path} is compiled code in the {label} wheel; only text files the wheel ships "
                "can be quoted: link to the source in the repository with a plain link instead"
            )
        if not recorded:
            raise PackageError(
                f"{path} has no hash in the RECORD of {label} ({self.where}), so it cannot be "
                "verified; cite another file"
            )
        try:
            data = self._bytes(path)
        except FileNotFoundError:
            raise PackageError(
                f"{path} is listed in the RECORD of {label} but is not on disk ({self.where}): "
                f"the installation is incomplete; {self.reinstall_hint()}"
            ) from None
        mode = recorded.split("=", 1)[0]
        try:
            actual = record_digest(data, mode)
        except ValueError:
            raise PackageError(f"{path}: RECORD uses an unknown hash '{mode}'") from None
        if actual != recorded:
            raise PackageError(
                f"{path} in {label} does not match the wheel's RECORD (recorded {recorded}, "
                f"file {actual}): the installed file was modified ({self.where}); "
                f"{self.reinstall_hint()}"
            )
        return recorded, data

    def _not_shipped(self, path: str) -> str:
        folder, _, base = path.rpartition("/")
        names = self.listdir(folder)
        label = f"{self.name} {self.version}"
        if not names:
            top = ", ".join(self.listdir("")[:8])
            return (
                f"{path} is not in the {label} wheel: it has no folder '{folder}' (top level: "
                f"{top}); give the path inside the wheel, as importing it would find it"
            )
        close = difflib.get_close_matches(base, names, n=4, cutoff=0.5)
        hint = f"; nearest in {folder or 'the top level'}: {', '.join(close)}" if close else ""
        return (
            f"{path} is not in the {label} wheel{hint}. A file that exists only in the "
            "repository (C++ sources, build scripts) is cited with a plain link to its permalink"
        )


def _parse_record(text: str) -> dict[str, str]:
    hashes: dict[str, str] = {}
    for row in csv.reader(io.StringIO(text)):
        if not row or not row[0]:
            continue
        path = row[0].replace("\\", "/")
        if path.startswith("/") or ".." in path.split("/"):
            continue  # scripts installed outside the package folders: never quoted
        hashes[path] = row[1] if len(row) > 1 else ""
    return hashes


class InstalledFiles(FileSet):
    """An installed distribution (importlib.metadata), its RECORD and its files on disk."""

    def __init__(self, dist: metadata.Distribution, name: str) -> None:
        self.dist = dist
        self.name = name
        self.version = dist.version
        self.where = str(dist.locate_file(""))
        record = dist.read_text("RECORD")
        if record is None:
            raise PackageError(
                f"{name} {self.version} at {self.where} has no RECORD (not installed from a "
                f"wheel, or an editable install), so its files cannot be verified; {SETUP_HINT}"
            )
        self.hashes = _parse_record(record)
        self._cache: dict[str, tuple[str, bytes]] = {}

    def reinstall_hint(self) -> str:
        return (
            f"reinstall it: `pip install --force-reinstall --no-deps '{self.name}=={self.version}'`"
            " in the book's environment"
        )

    def _bytes(self, path: str) -> bytes:
        located = Path(str(self.dist.locate_file(path)))
        try:
            return located.read_bytes()
        except IsADirectoryError:
            raise FileNotFoundError(path) from None

    def read(self, path: str) -> tuple[str, bytes]:
        if path not in self._cache:
            if len(self._cache) >= 128:
                self._cache.pop(next(iter(self._cache)))
            self._cache[path] = super().read(path)
        return self._cache[path]


class WheelFiles(FileSet):
    """A wheel file (a zip with ``NAME-VERSION.dist-info/RECORD``), read without installing."""

    def __init__(self, wheel: Path) -> None:
        self.wheel = Path(wheel)
        self.where = str(self.wheel)
        try:
            self.zip = zipfile.ZipFile(self.wheel)
        except (OSError, zipfile.BadZipFile) as exc:
            raise PackageError(f"{wheel} is not a readable wheel: {exc}") from None
        records = [n for n in self.zip.namelist() if re.fullmatch(r"[^/]+\.dist-info/RECORD", n)]
        if len(records) != 1:
            raise PackageError(f"{wheel} holds {len(records)} dist-info RECORD files, not one")
        meta = self.zip.read(records[0].replace("RECORD", "METADATA")).decode("utf-8", "replace")
        fields = dict(
            line.split(": ", 1) for line in meta.splitlines() if ": " in line and line[0] != " "
        )
        self.name = fields.get("Name", "")
        self.version = fields.get("Version", "")
        self.hashes = _parse_record(self.zip.read(records[0]).decode("utf-8"))

    def _bytes(self, path: str) -> bytes:
        try:
            return self.zip.read(path)
        except KeyError:
            raise FileNotFoundError(path) from None

    def close(self) -> None:
        self.zip.close()


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


# -- resolving one citation (called by atlas.upstream.resolve) ----------------------------------
def package_snippet(resolver: object, res: object, options: dict[str, str]) -> object | None:
    """The snippet of a package citation (None: not installed and not cached, ``res`` then says
    MISSING), or PackageError. Sets ``res.commit`` (the version), ``res.key`` and ``res.entry``.
    """
    from atlas.upstream.cache import CachedSnippet, cache_key
    from atlas.upstream.lock import lock_key
    from atlas.upstream.resolve import MISSING, Resolution, Resolver
    from atlas.upstream.select import SelectError, decode, select

    assert isinstance(resolver, Resolver) and isinstance(res, Resolution)
    spec, up = res.spec, res.upstream
    assert spec is not None and isinstance(up, PackageUpstream)
    if spec.rev is not None and spec.rev not in (up.version, up.tag()):
        raise PackageError(
            f"{spec.name}@{spec.rev}: the book pins {up.requirement} ({PYPROJECT}) and only the "
            f"pinned version is installed and quoted; drop '@{spec.rev}' (or write "
            f"@{up.version}). To move the pin: `python -m atlas.upstream bump {up.name} VERSION`"
        )
    res.commit = up.version
    res.key = lock_key(up.name, up.version, spec.path, spec.selector, options)
    res.entry = resolver.lock.get(res.key)
    files = resolver.installed.pinned(up)
    key = cache_key(up.name, up.version, spec.path, spec.selector)
    if files is None:
        hit = resolver.cache.get(key)
        if hit is not None:
            res.source = "cache"
            return hit
        if res.entry is None:
            raise PackageError(
                f"{up.requirement} is not installed here and upstreams.lock has no entry for "
                f"this citation, so it was never checked against the real files; {SETUP_HINT}, "
                "build, and commit upstreams.lock"
            )
        res.status = MISSING
        res.message = (
            f"{up.requirement} is not installed in this environment ({sys.prefix}); the "
            f"citation shows a placeholder. Run `make setup` to install it"
        )
        return None
    blob, data = files.read(spec.path)
    try:
        segments = select(decode(data, spec.path), spec, resolver.max_lines)
    except SelectError as exc:
        raise PackageError(str(exc)) from None
    snippet = CachedSnippet(blob=blob, segments=tuple(segments), path=spec.path)
    resolver.cache.put(key, snippet)
    res.source = "installed"
    return snippet


# -- check: one line per package ----------------------------------------------------------------
def status_lines(packages: dict[str, PackageUpstream], installed: Installed) -> list[str]:
    """``torch==2.13.0  installed 2.13.0+cpu (.../site-packages), 14621 files in RECORD``."""
    out = []
    for name in sorted(packages):
        up = packages[name]
        try:
            files = installed.get(up)
        except PackageError as exc:
            out.append(f"{up.requirement:<18} {exc}")
            continue
        if files is None:
            state = f"not installed: {SETUP_HINT}"
        elif not version_matches(files.version, up.version):
            state = f"WRONG VERSION {files.version} installed ({files.where}): {SETUP_HINT}"
        else:
            state = f"installed {files.version} ({files.where}), {len(files.hashes)} RECORD files"
        out.append(f"{up.requirement:<18} {state}; permalinks at {up.web_url}/tree/{up.tag()}")
    return out


# -- the link checker: GitHub links at a package's tag ------------------------------------------
_MEMO: dict[object, object] = {}


def _packages_of(book_root: Path) -> dict[str, PackageUpstream]:
    """load_packages, read again only when pyproject.toml changed (one link check asks per link)."""
    path = book_root / PYPROJECT
    key = (str(path), path.stat().st_mtime_ns if path.is_file() else None)
    if key not in _MEMO:
        _MEMO[key] = load_packages(book_root)
    return _MEMO[key]  # type: ignore[return-value]


def _installed() -> Installed:
    """One Installed per search path for the process (RECORD files are parsed once)."""
    key = ("installed", os.environ.get(PATH_ENV))
    if key not in _MEMO:
        _MEMO[key] = Installed()
    return _MEMO[key]  # type: ignore[return-value]


def verify_link(
    book_root: Path, uri: str, installed: Installed | None = None
) -> tuple[bool | None, str] | None:
    """(ok, message) for a GitHub link into a package upstream's repository, answered from the
    installed files: ok None when they cannot answer (then the link is checked online). None
    when the link is not into a package upstream's repository."""
    match = _PINNED_REF.match(uri)
    if match is None:
        return None
    try:
        packages = _packages_of(Path(book_root).resolve())
    except (PackageRegistryError, OSError):
        return None
    slug = match["slug"].lower()
    ups = [up for up in packages.values() if (up.github_slug or "").lower() == slug]
    if not ups:
        return None
    up = ups[0]
    ref = unquote(match["ref"])
    repo_path = unquote(match["path"])
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
    if match["kind"] == "tree":
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
    if not match["start"]:
        return True, f"{repo_path} is {shipped[0]} in the {where} wheel (RECORD verified)"
    start, end = int(match["start"]), int(match["end"] or match["start"])
    total = data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
    if start < 1 or end < start:
        return False, f"line range L{start}-L{end} is empty"
    if end > total:
        return False, f"{repo_path} has {total} lines at {where}; the link cites L{start}-L{end}"
    return True, f"{repo_path} has lines {start}-{end} at {where} ({total} lines, RECORD verified)"
