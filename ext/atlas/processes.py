"""Process plumbing shared by the lab runner and the labkit: dying with the parent, seeding,
killing a child, and saying in words how a child ended.

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

_PR_SET_PDEATHSIG = 1  # prctl option, from <linux/prctl.h>


def die_with_parent() -> None:
    """Ask the kernel to SIGKILL this process when its parent dies (Linux; a no-op elsewhere).

    Why: a worker or a rank stuck in C code (a collective, a deadlock) never outlives the build
    or the lab that started it, even when that parent is killed with no chance to clean up.
    """
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        pass


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
