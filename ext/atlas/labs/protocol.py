"""What the three processes of a lab run say to each other, and how it is framed; once, here.

Sphinx (:mod:`atlas.labs.runner`), the zygote (:mod:`atlas.labs.zygote`) and each worker
(:mod:`atlas.labs.worker`) exchange messages ``(kind, *values)``; :class:`Kind` lists every
kind with its values. Two channels, two framings:

- Sphinx and the zygote share a ``SOCK_SEQPACKET`` socket: the kernel keeps message boundaries,
  so a message is one packet (:func:`send_packet`, :func:`recv_packet`). A request to run a job
  carries, as ancillary data, a file holding the pickled job (no size limit: :func:`write_job`,
  :func:`read_job`) and the write end of the worker's event pipe (:func:`send_request`,
  :func:`recv_request`).
- A worker writes its events to that pipe, a byte stream: each message is length-prefixed
  (:func:`send`), and :class:`Reader` reassembles them from the chunks a non-blocking read
  returns.

Only builtins travel (the kind as its plain text), so the Sphinx side can unpickle without
importing torch.
"""

from __future__ import annotations

import os
import pickle
import socket
import struct
from enum import StrEnum
from typing import IO, Any

_LENGTH = struct.Struct("!I")
MAX_PACKET = 1 << 20  # bytes of one zygote -> Sphinx message
MAX_REQUEST = 4096  # bytes of one Sphinx -> zygote request (its descriptors travel aside)


class Kind(StrEnum):
    """The kind of a message, first in its tuple; the values that follow are in comments."""

    # the zygote -> Sphinx, once: it has imported torch, or it could not
    READY = "ready"  # pid
    BROKEN = "broken"  # what went wrong (a traceback; "" when the zygote just died)
    # Sphinx -> the zygote: fork a worker for this job (the descriptors travel aside)
    RUN = "run"  # job id
    # the zygote -> Sphinx, per job
    STARTED = "started"  # job id, the worker's pid
    EXITED = "exited"  # job id, how the worker ended, in words
    # a worker -> Sphinx, on the job's event pipe
    HELLO = "hello"  # the environment line (torch version, device)
    LAB = "lab"  # index of the lab starting
    EXAMPLE = "example"  # index of the lab, index of the example starting
    RESULT = "result"  # index of the lab, its LabResult as JSON data
    DONE = "done"  # (nothing: every lab of the page has a result)
    ERROR = "error"  # the traceback that ended the worker


Message = tuple[Any, ...]  # (Kind, *values)


def encode(kind: Kind, *values: Any) -> bytes:
    return pickle.dumps((kind.value, *values), protocol=pickle.HIGHEST_PROTOCOL)


def decode(data: bytes) -> Message:
    """The message with its kind as a :class:`Kind` (an unknown kind raises ``ValueError``)."""
    kind, *values = pickle.loads(data)
    return (Kind(kind), *values)


# -- a worker's event pipe: length-prefixed messages --------------------------------------------
def send(fd: int, kind: Kind, *values: Any) -> None:
    """Write one message; blocks until it is all in the pipe."""
    payload = encode(kind, *values)
    view = memoryview(_LENGTH.pack(len(payload)) + payload)
    while view:
        view = view[os.write(fd, view) :]


class Reader:
    """Reassembles messages from the chunks a non-blocking read returns."""

    def __init__(self) -> None:
        self._buffer = bytearray()

    def feed(self, chunk: bytes) -> list[Message]:
        self._buffer += chunk
        messages = []
        while len(self._buffer) >= _LENGTH.size:
            (length,) = _LENGTH.unpack_from(self._buffer)
            if len(self._buffer) < _LENGTH.size + length:
                break
            start = _LENGTH.size
            messages.append(decode(bytes(self._buffer[start : start + length])))
            del self._buffer[: start + length]
        return messages


# -- the zygote's socket: one message per packet ------------------------------------------------
def send_packet(sock: socket.socket, kind: Kind, *values: Any) -> None:
    sock.send(encode(kind, *values))


def recv_packet(sock: socket.socket) -> Message | None:
    """The next message; None when the other end has closed (or died)."""
    data = sock.recv(MAX_PACKET)
    return decode(data) if data else None


def send_request(sock: socket.socket, job_id: int, job_fd: int, events_fd: int) -> None:
    """Ask the zygote to run job ``job_id``: the job's file and the event pipe travel along."""
    socket.send_fds(sock, [encode(Kind.RUN, job_id)], [job_fd, events_fd])


def recv_request(sock: socket.socket) -> tuple[int, list[int]] | None:
    """The job id and its two descriptors (job file, event pipe); None once Sphinx has gone."""
    try:
        data, fds, _, _ = socket.recv_fds(sock, MAX_REQUEST, 2)
    except ConnectionError:
        return None
    if not data:
        return None
    _, job_id = decode(data)
    return job_id, fds


# -- the job itself, in a file: no size limit ---------------------------------------------------
def write_job(file: IO[bytes], payload: dict[str, Any]) -> None:
    pickle.dump(payload, file, protocol=pickle.HIGHEST_PROTOCOL)
    file.flush()


def read_job(fd: int) -> dict[str, Any]:
    """The job written by :func:`write_job`, read from its start (closes ``fd``)."""
    with os.fdopen(fd, "rb") as file:
        file.seek(0)
        job: dict[str, Any] = pickle.load(file)
    return job
