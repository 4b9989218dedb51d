"""The roofline: FLOPs, bytes and arithmetic intensity of the operations an LLM runs.

An operation that performs ``F`` FLOPs and moves ``B`` bytes between memory and the chip takes
at least ``max(F / peak, B / bandwidth)``. Its arithmetic intensity ``I = F / B`` decides which
term wins: below the ridge point ``peak / bandwidth`` it is memory-bound, above it
compute-bound. The same arithmetic holds for a link: a collective's "FLOPs" are its
reductions, its bytes are what crosses the link.

Byte counts here are the *compulsory* traffic: every input read once and every output written
once, as a kernel that keeps its working set on chip (a tiled GEMM, FlashAttention) achieves.
"""

from __future__ import annotations

from dataclasses import dataclass

ROLE = "taught"


@dataclass(frozen=True)
class Cost:
    """FLOPs and compulsory bytes of one operation."""

    flops: float
    bytes: float

    @property
    def intensity(self) -> float:
        """FLOPs per byte moved."""
        return self.flops / self.bytes

    def time(self, peak: float, bandwidth: float) -> float:
        """Lower bound on the run time: the slower of compute and memory traffic."""
        return max(self.flops / peak, self.bytes / bandwidth)

    def bound(self, peak: float, bandwidth: float) -> str:
        return "compute" if self.intensity >= ridge_point(peak, bandwidth) else "memory"


def ridge_point(peak: float, bandwidth: float) -> float:
    """The intensity (FLOPs/byte) at which compute time equals memory time."""
    return peak / bandwidth


def gemm(m: int, n: int, k: int, elem_bytes: int = 2) -> Cost:
    """``C[m, n] = A[m, k] @ B[k, n]``: ``2mnk`` FLOPs (a multiply and an add per term);
    read ``A`` and ``B``, write ``C``."""
    return Cost(2.0 * m * n * k, float(elem_bytes * (m * k + k * n + m * n)))


def attention(
    batch: int,
    q_len: int,
    kv_len: int,
    heads: int,
    kv_heads: int,
    head_dim: int,
    elem_bytes: int = 2,
) -> Cost:
    """Fused attention (scores never leave the chip): ``QK^T`` and ``PV``, ``2 * 2 d`` FLOPs
    per query-key pair per head; read ``Q``, ``K``, ``V``, write ``O``. Causal masking is left
    out (it halves the FLOPs of a prefill, not its bytes)."""
    flops = 4.0 * batch * heads * q_len * kv_len * head_dim
    q_and_o = 2 * batch * q_len * heads * head_dim
    k_and_v = 2 * batch * kv_len * kv_heads * head_dim
    return Cost(flops, float(elem_bytes * (q_and_o + k_and_v)))


def elementwise(numel: int, inputs: int = 1, flops_per_elem: int = 1, elem_bytes: int = 2) -> Cost:
    """An elementwise op (activation, residual add, scaling): read ``inputs`` tensors, write
    one, ``flops_per_elem`` per element. Its intensity never exceeds a few FLOPs per byte."""
    return Cost(float(flops_per_elem * numel), float(elem_bytes * numel * (inputs + 1)))


def ring_all_reduce(size_bytes: float, n: int, elem_bytes: int = 2) -> Cost:
    """A ring all-reduce seen from one rank: ``(n-1)/n`` of the elements are added (one FLOP
    each), ``2(n-1)/n`` of the buffer crosses the rank's link. Intensity below ``1/elem_bytes``:
    always bound by the link."""
    frac = (n - 1) / n
    return Cost(frac * size_bytes / elem_bytes, 2 * frac * size_bytes)


def decode_step(params: float, batch: int, kv_bytes_per_seq: float, bytes_per_param: float) -> Cost:
    """One decode step of a dense model for ``batch`` sequences: ``2 * params`` FLOPs per
    token; every weight read once for the whole batch, each sequence's cache read once.
    (Attention FLOPs are left out: they are small next to the weights' at modest context.)"""
    return Cost(2.0 * params * batch, params * bytes_per_param + batch * kv_bytes_per_seq)


def decode_crossover_batch(peak: float, bandwidth: float, bytes_per_param: float) -> float:
    """The batch at which a decode step's weight traffic stops being the bottleneck.

    With the cache ignored, intensity is ``2 B / bytes_per_param``; setting it equal to the
    ridge point gives ``B* = ridge * bytes_per_param / 2``.
    """
    return ridge_point(peak, bandwidth) * bytes_per_param / 2


def gemm_crossover_tokens(n: int, k: int, ridge: float, elem_bytes: int = 2) -> float:
    """The token count ``m`` at which ``gemm(m, n, k)`` reaches intensity ``ridge``, counting
    activations too: solve ``2mnk = ridge * b * (mk + kn + mn)`` for ``m``."""
    rb = ridge * elem_bytes
    denominator = 2 * n * k - rb * (k + n)
    if denominator <= 0:
        return float("inf")  # the GEMM never reaches the ridge, however many tokens
    return rb * k * n / denominator


def training_flops_per_token(params: float, layers: int, seq: int, d_attn: int) -> float:
    """Model FLOPs per trained token: ``6N`` for the weights (2 forward, 4 backward) plus
    ``12 L s d`` for attention's two matmuls (``d`` = heads x head_dim), as in PaLM's MFU."""
    return 6.0 * params + 12.0 * layers * seq * d_attn


def mfu(tokens_per_s: float, flops_per_token: float, n_gpus: int, peak: float) -> float:
    """Model FLOPs utilization: the FLOPs the model needs per second over what the GPUs
    could do. Recomputed activations do not count: they are the system's cost, not the
    model's."""
    return tokens_per_s * flops_per_token / (n_gpus * peak)
