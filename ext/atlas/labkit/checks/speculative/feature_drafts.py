"""Checks of the Medusa-against-EAGLE lab of ``speculative/draft-methods.md``.

A small causal language model is trained on a synthetic language (a second-order Markov chain with
three continuations per pair of tokens), so that its next-token distributions have real
uncertainty; Medusa heads and an EAGLE-style draft are then trained on its own sampled text and
its features, and each draft is scored against the target's own distributions by the
acceptance rule. Everything is seeded and runs on the CPU in seconds.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from atlas.labkit.speculative.heads import (
    EagleDraft,
    MedusaHeads,
    eagle_draft,
    eagle_loss,
    medusa_draft,
    medusa_loss,
)

ROLE = "check"


def markov_chain(vocab: int, seed: int) -> torch.Tensor:
    """``[vocab, vocab, vocab]`` next-token probabilities after each pair: three distinct
    continuations with probabilities 0.6, 0.3 and 0.1."""
    g = torch.Generator().manual_seed(seed)
    table = torch.zeros(vocab, vocab, vocab)
    for a in range(vocab):
        for b in range(vocab):
            nxt = torch.randperm(vocab, generator=g)[:3]
            table[a, b, nxt] = torch.tensor([0.6, 0.3, 0.1])
    return table


def chain_samples(table: torch.Tensor, n: int, length: int, g: torch.Generator) -> torch.Tensor:
    vocab = table.shape[0]
    x = torch.randint(vocab, (n, 2), generator=g)
    for _ in range(length - 2):
        nxt = torch.multinomial(table[x[:, -2], x[:, -1]], 1, generator=g)
        x = torch.cat([x, nxt], dim=1)
    return x


class Target(nn.Module):
    """A neural trigram language model (in the manner of Bengio et al.): the feature at ``t``
    is computed from the embeddings of ``x_{t-1}`` and ``x_t`` by an MLP and normalised, and
    ``head`` reads it. Causal, as the draft methods need, and cheap enough to train in a lab."""

    def __init__(self, vocab: int, dim: int = 48):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.mix, self.out = nn.Linear(2 * dim, 4 * dim), nn.Linear(4 * dim, dim)
        self.norm, self.head = nn.LayerNorm(dim), nn.Linear(dim, vocab, bias=False)

    def features(self, x: torch.Tensor) -> torch.Tensor:
        e = self.embed(x)
        prev = torch.cat([torch.zeros_like(e[:, :1]), e[:, :-1]], dim=1)
        return self.norm(self.out(nn.functional.gelu(self.mix(torch.cat([prev, e], dim=-1)))))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x))


def train(params, loss_fn, steps: int, lr: float = 3e-3) -> float:
    opt = torch.optim.Adam(params, lr=lr)
    for _ in range(steps):
        opt.zero_grad()
        loss = loss_fn()
        loss.backward()
        opt.step()
    return float(loss.detach())


@torch.no_grad()
def sample_target(target: Target, prompts: torch.Tensor, length: int, g: torch.Generator):
    x = prompts
    while x.shape[1] < length:
        probs = torch.softmax(target(x)[:, -1], -1)
        x = torch.cat([x, torch.multinomial(probs, 1, generator=g)], dim=1)
    return x


@dataclass
class Acceptance:
    """Per draft depth, the share of rounds that keep at least that many drafts."""

    greedy: list[float]  # exact match against the target's greedy choice after each prefix
    sampled: list[float]  # speculative sampling of a point-mass draft: keep x with prob p(x)

    def mean_accepted(self, kind: str) -> float:
        return sum(getattr(self, kind))


@torch.no_grad()
def score(target: Target, seqs: torch.Tensor, drafts_at, k: int) -> Acceptance:
    """For every position ``t`` of held-out target samples, draft ``k`` tokens after
    ``x_{t+1}`` with ``drafts_at(feat_t, x_{t+1}) -> [k, batch]``, then run the target once
    over the context and the drafts and read, at each draft, its probability and whether it is
    the target's argmax. A deterministic draft is accepted under speculative sampling with
    probability ``p(draft)``, so a round keeps ``j`` or more drafts with probability
    ``prod_{i <= j} p_i`` (greedy: all of the first ``j`` match)."""
    feats = target.features(seqs)
    greedy, sampled = torch.zeros(k), torch.zeros(k)
    rounds = 0
    for t in range(1, seqs.shape[1] - 1):
        drafts = drafts_at(feats[:, t], seqs[:, t + 1])  # [k, batch]
        probe = torch.cat([seqs[:, : t + 2], drafts[:-1].T], dim=1)
        logits = target(probe)[:, t + 1 :]  # after x_{t+1}, d_1, ..., d_{k-1}
        p = torch.softmax(logits, -1).gather(-1, drafts.T[..., None])[..., 0]
        hit = (logits.argmax(-1) == drafts.T).double()
        greedy += hit.cumprod(-1).sum(0)
        sampled += p.double().cumprod(-1).sum(0)
        rounds += seqs.shape[0]
    return Acceptance((greedy / rounds).tolist(), (sampled / rounds).tolist())


def medusa_against_eagle(
    vocab: int = 16, k: int = 3, steps: int = 300, seed: int = 0
) -> dict[str, Acceptance | float]:
    """Train the target on the chain, then Medusa heads and an EAGLE draft on the target's own
    samples and features (the same data, steps and optimiser for both), and score both on
    held-out samples. Also returns the chain's own bound: with the true pair known, the best
    first draft is kept with probability 0.6 under sampling."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # one thread: the same float sums, so the same training, anywhere
    try:
        return _medusa_against_eagle(vocab, k, steps, seed)
    finally:
        torch.set_num_threads(threads)


def _medusa_against_eagle(vocab: int, k: int, steps: int, seed: int) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    table = markov_chain(vocab, seed)
    data = chain_samples(table, 2048, 16, g)
    target = Target(vocab)

    def lm_loss() -> torch.Tensor:
        batch = data[torch.randint(len(data), (64,), generator=g)]
        logits = target(batch[:, :-1])
        return nn.functional.cross_entropy(logits.flatten(0, 1), batch[:, 1:].flatten())

    target_loss = train(target.parameters(), lm_loss, steps)
    target.requires_grad_(False)
    own = sample_target(target, chain_samples(table, 512, 2, g), 16, g)
    train_seqs, test_seqs = own[:384], own[384:]
    with torch.no_grad():
        feats = target.features(train_seqs)

    heads = MedusaHeads(target.head.in_features, vocab, k)
    draft = EagleDraft(target.head.in_features)

    def batch_of(fn):
        def loss() -> torch.Tensor:
            idx = torch.randint(len(train_seqs), (64,), generator=g)
            return fn(feats[idx], train_seqs[idx])

        return loss

    train(heads.parameters(), batch_of(lambda f, x: medusa_loss(heads, f, x)), steps)
    train(
        draft.parameters(),
        batch_of(lambda f, x: eagle_loss(draft, f, x, target.embed, target.head)),
        steps,
    )
    with torch.no_grad():
        medusa = score(target, test_seqs, lambda f, _x: medusa_draft(heads, f), k)
        eagle = score(
            target,
            test_seqs,
            lambda f, x: eagle_draft(draft, f, x, target.embed, target.head, k),
            k,
        )
    return {"medusa": medusa, "eagle": eagle, "target_loss": target_loss}
