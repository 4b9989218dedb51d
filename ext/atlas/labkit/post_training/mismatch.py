"""Training-inference mismatch: where it comes from, and truncated importance sampling.

Taught on the page "Training-inference mismatch". :func:`splitk_matmul` is a matrix product
whose reduction order depends on the batch, as a kernel's does when it picks a split of the
reduction dimension by shape; :func:`batch_invariant_matmul` fixes the order. The rest is the
correction: :func:`tis_weights` are the truncated ratios the loss is multiplied by, and
:func:`policy_gradient` the expected policy gradient of a softmax policy under a sampler,
with and without them, in closed form.
"""

from __future__ import annotations

import torch

ROLE = "taught"


def _chunked_sum(x: torch.Tensor, w: torch.Tensor, chunks: int) -> torch.Tensor:
    """``x @ w`` with the reduction cut into ``chunks`` pieces, each product rounded to bf16
    and the partial results added one by one in bf16, as a split-K kernel does."""
    out = None
    for xs, ws in zip(x.chunk(chunks, dim=1), w.chunk(chunks, dim=0), strict=True):
        part = (xs.float() @ ws.float()).to(torch.bfloat16)
        out = part if out is None else (out + part)
    return out


def splitk_matmul(
    x: torch.Tensor, w: torch.Tensor, small_batch: int = 8, splits: int = 4
) -> torch.Tensor:
    """A bf16 product whose kernel choice depends on the batch: below ``small_batch`` rows it
    splits the reduction in ``splits`` to keep the GPU busy, above it runs one pass. The same
    row can therefore come out different in a different batch."""
    return _chunked_sum(x, w, splits if x.shape[0] < small_batch else 1)


def batch_invariant_matmul(x: torch.Tensor, w: torch.Tensor, splits: int = 4) -> torch.Tensor:
    """The same product with one reduction order for every batch size: each row's result
    depends on that row alone."""
    return _chunked_sum(x, w, splits)


def tis_weights(
    train_logp: torch.Tensor, rollout_logp: torch.Tensor, clip: float = 2.0, clip_low: float = 0.0
) -> torch.Tensor:
    """Truncated importance weights per token: ``pi_train / pi_rollout`` of the sampled token,
    clamped to ``[clip_low, clip]``. The policy-gradient loss of each token is multiplied by
    its weight (the weight carries no gradient)."""
    return torch.exp(train_logp - rollout_logp).clamp(clip_low, clip).detach()


def policy_gradient(
    logits: torch.Tensor, sampler_logits: torch.Tensor, reward: torch.Tensor, clip: float | None
) -> torch.Tensor:
    """Expected REINFORCE gradient (with respect to ``logits``) of a softmax policy ``p`` over
    the vocabulary when tokens are drawn from the sampler's softmax ``q``:
    ``sum_x q(x) w(x) reward(x) (e_x - p)``, with ``w = 1`` (no correction, ``clip=None``) or
    ``w = min(p / q, clip)`` (truncated importance sampling; ``clip=inf`` is plain IS, which
    is exact)."""
    p, q = torch.softmax(logits, -1), torch.softmax(sampler_logits, -1)
    w = torch.ones_like(p) if clip is None else torch.clamp(p / q, max=clip)
    score = torch.eye(len(p), dtype=p.dtype) - p  # row x: gradient of log p(x)
    return ((q * w * reward)[:, None] * score).sum(0)
