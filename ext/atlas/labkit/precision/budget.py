"""What a format costs and buys: bits per element with its scales, and roofline times.

A block-scaled format stores ``element_bits`` per element plus one scale of ``scale_bits``
per ``group`` elements. A GEMM of ``m x k`` activations by ``n x k`` weights takes
``2 m n k`` FLOPs and at least reads the weights once; its time is bounded below by the larger
of the two roofline terms: FLOPs over the tensor-core peak of the data type it computes in,
bytes over the memory bandwidth (HPC chapter, roofline page).
"""

from __future__ import annotations

from dataclasses import dataclass

ROLE = "taught"


@dataclass(frozen=True)
class Storage:
    """How one format stores a tensor: bits per element, and a scale per ``group`` elements."""

    element_bits: int
    scale_bits: int = 0
    group: int = 1

    @property
    def bits_per_element(self) -> float:
        return self.element_bits + (self.scale_bits / self.group if self.scale_bits else 0.0)


STORAGE = {
    "bf16": Storage(16),
    "fp8 per tensor": Storage(8),
    "fp8 1x128 tiles": Storage(8, 32, 128),  # DeepSeek-V3's activations, FP32 scales
    "fp8 128x128 blocks": Storage(8, 32, 128 * 128),  # and weights
    "mxfp8": Storage(8, 8, 32),  # E8M0 per 32
    "mxfp4": Storage(4, 8, 32),
    "nvfp4": Storage(4, 8, 16),  # E4M3 per 16 (plus one FP32 per tensor, negligible)
    "int4 g128": Storage(4, 32, 128),  # FP16 scale and FP16 zero per 128 (GPTQ, AWQ)
}


def tensor_bytes(elements: int, storage: Storage) -> float:
    """Bytes of a tensor of ``elements`` values in ``storage``."""
    return elements * storage.bits_per_element / 8


def gemm_time(
    m: int,
    n: int,
    k: int,
    weight: Storage,
    peak_flops: float,
    bandwidth: float,
    act_bytes: float = 2,
) -> float:
    """Roofline lower bound of ``[m, k] x [n, k]^T``: ``max(FLOPs / peak, bytes / bandwidth)``,
    with weights in ``weight`` and activations and outputs of ``act_bytes`` per element."""
    flops = 2 * m * n * k
    moved = tensor_bytes(n * k, weight) + act_bytes * (m * k + m * n)
    return max(flops / peak_flops, moved / bandwidth)


def crossover_batch(weight: Storage, peak_flops: float, bandwidth: float) -> float:
    """The batch up to which a weight-only GEMM stays memory-bound: its intensity, ``2B``
    FLOPs per ``bits / 8`` bytes of weight, reaches the ridge point ``peak / bandwidth`` at
    ``B* = (peak / bandwidth) * (bits / 8) / 2`` (activations ignored)."""
    return peak_flops / bandwidth * weight.bits_per_element / 8 / 2
