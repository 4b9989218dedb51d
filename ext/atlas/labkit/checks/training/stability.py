"""Checks of the labs of ``training/stability.md``.

The chapter's checks: Megatron-LM's own code at the pin, measuring tools.
"""

from __future__ import annotations

import types
from typing import Any

import torch

from atlas.labkit.checks.training.common import _QUIET, UPSTREAM
from atlas.labkit.pinned import definitions

ROLE = "check"


def megatron_spike_test(threshold: float, num_samples: int) -> Any:
    """Megatron's ``RerunStateMachine.is_unexpectedly_large`` on a fresh state, as a function
    of one value (the loss as a 0-dim tensor)."""
    import math

    ns = definitions(
        UPSTREAM,
        "megatron/core/rerun_state_machine.py",
        ["RerunStateMachine.is_unexpectedly_large"],
        {"math": math, "torch": torch, "logger": _QUIET},
    )
    state = types.SimpleNamespace(large_value_counts={}, max_values={})
    return lambda value: ns.is_unexpectedly_large(
        state, torch.tensor(value), threshold=threshold, context="loss", num_samples=num_samples
    )
