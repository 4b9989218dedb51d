"""Checks of the labs of ``hpc/scale-up.md``.

The chapter's checks: Checkers and instruments for the HPC chapter's labs (not taught on the
pages).
"""

from __future__ import annotations

from typing import Any

import torch

from atlas.labkit.hpc import collectives as coll

ROLE = "check"


def tp_mlp_vs_dense(rank: int, world: int, tokens: int, hidden: int, ffn: int) -> dict[str, Any]:
    """The tensor-parallel MLP on ``world`` ranks against the dense MLP; bytes counted."""
    from atlas.labkit.hpc.scaleup import tp_mlp_forward

    torch.manual_seed(0)  # the same weights and input on every rank
    x = torch.randn(tokens, hidden, dtype=torch.float64)
    up = torch.randn(hidden, ffn, dtype=torch.float64) / hidden**0.5
    down = torch.randn(ffn, hidden, dtype=torch.float64) / ffn**0.5
    dense = torch.relu(x @ up) @ down
    cols = up.tensor_split(world, dim=1)[rank]
    rows = down.tensor_split(world, dim=0)[rank]
    t = coll.Traffic()
    y = tp_mlp_forward(x, cols, rows, list(range(world)), t)
    return {"ok": torch.allclose(y, dense), "bytes": t.total}
