"""Checks of the labs of ``parallelism/tensor.md``.

The chapter's checks: the checks its labs run, not what its pages teach.
"""

from __future__ import annotations

from typing import Any

import torch

from atlas.labkit.checks.parallel.common import DTYPE
from atlas.labkit.parallel.comm import CommLog
from atlas.labkit.parallel.tensor import DenseBlock, ParallelBlock, all_reduce

ROLE = "check"


def parallel_mlp_matches_dense(
    rank: int,
    world_size: int,
    sequence_parallel: bool = False,
    seq: int = 8,
    batch: int = 2,
    hidden: int = 16,
    ffn: int = 64,
) -> dict[str, Any]:
    """Run the block on ``world_size`` TP ranks and compare with :class:`DenseBlock`.

    ``forward_ok``: this rank's output equals the dense output (its sequence slice under SP).
    ``backward_ok``: the input gradient, this rank's slices of the fc1/fc2 weight gradients and
    the layer-norm gradients (all-reduced over the group under SP, as Megatron does) equal the
    dense ones. ``comm``: elements passed to each collective in one forward and backward.
    """
    log = CommLog()
    dense = DenseBlock(hidden, ffn)
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(seq, batch, hidden, generator=gen, dtype=DTYPE, requires_grad=True)
    dy = torch.randn(seq, batch, hidden, generator=gen, dtype=DTYPE)
    y = dense(x)
    y.backward(dy)

    block = ParallelBlock(dense, rank, world_size, sequence_parallel, log)
    chunk = seq // world_size
    rows = slice(rank * chunk, (rank + 1) * chunk) if sequence_parallel else slice(None)
    x_local = x.detach()[rows].clone().requires_grad_()
    y_local = block(x_local)
    y_local.backward(dy[rows])
    norm_grads = [block.norm.weight.grad, block.norm.bias.grad]
    if sequence_parallel:  # each rank saw 1/N of the tokens: sum the layer-norm gradients
        norm_grads = [all_reduce(g, log) for g in norm_grads]
    ref_norm = [dense.norm.weight.grad, dense.norm.bias.grad]

    def close(a: torch.Tensor, b: torch.Tensor) -> bool:
        return torch.allclose(a, b, rtol=1e-10, atol=1e-12)

    backward_ok = (
        close(x_local.grad, x.grad[rows])
        and close(block.fc1.weight.grad, dense.fc1.weight.grad.chunk(world_size, 0)[rank])
        and close(block.fc2.weight.grad, dense.fc2.weight.grad.chunk(world_size, 1)[rank])
        and close(block.fc1.bias.grad, dense.fc1.bias.grad.chunk(world_size, 0)[rank])
        and all(close(a, b) for a, b in zip(norm_grads, ref_norm, strict=True))
    )
    return {
        "forward_ok": close(y_local, y.detach()[rows]),
        "backward_ok": backward_ok,
        "max_abs_diff": (y_local - y.detach()[rows]).abs().max().item(),
        "comm": log.as_dict(),
        "activation_elements": seq * batch * hidden,
    }
