"""Sphinx side of the runner: start the zygote, run pages' labs concurrently, enforce timeouts.

Never imports torch. One event loop watches the zygote's socket and each worker's event pipe;
the deadline of the lab being run is enforced from here with SIGKILL, so a lab stuck in C code
(a collective, a deadlock) still ends, and the example it was on is known from the events.
"""

from __future__ import annotations

import os
import selectors
import socket
import subprocess
import sys
import tempfile
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from atlas.labs import protocol
from atlas.labs.model import (
    ExampleOutcome,
    ExampleResult,
    LabResult,
    LabSpec,
    LabStatus,
    PageResult,
)
from atlas.labs.protocol import Kind
from atlas.processes import kill

STARTUP_TIMEOUT = 180.0  # seconds for the zygote to import torch on a cold, busy machine
EXIT_GRACE = 2.0  # seconds to wait for the zygote to report how a dead worker ended


@dataclass
class Job:
    """One page's labs, to run in one worker."""

    docname: str
    key: str
    specs: list[LabSpec]
    memory_limit_mb: int = 0
    seed: int = 0

    def payload(self) -> dict[str, Any]:
        return {
            "docname": self.docname,
            "memory_limit_mb": self.memory_limit_mb,
            "labs": [
                {
                    "text": spec.text,
                    "needs": spec.needs,
                    "expect_failure": spec.expect_failure,
                    "seed": self.seed,
                    "filename": f"{spec.docname} (lab {spec.index + 1}, line {spec.line})",
                }
                for spec in self.specs
            ],
        }


@dataclass
class _Running:
    job: Job
    fd: int
    started: float
    deadline: float
    reader: protocol.Reader = field(default_factory=protocol.Reader)
    pid: int = 0
    environment: str = ""
    lab: int = -1
    example: int = -1
    lab_started: float = 0.0
    results: dict[int, LabResult] = field(default_factory=dict)
    done: bool = False
    eof: bool = False
    eof_at: float = 0.0
    exit: str = ""
    timed_out: bool = False
    error: str = ""


class ZygoteError(RuntimeError):
    """The zygote could not start (torch missing, import error): every lab is reported."""


class LabRunner:
    """Runs jobs in workers forked from one zygote; use as a context manager."""

    def __init__(self, log_path: Path, jobs: int = 1, python: str = sys.executable) -> None:
        self.log_path = log_path
        self.python = python
        self.max_workers = max(1, jobs)
        self._sock: socket.socket | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._ready = False
        self._dead = False
        self._next_id = 0

    def start(self) -> LabRunner:
        """Launch the zygote without waiting for it: it imports torch while Sphinx reads."""
        if self._process is not None:
            return self
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        package_root = str(Path(__file__).resolve().parents[2])
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root, env.get("PYTHONPATH")]))
        env.setdefault("OMP_NUM_THREADS", "1")
        env.setdefault("PYTORCH_NVML_BASED_CUDA_CHECK", "1")  # is_available() must not poison fork
        with open(self.log_path, "ab") as log:
            self._process = subprocess.Popen(
                [self.python, "-m", "atlas.labs.zygote", str(theirs.fileno())],
                pass_fds=[theirs.fileno()],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                env=env,
            )
        theirs.close()
        self._sock = ours
        self._ready = False
        return self

    def __enter__(self) -> LabRunner:
        """Start the zygote if needed and wait until it has imported torch."""
        self.start()
        if self._ready:
            return self
        assert self._sock is not None
        self._sock.settimeout(STARTUP_TIMEOUT)
        try:
            message = protocol.recv_packet(self._sock) or (Kind.BROKEN, "")
        except TimeoutError:
            message = (Kind.BROKEN, f"it did not start within {STARTUP_TIMEOUT:g} s")
        self._sock.settimeout(None)
        if message[0] != Kind.READY:
            self.__exit__(None, None, None)
            detail = message[1].strip() or self._log_tail()
            raise ZygoteError(f"the lab worker could not start: {detail}")
        self._ready = True
        return self

    def __exit__(self, *exc: object) -> None:
        if self._sock is not None:
            self._sock.close()  # the zygote kills its workers and exits on EOF
            self._sock = None
        if self._process is not None:
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
            self._process = None
        self._ready = False

    def _log_tail(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-2000:].strip()
        except OSError:
            return ""

    def run(self, jobs: list[Job]) -> Iterator[tuple[Job, PageResult]]:
        """Yield each job with its result as soon as its page is done (for progress)."""
        assert self._sock is not None, "use LabRunner as a context manager"
        pending = deque(jobs)
        running: dict[int, _Running] = {}
        selector = selectors.DefaultSelector()
        selector.register(self._sock, selectors.EVENT_READ)
        try:
            while pending or running:
                while pending and len(running) < self.max_workers:
                    job_id, state = self._launch(pending.popleft())
                    running[job_id] = state
                    selector.register(state.fd, selectors.EVENT_READ, job_id)
                now = time.monotonic()
                wake = min(self._next_deadline(state) for state in running.values())
                for key, _ in selector.select(timeout=max(0.0, wake - now)):
                    if key.fileobj is self._sock:
                        self._on_zygote(running, selector)
                    else:
                        self._on_events(running[key.data], selector)
                now = time.monotonic()
                for job_id, state in list(running.items()):
                    self._enforce_deadline(state, now)
                    if self._finished(state, now):
                        del running[job_id]
                        os.close(state.fd)
                        yield state.job, self._result(state)
        finally:
            for state in running.values():
                self._kill(state)
                os.close(state.fd)
            selector.close()

    def _launch(self, job: Job) -> tuple[int, _Running]:
        assert self._sock is not None
        if self._dead:
            raise ZygoteError(f"the lab zygote died; see {self.log_path}")
        self._next_id += 1
        read_fd, write_fd = os.pipe()
        with tempfile.TemporaryFile() as job_file:
            protocol.write_job(job_file, job.payload())
            protocol.send_request(self._sock, self._next_id, job_file.fileno(), write_fd)
        os.close(write_fd)
        os.set_blocking(read_fd, False)
        now = time.monotonic()
        first_timeout = job.specs[0].timeout if job.specs else 60.0
        state = _Running(job=job, fd=read_fd, started=now, deadline=now + first_timeout)
        return self._next_id, state

    def _next_deadline(self, state: _Running) -> float:
        if state.eof:
            return state.eof_at + EXIT_GRACE
        return state.deadline

    def _on_zygote(self, running: dict[int, _Running], selector: selectors.BaseSelector) -> None:
        assert self._sock is not None
        message = protocol.recv_packet(self._sock)
        if message is None:  # the zygote died, and its workers with it
            selector.unregister(self._sock)
            self._dead = True
            for state in running.values():
                state.exit = state.exit or "the lab zygote died"
            return
        kind, job_id, value = message
        state = running.get(job_id)
        if state is None:
            return
        if kind == Kind.STARTED:
            state.pid = value
            if state.timed_out:  # its deadline passed before we knew whom to kill
                self._kill(state)
        elif kind == Kind.EXITED:
            state.exit = value

    def _on_events(self, state: _Running, selector: selectors.BaseSelector) -> None:
        try:
            chunk = os.read(state.fd, 1 << 20)
        except BlockingIOError:
            return
        if not chunk:
            selector.unregister(state.fd)
            state.eof, state.eof_at = True, time.monotonic()
            return
        for kind, *values in state.reader.feed(chunk):
            if kind == Kind.HELLO:
                state.environment = values[0]
            elif kind == Kind.LAB:
                state.lab, state.example = values[0], -1
                state.lab_started = time.monotonic()
                state.deadline = state.lab_started + state.job.specs[values[0]].timeout
            elif kind == Kind.EXAMPLE:
                state.example = values[1]
            elif kind == Kind.RESULT:
                state.results[values[0]] = LabResult.from_json(values[1])
            elif kind == Kind.DONE:
                state.done = True
            elif kind == Kind.ERROR:
                state.error = values[0]

    def _enforce_deadline(self, state: _Running, now: float) -> None:
        if state.eof or state.timed_out or now < state.deadline:
            return
        state.timed_out = True
        self._kill(state)

    def _kill(self, state: _Running) -> None:
        if state.pid:
            kill(state.pid)

    def _finished(self, state: _Running, now: float) -> bool:
        if not state.eof:
            return False
        return state.done or state.timed_out or bool(state.exit) or now >= state.eof_at + 2.0

    def _result(self, state: _Running) -> PageResult:
        specs = state.job.specs
        labs: list[LabResult] = []
        for index, spec in enumerate(specs):
            if index in state.results:
                labs.append(state.results[index])
            elif index == max(state.lab, 0) and not state.done:
                labs.append(self._interrupted(state, spec))
            else:
                reason = "an earlier lab of this page ended its session"
                labs.append(LabResult(LabStatus.NOT_RUN, message=f"not run: {reason}"))
        return PageResult(key=state.job.key, environment=state.environment, labs=labs)

    def _interrupted(self, state: _Running, spec: LabSpec) -> LabResult:
        """The lab that was running when the worker was killed or died."""
        example = state.example if state.example >= 0 else None
        where = "before its first example"
        if example is not None:
            ex = spec.examples[example]
            first = ex.source.splitlines()[0] if ex.source else ""
            where = f"in example {example + 1} (line {ex.line}: >>> {first})"
        seconds = round(time.monotonic() - (state.lab_started or state.started), 4)
        done = [ExampleResult(ExampleOutcome.PASSED) for _ in range(example or 0)]
        if state.timed_out:
            message = f"timed out after {spec.timeout:g} s {where}; its session was killed"
            return LabResult(LabStatus.TIMEOUT, seconds, done, example, message)
        how = state.exit or "no exit status reported"
        message = f"the worker crashed ({how}) {where}"
        if state.error:
            message += f"\n{state.error}"
        return LabResult(LabStatus.CRASHED, seconds, done, example, message)
