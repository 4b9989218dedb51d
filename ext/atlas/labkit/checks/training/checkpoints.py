"""Checks of the labs of ``training/checkpoints.md``.

The chapter's checks: Megatron-LM's own code at the pin, measuring tools.
"""

from __future__ import annotations

from typing import Any

import torch

from atlas.labkit.checks.training.common import UPSTREAM
from atlas.labkit.pinned import definitions

ROLE = "check"


def megatron_sharded_tensor() -> type:
    """Megatron's ``dist_checkpointing.mapping.ShardedTensor`` class."""
    import typing
    from abc import ABC, abstractmethod
    from dataclasses import dataclass, field, replace

    class CheckpointingException(Exception):
        pass

    scope = {
        k: getattr(typing, k)
        for k in ("Any", "Callable", "Dict", "List", "Optional", "Tuple", "Union")
    }
    scope.update(
        torch=torch,
        ABC=ABC,
        abstractmethod=abstractmethod,
        dataclass=dataclass,
        field=field,
        replace=replace,
        CheckpointingException=CheckpointingException,
    )
    scope["ReplicaId"] = int | tuple[int, ...]
    ns = definitions(
        UPSTREAM,
        "megatron/core/dist_checkpointing/mapping.py",
        ["ShardedBase", "ShardedTensor"],
        scope,
    )
    return ns.ShardedTensor


def _dense_mlp(seed: int, h: int = 8, f: int = 32) -> list[torch.Tensor]:
    """A dense MLP's four tensors (fc1 weight and bias, fc2 weight and bias), float64."""
    g = torch.Generator().manual_seed(seed)
    return [
        torch.randn(*shape, generator=g, dtype=torch.float64)
        for shape in ((f, h), (f,), (h, f), (h,))
    ]


def _tp_slices(dense: list[torch.Tensor], tp: int, rank: int) -> list[torch.Tensor]:
    w1, b1, w2, b2 = dense
    return [w1.chunk(tp, 0)[rank], b1.chunk(tp, 0)[rank], w2.chunk(tp, 1)[rank], b2]


def _tp_forward(x: torch.Tensor, local: list[torch.Tensor]) -> torch.Tensor:
    import torch.distributed as dist
    import torch.nn.functional as F

    w1, b1, w2, b2 = local
    partial = F.gelu(x @ w1.T + b1) @ w2.T
    dist.all_reduce(partial)  # the row-parallel layer's sum over the TP group
    return partial + b2


def save_at_tp(rank: int, world: int, directory: str, seed: int, use_async: bool) -> list[str]:
    """Save a TP MLP sharded over ``world`` ranks. With ``use_async`` the save runs in the
    background while the live weights are changed (a stand-in for the next optimizer step)."""
    import torch.distributed as dist

    from atlas.labkit.training.ckpt import AsyncSave, finalize, mlp_sharded_state_dict, save_sharded

    local = _tp_slices(_dense_mlp(seed), world, rank)
    shards = mlp_sharded_state_dict(*local, tp=world, rank=rank)
    if use_async:
        request = AsyncSave(shards, directory, rank)
        with torch.no_grad():
            for t in local:
                t.add_(1.0)  # training goes on; the checkpoint must not see this
        request.finalize(barrier=dist.barrier)
        return request.files
    files = save_sharded(shards, directory, rank)
    dist.barrier()
    finalize(shards, directory, rank)
    return files


def load_at_tp(rank: int, world: int, directory: str, seed: int) -> dict[str, Any]:
    """Load the MLP at TP size ``world`` and compare with the dense MLP built from ``seed``."""
    import torch.nn.functional as F

    from atlas.labkit.training.ckpt import load_sharded, mlp_sharded_state_dict

    dense = _dense_mlp(seed)
    empty = [torch.empty_like(t) for t in _tp_slices(dense, world, rank)]
    requests = [sh.without_data() for sh in mlp_sharded_state_dict(*empty, tp=world, rank=rank)]
    local = [load_sharded(req, directory) for req in requests]
    x = torch.randn(
        5, dense[0].shape[1], generator=torch.Generator().manual_seed(99), dtype=torch.float64
    )
    w1, b1, w2, b2 = dense
    reference = F.gelu(x @ w1.T + b1) @ w2.T + b2  # the dense MLP, never saved or loaded
    out = _tp_forward(x, local)
    return {
        "shapes": [tuple(t.shape) for t in local],
        "slices_equal": all(
            torch.equal(a, b) for a, b in zip(local, _tp_slices(dense, world, rank), strict=True)
        ),
        "output_matches_dense": bool(torch.allclose(out, reference, rtol=1e-12, atol=1e-12)),
    }


def resume_run(
    steps: int, stop_at: int | None = None, state: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Train a small dropout MLP for ``steps`` steps on samples numbered from the data
    position; stop after ``stop_at`` steps and return the resume state, or start from
    ``state``. The samples are a function of their number, as an indexed dataset's are."""
    from atlas.labkit.training.ckpt import restore_state, resume_state

    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(6, 16), torch.nn.Dropout(0.3), torch.nn.ReLU(), torch.nn.Linear(16, 1)
    )
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    consumed, it, batch = 0, 0, 4
    torch.manual_seed(1)  # the run's random stream (dropout), distinct from the init
    if state is not None:
        consumed, it = restore_state(state, model, opt)

    def sample(i: int) -> tuple[torch.Tensor, torch.Tensor]:
        g = torch.Generator().manual_seed(10_000 + i)
        x = torch.randn(6, generator=g)
        return x, x.sum(0, keepdim=True).sin()

    losses = []
    while it < steps:
        xs, ys = zip(*(sample(consumed + j) for j in range(batch)), strict=True)
        loss = torch.nn.functional.mse_loss(model(torch.stack(xs)), torch.stack(ys))
        opt.zero_grad()
        loss.backward()
        opt.step()
        consumed, it = consumed + batch, it + 1
        losses.append(float(loss.detach()))
        if stop_at is not None and it == stop_at:
            return {"state": resume_state(model, opt, consumed, it), "losses": losses}
    return {
        "params": torch.cat([p.detach().flatten() for p in model.parameters()]),
        "losses": losses,
    }


def sharded_metadata_matches(tp: int, seed: int = 3) -> list[bool]:
    """Per TP rank: does our sharded state of the MLP carry the global shape, offset,
    fragmentation and replica id that Megatron's ``ShardedTensor.from_rank_offsets`` gives the
    same local tensors, cut the way Megatron's column- and row-parallel layers cut them?"""
    from atlas.labkit.training.ckpt import mlp_sharded_state_dict

    megatron = megatron_sharded_tensor()
    out = []
    for rank in range(tp):
        ours = mlp_sharded_state_dict(*_tp_slices(_dense_mlp(seed), tp, rank), tp=tp, rank=rank)
        axes = {
            "fc1.weight": [(0, rank, tp)],
            "fc1.bias": [(0, rank, tp)],
            "fc2.weight": [(1, rank, tp)],
            "fc2.bias": [],
        }
        theirs = [
            megatron.from_rank_offsets(sh.key, sh.data, *axes[sh.key], replica_id=sh.replica_id)
            for sh in ours
        ]
        out.append(
            all(
                (o.global_shape, o.global_offset, o.axis_fragmentations, o.replica_id)
                == (
                    tuple(t.global_shape),
                    tuple(t.global_offset),
                    tuple(t.axis_fragmentations),
                    t.replica_id,
                )
                for o, t in zip(ours, theirs, strict=True)
            )
        )
    return out
