"""Collectives built from point-to-point messages, with every byte counted.

Why build them by hand: ``torch.distributed.all_reduce`` hides its algorithm, so it cannot show
that a ring sends ``2 (n-1)/n`` of the buffer per rank, or that a two-level all-reduce puts only
``1/g`` of it on the network. Here each algorithm is a loop of ``isend``/``recv`` pairs on
explicit chunks, and a :class:`Traffic` ledger records what each rank sends, to whom and in how
many messages. The library collectives are then the independent reference the labs compare to.

Every function takes ``ranks``, the global ranks of the group in ring order, so the same code
runs on the whole world or on a sub-group (the GPUs of one node, or one GPU per node).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import torch
import torch.distributed as dist

ROLE = "taught"


@dataclass
class Traffic:
    """What one rank sent: bytes and messages per destination, and per link class."""

    bytes_to: Counter[int] = field(default_factory=Counter)
    messages: int = 0
    node_of: dict[int, int] | None = None  # rank -> node; None: one node

    def sent(self, dst: int, tensor: torch.Tensor) -> None:
        self.bytes_to[dst] += tensor.numel() * tensor.element_size()
        self.messages += 1

    @property
    def total(self) -> int:
        return sum(self.bytes_to.values())

    def inter_node(self, me: int) -> int:
        """Bytes this rank sent to ranks on other nodes (what crosses the network)."""
        if self.node_of is None:
            return 0
        return sum(b for dst, b in self.bytes_to.items() if self.node_of[dst] != self.node_of[me])


def _exchange(send: torch.Tensor, dst: int, recv: torch.Tensor, src: int, traffic: Traffic) -> None:
    """Send ``send`` to ``dst`` while receiving ``recv`` from ``src`` (no deadlock in a ring)."""
    request = dist.isend(send.contiguous(), dst)
    dist.recv(recv, src)
    request.wait()
    traffic.sent(dst, send)


def ring_reduce_scatter(x: torch.Tensor, ranks: list[int], traffic: Traffic) -> list[torch.Tensor]:
    """Sum ``x`` over ``ranks``; on return, chunk ``i`` of the result is complete on ranks[i].

    ``x`` is split into ``n`` chunks (views: the reduction happens in place). At step ``s``
    the rank at ring position ``i`` sends chunk ``i-s-1`` to its successor and adds the chunk
    ``i-s-2`` it receives from its predecessor. After ``n-1`` steps chunk ``i`` has passed
    every rank once. Returns the chunks; only chunk ``i`` is meaningful.
    """
    n, me = len(ranks), ranks.index(dist.get_rank())
    chunks = list(x.view(-1).tensor_split(n))
    nxt, prv = ranks[(me + 1) % n], ranks[(me - 1) % n]
    for s in range(n - 1):
        out, into = (me - s - 1) % n, (me - s - 2) % n
        incoming = torch.empty_like(chunks[into])
        _exchange(chunks[out], nxt, incoming, prv, traffic)
        chunks[into] += incoming
    return chunks


def ring_all_gather(
    chunks: list[torch.Tensor], ranks: list[int], traffic: Traffic
) -> list[torch.Tensor]:
    """Each ring position ``i`` holds ``chunks[i]``; on return every rank holds all chunks.

    At step ``s`` position ``i`` forwards chunk ``i-s`` (its own first, then what it just
    received) and receives chunk ``i-s-1``: ``n-1`` steps, one chunk per step.
    """
    n, me = len(ranks), ranks.index(dist.get_rank())
    nxt, prv = ranks[(me + 1) % n], ranks[(me - 1) % n]
    for s in range(n - 1):
        out, into = (me - s) % n, (me - s - 1) % n
        _exchange(chunks[out], nxt, chunks[into], prv, traffic)
    return chunks


def ring_all_reduce(x: torch.Tensor, ranks: list[int], traffic: Traffic) -> torch.Tensor:
    """All-reduce ``x`` in place: a ring reduce-scatter, then a ring all-gather."""
    chunks = ring_reduce_scatter(x, ranks, traffic)
    ring_all_gather(chunks, ranks, traffic)
    return x


def halving_doubling_all_reduce(
    x: torch.Tensor, ranks: list[int], traffic: Traffic
) -> torch.Tensor:
    """Rabenseifner's all-reduce for a power-of-two group: ``2 log2 n`` steps instead of ``2(n-1)``.

    Reduce-scatter by recursive halving: at distance ``d = n/2, n/4, ..., 1`` a rank swaps half
    of its current block with the partner ``me XOR d`` and keeps the half its partner does not.
    Then all-gather by recursive doubling, the same exchanges in reverse order. The bytes sent
    are those of a ring (``S/2 + S/4 + ... = (n-1)/n S`` each way); only the step count falls.
    """
    n, me = len(ranks), ranks.index(dist.get_rank())
    if n & (n - 1):
        raise ValueError(f"recursive halving needs a power-of-two group, got {n}")
    flat = x.view(-1)
    lo, hi = 0, flat.numel()
    blocks: list[tuple[int, int, int]] = []  # (partner, kept lo..hi) to undo in the gather
    d = n // 2
    while d >= 1:
        partner = me ^ d
        mid = lo + (hi - lo) // 2
        keep, give = ((lo, mid), (mid, hi)) if me < partner else ((mid, hi), (lo, mid))
        incoming = torch.empty(keep[1] - keep[0], dtype=x.dtype)
        _exchange(flat[give[0] : give[1]], ranks[partner], incoming, ranks[partner], traffic)
        flat[keep[0] : keep[1]] += incoming
        blocks.append((partner, lo, hi))
        lo, hi = keep
        d //= 2
    for partner, outer_lo, outer_hi in reversed(blocks):
        mine = flat[lo:hi]
        other = (outer_lo, lo) if lo > outer_lo else (hi, outer_hi)
        _exchange(mine, ranks[partner], flat[other[0] : other[1]], ranks[partner], traffic)
        lo, hi = outer_lo, outer_hi
    return x


def two_level_all_reduce(x: torch.Tensor, gpus_per_node: int, traffic: Traffic) -> torch.Tensor:
    """All-reduce over nodes of ``g`` GPUs: reduce-scatter inside the node, all-reduce each
    shard across nodes (one ring per local index, a *rail*), all-gather inside the node.

    Only the cross-node step touches the network, and it carries ``1/g`` of the buffer.
    """
    rank, world = dist.get_rank(), dist.get_world_size()
    g = gpus_per_node
    node, local = divmod(rank, g)
    node_ranks = [node * g + i for i in range(g)]
    rail_ranks = [m * g + local for m in range(world // g)]
    chunks = ring_reduce_scatter(x, node_ranks, traffic)
    ring_all_reduce(chunks[local], rail_ranks, traffic)
    ring_all_gather(chunks, node_ranks, traffic)
    return x


def all_to_all(
    rows: torch.Tensor, dest: torch.Tensor, world: int, traffic: Traffic
) -> tuple[torch.Tensor, list[int]]:
    """Send row ``t`` of ``rows`` to rank ``dest[t]``; return what arrived and from how many.

    The exchange of counts comes first (each rank must size its receive buffers), then the
    rows themselves, one message per peer that has any. Rows for oneself are copied, not sent.
    """
    me = dist.get_rank()
    order = torch.argsort(dest, stable=True)
    rows, dest = rows[order], dest[order]
    send_counts = torch.bincount(dest, minlength=world)
    recv_counts = torch.empty_like(send_counts)
    dist.all_to_all_single(recv_counts, send_counts)
    outgoing = list(rows.split(send_counts.tolist()))
    incoming = [torch.empty(int(c), rows.shape[1], dtype=rows.dtype) for c in recv_counts]
    requests = []
    for peer in range(world):
        if peer == me:
            incoming[peer].copy_(outgoing[peer])
            continue
        if send_counts[peer] > 0:
            requests.append(dist.isend(outgoing[peer].contiguous(), peer))
            traffic.sent(peer, outgoing[peer])
    for peer in range(world):
        if peer != me and recv_counts[peer] > 0:
            dist.recv(incoming[peer], peer)
    for request in requests:
        request.wait()
    return torch.cat(incoming), recv_counts.tolist()
