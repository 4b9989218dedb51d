"""Build small fixture git repositories and fixture books for tests (never the real mirrors).

A repository is a list of commits; each commit maps paths to new content (``str``/``bytes``),
to :class:`Symlink` (a symlink blob), or to ``None`` (delete), and may rename files first and
tag the result. Dates and identities are fixed, so SHAs are the same on every run.

A fixture book is a git repository with .gitmodules and gitlinks, like the real book, whose
upstreams point at fixture repositories (over file://, or as initialised submodules).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

# Our own git processes may use file:// submodules, partial clones and fetch-by-SHA.
GIT_CONFIG = {
    "protocol.file.allow": "always",
    "uploadpack.allowFilter": "true",
    "uploadpack.allowAnySHA1InWant": "true",
    "init.defaultBranch": "main",
    "advice.detachedHead": "false",
    "core.autocrlf": "false",
    "commit.gpgSign": "false",
    "tag.gpgSign": "false",
}


def git_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """Environment with GIT_CONFIG_COUNT/KEY/VALUE set, fixed identity, no global config."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        {
            "GIT_AUTHOR_NAME": "Fixture",
            "GIT_AUTHOR_EMAIL": "fixture@atlas.invalid",
            "GIT_COMMITTER_NAME": "Fixture",
            "GIT_COMMITTER_EMAIL": "fixture@atlas.invalid",
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_TERMINAL_PROMPT": "0",
        }
    )
    for i, (key, value) in enumerate(GIT_CONFIG.items()):
        env[f"GIT_CONFIG_KEY_{i}"] = key
        env[f"GIT_CONFIG_VALUE_{i}"] = value
    env["GIT_CONFIG_COUNT"] = str(len(GIT_CONFIG))
    env.update(extra or {})
    return env


def git(
    cwd: Path, *args: str, env: Mapping[str, str] | None = None, input: bytes | None = None
) -> str:
    """Run git in ``cwd``; raise with git's own message when it fails."""
    proc = subprocess.run(
        ["git", *args], cwd=cwd, env=git_env(env), input=input, capture_output=True, check=False
    )
    if proc.returncode != 0:
        raise RuntimeError(
            f"git {' '.join(args)} failed in {cwd}: {proc.stderr.decode(errors='replace')}"
        )
    return proc.stdout.decode("utf-8", "replace").strip()


@dataclass(frozen=True)
class Symlink:
    """A symlink entry pointing at ``target`` (relative or absolute, in-tree or not)."""

    target: str


Content = str | bytes | Symlink | None


@dataclass
class Commit:
    """One commit: renames (old -> new) are applied first, then ``files``."""

    files: Mapping[str, Content] = field(default_factory=dict)
    renames: Mapping[str, str] = field(default_factory=dict)
    message: str = "fixture commit"
    tags: Sequence[str] = ()


@dataclass
class FixtureRepo:
    """A repository made by :func:`make_repo`: its path, commit SHAs (oldest first), tags."""

    path: Path
    commits: list[str]
    tags: dict[str, str]

    @property
    def head(self) -> str:
        return self.commits[-1]

    @property
    def url(self) -> str:
        return self.path.resolve().as_uri()

    @property
    def git_dir(self) -> Path:
        dotgit = self.path / ".git"
        return dotgit if dotgit.is_dir() else self.path


def make_repo(
    path: Path, commits: Sequence[Commit | Mapping[str, Content]], *, bare: bool = False
) -> FixtureRepo:
    """Create a repository at ``path`` with these commits (a plain mapping is a Commit's files).

    With ``bare=True`` the result is a bare repository (the work tree is built beside it and
    removed), like the bare partial clones ``make upstreams`` makes.
    """
    path = Path(path)
    work = path.with_name(path.name + ".work") if bare else path
    work.mkdir(parents=True, exist_ok=True)
    git(work, "init", "-q")
    shas: list[str] = []
    tags: dict[str, str] = {}
    for n, commit in enumerate(commits):
        if not isinstance(commit, Commit):
            commit = Commit(files=commit)
        for old, new in commit.renames.items():
            (work / new).parent.mkdir(parents=True, exist_ok=True)
            git(work, "mv", "--", old, new)
        for rel, content in commit.files.items():
            target = work / rel
            if content is None:
                git(work, "rm", "-q", "--", rel)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            if target.is_symlink() or target.exists():
                target.unlink()
            if isinstance(content, Symlink):
                os.symlink(content.target, target)
            elif isinstance(content, bytes):
                target.write_bytes(content)
            else:
                target.write_text(content, encoding="utf-8", newline="")
            git(work, "add", "--", rel)
        date = f"{1_700_000_000 + n * 3600} +0000"
        git(
            work,
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            commit.message,
            env={"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date},
        )
        sha = git(work, "rev-parse", "HEAD")
        shas.append(sha)
        for tag in commit.tags:
            git(work, "tag", tag, sha)
            tags[tag] = sha
    if bare:
        git(path.parent, "clone", "-q", "--bare", str(work), str(path))
        for tag, sha in tags.items():
            git(path, "tag", "-f", tag, sha)
        shutil.rmtree(work)
    # Serving side of partial clones and fetch-by-SHA: git drops GIT_CONFIG_COUNT when it
    # starts upload-pack for a local repository, so this must live in the repository's config.
    for key in ("uploadpack.allowFilter", "uploadpack.allowAnySHA1InWant"):
        git(path, "config", key, "true")
    return FixtureRepo(path=path, commits=shas, tags=tags)


@dataclass
class FixtureUpstream:
    """An upstream of a fixture book: the repo, the pinned commit, how it is registered.

    ``url`` is what .gitmodules says (default: a github.com URL, so permalinks look real);
    ``init`` makes it an initialised submodule (cloned over file://); otherwise its objects are
    found through ``stores_root`` (ATLAS_UPSTREAMS_ROOT) or not at all (offline).
    """

    repo: FixtureRepo | None
    pin: str | None = None
    url: str | None = None
    init: bool = False
    link_only_pin: str | None = None


def register_upstreams(path: Path, upstreams: Mapping[str, FixtureUpstream]) -> list[str]:
    """Register upstreams in the book repository at ``path`` the way the real book does:
    .gitmodules entries plus gitlinks at the pins (or an initialised submodule). Returns the
    paths to stage."""
    for name, up in upstreams.items():
        sub = f"upstreams/{name}"
        url = up.url or f"https://github.com/fixture/{name}"
        if up.init and up.repo is not None:
            git(path, "submodule", "add", "-q", "--name", name, up.repo.url, sub)
            if up.pin:
                git(path / sub, "checkout", "-q", up.pin)
                git(path, "add", sub)
            git(path, "config", "-f", ".gitmodules", f"submodule.{name}.url", url)
            continue
        gm = ["config", "-f", ".gitmodules"]
        git(path, *gm, f"submodule.{name}.path", sub)
        git(path, *gm, f"submodule.{name}.url", url)
        if up.link_only_pin:
            git(path, *gm, f"submodule.{name}.atlas-link-only-pin", up.link_only_pin)
            continue
        git(path, *gm, f"submodule.{name}.update", "none")
        pin = up.pin or (up.repo.head if up.repo else None)
        if pin:
            git(path, "update-index", "--add", "--cacheinfo", f"160000,{pin},{sub}")
    return [".gitmodules"] if (path / ".gitmodules").exists() else []


def make_book(
    path: Path,
    files: Mapping[str, str] | None = None,
    upstreams: Mapping[str, FixtureUpstream] | None = None,
    *,
    commit: bool = True,
) -> Path:
    """A fixture book: a git repository with ``files`` (added to what ``path`` already holds,
    e.g. a copied tests/roots folder) and upstreams registered as submodules (gitlinks at
    their pins), the way the real book registers them."""
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q")
    for rel, text in (files or {}).items():
        (path / rel).parent.mkdir(parents=True, exist_ok=True)
        (path / rel).write_text(text, encoding="utf-8")
    staged = register_upstreams(path, dict(upstreams or {}))
    git(path, "add", "--", ".", ":(exclude)upstreams", *staged)
    if commit:
        date = {"GIT_AUTHOR_DATE": "1700000000 +0000", "GIT_COMMITTER_DATE": "1700000000 +0000"}
        git(path, "commit", "-q", "-m", "fixture book", env=date)
    return path


def stores_dir(path: Path, repos: Mapping[str, FixtureRepo]) -> Path:
    """A folder of NAME.git symlinks to fixture repos' git dirs, for ATLAS_UPSTREAMS_ROOT."""
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    for name, repo in repos.items():
        link = path / f"{name}.git"
        if not link.exists():
            os.symlink(repo.git_dir.resolve(), link)
    return path
