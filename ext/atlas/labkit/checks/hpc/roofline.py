"""Checks of the labs of ``hpc/roofline.md``.

The chapter's checks: Checkers and instruments for the HPC chapter's labs (not taught on the
pages).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils.flop_counter import FlopCounterMode

ROLE = "check"


# -- what PyTorch executes ----------------------------------------------------------------------
def count_flops(fn: Callable[[], Any]) -> int:
    """FLOPs PyTorch's ``FlopCounterMode`` attributes to the matmul-like ops ``fn`` runs."""
    with FlopCounterMode(display=False) as counter:
        fn()
    return int(counter.get_total_flops())


class _Bytes(TorchDispatchMode):
    def __init__(self) -> None:
        super().__init__()
        self.total = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # noqa: ANN001
        out = func(*args, **(kwargs or {}))
        seen = [a for a in (*args, *(kwargs or {}).values()) if isinstance(a, torch.Tensor)]
        outs = out if isinstance(out, (tuple, list)) else (out,)
        seen += [o for o in outs if isinstance(o, torch.Tensor)]
        self.total += sum(t.numel() * t.element_size() for t in seen)
        return out


def count_bytes(fn: Callable[[], Any]) -> int:
    """Bytes of every operand read and every result written by the ops ``fn`` dispatches:
    the traffic of a kernel that touches each operand exactly once."""
    with _Bytes() as mode:
        fn()
    return mode.total


def tiny_decoder_step_flops(
    layers: int, d: int, vocab: int, seq: int, batch: int
) -> tuple[int, int]:
    """FLOPs of one forward and backward pass of a small decoder on the ``meta`` device, and
    the number of weights that enter matrix products (attention projections, a 4x MLP, the
    output head; the embedding is a lookup). Full (unmasked) attention, as PaLM counts it."""
    dev = torch.device("meta")
    emb = torch.nn.Embedding(vocab, d, device=dev)
    blocks = [
        torch.nn.ModuleDict(
            {
                "qkv": torch.nn.Linear(d, 3 * d, bias=False, device=dev),
                "out": torch.nn.Linear(d, d, bias=False, device=dev),
                "up": torch.nn.Linear(d, 4 * d, bias=False, device=dev),
                "down": torch.nn.Linear(4 * d, d, bias=False, device=dev),
            }
        )
        for _ in range(layers)
    ]
    head = torch.nn.Linear(d, vocab, bias=False, device=dev)
    heads = max(1, d // 64)

    def step() -> None:
        x = emb(torch.zeros(batch, seq, dtype=torch.long, device=dev))
        for b in blocks:
            q, k, v = b["qkv"](x).view(batch, seq, 3, heads, d // heads).unbind(2)
            q, k, v = (t.transpose(1, 2) for t in (q, k, v))
            a = torch.softmax(q @ k.transpose(-1, -2), -1) @ v
            x = x + b["out"](a.transpose(1, 2).reshape(batch, seq, d))
            x = x + b["down"](torch.relu(b["up"](x)))
        head(x).sum().backward()

    matmul_params = sum(p.numel() for blk in blocks for p in blk.parameters()) + head.weight.numel()
    return count_flops(step), matmul_params
