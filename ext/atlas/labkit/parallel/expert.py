"""Expert parallelism: a top-k mixture-of-experts layer with all-to-all dispatch and combine.

Every rank holds its own tokens and ``E / P`` of the experts. A replicated router picks ``k``
experts per token; each rank sorts its (token, expert) assignments by expert, which groups them
by the rank that owns the expert. The per-expert counts of all ranks are all-gathered (as
Megatron-LM does over its TP x EP group), so every rank knows how many rows it sends to and
receives from each other rank, and for which of its experts. Token rows travel to the experts'
ranks with one all-to-all and their gates with a second (dispatch); the owners run their experts
and scale each row by its gate between the activation and the second matrix, as Megatron-LM's
grouped MLP does; the reverse all-to-all brings the rows back, where they are only summed per
token (combine). The all-to-all is differentiable (its backward is the reverse all-to-all), so
gradients flow through the same exchanges.

Capacity follows GShard: each rank's tokens are a group, and an expert accepts at most
``ceil(capacity_factor * tokens * k / E)`` assignments from a group, in token order.
"""

from __future__ import annotations

import math
from typing import Any

import torch
import torch.distributed as dist
import torch.nn.functional as F

from atlas.labkit.parallel.comm import CommLog

ROLE = "taught"

DTYPE = torch.float64
GATES = ("renormalized", "raw")


class MoEWeights:
    """Router ``[E, h]`` and expert MLPs ``w1 [E, f, h]``, ``w2 [E, h, f]``, seeded."""

    def __init__(self, experts: int, hidden: int, ffn: int, seed: int = 0) -> None:
        gen = torch.Generator().manual_seed(seed)
        self.router = torch.randn(experts, hidden, generator=gen, dtype=DTYPE)
        self.w1 = torch.randn(experts, ffn, hidden, generator=gen, dtype=DTYPE) / hidden**0.5
        self.w2 = torch.randn(experts, hidden, ffn, generator=gen, dtype=DTYPE) / ffn**0.5
        for t in (self.router, self.w1, self.w2):
            t.requires_grad_()


def expert_mlp(
    x: torch.Tensor, w1: torch.Tensor, w2: torch.Tensor, gate: torch.Tensor | None = None
) -> torch.Tensor:
    """``w2 (g * gelu(w1 x))``: the gate, when given, scales the activation before ``w2``
    (equal to scaling the output, since ``w2`` is linear and has no bias here)."""
    h = F.gelu(F.linear(x, w1))
    if gate is not None:
        h = h * gate[:, None]
    return F.linear(h, w2)


def route(
    x: torch.Tensor,
    router: torch.Tensor,
    k: int,
    capacity_factor: float | None,
    gates: str = "renormalized",
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Top-k routing of one group of tokens.

    ``gates="renormalized"``: the top-k probabilities divided by their sum (GShard; Megatron's
    default softmax over the top-k logits is the same numbers); with ``k = 1`` every gate is 1.
    ``gates="raw"``: the probabilities themselves (Switch Transformer; Megatron with
    ``moe_router_pre_softmax``). Returns, for the kept assignments in token order: token
    index, expert index and gate; plus the router probabilities and the expert of every
    assignment before dropping (for the load-balancing loss).
    """
    if gates not in GATES:
        raise ValueError(f"gates must be one of {GATES}, got {gates!r}")
    experts = router.shape[0]
    probs = torch.softmax(x @ router.T, dim=-1)
    top_p, top_e = probs.topk(k, dim=-1)
    if gates == "renormalized":
        top_p = top_p / top_p.sum(-1, keepdim=True)
    token = torch.arange(x.shape[0]).repeat_interleave(k)
    expert, gate = top_e.reshape(-1), top_p.reshape(-1)
    keep = torch.ones_like(expert, dtype=torch.bool)
    if capacity_factor is not None:
        capacity = math.ceil(capacity_factor * x.shape[0] * k / experts)
        onehot = F.one_hot(expert, experts)
        position = (onehot.cumsum(0) * onehot).sum(-1) - 1  # arrival order within its expert
        keep = position < capacity
    return token[keep], expert[keep], gate[keep], probs, expert


def load_balancing_loss(probs: torch.Tensor, expert: torch.Tensor, experts: int) -> torch.Tensor:
    """Switch Transformer's auxiliary loss ``E * sum_i f_i P_i``: ``f_i`` the share of
    assignments sent to expert ``i``, ``P_i`` its mean router probability. Equals 1 when
    both are uniform, and grows as routing concentrates."""
    f = torch.bincount(expert, minlength=experts).to(probs.dtype) / expert.numel()
    return experts * (f * probs.mean(0)).sum()


def router_z_loss(logits: torch.Tensor) -> torch.Tensor:
    """ST-MoE's router z-loss: the mean squared log-sum-exp of each token's router logits.
    It keeps logits small, so that the softmax stays in a range where rounding is harmless."""
    return torch.logsumexp(logits, dim=-1).pow(2).mean()


class _AllToAll(torch.autograd.Function):
    """Variable-size all-to-all along dim 0; its backward is the same exchange reversed."""

    @staticmethod
    def forward(
        ctx: Any, x: torch.Tensor, send: list[int], recv: list[int], log: CommLog
    ) -> torch.Tensor:
        ctx.splits, ctx.log = (send, recv), log
        out = x.new_empty((sum(recv), *x.shape[1:]))
        log.add("all_to_all", x.numel())
        dist.all_to_all_single(out, x.contiguous(), recv, send)
        return out

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor, None, None, None]:
        send, recv = ctx.splits
        return _AllToAll.apply(grad.contiguous(), recv, send, ctx.log), None, None, None


def moe_expert_parallel(
    x: torch.Tensor,
    router: torch.Tensor,
    w1_local: torch.Tensor,
    w2_local: torch.Tensor,
    k: int,
    capacity_factor: float | None,
    log: CommLog,
    gates: str = "renormalized",
) -> tuple[torch.Tensor, list[int]]:
    """The layer with experts spread over the ranks. Returns the output for the local tokens
    and how many token rows each local expert processed."""
    world, rank = dist.get_world_size(), dist.get_rank()
    per_rank, experts = w1_local.shape[0], router.shape[0]
    token, expert, gate, _, _ = route(x, router, k, capacity_factor, gates)
    order = torch.argsort(expert, stable=True)  # group assignments by expert, hence by rank
    token, expert, gate = token[order], expert[order], gate[order]
    # 1. every rank learns every rank's per-expert counts (an all-gather, as in Megatron-LM)
    counts = torch.bincount(expert, minlength=experts)
    table = torch.empty(world * experts, dtype=counts.dtype)
    log.add("all_gather_counts", table.numel())
    dist.all_gather_single(table, counts)
    table = table.view(world, experts)  # table[j, e]: rows rank j sends to expert e
    mine = table[:, rank * per_rank : (rank + 1) * per_rank]  # [source rank, local expert]
    send = counts.view(world, per_rank).sum(1).tolist()
    recv = mine.sum(1).tolist()
    # 2. dispatch: the rows, then their gates, to the ranks of their experts
    rows = _AllToAll.apply(x[token], send, recv, log)
    row_gates = _AllToAll.apply(gate, send, recv, log)
    # rows arrive grouped by source rank, then by expert: label each with its local expert
    ids = torch.arange(per_rank).repeat(world).repeat_interleave(mine.reshape(-1))
    # 3. the local experts, each on its rows, the gate applied before the second matrix
    y = torch.zeros_like(rows)
    load = []
    for e in range(per_rank):
        sel = (ids == e).nonzero().squeeze(1)
        load.append(int(sel.numel()))
        y = y.index_put((sel,), expert_mlp(rows[sel], w1_local[e], w2_local[e], row_gates[sel]))
    # 4. combine: the reverse exchange; the token's rank only sums its k rows
    back = _AllToAll.apply(y, recv, send, log)
    out = torch.zeros_like(x).index_add(0, token, back)
    return out, load


def a2a_to_compute(
    peak_flops: float,
    link_bytes_per_s: float,
    expert_ffn: int,
    dispatch_bytes: int = 1,
    combine_bytes: int = 2,
) -> float:
    """Time of the all-to-all over time of the expert compute, per token and layer, when every
    routed copy of a token crosses the link. A token sent to ``k`` experts moves ``k h`` elements
    each way (dispatched in ``dispatch_bytes`` per element, combined in ``combine_bytes``) and
    costs ``6 k h f`` FLOPs in SwiGLU experts of width ``f``; ``k`` and ``h`` cancel."""
    comm = (dispatch_bytes + combine_bytes) / link_bytes_per_s
    compute = 6 * expert_ffn / peak_flops
    return comm / compute
