"""The semantics of ``torch.distributed``, written as plain functions over per-rank tensors.

Each collective takes the list of tensors the ranks contribute (index = rank) and returns the
list they hold afterwards, the definition a backend (NCCL, Gloo) must implement however it
moves the bytes. Then the two pieces of DTensor arithmetic the distributed page explains: how
``Shard(dim)`` cuts a dimension (as ``torch.chunk`` does, so the last ranks may get less or
nothing), which collective a change of placement costs, and which ranks form each group of a
device mesh.
"""

from __future__ import annotations

import itertools
from math import prod

import torch

ROLE = "taught"


def all_reduce(inputs: list[torch.Tensor]) -> list[torch.Tensor]:
    """Every rank ends with the elementwise sum of all ranks' tensors."""
    total = torch.stack(inputs).sum(0)
    return [total.clone() for _ in inputs]


def broadcast(inputs: list[torch.Tensor], src: int) -> list[torch.Tensor]:
    """Every rank ends with rank ``src``'s tensor."""
    return [inputs[src].clone() for _ in inputs]


def all_gather(inputs: list[torch.Tensor]) -> list[torch.Tensor]:
    """Every rank ends with all ranks' tensors concatenated in rank order (dimension 0)."""
    full = torch.cat(inputs)
    return [full.clone() for _ in inputs]


def reduce_scatter(inputs: list[torch.Tensor]) -> list[torch.Tensor]:
    """Rank ``r`` ends with slice ``r`` (of ``world`` equal slices) of the elementwise sum."""
    return list(torch.stack(inputs).sum(0).chunk(len(inputs)))


def all_to_all(inputs: list[torch.Tensor]) -> list[torch.Tensor]:
    """Rank ``r`` sends its slice ``j`` to rank ``j``; it ends with every rank's slice ``r``."""
    world = len(inputs)
    pieces = [t.chunk(world) for t in inputs]
    return [torch.cat([pieces[src][dst] for src in range(world)]) for dst in range(world)]


def shard_sizes(length: int, world: int) -> list[int]:
    """Rows of each rank under ``Shard``: chunks of ``ceil(length / world)``, the rest short."""
    chunk = -(-length // world)
    return [max(0, min(chunk, length - r * chunk)) for r in range(world)]


def redistribute_collective(src: str, dst: str) -> str | None:
    """The collective that changes one mesh dimension's placement from ``src`` to ``dst``.

    Placements are ``"S(i)"`` (sharded on tensor dimension ``i``), ``"R"`` (replicated) and
    ``"P"`` (partial sums: each rank holds a summand of the true value).
    """
    if src == dst:
        return None
    if src == "P":
        return "all_reduce" if dst == "R" else "reduce_scatter"
    if src.startswith("S") and dst == "R":
        return "all_gather"
    if src.startswith("S") and dst.startswith("S"):
        return "all_to_all"
    if src == "R" and dst.startswith("S"):
        return None  # each rank keeps its own chunk of what it already has
    raise ValueError(f"no single collective turns {src} into {dst}")


def mesh_groups(shape: tuple[int, ...], dim: int) -> list[list[int]]:
    """The rank groups of mesh dimension ``dim`` when ranks fill the mesh in row-major order.

    A group is the ranks that share every coordinate but ``dim``.
    """
    strides = [prod(shape[d + 1 :]) for d in range(len(shape))]
    others = [range(n) if d != dim else range(1) for d, n in enumerate(shape)]
    groups = []
    for coord in itertools.product(*others):
        base = sum(c * s for c, s in zip(coord, strides, strict=True))
        groups.append([base + i * strides[dim] for i in range(shape[dim])])
    return groups
