"""Checks of kernels/cuda-sgemm.md: each SGEMM kernel on the CPU model against a float64 matmul
in torch, on ragged shapes (the tiled kernel) and tile-multiple ones (the register-blocked kernel
and the two after it, which require them); what one iteration of a pipelined K loop executes, read
off the SASS; and, on a GPU, each kernel timed against cuBLAS through ``torch.mm``.
"""

from __future__ import annotations

import torch

from atlas.labkit.checks.kernels.cuda_common import Build, Findings, gpu_time
from atlas.labkit.cuda.cpu import KernelRunError

ROLE = "check"

RAGGED = ((67, 45, 33), (1, 17, 5), (40, 96, 130))  # M, N, K: no multiple of a tile hides a bound
TILED = ((128, 64, 48), (64, 192, 16))  # multiples of 64 (M, N) and 16 (K)
BLOCKED = ("sgemm_reg1d", "sgemm_reg2d_scalar", "sgemm_reg2d", "sgemm_dbuf", "sgemm_warptile")
LADDER = {"sgemm.cu": ("sgemm_naive", "sgemm_smem", "sgemm_reg1d", "sgemm_reg2d_scalar",
                       "sgemm_reg2d"),
          "sgemm_ladder.cu": ("sgemm_dbuf", "sgemm_warptile")}  # fmt: skip
# The ladder table's intensities, flops per byte: (global, per distinct byte a warp reads from
# shared memory at one k); the naive kernel reads no shared memory.
INTENSITY = {"sgemm_naive": (1 / 4, None), "sgemm_smem": (4, 64 / 72),
             "sgemm_reg1d": (16, 1024 / 192), "sgemm_reg2d_scalar": (16, 1024 / 288),
             "sgemm_reg2d": (16, 1024 / 288), "sgemm_dbuf": (16, 1024 / 288),
             "sgemm_warptile": (16, 1024 / 192)}  # fmt: skip


def launch_shape(kernel: str, m: int, n: int) -> tuple[tuple[int, int], tuple[int, int] | int]:
    """Grid and block: 16 x 16 threads per 16 x 16 tile, or 256 threads per 64 x 64 tile."""
    if kernel in BLOCKED:
        if m % 64 or n % 64:
            raise ValueError(f"{kernel} needs M and N multiples of 64, got {m} x {n}")
        return (n // 64, m // 64), 256
    return (-(-n // 16), -(-m // 16)), (16, 16)


def sgemm_findings(
    b: Build, kernels: tuple[str, ...], shapes: tuple[tuple[int, int, int], ...]
) -> Findings:
    """Per kernel, the shapes where ``C`` differs from ``A @ B`` computed by torch in float64."""
    out = Findings()
    generator = torch.Generator().manual_seed(0)
    for kernel in kernels:
        found: list[str] = []
        for m, n, k in shapes:
            a, bm = torch.randn(m, k, generator=generator), torch.randn(k, n, generator=generator)
            c = torch.full((m, n), float("nan"))
            grid, block = launch_shape(kernel, m, n)
            try:
                b.cpu.launch(kernel, grid, block, a, bm, c, m, n, k)  # type: ignore[union-attr]
            except KernelRunError as exc:
                found.append(f"{m}x{n}x{k}: {exc}")
                continue
            ref = a.double() @ bm.double()
            if not torch.allclose(c.double(), ref, rtol=1e-4, atol=1e-4):
                bad = int((~torch.isclose(c.double(), ref, rtol=1e-4, atol=1e-4)).sum())
                found.append(f"{m}x{n}x{k}: {bad} of {m * n} elements differ from torch's A @ B")
        out[kernel] = found
    return out


def global_bytes_per_tile(b: Build, arch: str, kernel: str, threads: int = 256) -> int:
    """Bytes one block loads from global memory per step of its K loop, read off the SASS: the
    width of each global load in the loop body times the threads of the block."""
    sass = b.sass[arch][kernel]
    width = {"LDG.E.128": 16, "LDG.E.64": 8}
    loads = [i for i in sass.instructions if i.matches("LDG.E")]
    total = 0
    for load in loads:
        total += next((w for p, w in width.items() if load.matches(p)), 4)
    return total * threads


def loop_counts(b: Build, kernel: str, patterns: tuple[str, ...]) -> dict[str, dict[str, int]]:
    """Per architecture, the instructions of ``patterns`` in one iteration of the kernel's K loop
    (its one loop in the SASS; a prologue's loads and barrier are outside it)."""
    out: dict[str, dict[str, int]] = {}
    for arch, kernels in b.sass.items():
        bodies = kernels[kernel].loop_bodies()
        if len(bodies) != 1:
            raise ValueError(f"{kernel} has {len(bodies)} loops in its {arch} SASS, expected one")
        out[arch] = bodies[0].counts(patterns)
    return out


def gpu_timings(size: int = 4096, repeats: int = 10) -> dict[str, tuple[float, bool]]:
    """On a GPU: ``{kernel: (TFLOP/s, ok)}`` for a square fp32 GEMM, and cuBLAS's (torch.mm
    with TF32 off, so that it computes in fp32 as the kernels do)."""
    from atlas.labkit.checks.kernels.cuda_common import gpu_build

    modules = {}
    for file, kernels in LADDER.items():
        modules.update(dict.fromkeys(kernels, gpu_build(file)[2]))
    torch.backends.cuda.matmul.allow_tf32 = False
    a = torch.randn(size, size, device="cuda")
    bm = torch.randn(size, size, device="cuda")
    ref = a @ bm
    flops = 2 * size**3
    out: dict[str, tuple[float, bool]] = {}
    for kernel, module in modules.items():
        c = torch.empty_like(ref)
        grid, block = launch_shape(kernel, size, size)
        ms = gpu_time(
            lambda k=kernel, g=grid, t=block, c=c, module=module: module.launch(
                k, g, t, a, bm, c, size, size, size
            ),
            repeats,
        )
        out[kernel] = (flops / ms / 1e9, bool(torch.allclose(c, ref, rtol=1e-3, atol=1e-2)))
    out["cuBLAS (torch.mm)"] = (flops / gpu_time(lambda: a @ bm, repeats) / 1e9, True)
    return out


def predicted_tflops(gpu_name: str) -> dict[str, float]:
    """The page's bound per kernel on the registry's ``gpu_name``, in TFLOP/s: the smallest of the
    fp32 peak of the CUDA cores, global intensity times HBM bandwidth, and warp shared intensity
    times shared bandwidth (32 banks of 4 bytes a clock per SM, at the clock the peak implies).
    A roofline: it sees bytes and flops, not the instructions that move them."""
    from atlas.labkit.registry.hardware import gpu
    from atlas.labkit.registry.sm import FP32_CORES, sm_limits

    part, cores, sm = gpu(gpu_name), FP32_CORES[gpu_name], sm_limits(gpu_name)
    clock = cores.peak_flops / (2 * cores.cores_per_sm * part.sms)  # type: ignore[operator]
    shared = sm.smem_banks * sm.smem_bank_bytes * part.sms * clock  # type: ignore[operator]
    out = {}
    for kernel, (i_global, i_warp) in INTENSITY.items():
        bounds = [cores.peak_flops, i_global * part.hbm_bandwidth]
        if i_warp is not None:
            bounds.append(i_warp * shared)
        out[kernel] = min(bounds) / 1e12
    return out


def register_tile_origin(kernel: str, t: int) -> tuple[int, int]:
    """Row and column in the 64 x 64 block tile of thread ``t``'s 4 x 4 register tile, as the
    kernel computes them (restated here, so a lab on it is a model of the kernel)."""
    if kernel == "sgemm_warptile":
        warp, lane = divmod(t, 32)
        return (warp // 4) * 32 + (lane // 4) * 4, (warp % 4) * 16 + (lane % 4) * 4
    return (t // 16) * 4, (t % 16) * 4


def warp_shared_reads(kernel: str, warp: int = 0) -> dict[str, tuple[int, int]]:
    """For the two LDS.128 a warp issues at one k (A's transposed tile, B's tile, rows of 64
    words), ``(distinct words, wavefronts)``: words several lanes read are broadcast, and the
    wavefronts are the most distinct words that fall into one of the 32 four-byte banks."""
    out = {}
    for tile, axis in (("A", 0), ("B", 1)):
        words = set()
        for t in range(32 * warp, 32 * warp + 32):
            start = register_tile_origin(kernel, t)[axis]
            words.update(range(start, start + 4))
        per_bank = [sum(1 for w in words if w % 32 == bank) for bank in range(32)]
        out[tile] = (len(words), max(per_bank))
    return out


def products_after_loads(b: Build, kernel: str) -> dict[str, int]:
    """Per architecture, the multiply-adds of one K-loop iteration that ptxas scheduled after the
    iteration's first global load: the products that can run while the next tile is in flight."""
    out = {}
    for arch, kernels in b.sass.items():
        body = kernels[kernel].loop_bodies()[0].instructions
        first = next(n for n, i in enumerate(body) if i.matches("LDG"))
        out[arch] = sum(i.matches("FFMA") for i in body[first:])
    return out


def barriers_per_block(b: Build, kernel: str, k: int) -> float:
    """The ``__syncthreads`` one block of a blocked kernel passes on the CPU model for a
    64 x 64 x ``k`` product: what the barriers of its K loop add up to when it runs."""
    generator = torch.Generator().manual_seed(0)
    a, bm = torch.randn(64, k, generator=generator), torch.randn(k, 64, generator=generator)
    c = torch.empty(64, 64)
    grid, block = launch_shape(kernel, 64, 64)
    return b.cpu.launch(kernel, grid, block, a, bm, c, 64, 64, k).barriers_per_block  # type: ignore[union-attr]
