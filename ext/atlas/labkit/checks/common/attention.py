"""The one reference attention that every chapter's kernel is checked against.

Keeping one causal attention here, instead of one per chapter, means every chapter's kernel is
checked against the same plain definition.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch

ROLE = "check"


def causal_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    q_positions: torch.Tensor | None = None,
    scale: float | None = None,
) -> torch.Tensor:
    """Softmax attention with a causal mask, written as the definition, on one device.

    ``q`` is ``[queries, heads, dim]``; ``k`` and ``v`` are ``[keys, kv_heads, dim]`` with
    ``heads`` a multiple of ``kv_heads`` (grouped-query attention: each key/value head serves
    ``heads / kv_heads`` query heads). Query ``i`` sits at position ``q_positions[i]`` (default:
    the last ``queries`` positions, as in prefill or decode) and sees keys ``0..position``.
    Returns ``[queries, heads, dim]``.
    """
    import torch

    queries, heads, kv_heads = q.shape[0], q.shape[1], k.shape[1]
    if q_positions is None:
        q_positions = torch.arange(k.shape[0] - queries, k.shape[0])
    scale = scale if scale is not None else 1.0 / math.sqrt(q.shape[-1])
    group = heads // kv_heads
    kh = k.repeat_interleave(group, dim=1)
    vh = v.repeat_interleave(group, dim=1)
    scores = torch.einsum("qhd,khd->hqk", q, kh) * scale
    visible = torch.arange(k.shape[0])[None, :] <= q_positions[:, None]
    scores = scores.masked_fill(~visible[None], -math.inf)
    return torch.einsum("hqk,khd->qhd", torch.softmax(scores, dim=-1), vh)
