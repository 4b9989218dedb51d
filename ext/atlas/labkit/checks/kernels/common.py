"""Checking code that several pages of the kernels chapter share:
``kernels/attention-kernel.md``, ``kernels/gemm.md``, ``kernels/index.md``,
``kernels/triton-basics.md``.

The chapter's checks: memory traces, upstream kernels at their pins, references.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np
import triton
import triton.language as tl
from triton.runtime import interpreter as _interp

from atlas.labkit.pinned import definitions, keeping

ROLE = "check"


FLA = "fla"


@dataclass
class Access:
    kind: str  # "load" or "store"
    program: tuple[int, int, int]
    addresses: np.ndarray  # byte addresses of the elements the mask let through, block order
    elem_bytes: int


@dataclass
class Trace:
    accesses: list[Access] = field(default_factory=list)

    def bytes(self, kind: str | None = None, program: tuple | None = None) -> int:
        return sum(a.addresses.size * a.elem_bytes for a in self._select(kind, program))

    def loads(self, program: tuple | None = None) -> list[Access]:
        return self._select("load", program)

    def _select(self, kind, program) -> list[Access]:
        return [
            a
            for a in self.accesses
            if (kind is None or a.kind == kind) and (program is None or a.program == tuple(program))
        ]


@contextmanager
def trace_memory():
    """Record the loads and stores of every Triton kernel the interpreter runs in the block."""
    trace = Trace()
    builder = _interp.InterpreterBuilder
    load, store = builder.create_masked_load, builder.create_masked_store

    def record(kind, self, ptrs, mask):
        addresses = np.asarray(ptrs.data).astype(np.int64)
        keep = np.broadcast_to(np.asarray(mask.data, dtype=bool), addresses.shape)
        elem_bytes = ptrs.get_element_ty().primitive_bitwidth // 8
        trace.accesses.append(
            Access(kind, tuple(int(i) for i in self.grid_idx), addresses[keep].ravel(), elem_bytes)
        )

    def traced_load(self, ptrs, mask, other, *args):
        record("load", self, ptrs, mask)
        return load(self, ptrs, mask, other, *args)

    def traced_store(self, ptrs, value, mask, *args):
        record("store", self, ptrs, mask)
        return store(self, ptrs, value, mask, *args)

    builder.create_masked_load, builder.create_masked_store = traced_load, traced_store
    try:
        yield trace
    finally:
        builder.create_masked_load, builder.create_masked_store = load, store


@triton.jit
def _exp2(x):  # fla/ops/utils/op.py's default exp2 (FLA_USE_FAST_OPS unset)
    return tl.math.exp2(x.to(tl.float32))


@triton.jit
def _log2(x):  # fla/ops/utils/op.py's default log2
    return tl.log2(x.to(tl.float32))


def load_fla_kernel(path: str, name: str, keep_decorators: tuple[str, ...] = ("jit",)):
    """fla's kernel ``name`` from ``path`` at the pin, defined in memory with its own lines.

    Decorators other than those named in ``keep_decorators`` (``autotune``, which would time
    configurations) are left out; the kernel's source stays at its real line numbers under the
    file name ``fla@<pin>/<path>``, where Triton and tracebacks find it.
    """
    namespace = {"triton": triton, "tl": tl, "exp2": _exp2, "log2": _log2}
    found = definitions(FLA, path, (name,), namespace, decorators=keeping(*keep_decorators))
    return found[name]
