"""The only place that starts git: its environment, one-shot commands, and long-lived pipes.

Every git process of the book starts here, so that the rules hold everywhere at once:

- never a prompt, never the user's pager, messages in English (:func:`git_env`);
- reads never transfer: the object readers forbid every transport (``transports=False``),
  so a blob a partial clone lacks offline fails at once instead of hanging on the network;
- lazy fetches are off wherever a command may touch a partial clone (``lazy_fetch=False``):
  only ``make upstreams`` (:mod:`atlas.upstream.partialclone`) transfers objects, on purpose.

:func:`run` is a one-shot command, :func:`popen` a process whose output the caller reads as it
comes (a fetch's progress), :class:`CatFilePipe` the persistent ``git cat-file
--batch-command`` that all object reads share (one process per object store, not per read).
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, overload

from atlas.processes import long_lived

GIT = "git"
TRANSPORTS = ("file", "git", "ssh", "http", "https", "ext")
# Every transport forbidden: a read never fetches (that is `make upstreams`' job).
NO_FETCH = [("protocol.allow", "never"), *[(f"protocol.{p}.allow", "never") for p in TRANSPORTS]]


class GitStartError(RuntimeError):
    """git itself could not be started (not installed, not executable)."""


def git_env(
    *, transports: bool = True, lazy_fetch: bool = True, extra: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The environment of our git processes: this process's, never prompting, never paging.

    ``transports=False`` forbids every transport through ``GIT_CONFIG_*`` (appended after any
    the caller's environment already sets); ``lazy_fetch=False`` stops a partial clone from
    fetching a missing object behind our back.
    """
    env = dict(os.environ)
    env.update({"GIT_TERMINAL_PROMPT": "0", "GIT_PAGER": "cat", "LC_ALL": "C"})
    if not lazy_fetch:
        env["GIT_NO_LAZY_FETCH"] = "1"
    if not transports:
        count = int(env.get("GIT_CONFIG_COUNT", "0") or 0)
        for i, (key, value) in enumerate(NO_FETCH, start=count):
            env[f"GIT_CONFIG_KEY_{i}"] = key
            env[f"GIT_CONFIG_VALUE_{i}"] = value
        env["GIT_CONFIG_COUNT"] = str(count + len(NO_FETCH))
    if extra:
        env.update(extra)
    return env


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
    """One git command, its output captured, never raising on git's exit status (callers say
    what a failure means). ``env`` replaces :func:`git_env` (a fetch's own settings);
    OSError when git cannot be started, ``TimeoutExpired`` past ``timeout``."""
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
    ``kwargs``, as :class:`subprocess.Popen` takes them)."""
    return subprocess.Popen(
        command(args, git_dir, cwd), env=dict(env) if env is not None else git_env(), **kwargs
    )


class CatFilePipe:
    """One persistent ``git cat-file --batch-command --buffer`` on an object store.

    Started on the first request, restarted after git dies, never shared with a forked child
    (``sphinx-build -j``: each worker starts its own). Names reach git only through the pipe,
    never as arguments, and every transport is forbidden, so a missing object is answered
    "missing" at once.
    """

    def __init__(self, git_dir: Path) -> None:
        self.git_dir = Path(git_dir)
        self._proc: subprocess.Popen[bytes] | None = None
        self._pid = os.getpid()
        self._stderr: tempfile._TemporaryFileWrapper[bytes] | None = None
        self.lock = threading.RLock()

    def _start(self) -> subprocess.Popen[bytes]:
        env = git_env(transports=False, extra={"GIT_DIR": str(self.git_dir)})
        self._stderr = tempfile.TemporaryFile()
        try:
            proc = subprocess.Popen(
                [GIT, "cat-file", "--batch-command", "--buffer"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._stderr,
                env=env,
                cwd=str(self.git_dir),
            )
        except OSError as exc:
            raise GitStartError(f"cannot start git: {exc}") from exc
        long_lived(proc.pid)  # kept across labs: the lab sandbox does not count it as left over
        return proc

    def _pipe(self) -> subprocess.Popen[bytes]:
        if self._pid != os.getpid():  # forked (sphinx -j): never share the parent's pipe
            self._proc, self._pid = None, os.getpid()
        if self._proc is None or self._proc.poll() is not None:
            self._proc = self._start()
        return self._proc

    def died(self) -> str:
        """Forget a dead (or confused) git process and return what it said on stderr."""
        proc, self._proc = self._proc, None
        if proc is not None:
            try:
                proc.kill()
                proc.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                pass
        said = ""
        if self._stderr is not None:
            self._stderr.seek(0)
            said = self._stderr.read().decode("utf-8", "replace").strip()
            self._stderr.close()
            self._stderr = None
        return said

    def ask(self, command: str, name: str) -> tuple[bytes, Any]:
        """Send ``COMMAND NAME`` (``info`` or ``contents``) and return (header line, stdout):
        the caller parses the header and reads the content under :attr:`lock`. An empty
        header means git died (see :meth:`died`)."""
        proc = self._pipe()
        assert proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write(f"{command} {name}\nflush\n".encode())
            proc.stdin.flush()
            return proc.stdout.readline(), proc.stdout
        except (BrokenPipeError, OSError):
            return b"", proc.stdout

    def close(self) -> None:
        with self.lock:
            if self._proc is not None and self._pid == os.getpid():
                try:
                    assert self._proc.stdin is not None
                    self._proc.stdin.close()
                    self._proc.wait(timeout=5)
                except (OSError, subprocess.TimeoutExpired):
                    self._proc.kill()
            self._proc = None
            if self._stderr is not None:
                self._stderr.close()
                self._stderr = None
