"""Serving many LoRA adapters in one batch: the base weight once, each row's adapter on top.

A LoRA adapter replaces ``W`` by ``W + s B A`` with ``A`` of ``r x h_in`` and ``B`` of
``h_out x r`` (Hu et al., 2021). Merging it into ``W`` would give every adapter its own copy
of the weights; an engine instead keeps the base weight once, multiplies the whole batch by it,
and adds ``s B_i (A_i x)`` row by row, grouping rows by adapter (a segmented, or gathered,
matrix multiply in S-LoRA and Punica).
"""

from __future__ import annotations

import torch

ROLE = "taught"


def lora_batched(
    x: torch.Tensor,
    weight: torch.Tensor,
    a: torch.Tensor,
    b: torch.Tensor,
    adapter: torch.Tensor,
    scale: float = 1.0,
) -> torch.Tensor:
    """``y_t = W x_t + s B_{i(t)} A_{i(t)} x_t`` for a batch of rows ``x`` (``[T, h_in]``).

    ``a`` is ``[adapters, r, h_in]``, ``b`` is ``[adapters, h_out, r]``, ``adapter[t]`` the
    adapter of row ``t`` (-1: the base model alone). One multiply by the shared weight, then
    one small multiply pair per adapter present in the batch, on its rows only.
    """
    y = x @ weight.T
    for i in adapter.unique().tolist():
        if i < 0:
            continue
        rows = (adapter == i).nonzero().squeeze(1)
        y = y.index_add(0, rows, scale * (x[rows] @ a[i].T) @ b[i].T)
    return y


def lora_flops_overhead(h_in: int, h_out: int, rank: int) -> float:
    """Extra FLOPs of the adapter path over the base multiply:
    ``r (h_in + h_out) / (h_in h_out)``."""
    return rank * (h_in + h_out) / (h_in * h_out)
