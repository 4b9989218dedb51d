"""An FP8 GEMM as DeepSeek-V3 runs it, emulated exactly on the CPU.

``A`` (activations, ``[M, K]``) carries one scale per 1x128 tile, ``B`` (weights, ``[N, K]``)
one per 128x128 block, so every 128-wide slice of ``K`` has its own pair of scales. The tensor
core multiplies FP8 values and adds the products into an accumulator that, on Hopper, keeps
fewer mantissa bits than FP32 (DeepSeek-V3 measured about 14). :func:`fp8_gemm` models this:
each MMA instruction adds the exact sum of its ``mma_k`` products to the accumulator, which is
then truncated to ``acc_bits`` significant bits. With ``promote_every`` set, the accumulator
is multiplied by the slice's two scales and added to an FP32 register every ``promote_every``
elements of ``K``, then restarted from zero: DeepGEMM's "promotion". Without it, the whole
``K`` is accumulated in the tensor core and the scales (which must then be per-tensor) are
applied once at the end.
"""

from __future__ import annotations

import torch

ROLE = "taught"


def truncate_mantissa(x: torch.Tensor, bits: int) -> torch.Tensor:
    """Keep ``bits`` significant bits of each FP32 value (the implicit one included),
    truncating toward zero: what an accumulator narrower than FP32 keeps of a sum."""
    drop = 24 - bits
    as_int = x.float().view(torch.int32)
    return (as_int & ~((1 << drop) - 1)).view(torch.float32)


def fp8_gemm(
    a: torch.Tensor,
    a_scale: torch.Tensor,
    b: torch.Tensor,
    b_scale: torch.Tensor,
    acc_bits: int = 24,
    promote_every: int | None = 128,
    mma_k: int = 32,
    block: int = 128,
) -> torch.Tensor:
    """``(a * a_scale) @ (b * b_scale).T`` from FP8 values ``a`` ``[M, K]`` and ``b`` ``[N, K]``.

    ``a_scale`` is ``[M, K/block]`` (1 x block tiles), ``b_scale`` is ``[N/block, K/block]``
    (block x block). Returns FP32 ``[M, N]``.
    """
    m, k = a.shape
    n = b.shape[0]
    sb = b_scale.repeat_interleave(block, dim=0)[:n]  # [N, K/block]
    out = torch.zeros(m, n, dtype=torch.float32)
    acc = torch.zeros(m, n, dtype=torch.float32)
    for k0 in range(0, k, mma_k):
        # one MMA: the products of FP8 values are exact, their sum is formed exactly
        part = (a[:, k0 : k0 + mma_k].double() @ b[:, k0 : k0 + mma_k].double().T).float()
        acc = truncate_mantissa(acc + part, acc_bits)
        end = k0 + mma_k
        if promote_every and (end % promote_every == 0 or end == k):
            kb = k0 // block  # the scale slice of this stretch of K
            out += acc * (a_scale[:, kb : kb + 1] * sb[:, kb].unsqueeze(0))
            acc.zero_()
    if not promote_every:  # per-tensor scales, applied once at the end
        out = acc * (a_scale[0, 0] * b_scale[0, 0])
    return out
