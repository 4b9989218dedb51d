"""Independent references for the FP8 GEMM of ``precision/fp8-training.md``.

:func:`exact_limited_gemm` recomputes, in exact rational arithmetic, what the emulation in
``atlas.labkit.precision.gemm`` claims to compute: the integer sum of each MMA's FP8 products,
rounded to FP32 to nearest even, added to the accumulator with a second FP32 rounding, then cut
toward zero to ``acc_bits`` significant bits; at each promotion, the accumulator times the exact
pair of scales is added to an exact output. It shares no code with the emulation: no float
bit-masks, no float matmul, no torch rounding (the FP8 values are read as integers times
``2^-9``, the spacing of E4M3's subnormals, and every rounding is done on ``Fraction``).

:func:`scaled_mm_per_slice` builds the promoted, fine-grained-scaled GEMM from torch's own
FP8 GEMM, ``torch._scaled_mm`` with row-wise scales, one call per 128-wide slice of ``K``: the
scales are applied by torch's kernel, not by our loop.
"""

from __future__ import annotations

from fractions import Fraction

import torch

ROLE = "check"

E4M3_QUANTUM = 2**-9  # every E4M3 value is an integer multiple of its smallest subnormal


def round_to_bits(v: int, bits: int) -> int:
    """Round the integer ``v`` to ``bits`` significant bits, ties to even: a binary float's
    rounding, done on the integer that counts the value in units of a fixed power of two."""
    sign, v = (-1 if v < 0 else 1), abs(v)
    shift = v.bit_length() - bits
    if shift <= 0:
        return sign * v
    q, r = divmod(v, 1 << shift)
    half = 1 << (shift - 1)
    if r > half or (r == half and q % 2 == 1):
        q += 1
    return sign * (q << shift)


def cut_to_bits(v: int, bits: int) -> int:
    """Keep ``bits`` significant bits of the integer ``v``, dropping the rest (toward zero)."""
    sign, v = (-1 if v < 0 else 1), abs(v)
    shift = v.bit_length() - bits
    return sign * v if shift <= 0 else sign * ((v >> shift) << shift)


def _as_units(v: torch.Tensor) -> torch.Tensor:
    """FP8 values (held in any float dtype) as exact int64 multiples of ``2^-9``."""
    units = v.double() / E4M3_QUANTUM
    assert torch.equal(units, units.round()), "not on the E4M3 grid"
    return units.long()


def exact_limited_gemm(
    a: torch.Tensor,
    a_scale: torch.Tensor,
    b: torch.Tensor,
    b_scale: torch.Tensor,
    acc_bits: int,
    promote_every: int = 128,
    mma_k: int = 32,
    block: int = 128,
) -> list[list[Fraction]]:
    """The limited-accumulator GEMM with promotion, exactly; ``a`` ``[M, K]`` with 1 x block
    scales, ``b`` ``[N, K]`` with block x block scales, both holding E4M3 values."""
    ua, ub = _as_units(a), _as_units(b)
    m, k = ua.shape
    n = ub.shape[0]
    # integer MMA partial sums, [K/mma_k][M][N], in units of 2^-18 (the product of two
    # E4M3 quanta): exact in int64
    parts = torch.stack(
        [ua[:, k0 : k0 + mma_k] @ ub[:, k0 : k0 + mma_k].T for k0 in range(0, k, mma_k)]
    ).tolist()
    unit = Fraction(E4M3_QUANTUM) ** 2
    sa = [[Fraction(v) for v in row] for row in a_scale.tolist()]
    sb = [[Fraction(v) for v in row] for row in b_scale.tolist()]
    out = [[Fraction(0)] * n for _ in range(m)]
    for i in range(m):
        for j in range(n):
            acc, total = 0, Fraction(0)
            for step, mma in enumerate(parts):
                part = round_to_bits(mma[i][j], 24)  # the MMA's sum, rounded to FP32
                acc = cut_to_bits(round_to_bits(acc + part, 24), acc_bits)
                end = min((step + 1) * mma_k, k)
                if end % promote_every == 0 or end == k:
                    kb = (end - 1) // block
                    total += acc * unit * sa[i][kb] * sb[j // block][kb]
                    acc = 0
            out[i][j] = total
    return out


def max_rel_gap(ours: torch.Tensor, exact: list[list[Fraction]]) -> float:
    """The largest ``|ours - exact| / |exact|`` over the elements, compared exactly."""
    values = ours.tolist()
    gaps = [
        abs(Fraction(values[i][j]) - e) / abs(e)
        for i, row in enumerate(exact)
        for j, e in enumerate(row)
        if e != 0
    ]
    return float(max(gaps))


def scaled_mm_per_slice(
    a: torch.Tensor, a_scale: torch.Tensor, b: torch.Tensor, b_scale: torch.Tensor, block: int = 128
) -> torch.Tensor:
    """``sum_b (a_b * sa_b) @ (b_b * sb_b).T`` over the 128-wide slices ``b`` of ``K``, each
    slice one ``torch._scaled_mm`` call with row-wise scales (torch's FP8 GEMM applies them)."""
    fa, fb = a.to(torch.float8_e4m3fn), b.to(torch.float8_e4m3fn)
    n = b.shape[0]
    per_row_b = b_scale.float().repeat_interleave(block, dim=0)[:n]  # [N, K/block]
    out = torch.zeros(a.shape[0], n, dtype=torch.float64)
    for kb in range(a_scale.shape[1]):
        cols = slice(kb * block, (kb + 1) * block)
        out += torch._scaled_mm(
            fa[:, cols],
            fb[:, cols].contiguous().T,
            scale_a=a_scale[:, kb : kb + 1].float().contiguous(),
            scale_b=per_row_b[:, kb].reshape(1, -1).contiguous(),
            out_dtype=torch.float32,
        ).double()
    return out
