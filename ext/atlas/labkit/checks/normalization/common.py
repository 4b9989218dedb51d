"""Checking code that several pages of the normalization chapter share:
``normalization/cost.md``, ``normalization/placement.md``.

The chapter's checks: Checks of the normalization chapter's labs, and loaders of upstream
reference code.
"""

from __future__ import annotations

import functools

import torch
import torch.nn.functional as F

from atlas.labkit.pinned import definitions

ROLE = "check"


@functools.cache
def flash_attn_refs() -> dict:
    return definitions(
        "flash-attention",
        "flash_attn/ops/triton/layer_norm.py",
        ("layer_norm_ref", "rms_norm_ref"),
        {"torch": torch, "F": F},
    )
