"""Checking code that several pages of the parallel chapter share: ``parallelism/context.md``,
``parallelism/data.md``, ``parallelism/expert.md``, ``parallelism/index.md``,
``parallelism/pipeline.md``, ``parallelism/tensor.md``.

The chapter's checks: the checks its labs run, not what its pages teach.
"""

from __future__ import annotations

import math
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

ROLE = "check"


DTYPE = torch.float64


class _Gather(torch.autograd.Function):
    """Sequence-parallel all-gather, stood in for on one process (the other ranks' rows are
    copies: only sizes matter here). Keeps nothing for backward."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, t: int) -> torch.Tensor:
        return torch.cat([x] * t)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor, None]:  # pragma: no cover
        raise NotImplementedError


class _GatherLinear(torch.autograd.Function):
    """Megatron's column-parallel linear under SP: all-gather the sequence, multiply, and keep
    only this rank's shard of the input (gathered again in backward)."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, w: torch.Tensor, t: int) -> torch.Tensor:
        ctx.save_for_backward(x, w)
        return F.linear(torch.cat([x] * t), w)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[None, None, None]:  # pragma: no cover
        raise NotImplementedError


def _dropout(x: torch.Tensor, p: float = 0.1) -> torch.Tensor:
    out, _ = torch.native_dropout(x, p, True)  # keeps a one-byte mask, as GPU kernels do
    return out


def measured_activation_bytes(
    seq: int, batch: int, hidden: int, heads: int, tp: int = 1, sp: bool = False
) -> dict[str, int]:
    """Bytes autograd keeps for backward after one forward of one tensor-parallel rank's share
    of a GPT layer (bf16, dropout with byte masks, no recomputation), counted with saved-tensor
    hooks, each storage once, parameters excluded.

    The layer is written here from the architecture, not from the formula: pre-norm attention
    (QKV column-parallel over ``heads / tp`` heads, softmax, dropout, output row-parallel),
    then a GeLU MLP of width ``4 h`` (fc1 column-, fc2 row-parallel), each branch ending in
    dropout and a residual add. Under SP the norms and dropouts see ``seq / tp`` rows and the
    linears after an all-gather keep only their input's shard. Returns ``total`` and
    ``norm_stats``, the per-token mean and reciprocal deviation of the two norms, which the
    paper's count leaves out.
    """
    s, b, h, t, dt = seq, batch, hidden, tp, torch.bfloat16
    a, d = heads // t, hidden // heads
    gen = torch.Generator().manual_seed(0)

    def weight(*shape: int) -> nn.Parameter:
        return nn.Parameter(torch.randn(*shape, generator=gen).to(dt) / shape[-1] ** 0.5)

    ln1, ln2 = nn.LayerNorm(h, dtype=dt), nn.LayerNorm(h, dtype=dt)
    w_qkv, w_o = weight(3 * a * d, h), weight(h, a * d)
    w_1, w_2 = weight(4 * h // t, h), weight(h, 4 * h // t)
    params = [*ln1.parameters(), *ln2.parameters(), w_qkv, w_o, w_1, w_2]
    rows = s // t if sp else s
    x = torch.randn(rows, b, h, generator=gen).to(dt).requires_grad_()
    ignore = {p.untyped_storage().data_ptr() for p in params}
    seen: dict[int, int] = {}
    stats = 0

    def pack(tensor: torch.Tensor) -> torch.Tensor:
        nonlocal stats
        storage = tensor.untyped_storage()
        if storage.data_ptr() not in ignore and storage.data_ptr() not in seen:
            seen[storage.data_ptr()] = storage.nbytes()
            if tensor.dim() == 3 and tensor.shape[-1] == 1:  # a norm's per-token statistics
                stats += storage.nbytes()
        return tensor

    def column(inp: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        return _GatherLinear.apply(inp, w, t) if sp else F.linear(inp, w)

    def row(inp: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        out = F.linear(inp, w)  # the partial sums; all-reduce (or reduce-scatter) keeps nothing
        return out[:rows] if sp else out

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        qkv = column(ln1(x), w_qkv).view(s, b, 3, a, d)

        def split(i: int) -> torch.Tensor:  # (s, b, a, d) -> (b a, s, d)
            return qkv[:, :, i].permute(1, 2, 0, 3).reshape(b * a, s, d).clone()

        q, k, v = split(0) * (1.0 / math.sqrt(d)), split(1), split(2)
        future = torch.full((s, s), float("-inf"), dtype=dt).triu(1)
        probs = _dropout(torch.softmax(torch.bmm(q, k.transpose(1, 2)) + future, dim=-1))
        ctx = torch.bmm(probs, v).view(b, a, s, d).permute(2, 0, 1, 3).reshape(s, b, a * d)
        y = x + _dropout(row(ctx, w_o))
        mlp = row(F.gelu(column(ln2(y), w_1)), w_2)
        (y + _dropout(mlp)).sum()
    return {"total": sum(seen.values()), "norm_stats": stats}
