"""Checks of the labs of ``post-training/problems.md``.

The chapter's checks: upstream code at the pins, fakes, toy models.
"""

from __future__ import annotations

import functools
import types

import torch

from atlas.labkit.checks.post_training.common import _Sample, upstream_defs

ROLE = "check"


@functools.cache
def _slime_filter():
    scope = upstream_defs(
        "slime",
        "slime/rollout/filter_hub/dynamic_sampling_filters.py",
        ("check_reward_nonzero_std",),
        {
            "torch": torch,
            "DynamicFilterOutput": lambda keep, reason=None: types.SimpleNamespace(keep=keep),
        },
    )
    return scope["check_reward_nonzero_std"]


def slime_keeps_group(rewards: list[float]) -> bool:
    """slime's DAPO filter ``check_reward_nonzero_std`` (dynamic_sampling_filters.py, at the
    pin) on a group with these rewards: kept unless all rewards are equal."""
    return bool(_slime_filter()(None, [_Sample(r) for r in rewards]).keep)
