"""Moving trained weights into the inference engine: gather, rename, bucket, time.

Taught on the page "Weight updates into the inference engine". The trainer holds each matrix
cut over its tensor-parallel ranks in Megatron-LM's layout; the engine wants the Hugging Face
layout, cut its own way. :func:`gather_tp` undoes the training cut, :func:`megatron_to_hf`
undoes Megatron's fusions, :func:`reshard_to_hf` does both on every rank of a real process
group. :func:`plan_buckets` packs tensors into transfer buckets the way checkpoint-engine
does, and :func:`broadcast_seconds` is the time of the broadcast that ships them.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.distributed as dist

ROLE = "taught"


def gather_tp(shards: list[torch.Tensor], partition_dim: int, glu: bool = False) -> torch.Tensor:
    """The full tensor from its tensor-parallel shards, in rank order. A gated MLP's first
    matrix (``glu``) is stored per rank as ``[gate_r; up_r]``, so the shards are cut in two
    and all gates are put before all ups: ``[gate_0; gate_1; ...; up_0; up_1; ...]``."""
    if glu:
        halves = [s.chunk(2, dim=0) for s in shards]
        shards = [h[0] for h in halves] + [h[1] for h in halves]
    return torch.cat(shards, dim=partition_dim)


@dataclass(frozen=True)
class Shape:
    """What the conversion needs to know of the model: heads, query groups, head size."""

    hidden: int
    heads: int
    groups: int
    head_dim: int


def megatron_to_hf(name: str, full: torch.Tensor, s: Shape) -> list[tuple[str, torch.Tensor]]:
    """Hugging Face names and tensors for one full Megatron-LM tensor of a Llama-shaped layer.

    Megatron fuses Q, K and V into ``linear_qkv``, grouped by query group: for each of the
    ``groups`` groups, its ``heads / groups`` query heads, then its key head, then its value
    head, ``head_dim`` rows each. It fuses the gate and up matrices into ``linear_fc1``.
    Names are ``<layer prefix>.<module>.weight``, e.g. ``layers.0.linear_qkv.weight``."""
    layer, module, kind = name.rsplit(".", 2)
    rest = f"{module}.{kind}"
    if rest == "linear_qkv.weight":
        per_group = full.view(s.groups, s.heads // s.groups + 2, s.head_dim, s.hidden)
        q, k, v = per_group.split([s.heads // s.groups, 1, 1], dim=1)
        return [
            (f"{layer}.q_proj.weight", q.reshape(-1, s.hidden)),
            (f"{layer}.k_proj.weight", k.reshape(-1, s.hidden)),
            (f"{layer}.v_proj.weight", v.reshape(-1, s.hidden)),
        ]
    if rest == "linear_fc1.weight":
        gate, up = full.chunk(2, dim=0)
        return [(f"{layer}.gate_proj.weight", gate), (f"{layer}.up_proj.weight", up)]
    renamed = {"linear_proj.weight": "o_proj.weight", "linear_fc2.weight": "down_proj.weight"}
    return [(f"{layer}.{renamed.get(rest, rest)}", full)]


def reshard_to_hf(
    local: dict[str, torch.Tensor], s: Shape, group: dist.ProcessGroup | None = None
) -> dict[str, torch.Tensor]:
    """Run on every rank of a tensor-parallel group. Each local shard carries Megatron's
    attributes ``tensor_model_parallel`` and ``partition_dim``; sharded ones are all-gathered
    over ``group`` and reassembled, replicated ones are taken as they are, then every tensor is
    converted to Hugging Face names. Every rank gets the full result (slime keeps it on one)."""
    world = dist.get_world_size(group)
    out: dict[str, torch.Tensor] = {}
    for name, shard in local.items():
        if getattr(shard, "tensor_model_parallel", False) and world > 1:
            parts = [torch.empty_like(shard) for _ in range(world)]
            dist.all_gather(parts, shard.contiguous(), group=group)
            full = gather_tp(parts, shard.partition_dim, glu="linear_fc1" in name)
        else:
            full = shard
        out.update(megatron_to_hf(name, full, s))
    return out


def plan_buckets(sizes: list[int], bucket_bytes: int, align: int = 256) -> list[list[int]]:
    """Greedy transfer buckets: tensors in order, each taking its size rounded up to ``align``
    bytes, a new bucket opened when the next tensor would overflow ``bucket_bytes``. Returns
    the tensor indices of each bucket."""
    buckets: list[list[int]] = [[]]
    used = 0
    for i, size in enumerate(sizes):
        aligned = (size + align - 1) // align * align
        if buckets[-1] and used + aligned > bucket_bytes:
            buckets.append([])
            used = 0
        buckets[-1].append(i)
        used += aligned
    return buckets


def broadcast_seconds(
    total_bytes: float, bandwidth: float, buckets: int = 1, latency: float = 0.0
) -> float:
    """A pipelined broadcast of ``total_bytes`` in ``buckets`` pieces to every GPU: each GPU
    must receive all the bytes once, at ``bandwidth`` bytes/s, plus a fixed ``latency`` per
    bucket (the handshake with the engine, the engine's copy into its parameters)."""
    return total_bytes / bandwidth + buckets * latency
