"""Activation memory of a transformer layer, and the two ways to trade it for compute.

A GPT-style layer in plain PyTorch (layer norm, QKV projection, causal attention with dropout,
output projection, dropout, residual; layer norm, a 4h GeLU MLP, dropout, residual), written
so that what autograd saves for backward is exactly what Korthikanti et al. count: 16-bit
activations and one-byte dropout masks. Three modes:

- ``None``: keep every activation (``34 s b h + 5 a s^2 b`` bytes a layer);
- ``"selective"``: recompute the core attention (scores, softmax, dropout, weighted sum) in
  backward, keeping only its inputs Q, K, V (``34 s b h``);
- ``"full"``: keep only the input of each checkpointed chunk of layers and recompute the
  whole chunk in backward (``2 s b h`` per chunk).

:class:`CheckpointFunction` is the recomputation itself, in the manner of Megatron-LM's
``tensor_parallel.random.CheckpointFunction``: run the function without a graph, keep its
inputs and the random-number state, and in backward replay it under the same random state.
:class:`OffloadSavedTensors` moves what autograd saves to host memory instead.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

ROLE = "taught"

MODES = (None, "selective", "full")


class CheckpointFunction(torch.autograd.Function):
    """Run ``fn(*args)`` without keeping its graph; recompute it in backward.

    Forward saves only the tensor arguments and the CPU random-number state (dropout draws
    from it). Backward restores that state, so the recomputed dropout masks are the ones the
    forward pass used, replays ``fn`` with gradients enabled, back-propagates through the
    replay, and puts the random state back where backward found it.
    """

    @staticmethod
    def forward(ctx: Any, fn: Callable[..., torch.Tensor], *args: torch.Tensor) -> torch.Tensor:
        ctx.fn = fn
        ctx.rng_state = torch.get_rng_state()
        with torch.no_grad():
            out = fn(*args)
        ctx.save_for_backward(*args)
        return out

    @staticmethod
    def backward(ctx: Any, grad_out: torch.Tensor) -> tuple[Any, ...]:
        inputs = [t.detach().requires_grad_(t.requires_grad) for t in ctx.saved_tensors]
        rng_now = torch.get_rng_state()
        torch.set_rng_state(ctx.rng_state)  # the forward pass's dropout masks again
        try:
            with torch.enable_grad():
                out = ctx.fn(*inputs)
        finally:
            torch.set_rng_state(rng_now)
        torch.autograd.backward(out, grad_out)
        return (None, *(t.grad if t.requires_grad else None for t in inputs))


def checkpoint(fn: Callable[..., torch.Tensor], *args: torch.Tensor) -> torch.Tensor:
    """``fn(*args)``, recomputed in backward instead of stored."""
    return CheckpointFunction.apply(fn, *args)


def dropout(x: torch.Tensor, p: float, training: bool) -> torch.Tensor:
    """Dropout that keeps a one-byte mask for backward, as fused GPU kernels do."""
    if not training or p == 0.0:
        return x
    out, _mask = torch.native_dropout(x, p, True)
    return out


class GPTLayer(nn.Module):
    """One pre-norm GPT layer: ``x + Drop(Attn(LN(x)))``, then ``y + Drop(MLP(LN(y)))``."""

    def __init__(
        self,
        hidden: int,
        heads: int,
        p_drop: float = 0.1,
        dtype: torch.dtype = torch.bfloat16,
        selective: bool = False,
    ) -> None:
        super().__init__()
        if hidden % heads:
            raise ValueError(f"hidden {hidden} is not a multiple of heads {heads}")
        self.heads, self.p, self.selective = heads, p_drop, selective
        self.ln1 = nn.LayerNorm(hidden, dtype=dtype)
        self.qkv = nn.Linear(hidden, 3 * hidden, dtype=dtype)
        self.proj = nn.Linear(hidden, hidden, dtype=dtype)
        self.ln2 = nn.LayerNorm(hidden, dtype=dtype)
        self.fc1 = nn.Linear(hidden, 4 * hidden, dtype=dtype)
        self.fc2 = nn.Linear(4 * hidden, hidden, dtype=dtype)

    def core_attention(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        """Causal softmax attention on ``(batch*heads, s, d)`` tensors; q is pre-scaled."""
        s = q.shape[1]
        future = torch.full((s, s), float("-inf"), dtype=q.dtype).triu(1)  # a constant
        scores = torch.bmm(q, k.transpose(1, 2)) + future  # the add keeps nothing
        probs = torch.softmax(scores, dim=-1)  # keeps its output: 2 a s^2 b bytes
        probs = dropout(probs, self.p, self.training)  # keeps a mask: a s^2 b bytes
        return torch.bmm(probs, v)  # keeps probs (2 a s^2 b) and v

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        s, b, h = x.shape
        a, d = self.heads, h // self.heads
        qkv = self.qkv(self.ln1(x)).view(s, b, 3, a, d)

        def heads(t: torch.Tensor) -> torch.Tensor:  # (s, b, a, d) -> (b*a, s, d)
            return t.permute(1, 2, 0, 3).reshape(b * a, s, d)

        q = heads(qkv[:, :, 0]) * (1.0 / math.sqrt(d))
        k, v = heads(qkv[:, :, 1]), heads(qkv[:, :, 2])
        if self.selective and self.training:
            ctx = checkpoint(self.core_attention, q, k, v)
        else:
            ctx = self.core_attention(q, k, v)
        ctx = ctx.view(b, a, s, d).permute(2, 0, 1, 3).reshape(s, b, h)
        y = x + dropout(self.proj(ctx), self.p, self.training)
        return y + dropout(self.fc2(F.gelu(self.fc1(self.ln2(y)))), self.p, self.training)


def build_stack(
    layers: int, hidden: int, heads: int, mode: str | None, seed: int = 0, **kw: Any
) -> nn.ModuleList:
    """``layers`` GPT layers with weights drawn from ``seed`` (the same for every mode)."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    torch.manual_seed(seed)
    return nn.ModuleList(
        GPTLayer(hidden, heads, selective=(mode == "selective"), **kw) for _ in range(layers)
    )


def stack_forward(
    stack: nn.ModuleList, x: torch.Tensor, mode: str | None, chunk: int = 1
) -> torch.Tensor:
    """Run the layers; under ``"full"``, checkpoint each run of ``chunk`` consecutive layers
    (Megatron's ``uniform`` method with ``recompute_num_layers = chunk``)."""
    if mode != "full" or not stack.training:
        for layer in stack:
            x = layer(x)
        return x
    for start in range(0, len(stack), chunk):
        part = stack[start : start + chunk]

        def run(h: torch.Tensor, part: nn.ModuleList = part) -> torch.Tensor:
            for layer in part:
                h = layer(h)
            return h

        x = checkpoint(run, x)
    return x


def activation_bytes(
    s: int, b: int, h: int, a: int, layers: int, mode: str | None, chunk: int = 1
) -> dict[str, int]:
    """Bytes kept for backward by ``layers`` layers (16-bit activations, byte masks).

    ``korthikanti``: the paper's count, ``s b h (34 + 5 a s / h)`` a layer without
    recomputation, ``34 s b h`` with selective, ``2 s b h`` per checkpointed chunk with full.
    ``norm_stats``: what the paper leaves out, the mean and reciprocal standard deviation that
    each of the two layer norms keeps per token (16-bit here): ``8 s b`` a layer, absent under
    full recomputation. ``total`` is their sum.
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    sbh = s * b * h
    if mode is None:
        paper, stats = layers * (34 * sbh + 5 * a * s * s * b), layers * 8 * s * b
    elif mode == "selective":
        paper, stats = layers * 34 * sbh, layers * 8 * s * b
    else:
        paper, stats = math.ceil(layers / chunk) * 2 * sbh, 0
    return {"korthikanti": paper, "norm_stats": stats, "total": paper + stats}


def recompute_flops_overhead(
    s: int,
    h: int,
    mode: str | None,
    ffn: int | None = None,
    kv: int | None = None,
    gated: bool = False,
) -> float:
    """Extra compute of recomputation, as a fraction of a layer's forward plus backward.

    Per sequence, a layer's forward costs ``2 s (2 h^2 + 2 h kv + m h f)`` FLOPs in its matrix
    multiplications (Q and output projections, K and V of width ``kv``, an MLP of ``m`` = 2
    matrices of width ``f``, or 3 when gated) and ``4 s^2 h`` in attention (scores and weighted
    sum, no causal saving); backward costs twice the forward. Full recomputation adds one
    forward; selective adds only the attention part.
    """
    ffn = 4 * h if ffn is None else ffn
    kv = h if kv is None else kv
    gemm = 2 * s * (2 * h * h + 2 * h * kv + (3 if gated else 2) * h * ffn)
    attn = 4 * s * s * h
    step = 3 * (gemm + attn)
    extra = {None: 0, "selective": attn, "full": gemm + attn}[mode]
    return extra / step


class OffloadSavedTensors:
    """Keep what autograd saves in host memory: copy out in forward, back in backward.

    Tensors smaller than ``min_bytes`` stay where they are (copying tiny tensors costs more
    than it saves). ``moved`` counts the bytes sent to the host; ``returned`` those brought back.
    """

    def __init__(self, min_bytes: int = 0, params: tuple[torch.Tensor, ...] = ()) -> None:
        self.min_bytes, self.moved, self.returned = min_bytes, 0, 0
        self._params = {p.untyped_storage().data_ptr() for p in params}
        self._hooks: Any = None

    def _pack(self, t: torch.Tensor) -> Any:
        nbytes = t.numel() * t.element_size()
        if nbytes < self.min_bytes or t.untyped_storage().data_ptr() in self._params:
            return ("kept", t)
        host = torch.empty(t.shape, dtype=t.dtype, device="cpu")  # pinned memory on a GPU box
        host.copy_(t)
        self.moved += nbytes
        return ("host", t.device, host)

    def _unpack(self, packed: Any) -> torch.Tensor:
        if packed[0] == "kept":
            return packed[1]
        _, device, host = packed
        self.returned += host.numel() * host.element_size()
        return host.to(device)

    def __enter__(self) -> OffloadSavedTensors:
        self._hooks = torch.autograd.graph.saved_tensors_hooks(self._pack, self._unpack)
        self._hooks.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._hooks.__exit__(*exc)
