"""First Triton kernels: vector add, a fused row softmax, a fused layer norm.

Each kernel is one *program* of a launch grid: it computes its offsets from its program id,
loads a block through a mask, computes on the whole block, and stores through the same mask.
Each wrapper allocates the output, chooses the grid and launches. Under ``TRITON_INTERPRET=1``
(set by this package's ``__init__``, which Python runs before this module) the same code runs
on the CPU.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

ROLE = "taught"


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(axis=0)  # which block of the vector this program owns
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n  # the last block may run past the end
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


def add(x: torch.Tensor, y: torch.Tensor, block: int = 256) -> torch.Tensor:
    """``x + y`` for 1-D tensors, one program per ``block`` elements."""
    out = torch.empty_like(x)
    n = x.numel()
    add_kernel[(triton.cdiv(n, block),)](x, y, out, n, BLOCK=block)
    return out


@triton.jit
def softmax_kernel(out_ptr, in_ptr, in_row_stride, out_row_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)  # one program per row
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    # padding reads -inf, which exp() turns into 0: it cannot change the max or the sum
    x = tl.load(in_ptr + row * in_row_stride + cols, mask=mask, other=-float("inf"))
    x = x.to(tl.float32)
    z = x - tl.max(x, axis=0)  # subtract the row maximum: exp() cannot overflow
    num = tl.exp(z)
    den = tl.sum(num, axis=0)
    tl.store(out_ptr + row * out_row_stride + cols, num / den, mask=mask)


def softmax(x: torch.Tensor) -> torch.Tensor:
    """Row softmax of a 2-D tensor: one read and one write of each element."""
    rows, cols = x.shape
    out = torch.empty_like(x)
    block = triton.next_power_of_2(cols)  # tl.arange needs a power of two
    softmax_kernel[(rows,)](out, x, x.stride(0), out.stride(0), cols, BLOCK=block)
    return out


@triton.jit
def layer_norm_kernel(
    x_ptr, w_ptr, b_ptr, y_ptr, mean_ptr, rstd_ptr, row_stride, n_cols, eps, BLOCK: tl.constexpr
):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * row_stride + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / n_cols
    xc = tl.where(mask, x - mean, 0.0)  # padding must not add (0 - mean)^2 to the variance
    var = tl.sum(xc * xc, axis=0) / n_cols
    rstd = 1.0 / tl.sqrt(var + eps)
    w = tl.load(w_ptr + cols, mask=mask)
    b = tl.load(b_ptr + cols, mask=mask)
    tl.store(y_ptr + row * row_stride + cols, xc * rstd * w + b, mask=mask)
    tl.store(mean_ptr + row, mean)  # saved for the backward pass
    tl.store(rstd_ptr + row, rstd)


def layer_norm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5):
    """Layer norm over the last dimension of a 2-D tensor; returns ``(y, mean, rstd)``."""
    rows, cols = x.shape
    y = torch.empty_like(x)
    mean = torch.empty(rows, dtype=torch.float32)
    rstd = torch.empty(rows, dtype=torch.float32)
    block = triton.next_power_of_2(cols)
    layer_norm_kernel[(rows,)](x, weight, bias, y, mean, rstd, x.stride(0), cols, eps, BLOCK=block)
    return y, mean, rstd


@triton.jit
def strided_copy_kernel(x_ptr, out_ptr, n, stride, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets * stride, mask=mask)  # element i of the block reads x[i*stride]
    tl.store(out_ptr + offsets, x, mask=mask)


def strided_copy(x: torch.Tensor, n: int, stride: int, block: int = 128) -> torch.Tensor:
    """``x[::stride][:n]`` gathered into a contiguous tensor."""
    out = torch.empty(n, dtype=x.dtype)
    strided_copy_kernel[(triton.cdiv(n, block),)](x, out, n, stride, BLOCK=block)
    return out
