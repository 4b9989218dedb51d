"""Checks of the labs of ``normalization/placement.md``.

The chapter's checks: Checks of the normalization chapter's labs, and loaders of upstream
reference code.
"""

from __future__ import annotations

import functools

import torch

from atlas.labkit.normalization.stacks import Stack, grad_norms_per_layer
from atlas.labkit.pinned import definitions

ROLE = "check"


@functools.cache
def megatron_l2norm() -> type:
    class _Protocol:  # LayerNormInterface is a typing.Protocol; a plain base stands in
        pass

    scope = definitions(
        "megatron",
        "megatron/core/transformer/torch_norm.py",
        ("L2Norm",),
        {"torch": torch, "LayerNormInterface": _Protocol, "jit_fuser": lambda f: f},
    )
    return scope["L2Norm"]


def last_layer_gradients(depths=(12, 48), width: int = 64, seed: int = 0) -> dict:
    """Gradient norm of the last block's output matrix for Post-LN and Pre-LN stacks of each
    depth, same data and seed."""
    out = {}
    for placement in ("post", "pre"):
        for depth in depths:
            torch.manual_seed(seed)
            stack = Stack(width, depth, placement)
            x, target = torch.randn(256, width), torch.randn(256, width)
            out[placement, depth] = grad_norms_per_layer(stack, x, target)[-1]
    return out
