"""The zygote: a process that imports torch once, then forks one worker per page on request.

Run as ``python -m atlas.labs.zygote FD`` by :mod:`atlas.labs.runner`, FD being its end of a
``SOCK_SEQPACKET`` socket pair. A request carries, as ancillary data, two descriptors: a file
holding the pickled job (no size limit) and the write end of the pipe on which the worker sends
its events straight to Sphinx. The zygote answers
``("started", job, pid)`` and, when the worker is reaped, ``("exited", job, how)``. It dies with
its parent, and its workers die with it, so nothing outlives the build.
"""

from __future__ import annotations

import os
import pickle
import select
import signal
import socket
import sys
import traceback

from atlas.processes import describe_exit, die_with_parent, kill

MAX_REQUEST = 4096


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
        from atlas.labs import protocol, worker

        try:
            with os.fdopen(job_fd, "rb") as job_file:
                job_file.seek(0)
                job = pickle.load(job_file)
            worker.run_page(job, fd)
        except BaseException as exc:  # noqa: BLE001 - reported, then the worker exits
            protocol.send(fd, ("error", "".join(traceback.format_exception(exc))))
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
    sock.send(pickle.dumps(("ready", os.getpid())))
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
                    how = describe_exit(os.waitstatus_to_exitcode(status))
                    sock.send(pickle.dumps(("exited", job_id, how)))
            if sock not in readable:
                continue
            try:
                message, fds, _, _ = socket.recv_fds(sock, MAX_REQUEST, 2)
            except ConnectionError:
                return
            if not message:
                return
            _, job_id = pickle.loads(message)
            pid = os.fork()
            if pid == 0:
                _worker(fds[0], fds[1], wakeup, sock)
            for fd in fds:
                os.close(fd)
            jobs[pid] = job_id
            sock.send(pickle.dumps(("started", job_id, pid)))
    finally:
        for pid in jobs:
            kill(pid)


def main(argv: list[str]) -> int:
    die_with_parent()
    sock = socket.socket(fileno=int(argv[1]))
    try:
        _warm_up()
    except BaseException as exc:  # noqa: BLE001 - the Sphinx side shows it on every lab
        sock.send(pickle.dumps(("broken", "".join(traceback.format_exception(exc)))))
        return 1
    serve(sock)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
