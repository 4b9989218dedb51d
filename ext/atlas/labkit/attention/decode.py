"""Variable-length batches, split-KV decoding and its merge, and decode's arithmetic intensity.

Tensors follow FlashAttention's varlen layout: a batch of sequences is packed along one token
axis, ``[total_tokens, heads, head_dim]``, and ``cu_seqlens`` (length ``batch + 1``) holds where
each sequence starts. Query head ``h`` reads key/value head ``h // (heads // kv_heads)``.
"""

from __future__ import annotations

import math

import torch

from atlas.labkit.attention.flash import tiled_attention

ROLE = "taught"


def cu_seqlens(lengths: list[int]) -> torch.Tensor:
    """Prefix sums ``[0, l0, l0+l1, ...]`` of the sequence lengths."""
    return torch.tensor([0, *torch.tensor(lengths).cumsum(0).tolist()], dtype=torch.int32)


def varlen_attention(q, k, v, cu_q, cu_k, causal=True, block_m=64, block_n=64):
    """Attention over a packed batch: each sequence is the slice its offsets name.

    Nothing is padded: sequence ``b`` owns rows ``cu_q[b]:cu_q[b+1]`` of ``q`` and
    ``cu_k[b]:cu_k[b+1]`` of ``k`` and ``v``, and attends only inside them.
    """
    heads, kv_heads = q.shape[1], k.shape[1]
    group = heads // kv_heads
    o = torch.empty(*q.shape[:2], v.shape[-1], dtype=q.dtype)
    for b in range(len(cu_q) - 1):
        qs, qe, ks, ke = int(cu_q[b]), int(cu_q[b + 1]), int(cu_k[b]), int(cu_k[b + 1])
        qb = q[qs:qe].transpose(0, 1)  # [heads, len_q, d]
        kb = k[ks:ke].transpose(0, 1).repeat_interleave(group, dim=0)
        vb = v[ks:ke].transpose(0, 1).repeat_interleave(group, dim=0)
        ob, _ = tiled_attention(qb, kb, vb, block_m, block_n, causal=causal)
        o[qs:qe] = ob.transpose(0, 1)
    return o


def decode_step(q, k, v, pack_gqa, block_m=64, block_n=64, hbm=None):
    """One decode step of one sequence: ``q`` is ``[H, d]`` (one token), ``k`` and ``v`` are
    ``[H_kv, N, d]``. Without packing, each query head is a one-row problem of its own and
    reads its key/value head; with packing (FlashAttention's ``PackGQA``, or FlashAttention-2's
    swap of the group into the sequence axis), the ``G = H / H_kv`` query heads of a group are
    the rows of one tile and read their key/value head once."""
    heads, kv_heads, d = q.shape[0], k.shape[0], q.shape[-1]
    group = heads // kv_heads
    if pack_gqa:
        o, _ = tiled_attention(q.view(kv_heads, group, d), k, v, block_m, block_n, hbm=hbm)
        return o.reshape(heads, -1)
    kk, vv = k.repeat_interleave(group, dim=0), v.repeat_interleave(group, dim=0)
    o, _ = tiled_attention(q[:, None, :], kk, vv, block_m, block_n, hbm=hbm)
    return o[:, 0]


def split_kv(q, k, v, num_splits, block_n=64, scale=None):
    """Flash-decoding: cut the keys into ``num_splits`` ranges of whole ``block_n`` tiles and
    attend to each range separately. Returns one ``(o_i, lse_i)`` per range (a range that
    received no tile returns zeros and ``lse = -inf``)."""
    n_blocks = math.ceil(k.shape[-2] / block_n)
    per_split = math.ceil(n_blocks / num_splits)
    parts = []
    for s in range(num_splits):
        lo, hi = s * per_split * block_n, min((s + 1) * per_split * block_n, k.shape[-2])
        if lo >= hi:
            o = q.new_zeros(*q.shape[:-1], v.shape[-1])
            parts.append((o, q.new_full(q.shape[:-1], float("-inf"))))
            continue
        parts.append(
            tiled_attention(q, k[..., lo:hi, :], v[..., lo:hi, :], 64, block_n, scale=scale)
        )
    return parts


def merge_partials(parts):
    """Combine partial results: ``lse = log sum_i exp(lse_i)``, ``o = sum_i exp(lse_i - lse) o_i``.

    Each ``o_i`` is already normalised over its own keys; its weight is the share of the
    total softmax mass its keys hold.
    """
    lses = torch.stack([lse for _, lse in parts])
    outs = torch.stack([o for o, _ in parts])
    lse_max = lses.amax(dim=0)
    lse_max = torch.where(lse_max == float("-inf"), 0.0, lse_max)
    weights = torch.exp(lses - lse_max)
    total = weights.sum(dim=0)
    lse = lse_max + torch.log(total)
    o = (weights[..., None] * outs).sum(dim=0) / total[..., None]
    return o, lse


def num_splits_heuristic(batch_nheads_mblocks, num_sms, num_n_blocks, max_splits=128):
    """How many splits FlashAttention-2 picks (a port of its ``num_splits_heuristic``).

    With ``b * h * m_blocks`` thread blocks on ``num_sms`` slots, ``s`` splits give waves of
    efficiency ``w / ceil(w)``, ``w = b * h * m_blocks * s / num_sms``; the answer is the smallest
    eligible ``s`` within 85% of the best. A split count is eligible if it changes the number of
    blocks per split.
    """
    if batch_nheads_mblocks >= 0.8 * num_sms:
        return 1
    max_splits = min(max_splits, num_sms, num_n_blocks)

    def eligible(s):
        return s == 1 or math.ceil(num_n_blocks / s) != math.ceil(num_n_blocks / (s - 1))

    eff = {}
    for s in range(1, max_splits + 1):
        if eligible(s):
            waves = batch_nheads_mblocks * s / num_sms
            eff[s] = waves / math.ceil(waves)
    best = max(eff.values())
    return min(s for s, e in eff.items() if e >= 0.85 * best)


def decode_intensity(q_heads, kv_heads, head_dim, value_dim, elem_bytes, q_tokens=1):
    """FLOPs per byte of one decode step's attention over a cached context of any length.

    Per cached token: ``2 * q_tokens * q_heads * (head_dim + value_dim)`` FLOPs, against
    ``kv_heads * (head_dim + value_dim) * elem_bytes`` bytes of K and V read. The batch size
    and the context length cancel: every sequence reads its own cache.
    """
    flops = 2 * q_tokens * q_heads * (head_dim + value_dim)
    return flops / (kv_heads * (head_dim + value_dim) * elem_bytes)
