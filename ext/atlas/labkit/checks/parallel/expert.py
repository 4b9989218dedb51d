"""Checks of the labs of ``parallelism/expert.md``.

The chapter's checks: the checks its labs run, not what its pages teach.
"""

from __future__ import annotations

import math
from typing import Any

import torch
import torch.distributed as dist
import torch.nn.functional as F

from atlas.labkit.checks.parallel.common import DTYPE
from atlas.labkit.parallel.comm import CommLog
from atlas.labkit.parallel.expert import (
    MoEWeights,
    expert_mlp,
    load_balancing_loss,
    moe_expert_parallel,
    route,
)

ROLE = "check"


def reference_routing(
    x: torch.Tensor, router: torch.Tensor, k: int, capacity_factor: float | None, gates: str
) -> list[tuple[int, int, torch.Tensor]]:
    """Routing written from the definitions, one token at a time, independent of ``route``.

    Softmax by hand, the ``k`` most probable experts by sorting, gates raw or divided by their
    sum, and GShard's capacity as a counter per expert that admits assignments in token order
    while it is below ``ceil(capacity_factor * k * T / E)``. Returns (token, expert, gate)."""
    logits = x @ router.T
    z = torch.exp(logits - logits.max(dim=-1, keepdim=True).values)
    probs = z / z.sum(dim=-1, keepdim=True)
    experts = router.shape[0]
    limit = None
    if capacity_factor is not None:
        limit = math.ceil(capacity_factor * k * x.shape[0] / experts)
    taken = [0] * experts
    kept = []
    for t in range(x.shape[0]):
        chosen = sorted(range(experts), key=lambda e: -float(probs[t, e].detach()))[:k]
        total = sum(probs[t, e] for e in chosen)
        for e in chosen:
            gate = probs[t, e] / total if gates == "renormalized" else probs[t, e]
            if limit is None or taken[e] < limit:
                taken[e] += 1
                kept.append((t, e, gate))
    return kept


def moe_dense_reference(
    x: torch.Tensor, w: MoEWeights, k: int, capacity_factor: float | None, gates: str
) -> tuple[torch.Tensor, list[int]]:
    """The layer on one device, from :func:`reference_routing`: every expert runs on every
    token, and a dense ``[T, E]`` gate matrix (zero where an assignment was not made or was
    dropped) weights their outputs, the gate after the expert. Returns the output and the
    rows each expert received."""
    experts = w.router.shape[0]
    kept = reference_routing(x, w.router, k, capacity_factor, gates)
    gate = torch.zeros(x.shape[0], experts, dtype=x.dtype)
    load = [0] * experts
    for t, e, g in kept:
        gate = gate.index_put((torch.tensor([t]), torch.tensor([e])), g.reshape(1))
        load[e] += 1
    every = torch.stack([F.linear(F.gelu(F.linear(x, w.w1[e])), w.w2[e]) for e in range(experts)])
    return torch.einsum("te,eth->th", gate, every), load


def ep_moe_matches_reference(
    rank: int,
    world_size: int,
    experts: int = 8,
    k: int = 2,
    capacity_factor: float | None = None,
    gates: str = "renormalized",
    tokens: int = 16,
    hidden: int = 16,
    ffn: int = 32,
) -> dict[str, Any]:
    """Run the expert-parallel layer on this rank's tokens and compare with
    :func:`moe_dense_reference` (its own router and capacity rule) on every rank's tokens.

    ``forward_ok``: this rank's outputs. ``backward_ok``: gradients of its input, of its local
    experts (which received tokens from every rank) and of the router (all-reduced, as it is
    replicated), compared only once every rank's forward agrees (all ranks then back-propagate
    together). ``load``: rows per local expert, and ``load_ok`` whether they equal the
    reference's count; ``dropped``: this rank's dropped assignments; ``aux_loss``: the
    load-balancing loss of this rank's routing.
    """
    if experts % world_size:
        raise ValueError(f"{experts} experts do not split over {world_size} ranks")
    w = MoEWeights(experts, hidden, ffn)
    gen = torch.Generator().manual_seed(1)
    x_all = torch.randn(world_size, tokens, hidden, generator=gen, dtype=DTYPE)
    dy_all = torch.randn(world_size, tokens, hidden, generator=gen, dtype=DTYPE)
    x_ref = x_all.clone().requires_grad_()
    ref_load = [0] * experts
    outs = []
    for r in range(world_size):  # each rank's tokens are one capacity group
        out_r, load_r = moe_dense_reference(x_ref[r], w, k, capacity_factor, gates)
        outs.append(out_r)
        ref_load = [a + b for a, b in zip(ref_load, load_r, strict=True)]
    ref = torch.stack(outs)
    (ref * dy_all).sum().backward()

    per_rank = experts // world_size
    mine = slice(rank * per_rank, (rank + 1) * per_rank)
    router = w.router.detach().clone().requires_grad_()
    w1 = w.w1.detach()[mine].clone().requires_grad_()
    w2 = w.w2.detach()[mine].clone().requires_grad_()
    x = x_all[rank].clone().requires_grad_()
    log = CommLog()
    out, load = moe_expert_parallel(x, router, w1, w2, k, capacity_factor, log, gates)

    def close(a: torch.Tensor | None, b: torch.Tensor | None) -> bool:
        return a is not None and b is not None and torch.allclose(a, b, rtol=1e-10, atol=1e-12)

    forward_ok = close(out, ref[rank])
    every_forward_ok = torch.tensor(float(forward_ok))
    dist.all_reduce(every_forward_ok, op=dist.ReduceOp.MIN)
    backward_ok = False
    if every_forward_ok.item():  # a wrong forward may leave nothing to back-propagate through
        (out * dy_all[rank]).sum().backward()
        dist.all_reduce(router.grad)
        backward_ok = (
            close(x.grad, x_ref.grad[rank])
            and close(w1.grad, w.w1.grad[mine])
            and close(w2.grad, w.w2.grad[mine])
            and close(router.grad, w.router.grad)
        )

    token, _, _, probs, expert = route(x.detach(), w.router.detach(), k, capacity_factor, gates)
    return {
        "forward_ok": forward_ok,
        "backward_ok": backward_ok,
        "load": load,
        "load_ok": load == ref_load[mine],
        "kept": token.numel(),
        "dropped": tokens * k - token.numel(),
        "aux_loss": round(load_balancing_loss(probs, expert, experts).item(), 3),
        "comm": log.as_dict(),
    }


def router_gradient(k: int, gates: str, tokens: int = 32, experts: int = 8) -> float:
    """The norm of the router's gradient after one backward of the one-device layer built
    from :func:`route` and :func:`expert_mlp`: zero when no gradient reaches the router."""
    w = MoEWeights(experts, 16, 32)
    x = torch.randn(tokens, 16, generator=torch.Generator().manual_seed(2), dtype=DTYPE)
    token, expert, gate, _, _ = route(x, w.router, k, None, gates)
    out = torch.zeros_like(x)
    for e in range(experts):
        sel = expert == e
        out = out.index_add(0, token[sel], expert_mlp(x[token[sel]], w.w1[e], w.w2[e], gate[sel]))
    out.pow(2).sum().backward()
    grad = w.router.grad  # None when the router took no part in the loss at all
    return 0.0 if grad is None else float(grad.norm())
