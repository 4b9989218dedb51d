"""Data parallelism: DDP with bucketed all-reduce, ZeRO-1/2 sharded Adam, ZeRO-3 sharded params.

Every rank holds a different slice of the global batch. The three implementations differ only
in what each rank keeps and what it communicates, so all of them must reach the parameters that
one process reaches by training on the whole batch with the same Adam:

- :class:`BucketedDDP` keeps everything, and all-reduces gradients in buckets launched from
  gradient hooks while backward is still running.
- :class:`ShardedAdam` keeps full parameters but only ``1/N`` of the Adam state; it
  reduce-scatters the gradients so that each rank receives the slice it updates, then
  all-gathers the updated parameters. Stage 2 also drops the full gradients after the
  reduce-scatter, so only ``1/N`` of them stays in memory.
- :class:`ZeroLinear` keeps only ``1/N`` of its parameters; forward and backward each gather
  the full weight for the moment they need it, and backward reduce-scatters the gradient.
"""

from __future__ import annotations

import functools
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

DIMS = (16, 32, 32, 8)
DTYPE = torch.float64


def make_model(seed: int = 0, dims: tuple[int, ...] = DIMS) -> nn.Sequential:
    """A small MLP (Linear, Tanh, ..., Linear) in float64, identical for a given seed."""
    gen = torch.Generator().manual_seed(seed)
    layers: list[nn.Module] = []
    for i, (d_in, d_out) in enumerate(zip(dims[:-1], dims[1:], strict=True)):
        lin = nn.Linear(d_in, d_out, dtype=DTYPE)
        with torch.no_grad():
            lin.weight.copy_(torch.randn(d_out, d_in, generator=gen, dtype=DTYPE) / d_in**0.5)
            lin.bias.copy_(torch.randn(d_out, generator=gen, dtype=DTYPE) * 0.1)
        layers.append(lin)
        if i < len(dims) - 2:
            layers.append(nn.Tanh())
    return nn.Sequential(*layers)


def make_batches(
    steps: int, global_batch: int, seed: int = 1, dims: tuple[int, ...] = DIMS
) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Random regression batches ``(x, y)``, the same on every rank for a given seed."""
    gen = torch.Generator().manual_seed(seed)
    return [
        (
            torch.randn(global_batch, dims[0], generator=gen, dtype=DTYPE),
            torch.randn(global_batch, dims[-1], generator=gen, dtype=DTYPE),
        )
        for _ in range(steps)
    ]


def flat_params(module: nn.Module) -> torch.Tensor:
    return torch.cat([p.detach().reshape(-1) for p in module.parameters()])


def train_reference(
    steps: int, global_batch: int, lr: float = 1e-2
) -> tuple[torch.Tensor, list[float]]:
    """One process, whole batch, Adam: the parameters every parallel variant must reach.

    Cached per process: ranks forked after a call in the parent inherit the result, and so do
    not each pay for it (nor for the imports of Adam's first step, about 2 s on a busy CPU).
    """
    return _train_reference(steps, global_batch, lr)


@functools.cache
def _train_reference(steps: int, global_batch: int, lr: float) -> tuple[torch.Tensor, list[float]]:
    model = make_model()
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    losses = []
    for x, y in make_batches(steps, global_batch):
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return flat_params(model), losses


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
        self._reset()
        for p in params:
            p.register_post_accumulate_grad_hook(self._on_grad_ready)

    def _reset(self) -> None:
        self.pending = [len(b) for b in self.buckets]
        self.ready = 0
        self.inflight: list[tuple[int, torch.Tensor, Any]] = []

    def _on_grad_ready(self, param: torch.Tensor) -> None:
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


def data_parallel_matches_reference(
    rank: int,
    world_size: int,
    method: str,
    steps: int = 5,
    global_batch: int = 32,
    lr: float = 1e-2,
    bucket_numel: int = 600,
) -> dict[str, Any]:
    """Train with ``method`` (``ddp``, ``zero1``, ``zero2``, ``zero3``) on this rank's slice of
    each batch; compare the final parameters with :func:`train_reference`.

    Returns ``match`` (allclose), ``max_abs_diff``, the per-step collective payloads in
    elements (``comm``), the number of parameters (``numel``), the elements of parameters,
    gradients and Adam state this rank keeps between steps (``param_numel``, ``grad_numel``,
    ``adam_numel``), ``traffic`` (elements this rank sends per step under ring algorithms, as
    a multiple of ``(N-1)/N``), and for DDP the gradient count at each bucket launch
    (``launches``, out of ``n_grads``).
    """
    if global_batch % world_size:
        raise ValueError(f"global_batch {global_batch} is not divisible by {world_size} ranks")
    ref_params, _ = train_reference(steps, global_batch, lr)
    local = global_batch // world_size
    log = CommLog()
    model = make_model()
    numel = sum(p.numel() for p in model.parameters())
    launches: list[list[int]] = []
    if method == "ddp":
        ddp = BucketedDDP(model, bucket_numel, log)
        opt: Any = torch.optim.Adam(model.parameters(), lr=lr)
    elif method in ("zero1", "zero2"):
        opt = ShardedAdam(list(model.parameters()), lr, stage=int(method[-1]), log=log)
    elif method == "zero3":
        model = zero3_model(model, log)
        opt = torch.optim.Adam(model.parameters(), lr=lr)
    else:
        raise ValueError(f"unknown method {method!r}: use ddp, zero1, zero2 or zero3")
    for x, y in make_batches(steps, global_batch):
        xs, ys = x[rank * local : (rank + 1) * local], y[rank * local : (rank + 1) * local]
        for p in model.parameters():
            p.grad = None
        F.mse_loss(model(xs), ys).backward()
        if method == "ddp":
            ddp.finish_grad_sync()
            launches.append(list(ddp.launches))
            ddp.launches.clear()
        opt.step()
    comm_per_step = {op: n // steps for op, n in log.as_dict().items()}
    if method == "zero3":
        final = torch.cat([m.full_flat() for m in model if isinstance(m, ZeroLinear)])
    else:
        final = flat_params(model)
    diff = (final - ref_params).abs().max().item()
    if method == "zero3":
        held = sum(p.numel() for p in model.parameters())
    else:
        held = numel
    if method == "zero3":
        grad_held = held
    elif method == "zero2":
        grad_held = opt.shard_numel
    else:
        grad_held = numel
    adam = 2 * (opt.shard_numel if isinstance(opt, ShardedAdam) else held)
    return {
        "match": torch.allclose(final, ref_params, rtol=0, atol=1e-12),
        "max_abs_diff": diff,
        "numel": numel,
        "param_numel": held,
        "grad_numel": grad_held,
        "adam_numel": adam,
        "comm": comm_per_step,
        "traffic": sum((2 if op == "all_reduce" else 1) * n for op, n in comm_per_step.items()),
        "launches": launches[-1] if launches else [],
        "n_grads": sum(1 for _ in model.parameters()),
    }
