"""Tensor parallelism against the links it runs on: bytes per layer and time per layer.

A tensor-parallel layer over ``t`` GPUs ends each of its two blocks (attention, MLP) with an
all-reduce of the block's output, ``tokens x hidden`` values, in the forward pass (and two more
in the backward). Every GPU computes ``1/t`` of the layer's matrix products. Both the bytes and
the FLOPs grow with the number of tokens, so their ratio, and hence whether the link can keep
up with the tensor cores, depends only on the layer's shape, ``t`` and the hardware.
"""

from __future__ import annotations

import torch

from atlas.labkit.hpc.collectives import Traffic, ring_all_reduce

ROLE = "taught"


def tp_mlp_forward(
    x: torch.Tensor,
    up_cols: torch.Tensor,
    down_rows: torch.Tensor,
    ranks: list[int],
    traffic: Traffic,
) -> torch.Tensor:
    """A column-parallel up-projection, the activation, a row-parallel down-projection, and
    the all-reduce that sums the ``t`` partial outputs (built from send/recv, bytes counted)."""
    partial = torch.relu(x @ up_cols) @ down_rows
    return ring_all_reduce(partial, ranks, traffic)


def tp_bytes_per_layer(tokens: int, hidden: int, t: int, elem_bytes: int = 2) -> float:
    """Bytes one GPU sends for the two forward all-reduces of one layer (ring algorithm)."""
    return 2 * 2 * (t - 1) / t * tokens * hidden * elem_bytes


def tp_layer_times(
    layer_params: int, tokens: int, hidden: int, t: int, peak: float, link: float
) -> tuple[float, float]:
    """(compute, communication) seconds of one layer's forward on one of ``t`` GPUs, at peak
    FLOP/s and at the link's one-way bandwidth, latency ignored."""
    compute = 2 * layer_params * tokens / t / peak
    comm = tp_bytes_per_layer(tokens, hidden, t) / link
    return compute, comm
