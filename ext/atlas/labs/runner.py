"""Sphinx side of the runner: start the zygote, run pages' labs concurrently, enforce timeouts.

Never imports torch. One event loop watches the zygote's socket and each worker's event pipe;
the deadline of the lab being run is enforced from here with SIGKILL, so a lab stuck in C code
(a collective, a deadlock) still ends, and the example it was on is known from the events.
A page is finished when the zygote has said how its worker ended (or has died): a lab that
kills the zygote is blamed, not reported as passed, and the zygote is restarted for the pages
that follow. Each job gets a scratch folder (its working directory, :mod:`atlas.labs.sandbox`),
removed when the page is done.
"""

from __future__ import annotations

import os
import selectors
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections import deque
from collections.abc import Iterator
from pathlib import Path

from atlas.labs import protocol
from atlas.labs.jobs import Job, Running, page_result
from atlas.labs.model import LabResult, PageResult
from atlas.labs.protocol import Kind
from atlas.processes import describe_exit, kill

STARTUP_TIMEOUT = 180.0  # seconds for the zygote to import torch on a cold, busy machine
EXIT_GRACE = 2.0  # seconds to wait for the zygote to report how a dead worker ended
MAX_WAIT = 3600.0  # seconds of one select() at most (a huge :timeout: must not overflow it)
MAX_RESTARTS = 10  # zygote restarts in one run before the runner gives up


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
        self._restarts = 0
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
        running: dict[int, Running] = {}
        selector = selectors.DefaultSelector()
        selector.register(self._sock, selectors.EVENT_READ)
        try:
            while pending or running:
                while pending and len(running) < self.max_workers:
                    job_id, state = self._launch(pending.popleft(), running, selector)
                    running[job_id] = state
                    selector.register(state.fd, selectors.EVENT_READ, job_id)
                now = time.monotonic()
                wake = min(self._next_deadline(state) for state in running.values())
                for key, _ in selector.select(timeout=min(MAX_WAIT, max(0.0, wake - now))):
                    if key.fileobj is self._sock:
                        self._on_zygote(running, selector)
                    else:
                        self._on_events(running[key.data], selector)
                now = time.monotonic()
                for job_id, state in list(running.items()):
                    self._enforce_deadline(state, now)
                    if self._finished(state, now):
                        del running[job_id]
                        self._close(state, selector)
                        yield state.job, page_result(state)
        finally:
            for state in running.values():
                self._kill(state)
                self._close(state, selector)
            selector.close()

    def _close(self, state: Running, selector: selectors.BaseSelector) -> None:
        if not state.exit and not state.server_died:
            self._kill(state)  # ended without the zygote saying how: never leave it running
        if not state.eof:
            selector.unregister(state.fd)
        os.close(state.fd)
        if state.scratch:
            shutil.rmtree(state.scratch, ignore_errors=True)

    def _launch(
        self, job: Job, running: dict[int, Running], selector: selectors.BaseSelector
    ) -> tuple[int, Running]:
        """Send the job to the zygote, restarting the zygote first if it died."""
        for _ in range(2):
            if self._dead:
                self._restart(selector)
            try:
                return self._send(job)
            except OSError:  # it died, and we had not read its end yet
                self._on_zygote_death(running, selector)
        raise ZygoteError(f"the lab zygote died as it was given a page; see {self.log_path}")

    def _send(self, job: Job) -> tuple[int, Running]:
        assert self._sock is not None
        self._next_id += 1
        scratch = tempfile.mkdtemp(prefix="atlas-lab-")
        read_fd, write_fd = os.pipe()
        try:
            with tempfile.TemporaryFile() as job_file:
                protocol.write_job(job_file, job.payload(scratch))
                protocol.send_request(self._sock, self._next_id, job_file.fileno(), write_fd)
        except BaseException:
            os.close(read_fd)
            shutil.rmtree(scratch, ignore_errors=True)
            raise
        finally:
            os.close(write_fd)
        os.set_blocking(read_fd, False)
        now = time.monotonic()
        first_timeout = job.specs[0].timeout if job.specs else 60.0
        state = Running(job=job, fd=read_fd, started=now, deadline=now + first_timeout)
        state.scratch = scratch
        return self._next_id, state

    def _restart(self, selector: selectors.BaseSelector) -> None:
        """A fresh zygote after one died (a lab killed it): the pages after it still run."""
        self._restarts += 1
        if self._restarts > MAX_RESTARTS:
            raise ZygoteError(f"the lab zygote died {MAX_RESTARTS} times; see {self.log_path}")
        self.__exit__(None, None, None)
        self._dead = False
        self.__enter__()
        assert self._sock is not None
        selector.register(self._sock, selectors.EVENT_READ)

    def _next_deadline(self, state: Running) -> float:
        if state.ending_since:
            return state.ending_since + EXIT_GRACE
        return state.deadline

    def _on_zygote_death(
        self, running: dict[int, Running], selector: selectors.BaseSelector
    ) -> None:
        """Blame the pages that were running (their workers die with it)."""
        if self._dead:
            return
        self._dead = True
        if self._sock is not None:
            try:
                selector.unregister(self._sock)
            except KeyError:
                pass
        how = "it ended"
        if self._process is not None:
            try:
                how = describe_exit(self._process.wait(timeout=EXIT_GRACE))
            except subprocess.TimeoutExpired:
                self._process.kill()
        now = time.monotonic()
        victims = [state for state in running.values() if not state.exit]
        for state in victims:
            state.server_died, state.alongside = how, len(victims) - 1
            state.ending(now)

    def _on_zygote(self, running: dict[int, Running], selector: selectors.BaseSelector) -> None:
        assert self._sock is not None
        try:
            message = protocol.recv_packet(self._sock)
        except ConnectionError:
            message = None
        if message is None:  # the zygote died, and its workers with it
            self._on_zygote_death(running, selector)
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
            state.ending(time.monotonic())

    def _on_events(self, state: Running, selector: selectors.BaseSelector) -> None:
        try:
            chunk = os.read(state.fd, 1 << 20)
        except BlockingIOError:
            return
        if not chunk:
            selector.unregister(state.fd)
            state.eof, state.eof_at = True, time.monotonic()
            state.ending(state.eof_at)
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
                state.ending(time.monotonic())
            elif kind == Kind.ERROR:
                state.error = values[0]

    def _enforce_deadline(self, state: Running, now: float) -> None:
        if state.ending_since or now < state.deadline:
            return
        state.timed_out = True
        state.ending(now)
        self._kill(state)

    def _kill(self, state: Running) -> None:
        if state.pid:
            kill(state.pid)

    def _finished(self, state: Running, now: float) -> bool:
        """Its pipe closed and the zygote said how the worker ended (or died); or, whatever
        holds the pipe, a grace period after that (never a wait for ever)."""
        if not state.ending_since:
            return False
        if state.eof and (state.exit or state.server_died):
            return True
        return now >= state.ending_since + EXIT_GRACE
