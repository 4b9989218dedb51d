"""Checks of kernels/cuda-softmax.md: each softmax kernel on the CPU model against
``torch.softmax``, on ragged shapes and on logits large enough to overflow ``exp``; and, on a GPU,
each kernel timed against ``torch.softmax``.
"""

from __future__ import annotations

import torch

from atlas.labkit.checks.kernels.cuda_common import Build, Findings, gpu_time
from atlas.labkit.cuda.cpu import KernelRunError

ROLE = "check"

THREADS = 256
ROWS_PER_BLOCK = {
    "softmax_naive": 8,
    "softmax_safe": 8,
    "softmax_online": 8,
    "softmax_online_block": 1,
}
SHAPES = ((37, 1000), (5, 20), (3, 4099))  # rows x cols: a partial block, rows shorter than a warp


def blocks(kernel: str, rows: int) -> int:
    """One warp per row (8 rows a block) or one block per row."""
    return -(-rows // ROWS_PER_BLOCK[kernel])


def softmax_findings(
    b: Build,
    kernels: tuple[str, ...],
    scale: float = 1.0,
    shapes: tuple[tuple[int, int], ...] = SHAPES,
) -> Findings:
    """Per kernel, the shapes where its output differs from ``torch.softmax(x, -1)`` (float32,
    rtol 1e-5), for ``x`` standard normal times ``scale`` (100 makes ``exp(x)`` overflow)."""
    out = Findings()
    generator = torch.Generator().manual_seed(0)
    inputs = [torch.randn(r, c, generator=generator) * scale for r, c in shapes]
    for kernel in kernels:
        found: list[str] = []
        for x in inputs:
            rows, cols = x.shape
            y = torch.full_like(x, float("nan"))
            try:
                b.cpu.launch(kernel, blocks(kernel, rows), THREADS, x, y, rows, cols)  # type: ignore[union-attr]
            except KernelRunError as exc:
                found.append(f"{rows}x{cols}: {exc}")
                continue
            ref = torch.softmax(x, dim=-1)
            if not torch.allclose(y, ref, rtol=1e-5, atol=1e-7):
                bad = int((~torch.isclose(y, ref, rtol=1e-5, atol=1e-7)).sum())
                found.append(
                    f"{rows}x{cols}: {bad} of {x.numel()} values differ from torch.softmax"
                )
        out[kernel] = found
    return out


def gpu_timings(
    shapes: tuple[tuple[int, int], ...] = ((16384, 1024), (64, 65536)), repeats: int = 20
):
    """On a GPU: ``{(rows, cols): {kernel: (ms, ok)}}`` for every kernel and ``torch.softmax``."""
    from atlas.labkit.checks.kernels.cuda_common import gpu_build

    _, _, module = gpu_build("softmax.cu")
    results = {}
    for rows, cols in shapes:
        x = torch.randn(rows, cols, device="cuda")
        ref = torch.softmax(x, -1)
        row: dict[str, tuple[float, bool]] = {}
        for kernel in ROWS_PER_BLOCK:
            y = torch.empty_like(x)
            grid = blocks(kernel, rows)
            args = (x, y, rows, cols)
            launch = lambda k=kernel, g=grid, a=args: module.launch(k, g, THREADS, *a)  # noqa: E731
            ms = gpu_time(launch, repeats)
            row[kernel] = (ms, bool(torch.allclose(y, ref, rtol=1e-4, atol=1e-6)))
        row["torch.softmax"] = (gpu_time(lambda x=x: torch.softmax(x, -1), repeats), True)
        results[rows, cols] = row
    return results
