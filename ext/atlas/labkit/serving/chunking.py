"""A cost model of the chunk size in chunked prefill: GEMM efficiency against re-reading KV.

A prompt of ``L`` tokens prefilled ``C`` at a time runs ``L / C`` steps. Each step runs two
kinds of kernel, one after the other in every layer: the weight GEMMs (Q, K, V, O, the MLP),
whose cost depends on ``C`` alone, and the attention kernel, which reads the keys and values
of every earlier chunk of the same prompt again. The GEMMs grow more efficient as ``C`` grows
(they stop paying the weight reads for few rows, and waste less of their last tile of rows);
the re-reading shrinks as ``C`` grows (fewer chunks re-read the same prefix). This module
charges each step its roofline time, kernel by kernel.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from atlas.labkit.serving.models import ModelConfig
from atlas.labkit.serving.roofline import Gpu

ROLE = "taught"


def gemm_seconds(model: ModelConfig, gpu: Gpu, rows: int, tile: int = 128) -> float:
    """Roofline time of one step's weight GEMMs over ``rows`` tokens: the GPU computes whole
    tiles of ``tile`` rows, so the FLOPs are those of ``tile * ceil(rows / tile)`` rows; and it
    reads every weight once, however few the rows. The larger of the two sets the time."""
    padded = tile * math.ceil(rows / tile)
    compute = 2 * model.layer_matmul_params() * padded / gpu.peak_flops
    memory = model.weight_bytes() / gpu.bandwidth
    return max(compute, memory)


def gemm_efficiency(model: ModelConfig, gpu: Gpu, rows: int, tile: int = 128) -> float:
    """Useful GEMM FLOPs over what the GPU could do in the time :func:`gemm_seconds` takes."""
    useful = 2 * model.layer_matmul_params() * rows / gpu.peak_flops
    return useful / gemm_seconds(model, gpu, rows, tile)


def attention_seconds(model: ModelConfig, gpu: Gpu, start: int, rows: int) -> float:
    """Roofline time of the attention of a chunk of ``rows`` tokens after ``start`` cached
    ones of the same prompt: it reads the keys and values of all ``start + rows`` positions,
    and each new token at position ``p`` scores ``p + 1`` keys (causal)."""
    keys = rows * start + rows * (rows + 1) // 2
    compute = model.attention_flops_per_key() * keys / gpu.peak_flops
    memory = model.kv_bytes_per_token() * (start + rows) / gpu.bandwidth
    return max(compute, memory)


@dataclass(frozen=True)
class ChunkedPrefill:
    """The time a prompt takes to its first token, split into its GEMMs and its attention,
    and the bytes of keys and values its chunks read that an earlier chunk had written."""

    chunks: int
    gemm_s: float
    attention_s: float
    reread_bytes: int

    @property
    def time_s(self) -> float:
        return self.gemm_s + self.attention_s


def chunked_prefill_cost(
    model: ModelConfig, gpu: Gpu, prompt_len: int, chunk: int, tile: int = 128
) -> ChunkedPrefill:
    """Charge every chunk of the prompt its GEMMs and its attention, one chunk at a time."""
    gemm = attention = 0.0
    reread = 0
    count = 0
    for start in range(0, prompt_len, chunk):
        rows = min(chunk, prompt_len - start)
        gemm += gemm_seconds(model, gpu, rows, tile)
        attention += attention_seconds(model, gpu, start, rows)
        reread += model.kv_bytes_per_token() * start
        count += 1
    return ChunkedPrefill(count, gemm, attention, reread)
