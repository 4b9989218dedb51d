"""Checking code of ``edge/gguf.md``: a GGUF file written and read back by gguf-py.

gguf-py's ``GGUFWriter`` lays out the header, metadata, tensor table, padding and data as
llama.cpp's converters do, and its ``GGUFReader`` parses them with its own code; the page's
reader must find the same tensors at the same offsets.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

ROLE = "check"


def write_gguf(
    path: Path | str, tensors: dict[str, tuple[np.ndarray, str]], metadata: dict[str, int]
) -> None:
    """Write ``tensors`` (name: (array or block bytes, ggml type name)) and uint32 metadata."""
    from gguf import GGMLQuantizationType, GGUFWriter

    w = GGUFWriter(str(path), arch="llama")
    for key, value in metadata.items():
        w.add_uint32(key, value)
    for name, (data, type_name) in tensors.items():
        if type_name == "F32":
            w.add_tensor(name, data)
        else:
            w.add_tensor(name, data, raw_dtype=GGMLQuantizationType[type_name])
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def gguf_py_table(path: Path | str) -> list[tuple[str, tuple[int, ...], int, int, int]]:
    """gguf-py's reading of the tensor table: name, shape, type, absolute offset, bytes."""
    from gguf import GGUFReader

    r = GGUFReader(str(path))
    return [
        (
            t.name,
            tuple(int(s) for s in t.shape),
            int(t.tensor_type),
            int(t.data_offset),
            int(t.n_bytes),
        )
        for t in r.tensors
    ]
