"""Capacity and dropping: the expected share of dropped assignments, in closed form.

Take a group of T tokens, each choosing k experts, and capacity C rows per expert. If the tokens
route independently and a token chooses expert i with probability ``q_i`` (the ``q_i`` sum to
k), the load ``L_i`` of expert i is binomial, ``B(T, q_i)``, whatever the dependence between the
k choices of one token. An expert drops ``max(L_i - C, 0)`` assignments, so by linearity of
expectation the expected dropped share is

    D = sum_i E[max(L_i - C, 0)] / (k T),

which needs only the binomial law of each ``L_i``: no simulation.
"""

from __future__ import annotations

import math

import torch

from atlas.labkit.moe.router import capacity

ROLE = "taught"


def binomial_pmf(n: int, p: float) -> list[float]:
    """``P(L = k)`` for ``k = 0..n``, ``L ~ B(n, p)``, computed in log space."""
    if p <= 0.0 or p >= 1.0:
        return [float(k == round(n * p)) for k in range(n + 1)]
    lp, lq = math.log(p), math.log1p(-p)
    return [
        math.exp(
            math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1) + k * lp + (n - k) * lq
        )
        for k in range(n + 1)
    ]


def expected_overflow(n: int, p: float, cap: int) -> float:
    """``E[max(L - cap, 0)]`` for ``L ~ B(n, p)``."""
    pmf = binomial_pmf(n, p)
    return sum((k - cap) * pmf[k] for k in range(cap + 1, n + 1))


def expected_drop_fraction(tokens: int, q: list[float], k: int, capacity_factor: float) -> float:
    """The closed form above, for per-expert selection probabilities ``q`` (summing to k)."""
    cap = capacity(tokens, len(q), k, capacity_factor)
    return sum(expected_overflow(tokens, qi, cap) for qi in q) / (k * tokens)


def simulated_drop_fraction(
    tokens: int,
    num_experts: int,
    k: int,
    capacity_factor: float,
    trials: int,
    probs: torch.Tensor | None = None,
    seed: int = 0,
) -> float:
    """Route ``trials`` groups at random and count what a capacity of ``ceil(phi k T / E)``
    drops. ``probs`` None: each token picks k distinct experts uniformly (``q_i = k / E``).
    Otherwise ``k`` must be 1 and each token draws its expert from ``probs``."""
    gen = torch.Generator().manual_seed(seed)
    cap = capacity(tokens, num_experts, k, capacity_factor)
    dropped = 0
    for _ in range(trials):
        if probs is None:
            experts = torch.rand(tokens, num_experts, generator=gen).topk(k, dim=-1).indices
        else:
            experts = torch.multinomial(probs, tokens, replacement=True, generator=gen)
        load = torch.bincount(experts.reshape(-1), minlength=num_experts)
        dropped += int((load - cap).clamp(min=0).sum())
    return dropped / (trials * k * tokens)
