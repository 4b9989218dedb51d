"""INT4 to FP16 without a conversion instruction: the magic-number trick of W4A16 kernels.

FP16 has 10 mantissa bits. The half ``0x6400`` is 1024 (exponent 10, mantissa 0), and
between 1024 and 2048 consecutive codes differ by exactly 1, so OR-ing a 4-bit integer ``q``
into the low mantissa bits gives the half ``1024 + q``; one subtraction of 1024 leaves ``q``.
A nibble at bits 4-7 lands one place higher, as ``1024 + 16 q``, and one fused multiply-add
with 1/16 and -64 leaves ``q``. Two halves share a 32-bit register, so one AND-OR (``lop3``)
and one ``sub.f16x2`` or ``fma.f16x2`` convert two weights at once. Subtracting ``1024 +
zero`` (and adding ``-(64 + zero)``) folds a zero point into the same instruction.

:func:`dequant_s4` follows the register recipe of AWQ's ``dequantize_s4_to_fp16x2``: from one
32-bit word of eight nibbles it makes four registers of two halves, nibbles ``(0, 4)``,
``(1, 5)``, ``(2, 6)``, ``(3, 7)``; the weights are packed offline in the order that makes this
come out right (:data:`REGISTER_ORDER`).
"""

from __future__ import annotations

import numpy as np

ROLE = "taught"

MAGIC = 0x64006400  # the half pair {1024, 1024}
BOTTOM_MASK = 0x000F000F  # nibble 0 of each half
TOP_MASK = 0x00F000F0  # nibble 1 of each half
REGISTER_ORDER = (0, 4, 1, 5, 2, 6, 3, 7)  # the nibble each output half comes from


def _halves(reg: np.ndarray) -> np.ndarray:
    """A ``uint32`` register as its two FP16 halves, low half first: ``[n, 2]`` float16."""
    return reg.astype("<u4").view("<f2").reshape(-1, 2)


def dequant_s4(words: np.ndarray, zero: int = 0) -> np.ndarray:
    """Eight unsigned 4-bit weights per ``uint32`` word to FP16 ``q - zero``, ``[n, 8]``,
    in :data:`REGISTER_ORDER`, with only ANDs, ORs, one shift and FP16 arithmetic."""
    words = np.asarray(words, dtype=np.uint32)
    top = words >> np.uint32(8)
    regs = [
        (words & BOTTOM_MASK) | MAGIC,
        (words & TOP_MASK) | MAGIC,
        (top & BOTTOM_MASK) | MAGIC,
        (top & TOP_MASK) | MAGIC,
    ]
    sub = np.float16(1024 + zero)  # sub.f16x2 with {1024 + zero, 1024 + zero}
    sixteenth, bias = np.float16(1 / 16), np.float16(-(64 + zero))  # fma.rn.f16x2 operands
    out = []
    for i, reg in enumerate(regs):
        h = _halves(reg)
        if i % 2 == 0:
            out.append(h - sub)
        else:  # exact in FP32, so rounding once to FP16 is the fused multiply-add
            out.append(
                (h.astype(np.float32) * np.float32(sixteenth) + np.float32(bias)).astype(np.float16)
            )
    return np.concatenate(out, axis=1)
