"""The rules every git process of the book starts under, and where git is started from.

Git is driven through GitPython (:func:`open_repo`, :func:`open_store`, :func:`git_at`: a
``git.Repo`` or ``git.Git`` whose environment, set with ``Git.update_environment``, carries
the rules), except for transfers (:func:`run`, :func:`popen`). The rules hold everywhere:

- never a prompt, never the user's pager, messages in English (:func:`rule_env`);
- reads never transfer, by two locks, each enough alone (``tests/test_git_gitpython.py``):
  ``GIT_NO_LAZY_FETCH=1`` keeps a partial clone from fetching an object it lacks (honoured by
  git 2.44 and by the security releases that carried it back, such as Debian's 2.39.5; older
  releases ignore it), and every transport is forbidden (``protocol.allow`` and
  each ``protocol.NAME.allow`` set to ``never`` through ``GIT_CONFIG_*``, after the user's own,
  so that their ``protocol.file.allow=always`` loses; git's children inherit them), so the lazy
  fetch an older git starts fails at once, without touching the network. Either way a read of
  a missing blob ends in one "missing" instead of a hang or a transfer: only ``make upstreams``
  (:mod:`atlas.upstream.partialclone`) transfers objects, on purpose.

:func:`run` and :func:`popen` (the commands of :mod:`atlas.upstream.partialclone`, which
transfers objects and keeps the stores it fills) are hand-written because a transfer needs what
GitPython's ``Remote.fetch``/``Git.execute`` do not give: a stall watchdog that reads git's
progress as it comes and kills a silent fetch (``kill_after_timeout`` is a total time, not a
stall), input on stdin from a string, and ``subprocess.TimeoutExpired`` for the caller.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, overload

from git import Git, Repo
from git.exc import GitCommandNotFound

GIT = "git"
TRANSPORTS = ("file", "git", "ssh", "http", "https", "ext")
# Every transport forbidden: a read never fetches (that is `make upstreams`' job).
NO_FETCH = [("protocol.allow", "never"), *[(f"protocol.{p}.allow", "never") for p in TRANSPORTS]]


class GitStartError(OSError):
    """git itself could not be started (not installed, not executable): an OSError, as from
    :func:`run`, so that one ``except OSError`` covers every way of starting git."""


def start_error(exc: GitCommandNotFound) -> GitStartError:
    """GitPython's "not found" as ours, saying what the system said (``[Errno 2] ...``)."""
    return GitStartError(f"cannot start git: {exc.__cause__ or exc}")


def rule_env(
    *, transports: bool = True, lazy_fetch: bool = True, base: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The variables the rules set, on top of ``base`` (this process's environment by default).

    ``transports=False`` forbids every transport through ``GIT_CONFIG_*`` entries appended
    after any ``base`` already sets (the last one wins, so the user's
    ``protocol.file.allow=always`` loses); ``lazy_fetch=False`` asks git not to fetch a missing
    object behind our back (``GIT_NO_LAZY_FETCH``; a git too old for it is stopped by the
    forbidden transports).
    """
    base = os.environ if base is None else base
    env = {"GIT_TERMINAL_PROMPT": "0", "GIT_PAGER": "cat", "LC_ALL": "C"}
    if not lazy_fetch:
        env["GIT_NO_LAZY_FETCH"] = "1"
    if not transports:
        count = int(base.get("GIT_CONFIG_COUNT", "0") or 0)
        for i, (key, value) in enumerate(NO_FETCH, start=count):
            env[f"GIT_CONFIG_KEY_{i}"] = key
            env[f"GIT_CONFIG_VALUE_{i}"] = value
        env["GIT_CONFIG_COUNT"] = str(count + len(NO_FETCH))
    return env


def git_env(
    *, transports: bool = True, lazy_fetch: bool = True, extra: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The whole environment of a git process started by :func:`run` or :func:`popen`: this
    process's, with :func:`rule_env`'s variables (and ``extra``) over it."""
    env = dict(os.environ)
    env.update(rule_env(transports=transports, lazy_fetch=lazy_fetch, base=env))
    if extra:
        env.update(extra)
    return env


def read_rules() -> dict[str, str]:
    """What every GitPython object made here carries (``Git.update_environment``): no prompt,
    no pager, every transport forbidden, lazy fetches off. Computed when the object is made,
    so that the caller's own ``GIT_CONFIG_*`` entries of that moment come first."""
    return rule_env(transports=False, lazy_fetch=False)


def git_at(folder: Path) -> Git:
    """GitPython's command runner for ``git -C FOLDER`` (``-C`` as its persistent option: a
    folder that is not there fails as git fails, instead of GitPython's fallback on this
    process's folder), under the read rules: for commands whose paths are relative to a folder
    of the book (``ls-files``, ``log -- PATH``)."""
    runner = Git(str(folder))
    runner.update_environment(**read_rules())
    runner.set_persistent_git_options(C=str(folder))
    return runner


def ask(runner: Git, command: str, *args: str, text: bool = True) -> tuple[int, Any, str]:
    """(status, stdout, stderr) of ``git COMMAND ARGS`` through GitPython's ``Git`` (one of its
    command methods, ``ls_files`` for ``ls-files``), stdout as git wrote it (``str`` or, with
    ``text=False``, ``bytes``), never raising on git's status: the callers say what a failure
    means. GitStartError when git cannot be started."""
    try:
        status, out, err = getattr(runner, command.replace("-", "_"))(
            *args,
            with_extended_output=True,
            with_exceptions=False,
            stdout_as_string=text,
            strip_newline_in_stdout=False,
        )
    except GitCommandNotFound as exc:
        raise start_error(exc) from exc
    return status, out, err if isinstance(err, str) else err.decode("utf-8", "replace")


def open_repo(path: Path) -> Repo:
    """The GitPython ``Repo`` around ``path`` (searched upwards, as git does), under the read
    rules. ``git.InvalidGitRepositoryError``/``git.NoSuchPathError`` outside a repository.
    Close it (``with``): its persistent ``cat-file`` processes live until then."""
    repo = Repo(str(path), search_parent_directories=True)
    repo.git.update_environment(**read_rules())
    return repo


def open_store(git_dir: Path) -> Repo:
    """The GitPython ``Repo`` of an object store (bare, a submodule's ``modules/NAME``, or a
    work tree's ``.git``), under the read rules. Its odb is GitPython's default
    ``GitCmdObjectDB``: objects come through git's persistent ``cat-file``. ``GIT_DIR`` names
    the store to every git it starts, whatever folder GitPython runs git in (a submodule's
    store may name a work tree that is not there)."""
    repo = Repo(str(git_dir))
    repo.git.update_environment(**read_rules(), GIT_DIR=str(Path(git_dir).resolve()))
    return repo


def command(args: Sequence[str], git_dir: Path | None = None, cwd: Path | None = None) -> list[str]:
    """``git [--git-dir=DIR | -C CWD] ARGS`` (a bare store is named by its git dir, a work
    tree by a folder inside it)."""
    head = [GIT]
    if git_dir is not None:
        head.append(f"--git-dir={git_dir}")
    elif cwd is not None:
        head += ["-C", str(cwd)]
    return [*head, *args]


@overload
def run(
    *args: str,
    git_dir: Path | None = ...,
    cwd: Path | None = ...,
    text: Literal[True] = ...,
    stdin: str | None = ...,
    env: Mapping[str, str] | None = ...,
    lazy_fetch: bool = ...,
    timeout: float | None = ...,
) -> subprocess.CompletedProcess[str]: ...
@overload
def run(
    *args: str,
    git_dir: Path | None = ...,
    cwd: Path | None = ...,
    text: Literal[False],
    stdin: bytes | None = ...,
    env: Mapping[str, str] | None = ...,
    lazy_fetch: bool = ...,
    timeout: float | None = ...,
) -> subprocess.CompletedProcess[bytes]: ...
def run(
    *args: str,
    git_dir: Path | None = None,
    cwd: Path | None = None,
    text: bool = True,
    stdin: str | bytes | None = None,
    env: Mapping[str, str] | None = None,
    lazy_fetch: bool = True,
    timeout: float | None = None,
) -> subprocess.CompletedProcess[Any]:
    """One git command of :mod:`atlas.upstream.partialclone` (transfers, their stores), its output
    captured, never raising on git's exit status (callers say what a failure means). ``env``
    replaces :func:`git_env` (a fetch's own settings); OSError when git cannot be started,
    ``TimeoutExpired`` past ``timeout``."""
    return subprocess.run(
        command(args, git_dir, cwd),
        input=stdin,
        capture_output=True,
        text=text,
        env=dict(env) if env is not None else git_env(lazy_fetch=lazy_fetch),
        timeout=timeout,
        check=False,
    )


def popen(
    *args: str,
    git_dir: Path | None = None,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    **kwargs: Any,
) -> subprocess.Popen[bytes]:
    """A git process whose pipes the caller drives (``stdin``/``stdout``/``stderr`` in
    ``kwargs``, as :class:`subprocess.Popen` takes them): a fetch whose progress is read as it
    comes."""
    return subprocess.Popen(
        command(args, git_dir, cwd), env=dict(env) if env is not None else git_env(), **kwargs
    )
