"""A process sandbox for tool commands, built from POSIX resource limits.

The launcher restricts itself and then ``exec``s the command, the same shape as DeepSeek
Harness's ``landlock-run``: limits set on a process are inherited across ``execve`` and by
every child, and the process that called the launcher stays unrestricted. Here the
restrictions are resource limits (``setrlimit``): CPU seconds (the kernel sends ``SIGXCPU``
at the soft limit and ``SIGKILL`` at the hard one), address space (allocations past it fail),
the size of any file written (``SIGXFSZ``, or the error ``EFBIG`` for a program
that ignores the signal, as Python does) and open file descriptors. Wall-clock time is not a
resource limit: a command that sleeps or waits on the network burns no CPU, so the parent
keeps a deadline and kills the command's whole process group when it passes.

This bounds what a runaway command costs the host. It isolates nothing: the command still
sees the host's files, processes and network. The chapter's sandbox page shows what adds
isolation (namespaces, seccomp, Landlock, a microVM).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

ROLE = "taught"

# The launcher, run as ``python -c LAUNCHER limits_json argv...``: restrict, then exec.
LAUNCHER = """
import json, os, resource, signal, sys
limits = json.loads(sys.argv[1])
for sig in (signal.SIGPIPE, signal.SIGXFSZ):  # Python ignores these; the command must not
    signal.signal(sig, signal.SIG_DFL)
for name, value in limits.items():
    soft, hard = value
    resource.setrlimit(getattr(resource, name), (soft, hard))
os.execvp(sys.argv[2], sys.argv[2:])
"""


@dataclass(frozen=True)
class Limits:
    """What one tool command may use. ``None`` leaves a resource unlimited."""

    cpu_seconds: int | None = None
    memory_bytes: int | None = None
    file_bytes: int | None = None
    open_files: int | None = None
    wall_seconds: float | None = None

    def rlimits(self) -> dict[str, tuple[int, int]]:
        """``setrlimit`` arguments; the CPU hard limit is one second above the soft one, so
        ``SIGXCPU`` (catchable) comes first and ``SIGKILL`` ends a command that ignores it."""
        out: dict[str, tuple[int, int]] = {}
        if self.cpu_seconds is not None:
            out["RLIMIT_CPU"] = (self.cpu_seconds, self.cpu_seconds + 1)
        if self.memory_bytes is not None:
            out["RLIMIT_AS"] = (self.memory_bytes, self.memory_bytes)
        if self.file_bytes is not None:
            out["RLIMIT_FSIZE"] = (self.file_bytes, self.file_bytes)
        if self.open_files is not None:
            out["RLIMIT_NOFILE"] = (self.open_files, self.open_files)
        return out


@dataclass(frozen=True)
class Outcome:
    """How a confined command ended, with what it used as the kernel accounted it."""

    returncode: int  # negative: killed by that signal number
    verdict: str  # ok, error, cpu-limit, memory-limit, file-limit, wall-limit
    cpu_seconds: float  # user + system time of the command, from wait4
    max_rss_bytes: int  # from wait4; Linux carries the spawning parent's peak across a
    # vfork and exec, so under a large parent this is the parent's, not the command's
    wall_seconds: float
    stdout: str
    stderr: str


def confine(argv: list[str], limits: Limits) -> list[str]:
    """The argv to spawn instead of ``argv``: the launcher, the limits, then the command."""
    return [sys.executable, "-S", "-c", LAUNCHER, json.dumps(limits.rlimits()), *argv]


def run_confined(argv: list[str], limits: Limits, cwd: str | None = None) -> Outcome:
    """Run ``argv`` under ``limits`` in a new process group and say how it ended."""
    start = time.monotonic()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(
            confine(argv, limits), stdout=out, stderr=err, cwd=cwd, start_new_session=True
        )
        deadline = None if limits.wall_seconds is None else start + limits.wall_seconds
        timed_out = False
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if deadline is not None and time.monotonic() > deadline:
                os.killpg(proc.pid, signal.SIGKILL)  # the command and all it started
                timed_out = True
                pid, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.005)
        proc.returncode = os.waitstatus_to_exitcode(status)  # Popen must not reap it again
        wall = time.monotonic() - start
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(), err.read().decode()
    code = proc.returncode
    if timed_out:
        verdict = "wall-limit"
    elif code in (-signal.SIGXCPU, -signal.SIGKILL) and limits.cpu_seconds is not None:
        verdict = "cpu-limit"
    elif code == -signal.SIGXFSZ or "File too large" in stderr:
        verdict = "file-limit"
    elif code != 0 and "MemoryError" in stderr:
        verdict = "memory-limit"
    else:
        verdict = "ok" if code == 0 else "error"
    return Outcome(
        code, verdict, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024, wall, stdout, stderr
    )
