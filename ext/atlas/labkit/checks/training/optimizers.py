"""Checks of the labs of ``training/optimizers.md``: torch's own optimizers in the pinned wheel."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

ROLE = "check"


def _problem(seed: int, shape: tuple[int, int], dtype: torch.dtype) -> tuple[torch.Tensor, ...]:
    g = torch.Generator().manual_seed(seed)
    w0 = torch.randn(shape, generator=g, dtype=dtype)
    x = torch.randn(16, shape[1], generator=g, dtype=dtype)
    y = torch.randn(16, shape[0], generator=g, dtype=dtype)
    return w0, x, y


def against_torch(
    name: str, steps: int = 10, shape: tuple[int, int] = (24, 40), seed: int = 0
) -> float:
    """Train one matrix on a least-squares loss for ``steps`` steps with our ``name`` step and
    with torch's optimizer from identical starts; return the largest weight difference."""
    from atlas.labkit.training import optimizers as ours

    dtype = torch.float32 if name == "muon" else torch.float64
    w0, x, y = _problem(seed, shape, dtype)
    theirs_cls: dict[str, Callable[[list[torch.Tensor]], torch.optim.Optimizer]] = {
        "sgd": lambda ps: torch.optim.SGD(ps, lr=0.05),
        "momentum": lambda ps: torch.optim.SGD(ps, lr=0.05, momentum=0.9),
        "adam": lambda ps: torch.optim.Adam(ps, lr=1e-2, weight_decay=0.01),
        "adamw": lambda ps: torch.optim.AdamW(ps, lr=1e-2, weight_decay=0.01),
        "muon": lambda ps: torch.optim.Muon(ps, lr=1e-2),
    }
    our_step: dict[str, Callable[[torch.Tensor, torch.Tensor, dict[str, Any]], None]] = {
        "sgd": lambda p, g, s: ours.sgd_step(p, g, s, lr=0.05),
        "momentum": lambda p, g, s: ours.sgd_step(p, g, s, lr=0.05, momentum=0.9),
        "adam": lambda p, g, s: ours.adam_step(p, g, s, lr=1e-2, weight_decay=0.01),
        "adamw": lambda p, g, s: ours.adam_step(
            p, g, s, lr=1e-2, weight_decay=0.01, decoupled=True
        ),
        "muon": lambda p, g, s: ours.muon_step(p, g, s, lr=1e-2),
    }
    w_t = torch.nn.Parameter(w0.clone())
    opt = theirs_cls[name]([w_t])
    w_o, state = w0.clone().requires_grad_(), {}
    for _ in range(steps):
        opt.zero_grad()
        ((x @ w_t.T - y) ** 2).mean().backward()
        opt.step()
        loss = ((x @ w_o.T - y) ** 2).mean()
        (grad,) = torch.autograd.grad(loss, w_o)
        with torch.no_grad():
            our_step[name](w_o, grad, state)
    return float((w_o.detach() - w_t.detach()).abs().max())


def torch_state_bytes_per_param(name: str) -> float:
    """Bytes of state torch's optimizer holds per parameter after one step on an fp32 matrix,
    counting only tensors of the parameter's size (not Adam's scalar step counters)."""
    p = torch.nn.Parameter(torch.randn(64, 128))
    make = {
        "sgd": lambda: torch.optim.SGD([p], lr=0.1),
        "momentum": lambda: torch.optim.SGD([p], lr=0.1, momentum=0.9),
        "adam": lambda: torch.optim.Adam([p]),
        "adamw": lambda: torch.optim.AdamW([p]),
        "muon": lambda: torch.optim.Muon([p]),
    }[name]
    opt = make()
    p.grad = torch.randn_like(p)
    opt.step()
    held = sum(
        t.numel() * t.element_size()
        for s in opt.state.values()
        for t in s.values()
        if isinstance(t, torch.Tensor) and t.numel() == p.numel()
    )
    return held / p.numel()


def newton_schulz_singular_values(seed: int = 0, shape: tuple[int, int] = (64, 128)) -> dict:
    """Singular values of torch's Newton-Schulz output for a random matrix, and whether ours
    returns the same tensor."""
    from torch.optim._muon import (
        DEFAULT_A,
        DEFAULT_B,
        DEFAULT_C,
        DEFAULT_NS_STEPS,
        EPS,
        _zeropower_via_newtonschulz,
    )

    from atlas.labkit.training.optimizers import newton_schulz

    g = torch.randn(shape, generator=torch.Generator().manual_seed(seed))
    theirs = _zeropower_via_newtonschulz(
        g, (DEFAULT_A, DEFAULT_B, DEFAULT_C), DEFAULT_NS_STEPS, EPS
    )
    s = torch.linalg.svdvals(theirs.float())
    s_in = torch.linalg.svdvals(g)
    return {
        "ours_equal": bool(torch.equal(newton_schulz(g), theirs)),
        "input_spread": round(float(s_in.max() / s_in.min()), 1),
        "min": round(float(s.min()), 2),
        "max": round(float(s.max()), 2),
    }
