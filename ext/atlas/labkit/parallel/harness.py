"""The parallelism chapter's harness: the checks its labs run, not what its pages teach.

Each ``*_matches_*`` function runs one taught implementation (from :mod:`.tensor`,
:mod:`.data`, :mod:`.pipeline`, :mod:`.context`, :mod:`.expert`) on its rank, through
:func:`atlas.labkit.run_ranks`, and compares it with a single-process reference: the dense
block, training on the whole batch, the unsplit model, full causal attention
(:func:`atlas.labkit.harness.causal_attention`), the MoE layer on all tokens. The pages show
the implementations; this module only builds inputs, runs, and compares.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn

from atlas.labkit.harness import causal_attention
from atlas.labkit.parallel.comm import CommLog
from atlas.labkit.parallel.context import ring_attention, shard_positions, ulysses_attention
from atlas.labkit.parallel.data import (
    DIMS,
    BucketedDDP,
    ShardedAdam,
    ZeroLinear,
    zero3_model,
)
from atlas.labkit.parallel.expert import (
    MoEWeights,
    load_balancing_loss,
    moe_expert_parallel,
    moe_reference,
    route,
)
from atlas.labkit.parallel.pipeline import run_pipeline, schedule, stage_forward
from atlas.labkit.parallel.tensor import DenseBlock, ParallelBlock, all_reduce

DTYPE = torch.float64


def _qkv(seq: int, heads: int, dim: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(0)
    return tuple(torch.randn(seq, heads, dim, generator=gen, dtype=DTYPE) for _ in range(3))


def ring_attention_matches_full(
    rank: int,
    world_size: int,
    balanced: bool = True,
    seq: int = 64,
    heads: int = 2,
    dim: int = 8,
) -> dict[str, Any]:
    """Ring attention on this rank's share of the sequence against full causal attention.

    Returns ``ok`` (allclose on this rank's rows), ``max_abs_diff``, ``work`` (visible query-key
    pairs this rank computed), ``positions`` (the first and last of each chunk it holds) and
    ``sent`` (key/value elements it sent).
    """
    q, k, v = _qkv(seq, heads, dim)
    full = causal_attention(q, k, v)
    pos = shard_positions(seq, rank, world_size, balanced)
    log = CommLog()
    out, work = ring_attention(q[pos], k[pos], v[pos], pos, log)
    return {
        "ok": torch.allclose(out, full[pos], rtol=1e-10, atol=1e-12),
        "max_abs_diff": (out - full[pos]).abs().max().item(),
        "work": work,
        "sent": log.elements["send"],
    }


def ulysses_matches_full(
    rank: int, world_size: int, seq: int = 64, heads: int = 4, dim: int = 8
) -> dict[str, Any]:
    """Ulysses attention on a contiguous sequence shard against full causal attention."""
    if heads % world_size:
        raise ValueError(f"Ulysses needs heads ({heads}) divisible by ranks ({world_size})")
    q, k, v = _qkv(seq, heads, dim)
    full = causal_attention(q, k, v)
    pos = shard_positions(seq, rank, world_size, balanced=False)
    log = CommLog()
    out = ulysses_attention(q[pos], k[pos], v[pos], log)
    return {
        "ok": torch.allclose(out, full[pos], rtol=1e-10, atol=1e-12),
        "max_abs_diff": (out - full[pos]).abs().max().item(),
        "sent": log.elements["all_to_all"],
    }


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


def ep_moe_matches_reference(
    rank: int,
    world_size: int,
    experts: int = 8,
    k: int = 2,
    capacity_factor: float | None = None,
    tokens: int = 16,
    hidden: int = 16,
    ffn: int = 32,
) -> dict[str, Any]:
    """Run the expert-parallel layer on this rank's tokens and compare with
    :func:`moe_reference` applied group by group to all tokens.

    ``forward_ok``: this rank's outputs. ``backward_ok``: gradients of its input, of its local
    experts (which received tokens from every rank) and of the router (all-reduced, as it is
    replicated). ``load``: rows per local expert; ``dropped``: this rank's dropped assignments;
    ``aux_loss``: the load-balancing loss of this rank's routing.
    """
    if experts % world_size:
        raise ValueError(f"{experts} experts do not split over {world_size} ranks")
    w = MoEWeights(experts, hidden, ffn)
    gen = torch.Generator().manual_seed(1)
    x_all = torch.randn(world_size, tokens, hidden, generator=gen, dtype=DTYPE)
    dy_all = torch.randn(world_size, tokens, hidden, generator=gen, dtype=DTYPE)
    x_ref = x_all.clone().requires_grad_()
    ref = torch.stack([moe_reference(x_ref[r], w, k, capacity_factor) for r in range(world_size)])
    (ref * dy_all).sum().backward()

    per_rank = experts // world_size
    mine = slice(rank * per_rank, (rank + 1) * per_rank)
    router = w.router.detach().clone().requires_grad_()
    w1 = w.w1.detach()[mine].clone().requires_grad_()
    w2 = w.w2.detach()[mine].clone().requires_grad_()
    x = x_all[rank].clone().requires_grad_()
    log = CommLog()
    out, load = moe_expert_parallel(x, router, w1, w2, k, capacity_factor, log)
    (out * dy_all[rank]).sum().backward()
    dist.all_reduce(router.grad)

    def close(a: torch.Tensor, b: torch.Tensor) -> bool:
        return torch.allclose(a, b, rtol=1e-10, atol=1e-12)

    token, _, _, probs, expert = route(x.detach(), w.router.detach(), k, capacity_factor)
    return {
        "forward_ok": close(out, ref[rank]),
        "backward_ok": close(x.grad, x_ref.grad[rank])
        and close(w1.grad, w.w1.grad[mine])
        and close(w2.grad, w.w2.grad[mine])
        and close(router.grad, w.router.grad),
        "load": load,
        "dropped": tokens * k - token.numel(),
        "aux_loss": round(load_balancing_loss(probs, expert, experts).item(), 3),
        "comm": log.as_dict(),
    }


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


def _layers(n: int, hidden: int) -> list[nn.Linear]:
    gen = torch.Generator().manual_seed(0)
    layers = []
    for _ in range(n):
        lin = nn.Linear(hidden, hidden, dtype=DTYPE)
        with torch.no_grad():
            lin.weight.copy_(torch.randn(hidden, hidden, generator=gen, dtype=DTYPE) / hidden**0.5)
            lin.bias.zero_()
        layers.append(lin)
    return layers


def _data(m: int, mb_size: int, hidden: int) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(m, mb_size, hidden, generator=gen, dtype=DTYPE)
    return x, torch.randn(m, mb_size, hidden, generator=gen, dtype=DTYPE)


def pipeline_matches_sequential(
    rank: int,
    world_size: int,
    kind: str = "1f1b",
    m: int = 8,
    v: int = 1,
    hidden: int = 16,
    mb_size: int = 4,
) -> dict[str, Any]:
    """Execute ``schedule(kind, world_size, m, v)[rank]`` with sends and receives; compare the
    loss and this rank's weight gradients with the unsplit model on the whole batch.

    Activations go forward and their gradients backward through ``isend``/``recv`` tagged
    with the microbatch and chunk. ``peak_activations`` counts the microbatches whose
    activations this rank held at once, in units of a whole stage, as in :func:`simulate`.
    """
    p = world_size
    n_layers = p * v
    layers = _layers(n_layers, hidden)
    x, y = _data(m, mb_size, hidden)

    ref_layers = _layers(n_layers, hidden)
    h = x.reshape(m * mb_size, hidden)
    for layer in ref_layers:
        h = stage_forward(layer, h)
    ref_loss = F.mse_loss(h, y.reshape(m * mb_size, hidden))
    ref_loss.backward()

    loss, peak = run_pipeline(rank, p, schedule(kind, p, m, v)[rank], layers, x, y)

    mine = [c * p + rank for c in range(v)]
    grads_ok = all(
        torch.allclose(layers[g].weight.grad, ref_layers[g].weight.grad, rtol=1e-10, atol=1e-13)
        and torch.allclose(layers[g].bias.grad, ref_layers[g].bias.grad, rtol=1e-10, atol=1e-13)
        for g in mine
    )
    holds_loss = n_layers - 1 in mine
    return {
        "loss_ok": bool(torch.allclose(loss, ref_loss.detach())) if holds_loss else None,
        "grads_ok": grads_ok,
        "peak_activations": peak / v,
        "stages": mine,
    }


def in_sequence(
    rank: int, world_size: int, calls: Sequence[tuple[Callable[..., Any], ...]]
) -> list[Any]:
    """Run several rank functions one after another in the same process group.

    ``run_ranks(in_sequence, 4, [(f, "a"), (f, "b")])`` returns, for each rank, the list
    ``[f(rank, 4, "a"), f(rank, 4, "b")]``. Why: starting ranks and their process group costs
    more than the small checks themselves, so a lab that compares variants starts them once.
    """
    return [fn(rank, world_size, *args) for fn, *args in calls]
