"""The book as a checkout of its repository, for a build: the :class:`Repository` its settings
name (with the pages' folder as the repository sees it), and the commit being built.

Both are asked of git once per build and kept on the app's config (not pickled), so that every
page's links say the same thing and a copy built outside git simply has no commit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from atlas.bookroot import BookPaths
from atlas.git.repo import head_and_prefix
from atlas.project.config import ProjectConfig
from atlas.project.repository import Repository

CACHE = "_atlas_checkout"  # a name Sphinx leaves out of the pickled configuration


@dataclass(frozen=True)
class Checkout:
    prefix: str  # the book's root folder from the repository's top ("" or "book/")
    source: str  # the pages' folder from the repository's top ("source/")
    commit: str | None  # HEAD, or None outside git


def checkout(app: Any) -> Checkout:
    """Where the book sits in its repository, and the commit being built."""
    cache = app.config.__dict__
    found: Checkout | None = cache.get(CACHE)
    if found is None:
        paths = BookPaths.from_app(app)
        commit, prefix = head_and_prefix(paths.root)
        try:
            source = paths.source.relative_to(paths.root).as_posix()
        except ValueError:  # pages outside the book's root: not in its repository either
            source = "."
        source = prefix + ("" if source == "." else source + "/")
        found = cache[CACHE] = Checkout(prefix, source, commit)
    return found


def repository(app: Any) -> Repository | None:
    """The repository the settings name, or None when ``atlas_repository_url`` is unset."""
    settings = ProjectConfig.of(app)
    if settings.repository_url is None:
        return None
    return Repository(settings.repository_url, settings.repository_branch, checkout(app).source)


__all__ = ["Checkout", "checkout", "repository"]
