"""Dispatch and combine as DeepEP organises them, on gloo ranks, with every row counted.

The EP group is ``nodes x ranks_per_node`` ranks; rank ``r`` sits on node
``r // ranks_per_node`` and holds experts ``r * E/R ... (r + 1) * E/R - 1``.

- :func:`dispatch_layout` turns the top-k expert ids into the counts a dispatch needs, sending
  a token *once* to each rank that holds any of its experts (not once per expert).
- :func:`flat_dispatch` sends every token row straight to each rank that needs it (intranode
  kernels, or NVLink everywhere).
- :func:`hierarchical_dispatch` crosses nodes once per (token, remote node): the row goes to
  the rank with the same local index on that node (the RDMA hop), which forwards it to the
  ranks of its node that need it (the NVLink hop). This is the route of DeepEP's internode
  normal kernels.
- :func:`expert_compute` reduces, on the receiving rank, the gated outputs of all its local
  experts for a row, so that :func:`combine` sends back one row per (token, rank).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch
import torch.distributed as dist

from atlas.labkit.moe.layer import swiglu

ROLE = "taught"


@dataclass
class Topology:
    num_experts: int
    nodes: int
    ranks_per_node: int

    @property
    def ranks(self) -> int:
        return self.nodes * self.ranks_per_node

    @property
    def experts_per_rank(self) -> int:
        return self.num_experts // self.ranks

    def node_of(self, rank: int) -> int:
        return rank // self.ranks_per_node


@dataclass
class Traffic:
    """Rows this rank sent, by link: NVLink (same node) and RDMA (other node)."""

    nvlink: int = 0
    rdma: int = 0
    hops: list[str] = field(default_factory=list)


def dispatch_layout(experts: torch.Tensor, topo: Topology) -> dict[str, torch.Tensor]:
    """What a dispatch needs to know before it moves data (DeepEP's ``get_dispatch_layout``).

    ``is_token_in_rank [T, R]``: the token has at least one expert on that rank.
    ``tokens_per_rank [R]`` and ``tokens_per_node [N]``: tokens sent to each, counted once per
    token however many of its experts live there. ``tokens_per_expert [E]``: assignments.
    """
    t = experts.shape[0]
    owner = experts // topo.experts_per_rank
    in_rank = torch.zeros(t, topo.ranks, dtype=torch.bool).scatter_(1, owner, True)
    in_node = in_rank.view(t, topo.nodes, topo.ranks_per_node).any(-1)
    return {
        "is_token_in_rank": in_rank,
        "tokens_per_rank": in_rank.sum(0),
        "tokens_per_node": in_node.sum(0),
        "tokens_per_expert": torch.bincount(experts.reshape(-1), minlength=topo.num_experts),
    }


def _all_to_all(rows: list[torch.Tensor]) -> tuple[torch.Tensor, list[int]]:
    """Send ``rows[r]`` to rank r; receive what every rank sent here, in rank order."""
    send = [r.shape[0] for r in rows]
    recv = torch.empty(len(rows), dtype=torch.long)
    dist.all_to_all_single(recv, torch.tensor(send))
    recv_l = recv.tolist()
    payload = torch.cat(rows)
    out = payload.new_empty((sum(recv_l), *payload.shape[1:]))
    dist.all_to_all_single(out, payload, recv_l, send)
    return out, recv_l


def _pack(
    x: torch.Tensor, experts: torch.Tensor, gates: torch.Tensor, src: torch.Tensor
) -> torch.Tensor:
    """One row per token: hidden state, k expert ids, k gates, and its (source rank, index)."""
    return torch.cat([x, experts.to(x.dtype), gates, src.to(x.dtype)], dim=1)


def _unpack(rows: torch.Tensor, k: int) -> tuple[torch.Tensor, ...]:
    h = rows.shape[1] - 2 * k - 2
    x, e, g, s = rows.split([h, k, k, 2], dim=1)
    return x, e.round().long(), g, s.round().long()


def flat_dispatch(
    x: torch.Tensor, experts: torch.Tensor, gates: torch.Tensor, topo: Topology, traffic: Traffic
) -> tuple[torch.Tensor, ...]:
    """Each token row goes straight to every rank that holds one of its experts."""
    me = dist.get_rank()
    src = torch.stack([torch.full((x.shape[0],), me), torch.arange(x.shape[0])], dim=1)
    packed = _pack(x, experts, gates, src)
    in_rank = dispatch_layout(experts, topo)["is_token_in_rank"]
    rows = [packed[in_rank[:, r]] for r in range(topo.ranks)]
    for r, part in enumerate(rows):
        if r != me:
            link = "nvlink" if topo.node_of(r) == topo.node_of(me) else "rdma"
            setattr(traffic, link, getattr(traffic, link) + part.shape[0])
    received, _ = _all_to_all(rows)
    return _unpack(received, experts.shape[1])


def hierarchical_dispatch(
    x: torch.Tensor, experts: torch.Tensor, gates: torch.Tensor, topo: Topology, traffic: Traffic
) -> tuple[torch.Tensor, ...]:
    """Cross each remote node once per token, then forward inside the node.

    Hop 1 (RDMA): a token goes to the rank with this rank's local index on every remote node
    that holds one of its experts. Hop 2 (NVLink): each rank forwards the tokens it holds (its
    own and those that arrived) to the ranks of its node that need them.
    """
    me, k = dist.get_rank(), experts.shape[1]
    local = me % topo.ranks_per_node
    src = torch.stack([torch.full((x.shape[0],), me), torch.arange(x.shape[0])], dim=1)
    packed = _pack(x, experts, gates, src)
    in_node = (
        dispatch_layout(experts, topo)["is_token_in_rank"]
        .view(-1, topo.nodes, topo.ranks_per_node)
        .any(-1)
    )
    hop1 = [packed[:0]] * topo.ranks
    for n in range(topo.nodes):
        if n != topo.node_of(me):
            hop1[n * topo.ranks_per_node + local] = packed[in_node[:, n]]
            traffic.rdma += int(in_node[:, n].sum())
    arrived, _ = _all_to_all(hop1)
    held = torch.cat([packed[in_node[:, topo.node_of(me)]], arrived])
    _, held_experts, _, _ = _unpack(held, k)
    in_rank = dispatch_layout(held_experts, topo)["is_token_in_rank"]
    hop2 = [packed[:0]] * topo.ranks
    for r in range(topo.ranks):
        if topo.node_of(r) == topo.node_of(me):
            hop2[r] = held[in_rank[:, r]]
            if r != me:
                traffic.nvlink += int(in_rank[:, r].sum())
    received, _ = _all_to_all(hop2)
    return _unpack(received, k)


def expert_compute(
    x: torch.Tensor, experts: torch.Tensor, gates: torch.Tensor, weights: tuple, topo: Topology
) -> torch.Tensor:
    """For every received row, ``sum of g_i expert_i(x)`` over its experts that live here."""
    me = dist.get_rank()
    first = me * topo.experts_per_rank
    gate_w, up_w, down_w = weights
    y = torch.zeros_like(x)
    for e in range(first, first + topo.experts_per_rank):
        row, slot = (experts == e).nonzero(as_tuple=True)
        if row.numel():
            out = swiglu(x[row], gate_w[e], up_w[e], down_w[e])
            y = y.index_add(0, row, out * gates[row, slot, None])
    return y


def combine(
    y: torch.Tensor, src: torch.Tensor, num_tokens: int, topo: Topology, traffic: Traffic
) -> torch.Tensor:
    """Send each reduced row back to its token's rank and add the rows of each token there."""
    me = dist.get_rank()
    rows, index = [], []
    for r in range(topo.ranks):
        mine = src[:, 0] == r
        rows.append(y[mine])
        index.append(src[mine, 1])
        if r != me:
            link = "nvlink" if topo.node_of(r) == topo.node_of(me) else "rdma"
            setattr(traffic, link, getattr(traffic, link) + int(mine.sum()))
    back, _ = _all_to_all(rows)
    idx, _ = _all_to_all([i.unsqueeze(1).to(y.dtype) for i in index])
    return torch.zeros(num_tokens, y.shape[1], dtype=y.dtype).index_add(0, idx[:, 0].long(), back)


def hierarchical_combine(
    y: torch.Tensor, src: torch.Tensor, num_tokens: int, topo: Topology, traffic: Traffic
) -> torch.Tensor:
    """The reverse route: reduce inside the node first, then cross nodes once per token.

    Hop 1 (NVLink): each row goes to the rank of this node with the local index of the token's
    source rank (the rank that received it over RDMA), which adds up the rows of each token.
    Hop 2 (RDMA): that rank sends the one summed row back to the source rank.
    """
    me = dist.get_rank()
    relay = topo.node_of(me) * topo.ranks_per_node + src[:, 0] % topo.ranks_per_node
    rows = []
    for r in range(topo.ranks):
        mine = relay == r
        rows.append(torch.cat([y[mine], src[mine].to(y.dtype)], dim=1))
        if r != me:
            traffic.nvlink += int(mine.sum())
    arrived, _ = _all_to_all(rows)
    part, tok = arrived[:, :-2], arrived[:, -2:].round().long()
    keys, slot = torch.unique(tok, dim=0, return_inverse=True)
    summed = torch.zeros(keys.shape[0], y.shape[1], dtype=y.dtype).index_add(0, slot, part)
    back = []
    for r in range(topo.ranks):
        mine = keys[:, 0] == r
        back.append(torch.cat([summed[mine], keys[mine, 1:].to(y.dtype)], dim=1))
        if r != me and topo.node_of(r) != topo.node_of(me):
            traffic.rdma += int(mine.sum())
    home, _ = _all_to_all(back)
    idx = home[:, -1].round().long()
    return torch.zeros(num_tokens, y.shape[1], dtype=y.dtype).index_add(0, idx, home[:, :-1])


def expected_remote_nodes(num_experts: int, k: int, nodes: int, max_nodes: int) -> float:
    """Remote nodes a token reaches, on average, when the router's scores are uniform random.

    ``max_nodes == 1`` (node-limited to one node): all k experts lie in the one chosen node,
    which is uniform over the N nodes, so ``(N - 1) / N``. ``max_nodes >= nodes`` (unlimited):
    the experts are a uniform k-subset of the E, and each remote node is missed with
    probability ``C(E - E/N, k) / C(E, k)``.
    """
    if max_nodes == 1:
        return (nodes - 1) / nodes
    if max_nodes < nodes:
        raise ValueError("closed form given for one node or for no limit")
    per_node = num_experts // nodes
    return (nodes - 1) * (1 - math.comb(num_experts - per_node, k) / math.comb(num_experts, k))


def low_latency_bytes(tokens: int, k: int, hidden: int, phase: str) -> int:
    """Bytes a rank sends in one low-latency dispatch or combine: one message per (token,
    expert), no deduplication. A dispatch message is a 16-byte header (the token's index and
    reserved fields), the hidden vector in FP8 and one FP32 scale per 128 values; a combine
    message is the expert's output in BF16."""
    if phase == "dispatch":
        per_message = 16 + hidden + hidden // 128 * 4
    elif phase == "combine":
        per_message = 2 * hidden
    else:
        raise ValueError(f"unknown phase {phase!r}")
    return tokens * k * per_message
