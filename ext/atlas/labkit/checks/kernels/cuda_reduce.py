"""The reduce ladder's launches, its CPU check against torch, and its GPU timings.

Each step of ``cuda/kernels/reduce.cu`` has the same signature, ``(x, out, n)``, and its own
launch: one block per 256 or 512 elements for the first five, a fixed grid for the grid-stride
ones. What the output must hold differs: the sum of the per-block partial sums, or ``out[0]``
for the atomic step. The reference is ``torch.sum`` in float64, not any code of ours.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from atlas.labkit.checks.kernels.cuda_common import Build, Findings, gpu_time
from atlas.labkit.cuda.cpu import KernelRunError

ROLE = "check"

THREADS = 256  # kThreads in reduce.cu
GRID_STRIDE_BLOCKS = 8  # on the CPU model; on a GPU a few blocks per SM (see timings)


def _partials(out: torch.Tensor) -> float:
    return float(out.double().sum())


def _first(out: torch.Tensor) -> float:
    return float(out[0])


@dataclass(frozen=True)
class Step:
    """How one step is launched for ``n`` elements and where its result is."""

    kernel: str
    elements_per_block: int | None  # None: a fixed grid (grid-stride)
    total: Callable[[torch.Tensor], float] = _partials

    def blocks(self, n: int, fixed: int = GRID_STRIDE_BLOCKS) -> int:
        if self.elements_per_block is None:
            return fixed
        return -(-n // self.elements_per_block)


LADDER = (
    Step("reduce_interleaved", THREADS),
    Step("reduce_sequential", THREADS),
    Step("reduce_first_add", 2 * THREADS),
    Step("reduce_last_warp", 2 * THREADS),
    Step("reduce_unrolled", 2 * THREADS),
    Step("reduce_grid_stride", None),
    Step("reduce_shuffle", None),
    Step("reduce_atomic", None, _first),
)
VOLATILE = Step("reduce_last_warp_volatile", 2 * THREADS)
WARP0 = Step("reduce_shuffle_warp0", None)  # block_sum with the second warp sum in warp 0 only


def cpu_findings(
    b: Build, steps: tuple[Step, ...], sizes: tuple[int, ...] = (50_000, 1_000), rtol: float = 1e-5
) -> Findings:
    """Per kernel, the runs on the CPU model whose total differs from ``torch.sum`` (float64)
    by more than ``rtol``: for each size (ragged, so no multiple of the block hides a bound),
    with threads in order and in reverse (a race shows as an order-dependent result)."""
    out = Findings()
    generator = torch.Generator().manual_seed(0)
    inputs = [torch.randn(n, generator=generator) for n in sizes]
    for step in steps:
        if b.cpu is None:
            out[step.kernel] = ["the CPU model did not build (see the build lab)"]
            continue
        found: list[str] = []
        for x in inputs:
            n, want = x.numel(), float(x.double().sum())
            for reverse in (False, True):
                order = "reversed" if reverse else "in order"
                result = torch.zeros(step.blocks(n))
                try:
                    b.cpu.launch(
                        step.kernel, step.blocks(n), THREADS, x, result, n, reverse=reverse
                    )
                except KernelRunError as exc:
                    found.append(f"n={n}, threads {order}: {exc}")
                    continue
                got = step.total(result)
                if not abs(got - want) <= rtol * max(1.0, float(x.abs().sum())):
                    found.append(f"n={n}, threads {order}: {got:.6g}, torch.sum gives {want:.6g}")
        out[step.kernel] = found
    return out


def gpu_timings(
    steps: tuple[Step, ...] = LADDER, n: int = 1 << 26, repeats: int = 20
) -> dict[str, dict[str, float]]:
    """On a GPU: each step's result against ``torch.sum`` and its time and bandwidth, and
    ``torch.sum``'s, as ``{name: {"ms": ..., "gb_s": ..., "ok": 0 or 1}}``.

    The kernels are the cubin the build compiled for this GPU's architecture, launched through
    the driver (:mod:`atlas.labkit.cuda.driver`); the grid-stride steps get 4 blocks per SM.
    """
    from atlas.labkit.checks.kernels.cuda_common import gpu_build

    _, _, module = gpu_build("reduce.cu")
    x = torch.randn(n, device="cuda")
    want = float(x.double().sum())
    fixed = 4 * torch.cuda.get_device_properties(0).multi_processor_count
    results: dict[str, dict[str, float]] = {}

    for step in steps:
        out = torch.zeros(step.blocks(n, fixed), device="cuda")

        def run(step=step, out=out) -> None:
            out.zero_()
            module.launch(step.kernel, out.numel(), THREADS, x, out, n)

        ms = gpu_time(run, repeats)
        got = step.total(out.cpu())
        ok = abs(got - want) <= 1e-4 * float(x.abs().sum())
        results[step.kernel] = {"ms": ms, "gb_s": 4 * n / ms / 1e6, "ok": float(ok)}
    ms = gpu_time(lambda: x.sum(), repeats)
    results["torch.sum"] = {"ms": ms, "gb_s": 4 * n / ms / 1e6, "ok": 1.0}
    return results


def barriers_per_block(b: Build, steps: tuple[Step, ...], n: int = 50_000) -> dict[str, float]:
    """``__syncthreads()`` barriers each block passed on the CPU model, per step (a count the
    scheduler makes as it releases them, not one read from the source)."""
    x = torch.randn(n, generator=torch.Generator().manual_seed(1))
    counts: dict[str, float] = {}
    for step in steps:
        blocks = step.blocks(n)
        stats = b.cpu.launch(step.kernel, blocks, THREADS, x, torch.zeros(blocks), n)  # type: ignore[union-attr]
        counts[step.kernel] = stats.barriers_per_block
    return counts
