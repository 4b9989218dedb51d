"""Checking code that several pages of the profiling chapter share: ``profiling/index.md``,
``profiling/memory.md``, ``profiling/nsight.md``, ``profiling/torch-profiler.md``.

The chapter's checks: each compares the chapter's code with PyTorch itself.
"""

from __future__ import annotations

import torch
from torch.utils._python_dispatch import TorchDispatchMode

ROLE = "check"


def mlp(d: int = 256, inner: int = 1024, seed: int = 0) -> torch.nn.Module:
    torch.manual_seed(seed)
    return torch.nn.Sequential(
        torch.nn.Linear(d, inner), torch.nn.GELU(), torch.nn.Linear(inner, d)
    )


class ByteCounter(TorchDispatchMode):
    """Bytes every ATen operator reads and writes: the sum of its tensor inputs and outputs.
    Views (operators whose result aliases an input) move nothing and are not counted."""

    def __init__(self):
        super().__init__()
        self.total = 0
        self.ops: list[tuple[str, int]] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if any(r.alias_info is not None for r in func._schema.returns):
            return out  # a view moves no bytes
        n = 0
        for t in torch.utils._pytree.tree_leaves((args, kwargs, out)):
            if isinstance(t, torch.Tensor):
                n += t.numel() * t.element_size()
        self.total += n
        self.ops.append((str(func.overloadpacket), n))
        return out


def measured_linear(
    tokens: int, d_in: int, d_out: int, dtype=torch.bfloat16
) -> tuple[float, float]:
    """FLOPs (``FlopCounterMode``) and operator bytes of ``F.linear`` on meta tensors."""
    from torch.utils.flop_counter import FlopCounterMode

    x = torch.empty(tokens, d_in, dtype=dtype, device="meta")
    w = torch.empty(d_out, d_in, dtype=dtype, device="meta")
    counter = ByteCounter()
    with FlopCounterMode(display=False) as fc, counter:
        torch.nn.functional.linear(x, w)
    return float(fc.get_total_flops()), float(counter.total)
