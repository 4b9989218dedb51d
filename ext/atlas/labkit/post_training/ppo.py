"""PPO with a critic and GAE on a toy "language model": a tabular policy over short sequences.

Taught on the page "The policy-gradient family". The policy writes ``horizon`` tokens from a
vocabulary of ``vocab``; the probability of the next token depends on the position and the
previous token (a table of logits, the smallest autoregressive model). The reward comes only
at the end, as in RL on LLM outputs: the fraction of tokens equal to ``target``. A tabular
critic predicts the return from the same state. Everything is plain PyTorch.
"""

from __future__ import annotations

import torch

from atlas.labkit.post_training.pg import clipped_surrogate, gae

ROLE = "taught"


def sample_episodes(logits: torch.Tensor, batch: int, target: int, gen: torch.Generator):
    """Sample ``batch`` sequences. Returns the tokens ``[B, H]``, the state index of each step
    (the previous token, ``vocab`` at the start) ``[B, H]``, the log-probabilities of the
    sampled tokens ``[B, H]`` and the per-step rewards ``[B, H]`` (zero but at the last step)."""
    horizon, _, vocab = logits.shape
    prev = torch.full((batch,), vocab, dtype=torch.long)
    tokens, states, logps = [], [], []
    for t in range(horizon):
        probs = torch.softmax(logits[t, prev], dim=-1)
        tok = torch.multinomial(probs, 1, generator=gen).squeeze(1)
        states.append(prev)
        tokens.append(tok)
        logps.append(torch.log(probs.gather(1, tok[:, None]).squeeze(1)))
        prev = tok
    tokens, states, logps = torch.stack(tokens, 1), torch.stack(states, 1), torch.stack(logps, 1)
    rewards = torch.zeros(batch, horizon, dtype=logits.dtype)
    rewards[:, -1] = (tokens == target).to(logits.dtype).mean(dim=1)
    return tokens, states, logps, rewards


def ppo_train(
    horizon: int = 4,
    vocab: int = 3,
    target: int = 2,
    iterations: int = 15,
    batch: int = 64,
    epochs: int = 4,
    lr: float = 0.1,
    gamma: float = 1.0,
    lam: float = 0.95,
    eps: float = 0.2,
    seed: int = 0,
) -> tuple[torch.Tensor, list[float]]:
    """Train the tabular policy with PPO: sample a batch with the current policy (the old
    policy), compute GAE advantages with the critic, then take ``epochs`` Adam steps on the
    clipped surrogate plus the critic's squared error. Returns the final logits and the mean
    sampled reward of each iteration."""
    gen = torch.Generator().manual_seed(seed)
    logits = torch.zeros(horizon, vocab + 1, vocab, dtype=torch.float64, requires_grad=True)
    values = torch.zeros(horizon, vocab + 1, dtype=torch.float64, requires_grad=True)
    opt = torch.optim.Adam([logits, values], lr=lr)
    steps = torch.arange(horizon)
    sampled = []
    for _ in range(iterations):
        with torch.no_grad():
            tokens, states, old_logp, rewards = sample_episodes(logits, batch, target, gen)
            adv, returns = gae(rewards, values[steps, states], gamma, lam)
        sampled.append(rewards.sum(1).mean().item())
        for _ in range(epochs):
            logp = (
                torch.log_softmax(logits[steps, states], dim=-1)
                .gather(2, tokens[..., None])
                .squeeze(2)
            )
            policy_loss = clipped_surrogate(logp, old_logp, adv, eps, eps).mean()
            value_loss = 0.5 * (values[steps, states] - returns).pow(2).mean()
            opt.zero_grad()
            (policy_loss + value_loss).backward()
            opt.step()
    return logits.detach(), sampled
