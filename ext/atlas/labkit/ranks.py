"""Run a function on N gloo ranks forked from the current, already warm, process.

Why forked and not spawned: a spawned rank pays an interpreter start and ``import torch``
(about 1.5 s each); a forked one inherits both, so a 4-rank lab costs its own work plus the
process group set-up. Why a FileStore in a fresh temporary folder: it needs no port, so two labs
running at the same time (``sphinx-build -j 2``) can never rendezvous with each other.

Every rank is killed when the caller dies (``PR_SET_PDEATHSIG``) or when ``timeout`` passes, so a
rank stuck in a collective never outlives its lab.

A rank that raises ``unittest.SkipTest`` (the labkit's
:class:`~atlas.labkit.pinned.UpstreamUnavailable` when an upstream's objects are absent) makes
:func:`run_ranks` raise :class:`RankSkipped`, itself a ``SkipTest``: the lab is skipped with the
rank's reason, as it would be in one process, instead of failing with a remote traceback.

:func:`in_sequence` runs several rank functions in one start of the ranks.
"""

from __future__ import annotations

import os
import pickle
import selectors
import shutil
import signal
import socket
import struct
import sys
import tempfile
import time
import traceback
import unittest
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from atlas.processes import describe_exit, die_with_parent, kill, seed_everything, siginfo_exit_code

__all__ = ["RankCrashed", "RankError", "RankSkipped", "RankTimeout", "in_sequence", "run_ranks"]

ROLE = "support"

_HEADER = struct.Struct("!BdQ")  # outcome, CLOCK_MONOTONIC when it finished, payload length
_RAISED, _OK, _SKIPPED = 0, 1, 2  # the outcomes
_RETURNED = b"R"  # sent when fn has returned, before the final barrier
_GRACE = 0.5  # after a failure, how long to wait for an earlier one from another rank


class RankError(RuntimeError):
    """A rank raised: the message names the rank and carries its remote traceback."""

    def __init__(
        self, message: str, rank: int, remote_traceback: str = "", finished_at: float = 0.0
    ) -> None:
        super().__init__(message)
        self.rank = rank
        self.remote_traceback = remote_traceback
        self.finished_at = finished_at or time.monotonic()


class RankCrashed(RankError):
    """A rank died without reporting (segfault, ``os._exit``, killed for memory)."""


class RankTimeout(RankError):
    """Some ranks had not finished when the timeout passed; all ranks were killed."""


class RankSkipped(RankError, unittest.SkipTest):
    """A rank raised ``unittest.SkipTest`` (an upstream's objects are absent here): the lab
    cannot run on this machine, and is skipped with the rank's reason."""


def in_sequence(
    rank: int, world_size: int, calls: list[tuple[Callable[..., Any], ...]]
) -> list[Any]:
    """Run several rank functions one after another in the same process group.

    ``run_ranks(in_sequence, 4, [(f, "a"), (f, "b")])`` returns, for each rank, the list
    ``[f(rank, 4, "a"), f(rank, 4, "b")]``: one start of the ranks (fork, rendezvous) for a
    lab that runs several checks.
    """
    return [fn(rank, world_size, *args) for fn, *args in calls]


def _import_before_fork() -> None:
    """Import, once in the parent, what every rank would otherwise import on its own.

    ``torch.distributed`` for the process group, and the symbolic-shapes machinery (with sympy)
    that the first ``Tensor.backward(gradient)`` of a process imports: 0.5 s alone, several
    seconds when four ranks do it at once on two cores. Forked ranks inherit the modules.
    """
    import torch.distributed  # noqa: F401
    import torch.fx.experimental.symbolic_shapes  # noqa: F401


def run_ranks(
    fn: Callable[..., Any], world_size: int, *args: Any, timeout: float = 60.0, seed: int = 0
) -> list[Any]:
    """Run ``fn(rank, world_size, *args)`` on ``world_size`` forked ranks; return results by rank.

    Each rank has a real gloo process group on loopback (``torch.distributed`` is initialised
    before ``fn`` and destroyed after it), one torch thread, and ``torch``, ``random`` and
    ``numpy`` seeded with ``seed + rank``. ``fn`` and ``args`` are inherited through fork, so
    they need not be picklable; return values travel back pickled (objects of classes defined
    in a lab work too). A barrier precedes and follows ``fn``.

    Failures: the cause is raised and every rank killed. :class:`RankCrashed` when a rank died
    without a result, else :class:`RankError` for the rank that raised first (its remote
    traceback in the message; its peers usually fail afterwards, inside a collective);
    :class:`RankTimeout` naming the ranks still inside ``fn`` after ``timeout`` seconds.
    """
    if not isinstance(world_size, int) or isinstance(world_size, bool) or world_size < 1:
        raise ValueError(f"run_ranks: world_size must be a positive int, got {world_size!r}")
    if timeout <= 0:
        raise ValueError(f"run_ranks: timeout must be positive, got {timeout!r}")
    _import_before_fork()
    rendezvous = tempfile.mkdtemp(prefix="atlas-ranks-")
    store_path = os.path.join(rendezvous, "store")
    children: dict[int, int] = {}  # rank -> pid
    pipes: dict[int, int] = {}  # read fd -> rank
    try:
        sys.stdout.flush()
        sys.stderr.flush()
        for rank in range(world_size):
            read_fd, write_fd = os.pipe()
            pid = os.fork()
            if pid == 0:  # the rank; never returns
                os.close(read_fd)
                _rank_main(fn, rank, world_size, args, store_path, timeout, seed, write_fd)
            os.close(write_fd)
            children[rank] = pid
            pipes[read_fd] = rank
        return _collect(children, pipes, world_size, timeout)
    finally:
        for read_fd in pipes:
            os.close(read_fd)
        _kill_and_reap(children.values())
        shutil.rmtree(rendezvous, ignore_errors=True)


def _rank_main(
    fn: Callable[..., Any],
    rank: int,
    world_size: int,
    args: tuple[Any, ...],
    store_path: str,
    timeout: float,
    seed: int,
    write_fd: int,
) -> None:
    """Body of a forked rank: set up, run ``fn``, send the pickled outcome, ``os._exit``."""
    code, failed_at, outcome = 0, 0.0, _OK
    try:
        die_with_parent()
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        if "GLOO_SOCKET_IFNAME" not in os.environ:
            os.environ["GLOO_SOCKET_IFNAME"] = _loopback()
        import torch
        import torch.distributed as dist

        seed_everything(seed + rank)
        torch.set_num_threads(1)
        store = dist.FileStore(store_path, world_size)
        dist.init_process_group(
            "gloo",
            store=store,
            rank=rank,
            world_size=world_size,
            timeout=timedelta(seconds=timeout),
        )
        try:
            # Barriers around fn: no rank tears the group down while a peer is still
            # connecting (gloo's full mesh) or still inside a collective of fn.
            dist.barrier()
            try:
                result = fn(rank, world_size, *args)
            except BaseException:
                failed_at = time.monotonic()  # before destroy, which makes the peers fail too
                raise
            os.write(write_fd, _RETURNED)
            dist.barrier()
        finally:
            dist.destroy_process_group()
        payload = pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL)
    except unittest.SkipTest as skip:  # the lab cannot run here: say why, do not fail
        payload, outcome = pickle.dumps(str(skip) or "skipped by the lab"), _SKIPPED
    except BaseException as exc:  # noqa: BLE001 - everything is reported to the parent
        text = "".join(traceback.format_exception(exc))
        payload, outcome = pickle.dumps(text), _RAISED
        code = 1
    _stop_own_git()  # before the result: once it has it, the parent kills the ranks
    try:
        _write_all(
            write_fd, _HEADER.pack(outcome, failed_at or time.monotonic(), len(payload)) + payload
        )
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:  # noqa: BLE001 - the parent will report the missing result
        code = 2
    finally:
        os._exit(code)


def _stop_own_git() -> None:
    """Stop the ``cat-file`` processes this rank started (a rank that read pinned code has
    its own, :mod:`atlas.git.store` being fork-aware), before it sends its result: the parent
    kills every rank once it has the results, and ``os._exit`` runs no cleanup either, so they
    would outlive the rank, and the lab sandbox counts a process a lab leaves behind as its
    failure (``moe/deepep``'s and ``post-training/weight-sync``'s rank labs failed so, now and
    then)."""
    try:
        from atlas.git.store import close_all

        close_all()
    except Exception:  # noqa: BLE001 - exiting anyway; the sandbox would report a leftover
        pass


def _loopback() -> str:
    """The loopback interface's name ("lo" on Linux, "lo0" on macOS): ranks never leave it."""
    names = [name for _, name in socket.if_nameindex()]
    return next((name for name in ("lo", "lo0") if name in names), names[0] if names else "lo")


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
    os.close(fd)


def _collect(
    children: dict[int, int], pipes: dict[int, int], world_size: int, timeout: float
) -> list[Any]:
    """Read every rank's outcome until all are in, one fails, or the deadline passes."""
    deadline = time.monotonic() + timeout
    buffers: dict[int, bytearray] = {rank: bytearray() for rank in range(world_size)}
    results: dict[int, Any] = {}
    failures: list[RankError] = []
    first_failure_seen = 0.0
    selector = selectors.DefaultSelector()
    for read_fd in pipes:
        selector.register(read_fd, selectors.EVENT_READ)
    try:
        while len(results) + len(failures) < world_size:
            left = deadline - time.monotonic()
            if failures and left > 0:
                # One rank failed; its peers usually fail next inside a collective. Give them a
                # moment, then report the rank that failed first: that is the cause.
                deadline = min(deadline, first_failure_seen + _GRACE)
                left = deadline - time.monotonic()
            if left <= 0 and failures:
                break
            if left <= 0:
                busy = [r for r in range(world_size) if not buffers[r].startswith(_RETURNED)]
                missing = busy or sorted(set(range(world_size)) - set(results))
                raise RankTimeout(
                    f"run_ranks: rank(s) {missing} of {world_size} still running after "
                    f"{timeout:g} s; all ranks were killed",
                    rank=missing[0],
                )
            for key, _ in selector.select(timeout=min(left, 0.5)):
                rank = pipes[key.fd]
                chunk = os.read(key.fd, 1 << 20)
                if chunk:
                    buffers[rank] += chunk
                    continue
                selector.unregister(key.fd)
                try:
                    results[rank] = _decode(rank, world_size, buffers[rank], children[rank])
                except RankError as error:
                    first_failure_seen = first_failure_seen or time.monotonic()
                    failures.append(error)
    finally:
        selector.close()
    if failures:
        # A skip says the lab cannot run here, whatever its peers did next; then a rank that
        # died is the likeliest cause (its peers fail in collectives); else the first to raise.
        raise min(
            failures,
            key=lambda f: (
                not isinstance(f, RankSkipped),
                not isinstance(f, RankCrashed),
                f.finished_at,
            ),
        )
    return [results[rank] for rank in range(world_size)]


def _decode(rank: int, world_size: int, data: bytearray, pid: int) -> Any:
    """Turn what a rank wrote before closing its pipe into its result or the right error."""
    if data.startswith(_RETURNED):
        del data[: len(_RETURNED)]
    if len(data) >= _HEADER.size:
        outcome, finished_at, length = _HEADER.unpack_from(data)
        if len(data) == _HEADER.size + length:
            value = pickle.loads(bytes(data[_HEADER.size :]))
            if outcome == _OK:
                return value
            if outcome == _SKIPPED:
                raise RankSkipped(
                    f"rank {rank} of {world_size} skipped: {value}",
                    rank=rank,
                    finished_at=finished_at,
                )
            error = RankError(
                f"run_ranks: rank {rank} of {world_size} raised:\n{value}",
                rank=rank,
                remote_traceback=value,
                finished_at=finished_at,
            )
            raise error
    status = _wait_status(pid)
    raise RankCrashed(
        f"run_ranks: rank {rank} of {world_size} died without a result ({status})", rank=rank
    )


def _wait_status(pid: int) -> str:
    """How a rank ended, in words (waits at most a second for it to exit)."""
    for _ in range(100):
        # WNOWAIT: look without reaping, so that _kill_and_reap never signals a recycled pid.
        info = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        if info is not None and info.si_pid:
            return describe_exit(siginfo_exit_code(info))
        time.sleep(0.01)
    return "still running"


def _kill_and_reap(pids: Any) -> None:
    for pid in pids:
        kill(pid)
    for pid in pids:
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass
