"""Checks of the labs of ``parallelism/pipeline.md``.

The chapter's checks: the checks its labs run, not what its pages teach.
"""

from __future__ import annotations

import functools
from types import SimpleNamespace
from typing import Any, Optional

import torch
import torch.nn.functional as F
from torch import nn

from atlas.labkit.checks.parallel.common import DTYPE
from atlas.labkit.parallel.pipeline import Op, run_pipeline, schedule, stage_forward
from atlas.labkit.pinned import definitions

ROLE = "check"


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


@functools.cache
def _megatron_schedule_functions() -> tuple[Any, Any]:
    """``get_pp_rank_microbatches`` and ``get_schedule_table`` of Megatron-LM's
    ``schedules.py`` at the pin, run alone (the pipeline group is passed in as a stand-in
    ``p2p_communicator``, so ``parallel_state`` is never reached)."""
    scope = definitions(
        "megatron",
        "megatron/core/pipeline_parallel/schedules.py",
        ("get_pp_rank_microbatches", "get_schedule_table"),
        {"Optional": Optional, "P2PCommunicator": object, "parallel_state": None},
    )
    return scope["get_pp_rank_microbatches"], scope["get_schedule_table"]


def megatron_schedule(p: int, m: int, v: int, stage: int) -> list[Op]:
    """The operation order of ``stage`` as Megatron-LM's schedules derive it: the warm-up count
    from ``get_pp_rank_microbatches``; for the interleaved schedule the (microbatch, chunk)
    order from ``get_schedule_table`` with microbatch groups of ``p`` (the default), the
    backward visiting the chunks in reverse (``get_model_chunk_id(k, forward=False)``); then
    warm-up forwards, one forward and one backward per steady iteration, and the drain."""
    counts, table = _megatron_schedule_functions()
    group = SimpleNamespace(size=lambda: p, rank=lambda: stage)
    comm = SimpleNamespace(
        pp_group=group, virtual_pipeline_model_parallel_size=v if v > 1 else None
    )
    total, _, warm, _ = counts(m, v, p, p2p_communicator=comm)
    order = table(m, v, p) if v > 1 else [(i, 0) for i in range(m)]
    fwd = [Op("F", mb, c) for mb, c in order]
    bwd = [Op("B", mb, v - 1 - c) for mb, c in order]
    ops = fwd[:warm]
    for i in range(total - warm):
        ops += [fwd[warm + i], bwd[i]]
    return ops + bwd[total - warm :]


def schedules_match_megatron(cases: list[tuple[int, int, int]]) -> bool:
    """Whether :func:`schedule` gives every stage of every ``(p, m, v)`` the order that
    Megatron-LM's own functions at the pin give (``1f1b`` for ``v = 1``)."""
    return all(
        schedule("1f1b" if v == 1 else "interleaved", p, m, v)[s] == megatron_schedule(p, m, v, s)
        for p, m, v in cases
        for s in range(p)
    )
