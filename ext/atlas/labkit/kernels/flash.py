"""A FlashAttention-style forward kernel in Triton.

One program owns ``BLOCK_M`` query rows of one (batch, head). It loads its query tile once,
then streams the keys and values in tiles of ``BLOCK_N`` rows, keeping for each query row a
running maximum ``m``, a running denominator ``l`` and an unnormalised output ``acc`` (the
online softmax). The ``[M, N]`` score matrix never exists in memory; each program writes its
``BLOCK_M`` output rows and their log-sum-exp once. The Attention chapter derives the
algorithm; this module is the kernel.

Shapes: ``q`` is ``[BH, M, D]``, ``k`` and ``v`` are ``[BH, N, D]`` (batch and heads folded
into ``BH``), contiguous in the last dimension. A causal mask is aligned to the bottom right
(query ``i`` sees key ``j`` when ``j <= i + N - M``), as FlashAttention aligns it.
"""

from __future__ import annotations

import math

import torch
import triton
import triton.language as tl

ROLE = "taught"


@triton.jit
def flash_fwd_kernel(
    q_ptr,
    k_ptr,
    v_ptr,
    o_ptr,
    lse_ptr,
    seq_q,
    seq_k,
    scale,
    stride_qb,
    stride_qm,
    stride_kb,
    stride_kn,
    stride_vb,
    stride_vn,
    stride_ob,
    stride_om,
    HEAD_DIM: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    CAUSAL: tl.constexpr,
):
    pid_m = tl.program_id(0)  # which tile of query rows
    bh = tl.program_id(1)  # which (batch, head)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(
        q_ptr + bh * stride_qb + offs_m[:, None] * stride_qm + offs_d[None, :],
        mask=offs_m[:, None] < seq_q,
        other=0.0,
    )  # loaded once, reused for every tile

    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)  # running row maximum
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)  # running denominator
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)  # unnormalised output

    hi = seq_k
    if CAUSAL:  # key tiles right of the diagonal are skipped, not just masked
        hi = tl.minimum(seq_k, (pid_m + 1) * BLOCK_M + seq_k - seq_q)
    for start_n in range(0, hi, BLOCK_N):
        offs_n = start_n + tl.arange(0, BLOCK_N)
        k = tl.load(
            k_ptr + bh * stride_kb + offs_n[None, :] * stride_kn + offs_d[:, None],
            mask=offs_n[None, :] < seq_k,
            other=0.0,
        )  # [HEAD_DIM, BLOCK_N]: K^T
        s = tl.dot(q, k) * scale  # [BLOCK_M, BLOCK_N] scores, in registers only
        valid = offs_n[None, :] < seq_k
        if CAUSAL:
            valid = valid & (offs_n[None, :] <= offs_m[:, None] + seq_k - seq_q)
        s = tl.where(valid, s, float("-inf"))

        m_new = tl.maximum(m_i, tl.max(s, 1))
        m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)  # a row with no key yet
        p = tl.exp(s - m_safe[:, None])
        alpha = tl.exp(m_i - m_safe)  # rescales what was accumulated under the old maximum
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(
            v_ptr + bh * stride_vb + offs_n[:, None] * stride_vn + offs_d[None, :],
            mask=offs_n[:, None] < seq_k,
            other=0.0,
        )  # [BLOCK_N, HEAD_DIM]
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new

    acc = acc / l_i[:, None]
    rows = offs_m < seq_q
    tl.store(
        o_ptr + bh * stride_ob + offs_m[:, None] * stride_om + offs_d[None, :],
        acc.to(o_ptr.dtype.element_ty),
        mask=rows[:, None],
    )
    tl.store(lse_ptr + bh * seq_q + offs_m, m_i + tl.log(l_i), mask=rows)  # for the backward


def flash_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    causal: bool = False,
    block_m: int = 16,
    block_n: int = 16,
):
    """Attention ``softmax(q k^T / sqrt(d)) v`` by ``flash_fwd_kernel``; returns ``(o, lse)``."""
    bh, seq_q, d = q.shape
    seq_k = k.shape[1]
    o = torch.empty_like(q)
    lse = torch.empty((bh, seq_q), dtype=torch.float32)
    grid = (triton.cdiv(seq_q, block_m), bh)
    flash_fwd_kernel[grid](
        q,
        k,
        v,
        o,
        lse,
        seq_q,
        seq_k,
        1.0 / math.sqrt(d),
        q.stride(0),
        q.stride(1),
        k.stride(0),
        k.stride(1),
        v.stride(0),
        v.stride(1),
        o.stride(0),
        o.stride(1),
        HEAD_DIM=d,
        BLOCK_M=block_m,
        BLOCK_N=block_n,
        CAUSAL=causal,
    )
    return o, lse


def attention_hbm_bytes(seq: int, head_dim: int, block_m: int, elem_bytes: int) -> dict:
    """Bytes one (batch, head) moves from and to memory, by the tiled schedule (non-causal).

    Every program reads its query tile once and *all* key and value tiles; it writes its output
    rows and their log-sum-exp (4 bytes each). The naive schedule instead writes the ``seq x
    seq`` scores and reads them back for the softmax, writes the probabilities and reads them
    for the product with ``V``.
    """
    programs = -(-seq // block_m)
    flash = (
        seq * head_dim  # Q, once
        + 2 * programs * seq * head_dim  # K and V, once per query tile
        + seq * head_dim
    ) * elem_bytes + 4 * seq  # O and the log-sum-exp
    naive = (
        3 * seq * head_dim
        + seq * head_dim  # Q, K, V in; O out
        + 4 * seq * seq
    ) * elem_bytes  # S out and in, P out and in
    return {"flash": flash, "naive": naive}
