"""What a serving engine adds to speculation: many sequences verified in one pass, a paged
KV cache rewound after rejections, and a step whose cost grows with the batch.

Every decode request of a step carries the same number of query tokens, ``gamma + 1``: its
pending token and ``gamma`` drafts. A fixed stride keeps the step's shape predictable (a CUDA
graph can be captured for it) and makes verification a reshape.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from atlas.labkit.serving.models import ModelConfig
from atlas.labkit.serving.roofline import Gpu, StepCost, step_cost

ROLE = "taught"


def verify_batch(inputs: torch.Tensor, outputs: torch.Tensor) -> torch.Tensor:
    """Accepted drafts per request for greedy (or exact-match) verification.

    ``inputs``: ``[b, gamma + 1]``, each row the pending token then the drafts; ``outputs``:
    ``[b, gamma + 1]``, the target's token after each input. Draft ``j`` (input column ``j``)
    is kept when it equals the target's token after column ``j - 1`` and all before it were.
    """
    match = inputs[:, 1:] == outputs[:, :-1]
    return match.long().cumprod(dim=1).sum(dim=1)


@dataclass
class PagedRequest:
    """A request's place in a paged cache: its blocks and the tokens written into them."""

    blocks: list[int]
    length: int  # tokens whose keys and values are written, this step's included


@dataclass
class BlockPool:
    block_size: int
    free: list[int] = field(default_factory=list)

    def reserve(self, req: PagedRequest, new_tokens: int) -> None:
        """Make room for ``new_tokens`` more tokens before the step writes them."""
        need = -(-(req.length + new_tokens) // self.block_size) - len(req.blocks)
        for _ in range(max(need, 0)):
            req.blocks.append(self.free.pop())
        req.length += new_tokens

    def rewind(self, req: PagedRequest, rejected: int) -> list[int]:
        """Forget the keys and values of ``rejected`` trailing tokens; return the blocks that
        held only rejected tokens to the pool. Nothing is erased: the next step overwrites."""
        req.length -= rejected
        keep = -(-req.length // self.block_size)
        released = req.blocks[keep:]
        del req.blocks[keep:]
        self.free.extend(released)
        return released


# --- the roofline of a speculative step ------------------------------------------------------


def verify_cost(model: ModelConfig, gpu: Gpu, batch: int, context: int, gamma: int) -> StepCost:
    """A target pass over ``gamma + 1`` tokens for each of ``batch`` sequences that hold
    ``context`` cached tokens: the serving chapter's step with the output head charged at
    every new position (``logits="all"``), since verification needs the target's distribution
    after each draft, not only after the last."""
    return step_cost(model, gpu, [(context, gamma + 1)] * batch, logits="all")


def draft_head_cost(model: ModelConfig, gpu: Gpu, batch: int, context: int) -> StepCost:
    """One step of an EAGLE- or MTP-style draft: one decoder layer of the target's shape and
    the target's output head, for one token per sequence, with one layer of KV cache."""
    layer = model.layer_matmul_params() // model.num_layers
    head = model.vocab_size * model.hidden_size
    kv_one_layer = model.kv_bytes_per_token() // model.num_layers
    flops = 2 * (layer + head) * batch + model.attention_flops_per_key() // model.num_layers * (
        context * batch
    )
    moved = (layer + head) * model.dtype_bytes + kv_one_layer * context * batch
    return StepCost(flops=float(flops), bytes=float(moved), gpu=gpu)


def spec_speedup(
    model: ModelConfig, gpu: Gpu, batch: int, context: int, gamma: int, alpha: float
) -> float:
    """Throughput with speculation over throughput without, at one batch size: expected
    tokens per verify pass over the time of ``gamma`` draft steps and one verify pass, against
    one token per plain decode step."""
    from atlas.labkit.speculative.sampling import expected_tokens

    plain = step_cost(model, gpu, [(context, 1)] * batch).time_s
    spec = verify_cost(model, gpu, batch, context, gamma).time_s
    spec += gamma * draft_head_cost(model, gpu, batch, context).time_s
    return expected_tokens(alpha, gamma) * plain / spec


def breakeven_batch(
    model: ModelConfig, gpu: Gpu, context: int, gamma: int, alpha: float, limit: int = 1 << 16
) -> int | None:
    """The smallest batch at which speculation no longer pays (speed-up below 1), found by
    doubling then bisection; ``None`` if it still pays at ``limit``. The speed-up falls with
    the batch once verification turns compute-bound, so the search is monotone there."""

    def pays(b: int) -> bool:
        return spec_speedup(model, gpu, b, context, gamma, alpha) >= 1.0

    hi = 1
    while pays(hi):
        if hi >= limit:
            return None
        hi *= 2
    lo = hi // 2  # pays(lo) is True, or lo == 0
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if pays(mid) else (lo, mid)
    return hi


def crossover_batch(ridge: float, alpha: float, gamma: int) -> float:
    """The batch above which speculation loses, on a roofline that counts only the weights
    (short contexts) and a free draft. A step over ``n`` tokens costs ``max(n / ridge, 1)``
    weight reads: plain decode ``max(b / ridge, 1)``, verification ``max(b (gamma+1) / ridge,
    1)``. Between ``ridge / (gamma + 1)`` and ``ridge`` plain decode is still memory-bound and
    verification is not, so the speed-up is ``E[tau] ridge / (b (gamma + 1))``, which is 1 at
    ``b = ridge E[tau] / (gamma + 1)``; that point always lies in that range."""
    from atlas.labkit.speculative.sampling import expected_tokens

    return ridge * expected_tokens(alpha, gamma) / (gamma + 1)
