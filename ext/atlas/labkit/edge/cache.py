"""A static KV cache for a device: preallocated at the longest context, written in place.

An ahead-of-time compiled program (an ExecuTorch ``.pte``, a ggml graph) plans its memory
before it runs, so the cache cannot grow: it is one buffer per layer of the longest context the
program allows, and each decode step writes its key and value at the current position. The
attention then reads the whole buffer and masks the positions not written yet. The buffer's
bytes are fixed by the shape, not by how much of the context is in use.
"""

from __future__ import annotations

import torch

ROLE = "taught"


class StaticKVCache(torch.nn.Module):
    """Keys and values of one layer, ``(batch, kv_heads, max_context, head_dim)`` each."""

    def __init__(
        self, batch: int, kv_heads: int, max_context: int, head_dim: int, dtype: torch.dtype
    ) -> None:
        super().__init__()
        shape = (batch, kv_heads, max_context, head_dim)
        self.register_buffer("k", torch.zeros(shape, dtype=dtype))
        self.register_buffer("v", torch.zeros(shape, dtype=dtype))

    def update(
        self, pos: torch.Tensor, k: torch.Tensor, v: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Write ``k`` and ``v`` (``(batch, kv_heads, len(pos), head_dim)``) at ``pos``."""
        self.k.index_copy_(2, pos, k)
        self.v.index_copy_(2, pos, v)
        return self.k, self.v


def decode_attention(q: torch.Tensor, cache: StaticKVCache, pos: torch.Tensor) -> torch.Tensor:
    """Attention of the queries at ``pos`` over the whole static cache, later slots masked.

    Grouped-query attention: each KV head serves ``q_heads / kv_heads`` query heads.
    """
    groups = q.shape[1] // cache.k.shape[1]
    k = cache.k.repeat_interleave(groups, dim=1)
    v = cache.v.repeat_interleave(groups, dim=1)
    slots = torch.arange(cache.k.shape[2])
    mask = slots[None, :] <= pos[:, None]  # a query sees its own and earlier positions
    return torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)
