"""The registry of upstreams, read from git itself: ``.gitmodules`` plus the gitlinks.

Nothing repeats a URL or a pin: ``.gitmodules`` gives the URL, the gitlink in the book's index
gives the pinned commit. Both are readable in a clone whose submodules were never initialised,
so permalinks work everywhere (CI included).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from atlas.bookroot import extra_stores_root
from atlas.code.permalink import build as build_permalink
from atlas.code.permalink import github_slug, web_url
from atlas.git.repo import common_dir, gitlinks, gitmodules

LINK_ONLY_KEY = "atlas-link-only-pin"


@dataclass(frozen=True)
class Upstream:
    """One upstream: its submodule name, path, URL and pin."""

    name: str
    path: str
    url: str
    pin: str | None
    link_only_pin: str | None = None
    kind: str = field(default="git", init=False)  # PackageUpstream's is "package"

    @property
    def github_slug(self) -> str | None:
        """``OWNER/REPO`` when the URL is on github.com, else None."""
        return github_slug(self.url)

    @property
    def web_url(self) -> str:
        """The repository's web address (GitHub when possible), without a trailing ``.git``."""
        return web_url(self.url)

    def short_rev(self, rev: str) -> str:
        """The commit as a caption shows it: 8 hex digits."""
        return rev[:8]

    def permalink(self, commit: str, path: str, lines: tuple[int, int] | None = None) -> str:
        """``https://github.com/OWNER/REPO/blob/FULLSHA/path#L10-L40`` (``#L10`` for one line)."""
        return build_permalink(self.web_url, commit, path, lines)


def load_registry(book_root: Path) -> dict[str, Upstream]:
    """Every upstream registered in the book's .gitmodules, with its pin from the gitlink."""
    book_root = Path(book_root)
    links = gitlinks(book_root) or {}
    registry: dict[str, Upstream] = {}
    for name, fields in gitmodules(book_root).items():  # GitmodulesError is a ValueError
        path = fields.get("path", name)
        registry[name] = Upstream(
            name=name,
            path=path,
            url=fields.get("url", ""),
            pin=links.get(path),
            link_only_pin=fields.get(LINK_ONLY_KEY.lower()) or fields.get(LINK_ONLY_KEY),
        )
    return registry


def _is_git_dir(path: Path) -> bool:
    return (path / "objects").is_dir() and (path / "HEAD").is_file()


def _submodule_git_dir(book_root: Path, upstream: Upstream) -> Path | None:
    """The git dir of an initialised submodule (its .git file or folder), never the book's."""
    dotgit = book_root / upstream.path / ".git"
    if dotgit.is_dir() and _is_git_dir(dotgit):
        return dotgit.resolve()
    if dotgit.is_file():
        text = dotgit.read_text(encoding="utf-8", errors="replace").strip()
        if text.startswith("gitdir:"):
            target = Path(text[len("gitdir:") :].strip())
            target = target if target.is_absolute() else dotgit.parent / target
            if _is_git_dir(target):
                return target.resolve()
    return None


def store_candidates(
    book_root: Path, upstream: Upstream, stores_root: Path | None = None
) -> list[Path]:
    """Where an upstream's objects may live, in search order (for messages and tools)."""
    book_root = Path(book_root)
    found: list[Path] = []
    extra = extra_stores_root(stores_root)
    if extra is not None:
        found += [Path(extra) / f"{upstream.name}.git", Path(extra) / upstream.name]
    found.append(book_root / upstream.path / ".git")
    common = common_dir(book_root)
    if common is not None:
        found.append(common / "modules" / upstream.name)
        found.append(common / "atlas-upstreams" / f"{upstream.name}.git")
    return found


def object_store(
    book_root: Path, upstream: Upstream, stores_root: Path | None = None
) -> Path | None:
    """The git dir holding the upstream's objects, first found of (None when absent):

    ``stores_root`` (or $ATLAS_UPSTREAMS_ROOT) / NAME.git or NAME; the initialised submodule;
    ``<common-dir>/modules/NAME``; ``<common-dir>/atlas-upstreams/NAME.git`` (made by
    ``make upstreams``).
    """
    book_root = Path(book_root)
    for candidate in store_candidates(book_root, upstream, stores_root):
        if candidate.name == ".git" and candidate.parent == book_root / upstream.path:
            sub = _submodule_git_dir(book_root, upstream)
            if sub is not None:
                return sub
            continue
        if _is_git_dir(candidate):
            return candidate.resolve()
        if _is_git_dir(candidate / ".git"):  # a non-bare repository given by stores_root
            return (candidate / ".git").resolve()
    return None
