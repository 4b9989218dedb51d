"""The policy-gradient family, in plain PyTorch: advantages, surrogate losses, reductions, KL.

Taught on the page "The policy-gradient family". Every function works on flat per-token
tensors (the tokens of all responses of a batch, concatenated) or on short Python lists, the
way the trainers of the chapter hold them.
"""

from __future__ import annotations

import torch

ROLE = "taught"


def grpo_advantages(
    rewards: torch.Tensor, group_size: int, *, std: str = "unbiased", eps: float = 1e-6
) -> torch.Tensor:
    """GRPO's group baseline. ``rewards`` holds one scalar per response, the ``group_size``
    responses of each prompt next to each other. Each reward minus its group's mean, divided
    by the group's standard deviation (``"unbiased"``: divide by G - 1; ``"population"``:
    by G) plus ``eps``; ``std="none"`` keeps the centred reward (Dr. GRPO)."""
    r = rewards.reshape(-1, group_size).to(torch.float64)
    centred = r - r.mean(dim=1, keepdim=True)
    if std == "none":
        return centred.flatten()
    s = r.std(dim=1, keepdim=True, correction=1 if std == "unbiased" else 0)
    return (centred / (s + eps)).flatten()


def rloo_advantages(rewards: torch.Tensor, group_size: int) -> torch.Tensor:
    """RLOO's leave-one-out baseline: each reward minus the mean of the *other* ``G - 1``
    rewards of its group. The baseline then does not depend on the answer it is subtracted from
    (the condition for an unbiased gradient), and it equals ``G / (G - 1)`` times the centred
    reward, so RLOO is Dr. GRPO's advantage scaled by a constant."""
    r = rewards.reshape(-1, group_size).to(torch.float64)
    others = (r.sum(dim=1, keepdim=True) - r) / (group_size - 1)
    return (r - others).flatten()


def masked_whiten(values: torch.Tensor, mask: torch.Tensor, eps: float = 1e-8) -> torch.Tensor:
    """Batch whitening of per-token advantages (slime's ``--normalize-advantages``, required by
    its REINFORCE++ estimators): subtract the mean over the tokens the mask keeps and divide by
    their standard deviation (Bessel-corrected), one statistic for the whole batch."""
    m = mask.to(values.dtype)
    n = m.sum()
    mean = (values * m).sum() / n
    var = ((values - mean) ** 2 * m).sum() / (n - 1)
    return (values - mean) * torch.rsqrt(var + eps)


def overlong_penalty(length: int, max_len: int, cache: int) -> float:
    """DAPO's soft overlong punishment, added to the reward of an answer of ``length`` tokens:
    0 up to ``max_len - cache``, then falling linearly to -1 at ``max_len``, and -1 beyond
    (an answer cut at the limit is punished fully, one near it a little)."""
    start = max_len - cache
    if length <= start:
        return 0.0
    if length <= max_len:
        return (start - length) / cache
    return -1.0


def clipped_surrogate(
    logp: torch.Tensor,
    old_logp: torch.Tensor,
    advantages: torch.Tensor,
    eps_low: float = 0.2,
    eps_high: float = 0.2,
) -> torch.Tensor:
    """PPO's clipped objective, negated to a loss, per token: ``-min(r A, clip(r) A)`` with
    ``r = exp(logp - old_logp)`` clipped to ``[1 - eps_low, 1 + eps_high]`` (DAPO raises
    ``eps_high`` alone: clip-higher)."""
    ratio = torch.exp(logp - old_logp)
    clipped = ratio.clamp(1 - eps_low, 1 + eps_high)
    return -torch.minimum(ratio * advantages, clipped * advantages)


def gspo_ratio(logp: torch.Tensor, old_logp: torch.Tensor, lengths: list[int]) -> torch.Tensor:
    """GSPO's sequence-level ratio, broadcast back to tokens: for each response,
    ``exp(mean over its tokens of (logp - old_logp))``, the geometric mean of its token ratios."""
    pieces = []
    for d in torch.split(logp - old_logp, lengths):
        pieces.append(torch.exp(d.mean()).expand(len(d)))
    return torch.cat(pieces)


def kl_estimate(logp: torch.Tensor, ref_logp: torch.Tensor, kind: str) -> torch.Tensor:
    """Per-token estimators of KL(pi || pi_ref) from tokens sampled from pi (Schulman's k1,
    k2, k3): with ``x = log pi_ref - log pi``, k1 = -x, k2 = x^2 / 2, k3 = e^x - 1 - x."""
    x = ref_logp - logp
    if kind == "k1":
        return -x
    if kind == "k2":
        return x * x / 2
    if kind == "k3":
        return torch.exp(x) - 1 - x
    raise ValueError(f"unknown estimator {kind!r}")


def gae(
    rewards: torch.Tensor, values: torch.Tensor, gamma: float, lam: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """Generalized advantage estimation along one trajectory of T steps that ends in a terminal
    state (value 0 after the last step). ``delta_t = r_t + gamma V_{t+1} - V_t`` and
    ``A_t = delta_t + gamma lam A_{t+1}``, computed backwards; returns ``(A, A + V)``, the
    advantages and the critic's regression targets."""
    T = rewards.shape[-1]
    adv = torch.zeros_like(rewards)
    running = torch.zeros_like(rewards[..., 0])
    for t in reversed(range(T)):
        next_value = values[..., t + 1] if t + 1 < T else torch.zeros_like(running)
        delta = rewards[..., t] + gamma * next_value - values[..., t]
        running = delta + gamma * lam * running
        adv[..., t] = running
    return adv, adv + values
