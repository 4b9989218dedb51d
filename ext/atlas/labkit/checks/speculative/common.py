"""Checking code that several pages of the speculative chapter share:
``speculative/draft-methods.md``, ``speculative/index.md``, ``speculative/serving.md``,
``speculative/token-trees.md``.

The chapter's checks: seeded distributions, Monte Carlo estimates and their bounds, the plain
decoding reference, and upstream functions run from their source at the pins (EAGLE's
verification and tree buffers, Megatron-LM's verification and KV rewind).
"""

from __future__ import annotations

import math

import torch

from atlas.labkit.speculative.model import KVCache, TinyLM

ROLE = "check"


def greedy_reference(model: TinyLM, prompt: list[int], n: int) -> list[int]:
    """Plain greedy decoding with no cache: the whole sequence through the model per token."""
    seq = list(prompt)
    for _ in range(n):
        logits = model(torch.tensor(seq), torch.arange(len(seq)), KVCache())
        seq.append(int(logits[-1].argmax()))
    return seq[len(prompt) :]


def simulated_speedup(
    model, gpu, batch: int, context: int, gamma: int, alpha: float, steps: int = 400, seed: int = 0
) -> tuple[float, float]:
    """Run ``steps`` speculative steps for ``batch`` sequences: every draft position kept with
    probability ``alpha`` until the first rejection (drawn, not averaged), each step charged
    ``gamma`` draft steps and one verify pass; plain decoding charged one step per token.
    Returns the measured speed-up and its standard error."""
    from atlas.labkit.serving.roofline import step_cost
    from atlas.labkit.speculative.engine import draft_head_cost, verify_cost

    g = torch.Generator().manual_seed(seed)
    keep = torch.rand(steps, batch, gamma, generator=g) < alpha
    per_step = (keep.long().cumprod(-1).sum(-1) + 1).sum(-1).to(torch.float64)  # tokens/step
    t_step = verify_cost(model, gpu, batch, context, gamma).time_s
    t_step += gamma * draft_head_cost(model, gpu, batch, context).time_s
    t_plain = step_cost(model, gpu, [(context, 1)] * batch).time_s
    rate = per_step / t_step / (batch / t_plain)
    return float(rate.mean()), float(rate.std() / math.sqrt(steps))
