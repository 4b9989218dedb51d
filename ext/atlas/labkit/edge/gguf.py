"""A reader of a GGUF file's header, metadata and tensor table, as the GGUF specification lays
them out, and the offset where each tensor's bytes begin.

GGUF puts everything a loader must parse before the tensor data: a fixed header (magic,
version, tensor count, metadata count), the typed key-value metadata, then one record per tensor
(name, shape, ggml type, offset). The data section starts at the next multiple of the file's
alignment, and every tensor's offset inside it is a multiple of that alignment too. That is what
lets a runtime map the file into memory and use each tensor in place, without copying it.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

ROLE = "taught"

MAGIC = b"GGUF"
DEFAULT_ALIGNMENT = 32  # when the file has no general.alignment key

# gguf_metadata_value_type: the struct format of each fixed-size value type
_SCALARS = {
    0: "B",
    1: "b",
    2: "H",
    3: "h",
    4: "I",
    5: "i",
    6: "f",
    7: "?",
    10: "Q",
    11: "q",
    12: "d",
}
_STRING, _ARRAY = 8, 9


@dataclass(frozen=True)
class TensorInfo:
    """One record of the tensor table: ``offset`` is relative to the data section."""

    name: str
    shape: tuple[int, ...]  # ggml order: the first dimension is the contiguous one
    ggml_type: int
    offset: int


@dataclass(frozen=True)
class GGUFFile:
    version: int
    metadata: dict[str, object]
    tensors: list[TensorInfo]
    data_start: int  # absolute file offset of the data section
    alignment: int


class _Cursor:
    """Little-endian reads from a buffer, advancing a position."""

    def __init__(self, buf: bytes | memoryview) -> None:
        self.buf, self.pos = buf, 0

    def take(self, fmt: str) -> object:
        (v,) = struct.unpack_from("<" + fmt, self.buf, self.pos)
        self.pos += struct.calcsize("<" + fmt)
        return v

    def string(self) -> str:
        n = self.take("Q")
        s = bytes(self.buf[self.pos : self.pos + n]).decode("utf-8")
        self.pos += n
        return s

    def value(self, vtype: int) -> object:
        if vtype in _SCALARS:
            return self.take(_SCALARS[vtype])
        if vtype == _STRING:
            return self.string()
        if vtype == _ARRAY:
            item_type, n = self.take("I"), self.take("Q")
            return [self.value(item_type) for _ in range(n)]
        raise ValueError(f"unknown GGUF value type {vtype} at byte {self.pos}")


def align_offset(offset: int, alignment: int) -> int:
    """The next multiple of ``alignment`` at or after ``offset`` (the spec's ``align_offset``)."""
    return offset + (alignment - offset % alignment) % alignment


def read_gguf(buf: bytes | memoryview) -> GGUFFile:
    """Parse everything before the tensor data; the data itself is left where it is."""
    c = _Cursor(buf)
    if bytes(buf[:4]) != MAGIC:
        raise ValueError(f"not a GGUF file: magic {bytes(buf[:4])!r}")
    c.pos = 4
    version, n_tensors, n_kv = c.take("I"), c.take("Q"), c.take("Q")
    metadata = {}
    for _ in range(n_kv):
        key = c.string()
        metadata[key] = c.value(c.take("I"))
    tensors = []
    for _ in range(n_tensors):
        name = c.string()
        n_dims = c.take("I")
        shape = tuple(c.take("Q") for _ in range(n_dims))
        tensors.append(TensorInfo(name, shape, c.take("I"), c.take("Q")))
    alignment = int(metadata.get("general.alignment", DEFAULT_ALIGNMENT))
    return GGUFFile(version, metadata, tensors, align_offset(c.pos, alignment), alignment)
