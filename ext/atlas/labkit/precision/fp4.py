"""FP4 with block scales: MXFP4 and NVFP4, and the random Hadamard transform.

Both formats store E2M1 values (``0, 0.5, 1, 1.5, 2, 3, 4, 6`` and their negatives), two per
byte, and differ in their scales:

* MXFP4 (OCP Microscaling): one E8M0 scale (a power of two) per 32 elements. The OCP rule
  takes ``2^(floor(log2 amax) - 2)``, 2 being the exponent of E2M1's largest value, so the
  block's amax lands in ``[4, 8)`` and values above 6 saturate.
* NVFP4: one E4M3 scale per 16 elements, ``amax_block / 6`` rounded to E4M3, on top of one
  FP32 scale per tensor, ``amax_tensor / (448 * 6)``, that brings the block scales into
  E4M3's range.

A random Hadamard transform multiplies the contraction dimension, in blocks of ``n``, by
``H D / sqrt(n)``: ``H`` a Sylvester Hadamard matrix, ``D`` a diagonal of random signs. It is
orthogonal, so a GEMM of two transformed operands equals the original GEMM, while each block's
outlier is spread over all ``n`` of its elements.
"""

from __future__ import annotations

import math

import torch

from atlas.labkit.precision.formats import E2M1, E4M3, round_to_format

ROLE = "taught"


def mxfp4_quantize(x: torch.Tensor, block: int = 32) -> tuple[torch.Tensor, torch.Tensor]:
    """MXFP4 of a ``[..., K]`` tensor: E2M1 values ``[..., K]`` and E8M0 scales ``[..., K/block]``
    (both returned as float32 numbers: ``x ≈ q * scale``)."""
    xb = x.float().reshape(*x.shape[:-1], -1, block)
    amax = xb.abs().amax(dim=-1, keepdim=True)
    exp = torch.floor(torch.log2(amax.double())) - 2  # OCP: emax of E2M1 is 2
    scale = torch.exp2(exp.clamp(-127, 127)).float()
    scale = torch.where(amax > 0, scale, torch.ones_like(scale))
    q = round_to_format(xb / scale, E2M1).float()
    return q.reshape(x.shape), scale.squeeze(-1)


def nvfp4_quantize(
    x: torch.Tensor,
    block: int = 16,
    stochastic: bool = False,
    generator: torch.Generator | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """NVFP4 of a ``[..., K]`` tensor: E2M1 values, E4M3 block scales ``[..., K/block]`` and the
    FP32 tensor scale; ``x ≈ q * block_scale * tensor_scale``. ``stochastic`` rounds the
    elements stochastically (the scales are always rounded to nearest)."""
    xb = x.float().reshape(*x.shape[:-1], -1, block)
    tensor_scale = x.abs().amax().float() / (E4M3.max * E2M1.max)
    block_amax = xb.abs().amax(dim=-1, keepdim=True)
    block_scale = (block_amax / E2M1.max / tensor_scale).clamp(2.0**-9, E4M3.max)
    block_scale = block_scale.to(torch.float8_e4m3fn).float()  # the scale itself is FP8
    q = round_to_format(xb * ((1.0 / tensor_scale) / block_scale), E2M1, stochastic, generator)
    return q.float().reshape(x.shape), block_scale.squeeze(-1), tensor_scale


def mxfp4_dequantize(q: torch.Tensor, scale: torch.Tensor, block: int = 32) -> torch.Tensor:
    return q * scale.repeat_interleave(block, dim=-1)


def nvfp4_dequantize(
    q: torch.Tensor, block_scale: torch.Tensor, tensor_scale: torch.Tensor, block: int = 16
) -> torch.Tensor:
    return q * block_scale.repeat_interleave(block, dim=-1) * tensor_scale


def hadamard(n: int) -> torch.Tensor:
    """The Sylvester Hadamard matrix of order ``n`` (a power of two), entries ``±1``."""
    h = torch.ones(1, 1, dtype=torch.float64)
    while h.shape[0] < n:
        h = torch.cat([torch.cat([h, h], 1), torch.cat([h, -h], 1)], 0)
    return h


def random_hadamard(n: int, seed: int = 0) -> torch.Tensor:
    """``H D / sqrt(n)``: orthogonal, with random signs so that no input lines up with ``H``."""
    g = torch.Generator().manual_seed(seed)
    signs = torch.randint(0, 2, (n,), generator=g, dtype=torch.float64) * 2 - 1
    return hadamard(n) * signs.unsqueeze(0) / math.sqrt(n)


def rotate_blocks(x: torch.Tensor, r: torch.Tensor) -> torch.Tensor:
    """Apply ``r`` (``n x n``) to every block of ``n`` consecutive elements of the last axis."""
    n = r.shape[0]
    xb = x.double().reshape(*x.shape[:-1], -1, n)
    return (xb @ r.T).reshape(x.shape)
