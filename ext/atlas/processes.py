"""Process plumbing shared by the lab runner and the labkit: dying with the parent, seeding,
killing a child or a whole tree of them, and saying in words how a child ended.

Why one module, outside both packages: the zygote and its workers (:mod:`atlas.labs`) and the
ranks of ``run_ranks`` (:mod:`atlas.labkit.ranks`) need the same few things, and their copies had
begun to differ (one named an unknown signal, the other raised on it). It imports neither
Sphinx nor torch at import time: ``atlas.labs`` runs inside Sphinx, which must never import
torch, and ``atlas.labkit`` runs inside lab processes, which never import Sphinx. Torch is
imported only when a process asks to be seeded, which only lab processes do.
"""

from __future__ import annotations

import ctypes
import os
import random
import signal

_PR_SET_PDEATHSIG = 1  # prctl options, from <linux/prctl.h>
_PR_SET_CHILD_SUBREAPER = 36
_LONG_LIVED: set[int] = set()  # helpers this process keeps for its lifetime (see long_lived)


def die_with_parent() -> None:
    """Ask the kernel to SIGKILL this process when its parent dies (Linux; a no-op elsewhere).

    Why: a worker or a rank stuck in C code (a collective, a deadlock) never outlives the build
    or the lab that started it, even when that parent is killed with no chance to clean up.
    """
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        pass


def become_subreaper() -> bool:
    """Adopt this process's orphaned descendants (Linux; False elsewhere).

    Why: a child that a lab forks and abandons (or that double-forks into a daemon) would be
    re-parented to init, out of sight, holding the lab's pipes open. As a subreaper, the worker
    (and the zygote above it) still sees it among its children, so it can name and kill it.
    Why not a process group or a session: a child leaves either with one ``setsid()``; nor a
    cgroup: creating one needs a delegated cgroup v2 tree, which not every CI machine or
    container gives.
    """
    try:
        return ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def long_lived(pid: int) -> None:
    """Declare child ``pid`` a helper this process keeps for its whole life, shared by every
    caller (the persistent ``git cat-file`` reader of :mod:`atlas.git.process`).

    Why: the lab worker fails a lab that leaves a process running, and kills it; a helper that
    the book's own code starts once and reuses across labs is not the lab's doing. It ends with
    the worker (its pipe closes, and the zygote kills what a worker leaves).
    """
    _LONG_LIVED.add(pid)


def long_lived_helpers() -> frozenset[int]:
    """The pids declared with :func:`long_lived` (those of this process's children)."""
    return frozenset(_LONG_LIVED)


def children(pid: int) -> list[int]:
    """The live (not zombie) children of ``pid``, from ``/proc`` (empty where it is absent)."""
    found: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children") as listing:
                found += [int(child) for child in listing.read().split()]
        except OSError:
            continue
    return [child for child in found if not _is_zombie(child)]


def _is_zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except (OSError, IndexError):
        return True  # gone already


def command_line(pid: int) -> str:
    """``pid``'s command line, for messages ("" once it has gone or is exiting)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            words = cmdline.read().split(b"\0")
        text = " ".join(word.decode(errors="replace") for word in words if word)
    except OSError:
        text = ""
    return text[:120]


def descendants(pid: int) -> list[int]:
    """Every live process below ``pid``, parents before their children."""
    found, queue = [], children(pid)
    while queue:
        child = queue.pop(0)
        found.append(child)
        queue += children(child)
    return found


def kill_descendants(pid: int, spare: frozenset[int] = frozenset(), rounds: int = 20) -> list[int]:
    """SIGKILL every process below ``pid`` but those in ``spare`` (and theirs), and reap the
    ones that are ``pid``'s own children when ``pid`` is this process; returns the pids killed.

    Several rounds: a process forking as it is killed leaves orphans, which a subreaper adopts.
    Killed top-down, each process is stopped before it can fork again (SIGKILL is immediate).
    """
    killed: list[int] = []
    for _ in range(rounds):
        tops = [child for child in children(pid) if child not in spare]
        tree = list(dict.fromkeys(p for top in tops for p in (top, *descendants(top))))
        if not tree:
            break
        for child in tree:
            kill(child)
        killed += tree
        if pid == os.getpid():
            for child in tops:
                _reap(child)
    return list(dict.fromkeys(killed))


def _reap(pid: int) -> None:
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass  # not our child (a grandchild: its own parent or a subreaper reaps it)


def seed_everything(seed: int) -> None:
    """Seed Python's, torch's and (when it is installed) numpy's global random generators.

    Labs are deterministic by construction: the worker seeds before each lab, ``run_ranks``
    seeds each rank with ``seed + rank``.
    """
    import torch

    random.seed(seed)
    torch.manual_seed(seed)
    try:
        import numpy
    except ImportError:
        return
    numpy.random.seed(seed)


def kill(pid: int) -> None:
    """SIGKILL ``pid``; a process that has already gone is not an error."""
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def describe_exit(exit_code: int) -> str:
    """How a child ended, in words: "exit status 3", "killed by signal 11 (SIGSEGV)".

    ``exit_code`` follows ``os.waitstatus_to_exitcode`` and ``subprocess``: a negative number is
    the signal that killed the child. An unknown signal number is named "unknown".
    """
    if exit_code >= 0:
        return f"exit status {exit_code}"
    number = -exit_code
    try:
        name = signal.Signals(number).name
    except ValueError:
        name = "unknown"
    return f"killed by signal {number} ({name})"


def siginfo_exit_code(info: os.waitid_result) -> int:
    """The exit code (negative: the killing signal) of what ``os.waitid`` reported."""
    if info.si_code in (os.CLD_KILLED, os.CLD_DUMPED):
        return -info.si_status
    return info.si_status
