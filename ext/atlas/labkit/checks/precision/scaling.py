"""Checks of the labs of ``precision/scaling.md``.

The chapter's checks: upstream functions run from their pinned sources, test tensors, and error
metrics.
"""

from __future__ import annotations

import torch

ROLE = "check"


def predicted_rounding_mse(x: torch.Tensor, ulp: torch.Tensor) -> float:
    """The mean squared error of rounding to nearest if each error is uniform over its own
    grid spacing ``ulp``: ``mean(ulp^2) / 12``. A closed form, no rounding performed."""
    return (ulp.double() ** 2 / 12).mean().item()
