"""Runs one page's labs inside a worker forked from the zygote (torch already imported).

The labs of a page share one namespace, a module named ``__lab__`` registered in
``sys.modules`` so that objects defined in a lab pickle by reference (run_ranks results).
Progress goes to the Sphinx side as events, so that a hang or crash can be pinned on the
example that was running. The page runs in the sandbox of :mod:`atlas.labs.sandbox` (a scratch
working directory, no write outside it), as a subreaper: a process a lab leaves running after
its last example is killed and fails the lab.
"""

from __future__ import annotations

import doctest
import os
import resource
import sys
import time
import types
import unittest
from pathlib import Path
from typing import Any

from atlas.labs import protocol, sandbox
from atlas.labs.model import ExampleOutcome, ExampleResult, LabResult, LabStatus
from atlas.labs.protocol import Kind
from atlas.processes import (
    become_subreaper,
    command_line,
    descendants,
    kill_descendants,
    long_lived_helpers,
    seed_everything,
)

OPTIONFLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
MAX_OUTPUT = 20_000  # characters of actual output kept per example


def environment() -> str:
    """The environment line of the status: ``torch 2.13.0 · CPU``."""
    import torch

    version = torch.__version__.split("+")[0]
    # With PYTORCH_NVML_BASED_CUDA_CHECK=1 (set by the runner) this does not initialise CUDA,
    # so the worker can still fork ranks that use it; the device name would initialise it.
    if torch.cuda.is_available():
        return f"torch {version} · CUDA"
    return f"torch {version} · CPU"


class _SkipLab(Exception):
    """An example raised ``unittest.SkipTest``: the rest of the lab cannot run here."""


class _Runner(doctest.DocTestRunner):
    """A doctest runner that records each example's outcome instead of printing a report."""

    def __init__(self, fd: int | None, lab: int, scratch: Path | None = None) -> None:
        super().__init__(optionflags=OPTIONFLAGS)
        self.fd, self.lab, self.scratch = fd, lab, scratch
        self.results: list[ExampleResult] = []
        self.out_of_memory = False
        self._started = 0.0

    def report_start(self, out: Any, test: doctest.DocTest, example: doctest.Example) -> None:
        if self.fd is not None:
            protocol.send(self.fd, Kind.EXAMPLE, self.lab, len(self.results))
        self._started = time.perf_counter()

    def _record(self, outcome: ExampleOutcome, got: str) -> None:
        seconds = time.perf_counter() - self._started
        self.results.append(ExampleResult(outcome, got[:MAX_OUTPUT], round(seconds, 4)))

    def report_success(self, out: Any, test: Any, example: Any, got: str) -> None:
        self._record(ExampleOutcome.PASSED, "")  # the page shows the expected output, which matched

    def report_failure(self, out: Any, test: Any, example: Any, got: str) -> None:
        self._record(ExampleOutcome.FAILED, got)

    def report_unexpected_exception(self, out: Any, test: Any, example: Any, exc_info: Any) -> None:
        if isinstance(exc_info[1], unittest.SkipTest):
            # As under pytest: a lab whose prerequisite is absent here (the upstream objects it
            # runs, say) is skipped visibly, with the reason, rather than failed.
            raise _SkipLab(str(exc_info[1]) or "skipped by the lab")
        self.out_of_memory = self.out_of_memory or _is_out_of_memory(exc_info[1])
        text = doctest._exception_traceback(exc_info)  # type: ignore[attr-defined]
        if self.scratch is not None and sandbox.denied_write(exc_info[1], self.scratch):
            text += f"(the lab sandbox refused this write: {sandbox.HINT})\n"
        self._record(ExampleOutcome.ERROR, text)


def _is_out_of_memory(exc: BaseException) -> bool:
    """MemoryError, or torch's allocator failing under the memory cap (a RuntimeError)."""
    if isinstance(exc, MemoryError):
        return True
    return isinstance(exc, RuntimeError) and "can't allocate memory" in str(exc)


def run_lab(
    index: int,
    lab: dict[str, Any],
    namespace: dict[str, Any],
    fd: int,
    scratch: Path | None = None,
) -> LabResult:
    """Run one lab's examples in the page's namespace."""
    import torch

    if lab["needs"] == "cuda" and not torch.cuda.is_available():
        return LabResult(LabStatus.SKIPPED, message="needs CUDA, and this machine has no GPU")
    seed_everything(lab["seed"])
    parser = doctest.DocTestParser()
    test = parser.get_doctest(lab["text"], namespace, lab["filename"], lab["filename"], 0)
    test.globs = namespace  # DocTest copies its globals; the labs of a page share them
    runner = _Runner(fd, index, scratch)
    started = time.perf_counter()
    try:
        runner.run(test, out=lambda text: None, clear_globs=False)
    except _SkipLab as skip:
        seconds = round(time.perf_counter() - started, 4)
        return LabResult(LabStatus.SKIPPED, seconds, runner.results, None, str(skip))
    seconds = round(time.perf_counter() - started, 4)
    failing = [i for i, ex in enumerate(runner.results) if ex.outcome != ExampleOutcome.PASSED]
    first = failing[0] if failing else None
    if runner.out_of_memory:
        limit = lab["memory_limit_mb"]
        cap = f" under the worker's memory cap of {limit} MiB" if limit else ""
        return LabResult(LabStatus.CRASHED, seconds, runner.results, first, f"out of memory{cap}")
    if lab["expect_failure"]:
        status = LabStatus.XFAIL if failing else LabStatus.XPASS
    else:
        status = LabStatus.FAILED if failing else LabStatus.PASSED
    return LabResult(status, seconds, runner.results, first)


WARM_UP = ">>> import torch\n>>> int(torch.ones(2) @ torch.ones(2))\n2\n"


def warm_up() -> None:
    """Run a trivial lab in the zygote, before any fork: torch's lazy initialisations (RNG,
    allocator, dispatcher) then happen once instead of in every worker (about 40 ms each)."""
    seed_everything(0)
    test = doctest.DocTestParser().get_doctest(WARM_UP, {}, "warm-up", "warm-up", 0)
    runner = _Runner(None, 0)
    runner.run(test, out=lambda text: None)
    if [example.outcome for example in runner.results] != [ExampleOutcome.PASSED] * 2:
        raise RuntimeError(f"the zygote's warm-up lab failed: {runner.results}")


def leftover_processes() -> str:
    """Kill what a lab left running below this worker; say what it was ("" when nothing).

    The worker is a subreaper, so a child that the lab abandoned, or that double-forked, is
    still below it. Left running, it would hold the event pipe open and the build would wait
    for it for ever (its own lab long reported as passed).
    """
    helpers = long_lived_helpers()  # the book's own, reused across labs (git's object reader)
    pids = _still_running(helpers)
    if not pids:
        return ""
    ours = command_line(os.getpid())
    found = [
        "a fork of the lab's process" if command_line(pid) == ours else command_line(pid)
        for pid in pids
    ]
    kill_descendants(os.getpid(), spare=helpers)
    _reap_zombies()
    shown = "; ".join(found[:3]) + (f"; and {len(found) - 3} more" if len(found) > 3 else "")
    return (
        f"it left {len(found)} process{'es' if len(found) > 1 else ''} running after its last "
        f"example ({shown}), killed now; a lab must wait for every process it starts "
        "(subprocess.run, Popen.wait, os.waitpid)"
    )


def _still_running(helpers: frozenset[int], grace: float = 0.05) -> list[int]:
    """The processes below this worker, but those that are exiting (a child that has just
    called ``_exit`` is not left running: it is given ``grace`` seconds to be gone)."""

    def scan() -> list[int]:
        return [p for p in descendants(os.getpid()) if p not in helpers and command_line(p)]

    deadline = time.monotonic() + grace
    while True:
        pids = scan()
        if not pids:
            # A child caught mid-exit hides its own children (its /proc entries go away before
            # the subreaper adopts them): nothing is left only if a second look agrees.
            time.sleep(0.002)
            pids = scan()
        if not pids or time.monotonic() >= deadline:
            return pids
        time.sleep(0.005)


def _reap_zombies() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if not pid:
            return


def _sandbox_verdict(result: LabResult, problems: list[str]) -> LabResult:
    """A lab that broke the sandbox fails, with what it did, whatever its examples gave."""
    problems = [problem for problem in problems if problem]
    if not problems:
        return result
    message = "; and ".join(problems)
    if result.message:
        message += f" (and: {result.message})"
    return LabResult(LabStatus.FAILED, result.seconds, result.examples, None, message)


def run_page(job: dict[str, Any], fd: int) -> None:
    """Run every lab of a page in order, sending events to ``fd``; called in a fresh fork."""
    limit = job["memory_limit_mb"]
    if limit and not any(lab["needs"] == "cuda" for lab in job["labs"]):
        cap = limit * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    become_subreaper()
    scratch = Path(job["scratch"])
    book_root = Path(job["book_root"]) if job.get("book_root") else None
    box = sandbox.enter(scratch, book_root)
    protocol.send(fd, Kind.HELLO, environment())
    module = types.ModuleType("__lab__")
    sys.modules["__lab__"] = module
    namespace = module.__dict__
    for index, lab in enumerate(job["labs"]):
        protocol.send(fd, Kind.LAB, index)
        box.before_lab()
        result = run_lab(index, {**lab, "memory_limit_mb": limit}, namespace, fd, scratch)
        result = _sandbox_verdict(result, [leftover_processes(), box.after_lab()])
        protocol.send(fd, Kind.RESULT, index, result.to_json())
    protocol.send(fd, Kind.DONE)
