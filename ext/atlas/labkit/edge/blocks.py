"""ggml's quantised block formats, counted: elements per block, bytes per block, bits per weight.

A ggml tensor of a quantised type is a row of fixed-size blocks. Each block carries its own
scale (and, for some types, a minimum) in FP16 next to the packed integers, so the storage cost
of a weight is the block's bytes over its elements, scales included. The sizes below are the
layouts of ``ggml-common.h``; the edge chapter's labs check them against that header at the pin.
"""

from __future__ import annotations

from dataclasses import dataclass

ROLE = "taught"

FP16_BYTES = 2


@dataclass(frozen=True)
class BlockFormat:
    """One block type: how many weights it holds and how many bytes it takes."""

    name: str
    block_elems: int
    block_bytes: int

    @property
    def bytes_per_weight(self) -> float:
        """Storage per weight, the block's scales and minimums included."""
        return self.block_bytes / self.block_elems

    @property
    def bits_per_weight(self) -> float:
        return 8 * self.bytes_per_weight

    def tensor_bytes(self, elems: int) -> int:
        """Bytes of a tensor of ``elems`` weights; a row must hold whole blocks."""
        if elems % self.block_elems:
            raise ValueError(f"{self.name} needs a multiple of {self.block_elems} elements")
        return elems // self.block_elems * self.block_bytes


QK4_0 = 32  # weights per Q4_0 block
QK8_0 = 32  # weights per Q8_0 block
QK_K = 256  # weights per k-quant super-block
K_SCALE_SIZE = 12  # bytes of packed 6-bit scales and minimums in a Q4_K super-block

FORMATS: dict[str, BlockFormat] = {
    f.name: f
    for f in (
        BlockFormat("F16", 1, FP16_BYTES),
        BlockFormat("Q8_0", QK8_0, FP16_BYTES + QK8_0),  # d, then one int8 per weight
        BlockFormat("Q4_0", QK4_0, FP16_BYTES + QK4_0 // 2),  # d, then two nibbles per byte
        # d and dmin, eight 6-bit scales and eight 6-bit minimums in 12 bytes, 256 nibbles
        BlockFormat("Q4_K", QK_K, 2 * FP16_BYTES + K_SCALE_SIZE + QK_K // 2),
    )
}
