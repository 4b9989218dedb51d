"""Checks of the labs of ``precision/fp4.md``.

The chapter's checks: upstream functions run from their pinned sources, test tensors, and error
metrics.
"""

from __future__ import annotations

import torch

ROLE = "check"


def unpack_fp4(packed: torch.Tensor) -> torch.Tensor:
    """Two E2M1 codes per byte (first in the low nibble) to their values, decoded by our
    :class:`~atlas.labkit.precision.formats.FloatFormat`."""
    from atlas.labkit.precision.formats import E2M1

    table = torch.tensor([E2M1.decode(c) for c in range(16)])
    codes = torch.stack([packed & 0xF, packed >> 4], dim=-1).reshape(*packed.shape[:-1], -1)
    return table[codes.long()]
