"""atlas.processes, shared by the lab runner and labkit's ranks: exit texts, dying with the
parent, killing quietly. Importing it must pull in neither Sphinx nor torch."""

from __future__ import annotations

import faulthandler
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import atlas.processes
import pytest
from atlas.processes import describe_exit, kill, siginfo_exit_code

# Child interpreters import the same atlas as this test does.
EXT = str(Path(atlas.processes.__file__).resolve().parents[1])
CHILD_ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([EXT, os.environ.get("PYTHONPATH", "")])}


@pytest.mark.parametrize(
    ("exit_code", "text"),
    [
        (0, "exit status 0"),
        (3, "exit status 3"),
        (-11, "killed by signal 11 (SIGSEGV)"),
        (-9, "killed by signal 9 (SIGKILL)"),
        (-200, "killed by signal 200 (unknown)"),
    ],
)
def test_exit_text_for_a_code_and_a_signal(exit_code: int, text: str) -> None:
    assert describe_exit(exit_code) == text


def test_waitpid_and_waitid_statuses_read_the_same() -> None:
    # waitpid's status word, as the zygote gets it
    assert describe_exit(os.waitstatus_to_exitcode(7 << 8)) == "exit status 7"
    assert describe_exit(os.waitstatus_to_exitcode(signal.SIGSEGV)) == (
        "killed by signal 11 (SIGSEGV)"
    )
    # waitid's siginfo (pid, uid, signo, status, code), as run_ranks gets it
    exited = os.waitid_result((1, 0, signal.SIGCHLD, 7, os.CLD_EXITED))
    killed = os.waitid_result((1, 0, signal.SIGCHLD, signal.SIGKILL, os.CLD_KILLED))
    dumped = os.waitid_result((1, 0, signal.SIGCHLD, signal.SIGSEGV, os.CLD_DUMPED))
    assert [siginfo_exit_code(info) for info in (exited, killed, dumped)] == [7, -9, -11]


def test_a_real_child_killed_by_a_signal_is_named() -> None:
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        faulthandler.disable()  # pytest's handler would print a traceback for the SIGSEGV
        os.kill(os.getpid(), signal.SIGSEGV)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    assert describe_exit(os.waitstatus_to_exitcode(status)) == "killed by signal 11 (SIGSEGV)"


def test_kill_of_a_process_that_is_gone_is_quiet() -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    kill(child.pid)  # reaped already: no ProcessLookupError


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux")
def test_a_child_that_asked_to_die_with_its_parent_does(tmp_path) -> None:
    """parent forks grandchild (which calls die_with_parent), then the parent is killed."""
    pid_file = tmp_path / "grandchild"
    code = f"""
import os, sys, time
from atlas.processes import die_with_parent
pid = os.fork()
if pid == 0:
    die_with_parent()
    open({str(pid_file)!r} + ".tmp", "w").write(str(os.getpid()))
    os.rename({str(pid_file)!r} + ".tmp", {str(pid_file)!r})
    time.sleep(60)
    os._exit(0)
time.sleep(60)
"""
    parent = subprocess.Popen([sys.executable, "-c", code], env=CHILD_ENV)
    try:
        deadline = time.monotonic() + 20
        while not pid_file.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        grandchild = int(pid_file.read_text())
    finally:
        parent.kill()
        parent.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(grandchild, 0)
        except ProcessLookupError:
            return  # gone (reaped by init after the kernel killed it)
        if _is_zombie(grandchild):
            return
        time.sleep(0.02)
    kill(grandchild)
    pytest.fail("the grandchild outlived its parent: die_with_parent did not take")


def _is_zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return False


def test_importing_it_pulls_in_neither_sphinx_nor_torch() -> None:
    probe = (
        "import sys, atlas.processes; "
        "print(sorted(m for m in ('sphinx', 'torch', 'docutils', 'numpy') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, env=CHILD_ENV
    )
    assert out.stdout.strip() == "[]"
