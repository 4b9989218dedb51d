"""Length-prefixed pickled messages over a file descriptor (worker -> Sphinx events).

Only builtins travel, so the Sphinx side can unpickle without importing torch.
"""

from __future__ import annotations

import os
import pickle
import struct
from typing import Any

_LENGTH = struct.Struct("!I")


def send(fd: int, message: Any) -> None:
    """Write one message; blocks until it is all in the pipe."""
    payload = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    view = memoryview(_LENGTH.pack(len(payload)) + payload)
    while view:
        view = view[os.write(fd, view) :]


class Reader:
    """Reassembles messages from the chunks a non-blocking read returns."""

    def __init__(self) -> None:
        self._buffer = bytearray()

    def feed(self, chunk: bytes) -> list[Any]:
        self._buffer += chunk
        messages = []
        while len(self._buffer) >= _LENGTH.size:
            (length,) = _LENGTH.unpack_from(self._buffer)
            if len(self._buffer) < _LENGTH.size + length:
                break
            start = _LENGTH.size
            messages.append(pickle.loads(bytes(self._buffer[start : start + length])))
            del self._buffer[: start + length]
        return messages
