"""Optimizers written from their update rules: SGD, momentum, Adam, AdamW and Muon.

Each ``*_step`` function updates one parameter in place from its gradient and a per-parameter
``state`` dict, as the equations of ``training/optimizers.md`` state them; the page's checks run
them beside ``torch.optim``'s implementations. The rules follow torch's conventions where the
literature differs (momentum without dampening, Adam's bias correction, Muon's momentum as an
exponential average), so that a difference in the check is a difference in the rule.
"""

from __future__ import annotations

import math
from typing import Any

import torch

ROLE = "taught"

NS_COEFFICIENTS = (3.4445, -4.7750, 2.0315)  # the quintic Newton-Schulz polynomial of Muon
NS_STEPS = 5


def sgd_step(
    p: torch.Tensor, g: torch.Tensor, state: dict[str, Any], lr: float, momentum: float = 0.0
) -> None:
    """SGD, with heavy-ball momentum ``b <- mu b + g`` when ``momentum > 0`` (one fp32 buffer)."""
    if momentum:
        if "buf" not in state:
            state["buf"] = g.clone()
        else:
            state["buf"].mul_(momentum).add_(g)
        g = state["buf"]
    p.add_(g, alpha=-lr)


def adam_step(
    p: torch.Tensor,
    g: torch.Tensor,
    state: dict[str, Any],
    lr: float,
    betas: tuple[float, float] = (0.9, 0.999),
    eps: float = 1e-8,
    weight_decay: float = 0.0,
    decoupled: bool = False,
) -> None:
    """Adam (``decoupled=False``: weight decay added to the gradient, an L2 penalty) or AdamW
    (``decoupled=True``: the weights shrink by ``lr * weight_decay`` before the Adam update)."""
    b1, b2 = betas
    state["t"] = t = state.get("t", 0) + 1
    if weight_decay and decoupled:
        p.mul_(1 - lr * weight_decay)
    elif weight_decay:
        g = g + weight_decay * p
    m = state.setdefault("m", torch.zeros_like(p))
    v = state.setdefault("v", torch.zeros_like(p))
    m.mul_(b1).add_(g, alpha=1 - b1)
    v.mul_(b2).addcmul_(g, g, value=1 - b2)
    m_hat = m / (1 - b1**t)
    v_hat = v / (1 - b2**t)
    p.sub_(lr * m_hat / (v_hat.sqrt() + eps))


def newton_schulz(
    x: torch.Tensor,
    steps: int = NS_STEPS,
    coefficients: tuple[float, float, float] = NS_COEFFICIENTS,
    eps: float = 1e-7,
) -> torch.Tensor:
    """Approximate ``U V^T`` of ``x = U S V^T`` in bf16: scale to Frobenius norm 1, then apply
    ``X <- a X + (b A + c A^2) X`` with ``A = X X^T`` (on the wide orientation, so A is small)."""
    a, b, c = coefficients
    y = x.bfloat16()
    tall = x.size(0) > x.size(1)
    if tall:
        y = y.T
    y = y / y.norm().clamp(min=eps)
    for _ in range(steps):
        gram = y @ y.T
        y = torch.addmm(y, torch.addmm(gram, gram, gram, beta=b, alpha=c), y, beta=a)
    return y.T if tall else y


def muon_step(
    p: torch.Tensor,
    g: torch.Tensor,
    state: dict[str, Any],
    lr: float = 1e-3,
    momentum: float = 0.95,
    weight_decay: float = 0.1,
    nesterov: bool = True,
) -> None:
    """Muon for one matrix: momentum (an exponential average, as torch keeps it), a Nesterov
    look-ahead, orthogonalisation of the whole update, decoupled decay, and a step scaled by
    ``sqrt(max(1, rows / cols))``."""
    buf = state.setdefault("buf", torch.zeros_like(g))
    buf.mul_(momentum).add_(g, alpha=1 - momentum)
    update = (1 - momentum) * g + momentum * buf if nesterov else buf
    update = newton_schulz(update)
    rows, cols = p.shape
    p.mul_(1 - lr * weight_decay)
    p.add_(update, alpha=-lr * math.sqrt(max(1.0, rows / cols)))


STATE_FP32_TENSORS = {"sgd": 0, "momentum": 1, "adam": 2, "adamw": 2, "muon": 1}
"""fp32 tensors of the parameter's size each optimizer keeps (its state, without main weights)."""


def state_bytes_per_param(name: str, state_dtype_bytes: int = 4) -> int:
    """Bytes of optimizer state per parameter: the size-of-parameter tensors it keeps."""
    return STATE_FP32_TENSORS[name] * state_dtype_bytes
