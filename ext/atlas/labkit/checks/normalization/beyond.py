"""Checks of the labs of ``normalization/beyond.md``.

The chapter's checks: Checks of the normalization chapter's labs, and loaders of upstream
reference code.
"""

from __future__ import annotations

import functools

import torch

from atlas.labkit.normalization.stacks import HyperConnection, sinkhorn
from atlas.labkit.pinned import definitions

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


@functools.cache
def megatron_sinkhorn() -> type:
    """Megatron's ``SinkhornKnopp`` autograd function at the pin (``hyper_connection.py``), run
    from the pinned source: the projection mHC applies to the stream-mixing logits, written
    independently of ours (it shifts each row by its maximum before the exponential and clamps
    the sums)."""
    scope = definitions(
        "megatron",
        "megatron/core/transformer/hyper_connection.py",
        ("SinkhornKnopp",),
        {"torch": torch, "Tensor": torch.Tensor, "Tuple": tuple},
    )
    return scope["SinkhornKnopp"]


def sinkhorn_matches_megatron(n: int = 4, iters: int = 20, seed: int = 0) -> bool:
    """Our ``sinkhorn`` against Megatron's ``SinkhornKnopp.apply`` on the same random logits
    (a batch of 3 x 2 matrices of size ``n``, the [s, b, n, n] layout Megatron uses)."""
    torch.manual_seed(seed)
    logits = 2.0 * torch.randn(3, 2, n, n)
    theirs = megatron_sinkhorn().apply(logits, iters)
    return torch.allclose(sinkhorn(logits, iters), theirs, atol=1e-5)
