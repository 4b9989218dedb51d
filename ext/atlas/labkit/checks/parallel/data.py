"""Checks of the labs of ``parallelism/data.md``.

The chapter's checks: the checks its labs run, not what its pages teach.
"""

from __future__ import annotations

import functools
from typing import Any

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn

from atlas.labkit.checks.parallel.common import DTYPE
from atlas.labkit.parallel.comm import CommLog
from atlas.labkit.parallel.data import (
    DIMS,
    BucketedDDP,
    ShardedAdam,
    ZeroLinear,
    hsdp_reduce,
    sharded_grad_norm,
    zero3_model,
)
from atlas.labkit.parallel.memory import ledger

ROLE = "check"


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


def data_parallel_matches_reference(
    rank: int,
    world_size: int,
    method: str,
    steps: int = 5,
    global_batch: int = 32,
    lr: float = 1e-2,
    bucket_numel: int = 600,
    accumulate: int = 1,
) -> dict[str, Any]:
    """Train with ``method`` (``ddp``, ``zero1``, ``zero2``, ``zero3``) on this rank's slice of
    each batch; compare the final parameters with :func:`train_reference`.

    Returns ``match`` (allclose), ``max_abs_diff``, the per-step collective payloads in
    elements (``comm``), the number of parameters (``numel``), the elements of parameters,
    gradients and Adam state this rank keeps between steps (``param_numel``, ``grad_numel``,
    ``adam_numel``), ``traffic`` (elements this rank sends per step under ring algorithms, as
    a multiple of ``(N-1)/N``), and for DDP the gradient count at each bucket launch
    (``launches``, out of ``n_grads``). With ``accumulate = k`` (DDP only) each rank's slice
    is split into ``k`` microbatches whose gradients add up, and only the last backward of a
    step communicates; ``calls`` then counts the all-reduces of one step.
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
    if accumulate > 1 and method != "ddp":
        raise ValueError("accumulation is shown with DDP only")
    for x, y in make_batches(steps, global_batch):
        xs, ys = x[rank * local : (rank + 1) * local], y[rank * local : (rank + 1) * local]
        for p in model.parameters():
            p.grad = None
        for j, (xm, ym) in enumerate(zip(xs.chunk(accumulate), ys.chunk(accumulate), strict=True)):
            if method == "ddp":
                ddp.sync = j == accumulate - 1  # only the last microbatch communicates
            (F.mse_loss(model(xm), ym) / accumulate).backward()
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
    held = held_elements(model, opt)
    return {
        "match": torch.allclose(final, ref_params, rtol=0, atol=1e-12),
        "max_abs_diff": diff,
        "numel": numel,
        "param_numel": held["params"],
        "grad_numel": held["grads"],
        "adam_numel": held["moments"],
        "held": held,
        "comm": comm_per_step,
        "traffic": sum((2 if op == "all_reduce" else 1) * n for op, n in comm_per_step.items()),
        "launches": launches[-1] if launches else [],
        "n_grads": sum(1 for _ in model.parameters()),
        "calls": {op: n // steps for op, n in log.calls.items()},
        "buckets": len(ddp.buckets) if method == "ddp" else 0,
    }


def held_elements(model: nn.Module, opt: Any) -> dict[str, int]:
    """Elements of the tensors a rank holds between steps, measured from the tensors
    themselves: the storages behind the model's parameters, their gradients, the optimizer's
    moments and (for :class:`ShardedAdam`) its master slice and that slice's gradient. Each
    storage is counted once, by its size in elements, whatever views point into it."""
    seen: set[int] = set()

    def size(tensors: list[torch.Tensor | None]) -> int:
        total = 0
        for t in tensors:
            if t is None:
                continue
            storage = t.untyped_storage()
            if storage.data_ptr() in seen:
                continue
            seen.add(storage.data_ptr())
            total += storage.nbytes() // t.element_size()
        return total

    params = list(model.parameters())
    inner = opt.opt if isinstance(opt, ShardedAdam) else opt
    master = [opt.master] if isinstance(opt, ShardedAdam) else []
    moments = [t for state in inner.state.values() for name, t in state.items() if name != "step"]
    return {
        "params": size(params),
        "grads": size([p.grad for p in params] + [m.grad for m in master]),
        "moments": size(moments),
        "master": size(master),
    }


def zero_memory_matches_ledger(run: dict[str, Any], method: str, world: int) -> bool:
    """The measured elements of one rank against the ledger of :mod:`.memory`: each term held
    is the ledger's share of that term (``ledger(n, dp, stage)[t] / ledger(n)[t]``) of the full
    model, for weights, gradients and Adam's two moments."""
    stage = {"ddp": 0, "zero1": 1, "zero2": 2, "zero3": 3}[method]
    n = run["numel"]
    full, mine = ledger(n), ledger(n, dp=world, zero_stage=stage)
    share = {t: mine[t] / full[t] for t in ("weights", "gradients", "adam_m", "adam_v")}
    held = run["held"]
    return (
        abs(held["params"] - share["weights"] * n) < 0.5
        and abs(held["grads"] - share["gradients"] * n) < 0.5
        and abs(held["moments"] - (share["adam_m"] + share["adam_v"]) * n) < 0.5
    )


def clipping_matches_dense(rank: int, world_size: int, numel: int = 1000) -> dict[str, Any]:
    """Global-norm clipping of a gradient sharded over the ranks (ZeRO-2/3) against
    ``torch.nn.utils.clip_grad_norm_`` on the whole gradient in one process."""
    gen = torch.Generator().manual_seed(7)
    full = torch.randn(numel, generator=gen, dtype=DTYPE)
    shard = full.chunk(world_size)[rank].clone()
    norm = sharded_grad_norm(shard)
    param = torch.zeros(numel, dtype=DTYPE, requires_grad=True)
    param.grad = full.clone()
    dense_norm = torch.nn.utils.clip_grad_norm_([param], max_norm=1.0)
    clipped = shard * min(1.0, 1.0 / (float(norm) + 1e-6))
    return {
        "norm_ok": bool(torch.isclose(norm, dense_norm, rtol=1e-12)),
        "clip_ok": torch.allclose(clipped, param.grad.chunk(world_size)[rank], rtol=1e-6),
        "norm": round(float(norm), 4),
    }


def hsdp_matches_dense(rank: int, world_size: int, per_node: int = 2, numel: int = 1000) -> dict:
    """HSDP on ``world_size`` ranks in nodes of ``per_node``: each rank's shard of the reduced
    gradient against the mean of every rank's gradient, computed densely; and the elements
    each rank passed to the collectives inside and across nodes."""
    nodes = world_size // per_node
    shard_groups = [
        dist.new_group(list(range(n * per_node, (n + 1) * per_node))) for n in range(nodes)
    ]
    replica_groups = [dist.new_group(list(range(i, world_size, per_node))) for i in range(per_node)]
    shard_group = shard_groups[rank // per_node]
    replica_group = replica_groups[rank % per_node]

    def grad_of(r: int) -> torch.Tensor:
        return torch.randn(numel, generator=torch.Generator().manual_seed(100 + r), dtype=DTYPE)

    log = CommLog()
    shard = hsdp_reduce(grad_of(rank), shard_group, replica_group, log)
    mean = torch.stack([grad_of(r) for r in range(world_size)]).mean(0)
    mine = mean.chunk(per_node)[rank % per_node]
    return {"ok": torch.allclose(shard, mine, rtol=1e-12, atol=1e-14), "comm": log.as_dict()}


def matrix_update_shards(rows: int = 8, cols: int = 16, world: int = 4) -> dict[str, bool]:
    """Whether an optimizer's update of a weight matrix can be computed shard by shard: Adam's
    is elementwise (the update of a slice is the slice of the update); Muon's Newton-Schulz
    orthogonalisation is not, unless the whole matrix is gathered first."""
    from atlas.labkit.parallel.data import adam_direction, newton_schulz

    gen = torch.Generator().manual_seed(3)
    g = torch.randn(rows, cols, generator=gen, dtype=DTYPE)
    m, v = torch.zeros_like(g), torch.zeros_like(g)
    pieces = g.reshape(-1).chunk(world)  # ZeRO's flat shards cut across rows
    adam_full = adam_direction(g, m, v).reshape(-1).chunk(world)
    adam_sharded = [adam_direction(p, torch.zeros_like(p), torch.zeros_like(p)) for p in pieces]
    muon_full = newton_schulz(g).reshape(-1).chunk(world)
    muon_sharded = [newton_schulz(p.reshape(-1, cols)).reshape(-1) for p in pieces]
    gathered = newton_schulz(torch.cat(pieces).reshape(rows, cols)).reshape(-1).chunk(world)
    return {
        "adam_shards_ok": all(
            torch.allclose(a, b) for a, b in zip(adam_full, adam_sharded, strict=True)
        ),
        "muon_shards_ok": all(
            torch.allclose(a, b, atol=1e-6) for a, b in zip(muon_full, muon_sharded, strict=True)
        ),
        "muon_gathered_ok": all(
            torch.allclose(a, b) for a, b in zip(muon_full, gathered, strict=True)
        ),
    }
