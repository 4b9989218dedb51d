"""Checks of the labs of ``training/mixed-precision.md``.

The chapter's checks: Megatron-LM's own code at the pin, measuring tools.
"""

from __future__ import annotations

import types
from typing import Any

import torch

from atlas.labkit.checks.training.common import UPSTREAM
from atlas.labkit.pinned import definitions

ROLE = "check"


class _CPUTorch(types.ModuleType):
    """``torch`` whose tensor factories ignore ``device=`` (Megatron puts scalars on CUDA)."""

    def __init__(self) -> None:
        super().__init__("torch")

    def __getattr__(self, name: str) -> Any:
        return getattr(torch, name)

    @staticmethod
    def tensor(*args: Any, device: Any = None, **kwargs: Any) -> torch.Tensor:
        return torch.tensor(*args, **kwargs)

    @staticmethod
    def zeros(*args: Any, device: Any = None, **kwargs: Any) -> torch.Tensor:
        return torch.zeros(*args, **kwargs)


cpu_torch = _CPUTorch()


def megatron_grad_scaler() -> type:
    """Megatron's ``DynamicGradScaler`` class, its CUDA scalars placed on the CPU."""
    from abc import ABC, abstractmethod

    ns = definitions(
        UPSTREAM,
        "megatron/core/optimizer/grad_scaler.py",
        ["MegatronGradScaler", "DynamicGradScaler"],
        {"torch": cpu_torch, "ABC": ABC, "abstractmethod": abstractmethod, "Dict": dict},
    )
    return ns.DynamicGradScaler


def megatron_param_ranges(
    numels: list[int], dp: int, rank: int
) -> list[dict[str, tuple[int, int]] | None]:
    """Megatron's ``_build_model_gbuf_param_range_map`` for parameters laid out in one bucket
    (offset 0) by Megatron's own padding rules (``pad_param_start``, ``pad_bucket_end`` of
    ``param_layout.py``), this rank's shard of the padded bucket as its world range."""
    import math

    layout = definitions(
        UPSTREAM,
        "megatron/core/optimizer/param_layout.py",
        ["pad_to_divisor", "pad_param_start", "bucket_end_divisor", "pad_bucket_end"],
        {"math": math},
    )
    ns = definitions(
        UPSTREAM,
        "megatron/core/optimizer/distrib_optimizer.py",
        ["Range", "DistributedOptimizer._build_model_gbuf_param_range_map"],
        {"Dict": dict, "Tuple": tuple, "torch": torch},
    )
    index_map, end = {}, 0
    keys = [f"p{i}" for i in range(len(numels))]
    for key, n in zip(keys, numels, strict=True):
        start = layout.pad_param_start(end)
        index_map[key] = (start, start + n, 0)
        end = start + n
    size = layout.pad_bucket_end(end, dp, False) // dp
    world = ns.Range(rank * size, (rank + 1) * size)
    found = ns._build_model_gbuf_param_range_map(None, index_map, world, 0)
    out = []
    for key in keys:
        r = found.get(key)
        out.append(None if r is None else {k: (v.start, v.end) for k, v in r.items()})
    return out


def clip_matches_torch(rank: int, world: int, seed: int, max_norm: float) -> dict[str, Any]:
    """Each rank holds a contiguous shard of one flat gradient; the global norm and the clipped
    shard must equal ``torch.nn.utils.clip_grad_norm_`` on the whole gradient."""
    from atlas.labkit.training.mixed import clip_by_global_norm, global_grad_norm

    g = torch.Generator().manual_seed(seed)
    grads = [torch.randn(n, generator=g, dtype=torch.float64) for n in (37, 64, 5, 90)]
    flat = torch.cat(grads)
    shard = list(flat.chunk(world))[rank].clone()
    local_only = float(shard.norm())  # what a rank would get without the all-reduce
    norm = global_grad_norm([shard])
    clip_by_global_norm([shard], max_norm, norm)
    params = [torch.nn.Parameter(torch.zeros_like(t)) for t in grads]
    for p, t in zip(params, grads, strict=True):
        p.grad = t.clone()
    torch_norm = float(torch.nn.utils.clip_grad_norm_(params, max_norm))
    torch_shard = list(torch.cat([p.grad for p in params]).chunk(world))[rank]
    return {
        "norm": norm,
        "norm_matches": abs(norm - torch_norm) < 1e-9 * torch_norm,
        "clipped_matches": bool(torch.allclose(shard, torch_shard, rtol=1e-9, atol=1e-12)),
        "local_norm": local_only,
    }
