"""Roofline arithmetic for one decoder step: is it bound by FLOPs or by bytes moved?

A step's time is at least ``max(flops / peak, bytes / bandwidth)``. Decode moves every weight
once per step for a handful of tokens, so its arithmetic intensity (FLOPs per byte) is far
below the GPU's ridge point; prefill amortises the same bytes over thousands of tokens.
"""

from __future__ import annotations

from dataclasses import dataclass

from atlas.labkit.registry.hardware import gpu
from atlas.labkit.serving.models import ModelConfig


@dataclass(frozen=True)
class Gpu:
    """Peak dense BF16 tensor throughput, HBM bandwidth and capacity, from the vendor sheet."""

    name: str
    peak_flops: float
    bandwidth: float
    memory_bytes: int
    source: str

    @property
    def ridge_point(self) -> float:
        """FLOPs per byte at which compute and memory time are equal."""
        return self.peak_flops / self.bandwidth


# NVIDIA H100 SXM, from the book's hardware registry (dense BF16, HBM bandwidth, capacity).
H100_SXM = Gpu(
    name="H100 SXM",
    peak_flops=gpu("H100-SXM").peak("bf16"),
    bandwidth=gpu("H100-SXM").hbm_bandwidth,
    memory_bytes=int(gpu("H100-SXM").hbm_bytes),
    source="atlas.labkit.registry.hardware: H100-SXM",
)


@dataclass(frozen=True)
class StepCost:
    """FLOPs and bytes of one forward step, and the time each would take at peak."""

    flops: float
    bytes: float
    gpu: Gpu

    @property
    def intensity(self) -> float:
        return self.flops / self.bytes

    @property
    def compute_s(self) -> float:
        return self.flops / self.gpu.peak_flops

    @property
    def memory_s(self) -> float:
        return self.bytes / self.gpu.bandwidth

    @property
    def time_s(self) -> float:
        return max(self.compute_s, self.memory_s)

    @property
    def bound(self) -> str:
        return "compute" if self.compute_s >= self.memory_s else "memory"


def step_cost(model: ModelConfig, gpu: Gpu, chunks: list[tuple[int, int]]) -> StepCost:
    """Cost of one step that runs ``chunks``: per sequence, (cached tokens, new tokens).

    FLOPs: 2 per layer weight per new token; the output head once per sequence (logits are
    computed for the last token of each sequence in the step, as nano-vllm does); attention
    over every key each new token sees. Bytes: every weight once, every cached key and value of
    each sequence once, and the new tokens' K and V written. Activations are ignored (they are
    small next to both).
    """
    new_tokens = sum(n for _, n in chunks)
    keys_seen = sum(n * c + n * (n + 1) // 2 for c, n in chunks)
    head = 2 * model.vocab_size * model.hidden_size * len(chunks)
    flops = (
        2 * model.layer_matmul_params() * new_tokens
        + head
        + model.attention_flops_per_key() * keys_seen
    )
    kv = model.kv_bytes_per_token()
    moved = model.weight_bytes() + kv * sum(c + n for c, n in chunks)
    return StepCost(flops=float(flops), bytes=float(moved), gpu=gpu)


def decode_cost(model: ModelConfig, gpu: Gpu, batch: int, context_len: int) -> StepCost:
    """One decode step for ``batch`` sequences that each hold ``context_len`` cached tokens."""
    return step_cost(model, gpu, [(context_len, 1)] * batch)


def prefill_cost(model: ModelConfig, gpu: Gpu, prompt_len: int) -> StepCost:
    """One prefill step of a single prompt of ``prompt_len`` tokens."""
    return step_cost(model, gpu, [(0, prompt_len)])
