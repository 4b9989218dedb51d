"""Autograd as a data structure: the graph of ``grad_fn`` nodes and what each node keeps.

Three pieces the autograd page explains:

- :func:`graph_nodes` walks the backward graph from an output, the way the engine discovers it;
- :class:`RMSNormFunction` is a custom ``torch.autograd.Function`` with a hand-written backward
  that saves less than autograd would (the input and one number per row, not the normalised
  output);
- :class:`SavedTensorLedger` is a pair of saved-tensor hooks that sees every tensor a forward
  pass hands to backward, counts its bytes once per storage, and can tell which of those are
  still alive after ``backward()``.
"""

from __future__ import annotations

import weakref
from typing import Any

import torch
from torch.autograd.function import once_differentiable

ROLE = "taught"


def graph_nodes(output: torch.Tensor) -> list[str]:
    """Names of the backward nodes reachable from ``output.grad_fn``, each once, outputs first.

    A node's ``next_functions`` are the edges to the nodes that produced its inputs (an
    ``AccumulateGrad`` for a leaf that requires grad, ``None`` for an input that does not).
    """
    order, seen = [], set()
    stack = [output.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        order.append(node.name())
        stack.extend(next_node for next_node, _ in reversed(node.next_functions))
    return order


class RMSNormFunction(torch.autograd.Function):
    """``y = x / rms(x) * w`` over the last dimension, with ``rms(x) = sqrt(mean(x^2) + eps)``.

    Forward saves ``x``, ``w`` and ``r = 1 / rms(x)`` (one number per row). Backward uses
    ``dx = r * (g w - x_hat * mean(g w * x_hat))`` with ``x_hat = x r``, and ``dw = sum over
    rows of g * x_hat``: the normalised output is recomputed from ``x`` and ``r`` instead of
    kept.
    """

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
        rstd = torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)
        ctx.save_for_backward(x, weight, rstd)
        return x * rstd * weight

    @staticmethod
    @once_differentiable  # backward is not itself differentiable: rstd is an intermediate
    def backward(ctx: Any, grad_out: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, None]:
        x, weight, rstd = ctx.saved_tensors
        x_hat = x * rstd
        gw = grad_out * weight
        grad_x = rstd * (gw - x_hat * (gw * x_hat).mean(-1, keepdim=True))
        grad_w = (grad_out * x_hat).reshape(-1, x.shape[-1]).sum(0)
        return grad_x, grad_w, None  # no gradient for eps


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    return RMSNormFunction.apply(x, weight, eps)


class _Packed:
    """What the pack hook hands to autograd: a box around the saved tensor."""

    __slots__ = ("tensor", "__weakref__")

    def __init__(self, tensor: torch.Tensor) -> None:
        self.tensor = tensor


class SavedTensorLedger(torch.autograd.graph.saved_tensors_hooks):
    """Count the bytes autograd saves for backward while the context is active.

    The pack hook is called once for every tensor an operation saves. Several operations may
    save the same storage (a tensor and a view of it, or one input saved by two consumers),
    so bytes are counted once per storage. Parameters are listed apart: they live in memory
    whether or not backward needs them. Each saved tensor is boxed, and the ledger keeps only
    weak references to the boxes, so :meth:`live_bytes` says how much autograd still holds.
    """

    def __init__(self, parameters: Any = ()) -> None:
        self.param_storages = {p.untyped_storage().data_ptr() for p in parameters}
        self.activations: dict[int, int] = {}  # storage pointer -> bytes
        self.parameters: dict[int, int] = {}
        self.calls = 0
        self._boxes: list[weakref.ref[_Packed]] = []

        def pack(tensor: torch.Tensor) -> _Packed:
            self.calls += 1
            storage = tensor.untyped_storage()
            table = (
                self.parameters if storage.data_ptr() in self.param_storages else self.activations
            )
            table[storage.data_ptr()] = storage.nbytes()
            box = _Packed(tensor.detach())  # detached: the box must not keep the graph alive
            self._boxes.append(weakref.ref(box))
            return box

        def unpack(box: _Packed) -> torch.Tensor:
            return box.tensor

        super().__init__(pack, unpack)

    def saved_bytes(self) -> int:
        """Activation bytes saved for backward (parameters excluded), once per storage."""
        return sum(self.activations.values())

    def live_bytes(self) -> int:
        """Bytes of the saved activations whose boxes autograd still holds."""
        live = {}
        for ref in self._boxes:
            box = ref()
            if box is not None:
                storage = box.tensor.untyped_storage()
                if storage.data_ptr() not in self.param_storages:
                    live[storage.data_ptr()] = storage.nbytes()
        return sum(live.values())


def mlp_saved_bytes(
    tokens: int, hidden: int, ffn: int, dtype_bytes: int, checkpointed: bool
) -> int:
    """Bytes a ``Linear(h, f) -> GELU -> Linear(f, h)`` block saves for backward.

    Without checkpointing: the first linear keeps its input (``h`` per token), GELU keeps its
    input (``f``), the second linear keeps its input, GELU's output (``f``). Checkpointed, the
    block keeps only its input and recomputes the rest in backward.
    """
    per_token = hidden if checkpointed else hidden + 2 * ffn
    return tokens * per_token * dtype_bytes


def swiglu_saved_bytes(
    tokens: int, hidden: int, ffn: int, dtype_bytes: int, checkpointed: bool
) -> int:
    """Bytes a SwiGLU MLP ``down(silu(x W_gate) * (x W_up))`` saves for backward.

    The gate and up projections keep their shared input (``h`` per token); SiLU keeps its input
    (``f``); the product keeps both its factors, SiLU's output and the up projection (``2f``);
    the down projection keeps its input, the product (``f``). Checkpointed: the input only.
    """
    per_token = hidden if checkpointed else hidden + 4 * ffn
    return tokens * per_token * dtype_bytes
