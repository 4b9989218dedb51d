"""Checking code that several pages of the moe chapter share: ``moe/production.md``,
``moe/routing.md``.

The chapter's checks: the upstreams' own code at the pin, and the checks.
"""

from __future__ import annotations

import torch

from atlas.labkit.moe.layer import MoEShape, init_weights, moe_forward

ROLE = "check"


def zipf(n: int, s: float, scale: float = 1.0) -> torch.Tensor:
    """Loads ``scale / rank**s`` for ranks 1..n, in a shuffled but seeded order."""
    gen = torch.Generator().manual_seed(0)
    loads = scale / torch.arange(1, n + 1, dtype=torch.float64) ** s
    return loads[torch.randperm(n, generator=gen)]


def moe_flops_measured(shape: MoEShape, tokens: int) -> int:
    """Matmul FLOPs of one forward of the layer, counted by PyTorch's FlopCounterMode."""
    from torch.utils.flop_counter import FlopCounterMode

    w = init_weights(shape)
    x = torch.randn(tokens, shape.hidden, dtype=torch.float64)
    with FlopCounterMode(display=False) as counter:
        moe_forward(x, w, shape)
    return counter.get_total_flops()
