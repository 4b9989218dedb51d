"""Two drafters that reuse the target's last hidden state: Medusa's heads and EAGLE's feature
draft.

Both read ``f_t``, the target's feature at the last verified position (the hidden state its
LM head turns into the distribution of token ``t + 1``), and both are trained on the target's
own text. They differ in what else they see:

- Medusa's head ``k`` maps ``f_t`` alone to the token ``t + 1 + k``. It never learns which
  token was actually sampled at ``t + 1``, so where sampling could have gone several ways it
  can only predict what follows *on average*.
- EAGLE's draft maps ``f_t`` *and the embedding of the sampled token* ``x_{t+1}`` to the next
  feature ``f_{t+1}``, which the target's own head turns into a token; fed its own output,
  it continues feature by feature. The token input resolves the sampling ambiguity.

EAGLE's real draft is a full decoder layer that attends over all earlier positions; the one
here is its input projection followed by a residual MLP, which sees only the current pair.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

ROLE = "taught"


class MedusaHeads(nn.Module):
    """``k`` heads; head ``i`` (from 1) is a residual SiLU block and a projection to the
    vocabulary, predicting token ``t + 1 + i`` from ``f_t``."""

    def __init__(self, dim: int, vocab: int, k: int):
        super().__init__()
        self.blocks = nn.ModuleList(nn.Linear(dim, dim) for _ in range(k))
        self.out = nn.ModuleList(nn.Linear(dim, vocab) for _ in range(k))

    def forward(self, feat: torch.Tensor) -> torch.Tensor:
        """``feat``: ``[..., dim]``; returns logits ``[k, ..., vocab]``."""
        return torch.stack(
            [out(feat + F.silu(blk(feat))) for blk, out in zip(self.blocks, self.out, strict=True)]
        )


def medusa_loss(heads: MedusaHeads, feats: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
    """Cross-entropy of every head on the target's text. ``feats[:, t]`` is ``f_t``, which
    the target's head reads to predict ``tokens[:, t + 1]``; head ``i`` must predict
    ``tokens[:, t + 1 + i]``."""
    logits = heads(feats)
    loss = feats.new_zeros(())
    for i in range(1, logits.shape[0] + 1):
        pred = logits[i - 1][:, : tokens.shape[1] - 1 - i]
        loss = loss + F.cross_entropy(pred.flatten(0, 1), tokens[:, 1 + i :].flatten())
    return loss


def medusa_draft(heads: MedusaHeads, feat: torch.Tensor) -> torch.Tensor:
    """The greedy draft ``[k, batch]``: each head's most likely token, all from ``f_t``."""
    return heads(feat).argmax(-1)


class EagleDraft(nn.Module):
    """One step of the feature draft: ``(f_t, e(x_{t+1})) -> f_{t+1}``. As in EAGLE, the token
    embedding and the feature are concatenated and projected back to the hidden size by
    ``fc``; a residual MLP stands in for EAGLE's decoder layer."""

    def __init__(self, dim: int):
        super().__init__()
        self.fc = nn.Linear(2 * dim, dim)
        self.up, self.down = nn.Linear(dim, 4 * dim), nn.Linear(4 * dim, dim)

    def forward(self, feat: torch.Tensor, emb: torch.Tensor) -> torch.Tensor:
        x = self.fc(torch.cat([emb, feat], dim=-1))
        return x + self.down(F.silu(self.up(F.layer_norm(x, x.shape[-1:]))))


def eagle_loss(
    draft: EagleDraft,
    feats: torch.Tensor,
    tokens: torch.Tensor,
    embed: nn.Module,
    head: nn.Module,
    w_cls: float = 0.1,
) -> torch.Tensor:
    """EAGLE's objective: regress the next feature (smooth L1) and, through the target's frozen
    head, classify the token that feature predicts (cross-entropy), weighted by ``w_cls``.
    Inputs at ``t``: ``f_t`` and the token ``tokens[:, t + 1]``; targets ``f_{t+1}`` and
    ``tokens[:, t + 2]``."""
    pred = draft(feats[:, :-1], embed(tokens[:, 1:]))
    reg = F.smooth_l1_loss(pred, feats[:, 1:])
    logits = head(pred[:, :-1])
    return reg + w_cls * F.cross_entropy(logits.flatten(0, 1), tokens[:, 2:].flatten())


def eagle_draft(
    draft: EagleDraft,
    feat: torch.Tensor,
    token: torch.Tensor,
    embed: nn.Module,
    head: nn.Module,
    k: int,
) -> torch.Tensor:
    """The greedy draft ``[k, batch]``: predict a feature, read a token from it with the
    target's head, feed both back; step ``i`` drafts token ``t + 1 + i``."""
    out = []
    for _ in range(k):
        feat = draft(feat, embed(token))
        token = head(feat).argmax(-1)
        out.append(token)
    return torch.stack(out)
