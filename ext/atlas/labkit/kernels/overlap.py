"""Overlapping communication with computation: chunk pipelines and persistent schedules.

``pipeline`` simulates a GEMM fused with a collective as a chain of chunks on two engines, one
that moves data (copy engine, NVLink, or a few SMs running communication code) and one that
computes (the remaining SMs). ``ag_matmul`` and ``matmul_rs`` are the two fused patterns of
tensor parallelism written as rings of point-to-point transfers over ``torch.distributed``: an
all-gather feeding a GEMM, and a GEMM feeding a reduce-scatter, each chunk's transfer posted
before the previous chunk's GEMM so that the two can run together. ``persistent_schedule`` is
the tile loop of a persistent kernel: one program per SM, walking tiles with the grid's stride.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.distributed as dist

ROLE = "taught"


@dataclass(frozen=True)
class Timeline:
    """When each chunk's transfer and compute ran, and the total time (makespan)."""

    comm: list[tuple[float, float]]
    compute: list[tuple[float, float]]
    makespan: float


def pipeline(comm: list[float], compute: list[float], comm_first: bool = True) -> Timeline:
    """Run chunk ``i``'s transfer and compute on two engines, each engine one chunk at a time.

    ``comm_first`` (all-gather then GEMM): chunk ``i`` computes once its data has arrived.
    Otherwise (GEMM then reduce-scatter): chunk ``i`` is sent once it has been computed.
    """
    comm_free = compute_free = 0.0
    comm_spans: list[tuple[float, float]] = []
    compute_spans: list[tuple[float, float]] = []
    for c, g in zip(comm, compute, strict=True):
        if comm_first:
            start = comm_free
            comm_spans.append((start, start + c))
            comm_free = start + c
            start = max(compute_free, comm_free)  # needs its own chunk, and a free engine
            compute_spans.append((start, start + g))
            compute_free = start + g
        else:
            start = compute_free
            compute_spans.append((start, start + g))
            compute_free = start + g
            start = max(comm_free, compute_free)
            comm_spans.append((start, start + c))
            comm_free = start + c
    return Timeline(comm_spans, compute_spans, max(comm_free, compute_free))


def persistent_schedule(num_tiles: int, num_sms: int) -> list[list[int]]:
    """Tiles each persistent program processes: program ``p`` takes ``p, p + P, p + 2P, ...``."""
    return [list(range(p, num_tiles, num_sms)) for p in range(min(num_sms, num_tiles))]


def ag_matmul(x_shard: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """``all_gather(x) @ w`` as a ring: multiply the chunk in hand while the next one arrives.

    Rank ``r`` holds rows ``r`` of ``x`` (``x_shard``) and a full ``w`` (its column shard, in
    tensor parallelism). At step ``s`` it multiplies the chunk that came from rank ``r - s``
    while passing that chunk on to rank ``r + 1``.
    """
    rank, world = dist.get_rank(), dist.get_world_size()
    rows = x_shard.shape[0]
    out = torch.empty(world * rows, w.shape[1], dtype=x_shard.dtype)
    chunk = x_shard
    for step in range(world):
        pending = []
        if step < world - 1:  # post the transfer first: it runs while we compute
            incoming = torch.empty_like(chunk)
            pending = [
                dist.isend(chunk, (rank + 1) % world),
                dist.irecv(incoming, (rank - 1) % world),
            ]
        src = (rank - step) % world  # whose rows we hold at this step
        out[src * rows : (src + 1) * rows] = chunk @ w
        for work in pending:
            work.wait()
        if pending:
            chunk = incoming
    return out


def matmul_rs(x: torch.Tensor, w_shard: torch.Tensor) -> torch.Tensor:
    """``reduce_scatter(x @ w)`` over rows as a ring of partial sums.

    Rank ``r`` holds the columns ``r`` of ``x`` (``x``, shape ``[rows, K/P]``) and the matching
    rows of ``w`` (``w_shard``), so ``x @ w_shard`` is its partial sum of the full product.
    Row chunk ``c`` is finished on rank ``c``: the partial sum for chunk ``c`` starts on rank
    ``c + 1`` and travels once around the ring, each rank adding its own part (computed while
    the previous partial sum is in flight).
    """
    rank, world = dist.get_rank(), dist.get_world_size()
    chunk_rows = x.shape[0] // world

    def own_part(step: int) -> torch.Tensor:
        c = (rank - step - 1) % world  # the row chunk this rank adds to at this step
        return x[c * chunk_rows : (c + 1) * chunk_rows] @ w_shard

    part = own_part(0)
    for step in range(world - 1):
        incoming = torch.empty_like(part)
        works = [dist.isend(part, (rank + 1) % world), dist.irecv(incoming, (rank - 1) % world)]
        mine = own_part(step + 1)  # computed while the partial sums are in flight
        for work in works:
            work.wait()
        part = mine + incoming
    return part  # after world - 1 hops the chunk is this rank's own, fully summed
