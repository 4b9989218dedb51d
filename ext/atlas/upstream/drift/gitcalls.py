"""The one place where ``drift`` and ``bump`` start git.

Every git process of the drift tools goes through :func:`run_git`, so that moving them onto the
book's git layer is a change of this one function. Object reads go through
:class:`~atlas.upstream.gitstore.GitStore` and fetches through
:mod:`~atlas.upstream.partialclone`, which own their own processes.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from atlas.upstream.registry import git_env


def run_git(
    *args: str, git_dir: Path | None = None, repo: Path | None = None
) -> subprocess.CompletedProcess[bytes]:
    """Run ``git ARGS`` on an object store (``git_dir``) or in the book's repository (``repo``).

    Never a lazy fetch: a partial clone that lacks an object answers "missing" at once instead
    of fetching it one object at a time behind our back (fetches are batched by the caller).
    The exit status is the caller's to judge (``git diff`` exits 1 when blobs differ).
    """
    if (git_dir is None) == (repo is None):
        raise TypeError("run_git needs exactly one of git_dir and repo")
    where = [f"--git-dir={git_dir}"] if git_dir is not None else ["-C", str(repo)]
    env = git_env()
    env["GIT_NO_LAZY_FETCH"] = "1"
    return subprocess.run(["git", *where, *args], capture_output=True, env=env, check=False)
