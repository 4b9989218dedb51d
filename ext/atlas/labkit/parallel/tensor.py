"""Tensor and sequence parallelism: Megatron's column/row split of an MLP block.

The four autograd functions are the conjugate pairs of the Megatron-LM paper: ``f`` is the
identity forward and an all-reduce backward, ``g`` the reverse. With sequence parallelism the
all-reduce of ``g`` becomes a reduce-scatter along the sequence, and ``f`` becomes the matching
all-gather, so that the layer norm between blocks runs on ``1/N`` of the tokens.

Tensors use Megatron's ``[sequence, batch, hidden]`` layout, so the sequence is dimension 0.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn

from atlas.labkit.parallel.comm import CommLog

DTYPE = torch.float64
_LOG = CommLog()  # the functions below record into the log that the caller installs


def set_log(log: CommLog) -> None:
    global _LOG
    _LOG = log


def _all_reduce(x: torch.Tensor) -> torch.Tensor:
    x = x.clone()
    _LOG.add("all_reduce", x.numel())
    dist.all_reduce(x)
    return x


def _all_gather_seq(x: torch.Tensor) -> torch.Tensor:
    world = dist.get_world_size()
    out = torch.empty((world * x.shape[0], *x.shape[1:]), dtype=x.dtype)
    _LOG.add("all_gather", out.numel())
    dist.all_gather_single(out, x.contiguous())
    return out


def _reduce_scatter_seq(x: torch.Tensor) -> torch.Tensor:
    world = dist.get_world_size()
    out = torch.empty((x.shape[0] // world, *x.shape[1:]), dtype=x.dtype)
    _LOG.add("reduce_scatter", x.numel())
    dist.reduce_scatter_single(out, x.contiguous())
    return out


class CopyToTP(torch.autograd.Function):
    """``f``: identity forward; backward sums the input gradients of all TP ranks."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor) -> torch.Tensor:
        return x.view_as(x)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> torch.Tensor:
        return _all_reduce(grad)


class ReduceFromTP(torch.autograd.Function):
    """``g``: all-reduce forward (sums partial outputs); identity backward."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor) -> torch.Tensor:
        return _all_reduce(x)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> torch.Tensor:
        return grad


class GatherFromSP(torch.autograd.Function):
    """``f`` under sequence parallelism: all-gather the sequence forward, reduce-scatter back."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor) -> torch.Tensor:
        return _all_gather_seq(x)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> torch.Tensor:
        return _reduce_scatter_seq(grad)


class ReduceScatterToSP(torch.autograd.Function):
    """``g`` under sequence parallelism: reduce-scatter the sequence forward, all-gather back."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor) -> torch.Tensor:
        return _reduce_scatter_seq(x)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> torch.Tensor:
        return _all_gather_seq(grad)


class ColumnParallelLinear(nn.Module):
    """``Y_i = X A_i``: this rank holds output rows ``i`` of ``A`` (and of the bias)."""

    def __init__(self, dense: nn.Linear, rank: int, world: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(dense.weight.detach().chunk(world, 0)[rank].clone())
        self.bias = nn.Parameter(dense.bias.detach().chunk(world, 0)[rank].clone())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.linear(x, self.weight, self.bias)


class RowParallelLinear(nn.Module):
    """``Z = sum_i Y_i B_i``: this rank holds input columns ``i`` of ``B``; the bias is added
    once, after the partial products are summed."""

    def __init__(self, dense: nn.Linear, rank: int, world: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(dense.weight.detach().chunk(world, 1)[rank].clone())
        self.bias = nn.Parameter(dense.bias.detach().clone())

    def forward(self, y: torch.Tensor) -> torch.Tensor:
        return F.linear(y, self.weight)  # partial sum; the caller reduces, then adds the bias


class DenseBlock(nn.Module):
    """Reference: ``x + MLP(LayerNorm(x))`` on one device."""

    def __init__(self, hidden: int, ffn: int, seed: int = 0) -> None:
        super().__init__()
        torch.manual_seed(seed)
        self.norm = nn.LayerNorm(hidden, dtype=DTYPE)
        self.fc1 = nn.Linear(hidden, ffn, dtype=DTYPE)
        self.fc2 = nn.Linear(ffn, hidden, dtype=DTYPE)
        with torch.no_grad():
            self.norm.weight.uniform_(0.5, 1.5)
            self.norm.bias.uniform_(-0.1, 0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.fc2(F.gelu(self.fc1(self.norm(x))))


class ParallelBlock(nn.Module):
    """The same block split over the TP group, with or without sequence parallelism.

    Without it, every rank holds the whole sequence: the layer norm runs redundantly, ``f``
    precedes the column-parallel layer and ``g`` follows the row-parallel one. With it, each
    rank holds ``1/N`` of the sequence outside the MLP: all-gather in, reduce-scatter out.
    """

    def __init__(self, dense: DenseBlock, rank: int, world: int, sequence_parallel: bool) -> None:
        super().__init__()
        self.sp = sequence_parallel
        self.norm = nn.LayerNorm(dense.norm.normalized_shape, dtype=DTYPE)
        self.norm.load_state_dict(dense.norm.state_dict())
        self.fc1 = ColumnParallelLinear(dense.fc1, rank, world)
        self.fc2 = RowParallelLinear(dense.fc2, rank, world)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.norm(x)
        h = GatherFromSP.apply(h) if self.sp else CopyToTP.apply(h)
        partial = self.fc2(F.gelu(self.fc1(h)))
        z = ReduceScatterToSP.apply(partial) if self.sp else ReduceFromTP.apply(partial)
        return x + z + self.fc2.bias


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
    set_log(log)
    dense = DenseBlock(hidden, ffn)
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(seq, batch, hidden, generator=gen, dtype=DTYPE, requires_grad=True)
    dy = torch.randn(seq, batch, hidden, generator=gen, dtype=DTYPE)
    y = dense(x)
    y.backward(dy)

    block = ParallelBlock(dense, rank, world_size, sequence_parallel)
    chunk = seq // world_size
    rows = slice(rank * chunk, (rank + 1) * chunk) if sequence_parallel else slice(None)
    x_local = x.detach()[rows].clone().requires_grad_()
    y_local = block(x_local)
    y_local.backward(dy[rows])
    norm_grads = [block.norm.weight.grad, block.norm.bias.grad]
    if sequence_parallel:  # each rank saw 1/N of the tokens: sum the layer-norm gradients
        norm_grads = [_all_reduce(g) for g in norm_grads]
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
