"""Attention over a paged KV cache, walked block by block through a block table.

The cache is one pool of fixed-size blocks, ``[num_blocks, block_size, kv_heads, head_dim]``
for K and the same for V. A sequence owns a list of block ids (its block table); token ``p``
of the sequence lives in block ``table[p // block_size]`` at offset ``p % block_size``, i.e.
in flat slot ``table[p // block_size] * block_size + p % block_size``. Attention never needs
the sequence's keys contiguous: it visits the blocks in table order and merges partial
softmax results (running maximum, running sum), which is what paged kernels do.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

ROLE = "taught"


@dataclass
class PagedKVCache:
    """One layer's K and V block pools."""

    k: torch.Tensor  # [num_blocks, block_size, kv_heads, head_dim]
    v: torch.Tensor

    @classmethod
    def empty(
        cls,
        num_blocks: int,
        block_size: int,
        kv_heads: int,
        head_dim: int,
        dtype: torch.dtype = torch.float64,
    ) -> PagedKVCache:
        shape = (num_blocks, block_size, kv_heads, head_dim)
        return cls(torch.zeros(shape, dtype=dtype), torch.zeros(shape, dtype=dtype))

    @property
    def block_size(self) -> int:
        return self.k.shape[1]


def slot_mapping(block_table: list[int], start: int, end: int, block_size: int) -> torch.Tensor:
    """Flat cache slots of token positions ``start..end-1`` of one sequence."""
    if end > len(block_table) * block_size:
        raise ValueError(f"positions up to {end} need more than {len(block_table)} blocks")
    slots = [block_table[p // block_size] * block_size + p % block_size for p in range(start, end)]
    return torch.tensor(slots, dtype=torch.long)


def store_kv(cache: PagedKVCache, slots: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> None:
    """Write new tokens' K and V (``[tokens, kv_heads, head_dim]``) into their slots."""
    flat_k = cache.k.view(-1, *cache.k.shape[2:])
    flat_v = cache.v.view(-1, *cache.v.shape[2:])
    flat_k[slots] = k
    flat_v[slots] = v


def paged_attention(
    q: torch.Tensor,
    q_positions: torch.Tensor,
    cache: PagedKVCache,
    block_table: list[int],
    context_len: int,
    scale: float | None = None,
) -> torch.Tensor:
    """Causal attention of one sequence's queries over its paged keys and values.

    ``q`` is ``[tokens, heads, head_dim]``; query ``i`` sits at position ``q_positions[i]`` and
    sees keys ``0..q_positions[i]``. ``heads`` may be a multiple of the cache's KV heads
    (grouped-query attention). Blocks are visited in table order with an online softmax, so
    no contiguous copy of the keys is ever made.
    """
    tokens, heads, dim = q.shape
    bs = cache.block_size
    kv_heads = cache.k.shape[2]
    group = heads // kv_heads
    scale = scale if scale is not None else 1.0 / math.sqrt(dim)
    m = torch.full((heads, tokens), -math.inf, dtype=q.dtype)  # running max
    s = torch.zeros((heads, tokens), dtype=q.dtype)  # running sum of exp
    acc = torch.zeros((heads, tokens, dim), dtype=q.dtype)
    qh = q.transpose(0, 1) * scale  # [heads, tokens, dim]
    for j in range(-(-context_len // bs)):
        valid = min(bs, context_len - j * bs)
        kb = cache.k[block_table[j], :valid].repeat_interleave(group, dim=1).transpose(0, 1)
        vb = cache.v[block_table[j], :valid].repeat_interleave(group, dim=1).transpose(0, 1)
        scores = qh @ kb.transpose(1, 2)  # [heads, tokens, valid]
        key_pos = torch.arange(j * bs, j * bs + valid)
        visible = key_pos[None, :] <= q_positions[:, None]  # [tokens, valid]
        scores = scores.masked_fill(~visible, -math.inf)
        m_new = torch.maximum(m, scores.amax(dim=-1))
        safe = torch.where(torch.isinf(m_new), torch.zeros_like(m_new), m_new)
        p = torch.exp(scores - safe[..., None])
        correction = torch.exp(m - safe)
        s = s * correction + p.sum(dim=-1)
        acc = acc * correction[..., None] + p @ vb
        m = m_new
    return (acc / s[..., None]).transpose(0, 1)
