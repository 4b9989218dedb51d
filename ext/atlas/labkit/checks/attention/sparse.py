"""Checks of the labs of ``attention/sparse.md``.

The chapter's checks: What the attention labs need but the pages do not teach.
"""

from __future__ import annotations

import math
from typing import Optional

import torch

from atlas.labkit.checks.attention.common import rearrange, repeat
from atlas.labkit.pinned import Definitions, definitions

ROLE = "check"


def upstream_functions(
    name: str, path: str, names: list[str], namespace: dict | None = None
) -> Definitions:
    """Execute only the top-level functions ``names`` of an upstream file, in ``namespace``.

    For files whose other imports (a framework, a compiled extension) cannot load on a CPU
    machine while the functions themselves need only torch.
    """
    env = {
        "torch": torch,
        "math": math,
        "Optional": Optional,
        "rearrange": rearrange,
        "repeat": repeat,
        **(namespace or {}),
    }
    return definitions(name, path, names, env)
