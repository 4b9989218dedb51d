"""Checks of the labs of ``parallelism/fsdp.md``: torch's own ``fully_shard`` on gloo ranks.

Each rank function builds the same small float64 MLP, applies torch 2.13's ``fully_shard`` to
every linear layer and to the root, and runs one forward and backward on its slice of a global
batch. What it reports is measured, not computed from our formulas: the local shard of each
parameter (the DTensor's ``to_local()``), the gradients gathered back to full size, and the
element counts and dtypes of every call FSDP makes to ``torch.distributed`` (the collectives
are wrapped for the duration of the step). The labs compare these with a single process that
runs the whole batch, and with the formulas of ``atlas.labkit.parallel.fsdp``.
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Iterator
from typing import Any

import torch
import torch.distributed as dist
from torch import nn

from atlas.labkit.checks.parallel.data import make_model

ROLE = "check"

DIMS = (6, 10, 7, 3)  # uneven on 4 ranks: 10 rows are 3+3+3+1, 3 rows are 1+1+1+0
BATCH = 16


def shapes(dims: tuple[int, ...] = DIMS) -> list[list[tuple[int, ...]]]:
    """The parameter shapes of each linear layer (one FSDP group each) of ``make_model(dims)``."""
    return [[(o, i), (o,)] for i, o in zip(dims[:-1], dims[1:], strict=True)]


def _batch(dims: tuple[int, ...] = DIMS) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(7)
    x = torch.randn(BATCH, dims[0], generator=gen, dtype=torch.float64)
    y = torch.randn(BATCH, dims[-1], generator=gen, dtype=torch.float64)
    return x, y


def reference_grads(dims: tuple[int, ...] = DIMS) -> dict[str, torch.Tensor]:
    """One process, the whole batch: the gradients every sharded run must reproduce."""
    model = make_model(dims=dims)
    x, y = _batch(dims)
    nn.functional.mse_loss(model(x), y).backward()
    return {n: p.grad.detach().clone() for n, p in model.named_parameters()}


@contextlib.contextmanager
def counted_collectives(
    log: list[tuple[str, int, torch.dtype]], order: list[str] | None = None
) -> Iterator[None]:
    """Wrap the three collectives FSDP2 calls, appending ``(op, elements, dtype)`` per call
    to ``log`` (and ``"op elements"`` to ``order``, to interleave with other events).

    The elements are those of the larger buffer: the all-gather's output, the reduce-scatter's
    input, the all-reduce's tensor.
    """
    names = ("all_gather_single", "reduce_scatter_single", "all_reduce")
    originals = {n: getattr(dist, n) for n in names}

    def record(op: str, tensor: torch.Tensor) -> None:
        log.append((op, tensor.numel(), tensor.dtype))
        if order is not None:
            order.append(f"{op} {tensor.numel()}")

    def all_gather_single(output_tensor: torch.Tensor, input_tensor: torch.Tensor, **kw: Any):
        record("all_gather", output_tensor)
        return originals["all_gather_single"](output_tensor, input_tensor, **kw)

    def reduce_scatter_single(output: torch.Tensor, input: torch.Tensor, **kw: Any):  # noqa: A002
        record("reduce_scatter", input)
        return originals["reduce_scatter_single"](output=output, input=input, **kw)

    def all_reduce(tensor: torch.Tensor, *args: Any, **kw: Any):
        record("all_reduce", tensor)
        return originals["all_reduce"](tensor, *args, **kw)

    wrappers = {
        "all_gather_single": all_gather_single,
        "reduce_scatter_single": reduce_scatter_single,
        "all_reduce": all_reduce,
    }
    for n in names:
        setattr(dist, n, wrappers[n])
    try:
        yield
    finally:
        for n in names:
            setattr(dist, n, originals[n])


def _sharded_step(
    rank: int,
    world_size: int,
    mesh_shape: tuple[int, ...],
    reshard_after_forward: bool | None = None,
    mp: bool = False,
    prefetch: bool = False,
    dims: tuple[int, ...] = DIMS,
) -> tuple[nn.Module, list[tuple[str, int, torch.dtype]], list[str]]:
    """``fully_shard`` on each linear and the root, one forward and backward on this rank's
    slice of the batch; returns the model, the collective log and the order of events."""
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard

    names = ("replicate", "shard")[-len(mesh_shape) :]
    mesh = init_device_mesh("cpu", mesh_shape, mesh_dim_names=names)
    model = make_model(dims=dims)
    policy = (
        MixedPrecisionPolicy(param_dtype=torch.float32, reduce_dtype=torch.float64)
        if mp
        else MixedPrecisionPolicy()
    )
    linears = [m for m in model if isinstance(m, nn.Linear)]
    for lin in linears:
        fully_shard(lin, mesh=mesh, reshard_after_forward=reshard_after_forward, mp_policy=policy)
    fully_shard(model, mesh=mesh, mp_policy=policy)
    if prefetch:
        for a, b in zip(linears[:-1], linears[1:], strict=True):
            a.set_modules_to_forward_prefetch([b])
    log: list[tuple[str, int, torch.dtype]] = []
    order: list[str] = []
    for i, lin in enumerate(linears):
        lin.register_forward_hook(lambda *_, i=i: order.append(f"compute {i}"))

    x, y = _batch(dims)
    local = x.chunk(world_size)[rank], y.chunk(world_size)[rank]
    with counted_collectives(log, order):
        out = model(local[0])
        nn.functional.mse_loss(out.to(torch.float64), local[1]).backward()
    return model, list(log), order


def fully_shard_matches_reference(
    rank: int, world_size: int, reference: dict[str, torch.Tensor]
) -> dict[str, Any]:
    """Shards, gradients and traffic of ``fully_shard`` on a 1-D mesh of all ranks."""
    from torch.distributed.tensor import DTensor, Shard

    model, log, _ = _sharded_step(rank, world_size, (world_size,))
    full = make_model(dims=DIMS)  # the unsharded initial weights, the same seed
    rows, shard_ok, grad_ok = {}, True, True
    for (name, p), (_, q) in zip(model.named_parameters(), full.named_parameters(), strict=True):
        local = p.to_local()
        rows[name] = local.shape[0]
        shard_ok &= isinstance(p, DTensor) and p.placements == (Shard(0),)
        shard_ok &= torch.equal(local, _rows_of(q.detach(), rank, world_size))
        grad_ok &= torch.allclose(p.grad.full_tensor(), reference[name], rtol=1e-12, atol=1e-14)
    return {"rows": rows, "shard_ok": shard_ok, "grad_ok": grad_ok, "traffic": _traffic(log)}


def _rows_of(t: torch.Tensor, rank: int, world: int) -> torch.Tensor:
    """Rank ``rank``'s dim-0 piece of ``t`` as ``torch.chunk`` cuts it (empty past the end)."""
    chunks = t.chunk(world)
    return chunks[rank] if rank < len(chunks) else t[:0]


def _traffic(log: list[tuple[str, int, torch.dtype]]) -> dict[str, int]:
    counts: Counter[str] = Counter()
    for op, numel, _ in log:
        counts[op] += numel
    return dict(sorted(counts.items()))


def variants(rank: int, world_size: int, reference: dict[str, torch.Tensor]) -> dict[str, Any]:
    """The traffic of four configurations, each checked against the reference gradients:
    ``reshard_after_forward=False``; HSDP on a 2 x (world/2) mesh; mixed precision (float32
    compute and all-gathers, float64 reduction); explicit forward prefetching."""
    out: dict[str, Any] = {}

    def grads_ok(model: nn.Module, rtol: float = 1e-12) -> bool:
        return all(
            torch.allclose(p.grad.full_tensor(), reference[n], rtol=rtol)
            for n, p in model.named_parameters()
        )

    model, log, _ = _sharded_step(rank, world_size, (world_size,), reshard_after_forward=False)
    out["keep"] = {"grad_ok": grads_ok(model), "traffic": _traffic(log)}
    model, log, _ = _sharded_step(rank, world_size, (2, world_size // 2))
    out["hsdp"] = {
        "grad_ok": grads_ok(model),
        "traffic": _traffic(log),
        "placements": [str(pl) for pl in next(model.parameters()).placements],
    }
    model, log, _ = _sharded_step(rank, world_size, (world_size,), mp=True)
    out["mp"] = {
        "grad_ok": grads_ok(model, rtol=1e-5),  # float32 compute
        "dtypes": sorted({f"{op} {dt}".replace("torch.", "") for op, _, dt in log}),
        "param_dtype": str(next(model.parameters()).dtype).replace("torch.", ""),
    }
    _, _, plain = _sharded_step(rank, world_size, (world_size,))
    _, _, ahead = _sharded_step(rank, world_size, (world_size,), prefetch=True)
    out["order"] = {"implicit": _forward_part(plain), "explicit": _forward_part(ahead)}
    return out


def _forward_part(order: list[str]) -> list[str]:
    """The events up to the last layer's forward compute."""
    last = max(i for i, e in enumerate(order) if e.startswith("compute"))
    return order[: last + 1]


def flat_layout_matches_torch(numels: list[int], world: int) -> bool:
    """Our FSDP1 layout (``flat_shard_spans``) against FSDP1's own ``FlatParamHandle._get_shard``.

    The flat buffer is filled with its element indices; torch cuts and pads it for each rank, and
    the indices in each torch shard (padding dropped) must be exactly the elements our spans name.
    """
    from torch.distributed.fsdp._flat_param import FlatParamHandle

    from atlas.labkit.parallel.fsdp import flat_shard_spans

    offsets = [sum(numels[:p]) for p in range(len(numels))]
    flat = torch.arange(1, sum(numels) + 1)  # 0 is reserved for the padding
    shards = [FlatParamHandle._get_shard(flat, r, world)[0] for r in range(world)]
    if len({s.numel() for s in shards}) != 1:  # torch pads every shard to the same size
        return False
    for shard, spans in zip(shards, flat_shard_spans(numels, world), strict=True):
        ours = [offsets[p] + i + 1 for p, start, stop in spans for i in range(start, stop)]
        if shard[shard > 0].tolist() != ours:
            return False
    return True
