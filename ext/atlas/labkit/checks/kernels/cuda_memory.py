"""Checks of kernels/cuda-memory.md: the kernels of ``cuda/kernels/memory.cu`` on the CPU model
against torch (the copy against indexing, the transposes against ``x.t()``, the sums against
``torch.sum`` in float64), the addresses the strided copy read, the row pitch of the shared tile
read off the SASS, the same file compiled with ``-maxrregcount``, and on a GPU, each kernel's
bandwidth beside the page's prediction.
"""

from __future__ import annotations

import re

import torch

from atlas.labkit.checks.kernels.cuda_common import Build, Findings, gpu_time
from atlas.labkit.cuda.cpu import KernelRunError
from atlas.labkit.cuda.nvcc import DEFAULT_FLAGS, compile_cubin
from atlas.labkit.cuda.ptxas import Resources, parse_report
from atlas.labkit.kernels.gpu_model import warp_transactions

ROLE = "check"

THREADS = 256
TILE, ROWS = 32, 8  # kTile, kRows of memory.cu: a 32 x 32 tile per block of 32 x 8 threads
SUMS = ("sum_ilp1", "sum_ilp4", "sum_ilp8", "sum_ilp8_bounded")
TRANSPOSES = ("transpose_naive", "transpose_smem", "transpose_padded")


def _blocks(n: int, per_block: int = THREADS) -> int:
    return -(-n // per_block)


def sectors_read(b: Build, stride: int, offset: int, n: int = 4 * THREADS) -> list[int]:
    """Sectors per warp of ``copy_strided``'s load, counted from the addresses the kernel read.

    The input holds each element's own index, so ``out[i]`` is the index thread ``i`` loaded;
    times 4 it is the byte offset, which :func:`warp_transactions` groups by warps and sectors.
    The base of a ``cudaMalloc`` allocation is 256-byte aligned, so offsets from it are
    addresses for the purpose of sector boundaries.
    """
    size = n * stride + offset
    x = torch.arange(size, dtype=torch.float32)  # exact up to 2**24
    out = torch.full((n,), -1.0)
    b.cpu.launch("copy_strided", _blocks(n), THREADS, x, out, n, stride, offset)  # type: ignore[union-attr]
    return warp_transactions([4 * int(v) for v in out.tolist()], access_bytes=4)


def copy_findings(b: Build, sizes: tuple[int, ...] = (1_000, 4_099)) -> Findings:
    """``copy_strided`` against ``x[offset::stride][:n]`` and ``copy_vec4`` against ``x``, on
    ragged sizes (the last block and the float4 tail are partial)."""
    out = Findings()
    generator = torch.Generator().manual_seed(0)
    found: list[str] = []
    for n in sizes:
        for stride, offset in ((1, 0), (1, 1), (2, 3), (32, 0)):
            x = torch.randn(n * stride + offset, generator=generator)
            y = torch.full((n,), float("nan"))
            try:
                b.cpu.launch("copy_strided", _blocks(n), THREADS, x, y, n, stride, offset)  # type: ignore[union-attr]
            except KernelRunError as exc:
                found.append(f"n={n}, stride {stride}, offset {offset}: {exc}")
                continue
            if not torch.equal(y, x[offset::stride][:n]):
                found.append(f"n={n}, stride {stride}, offset {offset}: differs from x[o::s]")
    out["copy_strided"] = found
    found = []
    for n in sizes:
        x, y = torch.randn(n, generator=generator), torch.full((n,), float("nan"))
        try:
            b.cpu.launch("copy_vec4", _blocks(-(-n // 4)), THREADS, x, y, n)  # type: ignore[union-attr]
        except KernelRunError as exc:
            found.append(f"n={n}: {exc}")
            continue
        if not torch.equal(y, x):
            found.append(f"n={n}: {int((y != x).sum())} of {n} elements differ from the input")
    out["copy_vec4"] = found
    return out


def transpose_findings(
    b: Build, shapes: tuple[tuple[int, int], ...] = ((67, 45), (32, 96), (1, 33))
) -> Findings:
    """Each transpose against ``x.t()``, with threads in order and in reverse (the barrier
    between the tile's write and its read is what makes the two agree)."""
    out = Findings()
    generator = torch.Generator().manual_seed(0)
    for kernel in TRANSPOSES:
        found: list[str] = []
        for rows, cols in shapes:
            x = torch.randn(rows, cols, generator=generator)
            for reverse in (False, True):
                y = torch.full((cols, rows), float("nan"))
                grid = (_blocks(cols, TILE), _blocks(rows, TILE))
                try:
                    b.cpu.launch(kernel, grid, (TILE, ROWS), x, y, rows, cols, reverse=reverse)  # type: ignore[union-attr]
                except KernelRunError as exc:
                    found.append(f"{rows}x{cols}: {exc}")
                    continue
                if not torch.equal(y, x.t()):
                    order = "reversed" if reverse else "in order"
                    found.append(f"{rows}x{cols}, threads {order}: differs from x.t()")
        out[kernel] = found
    return out


def sum_findings(
    b: Build, kernels: tuple[str, ...] = SUMS, sizes: tuple[int, ...] = (50_003, 999)
) -> Findings:
    """Each sum's partials, added, against ``torch.sum`` in float64 (3 blocks: every thread
    strides over the array several times, and the tail of n % 4 is not a multiple of 4)."""
    out = Findings()
    generator = torch.Generator().manual_seed(0)
    for kernel in kernels:
        found: list[str] = []
        for n in sizes:
            x = torch.randn(n, generator=generator)
            partials = torch.full((3 * THREADS,), float("nan"))
            try:
                b.cpu.launch(kernel, 3, THREADS, x, partials, n)  # type: ignore[union-attr]
            except KernelRunError as exc:
                found.append(f"n={n}: {exc}")
                continue
            got, want = float(partials.double().sum()), float(x.double().sum())
            if not abs(got - want) <= 1e-5 * float(x.abs().sum()):
                found.append(f"n={n}: {got:.6g}, torch.sum gives {want:.6g}")
        out[kernel] = found
    return out


_STS = re.compile(r"\[(?P<base>[^\]+]+)(?:\+(?P<offset>0x[0-9a-f]+))?\]")


def sts_offsets(b: Build, arch: str, kernel: str) -> list[int]:
    """The immediate byte offsets of a kernel's shared-memory stores (``STS [R+0x420]``), in
    increasing order: for the tile's four rows ``y + j``, ``j * pitch * 4`` bytes."""
    offsets = []
    for i in b.sass[arch][kernel].instructions:
        if i.matches("STS"):
            m = _STS.search(i.operands)
            offsets.append(int(m["offset"], 16) if m and m["offset"] else 0)
    return sorted(offsets)


def _loop_body(b: Build, arch: str, kernel: str) -> list:
    """The instructions of a kernel's first loop: from a backward branch's target to it."""
    sass = b.sass[arch][kernel]
    for branch in sass.instructions:
        target = re.search(r"(0x[0-9a-f]+)\s*$", branch.operands) if branch.matches("BRA") else None
        if target and int(target[1], 16) < branch.offset:
            start = int(target[1], 16)
            return [i for i in sass.instructions if start <= i.offset < branch.offset]
    raise ValueError(f"{kernel} has no loop in its {arch} SASS")


_REGISTER = re.compile(r"\bR(\d+)\b")


def loads_in_flight(b: Build, arch: str, kernel: str) -> int:
    """The most 16-byte loads of a kernel's main loop that are issued and not yet used, read
    off the SASS in issue order. A load's four destination registers are in flight from the
    ``LDG.E.128`` until the first instruction that reads one of them (which waits for it)."""
    pending: list[set[int]] = []
    peak = 0
    for i in _loop_body(b, arch, kernel):
        if i.matches("LDG.E.128"):
            first = int(_REGISTER.search(i.operands)[1])  # type: ignore[index]
            pending.append(set(range(first, first + 4)))
            peak = max(peak, len(pending))
            continue
        read = {int(r) for r in _REGISTER.findall(i.operands.partition(",")[2])}
        pending = [regs for regs in pending if not regs & read]
    return peak


def resources_with(flags: tuple[str, ...], arch: str = "sm_90") -> dict[str, Resources]:
    """ptxas's report for ``memory.cu`` compiled with extra ``flags`` (``-maxrregcount=32``)."""
    from atlas.labkit.checks.kernels.cuda_common import KERNELS

    cubin = compile_cubin(KERNELS / "memory.cu", arch, (*DEFAULT_FLAGS, *flags))
    return parse_report(cubin.report)


def gpu_timings(n: int = 1 << 26, repeats: int = 20) -> dict[str, dict[str, float]]:
    """On a GPU, ``{name: {"ms", "gb_s", "ok"}}``: the copy at several strides (bandwidth of the
    bytes the kernel uses: 4 read and 4 written per element), the float4 copy and
    ``torch.clone``; the three transposes of a 8192 x 8192 matrix and torch's; and the four
    sums at 1 block of 256 threads per SM (8 warps) and at as many as fit (the occupancy of
    ptxas's report), against ``torch.sum``."""
    from atlas.labkit.checks.kernels.cuda_common import gpu_build

    b, arch, module = gpu_build("memory.cu")
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    results: dict[str, dict[str, float]] = {}

    def record(name: str, run, nbytes: int, ok: bool) -> None:
        ms = gpu_time(run, repeats)
        results[name] = {"ms": ms, "gb_s": nbytes / ms / 1e6, "ok": float(ok)}

    m = n // 32  # elements copied at every stride: the input is up to 32 m = n floats
    x = torch.randn(n, device="cuda")
    for stride, offset in ((1, 0), (1, 1), (2, 0), (4, 0), (8, 0), (32, 0)):
        y = torch.empty(m, device="cuda")
        run = lambda s=stride, o=offset, y=y: module.launch(  # noqa: E731
            "copy_strided", _blocks(m), THREADS, x, y, m, s, o
        )
        run()
        ok = torch.equal(y, x[offset::stride][:m])
        record(f"copy stride {stride} offset {offset}", run, 8 * m, ok)
    y = torch.empty_like(x)
    run = lambda: module.launch("copy_vec4", _blocks(n // 4), THREADS, x, y, n)  # noqa: E731
    run()
    record("copy_vec4", run, 8 * n, torch.equal(x, y))
    record("torch clone", lambda: x.clone(), 8 * n, True)

    side = 8192
    a = torch.randn(side, side, device="cuda")
    for kernel in TRANSPOSES:
        t = torch.empty(side, side, device="cuda")
        grid = (side // TILE, side // TILE)
        run = lambda k=kernel, t=t, g=grid: module.launch(k, g, (TILE, ROWS), a, t, side, side)  # noqa: E731
        run()
        record(kernel, run, 8 * side * side, torch.equal(t, a.t()))
    record("torch a.t().contiguous()", lambda: a.t().contiguous(), 8 * side * side, True)

    from atlas.labkit.cuda.occupancy import model_occupancy

    want = float(x.double().sum())
    for kernel in SUMS:
        fit = model_occupancy(b.resources[arch][kernel], THREADS).blocks
        for per_sm in sorted({1, fit}):
            partials = torch.empty(per_sm * sms * THREADS, device="cuda")
            run = lambda k=kernel, p=partials, g=per_sm * sms: module.launch(k, g, THREADS, x, p, n)  # noqa: E731
            run()
            ok = abs(float(partials.double().sum()) - want) <= 1e-4 * float(x.abs().sum())
            record(f"{kernel}, {per_sm} block/SM", run, 4 * n, ok)
    record("torch.sum", lambda: x.sum(), 4 * n, True)
    return results
