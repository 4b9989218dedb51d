"""Checking code of ``precision/kv-cache.md``: brute-force references for KIVI's groups, a
planted-outlier key cache, attention through torch's own ``scaled_dot_product_attention``,
plain nibble conversion for the INT4 magic-number trick, and FLOPs counted by torch.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch.utils.flop_counter import FlopCounterMode

ROLE = "check"


def brute_force_groups(x: torch.Tensor, bits: int, group: int, per_channel: bool) -> torch.Tensor:
    """Asymmetric fake quantization, one group at a time by explicit slicing: per channel,
    each run of ``group`` tokens of one channel; per token, each run of ``group`` channels of
    one token."""
    x = x.float()
    out = torch.empty_like(x)
    tokens, channels = x.shape
    levels = 2**bits - 1
    rows, cols = (group, 1) if per_channel else (1, group)
    for a in range(0, tokens, rows):
        for c in range(0, channels, cols):
            g = x[a : a + rows, c : c + cols]
            lo, hi = g.min(), g.max()
            s = ((hi - lo) / levels).clamp(min=1e-8)
            out[a : a + rows, c : c + cols] = torch.round((g - lo) / s).clamp(0, levels) * s + lo
    return out


def outlier_keys(
    tokens: int, dim: int, channels: tuple[int, ...] = (3, 17, 60, 101), seed: int = 0
) -> torch.Tensor:
    """Keys with a few fixed outlier channels (large magnitude and offset in every token), as
    KIVI and others observe in real models; the other channels are unit normal."""
    g = torch.Generator().manual_seed(seed)
    k = torch.randn(tokens, dim, generator=g)
    for i, c in enumerate(channels):
        k[:, c] = k[:, c] * (8.0 + 4 * i) + (15.0 if i % 2 else -12.0)
    return k


def plain_values(tokens: int, dim: int, seed: int = 1) -> torch.Tensor:
    """Values without outlier channels; tokens differ in overall scale (log-normal)."""
    g = torch.Generator().manual_seed(seed)
    return torch.randn(tokens, dim, generator=g) * torch.exp(
        0.5 * torch.randn(tokens, 1, generator=g)
    )


def sdpa(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Attention of queries ``[n, d]`` over one head's cache in float32, by torch."""
    return F.scaled_dot_product_attention(
        q[None, None].float(), k[None, None].float(), v[None, None].float()
    )[0, 0]


def nibbles(words: np.ndarray, order: tuple[int, ...]) -> np.ndarray:
    """The eight 4-bit fields of each word, by shift and mask, in ``order``, as FP16."""
    words = np.asarray(words, dtype=np.uint32)
    fields = np.stack([(words >> np.uint32(4 * i)) & np.uint32(0xF) for i in range(8)], axis=1)
    return fields[:, list(order)].astype(np.int32).astype(np.float16)


def decode_attention_flops(heads: int, kv_heads: int, dim: int, context: int) -> int:
    """FLOPs torch counts for one decode token's attention, ``softmax(q k^T) v`` written as
    two matmuls (GQA: keys repeated per group; torch does not count the CPU's fused SDPA)."""
    q = torch.randn(1, heads, 1, dim)
    k = torch.randn(1, kv_heads, context, dim).repeat_interleave(heads // kv_heads, 1)
    v = torch.randn(1, kv_heads, context, dim).repeat_interleave(heads // kv_heads, 1)
    with FlopCounterMode(display=False) as counter:
        torch.softmax(q @ k.transpose(-1, -2) / dim**0.5, dim=-1) @ v
    return counter.get_total_flops()
