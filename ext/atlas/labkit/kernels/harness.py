"""Harness of the kernels chapter: memory traces, upstream kernels at their pins, references.

* :func:`trace_memory` records every address a Triton kernel loads or stores while Triton's
  interpreter runs it (by wrapping the interpreter's masked load and store), so a lab can count
  the bytes and sectors a kernel really touches and compare them with a formula.
* :func:`load_fla_kernel` reads a ``@triton.jit`` kernel of flash-linear-attention from its git
  objects at the pinned commit and defines it in memory, so a lab can run the upstream's own
  kernel under the interpreter next to ours. Nothing of fla is copied into this repository.
* References and checkers: an occupancy found by placing blocks one at a time, the closed form
  of a two-engine pipeline, the distributed ring GEMMs against dense ones.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np
import torch
import triton
import triton.language as tl
from triton.runtime import interpreter as _interp

from atlas.labkit.pinned import definitions, keeping

FLA = "fla"


# --------------------------------------------------------------------------- memory traces


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
        return [a for a in self.accesses if (kind is None or a.kind == kind)
                and (program is None or a.program == tuple(program))]


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
        trace.accesses.append(Access(kind, tuple(int(i) for i in self.grid_idx),
                                     addresses[keep].ravel(), elem_bytes))

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


# ------------------------------------------------------------------------- fla at its pin




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


def fla_parallel_attention(q, k, v, block_t: int = 32, block_s: int = 16):
    """fla's ``parallel_attn_fwd_kernel`` at the pin, launched as ``parallel_attn_fwd`` does.

    ``q``, ``k``, ``v`` are ``[B, T, H, D]``; attention is causal (fla's kernel always is).
    Returns ``(o, lse)`` with ``lse`` in base 2, as fla stores it.
    """
    kernel = load_fla_kernel("fla/ops/attn/parallel.py", "parallel_attn_fwd_kernel",
                             keep_decorators=("jit", "heuristics"))
    B, T, H, K = k.shape
    HQ, V = q.shape[2], v.shape[-1]
    o = torch.empty(B, T, HQ, V, dtype=v.dtype)
    lse = torch.empty(B, T, HQ, dtype=torch.float32)
    BK = BV = max(16, triton.next_power_of_2(K))
    grid = (triton.cdiv(V, BV), triton.cdiv(T, block_t), B * HQ)
    kernel[grid](q=q, k=k, v=v, o=o, g_cumsum=None, sink_bias=None, lse=lse,
                 scale=K ** -0.5, cu_seqlens=None, chunk_indices=None, T=T, W=None, B=B,
                 H=H, HQ=HQ, G=HQ // H, K=K, V=V, BT=block_t, BS=block_s, BK=BK, BV=BV)
    return o, lse


def fla_layer_norm(x, weight, bias, eps: float = 1e-5):
    """fla's ``layer_norm_fwd_kernel1`` at the pin (one program per row), without autotune."""
    kernel = load_fla_kernel("fla/modules/layernorm.py", "layer_norm_fwd_kernel1")
    rows, D = x.shape
    y = torch.empty_like(x)
    mean = torch.empty(rows, dtype=torch.float32)
    rstd = torch.empty(rows, dtype=torch.float32)
    kernel[(rows,)](x, y, weight, bias, None, None, mean, rstd, eps, G=1, D=D,
                    BD=triton.next_power_of_2(D), IS_RMS_NORM=False, HAS_RESIDUAL=False,
                    STORE_RESIDUAL_OUT=False, HAS_WEIGHT=True, HAS_BIAS=True)
    return y, mean, rstd


# ------------------------------------------------------------------- checks and references


def first_warp_addresses(trace: Trace, program=(0, 0, 0), load_index: int = 0) -> list[int]:
    """Byte addresses of the ``load_index``-th load of ``program``, relative to the first."""
    a = trace.loads(program)[load_index].addresses
    return [int(x - a.min()) for x in a]


def occupancy_by_placement(threads: int, regs: int, smem: int, sm) -> int:
    """Blocks resident on one SM, found by admitting blocks one at a time until one does not fit.

    Written independently of :func:`gpu_model.occupancy`: it tracks free warp slots, free
    registers (handed out warp by warp) and free shared memory, and stops at the first block
    some resource cannot hold.
    """
    free_warps, free_regs, free_smem, blocks = sm.max_warps_per_sm, sm.registers_per_sm, \
        sm.smem_per_sm, 0
    unit, warp = sm.register_alloc_unit, sm.warp_size
    warps_needed = (threads + warp - 1) // warp
    per_warp = ((regs * warp + unit - 1) // unit) * unit
    smem_block = smem + sm.smem_reserved_per_block
    smem_block = ((smem_block + sm.smem_alloc_unit - 1) // sm.smem_alloc_unit) * sm.smem_alloc_unit
    while blocks < sm.max_blocks_per_sm:
        if free_warps < warps_needed or free_smem < smem_block:
            break
        granted = 0
        for _ in range(warps_needed):
            if free_regs >= per_warp:
                free_regs -= per_warp
                granted += 1
        if granted < warps_needed:
            break
        free_warps -= warps_needed
        free_smem -= smem_block
        blocks += 1
    return blocks


def pipeline_formula(n: int, comm: float, compute: float) -> float:
    """Makespan of ``n`` equal chunks on two engines: fill, ``n - 1`` steady steps, drain."""
    return comm + (n - 1) * max(comm, compute) + compute


def ring_gemms_match(world: int = 4, rows: int = 6, k: int = 8, n: int = 5, seed: int = 0):
    """Run ``ag_matmul`` and ``matmul_rs`` on ``world`` gloo ranks and compare with dense GEMMs.

    Returns ``(all_gather_ok, reduce_scatter_ok)``: each rank's result against the same product
    computed on one process from the full tensors.
    """
    from atlas.labkit import run_ranks
    from atlas.labkit.kernels.overlap import ag_matmul, matmul_rs

    g = torch.Generator().manual_seed(seed)
    x = torch.randn(world * rows, k * world, generator=g, dtype=torch.float64)
    w = torch.randn(k * world, n, generator=g, dtype=torch.float64)

    def body(rank, size):
        ag = ag_matmul(x[rank * rows:(rank + 1) * rows], w)
        rs = matmul_rs(x[:, rank * k:(rank + 1) * k], w[rank * k:(rank + 1) * k])
        return ag, rs

    results = run_ranks(body, world)
    dense = x @ w
    ag_ok = all(torch.allclose(ag, dense) for ag, _ in results)
    rs_ok = all(torch.allclose(rs, dense[r * rows:(r + 1) * rows])
                for r, (_, rs) in enumerate(results))
    return ag_ok, rs_ok
