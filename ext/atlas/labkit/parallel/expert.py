"""Expert parallelism: a top-k mixture-of-experts layer with all-to-all dispatch and combine.

Every rank holds its own tokens and ``E / P`` of the experts. A replicated router picks ``k``
experts per token; each rank sorts its (token, expert) assignments by the rank that owns the
expert, exchanges counts, and sends the token rows there with one all-to-all (dispatch). The
owners run their experts and send the results back with the reverse all-to-all (combine), where
they are weighted by the gates and summed per token. The all-to-all is differentiable (its
backward is the reverse all-to-all), so gradients flow through the same exchange.

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

DTYPE = torch.float64


class MoEWeights:
    """Router ``[E, h]`` and expert MLPs ``w1 [E, f, h]``, ``w2 [E, h, f]``, seeded."""

    def __init__(self, experts: int, hidden: int, ffn: int, seed: int = 0) -> None:
        gen = torch.Generator().manual_seed(seed)
        self.router = torch.randn(experts, hidden, generator=gen, dtype=DTYPE)
        self.w1 = torch.randn(experts, ffn, hidden, generator=gen, dtype=DTYPE) / hidden**0.5
        self.w2 = torch.randn(experts, hidden, ffn, generator=gen, dtype=DTYPE) / ffn**0.5
        for t in (self.router, self.w1, self.w2):
            t.requires_grad_()


def expert_mlp(x: torch.Tensor, w1: torch.Tensor, w2: torch.Tensor) -> torch.Tensor:
    return F.linear(F.gelu(F.linear(x, w1)), w2)


def route(
    x: torch.Tensor, router: torch.Tensor, k: int, capacity_factor: float | None
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Top-k routing of one group of tokens.

    Returns, for the kept assignments in token order: token index, expert index and gate (the
    top-k probabilities renormalised to sum to one per token); plus the router probabilities
    and the expert of every assignment before dropping (for the load-balancing loss).
    """
    experts = router.shape[0]
    probs = torch.softmax(x @ router.T, dim=-1)
    top_p, top_e = probs.topk(k, dim=-1)
    gates = top_p / top_p.sum(-1, keepdim=True)
    token = torch.arange(x.shape[0]).repeat_interleave(k)
    expert, gate = top_e.reshape(-1), gates.reshape(-1)
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


def moe_reference(
    x: torch.Tensor, w: MoEWeights, k: int, capacity_factor: float | None
) -> torch.Tensor:
    """The layer on one device: every expert local, a loop over experts."""
    token, expert, gate, _, _ = route(x, w.router, k, capacity_factor)
    out = torch.zeros_like(x)
    for e in range(w.router.shape[0]):
        sel = expert == e
        y = expert_mlp(x[token[sel]], w.w1[e], w.w2[e])
        out = out.index_add(0, token[sel], y * gate[sel, None])
    return out


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
) -> tuple[torch.Tensor, list[int]]:
    """The layer with experts spread over the ranks. Returns the output for the local tokens
    and how many token rows each local expert processed."""
    world = dist.get_world_size()
    per_rank = w1_local.shape[0]
    token, expert, gate, _, _ = route(x, router, k, capacity_factor)
    order = torch.argsort(expert, stable=True)  # group assignments by expert, hence by rank
    token, expert, gate = token[order], expert[order], gate[order]
    send = torch.bincount(expert // per_rank, minlength=world)
    recv = torch.empty_like(send)
    dist.all_to_all_single(recv, send)  # how many rows each rank will send here
    send_l, recv_l = send.tolist(), recv.tolist()
    rows = _AllToAll.apply(x[token], send_l, recv_l, log)  # dispatch
    ids = torch.empty(sum(recv_l), dtype=expert.dtype)
    dist.all_to_all_single(ids, expert, recv_l, send_l)
    ids = ids - dist.get_rank() * per_rank
    y = torch.zeros_like(rows)
    load = []
    for e in range(per_rank):
        sel = ids == e
        load.append(int(sel.sum()))
        y = y.index_put(
            (sel.nonzero().squeeze(1),), expert_mlp(rows[sel], w1_local[e], w2_local[e])
        )
    back = _AllToAll.apply(y, recv_l, send_l, log)  # combine
    out = torch.zeros_like(x).index_add(0, token, back * gate[:, None])
    return out, load
