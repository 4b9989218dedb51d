"""The Nsight Compute page's checks: stall sites in the SASS of the book's own kernels, against
the kernels chapter's independent count of loads in flight; exposed communication against a
brute-force raster of the timeline; and, on a GPU, the two measured by ``ncu`` or by timing.

The SASS comes from the CUDA labkit's build (nvcc for sm_80 and sm_90, cached), the same one
the kernels chapter's labs use: nothing here compiles a second time or parses a second way.
"""

from __future__ import annotations

import functools
import random
import shutil
import subprocess
import sys

from atlas.labkit.checks.kernels.cuda_common import KERNELS, Build, Findings
from atlas.labkit.checks.kernels.cuda_memory import SUMS, loads_in_flight
from atlas.labkit.cuda.nvcc import compile_cubin
from atlas.labkit.cuda.sass import Kernel, disassemble
from atlas.labkit.profiling.overlap import Interval
from atlas.labkit.profiling.stalls import dependencies

ROLE = "check"

ARCHS = ("sm_80", "sm_90")


@functools.cache
def kernels(file: str) -> Build:
    """``file`` of the CUDA labkit compiled for sm_80 and sm_90 and disassembled, by the
    labkit's own nvcc and cuobjdump wrappers (no CPU model: these labs read SASS only)."""
    b = Build(KERNELS / file)
    for arch in ARCHS:
        b.cubins[arch] = compile_cubin(b.source, arch)
        b.sass[arch] = disassemble(b.cubins[arch])
    return b


def peak_pending(body: Kernel) -> int:
    """The most global loads issued and not yet consumed at any instruction of ``body``, from
    :func:`~atlas.labkit.profiling.stalls.dependencies`."""
    deps = dependencies(body)

    def pending(at: int) -> int:
        return sum(
            d.load.offset <= at and (d.consumer is None or at < d.consumer.offset) for d in deps
        )

    return max((pending(i.offset) for i in body.instructions), default=0)


def in_flight_findings(b: Build) -> Findings:
    """Per architecture, the sums whose loads in flight (the kernels chapter's own walk of the
    loop, ``loads_in_flight``) differ from the peak of this page's dependencies."""
    out = Findings()
    for arch in ARCHS:
        found = []
        for k in SUMS:
            ours = peak_pending(b.sass[arch][k].loop_bodies()[0])
            theirs = loads_in_flight(b, arch, k)
            if ours != theirs:
                found.append(f"{k}: {ours} pending here, {theirs} in the kernels chapter")
        out[arch] = found
    return out


def raster_exposed(comm: list[Interval], compute: list[Interval]) -> int:
    """Exposed communication on integer timestamps, one tick at a time: the ticks inside some
    ``comm`` interval and inside no ``compute`` interval (a brute-force reference)."""
    end = int(max(e for _, e in comm + compute)) + 1
    busy = [False] * end
    talk = [False] * end
    for s, e in compute:
        for t in range(int(s), int(e)):
            busy[t] = True
    for s, e in comm:
        for t in range(int(s), int(e)):
            talk[t] = True
    return sum(t and not b for t, b in zip(talk, busy, strict=True))


def random_timeline(seed: int, n: int = 12, span: int = 2_000) -> tuple[list, list]:
    """Random, overlapping, unsorted integer intervals for two streams (NCCL and compute)."""
    rng = random.Random(seed)

    def one() -> Interval:
        s = rng.randrange(span)
        return (s, s + rng.randrange(1, span // 5))

    return [one() for _ in range(n)], [one() for _ in range(n + 3)]


def gpu_stream_overlap(size: int = 4096, repeats: int = 4) -> dict[str, float]:
    """On a GPU: the share of a copy stream's kernels that run under a GEMM stream's, read from
    torch.profiler's kernel events, when the two are issued on two streams and on one."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    from atlas.labkit.profiling.overlap import overlap_fraction

    a = torch.randn(size, size, device="cuda", dtype=torch.bfloat16)
    x = torch.randn(1 << 26, device="cuda")
    side = torch.cuda.Stream()
    result = {}
    for name, comm_stream in (("two streams", side), ("one stream", torch.cuda.current_stream())):
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(repeats):
                with torch.cuda.stream(comm_stream):
                    y = x * 2.0  # the stand-in for a collective: a memory-bound kernel
                _ = a @ a
            torch.cuda.synchronize()
        events = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
        gemm = [(e.time_range.start, e.time_range.end) for e in events if "gemm" in e.name.lower()]
        copy = [(e.time_range.start, e.time_range.end) for e in events if "elementwise" in e.name]
        result[name] = overlap_fraction(copy, gemm)
        del y
    return result


NCU_METRICS = (
    "smsp__average_warp_latency_per_inst_issued.ratio",
    "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio",
)


def ncu_long_scoreboard() -> dict[str, dict[str, float]] | None:
    """On a GPU with ``ncu`` on the PATH: the two metrics above for ``sum_ilp1`` and
    ``sum_ilp4`` at one block per SM, parsed from ``ncu --csv``; None without ncu."""
    if shutil.which("ncu") is None:
        return None
    script = (
        "import torch\n"
        "from atlas.labkit.checks.kernels.cuda_common import gpu_build\n"
        "b, arch, m = gpu_build('memory.cu')\n"
        "sms = torch.cuda.get_device_properties(0).multi_processor_count\n"
        "x = torch.randn(1 << 24, device='cuda'); p = torch.empty(sms * 256, device='cuda')\n"
        "for k in ('sum_ilp1', 'sum_ilp4'):\n"
        "    m.launch(k, sms, 256, x, p, x.numel())\n"
        "torch.cuda.synchronize()\n"
    )
    command = ["ncu", "--csv", "--metrics", ",".join(NCU_METRICS), "-k", "regex:sum_ilp"]
    run = subprocess.run(
        [*command, sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    out: dict[str, dict[str, float]] = {}
    for line in run.stdout.splitlines():
        cells = [c.strip('"') for c in line.split('","')]
        if len(cells) > 3 and cells[-3] in NCU_METRICS:
            kernel = next(c for c in cells if c.startswith("sum_ilp")).split("(")[0]
            out.setdefault(kernel, {})[cells[-3]] = float(cells[-1].replace(",", ""))
    return out
