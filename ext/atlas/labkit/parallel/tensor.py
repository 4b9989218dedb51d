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

ROLE = "taught"

DTYPE = torch.float64


def all_reduce(x: torch.Tensor, log: CommLog) -> torch.Tensor:
    """Sum ``x`` over the group (a copy); ``log`` counts the elements passed."""
    x = x.clone()
    log.add("all_reduce", x.numel())
    dist.all_reduce(x)
    return x


def all_gather_seq(x: torch.Tensor, log: CommLog) -> torch.Tensor:
    """Concatenate every rank's sequence slice along dimension 0."""
    world = dist.get_world_size()
    out = torch.empty((world * x.shape[0], *x.shape[1:]), dtype=x.dtype)
    log.add("all_gather", out.numel())
    dist.all_gather_single(out, x.contiguous())
    return out


def reduce_scatter_seq(x: torch.Tensor, log: CommLog) -> torch.Tensor:
    """Sum over the group and keep this rank's slice of the sequence (dimension 0)."""
    world = dist.get_world_size()
    out = torch.empty((x.shape[0] // world, *x.shape[1:]), dtype=x.dtype)
    log.add("reduce_scatter", x.numel())
    dist.reduce_scatter_single(out, x.contiguous())
    return out


class CopyToTP(torch.autograd.Function):
    """``f``: identity forward; backward sums the input gradients of all TP ranks."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, log: CommLog) -> torch.Tensor:
        ctx.log = log
        return x.view_as(x)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor, None]:
        return all_reduce(grad, ctx.log), None


class ReduceFromTP(torch.autograd.Function):
    """``g``: all-reduce forward (sums partial outputs); identity backward."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, log: CommLog) -> torch.Tensor:
        ctx.log = log
        return all_reduce(x, log)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor, None]:
        return grad, None


class GatherFromSP(torch.autograd.Function):
    """``f`` under sequence parallelism: all-gather the sequence forward, reduce-scatter back."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, log: CommLog) -> torch.Tensor:
        ctx.log = log
        return all_gather_seq(x, log)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor, None]:
        return reduce_scatter_seq(grad, ctx.log), None


class ReduceScatterToSP(torch.autograd.Function):
    """``g`` under sequence parallelism: reduce-scatter the sequence forward, all-gather back."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, log: CommLog) -> torch.Tensor:
        ctx.log = log
        return reduce_scatter_seq(x, log)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor, None]:
        return all_gather_seq(grad, ctx.log), None


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

    def __init__(
        self,
        dense: DenseBlock,
        rank: int,
        world: int,
        sequence_parallel: bool,
        log: CommLog | None = None,
    ) -> None:
        super().__init__()
        self.sp = sequence_parallel
        self.log = log if log is not None else CommLog()  # what each collective was passed
        self.norm = nn.LayerNorm(dense.norm.normalized_shape, dtype=DTYPE)
        self.norm.load_state_dict(dense.norm.state_dict())
        self.fc1 = ColumnParallelLinear(dense.fc1, rank, world)
        self.fc2 = RowParallelLinear(dense.fc2, rank, world)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.norm(x)
        h = GatherFromSP.apply(h, self.log) if self.sp else CopyToTP.apply(h, self.log)
        partial = self.fc2(F.gelu(self.fc1(h)))
        z = (ReduceScatterToSP if self.sp else ReduceFromTP).apply(partial, self.log)
        return x + z + self.fc2.bias
