"""Checks of the labs of ``normalization/index.md``.

The chapter's checks: Checks of the normalization chapter's labs, and loaders of upstream
reference code.
"""

from __future__ import annotations

import torch

ROLE = "check"


def residual_gradient_flow(depth: int = 64, width: int = 32, scale: float = 0.2, seed: int = 0):
    torch.set_default_dtype(torch.float64)
    try:
        return _flow(depth, width, scale, seed)
    finally:
        torch.set_default_dtype(torch.float32)


def _flow(depth, width, scale, seed):
    """Gradient of sum(output * u) with respect to the input of a chain of linear maps, with and
    without identity skips, by autograd and by the explicit product of Jacobians."""
    torch.manual_seed(seed)
    ws = [torch.randn(width, width) * scale / width**0.5 for _ in range(depth)]
    x = torch.randn(width, requires_grad=True)
    u = torch.randn(width)
    res = {}
    for kind in ("plain", "residual"):
        h = x
        jac = torch.eye(width)
        for w in ws:
            h = w @ h if kind == "plain" else h + w @ h
            jac = (w if kind == "plain" else torch.eye(width) + w) @ jac
        (g,) = torch.autograd.grad((h * u).sum(), x)
        res[kind] = (g, jac.T @ u)
    return res
