"""Fine-grained experts: cut every expert into m slices and route to m times as many.

A SwiGLU expert is a sum over its intermediate units, so slicing its gate and up rows and its
down columns into m pieces of ``f / m`` gives m small experts whose outputs add up to the big
one. A layer of ``m E`` slices with ``m k`` active holds the same parameters and spends the same
FLOPs per token as the coarse layer, yet it can combine experts in far more ways.
"""

from __future__ import annotations

import math

import torch

from atlas.labkit.moe.layer import MoEShape, MoEWeights, swiglu

ROLE = "taught"


def split_experts(w: MoEWeights, m: int) -> MoEWeights:
    """Cut each expert into m slices of the intermediate dimension. Slice ``j`` of expert ``e``
    becomes fine expert ``e * m + j``; the router row of ``e`` is repeated for its slices."""
    e, f, h = w.gate.shape
    if f % m:
        raise ValueError(f"intermediate size {f} does not split into {m} slices")
    gate = w.gate.reshape(e * m, f // m, h)
    up = w.up.reshape(e * m, f // m, h)
    down = w.down.reshape(e, h, m, f // m).permute(0, 2, 1, 3).reshape(e * m, h, f // m)
    return MoEWeights(w.router.repeat_interleave(m, dim=0), gate, up, down, w.shared)


def routed_output(
    x: torch.Tensor, w: MoEWeights, gates: torch.Tensor, experts: torch.Tensor
) -> torch.Tensor:
    """``sum_j gates[:, j] * expert_{experts[:, j]}(x)``, token by token."""
    y = torch.zeros_like(x)
    for j in range(experts.shape[1]):
        for t in range(x.shape[0]):
            e = int(experts[t, j])
            y[t] += gates[t, j] * swiglu(x[t : t + 1], w.gate[e], w.up[e], w.down[e])[0]
    return y


def fine_grained_shape(shape: MoEShape, m: int) -> MoEShape:
    """The layer with every expert cut into m: ``m E`` experts of size ``f / m``, ``m k`` active."""
    return MoEShape(shape.hidden, shape.ffn // m, shape.experts * m, shape.topk * m, shape.shared)


def combinations(num_experts: int, k: int) -> int:
    """How many distinct sets of k experts a token can choose."""
    return math.comb(num_experts, k)


def expected_distinct_ranks(num_experts: int, k: int, ranks: int) -> float:
    """Expected number of EP ranks a token reaches when its k experts are a uniform random
    k-subset of E experts spread evenly over R ranks: ``R (1 - C(E - E/R, k) / C(E, k))``."""
    per_rank = num_experts // ranks
    return ranks * (1 - math.comb(num_experts - per_rank, k) / math.comb(num_experts, k))


def simulated_distinct_ranks(
    num_experts: int, k: int, ranks: int, tokens: int, seed: int = 0
) -> float:
    """The same by sampling: uniform random top-k, then count distinct owner ranks."""
    gen = torch.Generator().manual_seed(seed)
    experts = torch.rand(tokens, num_experts, generator=gen).topk(k, dim=-1).indices
    owner = experts // (num_experts // ranks)
    hit = torch.zeros(tokens, ranks, dtype=torch.bool).scatter_(1, owner, True)
    return hit.sum(-1).double().mean().item()


def fine_routes(
    gates: torch.Tensor, experts: torch.Tensor, m: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """The routes of the fine layer that reproduce a coarse routing: coarse expert ``e`` with
    gate ``g`` becomes its m slices ``e * m + j``, each with the same gate ``g``."""
    fine = (experts * m).unsqueeze(-1) + torch.arange(m)
    return gates.repeat_interleave(m, dim=1), fine.reshape(experts.shape[0], -1)
