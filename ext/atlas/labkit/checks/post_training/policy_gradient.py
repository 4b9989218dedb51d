"""Checks of the labs of ``post-training/policy-gradient.md``.

The chapter's checks: upstream code at the pins, fakes, toy models.
"""

from __future__ import annotations

import functools
import types

import torch

from atlas.labkit.checks.post_training.common import _Sample, upstream_defs

ROLE = "check"


SLIME_PPO = "slime/utils/ppo_utils.py"


@functools.cache
def slime_ppo() -> types.SimpleNamespace:
    """slime's KL estimators, clipped loss and GAE from ``ppo_utils.py`` at the pin (the
    ``@torch.compile`` decorators dropped)."""
    import torch.nn.functional as F

    names = (
        "compute_approx_kl",
        "compute_policy_loss",
        "compute_gspo_kl",
        "vanilla_gae",
        "chunked_discounted_returns",
        "chunked_gae",
    )
    scope = upstream_defs("slime", SLIME_PPO, names, {"torch": torch, "F": F})
    return types.SimpleNamespace(label=scope.label, **{n: scope[n] for n in names})


def slime_group_rewards(rewards: list[float], group_size: int, std: bool = True) -> list[float]:
    """The rewards slime hands to training for GRPO: ``RolloutManager._post_process_rewards``
    at the pin, run on plain samples."""
    scope = upstream_defs(
        "slime", "slime/ray/rollout.py", ("RolloutManager._post_process_rewards",), {"torch": torch}
    )
    fn = scope["_post_process_rewards"]
    args = types.SimpleNamespace(
        advantage_estimator="grpo",
        rewards_normalization=True,
        grpo_std_normalization=std,
        n_samples_per_prompt=group_size,
        rollout_batch_size=len(rewards) // group_size,
    )
    me = types.SimpleNamespace(custom_reward_post_process_func=None, args=args)
    _, normalized = fn(me, [_Sample(r) for r in rewards])
    return normalized


def chain_expected_reward(logits: torch.Tensor, target: int) -> float:
    """The exact expected reward of the tabular policy of :mod:`.ppo`, by dynamic programming
    over the distribution of the previous token (no sampling): the mean over positions of the
    probability that the token there is ``target``."""
    horizon, states, vocab = logits.shape
    dist = torch.zeros(states, dtype=torch.float64)
    dist[vocab] = 1.0
    total = 0.0
    for t in range(horizon):
        nxt = dist @ torch.softmax(logits[t].to(torch.float64), dim=-1)
        total += nxt[target].item()
        dist = torch.zeros(states, dtype=torch.float64)
        dist[:vocab] = nxt
    return total / horizon


def lambda_return_advantages(
    rewards: torch.Tensor, values: torch.Tensor, gamma: float, lam: float
) -> torch.Tensor:
    """GAE from its definition as a sum, not a recursion: ``A_t = sum_l (gamma lam)^l
    delta_{t+l}`` over the rest of the trajectory."""
    T = rewards.shape[-1]
    nxt = torch.cat([values[..., 1:], torch.zeros_like(values[..., :1])], dim=-1)
    delta = rewards + gamma * nxt - values
    out = torch.zeros_like(rewards)
    for t in range(T):
        for k in range(T - t):
            out[..., t] += (gamma * lam) ** k * delta[..., t + k]
    return out
