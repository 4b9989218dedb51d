"""What the CUDA C pages' labs check about a kernel file, each check a mapping of findings.

A lab builds a file once (:func:`build`: nvcc for sm_80 and sm_90, the host compiler for the CPU
model), then asks for the findings of one kind: SASS counts against the page's claims, ptxas's
resources against the page's, occupancy computed three ways (the page's figure, the book's model
fed with ptxas's report, NVIDIA's ``cuda_occupancy.h``), and results on the CPU model against
torch. Each returns ``{key: findings}`` and a clean file gives every key an empty value, so the lab
asserts by showing the empty mapping, and a broken kernel fails at the lab's line showing the
compiler's message or the wrong number, never a traceback.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from atlas.labkit.cuda.cpu import CpuModule, build_cpu
from atlas.labkit.cuda.nvcc import CompileError, Cubin, compile_cubin
from atlas.labkit.cuda.occupancy import model_occupancy, nvidia_blocks
from atlas.labkit.cuda.ptxas import Resources, parse_report
from atlas.labkit.cuda.sass import Kernel, disassemble

ROLE = "check"

KERNELS = Path(__file__).resolve().parents[2] / "cuda" / "kernels"
ARCHS = ("sm_80", "sm_90")


class Findings(dict):
    """``{key: [message, ...]}`` (or nested), printed so that messages read as text."""

    def __repr__(self) -> str:
        if not any(self.values()):
            return "{" + ", ".join(f"{k!r}: {v!r}" for k, v in self.items()) + "}"
        lines = []
        for key, value in self.items():
            if not value:
                lines.append(f"{key!r}: {value!r}")
                continue
            lines.append(f"{key!r}:")
            items = value.items() if isinstance(value, Mapping) else [(None, v) for v in value]
            for sub, message in items:
                text = f"{sub}: {message}" if sub is not None else str(message)
                lines.extend("    " + line for line in text.splitlines())
        return "\n".join(lines)


@dataclass
class Build:
    """One kernel file compiled for every architecture and for the CPU model."""

    source: Path
    cubins: dict[str, Cubin] = field(default_factory=dict)
    resources: dict[str, dict[str, Resources]] = field(default_factory=dict)
    sass: dict[str, dict[str, Kernel]] = field(default_factory=dict)
    cpu: CpuModule | None = None
    errors: Findings = field(default_factory=Findings)

    def seconds(self) -> dict[str, float]:
        """Compile seconds per target (0 for a cache hit)."""
        times = {arch: round(c.seconds, 1) for arch, c in self.cubins.items()}
        if self.cpu is not None:
            times["cpu"] = round(self.cpu.seconds, 1)
        return times


def build(file: str, archs: tuple[str, ...] = ARCHS, folder: Path = KERNELS) -> Build:
    """Compile ``folder/file`` for ``archs`` and the CPU; compile errors become findings."""
    result = Build(folder / file)
    for arch in archs:
        try:
            cubin = compile_cubin(result.source, arch)
        except CompileError as exc:
            result.errors[arch] = [str(exc)]
            continue
        result.cubins[arch] = cubin
        result.resources[arch] = parse_report(cubin.report)
        result.sass[arch] = disassemble(cubin)
        result.errors[arch] = []
    try:
        result.cpu = build_cpu(result.source)
        result.errors["cpu"] = []
    except CompileError as exc:
        result.errors["cpu"] = [str(exc)]
    return result


def _archs(b: Build) -> list[str]:
    return sorted(b.cubins.keys() | (b.errors.keys() - {"cpu"}))


def sass_findings(b: Build, claims: dict[str, dict[str, int]]) -> Findings:
    """Per architecture, each claimed count (``{"kernel": {"SHFL.DOWN": 10}}``) that the SASS
    does not have. A pattern joined by ``|`` counts all of them (``"RED|REDG": 1``); one with
    ``@arch`` holds on that architecture only (``"WARPSYNC@sm_90": 12``)."""
    out = Findings()
    for arch in _archs(b):
        if arch not in b.sass:
            out[arch] = [f"{arch} did not compile (see the build lab)"]
            continue
        found = []
        for kernel, counts in claims.items():
            if kernel not in b.sass[arch]:
                found.append(f"no kernel {kernel} in the {arch} cubin")
                continue
            sass = b.sass[arch][kernel]
            for key, claimed in counts.items():
                pattern, _, only = key.partition("@")
                if only and only != arch:
                    continue
                got = sum(sass.count(p) for p in pattern.split("|"))
                if got != claimed:
                    found.append(f"{kernel}: {got} {pattern}, the page says {claimed}")
        out[arch] = found
    return out


def resource_findings(b: Build, claims: dict[str, dict[str, int]]) -> Findings:
    """Per architecture, each claimed ptxas figure (``registers``, ``shared``, ``local``,
    ``spill_stores``, ``barriers``; ``{"kernel": {"shared": 1024}}``) that the report differs on."""
    out = Findings()
    for arch in _archs(b):
        if arch not in b.resources:
            out[arch] = [f"{arch} did not compile (see the build lab)"]
            continue
        found = []
        for kernel, figures in claims.items():
            if kernel not in b.resources[arch]:
                found.append(f"no kernel {kernel} in ptxas's {arch} report")
                continue
            res = b.resources[arch][kernel]
            for name, claimed in figures.items():
                if getattr(res, name) != claimed:
                    found.append(
                        f"{kernel}: {name} = {getattr(res, name)}, the page says {claimed}"
                    )
        out[arch] = found
    return out


def occupancy_findings(b: Build, threads: int, claims: dict[str, dict[str, int]]) -> Findings:
    """Per architecture, the kernels whose resident blocks per SM disagree between the page
    (``claims[arch][kernel]``), the book's model fed with ptxas's report, and NVIDIA's
    ``cuda_occupancy.h`` fed with the same report."""
    out = Findings()
    for arch, per_kernel in claims.items():
        if arch not in b.resources:
            out[arch] = [f"{arch} did not compile (see the build lab)"]
            continue
        found = []
        for kernel, claimed in per_kernel.items():
            if kernel not in b.resources[arch]:
                found.append(f"no kernel {kernel} in ptxas's {arch} report")
                continue
            res = b.resources[arch][kernel]
            ours = model_occupancy(res, threads).blocks
            nvidia = nvidia_blocks(res, threads)
            if not claimed == ours == nvidia:
                found.append(
                    f"{kernel} ({res.registers} registers, {res.shared} B shared): the page says "
                    f"{claimed} blocks, the model {ours}, cuda_occupancy.h {nvidia}"
                )
        out[arch] = found
    return out


def gpu_build(file: str) -> tuple[Build, str, Any]:
    """On a GPU: ``file`` compiled for this device's architecture, that architecture, and the
    cubin loaded through the driver (:mod:`atlas.labkit.cuda.driver`); a compile error raises.
    The one loader of the ``:needs: cuda`` labs' kernels (reduce, softmax, SGEMM, memory, sync).
    """
    from atlas.labkit.cuda.driver import arch_of_device, load_cubin

    arch = arch_of_device()
    b = build(file, archs=(arch,))
    if b.errors[arch]:
        raise RuntimeError("\n".join(b.errors[arch]))
    return b, arch, load_cubin(b.cubins[arch].path)


def gpu_time(run: Callable[[], object], repeats: int) -> float:
    """Milliseconds per call of ``run`` on the GPU, by CUDA events after one warm-up call: the
    one timer of the ``:needs: cuda`` labs (reduce, softmax, SGEMM), so that their rates are
    measured the same way. torch is imported here only, when a GPU lab runs."""
    import torch

    run()
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(repeats):
        run()
    stop.record()
    torch.cuda.synchronize()
    return start.elapsed_time(stop) / repeats
