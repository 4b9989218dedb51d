"""Checks of the labs of ``kernels/attention-kernel.md``.

The chapter's checks: memory traces, upstream kernels at their pins, references.
"""

from __future__ import annotations

import torch
import triton

from atlas.labkit.checks.kernels.common import load_fla_kernel

ROLE = "check"


def fla_parallel_attention(q, k, v, block_t: int = 32, block_s: int = 16):
    """fla's ``parallel_attn_fwd_kernel`` at the pin, launched as ``parallel_attn_fwd`` does.

    ``q``, ``k``, ``v`` are ``[B, T, H, D]``; attention is causal (fla's kernel always is).
    Returns ``(o, lse)`` with ``lse`` in base 2, as fla stores it.
    """
    kernel = load_fla_kernel(
        "fla/ops/attn/parallel.py",
        "parallel_attn_fwd_kernel",
        keep_decorators=("jit", "heuristics"),
    )
    B, T, H, K = k.shape
    HQ, V = q.shape[2], v.shape[-1]
    o = torch.empty(B, T, HQ, V, dtype=v.dtype)
    lse = torch.empty(B, T, HQ, dtype=torch.float32)
    BK = BV = max(16, triton.next_power_of_2(K))
    grid = (triton.cdiv(V, BV), triton.cdiv(T, block_t), B * HQ)
    kernel[grid](
        q=q,
        k=k,
        v=v,
        o=o,
        g_cumsum=None,
        sink_bias=None,
        lse=lse,
        scale=K**-0.5,
        cu_seqlens=None,
        chunk_indices=None,
        T=T,
        W=None,
        B=B,
        H=H,
        HQ=HQ,
        G=HQ // H,
        K=K,
        V=V,
        BT=block_t,
        BS=block_s,
        BK=BK,
        BV=BV,
    )
    return o, lse
