"""The zygote: a process that imports torch once, then forks one worker per page on request.

Run as ``python -m atlas.labs.zygote FD`` by :mod:`atlas.labs.runner`, FD being its end of a
``SOCK_SEQPACKET`` socket pair. A request (``Kind.RUN``) carries, as ancillary data, two
descriptors: a file holding the pickled job (no size limit) and the write end of the pipe on
which the worker sends its events straight to Sphinx. The zygote answers ``Kind.STARTED`` and,
when the worker is reaped, ``Kind.EXITED``; the messages and their framing are
:mod:`atlas.labs.protocol`'s. It dies with its parent, and its workers die with it, so nothing
outlives the build. It is a subreaper: what a killed worker left running is re-parented to it,
and it kills every child that is not a worker as soon as a worker ends, so no orphan holds a
page's event pipe open (which would make the build wait for it for ever).
"""

from __future__ import annotations

import os
import select
import signal
import socket
import sys
import traceback

from atlas.labs import protocol
from atlas.labs.protocol import Kind
from atlas.processes import (
    become_subreaper,
    describe_exit,
    die_with_parent,
    kill,
    kill_descendants,
)


def _warm_up() -> None:
    """Import what every lab pays for, once, before any fork."""
    import numpy  # noqa: F401 - torch warns without it
    import torch
    import torch.distributed  # noqa: F401 - run_ranks

    torch.set_num_threads(1)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:
        pass
    import atlas.labkit  # noqa: F401
    from atlas.labs import worker

    worker.warm_up()


def _worker(job_fd: int, fd: int, wakeup: tuple[int, int], sock: socket.socket) -> None:
    """Body of a forked worker: never returns."""
    code = 0
    try:
        sock.close()
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        for end in wakeup:
            os.close(end)
        die_with_parent()
        from atlas.labs import worker

        try:
            worker.run_page(protocol.read_job(job_fd), fd)
        except BaseException as exc:  # noqa: BLE001 - reported, then the worker exits
            protocol.send(fd, Kind.ERROR, "".join(traceback.format_exception(exc)))
            code = 1
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def serve(sock: socket.socket) -> None:
    """Fork a worker per request until the Sphinx side closes the socket."""
    wakeup = os.pipe()
    os.set_blocking(wakeup[1], False)
    signal.set_wakeup_fd(wakeup[1])
    signal.signal(signal.SIGCHLD, lambda *_: None)
    jobs: dict[int, object] = {}
    become_subreaper()
    protocol.send_packet(sock, Kind.READY, os.getpid())
    try:
        while True:
            readable, _, _ = select.select([sock, wakeup[0]], [], [])
            if wakeup[0] in readable:
                os.read(wakeup[0], 4096)
            while jobs:
                pid, status = os.waitpid(-1, os.WNOHANG)
                if not pid:
                    break
                job_id = jobs.pop(pid, None)
                if job_id is not None:
                    kill_descendants(os.getpid(), spare=frozenset(jobs))  # its orphans
                    how = describe_exit(os.waitstatus_to_exitcode(status))
                    protocol.send_packet(sock, Kind.EXITED, job_id, how)
            if sock not in readable:
                continue
            request = protocol.recv_request(sock)
            if request is None:
                return
            job_id, fds = request
            pid = os.fork()
            if pid == 0:
                _worker(fds[0], fds[1], wakeup, sock)
            for fd in fds:
                os.close(fd)
            jobs[pid] = job_id
            protocol.send_packet(sock, Kind.STARTED, job_id, pid)
    finally:
        for pid in jobs:
            kill(pid)
        kill_descendants(os.getpid())


def main(argv: list[str]) -> int:
    die_with_parent()
    sock = socket.socket(fileno=int(argv[1]))
    try:
        _warm_up()
    except BaseException as exc:  # noqa: BLE001 - the Sphinx side shows it on every lab
        protocol.send_packet(sock, Kind.BROKEN, "".join(traceback.format_exception(exc)))
        return 1
    serve(sock)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
