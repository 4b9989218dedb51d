"""Checks of the labs of ``hpc/scale-out.md``.

The chapter's checks: Checkers and instruments for the HPC chapter's labs (not taught on the
pages).
"""

from __future__ import annotations

from typing import Any

import torch
import torch.distributed as dist

from atlas.labkit.hpc import collectives as coll

ROLE = "check"


def two_level_vs_library(rank: int, world: int, gpus_per_node: int, numel: int) -> dict[str, Any]:
    """The two-level all-reduce against ``dist.all_reduce``; bytes split by link class."""
    torch.manual_seed(200 + rank)
    x = torch.randn(numel, dtype=torch.float64)
    ref = x.clone()
    dist.all_reduce(ref)
    node_of = {r: r // gpus_per_node for r in range(world)}
    t = coll.Traffic(node_of=node_of)
    y = coll.two_level_all_reduce(x.clone(), gpus_per_node, t)
    flat = coll.Traffic(node_of=node_of)
    coll.ring_all_reduce(x.clone(), list(range(world)), flat)
    return {
        "ok": torch.allclose(y, ref),
        "inter_bytes": t.inter_node(rank),
        "intra_bytes": t.total - t.inter_node(rank),
        "flat_inter_bytes": flat.inter_node(rank),
        "buffer_bytes": x.numel() * x.element_size(),
    }


def all_to_all_vs_routing(
    rank: int, world: int, tokens: int, hidden: int, experts: int, top_k: int
) -> dict[str, Any]:
    """Route ``tokens`` tokens to ``top_k`` of ``experts`` experts (``experts/world`` per
    rank) with a random router; send each token once to every rank that hosts one of its
    experts. Returns what was sent, what arrived, and this rank's row of the routing matrix."""
    torch.manual_seed(300 + rank)
    x = torch.randn(tokens, hidden, dtype=torch.float32)
    x[:, 0] = rank  # stamp: the sender
    x[:, 1] = torch.arange(tokens, dtype=torch.float32)  # stamp: the token index
    chosen = torch.randn(tokens, experts).topk(top_k, dim=1).indices
    owner = chosen // (experts // world)
    pairs = torch.unique(
        torch.stack([torch.arange(tokens).repeat_interleave(top_k), owner.reshape(-1)], 1), dim=0
    )
    rows, dest = x[pairs[:, 0]], pairs[:, 1]
    t = coll.Traffic()
    got, recv_counts = coll.all_to_all(rows, dest, world, t)
    routing_row = torch.bincount(dest, minlength=world).tolist()
    senders = got[:, 0].long()
    return {
        "routing_row": routing_row,
        "sent_bytes": t.total,
        "recv_counts": recv_counts,
        "recv_senders_ok": torch.equal(
            torch.bincount(senders, minlength=world), torch.tensor(recv_counts)
        ),
        "token_bytes": hidden * x.element_size(),
    }
