"""Checking code that several pages of the post-training chapter share:
``post-training/agentic.md``, ``post-training/mismatch.md``,
``post-training/policy-gradient.md``, ``post-training/problems.md``,
``post-training/rollout-train.md``, ``post-training/sft.md``, ``post-training/weight-sync.md``.

The chapter's checks: upstream code at the pins, fakes, toy models.
"""

from __future__ import annotations

import functools
import logging
import math
import types
from typing import Any

import torch

from atlas.labkit.pinned import definitions, dropping
from atlas.labkit.pinned import read as _read

ROLE = "check"


read_upstream = functools.partial(_read, with_path=True)
# Decorators that need a GPU stack or a cluster; others, such as ``dataclasses.dataclass``, stay.
upstream_defs = functools.partial(
    definitions, decorators=dropping("torch.compile", "ray.remote", "trace_function")
)
_QUIET = logging.getLogger("post_training_upstream")
_QUIET.addHandler(logging.NullHandler())
_QUIET.propagate = False


SLIME_LOSS = "slime/backends/megatron_utils/loss.py"
SLIME_CP = "slime/backends/megatron_utils/cp_utils.py"
MEGATRON_RL = "megatron/rl/rl_utils.py"


class _Mpu:
    """Megatron's ``parallel_state`` as seen by one rank without context parallelism."""

    @staticmethod
    def get_context_parallel_world_size() -> int:
        return 1

    @staticmethod
    def get_context_parallel_rank() -> int:
        return 0


@functools.cache
def slime_loss() -> types.SimpleNamespace:
    """slime's TIS weighting (``loss.py``) and its per-sample reducer (``cp_utils.py``)."""
    from collections.abc import Callable

    loss = upstream_defs(
        "slime",
        SLIME_LOSS,
        ("vanilla_tis_function", "icepop_function"),
        {"torch": torch, "Any": Any},
    )
    cp = upstream_defs(
        "slime",
        SLIME_CP,
        ("get_sum_of_sample_mean",),
        {"torch": torch, "mpu": _Mpu, "Callable": Callable},
    )
    return types.SimpleNamespace(
        vanilla_tis_function=loss["vanilla_tis_function"],
        icepop_function=loss["icepop_function"],
        get_sum_of_sample_mean=cp["get_sum_of_sample_mean"],
        label=loss.label,
    )


class _Sample:
    def __init__(self, reward: float) -> None:
        self.reward = reward

    def get_reward_value(self, args) -> float:
        return self.reward


@functools.cache
def megatron_grpo() -> types.SimpleNamespace:
    """Megatron-LM's ``calculate_grpo_advantages`` and ``calculate_grpo_loss`` (``megatron/rl``)."""
    import numpy as np

    scope = upstream_defs(
        "megatron",
        MEGATRON_RL,
        ("calculate_grpo_advantages", "calculate_grpo_loss"),
        {
            "torch": torch,
            "np": np,
            "logging": logging,
            "logger": _QUIET,
            "log_single_rank": lambda *a, **k: None,
        },
    )
    return types.SimpleNamespace(
        advantages=scope["calculate_grpo_advantages"],
        loss=scope["calculate_grpo_loss"],
        label=scope.label,
    )


def lognormal_lengths(
    n: int, median: float, sigma: float, cap: int, gen: torch.Generator
) -> torch.Tensor:
    """``n`` response lengths, log-normal around ``median`` and cut at ``cap`` tokens."""
    z = torch.randn(n, generator=gen, dtype=torch.float64)
    return torch.clamp(torch.exp(math.log(median) + sigma * z).round(), 1, cap)
