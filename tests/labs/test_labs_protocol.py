"""The lab protocol on its own: kinds, the two framings, the job file (no zygote, no torch)."""

from __future__ import annotations

import os
import pickle
import socket
import tempfile

import pytest
from atlas.labs import protocol
from atlas.labs.protocol import Kind


def test_only_builtins_travel_and_the_kind_comes_back_as_a_kind() -> None:
    data = protocol.encode(Kind.RESULT, 2, {"status": "passed"})
    assert pickle.loads(data) == ("result", 2, {"status": "passed"})
    assert b"atlas" not in data  # unpickled by Sphinx with nothing of ours imported
    kind, *values = protocol.decode(data)
    assert kind is Kind.RESULT and values == [2, {"status": "passed"}]
    with pytest.raises(ValueError):
        protocol.decode(pickle.dumps(("exploded",)))


def test_pipe_messages_are_reassembled_from_any_chunking() -> None:
    read_fd, write_fd = os.pipe()
    try:
        protocol.send(write_fd, Kind.HELLO, "torch 2 · CPU")
        protocol.send(write_fd, Kind.EXAMPLE, 0, 3)
        protocol.send(write_fd, Kind.DONE)
        data = os.read(read_fd, 1 << 16)
    finally:
        os.close(read_fd)
        os.close(write_fd)
    reader = protocol.Reader()
    got = [message for byte in range(len(data)) for message in reader.feed(data[byte : byte + 1])]
    assert got == [(Kind.HELLO, "torch 2 · CPU"), (Kind.EXAMPLE, 0, 3), (Kind.DONE,)]
    assert protocol.Reader().feed(data[:-1]) == [
        (Kind.HELLO, "torch 2 · CPU"),
        (Kind.EXAMPLE, 0, 3),
    ]


def test_packets_and_a_request_with_its_descriptors() -> None:
    sphinx, zygote = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    read_fd, write_fd = os.pipe()
    try:
        protocol.send_packet(zygote, Kind.STARTED, 7, 1234)
        assert protocol.recv_packet(sphinx) == (Kind.STARTED, 7, 1234)
        with tempfile.TemporaryFile() as job_file:
            protocol.write_job(job_file, {"docname": "p", "labs": []})
            protocol.send_request(sphinx, 7, job_file.fileno(), write_fd)
            request = protocol.recv_request(zygote)
        assert request is not None
        job_id, (job_fd, events_fd) = request
        assert job_id == 7
        assert protocol.read_job(job_fd) == {"docname": "p", "labs": []}  # closes job_fd
        os.write(events_fd, b"x")  # the worker's end of the same pipe
        os.close(events_fd)
        assert os.read(read_fd, 1) == b"x"
        sphinx.close()
        assert protocol.recv_request(zygote) is None  # Sphinx has gone
        assert protocol.recv_packet(zygote) is None
    finally:
        for end in (sphinx, zygote):
            end.close()
        os.close(read_fd)
        os.close(write_fd)
