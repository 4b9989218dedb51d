"""Tiled GEMM in Triton: one program per output tile, a loop over K, grouped tile order.

``C = A @ B`` with ``A`` of shape ``[M, K]`` and ``B`` of shape ``[K, N]``. Program ``pid`` owns
a ``BLOCK_M x BLOCK_N`` tile of ``C``; it walks the K dimension in steps of ``BLOCK_K``, loading
one ``BLOCK_M x BLOCK_K`` tile of ``A`` and one ``BLOCK_K x BLOCK_N`` tile of ``B`` per step and
accumulating their product in fp32. Programs are numbered in *grouped* order: ``GROUP_M`` rows
of tiles are swept column by column, so that programs running at the same time share the
tiles of ``A`` and ``B`` they load and the L2 cache serves the repeats.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

ROLE = "taught"


@triton.jit
def matmul_kernel(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
    stride_am,
    stride_ak,
    stride_bk,
    stride_bn,
    stride_cm,
    stride_cn,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
):
    # grouped order: which output tile this program owns
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    pids_per_group = GROUP_M * num_pid_n
    first_pid_m = (pid // pids_per_group) * GROUP_M
    group_rows = tl.minimum(num_pid_m - first_pid_m, GROUP_M)  # the last group may be short
    pid_m = first_pid_m + (pid % pids_per_group) % group_rows
    pid_n = (pid % pids_per_group) // group_rows

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)  # stays in registers throughout
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K  # masks cover the ragged edges of M, N and K
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)  # tensor cores on a GPU
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk

    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(
        c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N)
    )


def matmul(
    a: torch.Tensor,
    b: torch.Tensor,
    block_m: int = 32,
    block_n: int = 32,
    block_k: int = 16,
    group_m: int = 4,
) -> torch.Tensor:
    """``a @ b`` by ``matmul_kernel``, one program per output tile."""
    (M, K), (K2, N) = a.shape, b.shape
    if K != K2:
        raise ValueError(f"inner dimensions differ: {K} and {K2}")
    c = torch.empty((M, N), dtype=a.dtype)
    grid = (triton.cdiv(M, block_m) * triton.cdiv(N, block_n),)
    matmul_kernel[grid](
        a,
        b,
        c,
        M,
        N,
        K,
        a.stride(0),
        a.stride(1),
        b.stride(0),
        b.stride(1),
        c.stride(0),
        c.stride(1),
        BLOCK_M=block_m,
        BLOCK_N=block_n,
        BLOCK_K=block_k,
        GROUP_M=group_m,
    )
    return c


def tile_order(num_pid_m: int, num_pid_n: int, group_m: int) -> list[tuple[int, int]]:
    """``(pid_m, pid_n)`` of each program id, by the kernel's grouped-order arithmetic."""
    order = []
    for pid in range(num_pid_m * num_pid_n):
        per_group = group_m * num_pid_n
        first = (pid // per_group) * group_m
        rows = min(num_pid_m - first, group_m)
        order.append((first + (pid % per_group) % rows, (pid % per_group) // rows))
    return order


def tile_intensity(block_m: int, block_n: int, block_k: int, elem_bytes: int) -> float:
    """FLOPs per byte of one K step: ``2 BM BN BK`` over the A and B tiles it loads."""
    flops = 2 * block_m * block_n * block_k
    loaded = (block_m * block_k + block_k * block_n) * elem_bytes
    return flops / loaded


def tiles_loaded_by_wave(order: list[tuple[int, int]], wave: int, k_tiles: int) -> int:
    """Tiles of A and B that the first ``wave`` programs load, each distinct tile counted once.

    Programs that run at the same time share what they load through the L2 cache: a row of A
    tiles (``k_tiles`` tiles) serves every program of that tile row, a column of B tiles every
    program of that tile column.
    """
    rows = {m for m, _ in order[:wave]}
    cols = {n for _, n in order[:wave]}
    return (len(rows) + len(cols)) * k_tiles
