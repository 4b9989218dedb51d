"""Checks of the labs of ``normalization/beyond.md``.

The chapter's checks: Checks of the normalization chapter's labs, and loaders of upstream
reference code.
"""

from __future__ import annotations

import torch

from atlas.labkit.normalization.stacks import HyperConnection, sinkhorn

ROLE = "check"


def hyper_connection_n1(tokens: int = 8, width: int = 16, seed: int = 0) -> bool:
    """A Hyper-Connections wrapper with one stream, at its initialisation, against the plain
    residual x + F(x) with the same sublayer."""
    torch.manual_seed(seed)
    layer = torch.nn.Sequential(torch.nn.Linear(width, width), torch.nn.GELU())
    x = torch.randn(tokens, width)
    hc = HyperConnection(layer, n=1)
    return torch.allclose(hc(x[None])[0], x + layer(x))


def mixing_products(depth: int = 60, n: int = 4, seed: int = 0) -> dict:
    """Largest singular value of the product of ``depth`` stream-mixing matrices: unconstrained
    (identity plus learned noise, as HC may drift to) against Sinkhorn-projected (mHC)."""
    torch.manual_seed(seed)
    free = torch.eye(n)
    ds = torch.eye(n)
    worst_row = 0.0
    for _ in range(depth):
        noise = 0.3 * torch.randn(n, n)
        free = (torch.eye(n) + noise) @ free
        m = sinkhorn(2.0 * torch.eye(n) + noise)
        worst_row = max(
            worst_row, (m.sum(-1) - 1).abs().max().item(), (m.sum(-2) - 1).abs().max().item()
        )
        ds = m @ ds
    return {
        "free": torch.linalg.matrix_norm(free, ord=2).item(),
        "constrained": torch.linalg.matrix_norm(ds, ord=2).item(),
        "stochastic_error": worst_row,
    }
