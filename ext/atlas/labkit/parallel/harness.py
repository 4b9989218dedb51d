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
import math
from typing import Any

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn

from atlas.labkit.parallel.comm import CommLog
from atlas.labkit.parallel.context import ring_attention, shard_positions, ulysses_attention
from atlas.labkit.parallel.data import (
    DIMS,
    BucketedDDP,
    ShardedAdam,
    ZeroLinear,
    hsdp_reduce,
    sharded_grad_norm,
    zero3_model,
)
from atlas.labkit.parallel.expert import (
    MoEWeights,
    expert_mlp,
    load_balancing_loss,
    moe_expert_parallel,
    route,
)
from atlas.labkit.parallel.memory import ledger
from atlas.labkit.parallel.pipeline import run_pipeline, schedule, stage_forward
from atlas.labkit.parallel.tensor import DenseBlock, ParallelBlock, all_reduce

DTYPE = torch.float64


def sdpa_causal(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Full causal attention by PyTorch's own ``scaled_dot_product_attention`` on one device:
    the reference the context-parallel labs compare with, sharing no code with
    :mod:`.context`. Tensors are ``[sequence, heads, dim]``."""
    out = F.scaled_dot_product_attention(
        q.transpose(0, 1), k.transpose(0, 1), v.transpose(0, 1), is_causal=True
    )
    return out.transpose(0, 1)


def ring_work_formula(seq: int, rank: int, world: int, balanced: bool) -> int:
    """Visible (query, key) pairs of one rank under a causal mask, in closed form: a chunk of
    ``n`` queries starting at position ``j n`` sees ``j n^2 + n (n + 1) / 2`` pairs."""
    if not balanced:
        n = seq // world
        return rank * n * n + n * (n + 1) // 2
    n = seq // (2 * world)
    return (2 * world - 1) * n * n + n * (n + 1)


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
    """Ring attention on this rank's share of the sequence against :func:`sdpa_causal`.

    Returns ``ok`` (allclose on this rank's rows), ``max_abs_diff``, ``work`` (visible query-key
    pairs this rank computed) with ``work_ok`` (equal to :func:`ring_work_formula`), and
    ``sent`` (key/value elements it sent) with ``sent_ok`` (``P - 1`` blocks of ``2 (s/P) h d``).
    """
    q, k, v = _qkv(seq, heads, dim)
    full = sdpa_causal(q, k, v)
    pos = shard_positions(seq, rank, world_size, balanced)
    log = CommLog()
    out, work = ring_attention(q[pos], k[pos], v[pos], pos, log)
    return {
        "ok": torch.allclose(out, full[pos], rtol=1e-10, atol=1e-12),
        "max_abs_diff": (out - full[pos]).abs().max().item(),
        "work": work,
        "work_ok": work == ring_work_formula(seq, rank, world_size, balanced),
        "sent": log.elements["send"],
        "sent_ok": log.elements["send"] == (world_size - 1) * 2 * (seq // world_size) * heads * dim,
    }


def ulysses_matches_full(
    rank: int, world_size: int, seq: int = 64, heads: int = 4, dim: int = 8
) -> dict[str, Any]:
    """Ulysses attention on a contiguous sequence shard against :func:`sdpa_causal`;
    ``sent_ok``: four all-to-alls of ``(s/P) h d`` elements, of which ``(P-1)/P`` leave."""
    if heads % world_size:
        raise ValueError(f"Ulysses needs heads ({heads}) divisible by ranks ({world_size})")
    q, k, v = _qkv(seq, heads, dim)
    full = sdpa_causal(q, k, v)
    pos = shard_positions(seq, rank, world_size, balanced=False)
    log = CommLog()
    out = ulysses_attention(q[pos], k[pos], v[pos], log)
    return {
        "ok": torch.allclose(out, full[pos], rtol=1e-10, atol=1e-12),
        "max_abs_diff": (out - full[pos]).abs().max().item(),
        "sent": log.elements["all_to_all"],
        "sent_ok": log.elements["all_to_all"] == 4 * (seq // world_size) * heads * dim,
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
    moments = [
        t for state in inner.state.values() for name, t in state.items() if name != "step"
    ]
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
    replicated). ``load``: rows per local expert, and ``load_ok`` whether they equal the
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
    (out * dy_all[rank]).sum().backward()
    dist.all_reduce(router.grad)

    def close(a: torch.Tensor, b: torch.Tensor) -> bool:
        return torch.allclose(a, b, rtol=1e-10, atol=1e-12)

    token, _, _, probs, expert = route(x.detach(), w.router.detach(), k, capacity_factor, gates)
    return {
        "forward_ok": close(out, ref[rank]),
        "backward_ok": close(x.grad, x_ref.grad[rank])
        and close(w1.grad, w.w1.grad[mine])
        and close(w2.grad, w.w2.grad[mine])
        and close(router.grad, w.router.grad),
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
    return float(w.router.grad.norm())


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


# ---------------------------------------------------------------------------------------------
# Activation memory, measured: the tensors autograd keeps for one rank's GPT layer
# ---------------------------------------------------------------------------------------------


class _Gather(torch.autograd.Function):
    """Sequence-parallel all-gather, stood in for on one process (the other ranks' rows are
    copies: only sizes matter here). Keeps nothing for backward."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, t: int) -> torch.Tensor:
        return torch.cat([x] * t)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor, None]:  # pragma: no cover
        raise NotImplementedError


class _GatherLinear(torch.autograd.Function):
    """Megatron's column-parallel linear under SP: all-gather the sequence, multiply, and keep
    only this rank's shard of the input (gathered again in backward)."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, w: torch.Tensor, t: int) -> torch.Tensor:
        ctx.save_for_backward(x, w)
        return F.linear(torch.cat([x] * t), w)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[None, None, None]:  # pragma: no cover
        raise NotImplementedError


def _dropout(x: torch.Tensor, p: float = 0.1) -> torch.Tensor:
    out, _ = torch.native_dropout(x, p, True)  # keeps a one-byte mask, as GPU kernels do
    return out


def measured_activation_bytes(
    seq: int, batch: int, hidden: int, heads: int, tp: int = 1, sp: bool = False
) -> dict[str, int]:
    """Bytes autograd keeps for backward after one forward of one tensor-parallel rank's share
    of a GPT layer (bf16, dropout with byte masks, no recomputation), counted with saved-tensor
    hooks, each storage once, parameters excluded.

    The layer is written here from the architecture, not from the formula: pre-norm attention
    (QKV column-parallel over ``heads / tp`` heads, softmax, dropout, output row-parallel),
    then a GeLU MLP of width ``4 h`` (fc1 column-, fc2 row-parallel), each branch ending in
    dropout and a residual add. Under SP the norms and dropouts see ``seq / tp`` rows and the
    linears after an all-gather keep only their input's shard. Returns ``total`` and
    ``norm_stats``, the per-token mean and reciprocal deviation of the two norms, which the
    paper's count leaves out.
    """
    s, b, h, t, dt = seq, batch, hidden, tp, torch.bfloat16
    a, d = heads // t, hidden // heads
    gen = torch.Generator().manual_seed(0)

    def weight(*shape: int) -> nn.Parameter:
        return nn.Parameter(torch.randn(*shape, generator=gen).to(dt) / shape[-1] ** 0.5)

    ln1, ln2 = nn.LayerNorm(h, dtype=dt), nn.LayerNorm(h, dtype=dt)
    w_qkv, w_o = weight(3 * a * d, h), weight(h, a * d)
    w_1, w_2 = weight(4 * h // t, h), weight(h, 4 * h // t)
    params = [*ln1.parameters(), *ln2.parameters(), w_qkv, w_o, w_1, w_2]
    rows = s // t if sp else s
    x = torch.randn(rows, b, h, generator=gen).to(dt).requires_grad_()
    ignore = {p.untyped_storage().data_ptr() for p in params}
    seen: dict[int, int] = {}
    stats = 0

    def pack(tensor: torch.Tensor) -> torch.Tensor:
        nonlocal stats
        storage = tensor.untyped_storage()
        if storage.data_ptr() not in ignore and storage.data_ptr() not in seen:
            seen[storage.data_ptr()] = storage.nbytes()
            if tensor.dim() == 3 and tensor.shape[-1] == 1:  # a norm's per-token statistics
                stats += storage.nbytes()
        return tensor

    def column(inp: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        return _GatherLinear.apply(inp, w, t) if sp else F.linear(inp, w)

    def row(inp: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        out = F.linear(inp, w)  # the partial sums; all-reduce (or reduce-scatter) keeps nothing
        return out[:rows] if sp else out

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        qkv = column(ln1(x), w_qkv).view(s, b, 3, a, d)

        def split(i: int) -> torch.Tensor:  # (s, b, a, d) -> (b a, s, d)
            return qkv[:, :, i].permute(1, 2, 0, 3).reshape(b * a, s, d).clone()

        q, k, v = split(0) * (1.0 / math.sqrt(d)), split(1), split(2)
        future = torch.full((s, s), float("-inf"), dtype=dt).triu(1)
        probs = _dropout(torch.softmax(torch.bmm(q, k.transpose(1, 2)) + future, dim=-1))
        ctx = torch.bmm(probs, v).view(b, a, s, d).permute(2, 0, 1, 3).reshape(s, b, a * d)
        y = x + _dropout(row(ctx, w_o))
        mlp = row(F.gelu(column(ln2(y), w_1)), w_2)
        (y + _dropout(mlp)).sum()
    return {"total": sum(seen.values()), "norm_stats": stats}


# ---------------------------------------------------------------------------------------------
# Megatron-LM's rank generator, run from the git objects at the pin
# ---------------------------------------------------------------------------------------------


from atlas.labkit.pinned import definitions  # noqa: E402


@functools.cache
def _megatron_rank_generator() -> type:
    import typing

    scope = definitions(
        "megatron",
        "megatron/core/parallel_state.py",
        ("generate_masked_orthogonal_rank_groups", "RankGenerator"),
        {"List": typing.List, "Optional": typing.Optional},
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
    shard_groups = [dist.new_group(list(range(n * per_node, (n + 1) * per_node))) for n in range(nodes)]
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
        "adam_shards_ok": all(torch.allclose(a, b) for a, b in zip(adam_full, adam_sharded, strict=True)),
        "muon_shards_ok": all(torch.allclose(a, b, atol=1e-6) for a, b in zip(muon_full, muon_sharded, strict=True)),
        "muon_gathered_ok": all(torch.allclose(a, b) for a, b in zip(muon_full, gathered, strict=True)),
    }
