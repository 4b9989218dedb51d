"""Checking code of ``edge/runtimes.md``: ExecuTorch's own ``KVCache`` at the pin.

The class is cut out of ``examples/models/llama/attention.py`` and run alone with torch (the
file's other imports are ExecuTorch modules it does not need).
"""

from __future__ import annotations

import torch

from atlas.labkit.pinned import definitions

ROLE = "check"

UPSTREAM = "executorch"
ATTENTION = "examples/models/llama/attention.py"


def executorch_kv_cache_class() -> type:
    """ExecuTorch's ``KVCache`` module, from its source at the pin."""
    ns = definitions(
        UPSTREAM, ATTENTION, ["KVCache"], {"torch": torch, "nn": torch.nn, "Tuple": tuple}
    )
    return ns["KVCache"]


def reference_attention(q: torch.Tensor, keys: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
    """Softmax attention of one query position over the keys written so far, by hand."""
    groups = q.shape[1] // keys.shape[1]
    k = keys.repeat_interleave(groups, dim=1)
    v = values.repeat_interleave(groups, dim=1)
    scores = (q @ k.transpose(-1, -2)) / k.shape[-1] ** 0.5
    return torch.softmax(scores, dim=-1) @ v
