"""What one line of Python becomes: the operators that reach PyTorch's kernels.

:class:`OpLog` is a ``TorchDispatchMode``: it sits at the bottom of the dispatcher, below
autograd and below the Python-level functions, and sees each ATen operator that is about to
run a kernel, with its arguments. It tells apart operators whose output shares its input's
storage (views: metadata only, no kernel launch on a GPU) from those that compute.

:class:`DecoderLayer` is a Llama-style decoder layer written from the architecture (RMSNorm,
grouped-query attention with rotary embeddings, a SwiGLU MLP) in eager PyTorch, used to count
the operators a decode step dispatches.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

ROLE = "taught"


@dataclass
class OpLog(TorchDispatchMode):
    """Record every ATen operator dispatched while the mode is active."""

    ops: list[str] = field(default_factory=list)
    views: list[bool] = field(default_factory=list)

    def __post_init__(self) -> None:
        super().__init__()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # noqa: ANN001
        out = func(*args, **(kwargs or {}))
        inputs = {
            t.untyped_storage().data_ptr()
            for t in tree_flatten((args, kwargs))[0]
            if isinstance(t, torch.Tensor)
        }
        outputs = [t for t in tree_flatten(out)[0] if isinstance(t, torch.Tensor)]
        is_view = (
            bool(outputs)
            and all(t.untyped_storage().data_ptr() in inputs for t in outputs)
            and not func._schema.is_mutable
        )
        self.ops.append(func.overloadpacket.__name__)
        self.views.append(is_view)
        return out

    def kernels(self) -> list[str]:
        """The operators that compute (launch a kernel on a GPU): views left out."""
        return [op for op, view in zip(self.ops, self.views, strict=True) if not view]


def rotary(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Rotate each pair of channels ``(x_i, x_{i+d/2})`` by its angle (``cos``, ``sin``:
    ``[tokens, d/2]``)."""
    x1, x2 = x.chunk(2, dim=-1)
    cos, sin = cos.unsqueeze(-2), sin.unsqueeze(-2)  # broadcast over heads
    return torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1)


class DecoderLayer(nn.Module):
    """One Llama-style layer: ``x + attn(norm(x))``, then ``h + mlp(norm(h))``."""

    def __init__(
        self,
        hidden: int,
        heads: int,
        kv_heads: int,
        head_dim: int,
        ffn: int,
        max_positions: int = 4096,
    ) -> None:
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, head_dim
        inv_freq = 500000.0 ** (-torch.arange(head_dim // 2, dtype=torch.float32) / (head_dim // 2))
        angles = torch.arange(max_positions, dtype=torch.float32)[:, None] * inv_freq
        self.register_buffer(
            "cos", angles.cos(), persistent=False
        )  # computed once, indexed per step
        self.register_buffer("sin", angles.sin(), persistent=False)
        self.attn_norm = nn.RMSNorm(hidden, eps=1e-5)
        self.qkv = nn.Linear(hidden, (heads + 2 * kv_heads) * head_dim, bias=False)
        self.o = nn.Linear(heads * head_dim, hidden, bias=False)
        self.mlp_norm = nn.RMSNorm(hidden, eps=1e-5)
        self.gate_up = nn.Linear(hidden, 2 * ffn, bias=False)
        self.down = nn.Linear(ffn, hidden, bias=False)

    def forward(
        self, x: torch.Tensor, positions: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor
    ) -> torch.Tensor:
        """``x``: ``[tokens, hidden]`` at ``positions``; the caches hold the earlier keys and
        values."""
        t, d = x.shape[0], self.head_dim
        q, k, v = self.qkv(self.attn_norm(x)).split(
            [self.heads * d, self.kv_heads * d, self.kv_heads * d], dim=-1
        )
        cos, sin = self.cos[positions], self.sin[positions]
        q = rotary(q.view(t, self.heads, d), cos, sin)
        k = rotary(k.view(t, self.kv_heads, d), cos, sin)
        keys = torch.cat((k_cache, k), 0)  # [context, kv_heads, d]
        values = torch.cat((v_cache, v.view(t, self.kv_heads, d)), 0)
        group = self.heads // self.kv_heads  # query heads per key/value head
        keys = keys.repeat_interleave(group, dim=1).transpose(0, 1)  # [heads, context, d]
        values = values.repeat_interleave(group, dim=1).transpose(0, 1)
        scores = q.transpose(0, 1) @ keys.transpose(1, 2) / d**0.5  # decode: no mask needed
        attn = torch.softmax(scores.float(), dim=-1).to(values.dtype) @ values
        h = x + self.o(attn.transpose(0, 1).reshape(t, self.heads * d))
        gate, up = self.gate_up(self.mlp_norm(h)).chunk(2, dim=-1)
        return h + self.down(F.silu(gate) * up)
