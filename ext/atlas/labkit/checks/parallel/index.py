"""Checks of the labs of ``parallelism/index.md``.

The chapter's checks: the checks its labs run, not what its pages teach.
"""

from __future__ import annotations

import functools

import torch
from torch import nn

from atlas.labkit.pinned import definitions

ROLE = "check"


@functools.cache
def _megatron_rank_generator() -> type:
    import typing

    scope = definitions(
        "megatron",
        "megatron/core/parallel_state.py",
        ("generate_masked_orthogonal_rank_groups", "RankGenerator"),
        {"List": list, "Optional": typing.Optional},
    )
    return scope["RankGenerator"]


def megatron_rank_groups(sizes: dict[str, int], dims: str) -> list[list[int]]:
    """The groups Megatron-LM's own ``RankGenerator.get_ranks`` returns for ``dims`` on a mesh
    of ``sizes`` (keys tp, cp, ep, dp, pp, in the fold order wanted), run from
    ``megatron/core/parallel_state.py`` at the pin."""
    generator = _megatron_rank_generator()(
        tp=sizes.get("tp", 1),
        ep=sizes.get("ep", 1),
        dp=sizes.get("dp", 1),
        pp=sizes.get("pp", 1),
        cp=sizes.get("cp", 1),
        order="-".join(sizes),
    )
    return generator.get_ranks(dims)


def measured_bytes_per_param(hidden: int = 64) -> dict[str, int]:
    """Bytes per parameter of mixed-precision Adam, read off real tensors after one step: a
    bf16 linear layer's weights and gradients, an fp32 master copy, and the two moments that
    ``torch.optim.Adam`` keeps for the master copy. Each term is its tensors' storage bytes
    over the number of parameters."""
    layer = nn.Linear(hidden, hidden, dtype=torch.bfloat16)
    master = [p.detach().float().clone().requires_grad_() for p in layer.parameters()]
    opt = torch.optim.Adam(master, lr=1e-3)
    x = torch.randn(8, hidden, dtype=torch.bfloat16)
    layer(x).float().pow(2).mean().backward()
    for p, m in zip(layer.parameters(), master, strict=True):
        m.grad = p.grad.float()  # the fp32 gradient is a transient of the step
    opt.step()
    n = sum(p.numel() for p in layer.parameters())

    def per_param(tensors: list[torch.Tensor]) -> int:
        total = sum(t.untyped_storage().nbytes() for t in tensors)
        assert total % n == 0
        return total // n

    states = [opt.state[m] for m in master]
    return {
        "weights": per_param(list(layer.parameters())),
        "gradients": per_param([p.grad for p in layer.parameters()]),
        "master": per_param(master),
        "adam_m": per_param([s["exp_avg"] for s in states]),
        "adam_v": per_param([s["exp_avg_sq"] for s in states]),
    }
