"""Data parallelism: DDP with bucketed all-reduce, ZeRO-1/2 sharded Adam, ZeRO-3 sharded params.

Every rank holds a different slice of the global batch. The three implementations differ only
in what each rank keeps and what it communicates, so all of them must reach the parameters that
one process reaches by training on the whole batch with the same Adam:

- :class:`BucketedDDP` keeps everything, and all-reduces gradients in buckets launched from
  gradient hooks while backward is still running.
- :class:`ShardedAdam` keeps full parameters but only ``1/N`` of the Adam state; it
  reduce-scatters the gradients so that each rank receives the slice it updates, then
  all-gathers the updated parameters. Stage 2 also drops the full gradients after the
  reduce-scatter and keeps only the reduced slice, so only ``1/N`` of them stays in memory.
- :class:`ZeroLinear` keeps only ``1/N`` of its parameters; forward and backward each gather
  the full weight for the moment they need it, and backward reduce-scatters the gradient.
"""

from __future__ import annotations

import math
from typing import Any

import torch

# Creating the first optimizer of a process imports torch._dynamo (about 1 s). Imported with this
# module, in the process that forks the ranks, it is inherited instead of paid by every rank.
import torch._dynamo  # noqa: F401
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn

from atlas.labkit.parallel.comm import CommLog

ROLE = "taught"

DIMS = (16, 32, 32, 8)
DTYPE = torch.float64


class BucketedDDP:
    """Gradient all-reduce in buckets, each launched as soon as its last gradient is ready.

    Buckets are filled in reverse parameter order because backward produces the gradients of
    the last layers first. ``launches`` records how many gradients were ready when each bucket
    was launched: a number below the total means communication overlapped the rest of backward.
    """

    def __init__(self, module: nn.Module, bucket_numel: int, log: CommLog | None = None) -> None:
        self.module = module
        self.world = dist.get_world_size()
        self.log = log if log is not None else CommLog()
        params = [p for p in module.parameters() if p.requires_grad]
        self.buckets: list[list[nn.Parameter]] = [[]]
        for p in reversed(params):
            if sum(q.numel() for q in self.buckets[-1]) >= bucket_numel:
                self.buckets.append([])
            self.buckets[-1].append(p)
        self.bucket_of = {id(p): i for i, b in enumerate(self.buckets) for p in b}
        self.n_params = len(params)
        self.launches: list[int] = []
        self.sync = True  # False while accumulating microbatches: gradients just add up
        self._reset()
        for p in params:
            p.register_post_accumulate_grad_hook(self._on_grad_ready)

    def _reset(self) -> None:
        self.pending = [len(b) for b in self.buckets]
        self.ready = 0
        self.inflight: list[tuple[int, torch.Tensor, Any]] = []

    def _on_grad_ready(self, param: torch.Tensor) -> None:
        if not self.sync:  # not the last microbatch of the step: no communication
            return
        self.ready += 1
        i = self.bucket_of[id(param)]
        self.pending[i] -= 1
        if self.pending[i] == 0:
            flat = torch.cat([p.grad.reshape(-1) for p in self.buckets[i]]) / self.world
            self.log.add("all_reduce", flat.numel())
            self.inflight.append((i, flat, dist.all_reduce(flat, async_op=True)))
            self.launches.append(self.ready)

    def finish_grad_sync(self) -> None:
        """Wait for every bucket and write the averaged gradients back (call after backward)."""
        for i, flat, handle in self.inflight:
            handle.wait()
            offset = 0
            for p in self.buckets[i]:
                p.grad.copy_(flat[offset : offset + p.numel()].view_as(p))
                offset += p.numel()
        self._reset()


class ShardedAdam:
    """ZeRO stage 1 or 2: each rank keeps Adam state for ``1/N`` of the flattened parameters.

    The traffic is that of DDP: a reduce-scatter and an all-gather each send ``(N-1)/N`` of
    the parameters per rank, together what one ring all-reduce sends.
    """

    def __init__(
        self, params: list[nn.Parameter], lr: float, stage: int, log: CommLog | None = None
    ) -> None:
        if stage not in (1, 2):
            raise ValueError(f"ShardedAdam: stage must be 1 or 2, got {stage}")
        self.params, self.stage = params, stage
        self.rank, self.world = dist.get_rank(), dist.get_world_size()
        self.log = log if log is not None else CommLog()
        total = sum(p.numel() for p in params)
        self.shard_numel = math.ceil(total / self.world)
        self.padded = self.shard_numel * self.world
        lo = self.rank * self.shard_numel
        self.master = self._flatten([p.detach() for p in params])[lo : lo + self.shard_numel]
        self.master = self.master.clone().requires_grad_()
        self.opt = torch.optim.Adam([self.master], lr=lr)

    def _flatten(self, tensors: list[torch.Tensor]) -> torch.Tensor:
        flat = torch.cat([t.reshape(-1) for t in tensors])
        return F.pad(flat, (0, self.padded - flat.numel()))

    def step(self) -> None:
        grad = self._flatten([p.grad for p in self.params]) / self.world
        shard_grad = torch.empty(self.shard_numel, dtype=grad.dtype)
        self.log.add("reduce_scatter", grad.numel())
        dist.reduce_scatter_single(shard_grad, grad)  # each rank receives the slice it owns
        if self.stage == 2:  # keep only the reduced slice: free the full gradients
            for p in self.params:
                p.grad = None
        self.master.grad = shard_grad
        self.opt.step()
        if self.stage == 1:  # stage 1 keeps the full gradients; the slice was a scratch copy
            self.master.grad = None
        full = torch.empty(self.padded, dtype=self.master.dtype)
        self.log.add("all_gather", full.numel())
        dist.all_gather_single(full, self.master.detach())
        offset = 0
        with torch.no_grad():
            for p in self.params:
                p.copy_(full[offset : offset + p.numel()].view_as(p))
                offset += p.numel()


class _ShardedLinearFn(torch.autograd.Function):
    """``y = x W^T + b`` where only a shard of ``[W, b]`` lives on this rank between uses."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, shard: torch.Tensor, layer: ZeroLinear) -> torch.Tensor:
        weight, bias = layer.gather(shard)
        ctx.save_for_backward(x, shard)  # not the gathered weight: it is freed after forward
        ctx.layer = layer
        return F.linear(x, weight, bias)

    @staticmethod
    def backward(ctx: Any, grad_y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, None]:
        x, shard = ctx.saved_tensors
        layer: ZeroLinear = ctx.layer
        weight, _ = layer.gather(shard)  # gathered again, as ZeRO-3 does in backward
        grad_x = grad_y @ weight
        grad_full = torch.cat([(grad_y.T @ x).reshape(-1), grad_y.sum(0)])
        grad_full = F.pad(grad_full, (0, layer.padded - grad_full.numel())) / layer.world
        grad_shard = torch.empty_like(shard)
        layer.log.add("reduce_scatter", grad_full.numel())
        dist.reduce_scatter_single(grad_shard, grad_full)
        return grad_x, grad_shard, None


class ZeroLinear(nn.Module):
    """A linear layer under ZeRO-3: its only parameter is this rank's ``1/N`` of ``[W, b]``."""

    def __init__(self, dense: nn.Linear, log: CommLog | None = None) -> None:
        super().__init__()
        self.rank, self.world = dist.get_rank(), dist.get_world_size()
        self.log = log if log is not None else CommLog()
        self.out_features, self.in_features = dense.weight.shape
        numel = dense.weight.numel() + dense.bias.numel()
        self.shard_numel = math.ceil(numel / self.world)
        self.padded = self.shard_numel * self.world
        flat = torch.cat([dense.weight.detach().reshape(-1), dense.bias.detach()])
        flat = F.pad(flat, (0, self.padded - numel))
        lo = self.rank * self.shard_numel
        self.shard = nn.Parameter(flat[lo : lo + self.shard_numel].clone())

    def gather(self, shard: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        full = torch.empty(self.padded, dtype=shard.dtype)
        self.log.add("all_gather", full.numel())
        dist.all_gather_single(full, shard.detach().contiguous())
        n_w = self.out_features * self.in_features
        weight = full[:n_w].view(self.out_features, self.in_features)
        return weight, full[n_w : n_w + self.out_features]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ShardedLinearFn.apply(x, self.shard, self)

    def full_flat(self) -> torch.Tensor:
        weight, bias = self.gather(self.shard)
        return torch.cat([weight.reshape(-1), bias])


def zero3_model(dense: nn.Sequential, log: CommLog) -> nn.Sequential:
    """Replace every ``nn.Linear`` of ``dense`` by its ZeRO-3 sharded counterpart."""
    return nn.Sequential(*[ZeroLinear(m, log) if isinstance(m, nn.Linear) else m for m in dense])


def exposed_comm(layers: int, t_backward: float, t_comm: float) -> float:
    """Time the gradient all-reduces add after backward ends.

    Backward finishes the gradients of one more layer (one bucket) every ``t_backward``
    seconds; each bucket's all-reduce takes ``t_comm`` on the one link, which serves the
    buckets in order. Returns when the last all-reduce ends, minus when backward ended.
    """
    link_free = 0.0
    for i in range(1, layers + 1):
        link_free = max(link_free, i * t_backward) + t_comm
    return link_free - layers * t_backward


def tokens_to_hide(peak_flops: float, link_bytes_per_s: float, grad_bytes: int = 2) -> float:
    """Tokens per device per step above which the gradient all-reduce can hide behind
    backward: backward spends 4 FLOPs per parameter per token (two thirds of the 6 of a
    training step), and a ring all-reduce sends about twice the gradient's bytes."""
    return peak_flops * (2 * grad_bytes) / (4 * link_bytes_per_s)


def sharded_grad_norm(shard: torch.Tensor, group: Any = None) -> torch.Tensor:
    """The global L2 norm of a gradient that is sharded over ``group``: each rank squares and
    sums its own elements, one all-reduce adds the sums, and every rank takes the root."""
    total = shard.pow(2).sum().reshape(1)
    dist.all_reduce(total, group=group)
    return total.sqrt()[0]


def hsdp_reduce(
    flat: torch.Tensor, shard_group: Any, replica_group: Any, log: CommLog | None = None
) -> torch.Tensor:
    """HSDP's gradient reduction: reduce-scatter inside the shard group (a node), all-reduce of
    the reduced shard across the replica group (the same position in every node), and return
    this rank's shard of the mean over all ranks. ``flat`` is padded to the shard group size."""
    log = log if log is not None else CommLog()
    n = dist.get_world_size(shard_group)
    shard = torch.empty(flat.numel() // n, dtype=flat.dtype)
    log.add("reduce_scatter_intra", flat.numel())
    dist.reduce_scatter_single(shard, flat.contiguous(), group=shard_group)
    log.add("all_reduce_inter", shard.numel())
    dist.all_reduce(shard, group=replica_group)
    return shard / dist.get_world_size()


def newton_schulz(g: torch.Tensor, steps: int = 5) -> torch.Tensor:
    """Muon's orthogonalisation of an update matrix: a quintic Newton-Schulz iteration that
    pushes every singular value of ``g / ||g||`` towards 1 (coefficients of Jordan et al.)."""
    a, b, c = 3.4445, -4.7750, 2.0315
    x = g / (g.norm() + 1e-7)
    for _ in range(steps):
        xx = x @ x.T
        x = a * x + (b * xx + c * xx @ xx) @ x
    return x


def adam_direction(g: torch.Tensor, m: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """One Adam update direction, elementwise: ``m' / (sqrt(v') + eps)`` with the moments
    updated from ``g`` (bias correction left out; it is elementwise too)."""
    m = 0.9 * m + 0.1 * g
    v = 0.999 * v + 0.001 * g * g
    return m / (v.sqrt() + 1e-8)
