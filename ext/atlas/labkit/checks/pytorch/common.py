"""Checking code that several pages of the pytorch chapter share: ``pytorch/compile.md``,
``pytorch/problems.md``.

The chapter's checks: each compares the chapter's code with PyTorch itself.
"""

from __future__ import annotations

from typing import Any

import torch

ROLE = "check"


def dynamo_compiles(calls: list[tuple[Any, ...]]) -> list[int]:
    """Dynamo's running count of compiled graphs over ``calls`` of ``x * s + 1``."""
    from torch._dynamo.testing import CompileCounter

    torch._dynamo.reset()
    counter = CompileCounter()

    def frame(x: torch.Tensor, s: Any) -> torch.Tensor:
        return x * s + 1

    compiled = torch.compile(frame, backend=counter)
    counts = []
    for args in calls:
        compiled(*args)
        counts.append(counter.frame_count)
    return counts
