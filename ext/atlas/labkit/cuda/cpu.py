"""Run a kernel file on the CPU: the same ``.cu`` source, compiled by the host compiler over the
thread model of ``include/atlas_cuda_cpu.h``, launched like ``cuLaunchKernel``.

Why this and not numba-cuda's simulator: the simulator runs Python kernels, so the kernel it
checked would not be the CUDA C the page shows and nvcc compiles. Here the one source file is
both: nvcc compiles it for the SASS and the resource report, g++ compiles it (with the header
forced in first) for the result. Each ``extern "C" __global__`` kernel gets a generated wrapper
that takes the launch geometry and an array of pointers to the arguments.

A launch runs in a forked child, on copies of the tensors in shared memory with guard zones on
both sides: a crash (an index far outside any buffer) is a message, not a dead lab process; a
write into a guard zone (an index just past the end) is reported with the argument's name; a
read from one gets NaN (or a huge integer), which the comparison with torch then catches.
"""

from __future__ import annotations

import ctypes
import os
import re
import select
import signal
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import torch

from atlas.labkit.cuda.nvcc import CompileError, diagnostics, shown_path
from atlas.labkit.cuda.store import cached, digest
from atlas.labkit.cuda.toolchain import toolchain

ROLE = "support"

HEADER = Path(__file__).resolve().parent / "include" / "atlas_cuda_cpu.h"
CXX_FLAGS = ("-std=c++20", "-O2", "-shared", "-fPIC", "-w", "-fdiagnostics-plain-output")
GUARD = 1024  # elements of guard zone on each side of every tensor argument
TIMEOUT_S = 60.0

_KERNEL = re.compile(
    r'extern\s+"C"\s+__global__\s+(?:__launch_bounds__\([^)]*\)\s+)?void\s+(?P<name>\w+)\s*'
    r"\((?P<params>[^)]*)\)",
    re.S,
)
_C_TYPES = {
    "int": ctypes.c_int,
    "unsigned": ctypes.c_uint,
    "unsigned int": ctypes.c_uint,
    "long": ctypes.c_long,
    "long long": ctypes.c_longlong,
    "size_t": ctypes.c_size_t,
    "float": ctypes.c_float,
    "double": ctypes.c_double,
}


class KernelRunError(Exception):
    """A launch on the CPU model failed: a deadlock, a crash, a write out of bounds."""


@dataclass(frozen=True)
class Param:
    type: str  # as written, e.g. "const float* __restrict__"
    name: str

    @property
    def is_pointer(self) -> bool:
        return "*" in self.type


def kernel_signatures(source: str) -> dict[str, list[Param]]:
    """The ``extern "C" __global__`` kernels of a file and their parameters."""
    found: dict[str, list[Param]] = {}
    for m in _KERNEL.finditer(source):
        params = []
        for raw in filter(None, (p.strip() for p in m["params"].split(","))):
            name = re.search(r"(\w+)\s*$", raw)
            if name is None:
                raise ValueError(f"cannot read the parameter {raw!r} of {m['name']}")
            params.append(Param(raw[: name.start()].strip(), name[1]))
        found[m["name"]] = params
    return found


def _wrappers(signatures: dict[str, list[Param]]) -> str:
    out = [
        'extern "C" void atlas_set_order(int reverse) { atlas_cuda::order_ = reverse; }',
        'extern "C" const char* atlas_last_error() { return atlas_cuda::last_error().c_str(); }',
        'extern "C" unsigned long atlas_last_barriers() { return atlas_cuda::last_barriers(); }',
    ]
    for name, params in signatures.items():
        fields = "".join(f"  {p.type} a{i};\n" for i, p in enumerate(params))
        unpack = ", ".join(f"*({p.type}*)args[{i}]" for i, p in enumerate(params))
        call = ", ".join(f"atlas_args_{name}.a{i}" for i in range(len(params)))
        out.append(
            f"struct atlas_args_{name}_t {{\n{fields}}};\n"
            f"static atlas_args_{name}_t atlas_args_{name};\n"
            f"static void atlas_body_{name}() {{ {name}({call}); }}\n"
            f'extern "C" int atlas_launch_{name}(unsigned gx, unsigned gy, unsigned gz, '
            f"unsigned bx, unsigned by, unsigned bz, void** args) {{\n"
            f"  atlas_args_{name} = {{{unpack}}};\n"
            f"  return atlas_cuda::launch(dim3(gx, gy, gz), dim3(bx, by, bz), atlas_body_{name});\n"
            f"}}"
        )
    return "\n".join(out) + "\n"


@dataclass(frozen=True)
class LaunchStats:
    """What the CPU model counted during a launch."""

    blocks: int
    barriers: int  # __syncthreads() barriers completed, over all blocks

    @property
    def barriers_per_block(self) -> float:
        return self.barriers / self.blocks


@dataclass(frozen=True)
class CpuModule:
    """A kernel file built for the CPU model: call :meth:`launch` as one would launch on a GPU."""

    source: Path
    library: Path
    signatures: dict[str, list[Param]]
    seconds: float  # host compile time (0 on a cache hit)

    def launch(
        self,
        kernel: str,
        grid: Sequence[int] | int,
        block: Sequence[int] | int,
        *args: torch.Tensor | int | float,
        reverse: bool = False,
    ) -> LaunchStats:
        """Run ``kernel<<<grid, block>>>(args)``; tensors are updated in place."""
        if kernel not in self.signatures:
            known = ", ".join(self.signatures)
            raise KernelRunError(
                f"{shown_path(self.source)} has no kernel {kernel}; it has {known}"
            )
        params = self.signatures[kernel]
        if len(args) != len(params):
            raise KernelRunError(f"{kernel} takes {len(params)} arguments, got {len(args)}")
        return launch_on_cpu(self, kernel, _dims(grid), _dims(block), params, args, reverse)


def _dims(d: Sequence[int] | int) -> tuple[int, int, int]:
    values = [d] if isinstance(d, int) else list(d)
    return tuple(values + [1] * (3 - len(values)))  # type: ignore[return-value]


# Guard words by element size: a quiet NaN for floating types (a read of it poisons the result)
# with a payload that names the argument, so that a value computed from another argument's guard
# (NaN + NaN keeps the first NaN's payload) still differs from this argument's own pattern.
_BITS = {2: (torch.int16, 0x7E00), 4: (torch.int32, 0x7FC00000), 8: (torch.int64, 0x7FF8 << 48)}


def _pattern(t: torch.Tensor, index: int) -> tuple[torch.dtype, int]:
    view, base = _BITS[t.element_size()]
    if not t.dtype.is_floating_point:  # integers: a huge value, also distinct per argument
        return view, torch.iinfo(view).max - index
    return view, base | (0x11 + index)


def _guarded(t: torch.Tensor, index: int) -> torch.Tensor:
    """A shared-memory copy of ``t`` between two guard zones of argument ``index``'s pattern."""
    n = t.numel()
    buffer = torch.empty(n + 2 * GUARD, dtype=t.dtype).share_memory_()
    view, word = _pattern(t, index)
    buffer.view(view).fill_(word)
    buffer[GUARD : GUARD + n] = t.reshape(-1)
    return buffer


def _guard_damage(buffer: torch.Tensor, n: int, index: int) -> tuple[int, int]:
    """Elements changed (bit for bit) in the zone before and after the data."""
    view, word = _pattern(buffer, index)
    bits = buffer.view(view)
    zones = bits[:GUARD], bits[GUARD + n :]
    return tuple(int((z != word).sum()) for z in zones)  # type: ignore[return-value]


def launch_on_cpu(
    module: CpuModule,
    kernel: str,
    grid: tuple[int, int, int],
    block: tuple[int, int, int],
    params: list[Param],
    args: Sequence[torch.Tensor | int | float],
    reverse: bool,
) -> LaunchStats:
    """Fork, run the launch in the child over guarded copies, and copy the results back."""
    buffers: dict[int, torch.Tensor] = {}
    values: list[ctypes._SimpleCData] = []
    for i, (param, arg) in enumerate(zip(params, args, strict=True)):
        if param.is_pointer:
            if not isinstance(arg, torch.Tensor) or not arg.is_contiguous():
                raise KernelRunError(
                    f"argument {param.name} of {kernel} must be a contiguous tensor"
                )
            buffers[i] = _guarded(arg, i)
            values.append(ctypes.c_void_p(buffers[i][GUARD:].data_ptr()))
        else:
            base = " ".join(w for w in param.type.split() if w != "const")
            if base not in _C_TYPES:
                raise KernelRunError(f"parameter type {param.type!r} of {kernel} is not supported")
            values.append(_C_TYPES[base](arg))
    pointers = (ctypes.c_void_p * max(1, len(values)))(
        *[ctypes.cast(ctypes.pointer(v), ctypes.c_void_p) for v in values]
    )
    library = _load(str(module.library))
    barriers, message = _in_child(library, kernel, grid, block, pointers, reverse)
    where = f"{kernel}<<<{grid[0]}, {block[0]}>>> on the CPU model"
    if message:
        raise KernelRunError(f"{where}: {message}")
    for i, buffer in buffers.items():
        arg = args[i]
        assert isinstance(arg, torch.Tensor)
        before, after = _guard_damage(buffer, arg.numel(), i)
        if before or after:
            side = f"{after} elements past the end" if after else f"{before} before the start"
            raise KernelRunError(
                f"{where}: wrote {side} of argument {params[i].name} (an index out of bounds)"
            )
        arg.copy_(buffer[GUARD : GUARD + arg.numel()].reshape(arg.shape))
    return LaunchStats(grid[0] * grid[1] * grid[2], barriers)


@cache
def _load(path: str) -> ctypes.CDLL:
    return ctypes.CDLL(path)


def _in_child(
    library: ctypes.CDLL, kernel: str, grid, block, pointers, reverse: bool
) -> tuple[int, str]:
    """The barriers counted and the launch's error text ('' on success), from a forked child so
    that a crash is reported rather than suffered."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: launch, report, exit without running the parent's cleanups
        code = 1
        try:
            os.close(read)
            library.atlas_set_order(int(reverse))
            library.atlas_last_error.restype = ctypes.c_char_p
            library.atlas_last_barriers.restype = ctypes.c_ulong
            status = getattr(library, f"atlas_launch_{kernel}")(*grid, *block, pointers)
            text = library.atlas_last_error() if status else b""
            os.write(write, b"%d\n" % library.atlas_last_barriers() + (text or b""))
            code = 0
        finally:
            os._exit(code)
    os.close(write)
    chunks, deadline = [], time.monotonic() + TIMEOUT_S
    while True:
        ready, _, _ = select.select([read], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            os.close(read)
            return (
                0,
                f"did not finish in {TIMEOUT_S:.0f} s (a thread that never reaches its barrier?)",
            )
        chunk = os.read(read, 65536)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(read)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        name = signal.Signals(os.WTERMSIG(status)).name
        return 0, f"crashed with {name} (an access outside every buffer: a wrong index?)"
    count, _, text = b"".join(chunks).decode(errors="replace").partition("\n")
    return int(count or 0), text


def _ours(stderr: str) -> str:
    """g++'s messages without the lines about the generated wrapper that includes the file."""
    return "\n".join(
        line for line in stderr.splitlines()
        if not line.startswith("In file included from") and "launch.cpp" not in line
    )  # fmt: skip


def build_cpu(source: Path) -> CpuModule:
    """``source`` compiled by g++ over the CPU thread model (cached like a cubin)."""
    tools = toolchain()
    source = Path(source)
    text = source.read_text(encoding="utf-8")
    signatures = kernel_signatures(text)
    if not signatures:
        raise CompileError(f'{shown_path(source)} has no extern "C" __global__ kernel')
    command = [str(tools.cxx), *CXX_FLAGS, "-include", str(HEADER), "-x", "c++"]
    key = digest(["cpu", text, HEADER.read_bytes(), *command[1:], tools.cxx_version])
    elapsed = 0.0

    def produce(folder: Path) -> None:
        nonlocal elapsed
        wrapper = folder / "launch.cpp"
        wrapper.write_text(f'#include "{source.resolve()}"\n' + _wrappers(signatures), "utf-8")
        started = time.perf_counter()
        run = subprocess.run(
            [*command, str(wrapper), "-o", str(folder / "kernels.so")],
            capture_output=True,
            text=True,
            env={**os.environ, "LC_ALL": "C"},  # plain ASCII quotes in the messages
        )
        elapsed = time.perf_counter() - started
        if run.returncode != 0:
            raise CompileError(
                f"the host compiler could not build {shown_path(source)} for the CPU model:\n"
                + diagnostics(_ours(run.stderr), source)
            )

    folder, _ = cached(key, produce)
    return CpuModule(source, folder / "kernels.so", signatures, elapsed)
