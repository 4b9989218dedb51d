"""Roofline arithmetic for one decoder step: is it bound by FLOPs or by bytes moved?

A step's time is at least ``max(flops / peak, bytes / bandwidth)``. Decode moves every weight
once per step for a handful of tokens, so its arithmetic intensity (FLOPs per byte) is far
below the GPU's ridge point; prefill amortises the same bytes over thousands of tokens.
"""

from __future__ import annotations

from dataclasses import dataclass

from atlas.labkit.registry.hardware import gpu
from atlas.labkit.serving.models import ModelConfig

ROLE = "taught"


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


def step_cost(
    model: ModelConfig, gpu: Gpu, chunks: list[tuple[int, int]], logits: str = "last"
) -> StepCost:
    """Cost of one step that runs ``chunks``: per sequence, (cached tokens, new tokens).

    FLOPs: 2 per layer weight per new token; the output head on the last new token of each
    sequence (``logits="last"``: prefill and decode, as nano-vllm computes them) or on every
    new token (``logits="all"``: a speculative verification step scores every draft); attention
    over every key each new token sees. Bytes: every weight once, every cached key and value of
    each sequence once, and the new tokens' K and V written. Activations are ignored (they are
    small next to both).
    """
    if logits not in ("last", "all"):
        raise ValueError(f"logits must be 'last' or 'all', got {logits!r}")
    new_tokens = sum(n for _, n in chunks)
    keys_seen = sum(n * c + n * (n + 1) // 2 for c, n in chunks)
    rows = len(chunks) if logits == "last" else new_tokens
    head = 2 * model.vocab_size * model.hidden_size * rows
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


def crossover_batch(model: ModelConfig, gpu: Gpu, context_len: int) -> float | None:
    """The decode batch at which a step's compute time reaches its memory time, in closed
    form, for sequences holding ``context_len`` cached tokens; ``None`` when no batch gets
    there (each sequence's cache reads grow as fast as its FLOPs).

    Per sequence a step does ``a = 2 P + 2 V h + A (L + 1)`` FLOPs (layer weights ``P``,
    head, attention over ``L + 1`` keys) and reads ``k (L + 1)`` cache bytes; the weights
    ``w`` are read once. Compute equals memory when ``b a / F = (w + b k (L + 1)) / W``.
    """
    keys = context_len + 1
    per_seq_flops = (
        2 * model.layer_matmul_params()
        + 2 * model.vocab_size * model.hidden_size
        + model.attention_flops_per_key() * keys
    )
    per_seq_bytes = model.kv_bytes_per_token() * keys
    gain = per_seq_flops / gpu.peak_flops - per_seq_bytes / gpu.bandwidth
    if gain <= 0:
        return None
    return model.weight_bytes() / gpu.bandwidth / gain


def swap_seconds(model: ModelConfig, tokens: int, link_bytes_per_s: float) -> float:
    """Preemption by swapping: the sequence's keys and values go to host memory and come back,
    ``2 x tokens x bytes per token`` over the host link."""
    return 2 * tokens * model.kv_bytes_per_token() / link_bytes_per_s


def swap_copies(model: ModelConfig, tokens: int, block_size: int) -> tuple[int, int]:
    """The copies one direction of a swap issues when, as in nano-vllm's cache tensor
    ``[2, layers, blocks, block_size, heads, head_dim]``, a block's keys and values are one
    contiguous piece per layer: ``(number of copies, bytes per copy)``. A partly filled last
    block still moves whole. Small copies are what keeps a swap below the link's bandwidth."""
    blocks = -(-tokens // block_size)
    piece = block_size * model.num_kv_heads * model.head_dim * model.dtype_bytes
    return blocks * 2 * model.num_layers, piece


def recompute_seconds(model: ModelConfig, gpu: Gpu, tokens: int) -> float:
    """Preemption by recomputation: a prefill of the ``tokens`` again, at the roofline."""
    flops = (
        2 * model.layer_matmul_params() * tokens
        + 2 * model.vocab_size * model.hidden_size
        + model.attention_flops_per_key() * tokens * (tokens + 1) // 2
    )
    moved = model.weight_bytes() + model.kv_bytes_per_token() * tokens
    return max(flops / gpu.peak_flops, moved / gpu.bandwidth)


def crossover_context(model: ModelConfig, gpu: Gpu) -> float:
    """The context length above which no decode batch is compute-bound: where one more key
    adds more memory time (its cached bytes) than compute time (its attention FLOPs) by as much
    as a sequence's weight FLOPs take, ``(2 P + 2 V h) / F = (L + 1)(k / W - A / F)``."""
    per_key = (
        model.kv_bytes_per_token() / gpu.bandwidth
        - model.attention_flops_per_key() / gpu.peak_flops
    )
    head = 2 * model.vocab_size * model.hidden_size
    fixed = (2 * model.layer_matmul_params() + head) / gpu.peak_flops
    return fixed / per_key - 1


def chunked_prefill(
    model: ModelConfig,
    gpu: Gpu,
    prompt_len: int,
    chunk: int,
    decoding: int = 0,
    context_len: int = 0,
) -> list[StepCost]:
    """The steps of a prompt prefilled ``chunk`` tokens at a time, each step shared with
    ``decoding`` sequences that decode one token over ``context_len`` cached ones.

    Every chunk reads the whole weights again and the keys and values of all earlier chunks
    (its attention needs them), so small chunks pay for the weights many times and re-read the
    prompt's cache quadratically often; large chunks stretch every step that the decodes wait
    for. The sum of the steps' times is the prompt's time to its first token at the roofline.
    """
    steps = []
    for start in range(0, prompt_len, chunk):
        n = min(chunk, prompt_len - start)
        steps.append(step_cost(model, gpu, [(start, n)] + [(context_len, 1)] * decoding))
    return steps


def balanced_chunk(model: ModelConfig, gpu: Gpu, decoding: int = 0, context_len: int = 0) -> float:
    """The chunk size at which one chunk's weight FLOPs take as long as the step's reads (the
    weights, and the caches of ``decoding`` sequences of ``context_len`` tokens that share the
    step): ``F (w + b k (L + 1)) / (2 P W)``. Below it a chunked step is memory-bound and the
    reads, paid again for every chunk, set its time. Attention and the head are left out."""
    reads = model.weight_bytes() + decoding * model.kv_bytes_per_token() * (context_len + 1)
    return gpu.peak_flops * reads / (2 * model.layer_matmul_params() * gpu.bandwidth)
