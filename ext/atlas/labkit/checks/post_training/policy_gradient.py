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


def slime_group_rewards(
    rewards: list[float],
    group_size: int,
    std: bool = True,
    estimator: str = "grpo",
    prompts: int | None = None,
) -> list[float]:
    """The rewards slime hands to training for ``estimator`` (``grpo``, or
    ``reinforce_plus_plus_baseline``): ``RolloutManager._post_process_rewards`` at the pin, run
    on plain samples. ``prompts`` is the configured ``rollout_batch_size`` (by default the
    number of groups the rewards fill)."""
    scope = upstream_defs(
        "slime", "slime/ray/rollout.py", ("RolloutManager._post_process_rewards",), {"torch": torch}
    )
    fn = scope["_post_process_rewards"]
    args = types.SimpleNamespace(
        advantage_estimator=estimator,
        rewards_normalization=True,
        grpo_std_normalization=std,
        n_samples_per_prompt=group_size,
        rollout_batch_size=len(rewards) // group_size if prompts is None else prompts,
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


def exact_kl_gradients(logits: torch.Tensor, ref_logp: torch.Tensor) -> dict[str, torch.Tensor]:
    """The reference for the KL-as-a-loss lab: autograd of the two divergences written in closed
    form over the whole vocabulary (no sampling, no estimator), with respect to the policy's
    logits. ``"reverse"`` is grad KL(pi || pi_ref), ``"forward"`` grad KL(pi_ref || pi)."""
    out = {}
    for name in ("reverse", "forward"):
        theta = logits.detach().clone().requires_grad_(True)
        logp = torch.log_softmax(theta, dim=-1)
        if name == "reverse":
            kl = (logp.exp() * (logp - ref_logp)).sum()
        else:
            kl = (ref_logp.exp() * (ref_logp - logp)).sum()
        (grad,) = torch.autograd.grad(kl, theta)
        out[name] = grad
    return out


def estimator_gradient(
    logits: torch.Tensor,
    ref_logp: torch.Tensor,
    tokens: torch.Tensor | None,
    estimator,
    kind: str,
) -> torch.Tensor:
    """What a trainer gets when it adds ``estimator(log pi(y), log pi_ref(y), kind)`` to its loss
    and calls backward: the gradient with respect to the logits of the estimator's mean, the
    tokens held fixed. ``tokens=None`` takes the exact expectation over y ~ pi (each token's
    term weighted by its probability, the weights detached, as sampling would weigh it) instead
    of a sample mean."""
    theta = logits.detach().clone().requires_grad_(True)
    logp = torch.log_softmax(theta, dim=-1)
    if tokens is None:
        weights = logp.exp().detach()
        vocab = torch.arange(len(logp))
        loss = (weights * estimator(logp[vocab], ref_logp[vocab], kind)).sum()
    else:
        loss = estimator(logp[tokens], ref_logp[tokens], kind).mean()
    (grad,) = torch.autograd.grad(loss, theta)
    return grad.to(torch.float64)


def leave_one_out(rewards: list[float], group_size: int) -> list[float]:
    """RLOO's advantages from the definition, one answer at a time: its reward minus the plain
    average of the other answers of its group (no closed form, no tensors)."""
    out = []
    for start in range(0, len(rewards), group_size):
        group = rewards[start : start + group_size]
        for i, r in enumerate(group):
            others = group[:i] + group[i + 1 :]
            out.append(r - sum(others) / len(others))
    return out


class _OneRank:
    """``torch.distributed`` as seen by a single rank: ``all_reduce`` leaves the tensor as is."""

    @staticmethod
    def all_reduce(tensor: torch.Tensor, group=None) -> None:
        return None


def slime_whiten(values: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """slime's ``distributed_masked_whiten`` at the pin (``--normalize-advantages``), on one
    rank."""
    scope = upstream_defs(
        "slime",
        "slime/utils/distributed_utils.py",
        ("distributed_masked_whiten",),
        {"torch": torch, "dist": _OneRank},
    )
    return scope["distributed_masked_whiten"](values, mask, process_group=None, shift_mean=True)
