"""atlas.labkit.checks.precision.accumulator: the exact references of precision/fp8-training.

The integer rounding helpers are held against Python's own float conversions (which round to
nearest, ties to even), and the emulated FP8 GEMM against the exact reference and against
``torch._scaled_mm``.
"""

from __future__ import annotations

import struct

import torch
from atlas.labkit.checks.precision.accumulator import (
    cut_to_bits,
    exact_limited_gemm,
    max_rel_gap,
    round_to_bits,
    scaled_mm_per_slice,
)
from atlas.labkit.precision.formats import E4M3
from atlas.labkit.precision.gemm import fp8_gemm
from atlas.labkit.precision.scaling import quantize_blocks


def _as_fp32(v: int) -> int:
    """``v`` rounded to FP32 by the C library (through ``struct``), back as an integer."""
    return int(struct.unpack("f", struct.pack("f", float(v)))[0])


def test_round_to_bits_is_fp32_rounding() -> None:
    g = torch.Generator().manual_seed(0)
    values = torch.randint(1, 2**50, (2000,), generator=g).tolist() + [2**30 + 64, 2**30 + 192]
    assert all(round_to_bits(v, 24) == _as_fp32(v) for v in values)  # ties included


def test_cut_to_bits_drops_toward_zero() -> None:
    assert cut_to_bits(0b1011_1111, 4) == 0b1011_0000
    assert cut_to_bits(-0b1011_1111, 4) == -0b1011_0000
    assert cut_to_bits(0b101, 8) == 0b101


def test_emulated_gemm_matches_the_exact_reference() -> None:
    g = torch.Generator().manual_seed(3)
    a, b = torch.rand(2, 256, generator=g), torch.rand(136, 256, generator=g)
    qa, sa = quantize_blocks(a, E4M3, (1, 128))
    qb, sb = quantize_blocks(b, E4M3, (128, 128))
    for bits in (12, 14, 24):
        exact = exact_limited_gemm(qa, sa, qb, sb, acc_bits=bits)
        assert max_rel_gap(fp8_gemm(qa, sa, qb, sb, acc_bits=bits), exact) < 1e-6
    exact = exact_limited_gemm(qa, sa, qb, sb, acc_bits=14)
    assert max_rel_gap(fp8_gemm(qa, sa, qb, sb, acc_bits=15), exact) > 3e-5


def test_promoted_scales_match_scaled_mm() -> None:
    g = torch.Generator().manual_seed(4)
    a, b = torch.randn(40, 384, generator=g), torch.randn(150, 384, generator=g)
    qa, sa = quantize_blocks(a, E4M3, (1, 128))
    qb, sb = quantize_blocks(b, E4M3, (128, 128))
    ref = scaled_mm_per_slice(qa, sa, qb, sb)
    ours = fp8_gemm(qa, sa, qb, sb, acc_bits=24).double()
    assert ((ours - ref).norm() / ref.norm()).item() < 1e-6
