"""Checks of kernels/cuda-execution.md: vector add on the CPU model against torch, where the SASS
reads the kernel's parameters, and one run of the host program with its error checks.
"""

from __future__ import annotations

import re

import torch

from atlas.labkit.checks.kernels.cuda_common import KERNELS, Build, Findings
from atlas.labkit.cuda.cpu import KernelRunError
from atlas.labkit.cuda.nvcc import Program, run_program
from atlas.labkit.cuda.sass import Kernel

ROLE = "check"

THREADS = 256
ELEMENTS_PER_THREAD = {"vector_add": 1, "vector_add4": 4}


def vector_add_findings(b: Build, sizes: tuple[int, ...] = (1, 1000, 4099)) -> Findings:
    """Per kernel, the sizes at which ``c`` differs from torch's ``a + b`` on the CPU model (the
    sizes are ragged: 4,099 leaves a partial block and a partial group of four)."""
    out = Findings()
    generator = torch.Generator().manual_seed(0)
    for kernel, per_thread in ELEMENTS_PER_THREAD.items():
        found: list[str] = []
        for n in sizes:
            a, b_ = torch.randn(n, generator=generator), torch.randn(n, generator=generator)
            c = torch.full((n,), float("nan"))
            threads_needed = -(-n // per_thread)  # ceil(n / per_thread)
            blocks = -(-threads_needed // THREADS)
            try:
                b.cpu.launch(kernel, blocks, THREADS, a, b_, c, n)  # type: ignore[union-attr]
            except (KernelRunError, AttributeError) as exc:
                found.append(f"n={n}: {exc}")
                continue
            wrong = int((c != a + b_).sum())
            if wrong:
                found.append(f"n={n}: {wrong} elements differ from torch's a + b")
        out[kernel] = found
    return out


_CONSTANT = re.compile(r"c\[0x0\]\[(0x[0-9a-f]+)\]")


def parameter_offsets(kernel: Kernel) -> dict[str, int]:
    """Where the SASS reads ``a`` (the first pointer) and ``n`` (the bound of the compare), as
    byte offsets into constant bank 0."""
    loads = [i for i in kernel.instructions if _CONSTANT.search(i.operands)]
    compare = next(i for i in kernel.instructions if i.matches("ISETP.GE"))
    n_at = _CONSTANT.search(compare.operands)
    if n_at is None:  # sm_90 moves n to a uniform register first
        register = compare.operands.split(", ")[-2]
        source = next(i for i in loads if i.operands.startswith(register + ","))
        n_at = _CONSTANT.search(source.operands)
    wide = [i for i in kernel.instructions if i.matches("IMAD.WIDE") or i.matches("LDC.64")]
    bases = [int(m[1], 16) for i in wide if (m := _CONSTANT.search(i.operands))]
    assert n_at is not None
    return {"a": min(bases), "n": int(n_at[1], 16)}


def host_run(arch: str = "sm_90") -> Program:
    """The host program of the page, compiled, linked and run once."""
    return run_program(KERNELS / "vector_add_main.cu", arch)


def first_error(program: Program) -> tuple[int, str] | None:
    """The line and CUDA error name of the first failed CHECK, if any."""
    m = re.search(r"vector_add_main\.cu:(\d+): (cuda\w+):", program.stderr)
    return (int(m[1]), m[2]) if m else None
