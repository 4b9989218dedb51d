"""ggml's Q8_0, Q4_0 and Q4_K blocks, quantised and dequantised in NumPy, byte for byte.

Each function works on a flat float32 array whose length is a multiple of the block size and
returns (or reads) the blocks as a ``uint8`` array of shape ``(blocks, block_bytes)``, in the
little-endian layout of the C structs: FP16 scales first, packed integers after. Q8_0 and Q4_0
follow ggml's reference quantisers rule for rule (the scale, the rounding, the nibble order),
so their bytes can be compared with any other implementation. Q4_K's layout and dequantisation
are ggml's; its quantiser picks each sub-block's scale and minimum from the sub-block's range,
the simple rule, where ggml searches for the scale that minimises a weighted error.
"""

from __future__ import annotations

import numpy as np

from atlas.labkit.edge.blocks import FORMATS, QK_K

ROLE = "taught"


def _fp16_bytes(d: np.ndarray) -> np.ndarray:
    """FP16 values (rounded to nearest) as their two little-endian bytes each."""
    return d.astype("<f2").view(np.uint8).reshape(-1, 2)


def _fp16_values(b: np.ndarray) -> np.ndarray:
    """The float32 value of little-endian FP16 bytes, two per row."""
    return np.ascontiguousarray(b).view("<f2").astype(np.float32).reshape(-1)


def _blocks(x: np.ndarray, n: int) -> np.ndarray:
    x = np.asarray(x, dtype=np.float32).reshape(-1)
    if x.size % n:
        raise ValueError(f"length {x.size} is not a multiple of the block size {n}")
    return x.reshape(-1, n)


def _inverse(d: np.ndarray) -> np.ndarray:
    """1/d, and 0 where d is 0 (an all-zero block quantises to zeros)."""
    out = np.zeros_like(d)
    np.divide(np.float32(1), d, out=out, where=d != 0)
    return out


def quantize_q8_0(x: np.ndarray) -> np.ndarray:
    """Q8_0: per 32 weights, d = absmax / 127 and q = round(x / d), half away from zero."""
    b = _blocks(x, FORMATS["Q8_0"].block_elems)
    d = np.abs(b).max(axis=1) / np.float32(127)
    v = b * _inverse(d)[:, None]
    q = (np.sign(v) * np.floor(np.abs(v) + np.float32(0.5))).astype(np.int8)
    return np.concatenate([_fp16_bytes(d), q.view(np.uint8)], axis=1)


def dequantize_q8_0(blocks: np.ndarray) -> np.ndarray:
    """x = d * q for each of the 32 int8 values of a block."""
    d = _fp16_values(blocks[:, :2])
    return (blocks[:, 2:].view(np.int8).astype(np.float32) * d[:, None]).reshape(-1)


def quantize_q4_0(x: np.ndarray) -> np.ndarray:
    """Q4_0: d = m / -8 for the value m of largest magnitude, q = min(15, floor(x / d + 8.5)).

    The sign of d makes m itself land on q = 0 (the code -8), the one code that has no positive
    twin, so the largest value is represented exactly. Weight j and weight j + 16 share byte j:
    the first in the low nibble, the second in the high nibble.
    """
    n = FORMATS["Q4_0"].block_elems
    b = _blocks(x, n)
    m = b[np.arange(len(b)), np.abs(b).argmax(axis=1)]  # the first of equal magnitudes
    d = m / np.float32(-8)
    q = np.minimum(15, np.floor(b * _inverse(d)[:, None] + np.float32(8.5))).astype(np.uint8)
    packed = q[:, : n // 2] | (q[:, n // 2 :] << 4)
    return np.concatenate([_fp16_bytes(d), packed], axis=1)


def dequantize_q4_0(blocks: np.ndarray) -> np.ndarray:
    """x = d * (q - 8): low nibbles are weights 0..15, high nibbles weights 16..31."""
    d = _fp16_values(blocks[:, :2])
    qs = blocks[:, 2:]
    q = np.concatenate([qs & 0x0F, qs >> 4], axis=1).astype(np.int16) - 8
    return (q.astype(np.float32) * d[:, None]).reshape(-1)


def pack_scales_k4(sc: np.ndarray, mn: np.ndarray) -> np.ndarray:
    """Eight 6-bit scales and eight 6-bit minimums into 12 bytes, ggml's Q4_K layout.

    Bytes 0-3 hold scales 0-3 and bytes 4-7 minimums 0-3 in their low 6 bits; bytes 8-11 hold
    the low 4 bits of scales 4-7 (low nibble) and minimums 4-7 (high nibble); the top 2 bits of
    scales 4-7 and minimums 4-7 ride in the free top bits of bytes 0-3 and 4-7.
    """
    sc = sc.astype(np.uint8)
    mn = mn.astype(np.uint8)
    out = np.zeros((len(sc), 12), dtype=np.uint8)
    out[:, 0:4] = sc[:, 0:4] | ((sc[:, 4:8] >> 4) << 6)
    out[:, 4:8] = mn[:, 0:4] | ((mn[:, 4:8] >> 4) << 6)
    out[:, 8:12] = (sc[:, 4:8] & 0x0F) | ((mn[:, 4:8] & 0x0F) << 4)
    return out


def unpack_scales_k4(s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The inverse of :func:`pack_scales_k4`: (scales, minimums), eight 6-bit integers each."""
    sc = np.empty((len(s), 8), dtype=np.uint8)
    mn = np.empty((len(s), 8), dtype=np.uint8)
    sc[:, 0:4] = s[:, 0:4] & 63
    mn[:, 0:4] = s[:, 4:8] & 63
    sc[:, 4:8] = (s[:, 8:12] & 0x0F) | ((s[:, 0:4] >> 6) << 4)
    mn[:, 4:8] = (s[:, 8:12] >> 4) | ((s[:, 4:8] >> 6) << 4)
    return sc, mn


def quantize_q4_k(x: np.ndarray) -> np.ndarray:
    """Q4_K: per 256 weights, eight sub-blocks of 32 with x ~ d*sc_j * q - dmin*m_j.

    Each sub-block's scale and minimum (range / 15 and -min, the minimum clamped so that it is
    never positive) are themselves quantised to 6 bits against the super-block's FP16 ``d`` and
    ``dmin``; the 4-bit codes are then rounded against the quantised scales, as ggml does.
    """
    b = _blocks(x, QK_K).reshape(-1, 8, 32)
    lo = np.minimum(b.min(axis=2), 0)
    scales = (b.max(axis=2) - lo) / np.float32(15)
    mins = -lo
    max_scale, max_min = scales.max(axis=1), mins.max(axis=1)
    ls = np.minimum(63, np.rint(scales * _inverse(max_scale / np.float32(63))[:, None]))
    lm = np.minimum(63, np.rint(mins * _inverse(max_min / np.float32(63))[:, None]))
    d16, dmin16 = _fp16_bytes(max_scale / np.float32(63)), _fp16_bytes(max_min / np.float32(63))
    d = _fp16_values(d16)[:, None] * ls
    dm = _fp16_values(dmin16)[:, None] * lm
    q = np.clip(np.rint((b + dm[:, :, None]) * _inverse(d)[:, :, None]), 0, 15).astype(np.uint8)
    q = q.reshape(-1, 4, 2, 32)  # four chunks of 64: sub-block 2c in low, 2c + 1 in high nibbles
    qs = (q[:, :, 0] | (q[:, :, 1] << 4)).reshape(-1, QK_K // 2)
    return np.concatenate([d16, dmin16, pack_scales_k4(ls, lm), qs], axis=1)


def dequantize_q4_k(blocks: np.ndarray) -> np.ndarray:
    """x = d * sc_j * q - dmin * m_j, sub-block by sub-block, in ggml's nibble order."""
    d = _fp16_values(blocks[:, 0:2])[:, None]
    dmin = _fp16_values(blocks[:, 2:4])[:, None]
    sc, mn = unpack_scales_k4(blocks[:, 4:16])
    qs = blocks[:, 16:].reshape(-1, 4, 32)
    q = np.stack([qs & 0x0F, qs >> 4], axis=2).reshape(-1, 8, 32).astype(np.float32)
    y = (d * sc)[:, :, None] * q - (dmin * mn)[:, :, None]
    return y.reshape(-1).astype(np.float32)
