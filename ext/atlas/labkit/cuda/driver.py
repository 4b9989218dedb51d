"""Launch a cubin of ours on a GPU through the CUDA driver API, for the ``:needs: cuda`` labs.

The cubin the build compiled (and whose SASS the page reads) is the code that runs: it is loaded
with ``cuModuleLoadData`` into the context torch already made current, and launched with
``cuLaunchKernel`` on torch's current stream, so torch's events time it and torch's tensors are
its arguments. Only the driver (``libcuda.so.1``, part of any GPU machine) is needed; no toolkit.
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import torch

ROLE = "support"


class DriverError(RuntimeError):
    """A driver call failed; the message is the driver's own name for the error."""


@cache
def _libcuda() -> ctypes.CDLL:
    lib = ctypes.CDLL("libcuda.so.1")
    _check(lib, lib.cuInit(0), "cuInit")
    return lib


def _check(lib: ctypes.CDLL, status: int, call: str) -> None:
    if status != 0:
        text = ctypes.c_char_p()
        lib.cuGetErrorString(status, ctypes.byref(text))
        raise DriverError(f"{call} failed: {(text.value or b'').decode()} ({status})")


def arch_of_device(device: int = 0) -> str:
    """``sm_90`` for an H100 or H200: the cubin to load must be compiled for it."""
    major, minor = torch.cuda.get_device_capability(device)
    return f"sm_{major}{minor}"


@dataclass(frozen=True)
class GpuModule:
    """A loaded cubin; :meth:`launch` runs one of its kernels on torch's current stream."""

    handle: ctypes.c_void_p

    def launch(
        self,
        kernel: str,
        grid: int | Sequence[int],
        block: int | Sequence[int],
        *args: torch.Tensor | int | float,
    ) -> None:
        lib = _libcuda()
        function = ctypes.c_void_p()
        _check(lib, lib.cuModuleGetFunction(ctypes.byref(function), self.handle, kernel.encode()),
               f"cuModuleGetFunction({kernel})")  # fmt: skip
        values: list[ctypes._SimpleCData] = []
        for arg in args:
            if isinstance(arg, torch.Tensor):
                values.append(ctypes.c_void_p(arg.data_ptr()))
            elif isinstance(arg, float):
                values.append(ctypes.c_float(arg))
            else:
                values.append(ctypes.c_int(arg))
        params = (ctypes.c_void_p * len(values))(
            *[ctypes.cast(ctypes.pointer(v), ctypes.c_void_p) for v in values]
        )
        g = [grid] if isinstance(grid, int) else list(grid)
        b = [block] if isinstance(block, int) else list(block)
        g, b = g + [1] * (3 - len(g)), b + [1] * (3 - len(b))
        stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
        _check(lib, lib.cuLaunchKernel(function, *map(ctypes.c_uint, g), *map(ctypes.c_uint, b),
                                       ctypes.c_uint(0), stream, params, None),
               f"cuLaunchKernel({kernel})")  # fmt: skip


def load_cubin(path: Path) -> GpuModule:
    """Load ``path`` into torch's current CUDA context."""
    torch.cuda.init()
    torch.empty(1, device="cuda")  # make torch's (primary) context current on this thread
    lib = _libcuda()
    handle = ctypes.c_void_p()
    image = Path(path).read_bytes()
    _check(lib, lib.cuModuleLoadData(ctypes.byref(handle), image), f"cuModuleLoadData({path})")
    return GpuModule(handle)
