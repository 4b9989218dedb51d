"""Compile a kernel file to a cubin for one architecture, keeping ptxas's resource report.

``nvcc -cubin -arch=sm_XX -Xptxas -v`` runs the whole device pipeline (cudafe++, cicc, ptxas)
without a GPU or a driver: a cubin is machine code for the SM, and ``-Xptxas -v`` makes ptxas
print, per kernel, the registers, shared memory, spills and stack it allocated, which is what
occupancy and the pages' claims are computed from. The result is cached (:mod:`.store`).

A compile error is a :class:`CompileError` whose message is nvcc's own diagnostics, with the
file named relative to the book, so that a lab can show it at its line without a traceback.
"""

from __future__ import annotations

import os
import re
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from atlas.labkit.cuda.store import BOOK_ROOT, cached, digest
from atlas.labkit.cuda.toolchain import toolchain

ROLE = "support"

DEFAULT_FLAGS = ("-O3", "-std=c++17")
MAX_DIAGNOSTIC_LINES = 12


class CompileError(Exception):
    """nvcc or the host compiler refused a kernel file; ``str()`` is the diagnostics."""


@dataclass(frozen=True)
class Cubin:
    """One compiled file: the cubin, ptxas's report, and how long nvcc took (0 on a cache hit)."""

    source: Path
    arch: str
    path: Path
    report: str
    seconds: float
    cached: bool


def shown_path(path: Path) -> str:
    """``ext/atlas/labkit/cuda/kernels/reduce.cu`` rather than an absolute path."""
    try:
        return str(path.resolve().relative_to(BOOK_ROOT))
    except ValueError:
        return str(path)


def diagnostics(stderr: str, source: Path, limit: int = MAX_DIAGNOSTIC_LINES) -> str:
    """The compiler's messages, paths relative to the book, at most ``limit`` lines."""
    text = stderr.replace(str(source.resolve()), shown_path(source))
    text = text.replace(str(source), shown_path(source))
    lines = [line for line in text.splitlines() if line.strip()]
    # keep the errors, drop ptxas's info lines that come with them
    lines = [line for line in lines if not line.startswith("ptxas info")]
    more = len(lines) - limit
    return "\n".join(lines[:limit] + ([f"... ({more} more lines)"] if more > 0 else []))


def _arch_flag(arch: str) -> str:
    if not re.fullmatch(r"sm_\d+[af]?", arch):
        raise ValueError(f"{arch!r} is not an architecture such as 'sm_80' or 'sm_90'")
    return f"-arch={arch}"


def compile_cubin(source: Path, arch: str, flags: tuple[str, ...] = DEFAULT_FLAGS) -> Cubin:
    """``source`` compiled for ``arch``; raises :class:`CompileError` with nvcc's messages."""
    tools = toolchain()
    source = Path(source)
    text = source.read_bytes()
    command = [str(tools.nvcc), _arch_flag(arch), "-cubin", "-Xptxas", "-v", *flags]
    key = digest(["cubin", text, *command[1:], tools.nvcc_version, tools.cxx_version])
    elapsed = 0.0

    def produce(folder: Path) -> None:
        nonlocal elapsed
        started = time.perf_counter()
        run = subprocess.run(
            [*command, "-o", str(folder / "kernel.cubin"), str(source)],
            capture_output=True,
            text=True,
            env={**os.environ, "LC_ALL": "C"},
        )
        elapsed = time.perf_counter() - started
        if run.returncode != 0:
            raise CompileError(
                f"nvcc could not compile {shown_path(source)} for {arch}:\n"
                + diagnostics(run.stderr + run.stdout, source)
            )
        (folder / "ptxas.txt").write_text(run.stderr + run.stdout, encoding="utf-8")

    folder, hit = cached(key, produce)
    report = (folder / "ptxas.txt").read_text(encoding="utf-8")
    return Cubin(source, arch, folder / "kernel.cubin", report, elapsed, hit)


@dataclass(frozen=True)
class Program:
    """A host program nvcc compiled and linked (the CUDA runtime statically), and one run of it."""

    path: Path
    returncode: int
    stdout: str
    stderr: str


def run_program(source: Path, arch: str, timeout_s: float = 60.0) -> Program:
    """Compile ``source`` (kernels and ``main``) for ``arch``, link it, and run it once.

    On a machine without a GPU the program still runs: its first CUDA call returns an error
    (no driver, or no device), which is what its error checks are for.
    """
    tools = toolchain()
    source = Path(source)
    lib = tools.nvcc.parent.parent / "lib"
    command = [str(tools.nvcc), _arch_flag(arch), *DEFAULT_FLAGS, f"-L{lib}"]
    included = sorted(p.read_bytes() for p in source.parent.glob("*.cu"))
    key = digest(["program", *included, *command[1:], tools.nvcc_version, tools.cxx_version])

    def produce(folder: Path) -> None:
        run = subprocess.run(
            [*command, "-o", str(folder / "program"), str(source)],
            capture_output=True,
            text=True,
            env={**os.environ, "LC_ALL": "C"},
        )
        if run.returncode != 0:
            raise CompileError(
                f"nvcc could not build {shown_path(source)} for {arch}:\n"
                + diagnostics(run.stderr + run.stdout, source)
            )

    folder, _ = cached(key, produce)
    run = subprocess.run(
        [str(folder / "program")], capture_output=True, text=True, timeout=timeout_s
    )
    stderr = run.stderr.replace(str(source.resolve()), source.name).replace(
        str(source), source.name
    )
    return Program(folder / "program", run.returncode, run.stdout, stderr)
