"""An MoE layer in plain torch: routed and shared SwiGLU experts, and what one costs.

A SwiGLU expert of hidden size h and intermediate size f holds three ``f x h`` matrices (gate,
up, down) and spends ``2 * 3 * h * f`` FLOPs per token. A layer with E routed experts, k of them
active, S shared experts (always active) and a router ``[E, h]`` therefore holds
``3 h f (E + S) + E h`` parameters, of which ``3 h f (k + S) + E h`` touch a given token.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from atlas.labkit.moe.router import topk_route

ROLE = "taught"


@dataclass(frozen=True)
class MoEShape:
    hidden: int
    ffn: int  # intermediate size of one expert
    experts: int
    topk: int
    shared: int = 0  # shared experts, each of intermediate size ``ffn``


@dataclass
class MoEWeights:
    router: torch.Tensor  # [E, h]
    gate: torch.Tensor  # [E, f, h]
    up: torch.Tensor  # [E, f, h]
    down: torch.Tensor  # [E, h, f]
    shared: tuple[torch.Tensor, torch.Tensor, torch.Tensor] | None = None  # [S, ...] each


def init_weights(shape: MoEShape, seed: int = 0, dtype: torch.dtype = torch.float64) -> MoEWeights:
    gen = torch.Generator().manual_seed(seed)
    h, f = shape.hidden, shape.ffn

    def rand(*size: int, fan_in: int) -> torch.Tensor:
        return torch.randn(*size, generator=gen, dtype=dtype) / fan_in**0.5

    def expert_stack(n: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        return rand(n, f, h, fan_in=h), rand(n, f, h, fan_in=h), rand(n, h, f, fan_in=f)

    gate, up, down = expert_stack(shape.experts)
    shared = expert_stack(shape.shared) if shape.shared else None
    return MoEWeights(rand(shape.experts, h, fan_in=h), gate, up, down, shared)


def swiglu(
    x: torch.Tensor, gate: torch.Tensor, up: torch.Tensor, down: torch.Tensor
) -> torch.Tensor:
    """One expert: ``(silu(x gate^T) * (x up^T)) down^T``."""
    return F.linear(F.silu(F.linear(x, gate)) * F.linear(x, up), down)


def moe_forward(x: torch.Tensor, w: MoEWeights, shape: MoEShape) -> torch.Tensor:
    """``y = sum_s shared_s(x) + sum_{i in top-k} g_i expert_i(x)``, the routed part computed
    expert by expert on the rows routed to it."""
    gates, experts = topk_route(x @ w.router.T, shape.topk)
    y = torch.zeros_like(x)
    for e in range(shape.experts):
        token, slot = (experts == e).nonzero(as_tuple=True)
        if token.numel():
            out = swiglu(x[token], w.gate[e], w.up[e], w.down[e])
            y = y.index_add(0, token, out * gates[token, slot, None])
    if w.shared is not None:
        for s in range(shape.shared):
            y = y + swiglu(x, w.shared[0][s], w.shared[1][s], w.shared[2][s])
    return y


def params(shape: MoEShape) -> dict[str, int]:
    """Parameters of the layer in total and those one token uses."""
    expert = 3 * shape.hidden * shape.ffn
    router = shape.experts * shape.hidden
    return {
        "total": expert * (shape.experts + shape.shared) + router,
        "active": expert * (shape.topk + shape.shared) + router,
    }


def flops_per_token(shape: MoEShape) -> int:
    """Matmul FLOPs of one token: the router, then k routed and S shared SwiGLU experts."""
    return 2 * shape.experts * shape.hidden + 2 * 3 * shape.hidden * shape.ffn * (
        shape.topk + shape.shared
    )


def expected_experts_touched(num_experts: int, k: int, tokens: int) -> float:
    """Experts of one layer that at least one of ``tokens`` tokens routes to, on average, when
    each token picks a uniform random k-subset: ``E (1 - (1 - k/E)^B)``. Their weights must be
    read from memory in that step, whatever the number of rows each receives."""
    return num_experts * (1 - (1 - k / num_experts) ** tokens)
