"""Checks of the labs of ``parallelism/context.md``.

The chapter's checks: the checks its labs run, not what its pages teach.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

from atlas.labkit.checks.parallel.common import DTYPE
from atlas.labkit.parallel.comm import CommLog
from atlas.labkit.parallel.context import ring_attention, shard_positions, ulysses_attention

ROLE = "check"


def sdpa_causal(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Full causal attention by PyTorch's own ``scaled_dot_product_attention`` on one device:
    the reference the context-parallel labs compare with, sharing no code with
    :mod:`.context`. Tensors are ``[sequence, heads, dim]``."""
    out = F.scaled_dot_product_attention(
        q.transpose(0, 1), k.transpose(0, 1), v.transpose(0, 1), is_causal=True
    )
    return out.transpose(0, 1)


def ring_work_formula(seq: int, rank: int, world: int, balanced: bool) -> int:
    """Visible (query, key) pairs of one rank under a causal mask, in closed form: a chunk of
    ``n`` queries starting at position ``j n`` sees ``j n^2 + n (n + 1) / 2`` pairs."""
    if not balanced:
        n = seq // world
        return rank * n * n + n * (n + 1) // 2
    n = seq // (2 * world)
    return (2 * world - 1) * n * n + n * (n + 1)


def _qkv(seq: int, heads: int, dim: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(0)
    return tuple(torch.randn(seq, heads, dim, generator=gen, dtype=DTYPE) for _ in range(3))


def ring_attention_matches_full(
    rank: int,
    world_size: int,
    balanced: bool = True,
    seq: int = 64,
    heads: int = 2,
    dim: int = 8,
) -> dict[str, Any]:
    """Ring attention on this rank's share of the sequence against :func:`sdpa_causal`.

    Returns ``ok`` (allclose on this rank's rows), ``max_abs_diff``, ``work`` (visible query-key
    pairs this rank computed) with ``work_ok`` (equal to :func:`ring_work_formula`), and
    ``sent`` (key/value elements it sent) with ``sent_ok`` (``P - 1`` blocks of ``2 (s/P) h d``).
    """
    q, k, v = _qkv(seq, heads, dim)
    full = sdpa_causal(q, k, v)
    pos = shard_positions(seq, rank, world_size, balanced)
    log = CommLog()
    out, work = ring_attention(q[pos], k[pos], v[pos], pos, log)
    return {
        "ok": torch.allclose(out, full[pos], rtol=1e-10, atol=1e-12),
        "max_abs_diff": (out - full[pos]).abs().max().item(),
        "work": work,
        "work_ok": work == ring_work_formula(seq, rank, world_size, balanced),
        "sent": log.elements["send"],
        "sent_ok": log.elements["send"] == (world_size - 1) * 2 * (seq // world_size) * heads * dim,
    }


def ulysses_matches_full(
    rank: int, world_size: int, seq: int = 64, heads: int = 4, dim: int = 8
) -> dict[str, Any]:
    """Ulysses attention on a contiguous sequence shard against :func:`sdpa_causal`;
    ``sent_ok``: four all-to-alls of ``(s/P) h d`` elements, of which ``(P-1)/P`` leave."""
    if heads % world_size:
        raise ValueError(f"Ulysses needs heads ({heads}) divisible by ranks ({world_size})")
    q, k, v = _qkv(seq, heads, dim)
    full = sdpa_causal(q, k, v)
    pos = shard_positions(seq, rank, world_size, balanced=False)
    log = CommLog()
    out = ulysses_attention(q[pos], k[pos], v[pos], log)
    return {
        "ok": torch.allclose(out, full[pos], rtol=1e-10, atol=1e-12),
        "max_abs_diff": (out - full[pos]).abs().max().item(),
        "sent": log.elements["all_to_all"],
        "sent_ok": log.elements["all_to_all"] == 4 * (seq // world_size) * heads * dim,
    }
